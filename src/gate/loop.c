/*
 * loop.c - the gate's event loops, the bottom of the gate: each is one
 * thread with one epoll set holding its client daemon's epoll descriptor
 * (libmicrohttpd without its own threads, on a listening socket of its
 * own that SO_REUSEPORT shares with the other loops'), an eventfd other
 * threads write to when the GPUs, the config or the queue changed, and
 * whatever descriptors the handlers registered with gate_loop_handle add
 * (the transfers' upstream sockets, the WebSockets' sockets). The loop
 * knows no handler by name: each pass it asks them, in the order they
 * were registered, what is due (tick), hands each its tagged events, asks
 * whether work ended (settle) and lets them act before it sleeps (idle).
 *
 * Why one thread: a request used to cross two threads (the HTTP thread
 * that received it, the dispatcher that sent it upstream, then back),
 * each crossing a wake-up through a pipe and a futex. Here a request is
 * read, queued, dispatched and sent upstream in one pass of the loop, and
 * its answer goes back to the client in the next, as in nginx's workers.
 * It also makes every curl handle single-threaded, which lets a stream
 * pause its upstream while the client is slow (backpressure).
 *
 * Why several: one loop is one core. With --workers N the kernel spreads
 * new connections over N loops; the queue, the users' limits, upstream
 * slots and metrics stay one, under the gate's mutex, and whichever loop
 * dispatches takes requests in fair order from every loop, handing a
 * transfer to the loop that holds its client when that is another one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gate/loop.h"
#include "util/timeutil.h"

static _Thread_local gate_loop *self;

gate_loop *gate_loop_self(void)
{
	return self;
}

#define TAG_MHD GATE_TAG_MHD
#define TAG_WAKE GATE_TAG_WAKE
#define TAG_MASK GATE_TAG_MASK

void gate_loop_handle(gate_srv *g, const gate_loop_handler *h)
{
	if (g->nhandlers < GATE_MAX_HANDLERS)
		g->handlers[g->nhandlers++] = h;
}

static int loop_init(gate_loop *l)
{
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_WAKE};
	if (l->ep < 0 || l->wakefd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->wakefd, &ev) != 0)
		return -1;
	return 0;
}

int gate_loops_init(gate_srv *g)
{
	g->nloops = gate_workers(&g->cfg);
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		l->g = g;
		l->idx = i;
		l->ep = l->wakefd = -1;
		if (loop_init(l) != 0)
			return -1;
	}
	return 0;
}

static void loop_free(gate_loop *l)
{
	if (l->ep > 0)
		close(l->ep);
	if (l->wakefd > 0)
		close(l->wakefd);
	l->ep = l->wakefd = -1;
}

void gate_loops_free(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++)
		loop_free(&g->loops[i]);
}

void gate_loop_wake(gate_loop *l)
{
	uint64_t one = 1;
	if (l->wakefd > 0 && write(l->wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
		return; /* the counter is full: the loop is awake anyway */
}

void gate_loops_wake(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++)
		gate_loop_wake(&g->loops[i]);
}

/* Milliseconds epoll may sleep: until the first of the handlers' and the
 * daemon's deadlines, at most one second. */
static int wait_ms(gate_loop *l, int64_t next)
{
	int64_t now = gw_mono_ns(), due = next;
	MHD_UNSIGNED_LONG_LONG mt;
	if (MHD_get_timeout(l->d, &mt) == MHD_YES) {
		int64_t md = mt > 1000 ? 1000000000LL : (int64_t)mt * 1000000LL;
		if (now + md < due)
			due = now + md;
	}
	int64_t ms = (due - now + 999999) / 1000000;
	return ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms;
}

/* Handle the control flags other threads set; true when the loop must end. */
static bool control(gate_loop *l)
{
	gate_srv *g = l->g;
	pthread_mutex_lock(&g->mu);
	bool quiesce = g->quiesce_req && !l->quiesced, stop = g->loop_exit;
	pthread_mutex_unlock(&g->mu);
	if (quiesce) {
		/* The listening socket is ours once quiesced: closing it refuses
		 * new connections while the open ones drain. */
		MHD_socket fd = MHD_quiesce_daemon(l->d);
		if (fd != MHD_INVALID_SOCKET)
			close(fd);
		pthread_mutex_lock(&g->mu);
		l->quiesced = true;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
	}
	if (!stop)
		return false;
	/* What is still queued or in flight is answered 503 while the daemon
	 * can still send it: each handler ends its own. */
	pthread_mutex_lock(&g->mu);
	g->abort_all = true;
	pthread_mutex_unlock(&g->mu);
	for (int i = 0; i < g->nhandlers; i++)
		if (g->handlers[i]->stop)
			g->handlers[i]->stop(l);
	MHD_run(l->d);
	return true;
}

