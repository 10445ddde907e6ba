/*
 * loop.c - the gate's event loops: each is one thread with one epoll set
 * holding its client daemon's epoll descriptor (libmicrohttpd without its
 * own threads, on a listening socket of its own that SO_REUSEPORT shares
 * with the other loops'), every upstream socket its libcurl multi asks
 * for, its WebSockets, and an eventfd other threads write to when the
 * GPUs, the config or the queue changed.
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

#include "gate/gate_int.h"
#include "util/timeutil.h"

static _Thread_local gate_loop *self;

gate_loop *gate_loop_self(void)
{
	return self;
}

#define TAG_MHD GATE_TAG_MHD
#define TAG_WAKE GATE_TAG_WAKE
#define TAG_CURL GATE_TAG_CURL
#define TAG_MASK GATE_TAG_MASK

/*
 * What the loop knows of a curl descriptor. A socket curl lets go of
 * (CURL_POLL_REMOVE: its transfer ended, the connection waits in curl's
 * cache) stays in the epoll set as it was: the next transfer on that
 * connection usually wants the same events, so it costs no epoll_ctl,
 * and an event on it while unwanted removes it then. A closed descriptor
 * leaves the set by itself; its number's next user finds that out below.
 */
#define FD_IN_SET (1U << 31) /* registered with epoll (as far as we know) */
#define FD_WANTED (1U << 30) /* curl asked for events on it */
#define FD_SOON (1U << 29)   /* to be told "writable" without asking epoll */
#define FD_TRIED (1U << 28)  /* ... which was tried: ask epoll next time */
#define FD_EVENTS 0xffffU

static uint32_t *fd_state(gate_loop *l, curl_socket_t s)
{
	if (s < 0)
		return NULL;
	if (s >= l->nfdst) {
		int n = l->nfdst ? l->nfdst : 256;
		while (n <= s)
			n *= 2;
		uint32_t *p = realloc(l->fdst, (size_t)n * sizeof *p);
		if (!p)
			return NULL;
		memset(p + l->nfdst, 0, (size_t)(n - l->nfdst) * sizeof *p);
		l->fdst = p;
		l->nfdst = n;
	}
	return &l->fdst[s];
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)e, (void)socketp;
	gate_loop *l = userp;
	uint32_t *st = fd_state(l, s);
	if (what == CURL_POLL_REMOVE) {
		if (st)
			*st &= ~(FD_WANTED | FD_SOON | FD_TRIED);
		else
			epoll_ctl(l->ep, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	struct epoll_event ev = {.data.u64 = TAG_CURL | (uint32_t)s};
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (st && (*st & FD_IN_SET) && (*st & FD_EVENTS) == ev.events) {
		*st = (*st | FD_WANTED) & ~FD_TRIED;
		return 0;
	}
	/*
	 * A connection from curl's cache that wants to write is about to send
	 * a request on an idle, connected socket: it can write now. Telling
	 * curl so when this action returns saves two epoll_ctl calls and a
	 * pass of the loop; should the socket be full after all, curl asks
	 * again and epoll is asked then.
	 */
	if (st && (*st & FD_IN_SET) && what == CURL_POLL_OUT && !(*st & FD_TRIED) &&
	    l->nsoon < (int)(sizeof l->soon / sizeof *l->soon)) {
		if (!(*st & FD_SOON))
			l->soon[l->nsoon++] = s;
		*st |= FD_WANTED | FD_SOON;
		return 0;
	}
	/* A reused descriptor number may still be in the set, or gone from it
	 * when curl closed it: try the other operation. */
	bool in = st && (*st & FD_IN_SET);
	if (epoll_ctl(l->ep, in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0) {
		if (errno == EEXIST)
			epoll_ctl(l->ep, EPOLL_CTL_MOD, s, &ev);
		else if (errno == ENOENT)
			epoll_ctl(l->ep, EPOLL_CTL_ADD, s, &ev);
	}
	if (st)
		*st = FD_IN_SET | FD_WANTED | ev.events;
	return 0;
}

static void curl_action(gate_loop *l, curl_socket_t s, int mask);

/* Tell curl the sockets it is about to write on are writable. */
static void run_soon(gate_loop *l)
{
	while (l->nsoon) {
		curl_socket_t s = l->soon[--l->nsoon];
		uint32_t *st = s < l->nfdst ? &l->fdst[s] : NULL;
		if (!st || !(*st & FD_SOON))
			continue;
		*st = (*st & ~FD_SOON) | FD_TRIED;
		if (*st & FD_WANTED)
			curl_action(l, s, CURL_CSELECT_OUT);
	}
}

/* An event on a curl descriptor: true when curl wants it. */
static bool curl_wants(gate_loop *l, curl_socket_t s)
{
	uint32_t *st = s < l->nfdst ? &l->fdst[s] : NULL;
	if (!st || (*st & FD_WANTED))
		return true;
	/* An idle connection in curl's cache has news (most often: the
	 * upstream closed it); curl looks at it when it picks it again. */
	epoll_ctl(l->ep, EPOLL_CTL_DEL, s, NULL);
	*st = 0;
	return false;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
	(void)m;
	gate_loop *l = userp;
	l->curl_due_ns = timeout_ms < 0 ? INT64_MAX : gw_mono_ns() + timeout_ms * 1000000LL;
	return 0;
}

int gate_loop_init(gate_loop *l)
{
	l->curl_due_ns = INT64_MAX;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_WAKE};
	if (l->ep < 0 || l->wakefd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->wakefd, &ev) != 0) {
		gate_loop_free(l);
		return -1;
	}
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
	return 0;
}

