/* top's feed: GPU processes completed from /proc with their family, the queue and its wake-up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "top/feed.h"
#include "util/timeutil.h"

static void gpu_snapshot(snapshot *s, unsigned pid)
{
	snapshot_init(s, 1);
	s->t_wall = gw_wall_s();
	s->t_mono_ns = gw_mono_ns();
	tl_proc *p = snapshot_add_proc(s);
	p->pid = pid;
	p->gpu = 0;
	p->alive = true;
	p->gpu_mem_mib = 512;
}

static const tl_proc *find(const snapshot *s, unsigned pid, int gpu)
{
	for (int i = 0; i < s->nproc; i++)
		if (s->procs[i].pid == pid && s->procs[i].gpu == gpu)
			return &s->procs[i];
	return NULL;
}

static void test_family_and_host_data(void **state)
{
	(void)state;
	/* This test process plays the GPU process; a child of it plays a data worker. */
	pid_t child = fork();
	if (child == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	assert_true(child > 0);
	top_feed *f = top_feed_new(NULL);
	assert_non_null(f);
	top_gpu_info g = {.index = 0};
	top_model m;
	top_model_init(&m, 1, &g);
	for (int k = 0; k < 3; k++) {
		snapshot s;
		gpu_snapshot(&s, (unsigned)getpid());
		top_feed_push(&s, f);
		snapshot_free(&s);
		/* the wake-up is readable right away */
		struct pollfd p = {top_feed_fd(f), POLLIN, 0};
		assert_int_equal(poll(&p, 1, 1000), 1);
		assert_int_equal(top_feed_drain(f, &m, NULL), 1);
		gw_sleep_ns(150000000LL);
	}
	const snapshot *s = top_model_shown(&m);
	const tl_proc *me = find(s, (unsigned)getpid(), 0);
	assert_non_null(me);
	assert_int_equal(me->ppid, (unsigned)getppid());
	assert_false(isnan(me->rss_mib));
	assert_false(isnan(me->cpu_pct));
	assert_float_equal(me->gpu_mem_mib, 512, 0);
	/* the busy child is in the family, with its CPU */
	const tl_proc *kid = find(s, (unsigned)child, -1);
	assert_non_null(kid);
	assert_int_equal(kid->ppid, (unsigned)getpid());
	assert_false(isnan(kid->cpu_pct));
	assert_true(kid->cpu_pct > 0);
	/* the process itself appears once as a GPU record, not again as a host one */
	assert_null(find(s, (unsigned)getpid(), -1));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	top_model_free(&m);
	top_feed_free(f);
}

static void test_queue_drops_oldest(void **state)
{
	(void)state;
	top_feed *f = top_feed_new(NULL);
	top_gpu_info g = {.index = 0};
	top_model m;
	top_model_init(&m, 1, &g);
	for (int k = 0; k < TOP_FEED_QUEUE + 5; k++) {
		snapshot s;
		snapshot_init(&s, 1);
		s.t_wall = k;
		top_feed_push(&s, f);
		snapshot_free(&s);
	}
	long dropped = 0;
	assert_int_equal(top_feed_drain(f, &m, &dropped), TOP_FEED_QUEUE);
	assert_int_equal(dropped, 5);
	/* the newest survive, in order */
	assert_float_equal(top_model_shown(&m)->t_wall, TOP_FEED_QUEUE + 4, 0);
	assert_float_equal(top_model_back(&m, TOP_FEED_QUEUE - 1)->t_wall, 5, 0);
	/* drained: nothing more, and the pipe is empty */
	assert_int_equal(top_feed_drain(f, &m, NULL), 0);
	struct pollfd p = {top_feed_fd(f), POLLIN, 0};
	assert_int_equal(poll(&p, 1, 0), 0);
	top_model_free(&m);
	top_feed_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_family_and_host_data),
	    cmocka_unit_test(test_queue_drops_oldest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
