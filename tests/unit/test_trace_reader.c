/* test_trace_reader.c - the readers on files written here: gzip and plain JSON, malformed input,
 * locale independence, nsys SQLite, ranks and directories. */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>
#include <zlib.h>

#include "trace/trace_read.h"
#include "traceview/trace_job.h"
#include "trace/trace_nsys.h"
#include "trace_test_util.h"
#include "test_tmpdir.h"
#include "util/err.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	return test_tmpdir_make(tmpdir, sizeof tmpdir, "trace-test");
}

static int teardown(void **state)
{
	(void)state;
	return test_tmpdir_remove(tmpdir);
}

static const char *path_of(const char *name)
{
	static char p[2][512];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
	return p[k];
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void write_gz(const char *path, const char *data, size_t len)
{
	gzFile g = gzopen(path, "wb");
	assert_non_null(g);
	assert_int_equal(gzwrite(g, data, (unsigned)len), (int)len);
	assert_int_equal(gzclose(g), Z_OK);
}

static char *sample_trace(int rank)
{
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "aten::mm", "0", "1");
	tb_call(&b, "cudaLaunchKernel", "90", "5", 1);
	tb_kernel(&b, "gemm", "100", "10", 7, 1);
	tb_call(&b, "cudaLaunchKernel", "150", "5", 2);
	tb_kernel(&b, "gemm", "200", "10", 7, 2);
	tb_add(&b,
	       "], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 4}}",
	       rank);
	return b.s;
}

/* Reads one file; returns the reader's status and its message. */
static int read_one(const char *path, trace_rank *r, char *err, size_t errsz)
{
	trace_rank_init(r, path);
	gw_fail fail = {0};
	int rc = trace_read_file(path, r, NULL, 1, &fail);
	snprintf(err, errsz, "%.*s", (int)errsz - 1, fail.why);
	return rc;
}

static void test_gzip_and_plain_agree(void **state)
{
	(void)state;
	char *json = sample_trace(3);
	write_file(path_of("r3.json"), json, strlen(json));
	write_gz(path_of("r3.json.gz"), json, strlen(json));
	trace_rank a, b;
	char err[256];
	gw_fail fail = {0};
	assert_int_equal(read_one(path_of("r3.json"), &a, err, sizeof err), 0);
	assert_int_equal(read_one(path_of("r3.json.gz"), &b, err, sizeof err), 0);
	trace_rank c; /* gzip inflated ahead by a second thread */
	trace_rank_init(&c, path_of("r3.json.gz"));
	assert_int_equal(trace_read_file(path_of("r3.json.gz"), &c, NULL, 2, &fail), 0);
	assert_int_equal(c.n, b.n);
	trace_rank_free(&c);
	assert_int_equal(a.n, b.n);
	assert_int_equal(a.n, 5); /* two launches, two kernels, and row 0 (the cpu_op) */
	assert_int_equal(a.rank, 3);
	assert_true(a.rank_found);
	assert_int_equal(a.world_size, 4);
	for (size_t i = 0; i < a.n; i++) {
		assert_int_equal(a.ev[i].ts, b.ev[i].ts);
		assert_int_equal(a.ev[i].dur, b.ev[i].dur);
		assert_int_equal(a.ev[i].corr, b.ev[i].corr);
		assert_int_equal(a.ev[i].stream, b.ev[i].stream);
		assert_int_equal(a.ev[i].flags, b.ev[i].flags);
		assert_int_equal(a.ev[i].cat, b.ev[i].cat);
		assert_string_equal(trace_name_str(&a.names, a.ev[i].name),
		                    trace_name_str(&b.names, b.ev[i].name));
	}
	assert_int_equal(a.bytes, strlen(json));
	trace_rank_free(&a);
	trace_rank_free(&b);
	free(json);
}

