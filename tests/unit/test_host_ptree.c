/* The process-tree follower on fixture trees: members, values, events, odd processes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host.h"

#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FIX FIXTURES_DIR "/host/"
#define SEC 1000000000LL
#define T0 FIX "basic/t0/proc"
#define T1 FIX "basic/t1/proc"

static void assert_val(host_val v, double expect)
{
	if (!v.ok)
		fail_msg("value absent, expected %g", expect);
	if (v.v < expect - 1e-6 || v.v > expect + 1e-6)
		fail_msg("value %.9g, expected %.9g", v.v, expect);
}

static const host_proc *proc(const host_sample *s, int pid)
{
	int i = host_sample_find_proc(s, pid);
	if (i < 0)
		fail_msg("pid %d not in the sample", pid);
	return &s->procs[i];
}

static const host_proc_event *event(const host_sample *s, enum host_proc_event_kind kind, int pid)
{
	const host_proc_event *found = NULL;
	for (size_t i = 0; i < s->nevents; i++)
		if (s->events[i].kind == kind && s->events[i].pid == pid) {
			if (found)
				fail_msg("two events of kind %d for pid %d", kind, pid);
			found = &s->events[i];
		}
	return found;
}

static void expect_user(const host_proc *p, uint32_t uid)
{
	char want[64];
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(want, sizeof(want), "%s", pw->pw_name);
	else
		snprintf(want, sizeof(want), "%u", uid);
	assert_true(p->uid_ok);
	assert_int_equal(p->uid, uid);
	assert_string_equal(p->user, want);
}

static host_ptree *tree_at(const char *root, int follow)
{
	host_config cfg;
	host_config_default(&cfg);
	cfg.proc_root = root;
	host_ptree *t = host_ptree_new(&cfg);
	assert_non_null(t);
	if (follow)
		assert_int_equal(host_ptree_follow(t, &follow, 1), 0);
	return t;
}

static void test_first_scan(void **state)
{
	(void)state;
	host_ptree *t = tree_at(T0, 100);
	host_sample s = {0};
	assert_int_equal(host_ptree_update(t, 10 * SEC, 1700001000.0, &s), 0);
	static const int want[] = {100, 101, 102, 103, 107, 108, 300};
	assert_int_equal(s.nprocs, 7);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(s.procs[i].pid, want[i]);
	/* everything found by the first scan was already running */
	assert_int_equal(s.nevents, 7);
	for (size_t i = 0; i < s.nevents; i++) {
		assert_int_equal(s.events[i].kind, HOST_PROC_START);
		assert_true(s.events[i].already_running);
		assert_float_equal(s.events[i].wall_s, 1700001000.0, 1e-9);
	}

	const host_proc *p = proc(&s, 100);
	assert_true(p->is_root);
	assert_false(p->kthread);
	assert_string_equal(p->comm, "trainer");
	assert_int_equal(p->ppid, 1);
	assert_int_equal(p->state, 'S');
	expect_user(p, 0);
	assert_string_equal(p->cmdline, "python train.py --epochs 3");
	assert_string_equal(
	    p->cgroup, "/docker/4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a");
	assert_int_equal(p->runtime, HOST_RT_DOCKER);
	assert_int_equal(strlen(p->container_id), 64);
	assert_int_equal(p->nspid_n, 1);
	assert_int_equal(p->nspid_inner, 100);
	assert_int_equal(p->start_ticks, 50000);
	assert_val(p->v[HOST_PROC_START_TIME], 1700000000.0 + 500);
	assert_val(p->v[HOST_PROC_THREADS], 8);
	assert_val(p->v[HOST_PROC_RSS], 25600.0 * (double)sysconf(_SC_PAGESIZE));
	assert_val(p->v[HOST_PROC_VSIZE], 1073741824.0);
	assert_val(p->v[HOST_PROC_CPU_TIME], 12.0);
	assert_val(p->v[HOST_PROC_READ_BYTES], 1048576);
	assert_false(p->v[HOST_PROC_CPU].ok); /* a rate needs two scans */
	assert_false(p->v[HOST_PROC_READ_RATE].ok);
	assert_int_equal(p->parent, -1);
	assert_int_equal(p->nchildren, 4);

	p = proc(&s, 101);
	assert_string_equal(p->comm, "my (weird) proc");
	assert_string_equal(p->cmdline, "my (weird) proc --flag");
	expect_user(p, 65534);
	assert_int_equal(p->runtime, HOST_RT_CONTAINERD);
	assert_false(p->is_root);
	assert_int_equal(s.procs[p->parent].pid, 100);
	assert_false(p->v[HOST_PROC_READ_BYTES].ok); /* no io file: absent, not 0 */

	p = proc(&s, 102);
	expect_user(p, 4242);
	assert_int_equal(p->nspid_n, 2);
	assert_int_equal(p->nspid_inner, 5);
	assert_int_equal(p->runtime, HOST_RT_NONE);
	assert_string_equal(p->container_id, "");

	/* a truncated stat: what is there is used, the rest absent */
	p = proc(&s, 300);
	assert_int_equal(p->ppid, 100);
	assert_false(p->v[HOST_PROC_THREADS].ok);
	assert_false(p->v[HOST_PROC_CPU_TIME].ok);
	assert_null(p->cmdline);
	assert_null(p->cgroup);
	assert_false(p->uid_ok);
	assert_string_equal(p->user, "");
	host_ptree_free(t);
	host_sample_free(&s);
}

