/*
 * conclude.c - what both back ends do when an attempt ends, and before a
 * queued task may go: the log tail's out-of-memory messages, the retry
 * policy, the stored result, the task's record file, the cooldown and
 * dependency gate.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "queue/state.h"
#include "queue/oom.h"
#include "queue/retry.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/jsonw.h"

#define LOG_TAIL_BYTES 65536

char *queue_read_tail(const char *path, int64_t offset, size_t max, size_t *len)
{
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat stt;
	if (fstat(fd, &stt) != 0) {
		close(fd);
		return NULL;
	}
	int64_t size = stt.st_size;
	int64_t from = offset > 0 ? offset : 0;
	if (size - from > (int64_t)max)
		from = size - (int64_t)max;
	if (from > size)
		from = size;
	size_t want = (size_t)(size - from);
	char *buf = malloc(want + 1);
	size_t got = 0;
	while (got < want) {
		ssize_t n = pread(fd, buf + got, want - got, from + (off_t)got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static void iso_time(double t, char *out, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void queue_write_record(queue_db *st, int64_t id)
{
	queue_task t;
	if (queue_db_get(st, id, &t) != 0)
		return;
	if (!t.spec.record_file) {
		queue_task_free(&t);
		return;
	}
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(t.id));
	json_object_set_new(o, "name", json_string(t.spec.name));
	char *cmd = queue_argv_to_shell(t.spec.argv, t.spec.argc);
	json_object_set_new(o, "command", json_string(cmd));
	free(cmd);
	json_object_set_new(o, "input", t.spec.input ? json_string(t.spec.input) : json_null());
	json_object_set_new(o, "output", t.spec.output ? json_string(t.spec.output) : json_null());
	json_object_set_new(o, "state", json_string(queue_state_name(t.state)));
	json_object_set_new(o, "attempts", json_integer(t.attempts));
	char ts[40];
	iso_time(t.started, ts, sizeof ts);
	json_object_set_new(o, "start", t.started > 0 ? json_string(ts) : json_null());
	iso_time(t.ended, ts, sizeof ts);
	json_object_set_new(o, "end", t.ended > 0 ? json_string(ts) : json_null());
	json_object_set_new(o, "exit_code", t.exit_ok ? json_integer(t.exit_code) : json_null());
	json_object_set_new(o, "signal", t.signal ? json_integer(t.signal) : json_null());
	json_object_set_new(o, "gpus", json_string(t.gpus_used));
	json_object_set_new(o, "peak_gpu_mib",
	                    t.peak_gpu_mib >= 0 ? json_integer(t.peak_gpu_mib) : json_null());
	json_object_set_new(o, "peak_rss_kib",
	                    t.peak_rss_kib >= 0 ? json_integer(t.peak_rss_kib) : json_null());
	json_object_set_new(o, "error", t.error[0] ? json_string(t.error) : json_null());
	char *line = jsonw_tree_text(o, 0, 0);
	json_decref(o);
	/* One write with O_APPEND: lines from concurrent writers do not interleave. */
	int fd = open(t.spec.record_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t l = strlen(line);
		line[l] = '\n';
		if (write(fd, line, l + 1) < 0)
			queue_worker_log("task %lld: cannot write %s: %s", (long long)id,
			                 t.spec.record_file, strerror(errno));
		line[l] = '\0';
		close(fd);
	} else {
		queue_worker_log("task %lld: cannot open %s: %s", (long long)id, t.spec.record_file,
		                 strerror(errno));
	}
	free(line);
	queue_task_free(&t);
}

int queue_attempt_conclude(queue_db *st, queue_attempt *a, int64_t largest_gpu_mib)
{
	queue_task t;
	if (queue_db_get(st, a->task_id, &t) != 0)
		return -1;
	queue_oom_info oom = {.kind = QOOM_NONE, .tried_mib = -1};
	if (a->outcome == QO_FAILED || a->outcome == QO_LOST) {
		char path[PATH_MAX];
		queue_log_path(queue_db_dir(st), a->task_id, path, sizeof path);
		size_t len;
		char *tail = queue_read_tail(path, a->log_offset, LOG_TAIL_BYTES, &len);
		if (tail)
			queue_oom_scan(tail, len, &oom);
		free(tail);
		if (a->oom == QOOM_NONE)
			a->oom = oom.kind;
		if (oom.kind != QOOM_NONE) {
			size_t used = strlen(a->error);
			snprintf(a->error + used, sizeof a->error - used, "%s%s", used ? "; " : "",
			         oom.line);
		}
	}
	queue_retry_in in = {
	    .outcome = a->outcome,
	    .exit_ok = a->exit_ok,
	    .exit_code = a->exit_code,
	    .signal = a->signal,
	    .oom = a->oom,
	    .tried_mib = oom.tried_mib,
	    .attempts_used = t.attempts - t.budget_from,
	    .retries = t.spec.retries,
	    .retry_delay_ms = t.spec.retry_delay_ms,
	    .mem_mib = a->reserved_mib,
	    .peak_gpu_mib = a->peak_gpu_mib,
	    .largest_gpu_mib = largest_gpu_mib,
	    .per_gpu = a->per_gpu > 0 ? a->per_gpu : 1,
	};
	queue_retry_out d;
	queue_retry_decide(&in, &d);
	if (t.cancel_requested && d.next == QS_QUEUED) {
		d.next = QS_CANCELLED;
		snprintf(d.why, sizeof d.why, "cancelled");
	}
	if (a->error[0] && d.next != QS_DONE) {
		/* Keep the attempt's own words (exec error, OOM line) next to the policy's. */
		char why[sizeof d.why];
		snprintf(why, sizeof why, "%s", d.why);
		snprintf(d.why, sizeof d.why, "%.250s (%.250s)", why, a->error);
	}
	int rc = queue_db_finish(st, a, &d, a->peak_gpu_mib, a->peak_rss_kib);
	bool record = queue_state_final(d.next) && t.spec.record_file;
	queue_task_free(&t);
	if (rc)
		return -1;
	if (record)
		queue_write_record(st, a->task_id);
	return (int)d.next;
}

int queue_candidate_gate(queue_db *st, const queue_candidate *c, double now, char *reason,
                         size_t len, double *next_due)
{
	if (c->not_before > now) {
		if (*next_due == 0 || c->not_before < *next_due)
			*next_due = c->not_before;
		time_t nb = (time_t)c->not_before;
		struct tm tm;
		localtime_r(&nb, &tm);
		char ts[16];
		strftime(ts, sizeof ts, "%H:%M:%S", &tm);
		snprintf(reason, len, "retry cooldown until %s", ts);
		return 0;
	}
	if (c->after_id > 0) {
		int ds = queue_db_state_of(st, c->after_id);
		if (ds < 0 || (queue_state_final((queue_state)ds) && ds != QS_DONE)) {
			queue_db_dep_failed(st, c->id, c->after_id, (queue_state)ds);
			queue_worker_log("task %lld failed: task %lld, which it waits for, %s%s",
			                 (long long)c->id, (long long)c->after_id,
			                 ds < 0 ? "does not exist" : "ended ",
			                 ds < 0 ? "" : queue_state_name((queue_state)ds));
			queue_write_record(st, c->id);
			return -1;
		}
		if (ds != QS_DONE) {
			snprintf(reason, len, "waiting for task %lld (%s)", (long long)c->after_id,
			         queue_state_name((queue_state)ds));
			return 0;
		}
	}
	return 1;
}