/* The same error with one thread and with gzip inflated ahead on a second one. */
static void expect_error(const char *name, const char *needle)
{
	for (int threads = 1; threads <= 2; threads++) {
		trace_rank r;
		gw_fail err = {0};
		trace_rank_init(&r, path_of(name));
		assert_int_not_equal(trace_read_file(path_of(name), &r, NULL, threads, &err), 0);
		if (!strstr(err.why, needle))
			fail_msg("%s: error '%s' lacks '%s'", name, err.why, needle);
		assert_string_equal(err.what, path_of(name));
		assert_null(strchr(err.why, '\n'));
		trace_rank_free(&r);
	}
}

static void test_malformed_json(void **state)
{
	(void)state;
	char *json = sample_trace(0);
	size_t len = strlen(json);
	write_file(path_of("trunc.json"), json, len / 2);
	expect_error("trunc.json", "JSON");
	/* a gzip stream cut in the middle */
	write_gz(path_of("full.json.gz"), json, len);
	struct stat st;
	assert_int_equal(stat(path_of("full.json.gz"), &st), 0);
	assert_int_equal(truncate(path_of("full.json.gz"), st.st_size - 12), 0);
	expect_error("full.json.gz", "truncated gzip");
	/* corrupt gzip data after a valid header */
	write_gz(path_of("bad.json.gz"), json, len);
	FILE *f = fopen(path_of("bad.json.gz"), "r+b");
	assert_non_null(f);
	fseek(f, 20, SEEK_SET);
	fputs("garbage garbage garbage", f);
	fclose(f);
	expect_error("bad.json.gz", "gzip");
	static const struct {
		const char *name, *text, *needle;
	} cases[] = {
	    {"array.json", "[{\"ph\": \"X\"}]", "top level is an array"},
	    {"number.json", "42", "not a JSON object"},
	    {"noevents.json", "{\"schemaVersion\": 1}", "no traceEvents"},
	    {"empty.json", "{\"traceEvents\": []}", "traceEvents is empty"},
	    {"evobj.json", "{\"traceEvents\": {}}", "not an array"},
	    {"twice.json", "{\"traceEvents\": [{}], \"traceEvents\": [{}]}", "two traceEvents"},
	    {"garbage.json", "{\"traceEvents\": [{\"ts\": 1,,}]}", "invalid JSON"},
	    {"zero.json", "", "JSON"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		write_file(path_of(cases[i].name), cases[i].text, strlen(cases[i].text));
		expect_error(cases[i].name, cases[i].needle);
	}
	expect_error("does-not-exist.json", "No such file");
	free(json);
}

/* The Kineto reader's own failures: the file (or the rank's name) as what, the reason in
 * English as why and why_text alike (the faces word it), the code of an input error. */
static void test_kineto_fail(void **state)
{
	(void)state;
	const char *empty = "{\"traceEvents\": []}";
	trace_rank r;
	trace_rank_init(&r, "mem");
	gw_fail err = {0};
	assert_int_equal(trace_kineto_parse_mem(empty, strlen(empty), &r, &err), -1);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.what, "mem");
	assert_string_equal(err.why, "traceEvents is empty");
	assert_string_equal(err.why_text, err.why);
	assert_string_equal(err.hint, "");
	trace_rank_free(&r);
	const char *cut = "{\"traceEvents\": [{\"ph\": \"X\"";
	write_file(path_of("cut.json"), cut, strlen(cut));
	for (int threads = 1; threads <= 2; threads++) {
		trace_rank_init(&r, path_of("cut.json"));
		err = (gw_fail){0};
		assert_int_equal(trace_kineto_read(path_of("cut.json"), &r, NULL, threads, &err),
		                 -1);
		assert_int_equal(err.code, GW_EXIT_ENV);
		assert_string_equal(err.what, path_of("cut.json"));
		assert_string_equal(err.why, "truncated JSON: the document ends after 27 bytes "
		                             "before it is complete");
		trace_rank_free(&r);
	}
	trace_rank_init(&r, path_of("none.json"));
	err = (gw_fail){0};
	assert_int_equal(trace_kineto_read(path_of("none.json"), &r, NULL, 1, &err), -1);
	assert_string_equal(err.what, path_of("none.json"));
	assert_string_equal(err.why, "cannot open: No such file or directory");
	/* NULL: the caller wants the code alone. */
	assert_int_equal(trace_kineto_read(path_of("none.json"), &r, NULL, 1, NULL), -1);
	trace_rank_free(&r);
}

