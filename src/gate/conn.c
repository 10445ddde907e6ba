/*
 * conn.c - the gate's client connections: who may connect, each one's
 * address and deadline, the watchdog that cuts off clients too slow to
 * send a request, and the answer the gate gives in place of
 * libmicrohttpd's when that one would be sent wrong.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "gate/conn.h"
#include "gate/loop.h"
#include "gate/request.h"
#include "util/i18n.h"
#include "util/timeutil.h"

static void client_addr(struct MHD_Connection *c, char *out, size_t len)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(out, len, "unknown");
	if (!ci || !ci->client_addr)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, out,
		          (socklen_t)len);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		          out, (socklen_t)len);
}

/* The client's address and the X-Forwarded-For line naming it. */
void gate_conn_addr(struct MHD_Connection *c, char client[GATE_CLIENT_LEN],
                    char xff[GATE_CLIENT_LEN + 24])
{
	client_addr(c, client, GATE_CLIENT_LEN);
	snprintf(xff, GATE_CLIENT_LEN + 24, "X-Forwarded-For: %s", client);
}

gate_track *gate_conn_track(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

void gate_track_busy(struct MHD_Connection *c, gate_srv *g, bool busy)
{
	gate_track *t = gate_conn_track(c);
	if (!t)
		return;
	/* Only its loop writes it and the watchdog only reads it: no lock,
	 * which would be taken three times a request by every loop. */
	if (!t->ws) {
		long ms = __atomic_load_n(&g->cfg.client_timeout_ms, __ATOMIC_RELAXED);
		__atomic_store_n(&t->deadline_ns, busy ? 0 : gw_mono_ns() + ms * 1000000LL,
		                 __ATOMIC_RELAXED);
	}
}

/* The connection becomes a WebSocket: the watchdog leaves it alone. */
void gate_track_ws(struct MHD_Connection *c, gate_srv *g)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (!ci || !ci->socket_context)
		return;
	gate_track *t = ci->socket_context;
	(void)g;
	t->ws = true;
	__atomic_store_n(&t->deadline_ns, 0, __ATOMIC_RELAXED);
}

void gate_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe)
{
	gate_srv *g = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		gate_track *t = calloc(1, sizeof *t);
		if (!t || !ci) {
			free(t);
			return;
		}
		t->fd = ci->connect_fd;
		t->conn = c;
		t->lp = gate_loop_self();
		gate_conn_addr(c, t->client, t->xff);
		pthread_mutex_lock(&g->mu);
		t->deadline_ns = gw_mono_ns() + g->cfg.client_timeout_ms * 1000000LL;
		t->next = g->tracks;
		if (g->tracks)
			g->tracks->prev = t;
		g->tracks = t;
		pthread_mutex_unlock(&g->mu);
		*socket_context = t;
		return;
	}
	gate_track *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&g->mu);
	if (t->prev)
		t->prev->next = t->next;
	else
		g->tracks = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&g->mu);
	free(t);
	*socket_context = NULL;
}

