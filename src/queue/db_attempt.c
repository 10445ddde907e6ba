/*
 * db_attempt.c - the attempts in the queue's database: their rows from
 * start to end, the task's state they move, their peaks, and the view of
 * the GPUs the worker publishes for `queue gpus`.
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "util/xalloc.h"
#include "queue/db_int.h"
#include "queue/state.h"
#include "queue/oom.h"
#include "queue/retry.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "util/timeutil.h"

static const char *astate_name(queue_astate a)
{
	return a == QA_STARTING ? "starting" : a == QA_RUNNING ? "running" : "ended";
}

static queue_astate astate_parse(const char *s)
{
	if (s && !strcmp(s, "starting"))
		return QA_STARTING;
	if (s && !strcmp(s, "running"))
		return QA_RUNNING;
	return QA_ENDED;
}

static const char *oom_name(queue_oom_kind k)
{
	return k == QOOM_GPU ? "gpu" : k == QOOM_HOST ? "host" : NULL;
}

void queue_db_read_attempt(sqlite3_stmt *s, queue_attempt *a)
{
	memset(a, 0, sizeof *a);
	a->task_id = sqlite3_column_int64(s, 0);
	a->n = sqlite3_column_int(s, 1);
	sql_col_copy(s, 2, a->token, sizeof a->token);
	a->astate = astate_parse((const char *)sqlite3_column_text(s, 3));
	const unsigned char *b = sqlite3_column_text(s, 4);
	a->backend = b && !strcmp((const char *)b, "slurm") ? QB_SLURM : QB_LOCAL;
	sql_col_copy(s, 5, a->slurm_job, sizeof a->slurm_job);
	sql_col_copy(s, 6, a->slurm_state, sizeof a->slurm_state);
	a->shim_pid = sqlite3_column_int(s, 7);
	a->shim_start = (uint64_t)sqlite3_column_int64(s, 8);
	a->task_pgid = sqlite3_column_int(s, 9);
	sql_col_copy(s, 10, a->boot_id, sizeof a->boot_id);
	sql_col_copy(s, 11, a->gpu_uuids, sizeof a->gpu_uuids);
	sql_col_copy(s, 12, a->gpu_idx, sizeof a->gpu_idx);
	a->reserved_mib = sql_col_opt(s, 13);
	a->per_gpu = sqlite3_column_int(s, 14);
	a->started = sqlite3_column_double(s, 15);
	a->ended = sqlite3_column_double(s, 16);
	a->exit_ok = sqlite3_column_type(s, 17) != SQLITE_NULL;
	a->exit_code = sqlite3_column_int(s, 17);
	a->signal = sqlite3_column_int(s, 18);
	int o = queue_outcome_parse((const char *)sqlite3_column_text(s, 19));
	a->outcome = o < 0 ? QO_NONE : (queue_outcome)o;
	const unsigned char *oom = sqlite3_column_text(s, 20);
	a->oom = !oom ? QOOM_NONE : !strcmp((const char *)oom, "gpu") ? QOOM_GPU : QOOM_HOST;
	sql_col_copy(s, 21, a->error, sizeof a->error);
	a->peak_gpu_mib = sql_col_opt(s, 22);
	a->peak_rss_kib = sql_col_opt(s, 23);
	a->log_offset = sqlite3_column_int64(s, 24);
	a->runs = sqlite3_column_int(s, 25);
}

static int read_attempts(queue_db *st, sqlite3_stmt *s, queue_attempt **out, int *n)
{
	int cap = 8, cnt = 0, rc;
	queue_attempt *v = malloc((size_t)cap * sizeof *v);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		queue_db_read_attempt(s, &v[cnt++]);
	}
	queue_db_done(st, s);
	if (rc != SQLITE_DONE) {
		free(v);
		return queue_db_fail(st, "attempts"), -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int queue_db_attempts(queue_db *st, int64_t id, queue_attempt **out, int *n)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ? ORDER BY n");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return read_attempts(st, s, out, n);
}

int queue_db_attempt_get(queue_db *st, int64_t id, int n, queue_attempt *out)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_int(s, 2, n);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		queue_db_read_attempt(s, out);
	queue_db_done(st, s);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int queue_db_active(queue_db *st, int backend, queue_attempt **out, int *n)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT " ATT_COLS " FROM attempts WHERE astate != 'ended'"
	                      " AND (? < 0 OR backend = ?) ORDER BY task_id, n");
	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, backend);
	sql_bind_text(s, 2, queue_backend_name(backend == QB_SLURM ? QB_SLURM : QB_LOCAL));
	return read_attempts(st, s, out, n);
}

int queue_db_next_attempt(queue_db *st, int64_t id)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE task_id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	queue_db_done(st, s);
	return n;
}

int queue_db_begin_attempt(queue_db *st, queue_attempt *a, queue_state to)
{
	if (queue_db_begin(st))
		return -1;
	/* An out-of-memory retry is counted when it starts: one planned and then
	 * cancelled, or past the last attempt, is no retry. */
	sqlite3_stmt *s = queue_db_prep(
	    st, "UPDATE tasks SET state = ?1, attempts = attempts + 1,"
	        " started = COALESCE(started, ?2), wait_reason = NULL, gpus_used = ?3,"
	        " oom_count = oom_count + EXISTS(SELECT 1 FROM attempts WHERE task_id = ?4"
	        " AND oom = 'gpu' AND n = (SELECT MAX(n) FROM attempts WHERE task_id = ?4))"
	        " WHERE id = ?4 AND state = 'queued'");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	sql_bind_text(s, 1, queue_state_name(to));
	sqlite3_bind_double(s, 2, a->started);
	sql_bind_text(s, 3, a->gpu_idx);
	sqlite3_bind_int64(s, 4, a->task_id);
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	if (sqlite3_changes(st->db) == 0) {
		queue_db_rollback(st);
		return 1;
	}
	if (a->n <= 0 && (a->n = queue_db_next_attempt(st, a->task_id)) < 0) {
		queue_db_rollback(st);
		return -1;
	}
	s = queue_db_prep(
	    st, "INSERT INTO attempts(task_id, n, token, astate, backend, boot_id, gpu_uuids,"
	        " gpu_idx, reserved_mib, per_gpu, started, log_offset, shim_pid, shim_start)"
	        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	sqlite3_bind_int64(s, 1, a->task_id);
	sqlite3_bind_int(s, 2, a->n);
	sql_bind_text(s, 3, a->token);
	queue_astate as = a->astate == QA_RUNNING ? QA_RUNNING : QA_STARTING;
	sql_bind_text(s, 4, astate_name(as));
	sql_bind_text(s, 5, queue_backend_name(a->backend));
	sql_bind_text(s, 6, a->boot_id);
	sql_bind_text(s, 7, a->gpu_uuids);
	sql_bind_text(s, 8, a->gpu_idx);
	sql_bind_opt(s, 9, a->reserved_mib);
	sqlite3_bind_int(s, 10, a->per_gpu);
	sqlite3_bind_double(s, 11, a->started);
	sqlite3_bind_int64(s, 12, a->log_offset);
	if (as == QA_RUNNING) {
		sqlite3_bind_int(s, 13, a->shim_pid);
		sqlite3_bind_int64(s, 14, (sqlite3_int64)a->shim_start);
	}
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	a->astate = as;
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_attempt_running(queue_db *st, const queue_attempt *a, bool *cancel)
{
	if (queue_db_begin(st))
		return -1;
	sqlite3_stmt *s =
	    queue_db_prep(st, "UPDATE attempts SET astate = 'running', shim_pid = ?,"
	                      " shim_start = ?, task_pgid = ? WHERE task_id = ? AND n = ?");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	sqlite3_bind_int(s, 1, a->shim_pid);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)a->shim_start);
	sqlite3_bind_int(s, 3, a->task_pgid);
	sqlite3_bind_int64(s, 4, a->task_id);
	sqlite3_bind_int(s, 5, a->n);
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	*cancel = false;
	s = queue_db_prep(st, "SELECT cancel_requested FROM tasks WHERE id = ?");
	if (s) {
		sqlite3_bind_int64(s, 1, a->task_id);
		if (sqlite3_step(s) == SQLITE_ROW)
			*cancel = sqlite3_column_int(s, 0) != 0;
		queue_db_done(st, s);
	}
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

