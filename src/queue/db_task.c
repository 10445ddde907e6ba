/*
 * db_task.c - the queue's tasks in its database: adding, reading,
 * listing, the user's cancel and retry, what the scheduler reads, clean.
 */
#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"
#include "util/xalloc.h"
#include "queue/db_int.h"
#include "queue/state.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

static char *argv_json(const queue_spec *sp)
{
	json_t *a = json_array();
	for (int i = 0; i < sp->argc; i++)
		json_array_append_new(a, json_string(sp->argv[i]));
	char *s = jsonw_tree_text(a, 0, 0);
	json_decref(a);
	return s;
}

static void argv_from_json(queue_spec *sp, const char *txt)
{
	json_t *a = txt ? json_loads(txt, 0, NULL) : NULL;
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	sp->argv = calloc(n + 1, sizeof *sp->argv);
	sp->argc = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(a, i);
		sp->argv[sp->argc++] = strdup(json_is_string(w) ? json_string_value(w) : "");
	}
	json_decref(a);
}

int queue_db_add(queue_db *st, queue_spec *specs, int n, int64_t *ids)
{
	return queue_db_add_token(st, specs, n, NULL, ids);
}

int queue_db_token_ids(queue_db *st, const char *token, int n, int64_t *ids)
{
	sqlite3_stmt *s = queue_db_prep(st, "SELECT id FROM tasks WHERE submit_token >= ?1 AND"
	                                    " submit_token < ?1 || ';' ORDER BY id");
	if (!s)
		return -1;
	char lo[QUEUE_TOKEN_MAX + 2];
	snprintf(lo, sizeof lo, "%s:", token);
	sql_bind_text(s, 1, lo);
	int k = 0, rc;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (k < n)
			ids[k++] = sqlite3_column_int64(s, 0);
		else
			k++;
	queue_db_done(st, s);
	return rc == SQLITE_DONE ? k : -1;
}

/* Task i of a submission under token is stored as "TOKEN:i": unique, so the same submission
 * can only be added once whoever adds it. */
static void bind_token(sqlite3_stmt *s, int col, const char *token, int i)
{
	if (!token) {
		sqlite3_bind_null(s, col);
		return;
	}
	char t[QUEUE_TOKEN_MAX + 16];
	snprintf(t, sizeof t, "%s:%d", token, i);
	sqlite3_bind_text(s, col, t, -1, SQLITE_TRANSIENT);
}

/* The insert failed on an existing token: the whole submission is there already. */
static int already_added(queue_db *st, const char *token, int n, int64_t *ids)
{
	queue_db_rollback(st);
	int k = queue_db_token_ids(st, token, n, ids);
	if (k == n) {
		st->err.code = 0;
		return 0;
	}
	return queue_db_fail(st, "add");
}

