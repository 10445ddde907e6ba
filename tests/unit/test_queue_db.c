/* The SQLite state: task life cycles through the store, user actions, concurrent adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "queue/state.h"
#include "queue/oom.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/err.h"
#include "util/timeutil.h"

static char dir[256];
static queue_db *st;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/gw-store-XXXXXX");
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

static int64_t add(const char *word, int retries)
{
	queue_spec s;
	queue_spec_init(&s);
	char *argv[] = {"echo", (char *)word};
	queue_spec_set_argv(&s, argv, 2);
	s.cwd = strdup("/");
	s.retries = retries;
	s.retry_delay_ms = 5000;
	s.mem_mib = 4096;
	int64_t id = 0;
	assert_int_equal(queue_db_add(st, &s, 1, &id), 0);
	queue_spec_free(&s);
	return id;
}

static queue_state state_of(int64_t id)
{
	queue_task t;
	assert_int_equal(queue_db_get(st, id, &t), 0);
	queue_state s = t.state;
	queue_task_free(&t);
	return s;
}

/* Start an attempt the way the worker does. */
static queue_attempt start(int64_t id)
{
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = id;
	a.backend = QB_LOCAL;
	snprintf(a.token, sizeof a.token, "tok%lld", (long long)id);
	snprintf(a.gpu_idx, sizeof a.gpu_idx, "1");
	a.reserved_mib = 4096;
	a.per_gpu = 2;
	a.started = gw_wall_s();
	assert_int_equal(queue_db_begin_attempt(st, &a, QS_RUNNING), 0);
	a.shim_pid = 4242;
	a.shim_start = 99;
	bool cancel = true;
	assert_int_equal(queue_db_attempt_running(st, &a, &cancel), 0);
	assert_false(cancel);
	a.astate = QA_RUNNING;
	return a;
}

static void end(queue_attempt *a, queue_outcome o, int exit_code)
{
	a->outcome = o;
	a->exit_ok = true;
	a->exit_code = exit_code;
	a->ended = gw_wall_s();
	a->peak_gpu_mib = 1000 * a->n;
	a->peak_rss_kib = 2048;
	assert_true(queue_attempt_conclude(st, a, 81920) >= 0);
}