/* The GPUs an attempt got, on the task too (Slurm tells us once the job runs). */
static int set_gpus_used(queue_db *st, const queue_attempt *a)
{
	if (!a->gpu_idx[0])
		return 0;
	sqlite3_stmt *s = queue_db_prep(st, "UPDATE tasks SET gpus_used = ? WHERE id = ?");
	if (!s)
		return -1;
	sql_bind_text(s, 1, a->gpu_idx);
	sqlite3_bind_int64(s, 2, a->task_id);
	return queue_db_step_done(st, s);
}

int queue_db_attempt_slurm(queue_db *st, const queue_attempt *a)
{
	if (set_gpus_used(st, a) != 0)
		return -1;
	sqlite3_stmt *s =
	    queue_db_prep(st, "UPDATE attempts SET astate = ?, slurm_job = ?, slurm_state = ?,"
	                      " runs = ?, gpu_idx = ?, started = ? WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	sql_bind_text(s, 1, astate_name(a->astate));
	sql_bind_text(s, 2, a->slurm_job[0] ? a->slurm_job : NULL);
	sql_bind_text(s, 3, a->slurm_state[0] ? a->slurm_state : NULL);
	sqlite3_bind_int(s, 4, a->runs);
	sql_bind_text(s, 5, a->gpu_idx);
	sqlite3_bind_double(s, 6, a->started);
	sqlite3_bind_int64(s, 7, a->task_id);
	sqlite3_bind_int(s, 8, a->n);
	return queue_db_step_done(st, s);
}

int queue_db_task_began(queue_db *st, int64_t id)
{
	sqlite3_stmt *s = queue_db_prep(st, "UPDATE tasks SET state = 'running' WHERE id = ?"
	                                    " AND state = 'submitted'");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	return queue_db_step_done(st, s);
}

int queue_db_finish(queue_db *st, const queue_attempt *a, const queue_retry_out *d,
                    int64_t task_peak_gpu, int64_t task_peak_rss)
{
	if (queue_db_begin(st))
		return -1;
	sqlite3_stmt *s =
	    queue_db_prep(st, "UPDATE attempts SET astate = 'ended', started = ?, ended = ?,"
	                      " exit_code = ?, signal = ?, outcome = ?, oom = ?, error = ?,"
	                      " peak_gpu_mib = ?, peak_rss_kib = ?, runs = ?, slurm_state = ?,"
	                      " task_pgid = ?, gpu_idx = ? WHERE task_id = ? AND n = ?");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	sqlite3_bind_double(s, 1, a->started);
	sqlite3_bind_double(s, 2, a->ended);
	if (a->exit_ok)
		sqlite3_bind_int(s, 3, a->exit_code);
	else
		sqlite3_bind_null(s, 3);
	sqlite3_bind_int(s, 4, a->signal);
	sql_bind_text(s, 5, queue_outcome_name(a->outcome));
	sql_bind_text(s, 6, oom_name(a->oom));
	sql_bind_text(s, 7, a->error[0] ? a->error : NULL);
	sql_bind_opt(s, 8, a->peak_gpu_mib);
	sql_bind_opt(s, 9, a->peak_rss_kib);
	sqlite3_bind_int(s, 10, a->runs);
	sql_bind_text(s, 11, a->slurm_state[0] ? a->slurm_state : NULL);
	sqlite3_bind_int(s, 12, a->task_pgid);
	sql_bind_text(s, 13, a->gpu_idx);
	sqlite3_bind_int64(s, 14, a->task_id);
	sqlite3_bind_int(s, 15, a->n);
	if (queue_db_step_done(st, s) || set_gpus_used(st, a)) {
		queue_db_rollback(st);
		return -1;
	}
	bool final = queue_state_final(d->next);
	bool not_started = a->outcome == QO_NOT_STARTED;
	s = queue_db_prep(st, "UPDATE tasks SET state = ?, attempts = attempts - ?, not_before = ?,"
	                      " mem_hint_mib = COALESCE(?, mem_hint_mib),"
	                      " per_gpu_hint = CASE WHEN ? > 0 THEN ? ELSE per_gpu_hint END,"
	                      " ended = ?, exit_code = ?, signal = ?, error = ?,"
	                      " peak_gpu_mib = CASE WHEN ? IS NULL THEN peak_gpu_mib ELSE "
	                      "MAX(COALESCE(peak_gpu_mib, 0), ?) END,"
	                      " peak_rss_kib = CASE WHEN ? IS NULL THEN peak_rss_kib ELSE "
	                      "MAX(COALESCE(peak_rss_kib, 0), ?) END,"
	                      " cancel_requested = CASE WHEN ? THEN 0 ELSE cancel_requested END"
	                      " WHERE id = ?");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	double now = gw_wall_s();
	sqlite3_bind_text(s, 1, queue_state_name(d->next), -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, not_started ? 1 : 0);
	sqlite3_bind_double(
	    s, 3, d->next == QS_QUEUED && d->delay_ms > 0 ? now + (double)d->delay_ms / 1000.0 : 0);
	sql_bind_opt(s, 4, d->mem_hint_mib);
	sqlite3_bind_int(s, 5, d->per_gpu_hint);
	sqlite3_bind_int(s, 6, d->per_gpu_hint);
	if (final)
		sqlite3_bind_double(s, 7, a->ended > 0 ? a->ended : now);
	else
		sqlite3_bind_null(s, 7);
	if (a->exit_ok)
		sqlite3_bind_int(s, 8, a->exit_code);
	else
		sqlite3_bind_null(s, 8);
	sqlite3_bind_int(s, 9, a->signal);
	sql_bind_text(s, 10, d->next == QS_DONE ? NULL : d->why);
	sql_bind_opt(s, 11, task_peak_gpu);
	sql_bind_opt(s, 12, task_peak_gpu);
	sql_bind_opt(s, 13, task_peak_rss);
	sql_bind_opt(s, 14, task_peak_rss);
	sqlite3_bind_int(s, 15, final ? 1 : 0);
	sqlite3_bind_int64(s, 16, a->task_id);
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_peaks(queue_db *st, int64_t id, int n, int64_t gpu_mib, int64_t rss_kib)
{
	sqlite3_stmt *s = queue_db_prep(st, "UPDATE attempts SET peak_gpu_mib = ?, peak_rss_kib = ?"
	                                    " WHERE task_id = ? AND n = ?");
	if (!s)
		return -1;
	sql_bind_opt(s, 1, gpu_mib);
	sql_bind_opt(s, 2, rss_kib);
	sqlite3_bind_int64(s, 3, id);
	sqlite3_bind_int(s, 4, n);
	return queue_db_step_done(st, s);
}

int queue_db_gpu_view_put(queue_db *st, const queue_gpu_row *rows, int n, double t)
{
	if (queue_db_begin(st))
		return -1;
	if (queue_db_exec(st, "DELETE FROM gpu_view")) {
		queue_db_rollback(st);
		return -1;
	}
	sqlite3_stmt *s =
	    queue_db_prep(st, "INSERT INTO gpu_view(pos, idx, uuid, name, total_mib, free_mib,"
	                      " pending_mib, avail_mib, ntasks, cap, foreign_procs, state,"
	                      " tasks, t) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const queue_gpu_row *r = &rows[i];
		sqlite3_reset(s);
		sqlite3_bind_int(s, 1, i);
		sqlite3_bind_int(s, 2, r->index);
		sql_bind_text(s, 3, r->uuid);
		sql_bind_text(s, 4, r->name);
		sql_bind_opt(s, 5, r->total_mib);
		sql_bind_opt(s, 6, r->free_mib);
		sql_bind_opt(s, 7, r->pending_mib);
		if (r->avail_mib == INT64_MIN)
			sqlite3_bind_null(s, 8);
		else
			sqlite3_bind_int64(s, 8, r->avail_mib);
		sqlite3_bind_int(s, 9, r->ntasks);
		sqlite3_bind_int(s, 10, r->cap);
		sqlite3_bind_int(s, 11, r->foreign);
		sql_bind_text(s, 12, r->state);
		sql_bind_text(s, 13, r->tasks);
		sqlite3_bind_double(s, 14, t);
		if (sqlite3_step(s) != SQLITE_DONE) {
			queue_db_fail(st, "gpu view");
			queue_db_done(st, s);
			queue_db_rollback(st);
			return -1;
		}
	}
	queue_db_done(st, s);
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_gpu_view_get(queue_db *st, queue_gpu_row **rows, int *n, double *t)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT idx, uuid, name, total_mib, free_mib, pending_mib,"
	                      " avail_mib, ntasks, cap, foreign_procs, state, tasks, t"
	                      " FROM gpu_view ORDER BY pos");
	if (!s)
		return -1;
	int cap = 8, cnt = 0;
	queue_gpu_row *v = calloc((size_t)cap, sizeof *v);
	*t = 0;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		queue_gpu_row *r = &v[cnt++];
		memset(r, 0, sizeof *r);
		r->index = sqlite3_column_int(s, 0);
		sql_col_copy(s, 1, r->uuid, sizeof r->uuid);
		sql_col_copy(s, 2, r->name, sizeof r->name);
		r->total_mib = sql_col_opt(s, 3);
		r->free_mib = sql_col_opt(s, 4);
		r->pending_mib = sql_col_opt(s, 5);
		r->avail_mib = sqlite3_column_type(s, 6) == SQLITE_NULL
		                   ? INT64_MIN
		                   : sqlite3_column_int64(s, 6);
		r->ntasks = sqlite3_column_int(s, 7);
		r->cap = sqlite3_column_int(s, 8);
		r->foreign = sqlite3_column_int(s, 9);
		sql_col_copy(s, 10, r->state, sizeof r->state);
		sql_col_copy(s, 11, r->tasks, sizeof r->tasks);
		*t = sqlite3_column_double(s, 12);
	}
	queue_db_done(st, s);
	*rows = v;
	*n = cnt;
	return 0;
}
