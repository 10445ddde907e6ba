/* slurm.c - the text Slurm's commands print, turned into task facts. Pure. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/slurm.h"

queue_slurm_class queue_slurm_classify(const char *state)
{
	char w[48];
	size_t n = 0;
	while (state && state[n] && !isspace((unsigned char)state[n]) && state[n] != '+' &&
	       n + 1 < sizeof w) {
		w[n] = state[n];
		n++;
	}
	w[n] = '\0';
	static const struct {
		const char *word;
		queue_slurm_class c;
	} map[] = {
	    {"PENDING", QSL_PENDING},      {"CONFIGURING", QSL_PENDING},
	    {"REQUEUED", QSL_PENDING},     {"REQUEUE_FED", QSL_PENDING},
	    {"REQUEUE_HOLD", QSL_PENDING}, {"RESIZING", QSL_PENDING},
	    {"SUSPENDED", QSL_RUNNING},    {"STOPPED", QSL_RUNNING},
	    {"RUNNING", QSL_RUNNING},      {"COMPLETING", QSL_RUNNING},
	    {"SIGNALING", QSL_RUNNING},    {"STAGE_OUT", QSL_RUNNING},
	    {"COMPLETED", QSL_COMPLETED},  {"FAILED", QSL_FAILED},
	    {"SPECIAL_EXIT", QSL_FAILED},  {"CANCELLED", QSL_CANCELLED},
	    {"REVOKED", QSL_CANCELLED},    {"TIMEOUT", QSL_TIMEOUT},
	    {"DEADLINE", QSL_TIMEOUT},     {"OUT_OF_MEMORY", QSL_OUT_OF_MEMORY},
	    {"NODE_FAIL", QSL_NODE_FAIL},  {"BOOT_FAIL", QSL_NODE_FAIL},
	    {"PREEMPTED", QSL_NODE_FAIL},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(w, map[i].word))
			return map[i].c;
	return QSL_UNKNOWN;
}

bool queue_slurm_exitcode(const char *s, int *exit_code, int *signal)
{
	if (!s)
		return false;
	char *end;
	long a = strtol(s, &end, 10);
	if (end == s || *end != ':' || a < 0 || a > 255)
		return false;
	const char *b0 = end + 1;
	long b = strtol(b0, &end, 10);
	if (end == b0 || b < 0 || b > 255 || (*end && !isspace((unsigned char)*end)))
		return false;
	*exit_code = (int)a;
	*signal = (int)b;
	return true;
}

bool queue_slurm_parse_sbatch(const char *out, char *job, size_t joblen)
{
	if (!out)
		return false;
	/* sbatch may print warnings first: the id is the last line that starts with a digit. */
	const char *found = NULL;
	for (const char *p = out; *p;) {
		if (isdigit((unsigned char)*p))
			found = p;
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	if (!found)
		return false;
	size_t n = 0;
	while (isdigit((unsigned char)found[n]) || found[n] == '_')
		n++;
	if (n == 0 || n >= joblen ||
	    (found[n] && found[n] != ';' && !isspace((unsigned char)found[n])))
		return false;
	memcpy(job, found, n);
	job[n] = '\0';
	return true;
}

double queue_slurm_time(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (!s || !isdigit((unsigned char)*s))
		return 0;
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (*end && !isspace((unsigned char)*end) && *end != '|'))
		return 0;
	tm.tm_isdst = -1;
	time_t t = mktime(&tm);
	return t == (time_t)-1 ? 0 : (double)t;
}

/* Value of " KEY=" in a scontrol line, up to the next space. */
static bool kv(const char *line, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p != line && !isspace((unsigned char)p[-1])) || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t n = 0;
		while (v[n] && !isspace((unsigned char)v[n]))
			n++;
		if (n >= outlen)
			n = outlen - 1;
		memcpy(out, v, n);
		out[n] = '\0';
		return true;
	}
	return false;
}

/* "alice(1000)" -> "alice" */
static void user_of(const char *v, char *out, size_t len)
{
	size_t n = strcspn(v, "(");
	if (n >= len)
		n = len - 1;
	memcpy(out, v, n);
	out[n] = '\0';
}