/* Values of the wrong JSON type are ignored with a warning, never trusted or fatal. */
static void test_wrong_types(void **state)
{
	(void)state;
	const char *json =
	    "{\"traceEvents\": ["
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": \"100\", \"dur\": 5, "
	    "\"args\": {\"stream\": 7, \"correlation\": 1}},"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 200, \"dur\": [5], "
	    "\"args\": {\"stream\": 7, \"correlation\": 2}},"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"c\", \"ts\": 300, \"dur\": 5, "
	    "\"args\": {\"stream\": true, \"correlation\": \"x\"}},"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": 12, \"ts\": 400, \"dur\": 5, "
	    "\"args\": [1, 2]},"
	    "17, \"text\", null,"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"d\", \"ts\": 500, \"dur\": 5, "
	    "\"args\": {\"stream\": 7, \"correlation\": 4}}"
	    "]}";
	trace_rank r;
	trace_rank_init(&r, "mem");
	gw_fail err = {0};
	assert_int_equal(trace_kineto_parse_mem(json, strlen(json), &r, &err), 0);
	assert_int_equal(err.code, 0);
	assert_int_equal(r.n_events, 8);
	assert_true(r.n_type_errors >= 6);
	assert_true(r.n_warnings >= 1);
	/* kept: d (stream 7); c has neither stream nor correlation; a and b lost their times */
	size_t gpu = 0;
	for (size_t i = 0; i < r.n; i++)
		gpu += r.ev[i].stream == 7;
	assert_int_equal(gpu, 1);
	trace_rank_free(&r);
}

/* Numbers are read with '.', whatever LC_NUMERIC says (a German locale reads 4.25 as 4). */
static bool german_locale(void)
{
	if (setlocale(LC_ALL, "de_DE.UTF-8"))
		return true;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1",
	         tmpdir);
	if (system(cmd) != 0)
		return false;
	setenv("LOCPATH", tmpdir, 1);
	return setlocale(LC_ALL, "de_DE.UTF-8") != NULL;
}

static void test_locale_independent(void **state)
{
	(void)state;
	bool german = german_locale();
	if (german) {
		char buf[16];
		snprintf(buf, sizeof buf, "%.2f", 4.25);
		assert_string_equal(buf, "4,25"); /* the trap is armed */
	} else {
		print_message("no de_DE locale could be made: checking in the C locale only\n");
	}
	const char *json = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": "
	                   "\"Memcpy HtoD (Pinned -> Device)\", \"ts\": 1.5e2, \"dur\": 4.25, "
	                   "\"args\": {\"stream\": \"7.0\", \"correlation\": 1, "
	                   "\"memory bandwidth (GB/s)\": 12.75}}]}";
	trace_rank r;
	trace_rank_init(&r, "mem");
	gw_fail err = {0};
	int rc = trace_kineto_parse_mem(json, strlen(json), &r, &err);
	setlocale(LC_ALL, "C");
	assert_int_equal(rc, 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.ev[0].ts, 150000);
	assert_int_equal(r.ev[0].dur, 4250);
	assert_int_equal(r.ev[0].stream, 7);
	assert_float_equal(trace_event_bw(&r, 0), 12.75, 0);
	trace_rank_free(&r);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("sql: %s", msg);
}

