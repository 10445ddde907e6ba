/* What Slurm's commands print, read back: states, ExitCode a:b, sbatch, scontrol, sacct. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/slurm.h"
#include "queue/spec.h"

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(queue_slurm_classify("PENDING"), QSL_PENDING);
	assert_int_equal(queue_slurm_classify("CONFIGURING"), QSL_PENDING);
	assert_int_equal(queue_slurm_classify("RUNNING"), QSL_RUNNING);
	assert_int_equal(queue_slurm_classify("COMPLETING"), QSL_RUNNING);
	assert_int_equal(queue_slurm_classify("COMPLETED"), QSL_COMPLETED);
	assert_int_equal(queue_slurm_classify("FAILED"), QSL_FAILED);
	assert_int_equal(queue_slurm_classify("CANCELLED by 0"), QSL_CANCELLED);
	assert_int_equal(queue_slurm_classify("CANCELLED+"), QSL_CANCELLED);
	assert_int_equal(queue_slurm_classify("TIMEOUT"), QSL_TIMEOUT);
	assert_int_equal(queue_slurm_classify("OUT_OF_MEMORY"), QSL_OUT_OF_MEMORY);
	assert_int_equal(queue_slurm_classify("NODE_FAIL"), QSL_NODE_FAIL);
	assert_int_equal(queue_slurm_classify("PREEMPTED"), QSL_NODE_FAIL);
	assert_int_equal(queue_slurm_classify(""), QSL_UNKNOWN);
	assert_int_equal(queue_slurm_classify("WHATEVER"), QSL_UNKNOWN);
	assert_int_equal(queue_slurm_classify(NULL), QSL_UNKNOWN);
}

static void test_exitcode(void **state)
{
	(void)state;
	int e, s;
	assert_true(queue_slurm_exitcode("3:0", &e, &s));
	assert_int_equal(e, 3);
	assert_int_equal(s, 0);
	assert_true(queue_slurm_exitcode("0:9", &e, &s));
	assert_int_equal(e, 0);
	assert_int_equal(s, 9);
	assert_true(queue_slurm_exitcode("0:15", &e, &s));
	assert_int_equal(s, 15);
	assert_false(queue_slurm_exitcode("3", &e, &s));
	assert_false(queue_slurm_exitcode("a:b", &e, &s));
	assert_false(queue_slurm_exitcode("300:0", &e, &s));
	assert_false(queue_slurm_exitcode("", &e, &s));
	assert_false(queue_slurm_exitcode(NULL, &e, &s));
}

static void test_sbatch(void **state)
{
	(void)state;
	char job[32];
	assert_true(queue_slurm_parse_sbatch("123\n", job, sizeof job));
	assert_string_equal(job, "123");
	assert_true(queue_slurm_parse_sbatch("77;lab\n", job, sizeof job));
	assert_string_equal(job, "77");
	assert_true(
	    queue_slurm_parse_sbatch("sbatch: warning: something\n4242\n", job, sizeof job));
	assert_string_equal(job, "4242");
	assert_false(queue_slurm_parse_sbatch("", job, sizeof job));
	assert_false(queue_slurm_parse_sbatch("sbatch: error: Batch job submission failed\n", job,
	                                      sizeof job));
	assert_false(queue_slurm_parse_sbatch("12abc\n", job, sizeof job));
}

static void test_scontrol(void **state)
{
	(void)state;
	queue_slurm_job j;
	const char *line =
	    "JobId=29 JobName=t1 UserId=root(0) GroupId=root(0) Priority=1 JobState=FAILED "
	    "Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 "
	    "ExitCode=3:0 "
	    "RunTime=00:00:01 TimeLimit=UNLIMITED SubmitTime=2024-05-01T12:00:00 "
	    "StartTime=2024-05-01T12:00:01 EndTime=2024-05-01T12:00:02 NodeList=localhost "
	    "Nodes=localhost CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:1-2) WorkDir=/tmp\n";
	assert_true(queue_slurm_parse_scontrol(line, &j));
	assert_string_equal(j.job_id, "29");
	assert_string_equal(j.state, "FAILED");
	assert_string_equal(j.reason, "NonZeroExitCode");
	assert_true(j.exit_ok);
	assert_int_equal(j.exit_code, 3);
	assert_int_equal(j.signal, 0);
	assert_string_equal(j.gres_idx, "1-2");
	assert_true(j.end - j.start > 0.5 && j.end - j.start < 1.5);
	/* "Reason" must not match inside another key; missing JobState is no job. */
	assert_false(queue_slurm_parse_scontrol("JobId=3 NotJobState=RUNNING", &j));
	assert_false(queue_slurm_parse_scontrol("slurm_load_jobs error: Invalid job id", &j));
	assert_true(queue_slurm_parse_scontrol("JobId=4 JobState=TIMEOUT Reason=TimeLimit "
	                                       "ExitCode=0:15 StartTime=Unknown EndTime=None",
	                                       &j));
	assert_int_equal(j.signal, 15);
	assert_true(j.start == 0 && j.end == 0);
}

