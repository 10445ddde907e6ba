/* Step lines of common training loggers, and out-of-memory messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "record/steps.h"

static long match(steps_matcher *m, const char *line)
{
	long s = -1;
	return steps_match(m, line, &s) ? s : -1;
}

static void test_defaults(void **state)
{
	(void)state;
	char err[128];
	steps_matcher *m = steps_matcher_new(NULL, err, sizeof err);
	assert_non_null(m);
	assert_int_equal(match(m, "step 12/50 loss 2.3456 time 0.123s"), 12);
	assert_int_equal(match(m, "Step: 13 | loss=0.1"), 13);
	assert_int_equal(match(m, "global_step=14 lr=3e-4"), 14);
	assert_int_equal(match(m, "iter 15 loss 1.0"), 15);
	assert_int_equal(match(m, "Iteration 16"), 16);
	assert_int_equal(match(m, "[17/5000] loss 0.5"), 17);
	assert_int_equal(match(m, "Epoch 3 [train]  18/500  loss 0.4"), 18);
	assert_int_equal(match(m, " 45%|#####     | 19/500 [00:10<00:50, 9.1it/s]"), 19);
	/* the same step printed by another rank does not count twice */
	assert_int_equal(match(m, "step 19 rank 1"), -1);
	assert_int_equal(match(m, "loading dataset from /data/steps"), -1);
	assert_int_equal(match(m, "upstream 5"), -1);
	assert_int_equal(match(m, "learning rate 0.001"), -1);
	steps_matcher_free(m);
}

static void test_user_regex(void **state)
{
	(void)state;
	char err[128];
	steps_matcher *m = steps_matcher_new("batch #([0-9]+)", err, sizeof err);
	assert_int_equal(match(m, "batch #7 done"), 7);
	assert_int_equal(match(m, "step 8"), -1);
	steps_matcher_free(m);
	m = steps_matcher_new("^DONE", err, sizeof err);
	assert_int_equal(match(m, "DONE a"), 1);
	assert_int_equal(match(m, "DONE b"), 2);
	steps_matcher_free(m);
	assert_null(steps_matcher_new("([", err, sizeof err));
	assert_true(strlen(err) > 0);
}

static void test_oom(void **state)
{
	(void)state;
	assert_true(
	    steps_is_oom("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"));
	assert_true(steps_is_oom("RuntimeError: CUDA out of memory."));
	assert_true(steps_is_oom("2024 W tensorflow: OOM when allocating tensor with shape[1024]"));
	assert_true(steps_is_oom("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of "
	                         "memory while trying to allocate"));
	assert_true(steps_is_oom("CUDA error: CUDA_ERROR_OUT_OF_MEMORY"));
	assert_false(steps_is_oom("memory usage 12 GiB"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_user_regex),
	    cmocka_unit_test(test_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