/* A minimal export in nsys' schema: the reader's mapping onto HTA's model. */
static void test_nsys(void **state)
{
	(void)state;
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path_of("rep_2.sqlite"), &db), SQLITE_OK);
	exec_sql(
	    db,
	    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
	    "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
	    "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2');"
	    "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
	    "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3');"
	    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
	    " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
	    " demangledName INTEGER, shortName INTEGER);"
	    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
	    " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,"
	    " copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
	    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER,"
	    " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,"
	    " returnValue INTEGER);"
	    "INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float>(float*)'), (2, 'gemm'),"
	    " (3, 'cudaLaunchKernel_v7000'), (4, 'cudaMemcpyAsync_v3020'),"
	    " (5, 'cudaLaunchKernel');"
	    /* pid 77 in bits 24..47 of globalPid / globalTid */
	    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
	    " (100000, 110000, 0, 1, 7, 10, 77 << 24, 1, 2),"
	    " (200000, 210000, 0, 1, 7, 11, 77 << 24, 1, 2);"
	    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES"
	    " (300000, 302000, 0, 7, 12, 77 << 24, 2000000, 1, 1, 2);"
	    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES"
	    " (90000, 95000, 0, (77 << 24) + 5, 10, 3, 0),"
	    " (89000, 96000, 67, (77 << 24) + 5, 10, 5, 0),"
	    " (150000, 155000, 0, (77 << 24) + 5, 11, 3, 0),"
	    " (250000, 255000, 0, (77 << 24) + 5, 12, 4, 0);");
	sqlite3_close(db);
	trace_rank r;
	char err[256];
	assert_int_equal(read_one(path_of("rep_2.sqlite"), &r, err, sizeof err), 0);
	assert_int_equal(r.source, TRACE_SRC_NSYS);
	assert_int_equal(r.rank, 2);
	assert_string_equal(r.device_name, "NVIDIA H100 80GB HBM3");
	assert_non_null(strstr(r.format, "3.13.2"));
	assert_int_equal(r.n, 6); /* 2 kernels, 1 memcpy, 3 runtime calls (one duplicate gone) */
	bool saw_copy = false, saw_launch = false;
	for (size_t i = 0; i < r.n; i++) {
		const char *name = trace_name_str(&r.names, r.ev[i].name);
		if (r.ev[i].cat == TRACE_CAT_MEMCPY) {
			assert_string_equal(name, "Memcpy HtoD (Pinned -> Device)");
			assert_float_equal(trace_event_bw(&r, i), 1000.0, 1e-9); /* 2 MB in 2 us */
			saw_copy = true;
		}
		if (r.ev[i].cat == TRACE_CAT_RUNTIME && (r.ev[i].corr & 0xFFFFFFFF) == 10) {
			assert_string_equal(name, "cudaLaunchKernel");
			assert_int_equal(r.ev[i].ts, 89000); /* the outer call */
			saw_launch = true;
		}
	}
	assert_true(saw_copy && saw_launch);
	trace_frame f;
	trace_result res;
	trace_prep_opts o = {.ns_rounding = true};
	assert_int_equal(trace_prep(&r, &o, false, &f), 0);
	assert_int_equal(trace_analyze(&r, &f, &res, 1), 0);
	assert_int_equal(res.temporal.span, 202000);
	assert_int_equal(res.temporal.compute, 20000);
	assert_int_equal(res.launch.n, 3);
	const trace_idle_stream *s = &res.idle[0];
	assert_int_equal(s->time[TRACE_IDLE_HOST], 90000 + 90000); /* launches after the ends */
	trace_result_free(&res);
	trace_rank_free(&r);

	/* SQLite, but not an nsys export; and not SQLite at all */
	assert_int_equal(sqlite3_open(path_of("other.sqlite"), &db), SQLITE_OK);
	exec_sql(db, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
	sqlite3_close(db);
	expect_error("other.sqlite", "not an Nsight Systems export");
	/* The reader itself names the file and gives the reason in English. */
	trace_rank orank;
	gw_fail nf = {0};
	trace_rank_init(&orank, path_of("other.sqlite"));
	assert_int_equal(trace_nsys_read(path_of("other.sqlite"), &orank, &nf), -1);
	assert_int_equal(nf.code, GW_EXIT_ENV);
	assert_string_equal(nf.what, path_of("other.sqlite"));
	assert_string_equal(nf.why, "an SQLite database, but not an Nsight Systems export "
	                            "(no StringIds and CUPTI_ACTIVITY_KIND_* tables)");
	assert_string_equal(nf.why_text, nf.why);
	trace_rank_free(&orank);
	char junk[64];
	memcpy(junk, "SQLite format 3", 16);
	memset(junk + 16, 0x5a, sizeof junk - 16);
	write_file(path_of("junk.sqlite"), junk, sizeof junk);
	expect_error("junk.sqlite", "SQLite");
}

