/*
 * train_host.c - the host side of the training workload: data-loader
 * workers that burn CPU (or wait for storage) per batch, and the barrier
 * the ranks meet at.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train/train_int.h"
#include "util/timeutil.h"

/* Spend ms of this thread's CPU time on arithmetic. */
static void burn_cpu(double ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	volatile double x = 1.0;
	double spent;
	do {
		for (int i = 0; i < 4000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		spent =
		    (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
	} while (spent < ms && !train_stop);
}

/* Waiting for storage: the worker sleeps, its core stays free. */
static void wait_io(double ms)
{
	if (ms <= 0)
		return;
	int64_t until = gw_mono_ns() + (int64_t)llround(ms * 1e6);
	while (gw_mono_ns() < until && !train_stop)
		gw_sleep_until_ns(until);
}

static void worker_main(int credit_rd, int data_wr, double cpu_ms, double io_ms)
{
	char ch;
	for (;;) {
		ssize_t n = read(credit_rd, &ch, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			_exit(0);
		wait_io(io_ms);
		burn_cpu(cpu_ms);
		if (write(data_wr, &ch, 1) != 1)
			_exit(0);
	}
}

int train_spawn_workers(const train_opts *o, train_worker *w)
{
	for (long long i = 0; i < o->workers; i++) {
		int data[2], credit[2];
		if (pipe2(data, O_CLOEXEC) != 0)
			return -1;
		if (pipe2(credit, O_CLOEXEC) != 0) {
			close(data[0]);
			close(data[1]);
			return -1;
		}
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(data[0]);
			close(credit[1]);
			for (long long k = 0; k < i; k++) {
				close(w[k].data_rd);
				close(w[k].credit_wr);
			}
			worker_main(credit[0], data[1], o->cpu_ms, o->io_ms);
		}
		close(data[1]);
		close(credit[0]);
		w[i] = (train_worker){.pid = pid, .data_rd = data[0], .credit_wr = credit[1]};
		char credits[64] = {0};
		if (write(w[i].credit_wr, credits, (size_t)o->prefetch) != (ssize_t)o->prefetch)
			return -1;
	}
	return 0;
}

void train_stop_workers(const train_opts *o, train_worker *w)
{
	for (long long i = 0; i < o->workers; i++) {
		close(w[i].credit_wr);
		close(w[i].data_rd);
	}
	for (long long i = 0; i < o->workers; i++) {
		kill(w[i].pid, SIGTERM);
		while (waitpid(w[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

int train_next_batch(const train_opts *o, train_worker *w, long long which)
{
	if (o->workers == 0) {
		wait_io(o->io_ms);
		burn_cpu(o->cpu_ms);
		return train_stop ? -1 : 0;
	}
	train_worker *k = &w[which % o->workers];
	char ch;
	for (;;) {
		ssize_t n = read(k->data_rd, &ch, 1);
		if (n == 1)
			break;
		if (n < 0 && errno == EINTR && !train_stop)
			continue;
		return -1;
	}
	return write(k->credit_wr, &ch, 1) == 1 ? 0 : -1;
}

int train_sleep_until(int64_t t)
{
	while (gw_mono_ns() < t)
		if (gw_sleep_until_ns(t) && train_stop)
			return -1;
	return 0;
}

static void futex_wait(uint32_t *addr, uint32_t val, long ns)
{
	struct timespec ts = {0, ns};
	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

void train_futex_wake(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * The all-reduce barrier. While a rank waits, its GPU shows busy with few
 * SMs active (a collective spinning): the lease on the published interval
 * is extended second by second until everyone has arrived.
 */
int train_barrier(train_shared *sh, long long ranks, sim_wl *wl, int64_t *lease)
{
	uint32_t gen = __atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)ranks) {
		__atomic_store_n(&sh->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->generation, 1, __ATOMIC_RELEASE);
		train_futex_wake(&sh->generation);
		return 0;
	}
	while (__atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE) == gen) {
		if (__atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE) || train_stop)
			return -1;
		futex_wait(&sh->generation, gen, 5000000);
		int64_t now = gw_mono_ns();
		if (now > *lease - 200000000LL) {
			*lease = now + 1000000000LL;
			sim_wl_set_end(wl, *lease);
		}
	}
	return 0;
}
