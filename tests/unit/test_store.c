/* Recordings: what is written comes back, absent stays absent, bad files are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/store_int.h"
#include "test_tmpdir.h"
#include "util/err.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_make(dir, sizeof dir, "test-store");
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(dir);
}

static void fill(snapshot *s, double t, double util)
{
	snapshot_clear(s);
	s->t_wall = t;
	memset(&s->gpu[0], 0, sizeof s->gpu[0]);
	s->gpu[0].v[GM_UTIL_GPU] = util;
	s->gpu[0].ok[GM_UTIL_GPU] = 1;
	s->gpu[0].v[GM_MEM_USED] = 1234;
	s->gpu[0].ok[GM_MEM_USED] = 1;
	/* GPM absent: must come back as NAN */
	memset(&s->gpu[1], 0, sizeof s->gpu[1]);
	s->gpu[1].lost = true;
	s->h[HM_CPU_BUSY_MAX] = 99.5;
	snapshot_set_ncpu(s, 2);
	s->cpu_busy[0] = 10;
	s->cpu_busy[1] = 100;
	s->cpu_iowait[0] = 1;
	tl_proc *p = snapshot_add_proc(s);
	p->pid = 4242;
	p->gpu = 0;
	p->in_tree = true;
	p->alive = true;
	p->gpu_mem_mib = 512;
	strcpy(p->cmd, "python train.py");
	strcpy(p->user, "alice");
}

static void test_round_trip(void **state)
{
	(void)state;
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/a.gpuwhy", dir);
	store *st;
	int crc = store_create(path, &st, &err);
	if (crc)
		print_message("store_create: %s\n", err.why);
	assert_int_equal(crc, 0);
	store_set_meta(st, "command", "python train.py");
	store_set_meta(st, "start", "1000.0");
	store_set_meta(st, "exit_status", "3");
	gpu_static g0 = {
	    .index = 0, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-aaa", .vendor = "nvidia"};
	gpu_static g1 = {.index = 2, .name = "AMD Instinct MI300X", .vendor = "amd"};
	store_add_gpu(st, &g0);
	store_add_gpu(st, &g1);
	store_add_link(st, 0, 2, &(store_link){.nvlinks = 18, .topo = 10, .xgmi = -1});
	store_add_link(st, 2, 0, &(store_link){.nvlinks = -1, .topo = -1, .xgmi = 1});
	snapshot s;
	snapshot_init(&s, 2);
	int idx[2] = {0, 2};
	fill(&s, 1000.0, 0);
	assert_int_equal(store_write_snapshot(st, &s, idx), 0);
	fill(&s, 1001.0, 100);
	s.interval_s = 1.0;
	snapshot_add_event(&s, TL_EV_OOM, 0, 0, "CUDA out of memory");
	assert_int_equal(store_write_snapshot(st, &s, idx), 0);
	store_write_step(st, 1000.5, 1, "step 1");
	store_write_step(st, 1001.5, 2, "step 2");
	assert_int_equal(store_close(st), 0);
	snapshot_free(&s);

	timeline *tl;
	assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
	assert_int_equal(tl->n, 2);
	assert_int_equal(tl->ngpu, 2);
	assert_int_equal(tl->gpu[1].index, 2);
	assert_string_equal(tl->gpu[0].uuid, "GPU-aaa");
	/* each GPU's vendor, which the advice is worded by */
	assert_string_equal(tl->gpu[0].vendor, "nvidia");
	assert_string_equal(tl->gpu[1].vendor, "amd");
	assert_true(tl->t[0] == 0.0 && tl->t[1] == 1.0);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 1) == 100);
	assert_true(tl_gpu_at(tl, 0, GM_UTIL_GPU, 0) == 0);
	assert_true(isnan(tl_gpu_at(tl, 0, GM_GPM_SM_ACTIVE, 0)));
	assert_true(isnan(tl_gpu_at(tl, 1, GM_UTIL_GPU, 0)));
	assert_true(tl->gpu[1].lost_at_end);
	assert_true(tl_host_at(tl, HM_CPU_BUSY_MAX, 1) == 99.5);
	assert_true(isnan(tl_host_at(tl, HM_SWAP_IN, 1)));
	assert_int_equal(tl->ncpu, 2);
	assert_true(tl->cpu_busy[1][0] == 100);
	assert_true(isnan(tl->cpu_iowait[1][0]));
	assert_int_equal(tl->nprocs, 2);
	assert_int_equal(tl->procs[1].pid, 4242);
	assert_int_equal(tl->procs[1].s, 1);
	assert_string_equal(tl->procs[1].user, "alice");
	assert_true(tl->procs[1].gpu_mem_mib == 512);
	assert_int_equal(tl->nsteps, 2);
	assert_true(fabs(tl->steps[1].t - 1.5) < 1e-9);
	assert_int_equal(tl->nevents, 1);
	assert_string_equal(tl->events[0].kind, "oom");
	assert_int_equal(tl->nvlinks[0][1], 18);
	assert_int_equal(tl->topo[0][1], 10);
	assert_int_equal(tl->xgmi[0][1], -1);
	assert_int_equal(tl->xgmi[1][0], 1);
	assert_int_equal(tl->nvlinks[1][0], -1);
	assert_int_equal(tl->topo[1][0], -1);
	assert_int_equal(tl->exit_status, 3);
	assert_string_equal(tl->command, "python train.py");
	tl_free(tl);
}

