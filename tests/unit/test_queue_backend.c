/* The worker's pieces: GPU list matching, the local back end's view of a GPU sample
 * through the back-end table, /proc/PID/stat as the queue reads it, the SQL helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/backend.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/procscan.h"
#include "store/sql.h"
#include "util/err.h"

static char dir[256];
static queue_db *st;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/gw-backend-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return queue_db_open(dir, &st, NULL);
}

static int teardown(void **state)
{
	(void)state;
	queue_db_close(st);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void gpu(queue_gpus *s, int i, int index, const char *uuid, int64_t total, int64_t free)
{
	queue_gpu_seen *g = &s->g[i];
	memset(g, 0, sizeof *g);
	g->index = index;
	snprintf(g->uuid, sizeof g->uuid, "%s", uuid);
	snprintf(g->name, sizeof g->name, "Sim GPU");
	g->total_ok = total >= 0;
	g->total_mib = total;
	g->free_ok = free >= 0;
	g->free_mib = free;
}

static void test_gpu_matches(void **state)
{
	(void)state;
	queue_gpus s = {0};
	gpu(&s, 0, 3, "GPU-8f2a11aa-0000", 81920, 80000);
	const queue_gpu_seen *g = &s.g[0];
	assert_true(queue_gpu_matches(g, "3"));
	assert_false(queue_gpu_matches(g, "30"));
	assert_true(queue_gpu_matches(g, "GPU-8f2a"));
	assert_true(queue_gpu_matches(g, "8F2A")); /* UUID prefixes ignore case */
	assert_false(queue_gpu_matches(g, "8f2b"));
	assert_false(queue_gpu_matches(g, ""));
	assert_true(queue_gpu_in_list(g, "1,8f2a"));
	assert_false(queue_gpu_in_list(g, "1,2"));
}

static void test_largest(void **state)
{
	(void)state;
	queue_gpus s = {0};
	assert_int_equal(queue_gpus_largest(&s), -1);
	s.n = 2;
	gpu(&s, 0, 0, "GPU-a", -1, -1);
	assert_int_equal(queue_gpus_largest(&s), -1); /* unknown is not 0 */
	gpu(&s, 1, 1, "GPU-b", 40960, 1000);
	assert_int_equal(queue_gpus_largest(&s), 40960);
	assert_true(queue_gpus_size(&s) < sizeof s);
}

/* A sample through the local back end's table: the view `queue gpus` shows, with a
 * process that is not a task's counted foreign and a GPU outside the subset excluded. */
static void test_local_view(void **state)
{
	(void)state;
	queue_gpus *s = calloc(1, sizeof *s);
	s->seq = 1;
	s->ok = true;
	s->n = 2;
	gpu(s, 0, 0, "GPU-aaaa", 81920, 60000);
	gpu(s, 1, 1, "GPU-bbbb", 81920, -1);
	s->g[0].nproc = 1;
	s->g[0].proc[0] =
	    (queue_gpu_proc){.pid = (unsigned)getpid(), .mem_ok = true, .mem_mib = 20000};
	queue_wconfig cfg = {.per_gpu_default = 1, .cpu_slots = 1};
	snprintf(cfg.order, sizeof cfg.order, "0");
	queue_backend_env env = {.st = st, .dir = dir, .boot_id = "", .cfg = &cfg, .gpus = s};
	const queue_backend_ops *ops = &queue_backend_local;
	assert_int_equal(ops->kind, QB_LOCAL);
	void *be = ops->open(&env);
	assert_non_null(be);
	ops->recover(be);
	ops->observe(be);
	assert_int_equal(ops->active(be), 0);
	queue_gpu_row *rows;
	int n;
	double t;
	assert_int_equal(queue_db_gpu_view_get(st, &rows, &n, &t), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].index, 0);
	assert_string_equal(rows[0].state, "ok");
	assert_int_equal(rows[0].foreign, 1);
	assert_int_equal(rows[0].free_mib, 60000);
	assert_int_equal(rows[0].avail_mib, 60000);
	assert_int_equal(rows[1].index, 1);
	assert_string_equal(rows[1].state, "excluded");
	assert_int_equal(rows[1].free_mib, -1); /* unknown stays unknown */
	free(rows);
	ops->close(be);
	free(s);
}

