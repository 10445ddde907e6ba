/* Where and when a Slurm job ran, read back from the shapes scontrol -d and sacct print. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/slurm.h"

static char hosts[QUEUE_SLURM_MAX_NODES][QUEUE_SLURM_HOST];

static void test_hostlist(void **state)
{
	(void)state;
	assert_int_equal(queue_slurm_hostlist("node[01-03,07]", hosts, 256), 4);
	assert_string_equal(hosts[0], "node01");
	assert_string_equal(hosts[2], "node03");
	assert_string_equal(hosts[3], "node07");
	assert_int_equal(queue_slurm_hostlist("localhost", hosts, 256), 1);
	assert_string_equal(hosts[0], "localhost");
	assert_int_equal(queue_slurm_hostlist("gpu-a1,node[8-10],x", hosts, 256), 5);
	assert_string_equal(hosts[0], "gpu-a1");
	assert_string_equal(hosts[1], "node8");
	assert_string_equal(hosts[3], "node10");
	assert_string_equal(hosts[4], "x");
	/* several bracket groups, and a suffix after one */
	assert_int_equal(queue_slurm_hostlist("r[1-2]n[01-02]-ib", hosts, 256), 4);
	assert_string_equal(hosts[0], "r1n01-ib");
	assert_string_equal(hosts[1], "r1n02-ib");
	assert_string_equal(hosts[3], "r2n02-ib");
	/* malformed, or more names than room: refused */
	assert_int_equal(queue_slurm_hostlist("node[01-03", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("node01]", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("node[3-1]", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("node[a-b]", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("node[]", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("a,,b", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("n[1-300]", hosts, 256), -1);
	assert_int_equal(queue_slurm_hostlist("n[1-2]", hosts, 1), -1);
}

static void test_idx(void **state)
{
	(void)state;
	uint64_t m;
	assert_true(queue_slurm_idx_mask("0-1,3", &m));
	assert_true(m == 0xb);
	assert_true(queue_slurm_idx_mask("7", &m));
	assert_true(m == 0x80);
	assert_true(queue_slurm_idx_mask("0-7", &m));
	assert_true(m == 0xff);
	assert_false(queue_slurm_idx_mask("", &m));
	assert_false(queue_slurm_idx_mask("1-", &m));
	assert_false(queue_slurm_idx_mask("2-1", &m));
	assert_false(queue_slurm_idx_mask("0,", &m));
	assert_false(queue_slurm_idx_mask("64", &m));
	assert_false(queue_slurm_idx_mask("N/A", &m));
}

/* `scontrol show job -d 101` of a running two-node job (Slurm 22.05's layout). */
static const char *scontrol_running =
    "JobId=101 JobName=train\n"
    "   UserId=alice(1000) GroupId=alice(1000) MCS_label=N/A\n"
    "   Priority=4294901759 Nice=0 Account=(null) QOS=(null)\n"
    "   JobState=RUNNING Reason=None Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
    "   DerivedExitCode=0:0\n"
    "   RunTime=00:10:00 TimeLimit=1-00:00:00 TimeMin=N/A\n"
    "   SubmitTime=2026-01-02T00:59:00 EligibleTime=2026-01-02T00:59:00\n"
    "   StartTime=2026-01-02T01:00:00 EndTime=2026-01-03T01:00:00 Deadline=N/A\n"
    "   Partition=gpu AllocNode:Sid=login1:4242\n"
    "   ReqNodeList=(null) ExcNodeList=(null)\n"
    "   NodeList=node[01-02,05]\n"
    "   BatchHost=node01\n"
    "   NumNodes=3 NumCPUs=24 NumTasks=3 CPUs/Task=8 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=24,mem=96G,node=3,billing=24,gres/gpu=6\n"
    "   JOB_GRES=gpu:6\n"
    "     Nodes=node[01-02] CPU_IDs=0-7 Mem=32768 GRES=gpu:a100:2(IDX:2-3)\n"
    "     Nodes=node05 CPU_IDs=0-7 Mem=32768 GRES=gpu:a100:2(IDX:0,5)\n"
    "   MinCPUsNode=8 MinMemoryNode=32G MinTmpDiskNode=0\n"
    "   Command=/home/alice/train.sh\n";

static void test_alloc_scontrol(void **state)
{
	(void)state;
	queue_slurm_alloc a;
	assert_true(queue_slurm_parse_alloc("101", scontrol_running, NULL, &a));
	assert_string_equal(a.job_id, "101");
	assert_string_equal(a.user, "alice");
	assert_int_equal(a.nnodes, 3);
	assert_string_equal(a.node[0].host, "node01");
	assert_string_equal(a.node[2].host, "node05");
	assert_true(a.node[0].gpus == 0xc && a.node[1].gpus == 0xc);
	assert_true(a.node[2].gpus == 0x21);
	assert_true(a.have_idx);
	assert_int_equal(a.gpus, 6);
	assert_true(a.start > 0);
	assert_true(a.end == 0); /* running: its EndTime is its time limit, not an end */

	/* the same on one line (scontrol -o), finished: its end is kept */
	const char *one = "JobId=7 UserId=bob(1001) JobState=COMPLETED ExitCode=0:0 "
	                  "StartTime=2026-01-02T01:00:00 EndTime=2026-01-02T03:00:00 "
	                  "NodeList=localhost Nodes=localhost CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:1-2)";
	assert_true(queue_slurm_parse_alloc("7", one, NULL, &a));
	assert_string_equal(a.user, "bob");
	assert_int_equal(a.nnodes, 1);
	assert_true(a.node[0].gpus == 0x6);
	assert_true(a.end - a.start == 7200);

	/* a job without GPUs: its nodes, no indices */
	const char *nogpu = "JobId=8 UserId=bob(1001) JobState=COMPLETED "
	                    "StartTime=2026-01-02T01:00:00 EndTime=2026-01-02T01:00:05 "
	                    "NodeList=localhost Nodes=localhost CPU_IDs=0 Mem=0 GRES=";
	assert_true(queue_slurm_parse_alloc("8", nogpu, NULL, &a));
	assert_false(a.have_idx);
	assert_true(a.node[0].gpus == 0);
	assert_int_equal(a.gpus, -1);

	/* a finished job: slurmctld keeps its nodes and GPU count, no longer their indices
	 * (Slurm 22.05, seen on a real slurmctld) */
	const char *done =
	    "JobId=2 JobName=wrap\n"
	    "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
	    "   JobState=COMPLETED Reason=None Dependency=(null)\n"
	    "   StartTime=2026-12-07T04:24:58 EndTime=2026-12-07T04:25:01 Deadline=N/A\n"
	    "   NodeList=node01\n"
	    "   TRES=cpu=1,node=1,billing=1\n"
	    "   JOB_GRES=gpu:2\n"
	    "     Nodes=node01 CPU_IDs=1 Mem=0 GRES=\n"
	    "   TresPerNode=gres:gpu:2\n";
	assert_true(queue_slurm_parse_alloc("2", done, NULL, &a));
	assert_false(a.have_idx);
	assert_int_equal(a.nnodes, 1);
	assert_true(a.node[0].gpus == 0);
	assert_int_equal(a.gpus, 2);
	assert_string_equal(a.user, "root");
	assert_true(a.end - a.start == 3);
	assert_true(
	    queue_slurm_parse_alloc("3",
	                            "JobId=3 JobState=COMPLETED StartTime=2026-12-07T04:24:58 "
	                            "NodeList=n1 JOB_GRES=gpu:h100:4",
	                            NULL, &a));
	assert_int_equal(a.gpus, 4);

	/* what EpilogSlurmctld sees: COMPLETING, its NodeList already empty, the node lines kept */
	const char *completing = "JobId=5 UserId=root(0) JobState=COMPLETING "
	                         "StartTime=2026-12-07T04:30:11 EndTime=2026-12-07T04:30:12\n"
	                         "   NodeList=\n   BatchHost=node01\n   JOB_GRES=gpu:2\n"
	                         "     Nodes=node[01-02] CPU_IDs=1 Mem=0 GRES=\n"
	                         "     Nodes=node07 CPU_IDs=1 Mem=0 GRES=\n";
	assert_true(queue_slurm_parse_alloc("5", completing, NULL, &a));
	assert_int_equal(a.nnodes, 3);
	assert_string_equal(a.node[1].host, "node02");
	assert_string_equal(a.node[2].host, "node07");
	assert_true(a.end == 0); /* still completing: read up to now */
}

static void test_alloc_sacct(void **state)
{
	(void)state;
	queue_slurm_alloc a;
	/* scontrol no longer knows it: sacct's last line for the job (it was requeued) */
	const char *sacct = "55|NODE_FAIL|0:0|2026-01-02T00:00:00|2026-01-02T00:30:00|carol|"
	                    "node09|billing=8,cpu=8,gres/gpu=1,node=1\n"
	                    "55|COMPLETED|0:0|2026-01-02T01:00:00|2026-01-02T02:00:00|carol|"
	                    "node[10-11]|billing=16,cpu=16,gres/gpu:h100=4,mem=64G,node=2\n";
	assert_true(queue_slurm_parse_alloc(
	    "55", "slurm_load_jobs error: Invalid job id specified\n", sacct, &a));
	assert_string_equal(a.user, "carol");
	assert_string_equal(a.state, "COMPLETED");
	assert_int_equal(a.nnodes, 2);
	assert_string_equal(a.node[1].host, "node11");
	assert_true(a.node[0].gpus == 0); /* sacct has no indices: all the node's GPUs */
	assert_false(a.have_idx);
	assert_int_equal(a.gpus, 4);
	assert_true(a.end - a.start == 3600);
	/* still running: End is Unknown */
	assert_true(queue_slurm_parse_alloc(
	    "56", NULL, "56|RUNNING|0:0|2026-01-02T01:00:00|Unknown|dan|node01|gres/gpu=8\n", &a));
	assert_true(a.start > 0 && a.end == 0);
	assert_int_equal(a.gpus, 8);
	/* pending: no nodes yet */
	assert_false(queue_slurm_parse_alloc(
	    "57", NULL, "57|PENDING|0:0|Unknown|Unknown|dan|None assigned|\n", &a));
	/* another job's lines, or none */
	assert_false(queue_slurm_parse_alloc("58", NULL, sacct, &a));
	assert_false(queue_slurm_parse_alloc("58", NULL, "", &a));
	assert_false(queue_slurm_parse_alloc("58", NULL, NULL, &a));
	/* scontrol answering for another job id is not taken */
	assert_false(queue_slurm_parse_alloc("102", scontrol_running, NULL, &a));
}

static void test_sacct_fields(void **state)
{
	(void)state;
	queue_slurm_job j;
	assert_true(queue_slurm_parse_sacct("9|COMPLETED|0:0|Unknown|Unknown|erin|n[1-2]|"
	                                    "billing=2,cpu=2,gres/gpu=2,node=2",
	                                    &j));
	assert_string_equal(j.user, "erin");
	assert_string_equal(j.nodelist, "n[1-2]");
	assert_int_equal(j.gpus, 2);
	/* the five fields the queue asks for: no user, nodes or GPUs */
	assert_true(queue_slurm_parse_sacct("9|COMPLETED|0:0|Unknown|Unknown", &j));
	assert_string_equal(j.user, "");
	assert_int_equal(j.gpus, -1);
	/* a TRES without GPUs, and one with gres/gpumem only */
	assert_true(queue_slurm_parse_sacct("9|COMPLETED|0:0|||u|n1|cpu=1,gres/gpumem=4G", &j));
	assert_int_equal(j.gpus, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostlist),       cmocka_unit_test(test_idx),
	    cmocka_unit_test(test_alloc_scontrol), cmocka_unit_test(test_alloc_sacct),
	    cmocka_unit_test(test_sacct_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