static void test_sacct(void **state)
{
	(void)state;
	queue_slurm_job j;
	assert_true(
	    queue_slurm_parse_sacct("1|FAILED|3:0|2024-05-01T12:00:01|2024-05-01T12:00:02", &j));
	assert_string_equal(j.job_id, "1");
	assert_string_equal(j.state, "FAILED");
	assert_int_equal(j.exit_code, 3);
	assert_true(
	    queue_slurm_parse_sacct("2|CANCELLED by 0|0:0|Unknown|2024-05-01T12:00:09\n", &j));
	assert_string_equal(j.state, "CANCELLED");
	assert_true(j.start == 0 && j.end > 0);
	assert_false(queue_slurm_parse_sacct("", &j));
	assert_false(queue_slurm_parse_sacct("just text", &j));
	struct tm tm = {0};
	tm.tm_year = 124;
	tm.tm_mon = 4;
	tm.tm_mday = 1;
	tm.tm_hour = 12;
	tm.tm_isdst = -1;
	assert_true(queue_slurm_time("2024-05-01T12:00:00") == (double)mktime(&tm));
	assert_true(queue_slurm_time("Unknown") == 0);
	assert_true(queue_slurm_time("2024-05-01") == 0);
}

static void test_token_runs(void **state)
{
	(void)state;
	const char *log = "=== gpuwhy task 3 attempt 1 token abc start 2024 host h slurm job 9 "
	                  "CUDA_VISIBLE_DEVICES=0 ===\nhello\n"
	                  "=== gpuwhy task 3 attempt 1 token abc start 2024 host h slurm job 9 "
	                  "CUDA_VISIBLE_DEVICES=1 ===\nhello\n"
	                  "=== gpuwhy task 3 attempt 2 token abd start ===\n"
	                  "the token abc start appears in output too\n";
	assert_int_equal(queue_count_token_runs(log, strlen(log), "abc"), 2);
	assert_int_equal(queue_count_token_runs(log, strlen(log), "abd"), 1);
	assert_int_equal(queue_count_token_runs(log, strlen(log), "zzz"), 0);
	assert_int_equal(queue_count_token_runs("", 0, "abc"), 0);
}

static void test_shell_quote(void **state)
{
	(void)state;
	char *argv[] = {"python", "train.py", "--lr", "0.1", "it's", "a b", "", "$HOME"};
	char *s = queue_argv_to_shell(argv, 8);
	assert_string_equal(s, "python train.py --lr 0.1 'it'\\''s' 'a b' '' '$HOME'");
	free(s);
	char small[4];
	assert_int_equal(queue_shell_quote("abcdef", small, sizeof small), 6);
	assert_string_equal(small, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classify),    cmocka_unit_test(test_exitcode),
	    cmocka_unit_test(test_sbatch),      cmocka_unit_test(test_scontrol),
	    cmocka_unit_test(test_sacct),       cmocka_unit_test(test_token_runs),
	    cmocka_unit_test(test_shell_quote),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