bool queue_slurm_parse_scontrol(const char *line, queue_slurm_job *out)
{
	memset(out, 0, sizeof *out);
	out->gpus = -1;
	char buf[128];
	if (!kv(line, "JobId", out->job_id, sizeof out->job_id) ||
	    !kv(line, "JobState", out->state, sizeof out->state))
		return false;
	kv(line, "Reason", out->reason, sizeof out->reason);
	if (kv(line, "ExitCode", buf, sizeof buf))
		out->exit_ok = queue_slurm_exitcode(buf, &out->exit_code, &out->signal);
	if (kv(line, "StartTime", buf, sizeof buf))
		out->start = queue_slurm_time(buf);
	if (kv(line, "EndTime", buf, sizeof buf))
		out->end = queue_slurm_time(buf);
	if (kv(line, "UserId", buf, sizeof buf))
		user_of(buf, out->user, sizeof out->user);
	if (kv(line, "NodeList", out->nodelist, sizeof out->nodelist) &&
	    !strcmp(out->nodelist, "(null)"))
		out->nodelist[0] = '\0';
	/* `scontrol -d`: GRES=gpu:2(IDX:0-1) */
	const char *idx = strstr(line, "(IDX:");
	if (idx) {
		idx += 5;
		size_t n = 0;
		while (idx[n] && idx[n] != ')' && n + 1 < sizeof out->gres_idx)
			n++;
		memcpy(out->gres_idx, idx, n);
		out->gres_idx[n] = '\0';
	}
	return true;
}

/* AllocTRES "billing=1,cpu=1,gres/gpu=2,node=1" -> 2; -1 when it names no GPU. */
static int tres_gpus(const char *tres)
{
	for (const char *p = tres; (p = strstr(p, "gres/gpu")); p++) {
		if (p != tres && p[-1] != ',')
			continue;
		const char *eq = strchr(p, '=');
		const char *comma = strchr(p, ',');
		/* gres/gpu=2, or a typed gres/gpu:a100=2 */
		if (!eq || (comma && comma < eq) || (p[8] != '=' && p[8] != ':'))
			continue;
		char *end;
		long v = strtol(eq + 1, &end, 10);
		if (end != eq + 1 && v >= 0 && v < 1000000 && (*end == ',' || !*end))
			return (int)v;
	}
	return -1;
}

bool queue_slurm_parse_sacct(const char *line, queue_slurm_job *out)
{
	memset(out, 0, sizeof *out);
	out->gpus = -1;
	char copy[2048];
	snprintf(copy, sizeof copy, "%s", line);
	copy[strcspn(copy, "\r\n")] = '\0';
	char *f[8] = {0};
	int n = 0;
	char *p = copy;
	while (n < 8) {
		f[n++] = p;
		char *bar = strchr(p, '|');
		if (!bar)
			break;
		*bar = '\0';
		p = bar + 1;
	}
	/* A field longer than its slot is no sacct line of ours: refused, not cut short. */
	if (n < 3 || !*f[0] || !*f[1] || strlen(f[0]) >= sizeof out->job_id ||
	    strlen(f[1]) >= sizeof out->state || (n > 5 && strlen(f[5]) >= sizeof out->user) ||
	    (n > 6 && strlen(f[6]) >= sizeof out->nodelist))
		return false;
	memcpy(out->job_id, f[0], strlen(f[0]) + 1);
	memcpy(out->state, f[1], strlen(f[1]) + 1);
	/* "CANCELLED by 0": keep the word only. */
	out->state[strcspn(out->state, " ")] = '\0';
	out->exit_ok = queue_slurm_exitcode(f[2], &out->exit_code, &out->signal);
	if (n > 3)
		out->start = queue_slurm_time(f[3]);
	if (n > 4)
		out->end = queue_slurm_time(f[4]);
	if (n > 5)
		memcpy(out->user, f[5], strlen(f[5]) + 1);
	/* a pending job's NodeList is "None assigned" */
	if (n > 6 && strcmp(f[6], "None assigned"))
		memcpy(out->nodelist, f[6], strlen(f[6]) + 1);
	if (n > 7)
		out->gpus = tres_gpus(f[7]);
	return true;
}

int queue_count_token_runs(const char *log, size_t len, const char *token)
{
	char needle[80];
	snprintf(needle, sizeof needle, "token %s", token);
	int runs = 0;
	const char *p = log, *end = log + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (ll > 10 && !strncmp(p, "=== gpuwhy ", 11)) {
			char line[512];
			size_t cl = ll < sizeof line - 1 ? ll : sizeof line - 1;
			memcpy(line, p, cl);
			line[cl] = '\0';
			if (strstr(line, needle) && strstr(line, " start"))
				runs++;
		}
		p = nl ? nl + 1 : end;
	}
	return runs;
}
