/* Retry policy: what follows an attempt's end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "queue/state.h"
#include "queue/oom.h"
#include "queue/retry.h"

static queue_retry_in failed(int exit_code, int used, int retries)
{
	queue_retry_in in = {
	    .outcome = QO_FAILED,
	    .exit_ok = true,
	    .exit_code = exit_code,
	    .oom = QOOM_NONE,
	    .tried_mib = -1,
	    .attempts_used = used,
	    .retries = retries,
	    .retry_delay_ms = 30000,
	    .mem_mib = -1,
	    .peak_gpu_mib = -1,
	    .largest_gpu_mib = 81920,
	    .per_gpu = 1,
	};
	return in;
}

static void test_done_cancel_timeout(void **state)
{
	(void)state;
	queue_retry_out o;
	queue_retry_in in = failed(0, 1, 3);
	in.outcome = QO_DONE;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_DONE);
	in.outcome = QO_CANCELLED;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_CANCELLED);
	/* A time limit would be hit again: not retried even with retries left. */
	in.outcome = QO_TIMEOUT;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_TIMEOUT);
	assert_non_null(strstr(o.why, "not retried"));
	/* Never started: back in the queue at once, whatever the budget. */
	in = failed(0, 4, 3);
	in.outcome = QO_NOT_STARTED;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	assert_int_equal(o.delay_ms, 0);
}

static void test_budget_and_cooldown(void **state)
{
	(void)state;
	queue_retry_out o;
	/* Attempt 1 and 2 of 1 + 2 retries fail: retried after the cooldown; the 3rd is final. */
	queue_retry_in in = failed(1, 1, 2);
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	assert_int_equal(o.delay_ms, 30000);
	assert_non_null(strstr(o.why, "exit 1; retry 1 of 2 after 30s"));
	in.attempts_used = 2;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	in.attempts_used = 3;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_FAILED);
	assert_non_null(strstr(o.why, "no retry left (3 attempts)"));
	/* No retries at all: the first failure is final. */
	in = failed(2, 1, 0);
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_FAILED);
	/* Signals are failures like any other. */
	in = failed(0, 1, 1);
	in.exit_ok = false;
	in.signal = 9;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	assert_non_null(strstr(o.why, "killed by signal 9"));
}

/* The cooldown in the stored text reads as seconds at any length: an hour is
 * "3600s", not %g's "3.6e+03s"; a short one keeps its fraction. */
static void test_cooldown_text(void **state)
{
	(void)state;
	static const struct {
		int64_t ms;
		const char *want;
	} cases[] = {{100, "after 0.1s"},       {1500, "after 1.5s"},   {30000, "after 30s"},
	             {99500, "after 99.5s"},    {600000, "after 600s"}, {3600000, "after 3600s"},
	             {86400000, "after 86400s"}};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		queue_retry_out o;
		queue_retry_in in = failed(1, 1, 2);
		in.retry_delay_ms = cases[i].ms;
		queue_retry_decide(&in, &o);
		if (!strstr(o.why, cases[i].want))
			fail_msg("delay %lld ms: '%s' does not say '%s'", (long long)cases[i].ms,
			         o.why, cases[i].want);
	}
	char buf[32];
	assert_string_equal(queue_seconds_text(7200, buf, sizeof buf), "7200");
	assert_string_equal(queue_seconds_text(0.25, buf, sizeof buf), "0.25");
}

static void test_not_found_is_not_retried(void **state)
{
	(void)state;
	queue_retry_out o;
	queue_retry_in in = failed(127, 1, 5);
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_FAILED);
	assert_non_null(strstr(o.why, "not found"));
	in.exit_code = 126;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_FAILED);
}

static void test_lost(void **state)
{
	(void)state;
	queue_retry_out o;
	queue_retry_in in = failed(0, 1, 1);
	in.outcome = QO_LOST;
	in.exit_ok = false;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	in.attempts_used = 2;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_LOST);
}