int queue_db_add_token(queue_db *st, queue_spec *specs, int n, const char *token, int64_t *ids)
{
	if (queue_db_begin(st))
		return -1;
	sqlite3_stmt *s = queue_db_prep(
	    st, "INSERT INTO tasks(name, argv, cwd, env, gpus, mem_mib, per_gpu, retries,"
	        " retry_delay_ms, timeout_ms, after_id, allow_foreign, backend, host_mem_mib,"
	        " slurm_args, input, output, record_file, submitted, submit_token)"
	        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	double now = gw_wall_s();
	for (int i = 0; i < n; i++) {
		const queue_spec *sp = &specs[i];
		/* Checked here, in the same transaction: a task added earlier in the batch counts.
		 */
		if (sp->after_id > 0 && queue_db_task_state(st, sp->after_id) == -1) {
			char what[64];
			snprintf(what, sizeof what, "after %lld", (long long)sp->after_id);
			queue_db_done(st, s);
			queue_db_rollback(st);
			char why[160];
			if (n > 1)
				snprintf(
				    why, sizeof why,
				    _("task %d of %d waits for task %lld, which does not exist; "
				      "nothing was added"),
				    i + 1, n, (long long)sp->after_id);
			else
				snprintf(why, sizeof why, _("there is no task %lld"),
				         (long long)sp->after_id);
			return queue_db_usage(
			    st, what, "task ids are the numbers `gpuwhy queue ls` shows", why);
		}
		char *av = argv_json(sp);
		sqlite3_reset(s);
		sql_bind_text(s, 1, sp->name);
		sql_bind_text(s, 2, av);
		sql_bind_text(s, 3, sp->cwd ? sp->cwd : "/");
		sql_bind_text(s, 4, sp->env_json);
		sqlite3_bind_int(s, 5, sp->gpus);
		sql_bind_opt(s, 6, sp->mem_mib);
		sqlite3_bind_int(s, 7, sp->per_gpu);
		sqlite3_bind_int(s, 8, sp->retries);
		sqlite3_bind_int64(s, 9, sp->retry_delay_ms);
		sqlite3_bind_int64(s, 10, sp->timeout_ms);
		sql_bind_opt(s, 11, sp->after_id > 0 ? sp->after_id : -1);
		sqlite3_bind_int(s, 12, sp->allow_foreign);
		sql_bind_text(s, 13, queue_backend_name(sp->backend));
		sql_bind_opt(s, 14, sp->host_mem_mib);
		sql_bind_text(s, 15, sp->slurm_args);
		sql_bind_text(s, 16, sp->input);
		sql_bind_text(s, 17, sp->output);
		sql_bind_text(s, 18, sp->record_file);
		sqlite3_bind_double(s, 19, now);
		bind_token(s, 20, token, i);
		int rc = sqlite3_step(s);
		free(av);
		if (rc == SQLITE_CONSTRAINT && token) {
			queue_db_done(st, s);
			return already_added(st, token, n, ids);
		}
		if (rc != SQLITE_DONE) {
			queue_db_fail(st, "add");
			queue_db_done(st, s);
			queue_db_rollback(st);
			return -1;
		}
		ids[i] = sqlite3_last_insert_rowid(st->db);
	}
	queue_db_done(st, s);
	if (queue_db_commit(st)) {
		queue_db_rollback(st);
		return -1;
	}
	return 0;
}

#define TASK_COLS                                                                                  \
	"id, name, argv, cwd, env, gpus, mem_mib, per_gpu, retries, retry_delay_ms, timeout_ms,"   \
	" after_id, allow_foreign, backend, host_mem_mib, slurm_args, input, output,"              \
	" record_file, state, attempts, budget_from, oom_count, mem_hint_mib, per_gpu_hint,"       \
	" not_before, cancel_requested, submitted, started, ended, exit_code, signal, error,"      \
	" peak_gpu_mib, peak_rss_kib, wait_reason, gpus_used"

static void read_task(sqlite3_stmt *s, queue_task *t)
{
	memset(t, 0, sizeof *t);
	queue_spec_init(&t->spec);
	t->id = sqlite3_column_int64(s, 0);
	sql_col_copy(s, 1, t->spec.name, sizeof t->spec.name);
	argv_from_json(&t->spec, (const char *)sqlite3_column_text(s, 2));
	t->spec.cwd = sql_col_dup(s, 3);
	t->spec.env_json = sql_col_dup(s, 4);
	t->spec.gpus = sqlite3_column_int(s, 5);
	t->spec.mem_mib = sql_col_opt(s, 6);
	t->spec.per_gpu = sqlite3_column_int(s, 7);
	t->spec.retries = sqlite3_column_int(s, 8);
	t->spec.retry_delay_ms = sqlite3_column_int64(s, 9);
	t->spec.timeout_ms = sqlite3_column_int64(s, 10);
	t->spec.after_id = sql_col_opt(s, 11) > 0 ? sql_col_opt(s, 11) : 0;
	t->spec.allow_foreign = sqlite3_column_int(s, 12) != 0;
	const unsigned char *b = sqlite3_column_text(s, 13);
	t->spec.backend = b && !strcmp((const char *)b, "slurm") ? QB_SLURM : QB_LOCAL;
	t->spec.host_mem_mib = sql_col_opt(s, 14);
	t->spec.slurm_args = sql_col_dup(s, 15);
	t->spec.input = sql_col_dup(s, 16);
	t->spec.output = sql_col_dup(s, 17);
	t->spec.record_file = sql_col_dup(s, 18);
	int state = queue_state_parse((const char *)sqlite3_column_text(s, 19));
	t->state = state < 0 ? QS_FAILED : (queue_state)state;
	t->attempts = sqlite3_column_int(s, 20);
	t->budget_from = sqlite3_column_int(s, 21);
	t->oom_count = sqlite3_column_int(s, 22);
	t->mem_hint_mib = sql_col_opt(s, 23);
	t->per_gpu_hint = sqlite3_column_int(s, 24);
	t->not_before = sqlite3_column_double(s, 25);
	t->cancel_requested = sqlite3_column_int(s, 26) != 0;
	t->submitted = sqlite3_column_double(s, 27);
	t->started = sqlite3_column_double(s, 28);
	t->ended = sqlite3_column_double(s, 29);
	t->exit_ok = sqlite3_column_type(s, 30) != SQLITE_NULL;
	t->exit_code = sqlite3_column_int(s, 30);
	t->signal = sqlite3_column_int(s, 31);
	sql_col_copy(s, 32, t->error, sizeof t->error);
	t->peak_gpu_mib = sql_col_opt(s, 33);
	t->peak_rss_kib = sql_col_opt(s, 34);
	sql_col_copy(s, 35, t->wait_reason, sizeof t->wait_reason);
	sql_col_copy(s, 36, t->gpus_used, sizeof t->gpus_used);
}

void queue_task_free(queue_task *t)
{
	if (t)
		queue_spec_free(&t->spec);
}

void queue_tasks_free(queue_task *t, int n)
{
	for (int i = 0; i < n; i++)
		queue_task_free(&t[i]);
	free(t);
}

int queue_db_get(queue_db *st, int64_t id, queue_task *out)
{
	sqlite3_stmt *s = queue_db_prep(st, "SELECT " TASK_COLS " FROM tasks WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		read_task(s, out);
	queue_db_done(st, s);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

int queue_db_list(queue_db *st, int state, queue_task **out, int *n)
{
	sqlite3_stmt *s = queue_db_prep(
	    st, state >= 0 ? "SELECT " TASK_COLS " FROM tasks WHERE state = ? ORDER BY id"
	                   : "SELECT " TASK_COLS " FROM tasks ORDER BY id");
	if (!s)
		return -1;
	if (state >= 0)
		sql_bind_text(s, 1, queue_state_name((queue_state)state));
	int cap = 64, cnt = 0, rc;
	queue_task *v = malloc((size_t)cap * sizeof *v);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		read_task(s, &v[cnt++]);
	}
	queue_db_done(st, s);
	if (rc != SQLITE_DONE) {
		queue_tasks_free(v, cnt);
		return queue_db_fail(st, "list"), -1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int queue_db_task_state(queue_db *st, int64_t id)
{
	sqlite3_stmt *s = queue_db_prep(st, "SELECT state FROM tasks WHERE id = ?");
	if (!s)
		return -2;
	sqlite3_bind_int64(s, 1, id);
	int state = -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		state = queue_state_parse((const char *)sqlite3_column_text(s, 0));
	queue_db_done(st, s);
	return state;
}

int queue_db_state_of(queue_db *st, int64_t id)
{
	int s = queue_db_task_state(st, id);
	return s < -1 ? -1 : s;
}

int queue_db_cancel(queue_db *st, int64_t id, int *result, queue_attempt *active)
{
	memset(active, 0, sizeof *active);
	if (queue_db_begin(st))
		return -1;
	int state = queue_db_task_state(st, id);
	if (state < 0) {
		queue_db_rollback(st);
		return state == -1 ? 1 : -1;
	}
	int to = queue_transition((queue_state)state, QE_CANCEL);
	sqlite3_stmt *s;
	if (to == QS_CANCELLED) {
		s = queue_db_prep(
		    st, "UPDATE tasks SET state = 'cancelled', ended = ?, wait_reason = NULL,"
		        " error = 'cancelled while queued' WHERE id = ?");
		if (!s) {
			queue_db_rollback(st);
			return -1;
		}
		sqlite3_bind_double(s, 1, gw_wall_s());
		sqlite3_bind_int64(s, 2, id);
		*result = 0;
	} else if (to >= 0) {
		s = queue_db_prep(st, "UPDATE tasks SET cancel_requested = 1 WHERE id = ?");
		if (!s) {
			queue_db_rollback(st);
			return -1;
		}
		sqlite3_bind_int64(s, 1, id);
		*result = 1;
	} else {
		*result = 2;
		queue_db_rollback(st);
		return 0;
	}
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	if (*result == 1) {
		sqlite3_stmt *q =
		    queue_db_prep(st, "SELECT " ATT_COLS " FROM attempts WHERE task_id = ?"
		                      " AND astate != 'ended' ORDER BY n DESC LIMIT 1");
		if (q) {
			sqlite3_bind_int64(q, 1, id);
			if (sqlite3_step(q) == SQLITE_ROW)
				queue_db_read_attempt(q, active);
			queue_db_done(st, q);
		}
	}
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_retry(queue_db *st, int64_t id, int *result)
{
	if (queue_db_begin(st))
		return -1;
	int state = queue_db_task_state(st, id);
	if (state < 0) {
		queue_db_rollback(st);
		return state == -1 ? 1 : -1;
	}
	if (queue_transition((queue_state)state, QE_RETRY) != QS_QUEUED) {
		*result = 1;
		queue_db_rollback(st);
		return 0;
	}
	sqlite3_stmt *s =
	    queue_db_prep(st, "UPDATE tasks SET state = 'queued', budget_from = attempts,"
	                      " not_before = 0, cancel_requested = 0, ended = NULL,"
	                      " error = NULL, wait_reason = NULL WHERE id = ?");
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	sqlite3_bind_int64(s, 1, id);
	if (queue_db_step_done(st, s)) {
		queue_db_rollback(st);
		return -1;
	}
	*result = 0;
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_candidates(queue_db *st, queue_backend b, int64_t after_id, queue_candidate *out,
                        int max)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT id, gpus, mem_mib, mem_hint_mib, per_gpu, per_gpu_hint,"
	                      " allow_foreign, after_id, not_before FROM tasks"
	                      " WHERE state = 'queued' AND id > ? AND backend = ? ORDER BY id"
	                      " LIMIT ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, after_id);
	sql_bind_text(s, 2, queue_backend_name(b));
	sqlite3_bind_int(s, 3, max);
	int n = 0;
	while (n < max && sqlite3_step(s) == SQLITE_ROW) {
		queue_candidate *c = &out[n++];
		c->id = sqlite3_column_int64(s, 0);
		c->gpus = sqlite3_column_int(s, 1);
		int64_t mem = sql_col_opt(s, 2), hint = sql_col_opt(s, 3);
		c->mem_mib = hint > mem ? hint : mem;
		c->per_gpu = sqlite3_column_int(s, 4);
		c->per_gpu_hint = sqlite3_column_int(s, 5);
		c->allow_foreign = sqlite3_column_int(s, 6) != 0;
		c->after_id = sql_col_opt(s, 7) > 0 ? sql_col_opt(s, 7) : 0;
		c->not_before = sqlite3_column_double(s, 8);
		c->backend = b;
	}
	queue_db_done(st, s);
	return n;
}

static int fail_queued(queue_db *st, int64_t id, const char *error)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "UPDATE tasks SET state = 'failed', error = ?, ended = ?,"
	                      " wait_reason = NULL WHERE id = ? AND state = 'queued'");
	if (!s)
		return -1;
	sql_bind_text(s, 1, error);
	sqlite3_bind_double(s, 2, gw_wall_s());
	sqlite3_bind_int64(s, 3, id);
	return queue_db_step_done(st, s);
}

int queue_db_fail_now(queue_db *st, int64_t id, const char *error)
{
	return fail_queued(st, id, error);
}

int queue_db_dep_failed(queue_db *st, int64_t id, int64_t dep, queue_state dep_state)
{
	char msg[160];
	if ((int)dep_state < 0)
		snprintf(msg, sizeof msg, "waits for task %lld, which does not exist",
		         (long long)dep);
	else
		snprintf(msg, sizeof msg, "task %lld, which it waits for, ended %s", (long long)dep,
		         queue_state_name(dep_state));
	return fail_queued(st, id, msg);
}

int queue_db_wait_reason(queue_db *st, int64_t id, const char *reason)
{
	sqlite3_stmt *s = queue_db_prep(st, "UPDATE tasks SET wait_reason = ? WHERE id = ?"
	                                    " AND state = 'queued'");
	if (!s)
		return -1;
	sql_bind_text(s, 1, reason && *reason ? reason : NULL);
	sqlite3_bind_int64(s, 2, id);
	return queue_db_step_done(st, s);
}

int queue_db_wait_reasons(queue_db *st, const int64_t *id, const char *const *reason, int n)
{
	if (queue_db_begin(st))
		return -1;
	for (int i = 0; i < n; i++)
		if (queue_db_wait_reason(st, id[i], reason[i]) != 0) {
			queue_db_rollback(st);
			return -1;
		}
	return queue_db_commit(st) ? (queue_db_rollback(st), -1) : 0;
}

int queue_db_cancel_requested(queue_db *st, int64_t id)
{
	sqlite3_stmt *s = queue_db_prep(st, "SELECT cancel_requested FROM tasks WHERE id = ?");
	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, id);
	int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	queue_db_done(st, s);
	return v;
}

int queue_db_count_state(queue_db *st, int state)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, state >= 0 ? "SELECT COUNT(*) FROM tasks WHERE state = ?"
	                                 : "SELECT COUNT(*) FROM tasks");
	if (!s)
		return -1;
	if (state >= 0)
		sql_bind_text(s, 1, queue_state_name((queue_state)state));
	int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	queue_db_done(st, s);
	return v;
}

