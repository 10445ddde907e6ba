/* The shim's status text: what the worker reads from the socket or the status file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue/shim.h"

static void test_complete(void **state)
{
	(void)state;
	queue_status s;
	queue_status_parse("shim_pid=10\ntask_pid=11\nstarted=100.500000\nended=102.250000\n"
	                   "exit=3\nmaxrss_kib=2048\ncomplete=1\n",
	                   &s);
	assert_true(s.present);
	assert_true(s.complete);
	assert_int_equal(s.task_pid, 11);
	assert_true(s.exit_ok);
	assert_int_equal(s.exit_code, 3);
	assert_int_equal(s.signal, 0);
	assert_int_equal(s.maxrss_kib, 2048);
	assert_true(s.ended - s.started > 1.7 && s.ended - s.started < 1.8);
	assert_false(s.timed_out);
	assert_false(s.cancelled);
}

/* A signal, no exit code; the unknown stays unknown. */
static void test_signal_and_unknowns(void **state)
{
	(void)state;
	queue_status s;
	queue_status_parse("shim_pid=10\nended=5.0\nsignal=9\ntimed_out=1\ncomplete=1", &s);
	assert_true(s.complete);
	assert_false(s.exit_ok);
	assert_int_equal(s.signal, 9);
	assert_true(s.timed_out);
	assert_int_equal(s.maxrss_kib, -1);
	assert_int_equal(s.task_pid, 0);
}

/* A shim that never got its go-ahead, and text that is not a status. */
static void test_not_started_and_junk(void **state)
{
	(void)state;
	queue_status s;
	queue_status_parse("shim_pid=10\nnot_started=1\ncancelled=1\n", &s);
	assert_true(s.not_started);
	assert_true(s.cancelled);
	assert_false(s.complete);
	queue_status_parse("no equals sign\n\n=\nexit\ncomplete=0\n", &s);
	assert_false(s.complete);
	assert_false(s.exit_ok);
}

/* The file form: absent is not present; present parses like the socket text. */
static void test_file(void **state)
{
	(void)state;
	char path[] = "/tmp/gw-status-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char text[] = "shim_pid=1\ntask_pid=2\nended=3.0\nexit=0\ncomplete=1\n";
	assert_int_equal(write(fd, text, sizeof text - 1), (int)(sizeof text - 1));
	close(fd);
	queue_status s;
	assert_int_equal(queue_status_read(path, &s), 0);
	assert_true(s.present && s.complete && s.exit_ok && s.exit_code == 0);
	unlink(path);
	assert_int_equal(queue_status_read(path, &s), 0);
	assert_false(s.present);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_complete),
	    cmocka_unit_test(test_signal_and_unknowns),
	    cmocka_unit_test(test_not_started_and_junk),
	    cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