static void test_second_scan(void **state)
{
	(void)state;
	host_ptree *t = tree_at(T0, 100);
	host_sample s = {0};
	assert_int_equal(host_ptree_update(t, 10 * SEC, 1700001000.0, &s), 0);
	assert_int_equal(host_ptree_set_root(t, T1), 0);
	assert_int_equal(host_ptree_update(t, 11 * SEC, 1700001001.0, &s), 0);

	static const int want[] = {100, 101, 102, 104, 106, 108, 300};
	assert_int_equal(s.nprocs, 7);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(s.procs[i].pid, want[i]);

	const host_proc *p = proc(&s, 100);
	assert_val(p->v[HOST_PROC_CPU], 100);
	assert_val(p->v[HOST_PROC_CPU_USER], 80);
	assert_val(p->v[HOST_PROC_CPU_SYSTEM], 20);
	assert_val(p->v[HOST_PROC_MAJFLT_RATE], 5);
	assert_val(p->v[HOST_PROC_READ_RATE], 2 * 1048576);
	assert_val(p->v[HOST_PROC_WRITE_RATE], 1000);
	assert_val(p->v[HOST_PROC_RCHAR_RATE], 5000);
	assert_val(p->v[HOST_PROC_WCHAR_RATE], 0);
	assert_val(p->v[HOST_PROC_WRITE_BYTES], 1000);
	assert_val(proc(&s, 101)->v[HOST_PROC_CPU], 0);
	assert_val(proc(&s, 102)->v[HOST_PROC_CPU], 50);
	/* born after the first scan: its whole CPU time is in this interval */
	p = proc(&s, 104);
	assert_val(p->v[HOST_PROC_CPU], 40);
	assert_int_equal(s.procs[p->parent].pid, 102);
	/* only a stat file: followed, the rest unknown */
	p = proc(&s, 106);
	assert_null(p->cmdline);
	assert_false(p->uid_ok);
	assert_false(p->v[HOST_PROC_READ_RATE].ok);
	/* a zombie stays listed until reaped */
	assert_int_equal(proc(&s, 108)->state, 'Z');

	/* children in ascending PID order */
	p = proc(&s, 100);
	assert_int_equal(p->nchildren, 4);
	static const int kids[] = {101, 106, 108, 300};
	int c = p->first_child;
	for (size_t i = 0; i < 4; i++, c = s.procs[c].next_sibling) {
		assert_true(c >= 0);
		assert_int_equal(s.procs[c].pid, kids[i]);
	}
	assert_int_equal(c, -1);

	assert_int_equal(s.nevents, 5);
	const host_proc_event *ev = event(&s, HOST_PROC_EXIT, 107);
	assert_non_null(ev);
	assert_string_equal(ev->comm, "leaver");
	assert_string_equal(ev->cmdline, "leaver --bye");
	assert_val(ev->cpu_time, 0.1);
	assert_val(ev->start_time, 1700000000.0 + 700);
	assert_float_equal(ev->wall_s, 1700001001.0, 1e-9);
	/* PID 103 was reused by a process outside the tree: the old one exited */
	ev = event(&s, HOST_PROC_EXIT, 103);
	assert_non_null(ev);
	assert_string_equal(ev->comm, "old");
	assert_int_equal(host_sample_find_proc(&s, 103), -1);
	ev = event(&s, HOST_PROC_START, 104);
	assert_non_null(ev);
	assert_false(ev->already_running);
	assert_int_equal(ev->ppid, 102);
	assert_non_null(event(&s, HOST_PROC_START, 106));
	assert_non_null(event(&s, HOST_PROC_EXIT, 108)); /* became a zombie */
	/* 105 vanished between listing and reading: skipped silently */
	assert_null(event(&s, HOST_PROC_START, 105));
	assert_int_equal(host_sample_find_proc(&s, 105), -1);

	/* the same tree again: no new events, no second exit for the zombie */
	assert_int_equal(host_ptree_update(t, 12 * SEC, 1700001002.0, &s), 0);
	assert_int_equal(s.nevents, 0);
	assert_int_equal(s.nprocs, 7);
	assert_val(proc(&s, 100)->v[HOST_PROC_CPU], 0);
	/* and it is cheap: only followed processes and the unreadable 105 are read */
	host_ptree_stats st = host_ptree_last_stats(t);
	assert_int_equal(st.listed, 13);
	assert_int_equal(st.followed, 7);
	assert_int_equal(st.stat_reads, 8);
	host_ptree_free(t);
	host_sample_free(&s);
}