int queue_db_cancel_list(queue_db *st, int64_t *out, int max)
{
	sqlite3_stmt *s =
	    queue_db_prep(st, "SELECT id FROM tasks WHERE cancel_requested = 1"
	                      " AND state IN ('running', 'submitted') ORDER BY id LIMIT ?");
	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, max);
	int n = 0;
	while (n < max && sqlite3_step(s) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(s, 0);
	queue_db_done(st, s);
	return n;
}

int queue_db_clean(queue_db *st, bool all, int64_t **ids, int *n)
{
	*ids = NULL;
	*n = 0;
	if (queue_db_begin(st))
		return -1;
	/* A task others still wait for (--after) stays: they need its outcome. */
	const char *where =
	    all ? "state IN ('done', 'failed', 'timeout', 'cancelled', 'lost') AND id NOT IN"
	          " (SELECT after_id FROM tasks WHERE after_id IS NOT NULL AND state IN"
	          " ('queued', 'submitted', 'running'))"
	        : "state = 'done' AND id NOT IN (SELECT after_id FROM tasks WHERE after_id IS"
	          " NOT NULL AND state IN ('queued', 'submitted', 'running'))";
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT id FROM tasks WHERE %s ORDER BY id", where);
	sqlite3_stmt *s = queue_db_prep(st, sql);
	if (!s) {
		queue_db_rollback(st);
		return -1;
	}
	int cap = 64, cnt = 0;
	int64_t *v = malloc((size_t)cap * sizeof *v);
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (cnt == cap) {
			cap *= 2;
			v = gw_xrealloc(v, (size_t)cap * sizeof *v);
		}
		v[cnt++] = sqlite3_column_int64(s, 0);
	}
	queue_db_done(st, s);
	snprintf(sql, sizeof sql,
	         "DELETE FROM attempts WHERE task_id IN (SELECT id FROM tasks WHERE %s)", where);
	int rc = queue_db_exec(st, sql);
	snprintf(sql, sizeof sql, "DELETE FROM tasks WHERE %s", where);
	if (!rc)
		rc = queue_db_exec(st, sql);
	if (rc || queue_db_commit(st)) {
		queue_db_rollback(st);
		free(v);
		return -1;
	}
	*ids = v;
	*n = cnt;
	return 0;
}
