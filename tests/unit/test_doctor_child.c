/* Child processes with a deadline (src/util/child.c), as the doctor's probes use them. */
#include <stdint.h>
#include <stdio.h>
#include "test_doctor_common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "util/child.h"
#include "util/timeutil.h"

static gw_child_result run_sh(const char *script, int64_t timeout_ns, size_t cap)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	gw_child_spec spec = {.path = "/bin/sh", .argv = argv};
	gw_child_result res;
	assert_int_equal(gw_child_run(&spec, timeout_ns, cap, &res), 0);
	return res;
}

static void captures_stdout_stderr_and_status(void **state)
{
	(void)state;
	gw_child_result r = run_sh("echo out; echo err >&2; exit 3", 5000000000LL, 1024);
	assert_true(r.started);
	assert_true(r.exited);
	assert_int_equal(r.status, 3);
	assert_false(r.timed_out);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	assert_false(gw_child_ok(&r));
	gw_child_free(&r);
	r = run_sh("printf ok", 5000000000LL, 1024);
	assert_true(gw_child_ok(&r));
	assert_int_equal(r.out_len, 2);
	gw_child_free(&r);
}

static void timeout_kills_the_whole_group(void **state)
{
	(void)state;
	int64_t t0 = gw_mono_ns();
	/* The grandchild keeps stdout open: only killing the group ends the wait. */
	gw_child_result r = run_sh("echo started; sleep 30 & sleep 30", 300000000LL, 1024);
	int64_t took = gw_mono_ns() - t0;
	assert_true(r.timed_out);
	assert_false(r.exited);
	assert_int_equal(r.signal, SIGKILL);
	assert_string_equal(r.out, "started\n");
	assert_false(gw_child_ok(&r));
	assert_true(took < 10000000000LL); /* far below the 30 s the child wanted */
	gw_child_free(&r);
}

static void output_is_capped_and_drained(void **state)
{
	(void)state;
	/* 1 MB of output, 100 bytes kept: the child must still finish (pipe drained). */
	gw_child_result r =
	    run_sh("head -c 1000000 /dev/zero | tr '\\0' x; echo done >&2", 5000000000LL, 100);
	assert_true(gw_child_ok(&r));
	assert_int_equal(r.out_len, 100);
	assert_true(r.out_truncated);
	assert_string_equal(r.err, "done\n");
	gw_child_free(&r);
}

static void exec_failure_is_reported(void **state)
{
	(void)state;
	char *argv[] = {"nope", NULL};
	gw_child_spec spec = {.path = "/nonexistent/nope", .argv = argv};
	gw_child_result r;
	gw_child_run(&spec, 1000000000LL, 64, &r);
	assert_false(r.started);
	assert_int_equal(r.start_errno, ENOENT);
	assert_false(gw_child_ok(&r));
	assert_non_null(r.out);
	gw_child_free(&r);
}

static void runs_many_at_once(void **state)
{
	(void)state;
	char *a1[] = {"sh", "-c", "sleep 0.2; echo one", NULL};
	char *a2[] = {"sh", "-c", "echo two", NULL};
	char *a3[] = {"sh", "-c", "sleep 20", NULL};
	gw_child_spec specs[3] = {
	    {"/bin/sh", a1, NULL}, {"/bin/sh", a2, NULL}, {"/bin/sh", a3, NULL}};
	gw_child_result res[3];
	gw_child_run_many(specs, 3, 1500000000LL, 64, res);
	assert_string_equal(res[0].out, "one\n");
	assert_string_equal(res[1].out, "two\n");
	assert_true(gw_child_ok(&res[0]));
	assert_true(gw_child_ok(&res[1]));
	assert_true(res[2].timed_out);
	for (int i = 0; i < 3; i++)
		gw_child_free(&res[i]);
}

static void environment_is_passed(void **state)
{
	(void)state;
	char *argv[] = {"sh", "-c", "echo $GW_TEST_VAR", NULL};
	char *envp[] = {"GW_TEST_VAR=hello", NULL};
	gw_child_spec spec = {.path = "/bin/sh", .argv = argv, .envp = envp};
	gw_child_result r;
	gw_child_run(&spec, 5000000000LL, 64, &r);
	assert_string_equal(r.out, "hello\n");
	gw_child_free(&r);
}

static void which_searches_a_path_list(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_exec(f, "bin/tool", "#!/bin/sh\n");
	fx_write(f, "other/plain", "not executable\n");
	char list[512];
	snprintf(list, sizeof list, "/nonexistent:%s/other:%s", f->root, f->bin);
	char *p = gw_which("tool", list);
	assert_non_null(p);
	assert_non_null(strstr(p, "/bin/tool"));
	free(p);
	assert_null(gw_which("plain", list));
	assert_null(gw_which("tool", ""));
	assert_null(gw_which("tool", NULL));
	p = gw_which("/bin/sh", NULL);
	assert_non_null(p);
	free(p);
	fx_free(f);
}

/* No path: argv[0] is found in PATH, as the Slurm back end runs sbatch. */
static void path_is_searched_without_one(void **state)
{
	(void)state;
	char *argv[] = {"sh", "-c", "echo found", NULL};
	gw_child_spec spec = {.argv = argv};
	gw_child_result r;
	gw_child_run(&spec, 5000000000LL, 64, &r);
	assert_true(gw_child_ok(&r));
	assert_string_equal(r.out, "found\n");
	gw_child_free(&r);
	char *nope[] = {"gpuwhy-no-such-program", NULL};
	spec.argv = nope;
	gw_child_run(&spec, 5000000000LL, 64, &r);
	assert_false(r.started);
	assert_int_equal(r.start_errno, ENOENT);
	assert_string_equal(r.out, "");
	gw_child_free(&r);
}

/* A timeout of 0 waits as long as the child runs. */
static void zero_timeout_means_no_limit(void **state)
{
	(void)state;
	char *argv[] = {"/bin/sh", "-c", "sleep 0.2; echo late", NULL};
	gw_child_spec spec = {.path = "/bin/sh", .argv = argv};
	gw_child_result r;
	gw_child_run(&spec, 0, 64, &r);
	assert_false(r.timed_out);
	assert_true(gw_child_ok(&r));
	assert_string_equal(r.out, "late\n");
	gw_child_free(&r);
}

/* A descriptor this process holds open (without O_CLOEXEC) is not the child's. */
static void descriptors_are_not_inherited(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY);
	assert_true(fd > 2);
	char script[64];
	snprintf(script, sizeof script, "[ -e /proc/self/fd/%d ] && echo open || echo closed", fd);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	gw_child_spec spec = {.path = "/bin/sh", .argv = argv};
	gw_child_result r;
	gw_child_run(&spec, 5000000000LL, 64, &r);
	assert_string_equal(r.out, "closed\n");
	gw_child_free(&r);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(captures_stdout_stderr_and_status),
	    cmocka_unit_test(timeout_kills_the_whole_group),
	    cmocka_unit_test(output_is_capped_and_drained),
	    cmocka_unit_test(exec_failure_is_reported),
	    cmocka_unit_test(runs_many_at_once),
	    cmocka_unit_test(environment_is_passed),
	    cmocka_unit_test(which_searches_a_path_list),
	    cmocka_unit_test(path_is_searched_without_one),
	    cmocka_unit_test(zero_timeout_means_no_limit),
	    cmocka_unit_test(descriptors_are_not_inherited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