/* A large trace: names may carry the very text the parallel reader cuts at. */
static char *large_trace(bool traps, size_t *len)
{
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "user_annotation", "ProfilerStep#1", "0", "1000000");
	tb_cpu(&b, "user_annotation", "ProfilerStep#2", "1000000", "1000000");
	char ts[32], name[96];
	for (long i = 0; b.len < (size_t)26 << 20; i++) {
		snprintf(ts, sizeof ts, "%ld.%03ld", 10 + i * 3, i % 1000);
		snprintf(name, sizeof name, traps ? "kernel_%ld},  {trap" : "kernel_%ld", i % 37);
		tb_call(&b, i % 5 ? "cudaLaunchKernel" : "cudaMemcpyAsync", ts, "1.5", i + 1);
		snprintf(ts, sizeof ts, "%ld.%03ld", 12 + i * 3, (i * 7) % 1000);
		tb_kernel(&b, name, ts, "2.25", 7 + (int)(i % 3), i + 1);
		tb_raw(&b, "{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 1, "
		           "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
	}
	char *json = tb_end(&b);
	*len = b.len;
	return json;
}

static void same_ranks(const trace_rank *a, const trace_rank *b)
{
	assert_int_equal(a->n, b->n);
	assert_int_equal(a->n_events, b->n_events);
	assert_int_equal(a->n_rows, b->n_rows);
	assert_int_equal(a->ts_float, b->ts_float);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->n_profstep_syms, b->n_profstep_syms);
	assert_int_equal(a->first_ts, b->first_ts);
	assert_int_equal(a->last_end, b->last_end);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->ev[i].ts, b->ev[i].ts);
		assert_int_equal(a->ev[i].dur, b->ev[i].dur);
		assert_int_equal(a->ev[i].corr, b->ev[i].corr);
		assert_int_equal(a->ev[i].stream, b->ev[i].stream);
		assert_int_equal(a->ev[i].flags, b->ev[i].flags);
		assert_string_equal(trace_name_str(&a->names, a->ev[i].name),
		                    trace_name_str(&b->names, b->ev[i].name));
	}
}

/* Parsing a large file in pieces on several threads gives what one piece gives, also when the
 * text the pieces are cut at appears inside strings (then the reader starts over). */
static void test_parallel_reader(void **state)
{
	(void)state;
	trace_kineto_set_parallel_min(1 << 20); /* the test files are smaller than the default */
	for (int traps = 0; traps < 2; traps++) {
		unsigned long restarts = trace_kineto_restarts();
		size_t len;
		char *json = large_trace(traps, &len);
		const char *plain = path_of("large.json"), *gz = path_of("large.json.gz");
		write_file(plain, json, len);
		write_gz(gz, json, len);
		free(json);
		trace_rank one, par, pgz;
		gw_fail fail = {0};
		trace_rank_init(&one, plain);
		trace_rank_init(&par, plain);
		trace_rank_init(&pgz, gz);
		assert_int_equal(trace_read_file(plain, &one, NULL, 1, &fail), 0);
		assert_int_equal(trace_read_file(plain, &par, NULL, 3, &fail), 0);
		assert_int_equal(trace_read_file(gz, &pgz, NULL, 2, &fail), 0);
		assert_true(one.n > 100000);
		same_ranks(&one, &par);
		same_ranks(&one, &pgz);
		/* without traps the pieces were used; with them each of the three reads (one
		 * thread reads in pieces too) started over */
		assert_int_equal(trace_kineto_restarts() - restarts, traps ? 3 : 0);
		trace_rank_free(&one);
		trace_rank_free(&par);
		trace_rank_free(&pgz);
	}
	/* An error in a later piece is still reported, with its place. */
	size_t len;
	char *json = large_trace(false, &len);
	char *at = strstr(json + len / 2, "\"dur\": ");
	assert_non_null(at);
	at[7] = '#'; /* a number that is not one, in the middle of the file */
	write_file(path_of("broken.json"), json, len);
	free(json);
	trace_rank r;
	gw_fail err = {0};
	trace_rank_init(&r, "broken.json");
	assert_int_equal(trace_read_file(path_of("broken.json"), &r, NULL, 2, &err), GW_EXIT_ENV);
	assert_non_null(strstr(err.why, "invalid JSON near byte"));
	trace_rank_free(&r);
	trace_kineto_set_parallel_min(64 << 20);
}

