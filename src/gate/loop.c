/*
 * loop.c - the gate's event loop: one thread, one epoll set holding the
 * client daemon's epoll descriptor (libmicrohttpd without its own
 * threads), every upstream socket libcurl's multi interface asks for, and
 * an eventfd other threads write to when the GPUs or the config changed.
 *
 * Why one thread: a request used to cross two threads (the HTTP thread
 * that received it, the dispatcher that sent it upstream, then back),
 * each crossing a wake-up through a pipe and a futex. Here a request is
 * read, queued, dispatched and sent upstream in one pass of the loop, and
 * its answer goes back to the client in the next, as in nginx's workers.
 * It also makes every curl handle single-threaded, which lets a stream
 * pause its upstream while the client is slow (backpressure).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gate/gate_int.h"
#include "util/timeutil.h"

#define TAG_MHD GATE_TAG_MHD
#define TAG_WAKE GATE_TAG_WAKE
#define TAG_CURL GATE_TAG_CURL
#define TAG_MASK GATE_TAG_MASK

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)e;
	gate_srv *g = userp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(g->ep, EPOLL_CTL_DEL, s, NULL);
		curl_multi_assign(g->multi, s, NULL);
		return 0;
	}
	struct epoll_event ev = {.data.u64 = TAG_CURL | (uint32_t)s};
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	/* A reused descriptor number may still be in the set, or gone from it
	 * when curl closed it without telling: try the other operation. */
	if (epoll_ctl(g->ep, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0) {
		if (errno == EEXIST)
			epoll_ctl(g->ep, EPOLL_CTL_MOD, s, &ev);
		else if (errno == ENOENT)
			epoll_ctl(g->ep, EPOLL_CTL_ADD, s, &ev);
	}
	if (!socketp)
		curl_multi_assign(g->multi, s, g); /* any non-NULL: "added" */
	return 0;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
	(void)m;
	gate_srv *g = userp;
	g->curl_due_ns = timeout_ms < 0 ? INT64_MAX : gw_mono_ns() + timeout_ms * 1000000LL;
	return 0;
}

int gate_loop_init(gate_srv *g)
{
	g->curl_due_ns = INT64_MAX;
	g->ep = epoll_create1(EPOLL_CLOEXEC);
	g->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_WAKE};
	if (g->ep < 0 || g->wakefd < 0 || epoll_ctl(g->ep, EPOLL_CTL_ADD, g->wakefd, &ev) != 0) {
		gate_loop_free(g);
		return -1;
	}
	curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
	curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
	return 0;
}

void gate_loop_free(gate_srv *g)
{
	if (g->ep > 0)
		close(g->ep);
	if (g->wakefd > 0)
		close(g->wakefd);
	g->ep = g->wakefd = -1;
}

void gate_dispatch_wake(gate_srv *g)
{
	uint64_t one = 1;
	if (g->wakefd > 0 && write(g->wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
		return; /* the counter is full: the loop is awake anyway */
}

static void curl_action(gate_srv *g, curl_socket_t s, int mask)
{
	int running;
	if (s == CURL_SOCKET_TIMEOUT)
		g->curl_due_ns = INT64_MAX; /* curl sets the next one as it acts */
	curl_multi_socket_action(g->multi, s, mask, &running);
}

/* Milliseconds epoll may sleep: until the first of the queue's, curl's and
 * the daemon's deadlines, at most one second. */
static int wait_ms(gate_srv *g, int64_t next)
{
	int64_t now = gw_mono_ns(), due = next;
	if (g->curl_due_ns < due)
		due = g->curl_due_ns;
	MHD_UNSIGNED_LONG_LONG mt;
	if (MHD_get_timeout(g->d, &mt) == MHD_YES) {
		int64_t md = mt > 1000 ? 1000000000LL : (int64_t)mt * 1000000LL;
		if (now + md < due)
			due = now + md;
	}
	int64_t ms = (due - now + 999999) / 1000000;
	return ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms;
}

/* Handle the control flags other threads set; true when the loop must end. */
static bool control(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	bool quiesce = g->quiesce_req && !g->quiesced, stop = g->loop_exit;
	pthread_mutex_unlock(&g->mu);
	if (quiesce) {
		/* The listening socket is ours once quiesced: closing it refuses
		 * new connections while the open ones drain. */
		MHD_socket fd = MHD_quiesce_daemon(g->d);
		if (fd != MHD_INVALID_SOCKET)
			close(fd);
		pthread_mutex_lock(&g->mu);
		g->quiesced = true;
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
	gate_dispatch_step(g, &next);
	gate_ws_close_all(g);
	MHD_run(g->d);
	return true;
}

static void *loop_main(void *arg)
{
	gate_srv *g = arg;
	struct epoll_event evs[64];
	bool mhd_ready = true;
	while (!control(g)) {
		if (mhd_ready || g->mhd_kick) {
			g->mhd_kick = false;
			MHD_run(g->d);
		}
		int64_t next;
		gate_dispatch_step(g, &next);
		gate_ws_tick(g, &next);
		if (g->curl_due_ns <= gw_mono_ns())
			curl_action(g, CURL_SOCKET_TIMEOUT, 0);
		/* A finished transfer frees a slot: dispatch again before sleeping. */
		if (gate_dispatch_reap(g)) {
			mhd_ready = true;
			continue;
		}
		gate_dispatch_unpause(g);
		int n = epoll_wait(g->ep, evs, 64, g->mhd_kick ? 0 : wait_ms(g, next));
		mhd_ready = n <= 0; /* a timeout: the daemon may have timers due */
		for (int i = 0; i < n; i++) {
			uint64_t d = evs[i].data.u64;
			if ((d & TAG_MASK) == TAG_MHD) {
				mhd_ready = true;
			} else if ((d & TAG_MASK) == GATE_TAG_WSU ||
			           (d & TAG_MASK) == GATE_TAG_WSC) {
				gate_ws_event(g, d, evs[i].events);
			} else if ((d & TAG_MASK) == TAG_WAKE) {
				uint64_t v;
				if (read(g->wakefd, &v, sizeof v) < 0 && errno != EAGAIN)
					continue;
			} else {
				uint32_t ev = evs[i].events;
				int mask = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) |
				           (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
				           (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
				curl_action(g, (curl_socket_t)(d & 0xffffffffULL), mask);
			}
		}
		if (gate_dispatch_reap(g))
			mhd_ready = true;
	}
	return NULL;
}

int gate_loop_start(gate_srv *g)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(g->d, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di)
		return -1;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_MHD};
	if (epoll_ctl(g->ep, EPOLL_CTL_ADD, di->epoll_fd, &ev) != 0)
		return -1;
	if (pthread_create(&g->loop, NULL, loop_main, g) != 0)
		return -1;
	g->loop_running = true;
	return 0;
}

void gate_loop_quiesce(gate_srv *g)
{
	if (!g->loop_running)
		return;
	pthread_mutex_lock(&g->mu);
	g->quiesce_req = true;
	pthread_mutex_unlock(&g->mu);
	gate_dispatch_wake(g);
	pthread_mutex_lock(&g->mu);
	while (!g->quiesced)
		pthread_cond_wait(&g->cv, &g->mu);
	pthread_mutex_unlock(&g->mu);
}

void gate_loop_stop(gate_srv *g)
{
	if (!g->loop_running)
		return;
	pthread_mutex_lock(&g->mu);
	g->loop_exit = true;
	pthread_mutex_unlock(&g->mu);
	gate_dispatch_wake(g);
	pthread_join(g->loop, NULL);
	g->loop_running = false;
}
