/* control.c - cancel, clean, pause, drain, resume and stop: the queue changed from outside
 * its worker (`gpuwhy queue cancel`, `clean`, `pause`, `drain`, `resume`, `stop`). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/control.h"
#include "queue/conclude.h"
#include "queue/procscan.h"
#include "queue/state.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/selfexe.h"
#include "util/timeutil.h"

void queue_ctl_unended(queue_db *st, int64_t **ids, int *n)
{
	*ids = NULL;
	*n = 0;
	queue_task *t;
	int nt;
	if (queue_db_list(st, -1, &t, &nt) != 0)
		return;
	*ids = calloc((size_t)nt + 1, sizeof **ids);
	for (int i = 0; i < nt; i++)
		if (!queue_state_final(t[i].state))
			(*ids)[(*n)++] = t[i].id;
	queue_tasks_free(t, nt);
}

int queue_ctl_cancel(queue_db *st, int64_t id, queue_cancel_result *res, queue_state *ended)
{
	int result;
	queue_attempt a;
	int r = queue_db_cancel(st, id, &result, &a);
	if (r != 0)
		return r;
	if (result == 0) {
		*res = QUEUE_CANCELLED;
		queue_write_record(st, id);
	} else if (result == 1) {
		/* Tell the shim straight away; the worker also does, should this miss. */
		if (a.backend == QB_LOCAL && a.astate == QA_RUNNING &&
		    queue_proc_alive(a.shim_pid, a.shim_start))
			kill(a.shim_pid, SIGUSR1);
		*res = QUEUE_CANCEL_ASKED;
	} else {
		queue_task t;
		*res = QUEUE_CANCEL_UNKNOWN;
		if (queue_db_get(st, id, &t) == 0) {
			*res = QUEUE_CANCEL_ENDED;
			*ended = t.state;
			queue_task_free(&t);
		}
	}
	return 0;
}

int queue_ctl_clean(queue_db *st, const char *dir, bool all, int *n)
{
	int64_t *ids;
	if (queue_db_clean(st, all, &ids, n) != 0)
		return GW_EXIT_ENV;
	for (int i = 0; i < *n; i++) {
		char path[PATH_MAX];
		queue_log_path(dir, ids[i], path, sizeof path);
		unlink(path);
	}
	free(ids);
	return 0;
}

/* Append the entries of list to out, a comma-separated list of len bytes. */
static void append_list(char *out, size_t len, const char *list)
{
	char l2[256], *s2 = NULL;
	snprintf(l2, sizeof l2, "%s", list);
	for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2)) {
		size_t ol = strlen(out);
		snprintf(out + ol, len - ol, "%s%s", ol ? "," : "", u);
	}
}

int queue_ctl_drain_gpus(queue_db *st, const char *list, bool add, char *out, size_t len,
                         gw_fail *e)
{
	char cur[256];
	out[0] = '\0';
	queue_db_config_get(st, "drained-gpus", cur, sizeof cur);
	if (!queue_config_check("drained-gpus", list, e)) {
		snprintf(e->what, sizeof e->what, "--gpu"); /* the option that gave the list */
		return e->code;
	}
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", cur);
	/* Keep current entries not being removed. */
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool drop = false;
		char l2[256], *s2 = NULL;
		snprintf(l2, sizeof l2, "%s", list);
		for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2))
			drop |= !strcasecmp(t, u);
		if (!drop) {
			size_t ol = strlen(out);
			snprintf(out + ol, len - ol, "%s%s", ol ? "," : "", t);
		}
	}
	if (add)
		append_list(out, len, list);
	if (queue_db_config_set(st, "drained-gpus", out) != 0)
		return GW_EXIT_ENV;
	return 0;
}

int queue_ctl_set_mode(queue_db *st, queue_mode m, bool *start)
{
	int rc;
	*start = false;
	if (m == QUEUE_PAUSE)
		rc = queue_db_config_set(st, "paused", "1");
	else if (m == QUEUE_DRAIN)
		rc = queue_db_config_set(st, "draining", "1");
	else
		rc = queue_db_config_set(st, "paused", "0") ||
		     queue_db_config_set(st, "draining", "0");
	if (rc)
		return GW_EXIT_ENV;
	*start = m == QUEUE_RESUME && queue_db_count_state(st, QS_QUEUED) > 0;
	return 0;
}

int queue_ctl_kick(const char *dir, bool start)
{
	if (start && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_poke(dir);
	return 0;
}

queue_stop_result queue_ctl_stop(const char *dir, const char *self_exe, int *pid, gw_fail *e)
{
	struct stat dst;
	if (!(lstat(dir, &dst) != 0 && errno == ENOENT) && queue_dir_check(dir, e))
		return QUEUE_STOP_BAD_DIR;
	*pid = queue_worker_pid(dir);
	if (*pid == 0)
		return QUEUE_STOP_NONE;
	if (*pid < 0)
		return QUEUE_STOP_NO_PID;
	if (queue_worker_signal(dir, *pid, SIGTERM, self_exe, e) != 0)
		return QUEUE_STOP_UNSENT;
	int64_t until = gw_mono_ns() + 15000000000LL;
	while (queue_worker_pid(dir) != 0 && gw_mono_ns() < until)
		gw_sleep_ns(20000000);
	return queue_worker_pid(dir) != 0 ? QUEUE_STOP_STUCK : QUEUE_STOPPED;
}