/*
 * Run the daemon until it has nothing due at once. A connection resumed
 * with its answer takes the daemon three passes (send the answer, finish
 * the request, read again and re-arm the socket); each pass through
 * epoll_wait first would cost two system calls and find nothing new.
 */
static void mhd_drain(gate_loop *l)
{
	for (int pass = 0; pass < 4; pass++) {
		MHD_run(l->d);
		MHD_UNSIGNED_LONG_LONG mt;
		if (MHD_get_timeout(l->d, &mt) != MHD_YES || mt > 0)
			return;
	}
}

/* Each handler's tick, then its idle when idle: *next lowered to what is due. */
static void ticks(gate_loop *l, int64_t *next, bool idle)
{
	gate_srv *g = l->g;
	for (int i = 0; i < g->nhandlers; i++) {
		const gate_loop_handler *h = g->handlers[i];
		if (idle ? h->idle != NULL : h->tick != NULL)
			(idle ? h->idle : h->tick)(l, next);
	}
}

/* Whether a handler's work ended (a slot is free, an answer is ready). */
static bool settle(gate_loop *l)
{
	gate_srv *g = l->g;
	bool ended = false;
	for (int i = 0; i < g->nhandlers; i++)
		if (g->handlers[i]->settle && g->handlers[i]->settle(l))
			ended = true;
	return ended;
}

/* An epoll event: the daemon's, a wake-up, or a handler's by its tag. */
static bool on_event(gate_loop *l, const struct epoll_event *e)
{
	gate_srv *g = l->g;
	uint64_t tag = e->data.u64 & TAG_MASK;
	if (tag == TAG_MHD)
		return true;
	if (tag == TAG_WAKE) {
		uint64_t v;
		ssize_t rd = read(l->wakefd, &v, sizeof v); /* EAGAIN: another event woke it */
		(void)rd;
		return false;
	}
	for (int i = 0; i < g->nhandlers; i++) {
		const gate_loop_handler *h = g->handlers[i];
		if (h->event && (h->tags[0] == tag || h->tags[1] == tag)) {
			h->event(l, e->data.u64, e->events);
			break;
		}
	}
	return false;
}

static void *loop_main(void *arg)
{
	gate_loop *l = arg;
	self = l;
	struct epoll_event evs[64];
	bool mhd_ready = true;
	while (!control(l)) {
		if (mhd_ready || __atomic_exchange_n(&l->mhd_kick, false, __ATOMIC_ACQ_REL)) {
			__atomic_store_n(&l->mhd_kick, false, __ATOMIC_RELEASE);
			mhd_drain(l);
		}
		int64_t next = gw_mono_ns() + 1000000000LL;
		ticks(l, &next, false);
		/* Work that ended frees a slot: dispatch again before sleeping. */
		if (settle(l)) {
			mhd_ready = true;
			continue;
		}
		ticks(l, &next, true);
		bool kick = __atomic_load_n(&l->mhd_kick, __ATOMIC_ACQUIRE);
		int n = epoll_wait(l->ep, evs, 64, kick ? 0 : wait_ms(l, next));
		mhd_ready = n <= 0; /* a timeout: the daemon may have timers due */
		for (int i = 0; i < n; i++)
			if (on_event(l, &evs[i]))
				mhd_ready = true;
		if (settle(l))
			mhd_ready = true;
	}
	self = NULL;
	return NULL;
}

int gate_loop_start(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		const union MHD_DaemonInfo *di =
		    MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_EPOLL_FD);
		if (!di)
			return -1;
		struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_MHD};
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, di->epoll_fd, &ev) != 0)
			return -1;
	}
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (pthread_create(&l->thread, NULL, loop_main, l) != 0)
			return -1;
		l->running = true;
	}
	return 0;
}

static bool all_quiesced(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++)
		if (g->loops[i].running && !g->loops[i].quiesced)
			return false;
	return true;
}

void gate_loop_quiesce(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	g->quiesce_req = true;
	pthread_mutex_unlock(&g->mu);
	gate_loops_wake(g);
	pthread_mutex_lock(&g->mu);
	while (!all_quiesced(g))
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

void gate_loop_stop(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	g->loop_exit = true;
	pthread_mutex_unlock(&g->mu);
	gate_loops_wake(g);
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (l->running)
			pthread_join(l->thread, NULL);
		l->running = false;
	}
}
