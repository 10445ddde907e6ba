/*
 * window_slurm.c - what Slurm knows of a job, asked through its own
 * commands: `scontrol show job -d` (nodes, GPU indices, while slurmctld still
 * holds the job) and `sacct` (nodes, GPU count, user, times, from
 * accounting). The text is read by queue/slurm_alloc.c; a missing Slurm, a
 * command that fails or a job it does not know is simply "not known here".
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/window.h"
#include "fleet/window_int.h"
#include "util/child.h"
#include "util/xalloc.h"

#define SLURM_TIMEOUT_NS (60 * 1000000000LL)
#define SLURM_OUT_MAX (1 << 20)
#define SACCT_FIELDS "JobID,State,ExitCode,Start,End,User,NodeList,AllocTRES"

bool fw_slurm_id(const char *id)
{
	if (!id || !isdigit((unsigned char)*id) || strlen(id) >= 32)
		return false;
	for (const char *p = id; *p; p++)
		if (!isdigit((unsigned char)*p) && *p != '_' && *p != '+')
			return false;
	return true;
}

bool fw_slurm_lookup(const char *job, queue_slurm_alloc *out)
{
	if (!fw_slurm_id(job))
		return false;
	char *sc[] = {"scontrol", "show", "job", "-d", (char *)job, NULL};
	char *sa[] = {"sacct", "-j", (char *)job, "-X", "-n", "-P", "-o", SACCT_FIELDS, NULL};
	gw_child_spec specs[2] = {{.argv = sc}, {.argv = sa}};
	gw_child_result r[2];
	gw_child_run_many(specs, 2, SLURM_TIMEOUT_NS, SLURM_OUT_MAX, r);
	bool found = queue_slurm_parse_alloc(job, gw_child_ok(&r[0]) ? r[0].out : NULL,
	                                     gw_child_ok(&r[1]) ? r[1].out : NULL, out);
	gw_child_free(&r[0]);
	gw_child_free(&r[1]);
	return found;
}

/* ids that look like Slurm's, comma-joined, into a new string; NULL when none. */
static char *slurm_ids(char *const *jobs, int n)
{
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(jobs[i]) + 1;
	char *ids = gw_xmalloc(len), *p = ids;
	*p = '\0';
	for (int i = 0; i < n; i++)
		if (fw_slurm_id(jobs[i]))
			p += sprintf(p, "%s%s", p == ids ? "" : ",", jobs[i]);
	if (p == ids) {
		free(ids);
		return NULL;
	}
	return ids;
}

/* Each line of text read as one job into users[] where its id is one of jobs[]. */
static void users_from(const char *text, bool sacct, char *const *jobs, int n, char **users)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		char line[4096];
		queue_slurm_job j;
		if (ll < sizeof line) {
			memcpy(line, p, ll);
			line[ll] = '\0';
			bool ok = sacct ? queue_slurm_parse_sacct(line, &j)
			                : queue_slurm_parse_scontrol(line, &j);
			for (int i = 0; ok && j.user[0] && i < n; i++)
				if (!users[i] && !strcmp(jobs[i], j.job_id))
					users[i] = gw_xstrdup(j.user);
		}
		p = nl ? nl + 1 : NULL;
	}
}

void fleet_job_users(char *const *jobs, int n, char **users)
{
	fw_slurm_users(jobs, n, users);
}

void fw_slurm_users(char *const *jobs, int n, char **users)
{
	char *ids = slurm_ids(jobs, n);
	if (!ids)
		return;
	char *sa[] = {"sacct", "-j", ids, "-X", "-n", "-P", "-o", SACCT_FIELDS, NULL};
	/* jobs slurmctld still holds, for a site without accounting */
	char *sc[] = {"scontrol", "-o", "show", "job", NULL};
	gw_child_spec specs[2] = {{.argv = sa}, {.argv = sc}};
	gw_child_result r[2];
	gw_child_run_many(specs, 2, SLURM_TIMEOUT_NS, SLURM_OUT_MAX, r);
	if (gw_child_ok(&r[0]))
		users_from(r[0].out, true, jobs, n, users);
	if (gw_child_ok(&r[1]))
		users_from(r[1].out, false, jobs, n, users);
	gw_child_free(&r[0]);
	gw_child_free(&r[1]);
	free(ids);
}