/*
 * A recording made before a summary column existed (swap_total here), or the
 * gpus table's vendor column, reads
 * the same: host columns are found by name, not by position.
 */
static void test_reads_older_host_columns(void **state)
{
	(void)state;
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/old.gpuwhy", dir);
	store *st;
	assert_int_equal(store_create(path, &st, &err), 0);
	gpu_static g0 = {
	    .index = 0, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-aaa", .vendor = "nvidia"};
	gpu_static g1 = {
	    .index = 1, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-bbb", .vendor = "nvidia"};
	store_add_gpu(st, &g0);
	store_add_gpu(st, &g1);
	snapshot s;
	snapshot_init(&s, 2);
	int idx[2] = {0, 1};
	fill(&s, 1000.0, 50);
	s.h[HM_MEM_USED] = 2048;
	s.h[HM_TREE_READ] = 7e6;
	s.h[HM_SWAP_TOTAL] = 512;
	assert_int_equal(store_write_snapshot(st, &s, idx), 0);
	assert_int_equal(store_close(st), 0);
	snapshot_free(&s);

	/* As a gpuwhy before application ids and digests wrote it. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
	                              "PRAGMA application_id = 0; PRAGMA user_version = 0;"
	                              "DELETE FROM meta WHERE key LIKE 'digest.%';"
	                              "ALTER TABLE host_samples DROP COLUMN swap_total;"
	                              "ALTER TABLE gpus DROP COLUMN vendor",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	sqlite3_close(db);

	timeline *tl;
	assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
	assert_int_equal(tl->n, 1);
	assert_true(tl_host_at(tl, HM_CPU_BUSY_MAX, 0) == 99.5);
	assert_true(tl_host_at(tl, HM_MEM_USED, 0) == 2048);
	assert_true(tl_host_at(tl, HM_TREE_READ, 0) == 7e6);
	assert_true(isnan(tl_host_at(tl, HM_SWAP_TOTAL, 0)));
	/* no vendor column: unknown, not guessed */
	assert_string_equal(tl->gpu[0].name, "NVIDIA H100 80GB HBM3");
	assert_string_equal(tl->gpu[0].vendor, "");
	assert_int_equal(tl->ncpu, 2);
	assert_true(tl->cpu_busy[1][0] == 100);
	assert_true(tl->cpu_iowait[0][0] == 1);
	tl_free(tl);
}

static void test_refuses_foreign_files(void **state)
{
	(void)state;
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/notes.txt", dir);
	FILE *f = fopen(path, "w");
	fputs("precious notes\n", f);
	fclose(f);
	store *st;
	assert_int_equal(store_create(path, &st, &err), GW_EXIT_ENV);
	assert_non_null(strstr(err.why, "not a gpuwhy recording"));
	/* the file is untouched */
	f = fopen(path, "r");
	char buf[64] = {0};
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "precious notes\n");
	timeline *tl;
	gw_fail why;
	assert_int_equal(store_read_timeline(path, &tl, &why), 3);
	/* Why, as data for the face to print: the file, the reason, the fix. */
	assert_int_equal(why.code, 3);
	assert_string_equal(why.what, path);
	assert_string_equal(why.why, "not a gpuwhy recording");
	assert_string_equal(why.hint, "record one with gpuwhy record or gpuwhy run");
	snprintf(path, sizeof path, "%s/missing.gpuwhy", dir);
	assert_int_equal(store_read_timeline(path, &tl, NULL), 3);
	assert_int_equal(store_read_timeline(path, &tl, &why), 3);
	assert_string_equal(why.why, "cannot open recording");
	snprintf(path, sizeof path, "%s/no/such/dir/x.gpuwhy", dir);
	assert_int_equal(store_create(path, &st, &err), GW_EXIT_ENV);
}

/* A short recording at path, closed. */
static void small_recording(const char *path)
{
	gw_fail err = {0};
	store *st;
	assert_int_equal(store_create(path, &st, &err), 0);
	gpu_static g0 = {.index = 0, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-aaa"};
	store_add_gpu(st, &g0);
	snapshot s;
	snapshot_init(&s, 2); /* fill() writes two GPUs */
	int idx[2] = {0, 1};
	for (int i = 0; i < 3; i++) {
		fill(&s, 1000.0 + i, 10.0 * i);
		assert_int_equal(store_write_snapshot(st, &s, idx), 0);
	}
	store_write_step(st, 1000.5, 1, "step 1");
	assert_int_equal(store_close(st), 0);
	snapshot_free(&s);
}

static void exec_on(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* A value, a row or the schema changed behind the writer's back: the digests tell. */
static void test_refuses_changed_rows(void **state)
{
	(void)state;
	static const struct {
		const char *sql, *why;
	} changes[] = {
	    {"UPDATE gpu_samples SET utilization_gpu = 11 WHERE utilization_gpu = 10",
	     "truncated or corrupt: gpu_samples does not match its digest"},
	    {"DELETE FROM host_samples WHERE rowid = 2",
	     "truncated or corrupt: host_samples does not match its digest"},
	    {"UPDATE steps SET line = 'step one'",
	     "truncated or corrupt: steps does not match its digest"},
	    {"UPDATE meta SET value = 'elsewhere' WHERE key = 'tool_version'",
	     "truncated or corrupt: meta does not match its digest"},
	    {"DELETE FROM meta WHERE key = 'digest.events'",
	     "truncated or corrupt: events does not match its digest"},
	    {"CREATE TABLE notes(x)", "truncated or corrupt: schema does not match its digest"},
	};
	char path[300];
	for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
		snprintf(path, sizeof path, "%s/changed%zu.gpuwhy", dir, i);
		small_recording(path);
		timeline *tl;
		assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
		tl_free(tl);
		exec_on(path, changes[i].sql);
		gw_fail why;
		assert_int_equal(store_read_timeline(path, &tl, &why), 3);
		assert_string_equal(why.why, changes[i].why);
		assert_string_equal(why.what, path);
	}
}

/* Cut short: said so, not blamed on a -wal that never existed. */
static void test_truncated(void **state)
{
	(void)state;
	char path[300];
	snprintf(path, sizeof path, "%s/cut.gpuwhy", dir);
	small_recording(path);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	/* Shorter each time (truncate would lengthen it with zeros). */
	const off_t at[] = {sb.st_size - 1, sb.st_size - 4096, sb.st_size / 2, 4096, 99, 10};
	for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
		assert_int_equal(truncate(path, at[i]), 0);
		timeline *tl;
		gw_fail why;
		assert_int_equal(store_read_timeline(path, &tl, &why), 3);
		assert_string_equal(why.why, "truncated or corrupt");
		store_meta *m;
		assert_int_equal(store_read_meta(path, &m, &why), 3);
		assert_string_equal(why.why, "truncated or corrupt");
	}
}

/* Another database is neither replaced nor read as a recording; an older recording is both. */
static void test_identity(void **state)
{
	(void)state;
	char path[300];
	gw_fail err = {0};
	snprintf(path, sizeof path, "%s/app.db", dir);
	exec_on(path, "CREATE TABLE users(id, name); INSERT INTO users VALUES(1, 'ada')");
	store *st;
	assert_int_equal(store_create(path, &st, &err), GW_EXIT_ENV);
	assert_string_equal(err.why,
	                    "exists and is not a gpuwhy recording (refusing to overwrite)");
	assert_string_equal(err.what, path);
	assert_string_equal(err.hint, "choose a writable path with -o");
	timeline *tl;
	gw_fail why;
	assert_int_equal(store_read_timeline(path, &tl, &why), 3);
	assert_string_equal(why.why, "not a gpuwhy recording");
	/* the queue's id */
	exec_on(path, "PRAGMA application_id = 1196447057");
	assert_int_equal(store_create(path, &st, &err), GW_EXIT_ENV);
	assert_string_equal(err.why,
	                    "is a gpuwhy queue database, not a recording (refusing to overwrite)");
	assert_int_equal(store_read_timeline(path, &tl, &why), 3);
	assert_string_equal(why.why, "not a gpuwhy recording (a gpuwhy queue database)");
	/* a recording from before the id: read, then replaced */
	snprintf(path, sizeof path, "%s/older.gpuwhy", dir);
	small_recording(path);
	exec_on(path, "PRAGMA application_id = 0; PRAGMA user_version = 0;"
	              "DELETE FROM meta WHERE key LIKE 'digest.%'");
	assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
	assert_int_equal(tl->n, 3);
	tl_free(tl);
	assert_int_equal(store_create(path, &st, &err), 0);
	assert_int_equal(store_close(st), 0);
	assert_int_equal(store_read_timeline(path, &tl, NULL), 0);
	assert_int_equal(tl->n, 0);
	tl_free(tl);
}

/* A recording being written is not replaced: -2 and the holder, then the hint to wait. */
static void test_locked(void **state)
{
	(void)state;
	char path[300], pid[64];
	snprintf(path, sizeof path, "%s/busy.gpuwhy", dir);
	snprintf(pid, sizeof pid, "another gpuwhy is recording to it (PID %ld)", (long)getpid());
	gw_fail err = {0};
	store *st, *other;
	assert_int_equal(store_create(path, &st, &err), 0);
	store_target t;
	assert_int_equal(store_target_open(path, &t, &err), -2);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, pid);
	assert_string_equal(err.why_text, pid);
	assert_string_equal(err.hint, "");
	err = (gw_fail){0};
	assert_int_equal(store_create(path, &other, &err), GW_EXIT_ENV);
	assert_string_equal(err.what, path);
	assert_string_equal(err.why, pid);
	assert_string_equal(err.hint, "wait for it to finish, or record to another file with -o");
	assert_int_equal(store_close(st), 0);
	/* Any other refusal is -1: a symbolic link at the name. */
	char link[300];
	snprintf(link, sizeof link, "%s/link.gpuwhy", dir);
	assert_int_equal(symlink(path, link), 0);
	err = (gw_fail){0};
	assert_int_equal(store_target_open(link, &t, &err), -1);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.what, link);
	assert_string_equal(err.why, "is a symbolic link");
	assert_string_equal(err.why_text, "is a symbolic link");
	/* A file that appears at a new name before the rename: 1, open again, err untouched. */
	snprintf(path, sizeof path, "%s/raced.gpuwhy", dir);
	assert_int_equal(store_target_open(path, &t, &err), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	err = (gw_fail){0};
	assert_int_equal(store_target_commit(&t, &err), 1);
	assert_int_equal(err.code, 0);
	store_target_abort(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_reads_older_host_columns),
	    cmocka_unit_test(test_refuses_foreign_files),
	    cmocka_unit_test(test_refuses_changed_rows),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_identity),
	    cmocka_unit_test(test_locked),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