static void test_full_scan_and_follow_all(void **state)
{
	(void)state;
	host_config cfg;
	host_config_default(&cfg);
	cfg.proc_root = T1;
	cfg.proc_full_scan = true;
	host_ptree *t = host_ptree_new(&cfg);
	int root = 100;
	host_ptree_follow(t, &root, 1);
	host_sample s = {0};
	for (int i = 0; i < 2; i++)
		assert_int_equal(host_ptree_update(t, (i + 1) * SEC, 0, &s), 0);
	assert_int_equal(host_ptree_last_stats(t).stat_reads, 13);
	host_ptree_free(t);

	/* every user process; kernel threads (kthreadd and its children) left out */
	t = tree_at(T0, 0);
	assert_false(host_ptree_active(t));
	assert_int_equal(host_ptree_update(t, SEC, 0, &s), 0);
	assert_int_equal(s.nprocs, 0);
	assert_int_equal(host_ptree_last_stats(t).stat_reads, 0);
	host_ptree_follow_all(t);
	assert_int_equal(host_ptree_update(t, 2 * SEC, 0, &s), 0);
	static const int want[] = {1, 100, 101, 102, 103, 107, 108, 200, 300};
	assert_int_equal(s.nprocs, 9);
	for (size_t i = 0; i < 9; i++)
		assert_int_equal(s.procs[i].pid, want[i]);
	host_ptree_free(t);
	host_sample_free(&s);
}

static void test_roots(void **state)
{
	(void)state;
	/* a root that does not exist follows nothing */
	host_ptree *t = tree_at(T0, 99999);
	host_sample s = {0};
	assert_int_equal(host_ptree_update(t, SEC, 0, &s), 0);
	assert_int_equal(s.nprocs, 0);
	assert_int_equal(s.nevents, 0);
	/* a root added later brings its existing descendants, as already running */
	int sshd = 200;
	host_ptree_follow(t, &sshd, 1);
	assert_int_equal(host_ptree_set_root(t, T1), 0);
	assert_int_equal(host_ptree_update(t, 2 * SEC, 0, &s), 0);
	assert_int_equal(s.nprocs, 2);
	assert_int_equal(s.procs[0].pid, 103);
	assert_string_equal(s.procs[0].comm, "reused");
	assert_int_equal(s.procs[1].pid, 200);
	assert_true(s.procs[1].is_root);
	assert_int_equal(s.nevents, 2);
	assert_true(s.events[0].already_running && s.events[1].already_running);
	host_ptree_free(t);

	/* two roots, one inside the other's tree: each process once */
	t = tree_at(T0, 100);
	int inner[] = {102, 102};
	host_ptree_follow(t, inner, 2);
	assert_int_equal(host_ptree_update(t, SEC, 0, &s), 0);
	assert_int_equal(s.nprocs, 7);
	assert_true(proc(&s, 102)->is_root);
	host_ptree_free(t);
	host_sample_free(&s);
}

static void test_sampler_and_copy(void **state)
{
	(void)state;
	host_config cfg;
	host_config_default(&cfg);
	cfg.proc_root = T0;
	cfg.sys_root = FIX "basic/t0/sys";
	host_sampler *hs = host_sampler_new(&cfg);
	int root = 101;
	host_sampler_follow(hs, &root, 1);
	host_sample s = {0}, copy = {0};
	assert_int_equal(host_sampler_sample_at(hs, SEC, 5.0, &s), 0);
	assert_int_equal(s.nprocs, 3); /* 101, 102, 107 */
	assert_true(s.sys[HOST_SYS_MEM_TOTAL].ok);
	assert_int_equal(host_sample_copy(&copy, &s), 0);
	host_sample_free(&s);
	assert_int_equal(copy.nprocs, 3);
	assert_int_equal(copy.nevents, 3);
	assert_string_equal(copy.procs[0].cmdline, "my (weird) proc --flag");
	assert_true(copy.procs[0].cmdline >= copy.arena &&
	            copy.procs[0].cmdline < copy.arena + copy.arena_len);
	assert_string_equal(copy.events[2].cmdline, "leaver --bye");
	assert_int_equal(copy.ncpus, 4);
	assert_int_equal(copy.cpus[3].id, 3);
	/* copying over a used sample reuses it */
	assert_int_equal(host_sample_copy(&s, &copy), 0);
	assert_string_equal(s.procs[1].cmdline, "worker");
	assert_int_equal(host_sample_copy(&copy, &s), 0);
	assert_int_equal(copy.ndisks, 3);
	host_sample_free(&s);
	host_sample_free(&copy);
	host_sampler_free(hs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_scan),
	    cmocka_unit_test(test_second_scan),
	    cmocka_unit_test(test_full_scan_and_follow_all),
	    cmocka_unit_test(test_roots),
	    cmocka_unit_test(test_sampler_and_copy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