/* A directory is a job: one rank per file, read in parallel, sorted by rank. */
static void test_job_directory(void **state)
{
	(void)state;
	char dir[300];
	snprintf(dir, sizeof dir, "%s/job", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (int rank = 3; rank >= 0; rank--) {
		char *json = sample_trace(rank == 2 ? 1 : rank); /* two files claim rank 1 */
		char p[400];
		snprintf(p, sizeof p, "%s/trace_%d.json%s", dir, rank, rank % 2 ? ".gz" : "");
		if (rank % 2)
			write_gz(p, json, strlen(json));
		else
			write_file(p, json, strlen(json));
		free(json);
	}
	write_file(path_of("job/notes.txt"), "x", 1);
	char *args[] = {dir};
	char **paths;
	size_t n;
	assert_int_equal(trace_job_collect(args, 1, &paths, &n), 0);
	assert_int_equal(n, 4);
	trace_job job;
	trace_job_opts o = {.prep = {.ns_rounding = true}, .threads = 2};
	assert_int_equal(trace_job_run(&job, paths, n, &o), 0);
	assert_int_equal(job.n, 4);
	int want[] = {0, 1, 1, 3};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(job.items[i].failed, 0);
		assert_true(job.items[i].analyzed);
		assert_int_equal(job.items[i].rank.rank, want[i]);
		assert_ptr_equal(job.items[i].res.r, &job.items[i].rank);
		assert_int_equal(job.items[i].res.temporal.span, 110000);
	}
	assert_int_equal(job.n_warnings, 1); /* rank 1 twice */
	trace_job_free(&job);

	int only[] = {3};
	o.ranks = only;
	o.n_ranks = 1;
	assert_int_equal(trace_job_run(&job, paths, n, &o), 0);
	size_t analysed = 0;
	for (size_t i = 0; i < job.n; i++)
		analysed += job.items[i].analyzed;
	assert_int_equal(analysed, 1);
	trace_job_free(&job);
	trace_job_free_paths(paths, n);
}

/* Values the reader passes over change nothing: the same text read by the scanner and, with one
 * \u escape that makes the scanner give up, by yajl alone. */
