/* The sampler on this machine's own /proc: this process and a child that burns CPU. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host.h"
#include "host/host_env.h"

#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void test_self(void **state)
{
	(void)state;
	host_sampler *hs = host_sampler_new(NULL);
	assert_non_null(hs);
	int me = getpid();
	assert_int_equal(host_sampler_follow(hs, &me, 1), 0);
	host_sample s = {0};
	assert_int_equal(host_sampler_sample(hs, &s), 0);
	int i = host_sample_find_proc(&s, me);
	assert_true(i >= 0);
	const host_proc *p = &s.procs[i];
	assert_true(p->is_root);
	assert_int_equal(p->ppid, getppid());
	assert_int_equal(p->state, 'R'); /* it is reading its own stat */
	assert_true(p->v[HOST_PROC_RSS].ok && p->v[HOST_PROC_RSS].v > 0);
	assert_true(p->v[HOST_PROC_THREADS].ok && p->v[HOST_PROC_THREADS].v >= 1);
	assert_non_null(p->cmdline);
	assert_non_null(strstr(p->cmdline, "test_host_live"));
	assert_true(p->uid_ok);
	assert_int_equal(p->uid, getuid());
	struct passwd *pw = getpwuid(getuid());
	if (pw)
		assert_string_equal(p->user, pw->pw_name);
	double now = (double)time(NULL);
	assert_true(p->v[HOST_PROC_START_TIME].ok);
	assert_true(p->v[HOST_PROC_START_TIME].v <= now + 2);
	assert_true(p->v[HOST_PROC_START_TIME].v > now - 3600);
	assert_true(p->nspid_n >= 1);
	assert_true(s.sys[HOST_SYS_MEM_TOTAL].ok && s.sys[HOST_SYS_MEM_TOTAL].v > 0);
	assert_true(s.sys[HOST_SYS_CPUS_ONLINE].ok && s.sys[HOST_SYS_CPUS_ONLINE].v >= 1);
	assert_int_equal(s.ncpus, (size_t)s.sys[HOST_SYS_CPUS_ONLINE].v);

	usleep(50 * 1000);
	assert_int_equal(host_sampler_sample(hs, &s), 0);
	assert_true(s.interval_s.ok && s.interval_s.v > 0);
	host_val busy = s.sys[HOST_SYS_CPU_BUSY];
	if (busy.ok) /* absent only when less than a tick passed on every CPU */
		assert_true(busy.v >= 0 && busy.v <= 100);
	for (size_t k = 0; k < s.nnets; k++)
		assert_string_not_equal(s.nets[k].name, "lo");
	host_sample_free(&s);
	host_sampler_free(hs);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Child: wait for a byte, burn 300 ms of CPU, report its CPU time, wait for EOF. */
static void child(int in, int out)
{
	char c;
	if (read(in, &c, 1) != 1)
		_exit(1);
	volatile unsigned long x = 0;
	while (cpu_seconds() < 0.3)
		x += 1;
	(void)x;
	double t = cpu_seconds();
	if (write(out, &t, sizeof(t)) != sizeof(t))
		_exit(1);
	while (read(in, &c, 1) > 0)
		;
	_exit(0);
}

static void test_child_burns_cpu(void **state)
{
	(void)state;
	int down[2], up[2];
	assert_int_equal(pipe(down), 0);
	assert_int_equal(pipe(up), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		child(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);

	host_sampler *hs = host_sampler_new(NULL);
	int me = getpid();
	host_sampler_follow(hs, &me, 1);
	host_sample s = {0};
	assert_int_equal(host_sampler_sample(hs, &s), 0);
	int i = host_sample_find_proc(&s, pid);
	assert_true(i >= 0);
	assert_int_equal(s.procs[i].ppid, me);
	assert_int_equal(s.procs[s.procs[i].parent].pid, me);

	assert_int_equal(write(down[1], "x", 1), 1);
	double child_cpu;
	assert_int_equal(read(up[0], &child_cpu, sizeof(child_cpu)), (ssize_t)sizeof(child_cpu));
	assert_int_equal(host_sampler_sample(hs, &s), 0);
	i = host_sample_find_proc(&s, pid);
	assert_true(i >= 0);
	const host_proc *p = &s.procs[i];
	assert_true(p->v[HOST_PROC_CPU].ok);
	/* How much of the wall interval it got depends on the machine's load; that it
	 * burned CPU and that the tick accounting matches its own clock does not. */
	assert_true(p->v[HOST_PROC_CPU].v > 0);
	assert_true(p->v[HOST_PROC_CPU].v <= 110); /* one thread: about one core at most */
	/* the kernel's tick accounting agrees with the child's own clock */
	assert_true(p->v[HOST_PROC_CPU_TIME].ok);
	assert_true(p->v[HOST_PROC_CPU_TIME].v > child_cpu - 0.06);
	assert_true(p->v[HOST_PROC_CPU_TIME].v < child_cpu + 0.06);

	/* the child exits: the next sample says so */
	close(down[1]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(host_sampler_sample(hs, &s), 0);
	bool exited = false;
	for (size_t k = 0; k < s.nevents; k++)
		exited |= s.events[k].kind == HOST_PROC_EXIT && s.events[k].pid == pid;
	assert_true(exited);
	assert_int_equal(host_sample_find_proc(&s, pid), -1);
	close(up[0]);
	host_sample_free(&s);
	host_sampler_free(hs);
}

static void test_identity_live(void **state)
{
	(void)state;
	host_identity id;
	host_identity_read(NULL, &id);
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	assert_string_equal(id.kernel_release, u.release);
	assert_string_equal(id.hostname, u.nodename);
	assert_true(id.cpus_online_ok && id.cpus_online >= 1);
	assert_true(id.mem_total_ok && id.mem_total > 0);
	host_env env;
	host_env_probe(NULL, &env);
	assert_true(env.pid_ns_ok);
	assert_true(env.pid_ns_depth >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_self),
	    cmocka_unit_test(test_child_burns_cpu),
	    cmocka_unit_test(test_identity_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
