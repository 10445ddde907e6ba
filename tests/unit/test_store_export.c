/* The export API: each table comes back in order, typed, absent as absent; bad input is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "test_tmpdir.h"
#include "store/store_export.h"
#include "util/err.h"

static char dir[256], path[300];

/* A recording with meta, two steps out of order, an event and two GPU rows. */
static int setup(void **state)
{
	(void)state;
	if (test_tmpdir_make(dir, sizeof dir, "test-export"))
		return -1;
	snprintf(path, sizeof path, "%s/a.gpuwhy", dir);
	gw_fail err = {0};
	store *st;
	if (store_create(path, &st, &err)) {
		print_message("store_create: %s\n", err.why);
		return -1;
	}
	store_set_meta(st, "command", "python, \"train\".py");
	store_write_step(st, 1002.5, 2, "step 2 loss=0.5");
	store_write_step(st, 1001.0, 1, "step 1");
	store_write_event(st, 1001.5, "proc_exit", 0, 3, NULL);
	if (store_close(st))
		return -1;
	/* gpu_samples rows with every metric absent but one, written as SQL to stay independent of
	 * how snapshots are built. */
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	/* A file without digests (as gpuwhy wrote them before digests): rows added with SQL
	 * are exported as they are. */
	int rc = sqlite3_exec(
	    db,
	    "PRAGMA application_id = 0; DELETE FROM meta WHERE key LIKE 'digest.%';"
	    "INSERT INTO gpu_samples(t, gpu, lost) VALUES (1001.0, 1, 0), (1000.0, 0, 1);",
	    NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(dir);
}

static int column(const store_export *x, const char *name)
{
	for (int c = 0; c < store_export_columns(x); c++)
		if (!strcmp(store_export_column(x, c), name))
			return c;
	fail_msg("no column %s", name);
	return -1;
}

static void test_known(void **state)
{
	(void)state;
	const char *tables[] = {"gpu", "host", "process", "steps", "events", "meta", "gpus"};
	for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
		assert_true(store_export_known(tables[i]));
	assert_false(store_export_known("gpu_samples"));
	assert_false(store_export_known(""));
}

static void test_steps_in_time_order(void **state)
{
	(void)state;
	store_export *x;
	assert_int_equal(store_export_open(path, "steps", &x, NULL), 0);
	int t = column(x, "t"), step = column(x, "step"), line = column(x, "line");
	const store_cell *c = store_export_next(x);
	assert_non_null(c);
	assert_int_equal(c[t].kind, STORE_CELL_REAL);
	assert_true(c[t].r == 1001.0);
	assert_int_equal(c[step].kind, STORE_CELL_INT);
	assert_int_equal(c[step].i, 1);
	assert_int_equal(c[line].kind, STORE_CELL_TEXT);
	assert_string_equal(c[line].s, "step 1");
	c = store_export_next(x);
	assert_non_null(c);
	assert_int_equal(c[step].i, 2);
	assert_string_equal(c[line].s, "step 2 loss=0.5");
	assert_null(store_export_next(x));
	assert_null(store_export_next(x)); /* stays at the end */
	assert_int_equal(store_export_close(x, NULL), 0);
}

static void test_absent_is_null(void **state)
{
	(void)state;
	store_export *x;
	assert_int_equal(store_export_open(path, "gpu", &x, NULL), 0);
	int gpu = column(x, "gpu"), lost = column(x, "lost");
	assert_true(store_export_columns(x) > 3); /* one column per metric */
	const store_cell *c = store_export_next(x);
	assert_non_null(c);
	assert_int_equal(c[gpu].i, 0); /* ordered by t first */
	assert_int_equal(c[lost].i, 1);
	for (int k = 0; k < store_export_columns(x); k++)
		if (k != gpu && k != lost && k != column(x, "t"))
			assert_int_equal(c[k].kind, STORE_CELL_NULL);
	c = store_export_next(x);
	assert_non_null(c);
	assert_int_equal(c[gpu].i, 1);
	assert_null(store_export_next(x));
	assert_int_equal(store_export_close(x, NULL), 0);

	assert_int_equal(store_export_open(path, "events", &x, NULL), 0);
	c = store_export_next(x);
	assert_non_null(c);
	assert_string_equal(c[column(x, "kind")].s, "proc_exit");
	assert_int_equal(c[column(x, "text")].kind, STORE_CELL_NULL);
	assert_int_equal(store_export_close(x, NULL), 0);
}

static void test_meta_text(void **state)
{
	(void)state;
	store_export *x;
	assert_int_equal(store_export_open(path, "meta", &x, NULL), 0);
	int key = column(x, "key"), value = column(x, "value");
	const store_cell *c;
	bool seen = false;
	char last[64] = "";
	while ((c = store_export_next(x))) {
		assert_true(strcmp(c[key].s, last) > 0); /* ordered by key, one row each */
		snprintf(last, sizeof last, "%s", c[key].s);
		if (!strcmp(c[key].s, "command")) {
			assert_string_equal(c[value].s, "python, \"train\".py");
			seen = true;
		}
	}
	assert_true(seen);
	assert_int_equal(store_export_close(x, NULL), 0);
}

static void test_refuses_bad_input(void **state)
{
	(void)state;
	store_export *x = (store_export *)&x;
	char bad[320];
	snprintf(bad, sizeof bad, "%s/none.gpuwhy", dir);
	assert_int_equal(store_export_open(bad, "gpu", &x, NULL), GW_EXIT_ENV);
	assert_null(x);
	snprintf(bad, sizeof bad, "%s/text.gpuwhy", dir);
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("not a database at all\n", f);
	fclose(f);
	assert_int_equal(store_export_open(bad, "gpu", &x, NULL), GW_EXIT_ENV);
	assert_null(x);
	assert_int_equal(store_export_open(path, "nosuch", &x, NULL), GW_EXIT_USAGE);
	assert_null(x);
	gw_fail why;
	assert_int_equal(store_export_open(path, "nosuch", &x, &why), GW_EXIT_USAGE);
	assert_string_equal(why.what, "nosuch");
	assert_string_equal(why.why, "unknown table");
	assert_int_equal(store_export_open(bad, "gpu", &x, &why), GW_EXIT_ENV);
	assert_string_equal(why.what, bad);
	assert_int_equal(store_export_close(NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known),
	    cmocka_unit_test(test_steps_in_time_order),
	    cmocka_unit_test(test_absent_is_null),
	    cmocka_unit_test(test_meta_text),
	    cmocka_unit_test(test_refuses_bad_input),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