static void test_life_cycle_with_retries(void **state)
{
	(void)state;
	int64_t id = add("x", 2);
	assert_int_equal(state_of(id), QS_QUEUED);
	queue_candidate c[4];
	assert_int_equal(queue_db_candidates(st, QB_LOCAL, 0, c, 4), 1);
	assert_int_equal(c[0].mem_mib, 4096);
	assert_int_equal(queue_db_candidates(st, QB_SLURM, 0, c, 4), 0);

	queue_attempt a = start(id);
	assert_int_equal(a.n, 1);
	assert_int_equal(state_of(id), QS_RUNNING);
	/* A second start of the same task is refused: it is no longer queued. */
	queue_attempt b = a;
	assert_int_equal(queue_db_begin_attempt(st, &b, QS_RUNNING), 1);
	queue_attempt *act;
	int n;
	assert_int_equal(queue_db_active(st, QB_LOCAL, &act, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(act[0].shim_pid, 4242);
	assert_int_equal((int)act[0].shim_start, 99);
	char tok[40];
	snprintf(tok, sizeof tok, "tok%lld", (long long)id);
	assert_string_equal(act[0].token, tok);
	free(act);

	/* Fails: queued again with the cooldown. */
	double before = gw_wall_s();
	end(&a, QO_FAILED, 1);
	queue_task t;
	assert_int_equal(queue_db_get(st, id, &t), 0);
	assert_int_equal(t.state, QS_QUEUED);
	assert_true(t.not_before >= before + 4.9);
	assert_int_equal(t.attempts, 1);
	assert_non_null(strstr(t.error, "retry 1 of 2"));
	queue_task_free(&t);

	/* Second attempt, OOM in its log: more memory reserved next time. */
	char logp[512];
	queue_log_path(dir, id, logp, sizeof logp);
	FILE *f = fopen(logp, "a");
	fprintf(f, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
	fclose(f);
	queue_attempt a2 = start(id);
	assert_int_equal(a2.n, 2);
	end(&a2, QO_FAILED, 1);
	assert_int_equal(queue_db_get(st, id, &t), 0);
	assert_int_equal(t.state, QS_QUEUED);
	/* Planned, not yet run: no retry counted. */
	assert_int_equal(t.oom_count, 0);
	assert_int_equal(t.mem_hint_mib, 6144);
	assert_int_equal(t.per_gpu_hint, 1);
	queue_task_free(&t);
	assert_int_equal(queue_db_candidates(st, QB_LOCAL, 0, c, 4), 1);
	assert_int_equal(c[0].mem_mib, 6144);
	assert_int_equal(c[0].per_gpu_hint, 1);

	/* The third attempt succeeds: done after 3 attempts, peaks are the maximum. */
	queue_attempt a3 = start(id);
	assert_int_equal(queue_db_get(st, id, &t), 0);
	assert_int_equal(t.oom_count, 1); /* the out-of-memory retry now runs */
	queue_task_free(&t);
	a3.log_offset = 1000000; /* past the OOM line: this attempt's log is clean */
	end(&a3, QO_DONE, 0);
	assert_int_equal(queue_db_get(st, id, &t), 0);
	assert_int_equal(t.state, QS_DONE);
	assert_int_equal(t.attempts, 3);
	assert_int_equal(t.peak_gpu_mib, 3000);
	assert_int_equal(t.peak_rss_kib, 2048);
	assert_true(t.exit_ok && t.exit_code == 0);
	assert_string_equal(t.error, "");
	assert_string_equal(t.gpus_used, "1");
	queue_task_free(&t);
	queue_attempt *all;
	assert_int_equal(queue_db_attempts(st, id, &all, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(all[0].outcome, QO_FAILED);
	assert_int_equal(all[1].oom, QOOM_GPU);
	assert_non_null(strstr(all[1].error, "CUDA out of memory"));
	assert_int_equal(all[2].outcome, QO_DONE);
	free(all);
}

static void test_not_started_does_not_count(void **state)
{
	(void)state;
	int64_t id = add("y", 0);
	queue_attempt a = start(id);
	a.outcome = QO_NOT_STARTED;
	a.ended = gw_wall_s();
	assert_int_equal(queue_attempt_conclude(st, &a, -1), QS_QUEUED);
	queue_task t;
	assert_int_equal(queue_db_get(st, id, &t), 0);
	assert_int_equal(t.attempts, 0);
	assert_true(t.not_before == 0);
	queue_task_free(&t);
	/* The next attempt gets the next number: the record keeps both rows. */
	queue_attempt b = start(id);
	assert_int_equal(b.n, 2);
}

static void test_cancel_and_retry(void **state)
{
	(void)state;
	int64_t q = add("q", 0), r = add("r", 3);
	int result;
	queue_attempt act;
	assert_int_equal(queue_db_cancel(st, q, &result, &act), 0);
	assert_int_equal(result, 0);
	assert_int_equal(state_of(q), QS_CANCELLED);
	assert_int_equal(queue_db_cancel(st, q, &result, &act), 0);
	assert_int_equal(result, 2);
	assert_int_equal(queue_db_cancel(st, 9999, &result, &act), 1);

	/* Running: the request is recorded, the state stays until the process is gone. */
	queue_attempt a = start(r);
	assert_int_equal(queue_db_cancel(st, r, &result, &act), 0);
	assert_int_equal(result, 1);
	assert_int_equal(act.shim_pid, 4242);
	assert_int_equal(state_of(r), QS_RUNNING);
	assert_int_equal(queue_db_cancel_requested(st, r), 1);
	int64_t ids[4];
	assert_int_equal(queue_db_cancel_list(st, ids, 4), 1);
	assert_int_equal(ids[0], r);
	/* It then fails on its own; with a cancel pending it is not retried. */
	end(&a, QO_FAILED, 1);
	assert_int_equal(state_of(r), QS_CANCELLED);
	assert_int_equal(queue_db_cancel_list(st, ids, 4), 0);

	/* retry: back in the queue with a fresh budget; an active task cannot be retried. */
	assert_int_equal(queue_db_retry(st, r, &result), 0);
	assert_int_equal(result, 0);
	queue_task t;
	assert_int_equal(queue_db_get(st, r, &t), 0);
	assert_int_equal(t.state, QS_QUEUED);
	assert_int_equal(t.budget_from, 1);
	assert_false(t.cancel_requested);
	queue_task_free(&t);
	assert_int_equal(queue_db_retry(st, r, &result), 0);
	assert_int_equal(result, 1);
	assert_int_equal(queue_db_retry(st, 9999, &result), 1);
}

static void test_dependencies_and_fail_now(void **state)
{
	(void)state;
	int64_t a = add("a", 0);
	queue_spec s;
	queue_spec_init(&s);
	char *argv[] = {"true"};
	queue_spec_set_argv(&s, argv, 1);
	s.cwd = strdup("/");
	s.after_id = a;
	int64_t b;
	assert_int_equal(queue_db_add(st, &s, 1, &b), 0);
	queue_spec_free(&s);
	queue_candidate c[4];
	assert_int_equal(queue_db_candidates(st, QB_LOCAL, 0, c, 4), 2);
	char reason[200];
	double due = 0;
	assert_int_equal(queue_candidate_gate(st, &c[1], gw_wall_s(), reason, sizeof reason, &due),
	                 0);
	assert_non_null(strstr(reason, "waiting for task"));
	int result;
	queue_attempt act;
	queue_db_cancel(st, a, &result, &act);
	assert_int_equal(queue_candidate_gate(st, &c[1], gw_wall_s(), reason, sizeof reason, &due),
	                 -1);
	queue_task t;
	assert_int_equal(queue_db_get(st, b, &t), 0);
	assert_int_equal(t.state, QS_FAILED);
	assert_non_null(strstr(t.error, "ended cancelled"));
	queue_task_free(&t);
	int64_t z = add("z", 0);
	assert_int_equal(queue_db_fail_now(st, z, "needs 1 GPU with 100000 MiB"), 0);
	assert_int_equal(state_of(z), QS_FAILED);
	/* Cooldown: not yet, and the worker learns when to look again. */
	queue_candidate cool = {.id = z, .not_before = gw_wall_s() + 60};
	due = 0;
	assert_int_equal(queue_candidate_gate(st, &cool, gw_wall_s(), reason, sizeof reason, &due),
	                 0);
	assert_true(due == cool.not_before);
	assert_non_null(strstr(reason, "cooldown"));
}

/* `after` must name a task that exists, or one added before it in the same batch. */
static void test_add_checks_after(void **state)
{
	(void)state;
	int64_t a = add("a", 0);
	queue_spec two[2];
	char *argv[] = {"true"};
	for (int i = 0; i < 2; i++) {
		queue_spec_init(&two[i]);
		queue_spec_set_argv(&two[i], argv, 1);
		two[i].cwd = strdup("/");
	}
	int64_t ids[2];
	two[0].after_id = a;
	two[1].after_id = a + 5;
	assert_int_equal(queue_db_add(st, two, 2, ids), GW_EXIT_USAGE);
	assert_int_equal(queue_db_state_of(st, a + 1), -1); /* nothing of the batch stayed */
	two[1].after_id = a + 1;                            /* the first of this batch */
	assert_int_equal(queue_db_add(st, two, 2, ids), 0);
	assert_int_equal(ids[1], a + 2);
	for (int i = 0; i < 2; i++)
		queue_spec_free(&two[i]);
}

static void test_config_and_view(void **state)
{
	(void)state;
	char v[64];
	queue_db_config_get(st, "per-gpu", v, sizeof v);
	assert_string_equal(v, "1");
	assert_int_equal(queue_db_config_set(st, "per-gpu", "4"), 0);
	assert_int_equal(queue_db_config_int(st, "per-gpu"), 4);
	assert_int_equal(queue_db_config_int(st, "kill-grace"), 10000000000LL);
	gw_fail e = {0};
	assert_false(queue_config_check("per-gpu", "0", &e));
	/* The key is what failed; why is English whatever the language. */
	assert_int_equal(e.code, GW_EXIT_USAGE);
	assert_string_equal(e.what, "per-gpu");
	assert_string_equal(e.why, "'0' is not an integer from 1 to 1024");
	assert_string_equal(e.why_text, "'0' is not an integer from 1 to 1024");
	assert_false(queue_config_check("visible", "serial", &e));
	assert_false(queue_config_check("gpus", "0;rm", &e));
	assert_true(queue_config_check("gpus", "2,GPU-8f2a,0", &e));
	assert_false(queue_config_check("sample-interval", "1ms", NULL));
	assert_false(queue_config_check("nonsense", "1", &e));
	assert_string_equal(e.what, "nonsense");
	assert_string_equal(e.why, "unknown key (gpuwhy queue config lists them)");
	queue_gpu_row rows[2] = {{.index = 0,
	                          .total_mib = 81920,
	                          .free_mib = 1000,
	                          .pending_mib = 2000,
	                          .avail_mib = -1000,
	                          .ntasks = 2,
	                          .cap = 4},
	                         {.index = 1,
	                          .total_mib = -1,
	                          .free_mib = -1,
	                          .pending_mib = -1,
	                          .avail_mib = INT64_MIN}};
	snprintf(rows[0].state, sizeof rows[0].state, "ok");
	snprintf(rows[1].state, sizeof rows[1].state, "excluded");
	assert_int_equal(queue_db_gpu_view_put(st, rows, 2, 123.5), 0);
	queue_gpu_row *back;
	int n;
	double t;
	assert_int_equal(queue_db_gpu_view_get(st, &back, &n, &t), 0);
	assert_int_equal(n, 2);
	assert_true(t == 123.5);
	assert_int_equal(back[0].avail_mib, -1000);
	assert_true(back[1].avail_mib == INT64_MIN);
	assert_int_equal(back[1].total_mib, -1);
	assert_string_equal(back[1].state, "excluded");
	free(back);
}

static void test_clean_keeps_what_others_wait_for(void **state)
{
	(void)state;
	int64_t a = add("a", 0), b = add("b", 0);
	queue_attempt x = start(a);
	end(&x, QO_DONE, 0);
	queue_attempt y = start(b);
	end(&y, QO_DONE, 0);
	queue_spec s;
	queue_spec_init(&s);
	char *argv[] = {"true"};
	queue_spec_set_argv(&s, argv, 1);
	s.cwd = strdup("/");
	s.after_id = b;
	int64_t c;
	assert_int_equal(queue_db_add(st, &s, 1, &c), 0);
	queue_spec_free(&s);
	int64_t *ids;
	int n;
	assert_int_equal(queue_db_clean(st, false, &ids, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ids[0], a);
	free(ids);
	queue_task t;
	assert_int_equal(queue_db_get(st, a, &t), 1);
	assert_int_equal(queue_db_get(st, b, &t), 0);
	queue_task_free(&t);
}

static void test_concurrent_adds(void **state)
{
	(void)state;
	/* Eight processes with their own connections add 25 tasks each at the same time. */
	enum { KIDS = 8, EACH = 25 };
	pid_t kids[KIDS];
	for (int k = 0; k < KIDS; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			queue_db *mine;
			if (queue_db_open(dir, &mine, NULL) != 0)
				_exit(1);
			for (int i = 0; i < EACH; i++) {
				queue_spec s;
				queue_spec_init(&s);
				char *argv[] = {"true"};
				queue_spec_set_argv(&s, argv, 1);
				s.cwd = strdup("/");
				int64_t id;
				if (queue_db_add(mine, &s, 1, &id) != 0)
					_exit(2);
				queue_spec_free(&s);
			}
			queue_db_close(mine);
			_exit(0);
		}
	}
	for (int k = 0; k < KIDS; k++) {
		int status;
		assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(queue_db_count_state(st, QS_QUEUED), KIDS * EACH);
	assert_int_equal(queue_db_count_state(st, -1), KIDS * EACH);
}

/* Failures are data: kept on the store and handed to the face's function, never printed
 * by the store itself. */
static int handed;
static gw_fail last_handed;

static void on_error(const gw_fail *e)
{
	handed++;
	last_handed = *e;
}

/* Run fn with stderr going to a file; returns how many bytes it printed there. */
static long stderr_bytes_during(void (*fn)(void))
{
	char path[] = "/tmp/gw-store-err-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	long n = lseek(fd, 0, SEEK_END);
	close(fd);
	unlink(path);
	return n;
}

static void add_missing_after(void)
{
	queue_spec s;
	queue_spec_init(&s);
	char *argv[] = {"true"};
	queue_spec_set_argv(&s, argv, 1);
	s.cwd = strdup("/");
	s.after_id = 999;
	int64_t id = 0;
	assert_int_equal(queue_db_add(st, &s, 1, &id), GW_EXIT_USAGE);
	queue_spec_free(&s);
}

static void test_errors_are_data(void **state)
{
	(void)state;
	assert_int_equal(queue_db_error(st)->code, 0);
	handed = 0;
	queue_db_on_error(st, on_error);
	assert_int_equal(stderr_bytes_during(add_missing_after), 0);
	const gw_fail *e = queue_db_error(st);
	assert_int_equal(e->code, GW_EXIT_USAGE);
	assert_string_equal(e->what, "after 999");
	assert_string_equal(e->why, "there is no task 999");
	assert_non_null(strstr(e->hint, "queue ls"));
	assert_int_equal(handed, 1);
	assert_string_equal(last_handed.why, e->why);
	queue_db_on_error(st, NULL);
}

static char unsafe[300];
static int unsafe_rc;
static gw_fail unsafe_err;

static void open_unsafe(void)
{
	queue_db *other = NULL;
	unsafe_rc = queue_db_open(unsafe, &other, &unsafe_err);
	assert_null(other);
}

static void test_open_failure_is_data(void **state)
{
	(void)state;
	snprintf(unsafe, sizeof unsafe, "%s/shared", dir);
	assert_int_equal(mkdir(unsafe, 0700), 0);
	assert_int_equal(chmod(unsafe, 0777), 0); /* others can write: refused */
	assert_int_equal(stderr_bytes_during(open_unsafe), 0);
	assert_int_equal(unsafe_rc, GW_EXIT_ENV);
	assert_int_equal(unsafe_err.code, GW_EXIT_ENV);
	assert_string_equal(unsafe_err.what, unsafe);
	assert_non_null(strstr(unsafe_err.why, "refusing an unsafe queue location"));
	assert_true(unsafe_err.hint[0] != '\0');
	char missing[320];
	snprintf(missing, sizeof missing, "%s/nothing/../x", dir);
	gw_fail e = {0};
	assert_int_equal(queue_dir_check(missing, &e), GW_EXIT_ENV);
	assert_non_null(strstr(e.why, "cannot read the queue directory"));
}

static int64_t count_tasks(void)
{
	queue_task *t = NULL;
	int n = 0;
	assert_int_equal(queue_db_list(st, -1, &t, &n), 0);
	queue_tasks_free(t, n);
	return n;
}

static void spec_of(queue_spec *s, const char *word)
{
	queue_spec_init(s);
	char *argv[] = {"echo", (char *)word};
	queue_spec_set_argv(s, argv, 2);
	s->cwd = strdup("/");
}

/* A submission stored under a token is added once, whoever tries second (the worker that
 * took it over the socket, or its client after no answer came) gets the same ids. */
static void test_token_adds_once(void **state)
{
	(void)state;
	queue_spec one;
	spec_of(&one, "one");
	int64_t a = 0, b = 0;
	assert_int_equal(queue_db_add_token(st, &one, 1, "tok-a", &a), 0);
	assert_int_equal(queue_db_add_token(st, &one, 1, "tok-a", &b), 0);
	assert_true(a > 0);
	assert_int_equal(a, b);
	assert_int_equal(count_tasks(), 1);
	assert_int_equal(queue_db_error(st)->code, 0);
	/* Another token, or none, is another task. */
	assert_int_equal(queue_db_add_token(st, &one, 1, "tok-b", &b), 0);
	assert_true(b > a);
	assert_int_equal(queue_db_add(st, &one, 1, &b), 0);
	assert_int_equal(count_tasks(), 3);
	/* A batch: all or nothing, the same ids in the same order. */
	queue_spec two[2];
	spec_of(&two[0], "x");
	spec_of(&two[1], "y");
	int64_t ids[2] = {0}, again[2] = {0};
	assert_int_equal(queue_db_add_token(st, two, 2, "tok-c", ids), 0);
	assert_int_equal(queue_db_add_token(st, two, 2, "tok-c", again), 0);
	assert_int_equal(ids[0], again[0]);
	assert_int_equal(ids[1], again[1]);
	assert_true(ids[1] > ids[0]);
	assert_int_equal(count_tasks(), 5);
	/* A token that is a prefix of another finds only its own tasks. */
	int64_t got[4];
	assert_int_equal(queue_db_token_ids(st, "tok-", 4, got), 0);
	assert_int_equal(queue_db_token_ids(st, "tok-c", 4, got), 2);
	assert_int_equal(got[0], ids[0]);
	queue_spec_free(&two[0]);
	queue_spec_free(&two[1]);
	queue_spec_free(&one);
}

/* A queue made by the version before tokens opens, keeps its tasks and takes new ones. */
static void test_schema_v1_upgrade(void **state)
{
	(void)state;
	char old[300], path[340], sqlf[512];
	snprintf(old, sizeof old, "%s/v1", dir);
	assert_int_equal(mkdir(old, 0700), 0);
	snprintf(path, sizeof path, "%s/queue.db", old);
	snprintf(sqlf, sizeof sqlf, "%s/queue/v1-schema.sql", FIXTURES_DIR);
	FILE *f = fopen(sqlf, "r");
	assert_non_null(f);
	static char sql[16384];
	size_t n = fread(sql, 1, sizeof sql - 1, f);
	fclose(f);
	sql[n] = '\0';
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	chmod(path, 0600);
	queue_db *o = NULL;
	assert_int_equal(queue_db_open(old, &o, NULL), 0);
	queue_task t;
	assert_int_equal(queue_db_get(o, 1, &t), 0);
	assert_string_equal(t.spec.name, "old");
	queue_task_free(&t);
	queue_spec one;
	spec_of(&one, "new");
	int64_t a = 0, b = 0;
	assert_int_equal(queue_db_add_token(o, &one, 1, "tok", &a), 0);
	assert_int_equal(queue_db_add_token(o, &one, 1, "tok", &b), 0);
	assert_int_equal(a, 2);
	assert_int_equal(b, 2);
	queue_spec_free(&one);
	queue_db_close(o);
	/* Opened again: already version 2, nothing to do. */
	assert_int_equal(queue_db_open(old, &o, NULL), 0);
	queue_db_close(o);
}

/* Verifying a worker fails as data: the queue directory and the reason, nothing printed. */
static void test_worker_verify_is_data(void **state)
{
	(void)state;
	gw_fail e = {0};
	const char *qdir = "/nonexistent/gpuwhy-queue";
	assert_int_equal(queue_worker_verify(qdir, (int)getpid(), NULL, &e), -1);
	assert_int_equal(e.code, GW_EXIT_ENV);
	assert_string_equal(e.what, qdir);
	assert_string_equal(e.why, "its worker.lock is gone");
	gw_fail s = {0};
	assert_int_equal(queue_worker_signal(qdir, (int)getpid(), 0, NULL, &s), -1);
	assert_string_equal(s.why, "its worker.lock is gone");
	assert_int_equal(queue_worker_verify(qdir, (int)getpid(), NULL, NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_life_cycle_with_retries, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_started_does_not_count, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_and_retry, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dependencies_and_fail_now, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_add_checks_after, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_config_and_view, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_clean_keeps_what_others_wait_for, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_concurrent_adds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors_are_data, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_failure_is_data, setup, teardown),
	    cmocka_unit_test(test_worker_verify_is_data),
	    cmocka_unit_test_setup_teardown(test_token_adds_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_schema_v1_upgrade, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
