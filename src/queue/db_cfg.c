/*
 * db_cfg.c - the queue's settings (their keys, defaults and checks) and
 * where its files are.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/db.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"

const queue_config_key queue_config_keys[] = {
    {"per-gpu", "1", N_("tasks per GPU for tasks added without --per-gpu")},
    {"max-running", "0", N_("at most this many tasks at once (0: no limit but the GPUs)")},
    {"cpu-slots", "0", N_("CPU-only tasks (--gpus 0) at once (0: the number of CPUs)")},
    {"gpus", "", N_("GPU subset and preference order: indices or UUID prefixes (empty: all)")},
    {"drained-gpus", "", N_("GPUs that take no new tasks (set by drain/resume --gpu)")},
    {"foreign", "skip", N_("skip|allow GPUs that run processes not started by the queue")},
    {"place", "spread", N_("spread (fewest tasks first) or pack (fill in preference order)")},
    {"visible", "uuid",
     N_("CUDA_VISIBLE_DEVICES as uuid or index (with CUDA_DEVICE_ORDER=PCI_BUS_ID)")},
    {"sample-interval", "1s", N_("how often the worker samples GPU memory and task processes")},
    {"kill-grace", "10s", N_("SIGTERM to SIGKILL delay for timeouts and cancels")},
    {"slurm-poll", "2s", N_("how often the worker asks Slurm about its jobs")},
    {"backend", "local", N_("local|slurm for tasks added without --backend")},
    {"paused", "0", N_("1 while paused (set by pause/resume)")},
    {"draining", "0", N_("1 while draining (set by drain/resume)")},
    {NULL, NULL, NULL},
};

const queue_config_key *queue_config_find(const char *key)
{
	for (int i = 0; queue_config_keys[i].key; i++)
		if (!strcmp(queue_config_keys[i].key, key))
			return &queue_config_keys[i];
	return NULL;
}

bool queue_config_check(const char *key, const char *value, gw_fail *e)
{
	long long x;
	int64_t ns;
	if (!queue_config_find(key)) {
		gw_fail_set(e, GW_EXIT_USAGE, key, NULL,
		            "unknown key (gpuwhy queue config lists them)");
		return false;
	}
	bool ok = true;
	const char *want = "";
	if (!strcmp(key, "per-gpu")) {
		ok = gw_parse_int(value, 1, 1024, &x);
		want = N_("an integer from 1 to 1024");
	} else if (!strcmp(key, "max-running") || !strcmp(key, "cpu-slots")) {
		ok = gw_parse_int(value, 0, 100000, &x);
		want = N_("an integer >= 0");
	} else if (!strcmp(key, "foreign")) {
		ok = !strcmp(value, "skip") || !strcmp(value, "allow");
		want = N_("skip or allow");
	} else if (!strcmp(key, "place")) {
		ok = !strcmp(value, "spread") || !strcmp(value, "pack");
		want = N_("spread or pack");
	} else if (!strcmp(key, "visible")) {
		ok = !strcmp(value, "uuid") || !strcmp(value, "index");
		want = N_("uuid or index");
	} else if (!strcmp(key, "backend")) {
		ok = !strcmp(value, "local") || !strcmp(value, "slurm");
		want = N_("local or slurm");
	} else if (!strcmp(key, "sample-interval") || !strcmp(key, "slurm-poll")) {
		ok = gw_parse_duration_ns(value, 1000000000LL, &ns) && ns >= 50000000LL &&
		     ns <= 3600000000000LL;
		want = N_("a duration from 50ms to 1h");
	} else if (!strcmp(key, "kill-grace")) {
		ok = gw_parse_duration_ns(value, 1000000000LL, &ns) && ns <= 3600000000000LL;
		want = N_("a duration up to 1h");
	} else if (!strcmp(key, "paused") || !strcmp(key, "draining")) {
		ok = !strcmp(value, "0") || !strcmp(value, "1");
		want = N_("0 or 1");
	} else if (!strcmp(key, "gpus") || !strcmp(key, "drained-gpus")) {
		for (const char *p = value; *p && ok; p++)
			ok = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
			     (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == ',';
		want = N_("a comma-separated list of GPU indices or UUID prefixes");
	}
	if (!ok && e) {
		/* The kind of value wanted is a phrase of its own: English in why, translated
		 * (never _("")) in why_text. */
		gw_fail_set(e, GW_EXIT_USAGE, key, NULL, "'%s' is not %s", value, want);
		snprintf(e->why_text, sizeof e->why_text, _("'%s' is not %s"), value,
		         *want ? _(want) : "");
	}
	return ok;
}

void queue_path(const char *dir, const char *leaf, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s", dir, leaf);
}

void queue_log_path(const char *dir, int64_t id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/logs/%lld.log", dir, (long long)id);
}

void queue_status_path(const char *dir, int64_t id, int n, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/run/%lld.%d.status", dir, (long long)id, n);
}

int queue_dir_resolve(const char *opt, char *out, size_t outlen, gw_fail *e)
{
	const char *env = getenv("GPUWHY_QUEUE");
	if (opt && *opt)
		snprintf(out, outlen, "%s", opt);
	else if (env && *env)
		snprintf(out, outlen, "%s", env);
	else {
		const char *state = getenv("XDG_STATE_HOME");
		const char *home = getenv("HOME");
		if (state && *state == '/')
			snprintf(out, outlen, "%s/gpuwhy/queue", state);
		else if (home && *home)
			snprintf(out, outlen, "%s/.local/state/gpuwhy/queue", home);
		else
			return gw_fail_set(e, GW_EXIT_ENV, "queue directory", N_("use --queue DIR"),
			                   "neither XDG_STATE_HOME nor HOME is set");
	}
	/* Absolute, so a worker started from elsewhere and the shims agree on it. */
	if (out[0] != '/') {
		char cwd[PATH_MAX], tmp[2 * PATH_MAX + 2];
		if (!getcwd(cwd, sizeof cwd))
			return gw_fail_set(e, GW_EXIT_ENV, "current directory", NULL, "%s",
			                   strerror(errno));
		snprintf(tmp, sizeof tmp, "%s/%s", cwd, out);
		snprintf(out, outlen, "%s", tmp);
	}
	return 0;
}