static void test_values_passed_over(void **state)
{
	(void)state;
	static const char *const body =
	    "{\"traceEvents\": [\n"
	    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": \"t "
	    "1\", "
	    "\"ts\": 10, \"dur\": 5, \"args\": {\"Input dims\": [[2, 3], [], [{\"a\": null}]], "
	    "\"External id\": 4, \"info\": {\"rank\": 5, \"x\": [true]}}},\n"
	    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
	    "1, "
	    "\"tid\": 2, \"ts\": 11.5, \"dur\": 2, \"args\": {\"cbid\": 211, \"correlation\": 7, "
	    "\"nested\": {\"stream\": 9, \"correlation\": 99}}},\n"
	    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7, "
	    "\"ts\": 14, "
	    "\"dur\": 3, \"extra\": {\"ts\": 1, \"dur\": 2}, \"args\": {\"stream\": 7, "
	    "\"correlation\": 7, \"grid\": [1, 1, 1], \"memory bandwidth (GB/s)\": 1.5}},\n"
	    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"ts\": 18, "
	    "\"dur\": 1, "
	    "\"args\": {\"stream\": \"7\", \"correlation\": 8, \"memory bandwidth (GB/s)\": 2.25, "
	    "\"s\": \"\\t\"}}\n"
	    "], \"distributedInfo\": {\"rank\": 3, \"world_size\": 4}, \"deviceProperties\": "
	    "[{\"name\": \"H100\", \"id\": 0}], \"tail\": %s}";
	char fast[4096], slow[4096];
	gw_fail err = {0};
	snprintf(fast, sizeof fast, body, "\"plain\"");
	snprintf(slow, sizeof slow, body, "\"\\u0041\"");
	trace_rank a, b;
	trace_rank_init(&a, "fast");
	trace_rank_init(&b, "slow");
	assert_int_equal(trace_kineto_parse_mem(fast, strlen(fast), &a, &err), 0);
	assert_int_equal(trace_kineto_parse_mem(slow, strlen(slow), &b, &err), 0);
	same_ranks(&a, &b);
	assert_int_equal(a.n, 4);
	assert_int_equal(a.rank, 5); /* the first "rank" in the text, inside an event's args */
	assert_int_equal(a.world_size, b.world_size);
	assert_int_equal(a.n_type_errors, b.n_type_errors);
	assert_string_equal(a.device_name, b.device_name);
	assert_string_equal(a.format, b.format);
	for (size_t i = 0; i < a.n; i++) {
		double bw_a = trace_event_bw(&a, i), bw_b = trace_event_bw(&b, i);
		assert_memory_equal(&bw_a, &bw_b, sizeof bw_a);
	}
	trace_rank_free(&a);
	trace_rank_free(&b);
}

/* Names that differ only in the middle share their length and ends, so the cache of recent
 * names sees them at the same slot: each must still come back as its own id, through the
 * table's growth too. */
static void test_names_intern(void **state)
{
	(void)state;
	trace_names t;
	trace_names_init(&t);
	char name[64];
	uint32_t ids[1200];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 1200; i++) {
			snprintf(name, sizeof name, "void gemm_kernel<%08d>(float*)", i);
			uint32_t id = trace_names_intern(&t, name, strlen(name));
			assert_int_not_equal(id, UINT32_MAX);
			if (round == 0)
				ids[i] = id;
			assert_int_equal(id, ids[i]);
			assert_string_equal(trace_name_str(&t, id), name);
			/* the previous name again, right after: the slot now holds this one */
			if (i > 0) {
				snprintf(name, sizeof name, "void gemm_kernel<%08d>(float*)",
				         i - 1);
				assert_int_equal(trace_names_intern(&t, name, strlen(name)),
				                 ids[i - 1]);
			}
		}
	}
	assert_int_equal(t.count, 1200);
	const char *shorts[] = {"", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi"};
	uint32_t sid[6];
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 6; i++) {
			uint32_t id = trace_names_intern(&t, shorts[i], strlen(shorts[i]));
			if (round == 0)
				sid[i] = id;
			assert_int_equal(id, sid[i]);
			assert_string_equal(trace_name_str(&t, id), shorts[i]);
		}
	/* an embedded NUL is part of the name: "ab\0" is not "ab" */
	uint32_t nul = trace_names_intern(&t, "ab\0x", 3);
	assert_int_not_equal(nul, sid[2]);
	assert_int_equal(trace_names_intern(&t, "ab\0y", 3), nul);
	assert_int_equal(t.count, 1207);
	trace_names_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_intern),
	    cmocka_unit_test(test_gzip_and_plain_agree),
	    cmocka_unit_test(test_malformed_json),
	    cmocka_unit_test(test_kineto_fail),
	    cmocka_unit_test(test_wrong_types),
	    cmocka_unit_test(test_locale_independent),
	    cmocka_unit_test(test_nsys),
	    cmocka_unit_test(test_parallel_reader),
	    cmocka_unit_test(test_values_passed_over),
	    cmocka_unit_test(test_job_directory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