void *gate_watchdog_main(void *arg)
{
	gate_srv *g = arg;
	pthread_mutex_lock(&g->mu);
	while (!g->stopping) {
		int64_t now = gw_mono_ns();
		for (gate_track *t = g->tracks; t; t = t->next) {
			int64_t due = __atomic_load_n(&t->deadline_ns, __ATOMIC_RELAXED);
			if (!t->shut && due && now > due) {
				/* MHD sees the hang-up and closes the connection itself. */
				shutdown(t->fd, SHUT_RDWR);
				t->shut = true;
			}
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

enum MHD_Result gate_on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	gate_srv *g = cls;
	if (!g->cfg.allow_remote)
		return MHD_YES; /* bound to loopback only */
	const void *a;
	bool v6 = addr->sa_family == AF_INET6;
	if (v6)
		a = &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr;
	else if (addr->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)(const void *)addr)->sin_addr;
	else
		return MHD_NO;
	char host[64];
	inet_ntop(addr->sa_family, a, host, sizeof host);
	if (gate_is_loopback(host))
		return MHD_YES;
	for (int i = 0; i < g->cfg.nallow; i++)
		if (gate_net_match(&g->cfg.allow[i], a, v6))
			return MHD_YES;
	return MHD_NO;
}

/* ----------------------------------------- in place of libmicrohttpd's answer */

/*
 * libmicrohttpd 0.9.75 (Debian 12's, and no newer one in its archive)
 * answers a request whose Content-Length it cannot read (not a number,
 * or past 2^64) with its response header block written twice: the
 * error path queues the answer and formats its head, then the state
 * machine goes on as if the headers had been read and formats it again.
 * The client reads the second head as the first one's body and more
 * bytes after it. The gate's request handler is never called on that
 * path; its error log is, once, just before. So the gate answers there
 * itself, one well-formed answer with Connection: close, ends its side
 * of the connection, and lets libmicrohttpd's own bytes fail to be sent.
 *
 * The connection is the one of this loop whose headers are read
 * (libmicrohttpd tells their size only from then on) while its handler
 * has not run: the headers are parsed and the handler called in one
 * pass over one connection, so at most one connection of a loop's
 * thread is ever in between.
 */

#define MHD_ERROR_LOG "Error processing request (HTTP response code is %u"

static void answer_in_place(gate_srv *g, gate_track *t, unsigned mhd_status)
{
	gate_req *r = t->req;
	int status = mhd_status == 413 ? 413 : 400;
	/* Its handler never ran: name it for the log as first_call would. */
	r->id = ++g->next_id;
	g->m.requests++;
	memcpy(r->client, t->client, sizeof r->client);
	memcpy(r->user, t->client, sizeof t->client); /* user is the larger, both end in a NUL */
	if (status == 413)
		gate_req_fail(r, 413, GATE_R_BAD_LENGTH, 0,
		              "the request's Content-Length is too large to read; the connection "
		              "is closed");
	else
		gate_req_fail(
		    r, 400, GATE_R_BAD_LENGTH, 0,
		    "the request's Content-Length is not a number; the connection is closed");
	char head[256];
	int hl = snprintf(head, sizeof head,
	                  "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Type: "
	                  "application/json\r\nContent-Length: %zu\r\n\r\n",
	                  status, status == 413 ? "Content Too Large" : "Bad Request", r->rlen);
	struct iovec iov[2] = {{head, (size_t)hl}, {r->rbody, r->rlen}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = r->rbody ? 2 : 1};
	/* A new connection's send buffer is empty: one short write fits. A
	 * client that filled it with unread answers gets this one cut, and
	 * the close; either way nothing after it. */
	ssize_t n = sendmsg(t->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	r->bytes_out = n > hl ? (size_t)n - (size_t)hl : 0;
	r->t_done = gw_mono_ns();
	shutdown(t->fd, SHUT_WR);
	/* What the client sent after the head is dropped here, not left for
	 * the close to answer with a reset that could discard the answer. */
	char buf[4096];
	for (int i = 0; i < 64 && recv(t->fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++)
		;
	t->shut = true;
}

void gate_mhd_log(void *cls, const char *fmt, va_list ap)
{
	gate_loop *l = cls;
	if (strncmp(fmt, MHD_ERROR_LOG, sizeof MHD_ERROR_LOG - 1) != 0)
		return; /* its other messages stay off, as before */
	va_list aq;
	va_copy(aq, ap);
	unsigned status = va_arg(aq, unsigned);
	va_end(aq);
	gate_srv *g = l->g;
	pthread_mutex_lock(&g->mu);
	gate_track *hit = NULL;
	int n = 0;
	for (gate_track *t = g->tracks; t && n < 2; t = t->next)
		if (t->lp == l && t->req && !t->req->method[0] && !t->shut &&
		    MHD_get_connection_info(t->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE)) {
			hit = t;
			n++;
		}
	/* Not exactly one: an error before the headers were read, which
	 * libmicrohttpd answers once and right. */
	if (n == 1)
		answer_in_place(g, hit, status);
	pthread_mutex_unlock(&g->mu);
}