void gate_loop_free(gate_loop *l)
{
	free(l->fdst);
	l->fdst = NULL;
	l->nfdst = 0;
	if (l->ep > 0)
		close(l->ep);
	if (l->wakefd > 0)
		close(l->wakefd);
	l->ep = l->wakefd = -1;
}

void gate_loop_wake(gate_loop *l)
{
	uint64_t one = 1;
	if (l->wakefd > 0 && write(l->wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
		return; /* the counter is full: the loop is awake anyway */
}

void gate_dispatch_wake(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++)
		gate_loop_wake(&g->loops[i]);
}

static void curl_action(gate_loop *l, curl_socket_t s, int mask)
{
	int running;
	if (s == CURL_SOCKET_TIMEOUT)
		l->curl_due_ns = INT64_MAX; /* curl sets the next one as it acts */
	curl_multi_socket_action(l->multi, s, mask, &running);
	run_soon(l);
}

/* Milliseconds epoll may sleep: until the first of the queue's, curl's and
 * the daemon's deadlines, at most one second. */
static int wait_ms(gate_loop *l, int64_t next)
{
	int64_t now = gw_mono_ns(), due = next;
	if (l->curl_due_ns < due)
		due = l->curl_due_ns;
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
	 * can still send it. */
	pthread_mutex_lock(&g->mu);
	g->abort_all = true;
	pthread_mutex_unlock(&g->mu);
	int64_t next;
	gate_dispatch_step(l, &next);
	gate_ws_close_all(l);
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
		int64_t next;
		gate_dispatch_step(l, &next);
		gate_ws_tick(l, &next);
		if (l->curl_due_ns <= gw_mono_ns())
			curl_action(l, CURL_SOCKET_TIMEOUT, 0);
		/* A finished transfer frees a slot: dispatch again before sleeping. */
		if (gate_dispatch_reap(l)) {
			mhd_ready = true;
			continue;
		}
		gate_dispatch_unpause(l);
		bool kick = __atomic_load_n(&l->mhd_kick, __ATOMIC_ACQUIRE);
		int n = epoll_wait(l->ep, evs, 64, kick ? 0 : wait_ms(l, next));
		mhd_ready = n <= 0; /* a timeout: the daemon may have timers due */
		for (int i = 0; i < n; i++) {
			uint64_t d = evs[i].data.u64;
			if ((d & TAG_MASK) == TAG_MHD) {
				mhd_ready = true;
			} else if ((d & TAG_MASK) == GATE_TAG_WSU ||
			           (d & TAG_MASK) == GATE_TAG_WSC) {
				gate_ws_event(l, d, evs[i].events);
			} else if ((d & TAG_MASK) == TAG_WAKE) {
				uint64_t v;
				if (read(l->wakefd, &v, sizeof v) < 0 && errno != EAGAIN)
					continue;
			} else {
				uint32_t ev = evs[i].events;
				int mask = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) |
				           (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				           (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
				curl_socket_t s = (curl_socket_t)(d & 0xffffffffULL);
				if (curl_wants(l, s))
					curl_action(l, s, mask);
			}
		}
		if (gate_dispatch_reap(l))
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
	gate_dispatch_wake(g);
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
	gate_dispatch_wake(g);
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (l->running)
			pthread_join(l->thread, NULL);
		l->running = false;
	}
}