static void test_gpu_oom_gets_headroom(void **state)
{
	(void)state;
	queue_retry_out o;
	/* Declared 20 GiB, 4 per GPU, peak 19 GiB, PyTorch tried 4 GiB more. */
	queue_retry_in in = failed(1, 1, 2);
	in.oom = QOOM_GPU;
	in.mem_mib = 20480;
	in.per_gpu = 4;
	in.peak_gpu_mib = 19456;
	in.tried_mib = 4096;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	assert_int_equal(o.mem_hint_mib, 30720); /* 1.5 x declared beats peak + tried (23552) */
	assert_int_equal(o.per_gpu_hint, 2);
	assert_non_null(strstr(o.why, "GPU out of memory; retry 1 of 2"));
	assert_non_null(strstr(o.why, "30720 MiB reserved"));
	/* Peak plus the failed allocation, when that is more. */
	in.peak_gpu_mib = 30000;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.mem_hint_mib, 34096);
	/* Nothing declared, nothing measured: an exclusive GPU. */
	in.mem_mib = -1;
	in.peak_gpu_mib = -1;
	in.tried_mib = -1;
	in.per_gpu = 1;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.mem_hint_mib, -1);
	assert_int_equal(o.per_gpu_hint, 1);
	/* Never more than the largest GPU. */
	in.mem_mib = 70000;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.mem_hint_mib, 81920);
	/* Host OOM: a plain retry. */
	in = failed(1, 1, 1);
	in.oom = QOOM_HOST;
	queue_retry_decide(&in, &o);
	assert_int_equal(o.next, QS_QUEUED);
	assert_int_equal(o.mem_hint_mib, -1);
	assert_int_equal(o.per_gpu_hint, 0);
	assert_non_null(strstr(o.why, "host out of memory"));
}

static void test_transitions(void **state)
{
	(void)state;
	assert_int_equal(queue_transition(QS_QUEUED, QE_START), QS_RUNNING);
	assert_int_equal(queue_transition(QS_QUEUED, QE_SUBMIT), QS_SUBMITTED);
	assert_int_equal(queue_transition(QS_SUBMITTED, QE_BEGAN), QS_RUNNING);
	assert_int_equal(queue_transition(QS_RUNNING, QE_START), -1);
	assert_int_equal(queue_transition(QS_QUEUED, QE_CANCEL), QS_CANCELLED);
	/* Cancelling a running task leaves it running until its processes are gone. */
	assert_int_equal(queue_transition(QS_RUNNING, QE_CANCEL), QS_RUNNING);
	assert_int_equal(queue_transition(QS_DONE, QE_CANCEL), -1);
	assert_int_equal(queue_transition(QS_RUNNING, QE_END_RETRY), QS_QUEUED);
	assert_int_equal(queue_transition(QS_SUBMITTED, QE_END_CANCEL), QS_CANCELLED);
	assert_int_equal(queue_transition(QS_RUNNING, QE_END_LOST), QS_LOST);
	assert_int_equal(queue_transition(QS_QUEUED, QE_END_DONE), -1);
	assert_int_equal(queue_transition(QS_RUNNING, QE_NOT_STARTED), QS_QUEUED);
	for (int s = QS_DONE; s <= QS_LOST; s++)
		assert_int_equal(queue_transition((queue_state)s, QE_RETRY), QS_QUEUED);
	assert_int_equal(queue_transition(QS_RUNNING, QE_RETRY), -1);
	assert_int_equal(queue_transition(QS_QUEUED, QE_DEP_FAILED), QS_FAILED);
	assert_int_equal(queue_transition(QS_RUNNING, QE_DEP_FAILED), -1);
	for (int s = 0; s < QS__COUNT; s++) {
		assert_int_equal(queue_state_parse(queue_state_name((queue_state)s)), s);
		assert_int_equal(queue_state_final((queue_state)s), s >= QS_DONE);
	}
	assert_int_equal(queue_state_parse("bogus"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_done_cancel_timeout),
	    cmocka_unit_test(test_budget_and_cooldown),
	    cmocka_unit_test(test_cooldown_text),
	    cmocka_unit_test(test_not_found_is_not_retried),
	    cmocka_unit_test(test_lost),
	    cmocka_unit_test(test_gpu_oom_gets_headroom),
	    cmocka_unit_test(test_transitions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