static void test_slurm_table(void **state)
{
	(void)state;
	const queue_backend_ops *ops = &queue_backend_slurm;
	assert_int_equal(ops->kind, QB_SLURM);
	queue_gpus s = {0};
	queue_wconfig cfg = {.slurm_poll_ns = 2000000000LL};
	queue_backend_env env = {.st = st, .dir = dir, .boot_id = "", .cfg = &cfg, .gpus = &s};
	void *be = ops->open(&env);
	ops->recover(be);
	struct pollfd fds[4];
	assert_int_equal(ops->fds(be, fds, 4), 0);
	assert_int_equal(ops->active(be), 0);
	assert_int_equal(ops->wait_ms(be, 0), -1); /* nothing followed: no deadline */
	ops->close(be);
}

static void test_proc_read(void **state)
{
	(void)state;
	queue_proc_stat ps;
	assert_true(queue_proc_read(getpid(), &ps));
	assert_int_equal(ps.pid, getpid());
	assert_int_equal(ps.ppid, getppid());
	assert_int_equal(ps.pgrp, getpgrp());
	assert_int_equal(ps.session, getsid(0));
	assert_true(ps.starttime > 0);
	assert_true(ps.rss_kib > 0);
	assert_true(queue_proc_alive(getpid(), ps.starttime));
	assert_false(queue_proc_alive(getpid(), ps.starttime + 1)); /* a reused PID */
	assert_false(queue_proc_read(0, &ps));
}

static void test_sql_helpers(void **state)
{
	(void)state;
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/t.db", dir);
	sqlite3 *db;
	assert_int_equal(
	    sql_open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000, &db, &err), SQLITE_OK);
	assert_int_equal(sql_wal(db, 0, &err), SQLITE_OK);
	assert_int_equal(sql_exec(db, "CREATE TABLE t(a INTEGER, b TEXT)", &err), SQLITE_OK);
	assert_int_equal(err.code, 0);
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?, ?)", -1, &s, NULL),
	                 SQLITE_OK);
	sql_bind_opt(s, 1, -1);
	sql_bind_nonempty(s, 2, "");
	assert_int_equal(sql_step_done(s), SQLITE_OK);
	sql_bind_opt(s, 1, 7);
	sql_bind_text(s, 2, "x");
	assert_int_equal(sql_step_done(s), SQLITE_OK);
	sqlite3_finalize(s);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM t WHERE a IS NULL AND b IS NULL", -1),
	                 1);
	assert_int_equal(sql_int(db, "SELECT a FROM t WHERE a IS NULL", -5), -5);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT a, b FROM t ORDER BY rowid", -1, &s, NULL),
	                 SQLITE_OK);
	char b[8];
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sql_col_opt(s, 0), -1);
	assert_null(sql_col_dup(s, 1));
	sql_col_copy(s, 1, b, sizeof b);
	assert_string_equal(b, "");
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_int_equal(sql_col_opt(s, 0), 7);
	char *d = sql_col_dup(s, 1);
	assert_string_equal(d, "x");
	free(d);
	sqlite3_finalize(s);
	/* SQLite's words as why, the database's file as what; the first error is the one kept. */
	assert_int_not_equal(sql_exec(db, "NOT SQL", &err), SQLITE_OK);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.why, "near \"NOT\": syntax error");
	assert_string_equal(err.why_text, err.why);
	assert_non_null(strstr(err.what, "/t.db"));
	assert_string_equal(err.hint, "");
	assert_int_not_equal(sql_exec(db, "SELECT * FROM nowhere", &err), SQLITE_OK);
	assert_string_equal(err.why, "near \"NOT\": syntax error");
	/* NULL: the caller wants the code alone. */
	assert_int_not_equal(sql_exec(db, "SELECT * FROM nowhere", NULL), SQLITE_OK);
	err = (gw_fail){0};
	assert_int_not_equal(sql_exec(db, "SELECT * FROM nowhere", &err), SQLITE_OK);
	assert_string_equal(err.why, "no such table: nowhere");
	sqlite3_close(db);
	/* An open that fails says why (whatever came before) and leaves no handle. */
	snprintf(path, sizeof path, "%s/no/such/dir/t.db", dir);
	assert_int_not_equal(sql_open(path, SQLITE_OPEN_READWRITE, 0, &db, &err), SQLITE_OK);
	assert_null(db);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, "unable to open database file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpu_matches),
	    cmocka_unit_test(test_largest),
	    cmocka_unit_test_setup_teardown(test_local_view, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slurm_table, setup, teardown),
	    cmocka_unit_test(test_proc_read),
	    cmocka_unit_test_setup_teardown(test_sql_helpers, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
