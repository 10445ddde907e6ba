/*
 * ws.c - WebSocket (and any `Upgrade: websocket`) requests: the gate opens
 * a plain TCP connection to the chosen upstream, writes the request head
 * to it and reads the upstream's answer head. On 101 the client side is
 * upgraded through libmicrohttpd (MHD_create_response_for_upgrade) and
 * bytes are relayed both ways, unparsed, until both sides have closed,
 * one fails, or nothing moved for websocket_idle_ms. Any other answer is
 * passed to the client as the gate's own error with the upstream's status.
 *
 * Everything here runs in the event loop's thread: both sockets are in
 * the loop's epoll set, so a relayed frame costs one read and one write,
 * and a side that cannot take more stops the other from being read
 * (each direction buffers at most WS_BUF bytes).
 *
 * A WebSocket is a long-lived connection, not a request at an upstream:
 * it counts against user_websockets, not user_concurrency or the
 * in-flight limits, so a browser tab's socket (ComfyUI's /ws) does not
 * block the same user's prompts.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gate/loop.h"
#include "gate/request.h"
#include "gate/route.h"
#include "gate/say.h"
#include "gate/ws.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define WS_BUF (64UL << 10)
#define WS_HEAD_MAX (16UL << 10)

enum { WS_CONNECTING, WS_SENDING, WS_HEAD, WS_UPGRADING, WS_RELAY, WS_DEAD };

typedef struct {
	char *b;
	size_t off, len, cap;
	bool eof;       /* its source has closed */
	bool shut;      /* ... and its destination was told (SHUT_WR) */
	uint64_t total; /* bytes relayed */
} ws_pipe;

struct gate_ws {
	struct gate_ws *prev, *next;
	gate_srv *g;
	gate_loop *l; /* the loop whose daemon holds its client */
	gate_req *r;  /* until the client is upgraded (a reference) */
	gate_user *u;
	int up, state;
	int ufd;
	MHD_socket cfd;
	uint32_t umask, cmask; /* what epoll watches on each socket */
	struct MHD_UpgradeResponseHandle *urh;
	char *head; /* the request head for the upstream */
	size_t hlen, hoff;
	char rhead[WS_HEAD_MAX];
	size_t rhlen;
	ws_pipe c2u, u2c;
	int64_t t_start, last_ns, handshake_due_ns;
	uint64_t id;
	char user[128], client[64], path[512];
	char *url; /* the URL it opened (gate_url_build's), for the log */
	const char *why_end;
};

bool gate_ws_wanted(struct MHD_Connection *c, const char *method)
{
	if (strcmp(method, "GET") != 0)
		return false;
	const char *u = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Upgrade");
	return u && strcasestr(u, "websocket") != NULL;
}

/* ------------------------------------------------------------- epoll */

static void watch(gate_ws *w, int fd, uint32_t *have, uint32_t want, uint64_t tag)
{
	if (fd < 0 || *have == want)
		return;
	struct epoll_event ev = {.events = want, .data.u64 = tag | (uint64_t)(uintptr_t)w};
	int op = *have == UINT32_MAX ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
	if (epoll_ctl(w->l->ep, op, fd, &ev) == 0)
		*have = want;
}

static void unwatch(gate_ws *w, int fd, uint32_t *have)
{
	if (fd >= 0 && *have != UINT32_MAX)
		epoll_ctl(w->l->ep, EPOLL_CTL_DEL, fd, NULL);
	*have = UINT32_MAX;
}

/* ---------------------------------------------------------- ending one */

static void log_end(gate_ws *w)
{
	gate_srv *g = w->g;
	if (!g->log)
		return;
	int64_t now = gw_mono_ns();
	json_t *j = json_pack(
	    "{s:f,s:I,s:s,s:s,s:s,s:s,s:i,s:I,s:I,s:f,s:b,s:s,s:s,s:s}", "ts", gw_wall_s(), "id",
	    (json_int_t)w->id, "client", w->client, "user", w->user, "method", "GET", "path",
	    w->path, "status", 101, "bytes_in", (json_int_t)w->c2u.total, "bytes_out",
	    (json_int_t)w->u2c.total, "total_ms", (double)(now - w->t_start) / 1e6, "websocket", 1,
	    "upstream", g->up[w->up].cfg.url, "url", w->url ? w->url : "", "reason", w->why_end);
	char *s = jsonw_tree_text(j, 0, 0);
	if (s) {
		fprintf(g->log, "%s\n", s);
		fflush(g->log);
	}
	free(s);
	json_decref(j);
}

/*
 * End w: both sockets leave the loop, the upstream's is closed and the
 * client's is handed back to libmicrohttpd to close. The memory stays
 * until gate_ws_reap, since the same epoll batch may still name it.
 */
static void ws_end(gate_ws *w, const char *why)
{
	if (w->state == WS_DEAD)
		return;
	gate_srv *g = w->g;
	bool relayed = w->state == WS_RELAY;
	w->why_end = why;
	unwatch(w, w->ufd, &w->umask);
	unwatch(w, w->cfd, &w->cmask);
	if (w->ufd >= 0)
		close(w->ufd);
	w->ufd = -1;
	if (w->urh) {
		MHD_upgrade_action(w->urh, MHD_UPGRADE_ACTION_CLOSE);
		/* The daemon finishes the connection when it runs. */
		__atomic_store_n(&w->l->mhd_kick, true, __ATOMIC_RELEASE);
		w->urh = NULL;
	}
	w->cfd = MHD_INVALID_SOCKET;
	pthread_mutex_lock(&g->mu);
	g->ws_open--;
	g->up[w->up].websockets--;
	if (w->u) {
		w->u->websockets--;
		w->u->refs--;
	}
	if (w->r)
		gate_req_ws_done(w->r);
	w->r = NULL;
	if (relayed)
		log_end(w);
	pthread_mutex_unlock(&g->mu);
	w->state = WS_DEAD;
}

/* The handshake failed: the client gets status and why instead (mu not held). */
static void ws_refuse(gate_ws *w, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ws_refuse(gate_ws *w, int status, const char *fmt, ...)
{
	gate_srv *g = w->g;
	gate_req *r = w->r;
	char why[600], text[600];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(why, sizeof why, fmt, ap);
	vsnprintf(text, sizeof text, _(fmt), aq);
	va_end(aq);
	va_end(ap);
	pthread_mutex_lock(&g->mu);
	if (status >= 500)
		g->up[w->up].errors[status == 504 ? GATE_UE_TIMEOUT : GATE_UE_CONNECT]++;
	gate_req_fail_said(r, status, -1, 0, why, text);
	bool gone = r->conn_gone;
	pthread_mutex_unlock(&g->mu);
	if (!gone)
		gate_resume(w->l, r->conn);
	ws_end(w, "refused");
}

void gate_ws_reap(gate_loop *l)
{
	gate_ws **p = &l->wss;
	while (*p) {
		gate_ws *w = *p;
		if (w->state != WS_DEAD) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		free(w->head);
		free(w->url);
		free(w->c2u.b);
		free(w->u2c.b);
		free(w);
	}
}

/* End them all (the gate stops); gate_ws_reap frees them once the daemon is gone. */
static void ws_close_all(gate_loop *l)
{
	for (gate_ws *w = l->wss; w; w = w->next) {
		if (w->state < WS_UPGRADING)
			ws_refuse(w, 503, "the gate shut down before the upstream answered");
		else
			ws_end(w, "gate stopped");
	}
	/* Freed by gate_ws_reap once the daemon is stopped: one still being
	 * upgraded is named by a response the daemon holds. */
}

/* ------------------------------------------------------------ starting */

/*
 * Start connecting to the upstream's host and port, the ones its URL was
 * parsed into (target.c): the request-target never chooses them. The
 * socket, or -1 with why.
 */
static int connect_upstream(const gate_up *u, char *why, char *text, size_t wl)
{
	const gate_origin *o = &u->origin;
	if (strcmp(o->scheme, "http") != 0) {
		gate_say(why, text, wl, "WebSocket requests need an http:// upstream, %s is not",
		         u->cfg.url);
		return -1;
	}
	char host[256], port[16];
	size_t hl = strlen(o->host);
	if (o->host[0] == '[' && hl > 2)
		snprintf(host, sizeof host, "%.*s", (int)(hl - 2), o->host + 1);
	else
		snprintf(host, sizeof host, "%s", o->host);
	snprintf(port, sizeof port, "%ld", o->port);
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
	int rc = getaddrinfo(host, port, &hints, &ai);
	if (rc != 0) {
		gate_say(why, text, wl, "upstream %s: cannot resolve %s: %s", u->cfg.url, host,
		         gai_strerror(rc));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
		gate_say(why, text, wl, "upstream %s is unreachable: %s", u->cfg.url,
		         strerror(errno));
		close(fd);
		fd = -1;
	} else if (fd < 0) {
		gate_say(why, text, wl, "upstream %s: no socket: %s", u->cfg.url, strerror(errno));
	}
	freeaddrinfo(ai);
	return fd;
}

/* "GET path HTTP/1.1" with the forwarded headers and the upgrade's own;
 * r->uri is origin-form (server.c refused any other). */
static char *build_head(const gate_req *r, const gate_origin *o, size_t *len)
{
	gw_strbuf b = {0};
	gw_sb_printf(&b, "GET %s HTTP/1.1\r\nHost: %s:%ld\r\n", r->uri, o->host, o->port);
	for (const struct curl_slist *h = r->fwd; h; h = h->next) {
		size_t n = strlen(h->data);
		if (n && h->data[n - 1] != ':') /* "Expect:" is curl's way to drop one */
			gw_sb_printf(&b, "%s\r\n", h->data);
	}
	gw_sb_printf(&b, "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
	*len = b.len;
	return gw_sb_take(&b);
}

static int pick_upstream(gate_srv *g)
{
	int64_t now = gw_mono_ns();
	int best = -1;
	for (int i = 0; i < g->nup; i++) {
		gate_up *u = &g->up[i];
		if (u->health[0])
			continue;
		bool down = u->down && now < u->down_until_ns;
		bool bdown = best >= 0 && g->up[best].down && now < g->up[best].down_until_ns;
		if (best < 0 || (bdown && !down) ||
		    (down == bdown && u->websockets < g->up[best].websockets))
			best = i;
	}
	return best;
}

/* The limits for a new WebSocket (mu held): true when it may go. */
static bool ws_admit(gate_srv *g, gate_req *r, int *up)
{
	char why[1200], why_text[1200];
	if (!gate_admit_open(g, r))
		return false;
	if (r->u->websockets >= g->cfg.user_websockets) {
		gate_req_fail(r, 429, GATE_R_USER_WEBSOCKETS, 1,
		              "user %s has %ld WebSockets open (user_websockets %ld)", r->u->name,
		              r->u->websockets, g->cfg.user_websockets);
		return false;
	}
	if (!gate_route_any_healthy(g, why, why_text, sizeof why)) {
		gate_req_fail_held(r, why, why_text);
		return false;
	}
	*up = pick_upstream(g);
	return true;
}

bool gate_ws_begin(gate_loop *l, gate_req *r)
{
	gate_srv *g = l->g;
	int up;
	pthread_mutex_lock(&g->mu);
	bool ok = ws_admit(g, r, &up);
	pthread_mutex_unlock(&g->mu);
	if (!ok)
		return false;
	char why[700], text[700];
	const gate_up *gu = &g->up[up];
	gate_ws *w = calloc(1, sizeof *w);
	if (w) {
		w->c2u.b = malloc(WS_BUF);
		w->u2c.b = malloc(WS_BUF);
		w->c2u.cap = w->u2c.cap = WS_BUF;
		w->url = gate_url_build(&gu->origin, r->uri, NULL);
	}
	bool mem = w && w->c2u.b && w->u2c.b && w->url;
	int fd = mem ? connect_upstream(gu, why, text, sizeof why) : -1;
	if (fd >= 0)
		w->head = build_head(r, &gu->origin, &w->hlen);
	if (!mem || (fd >= 0 && !w->head))
		gate_say(why, text, sizeof why, "out of memory");
	if (fd < 0 || !w->head) {
		if (fd >= 0)
			close(fd);
		if (w) {
			free(w->head);
			free(w->url);
			free(w->c2u.b);
			free(w->u2c.b);
		}
		free(w);
		pthread_mutex_lock(&g->mu);
		g->up[up].errors[GATE_UE_CONNECT]++;
		gate_req_fail_said(r, 502, -1, 0, why, text);
		pthread_mutex_unlock(&g->mu);
		return false;
	}
	w->g = g;
	w->l = l;
	w->r = r;
	w->u = r->u;
	w->up = up;
	w->ufd = fd;
	w->cfd = MHD_INVALID_SOCKET;
	w->umask = w->cmask = UINT32_MAX;
	w->state = WS_CONNECTING;
	w->t_start = w->last_ns = gw_mono_ns();
	int64_t hs = g->cfg.upstream_timeout_ms < 10000 ? g->cfg.upstream_timeout_ms : 10000;
	w->handshake_due_ns = w->t_start + hs * 1000000LL;
	w->id = r->id;
	snprintf(w->user, sizeof w->user, "%s", r->user);
	snprintf(w->client, sizeof w->client, "%s", r->client);
	snprintf(w->path, sizeof w->path, "%s", r->uri);
	pthread_mutex_lock(&g->mu);
	r->u->refs++;
	r->u->websockets++;
	g->up[up].websockets++;
	g->up[up].requests++;
	g->ws_open++;
	g->ws_total++;
	gate_req_ws_wait(r, w, up, w->url);
	pthread_mutex_unlock(&g->mu);
	w->next = l->wss;
	l->wss = w;
	watch(w, fd, &w->umask, EPOLLOUT, GATE_TAG_WSU);
	MHD_suspend_connection(r->conn);
	return true;
}

/* ------------------------------------------------------ the handshake */

static void send_head(gate_ws *w)
{
	while (w->hoff < w->hlen) {
		ssize_t n = send(w->ufd, w->head + w->hoff, w->hlen - w->hoff, MSG_NOSIGNAL);
		if (n > 0) {
			w->hoff += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		ws_refuse(w, 502, "upstream %s closed the connection before the upgrade: %s",
		          w->g->up[w->up].cfg.url, strerror(errno));
		return;
	}
	w->state = WS_HEAD;
	watch(w, w->ufd, &w->umask, EPOLLIN, GATE_TAG_WSU);
}

static bool skip_answer_header(const char *k, size_t n)
{
	static const char *const h[] = {"Connection", "Upgrade",    "Content-Length",
	                                "Date",       "Keep-Alive", "Transfer-Encoding",
	                                NULL};
	for (int i = 0; h[i]; i++)
		if (strlen(h[i]) == n && !strncasecmp(k, h[i], n))
			return true;
	return false;
}

/* The upstream's answer head is complete (end at body): act on it. */
static void got_head(gate_ws *w, char *body)
{
	gate_srv *g = w->g;
	gate_req *r = w->r;
	int status = 0;
	if (sscanf(w->rhead, "HTTP/%*d.%*d %d", &status) != 1) {
		ws_refuse(w, 502, "upstream %s answered the WebSocket upgrade with no HTTP status",
		          g->up[w->up].cfg.url);
		return;
	}
	if (status != 101) {
		ws_refuse(w, status >= 400 && status < 600 ? status : 502,
		          "upstream %s answered the WebSocket upgrade with %d, not 101",
		          g->up[w->up].cfg.url, status);
		return;
	}
	gw_strbuf hb = {0};
	gw_sb_printf(&hb, "Upgrade: websocket\n");
	char *line = strstr(w->rhead, "\r\n");
	while (line && line + 2 < body) {
		line += 2;
		char *eol = strstr(line, "\r\n");
		if (!eol || eol == line)
			break;
		char *colon = memchr(line, ':', (size_t)(eol - line));
		if (colon && !skip_answer_header(line, (size_t)(colon - line)))
			gw_sb_printf(&hb, "%.*s\n", (int)(eol - line), line);
		line = eol;
	}
	/* Frames the upstream sent right after its head go to the client first. */
	size_t extra = w->rhlen - (size_t)(body - w->rhead);
	if (extra) {
		memcpy(w->u2c.b, body, extra);
		w->u2c.len = extra;
	}
	pthread_mutex_lock(&g->mu);
	bool gone = gate_req_ws_ready(r, gw_sb_take(&hb));
	pthread_mutex_unlock(&g->mu);
	w->state = WS_UPGRADING;
	/* Quiet until the client is upgraded: what arrives waits in the socket. */
	watch(w, w->ufd, &w->umask, 0, GATE_TAG_WSU);
	if (gone)
		ws_end(w, "client left");
	else
		gate_resume(w->l, r->conn);
}

static void read_head(gate_ws *w)
{
	ssize_t n = recv(w->ufd, w->rhead + w->rhlen, sizeof w->rhead - 1 - w->rhlen, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ws_refuse(w, 502, "upstream %s closed the connection before the upgrade",
		          w->g->up[w->up].cfg.url);
		return;
	}
	w->rhlen += (size_t)n;
	w->rhead[w->rhlen] = '\0';
	char *end = strstr(w->rhead, "\r\n\r\n");
	if (end)
		got_head(w, end + 4);
	else if (w->rhlen >= sizeof w->rhead - 1)
		ws_refuse(w, 502, "upstream %s sent an answer head longer than %lu bytes",
		          w->g->up[w->up].cfg.url, WS_HEAD_MAX);
}

static void connected(gate_ws *w)
{
	int err = 0;
	socklen_t el = sizeof err;
	if (getsockopt(w->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
		err = errno;
	if (err) {
		gate_srv *g = w->g;
		pthread_mutex_lock(&g->mu);
		g->up[w->up].down = true;
		g->up[w->up].down_until_ns = gw_mono_ns() + 1000000000LL;
		pthread_mutex_unlock(&g->mu);
		ws_refuse(w, 502, "upstream %s is unreachable: %s", g->up[w->up].cfg.url,
		          strerror(err));
		return;
	}
	w->state = WS_SENDING;
	send_head(w);
}

/* --------------------------------------------------------------- relay */

/* Move bytes from one socket to the other through p; -1 when one failed. */
static int pump(int from, int to, ws_pipe *p, bool *moved)
{
	if (!p->eof && p->len < p->cap) {
		ssize_t n = recv(from, p->b + p->len, p->cap - p->len, 0);
		if (n > 0) {
			p->len += (size_t)n;
			*moved = true;
		} else if (n == 0) {
			p->eof = true;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		}
	}
	while (p->off < p->len) {
		ssize_t n = send(to, p->b + p->off, p->len - p->off, MSG_NOSIGNAL);
		if (n > 0) {
			p->off += (size_t)n;
			p->total += (uint64_t)n;
			*moved = true;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			break;
		} else {
			return -1;
		}
	}
	if (p->off == p->len)
		p->len = p->off = 0;
	if (p->eof && !p->len && !p->shut) {
		shutdown(to, SHUT_WR); /* pass the close on once everything before it went */
		p->shut = true;
	}
	return 0;
}

static void relay(gate_ws *w)
{
	bool moved = false;
	if (pump(w->cfd, w->ufd, &w->c2u, &moved) != 0 ||
	    pump(w->ufd, w->cfd, &w->u2c, &moved) != 0) {
		ws_end(w, "connection error");
		return;
	}
	if (moved)
		w->last_ns = gw_mono_ns();
	if (w->c2u.shut && w->u2c.shut) {
		ws_end(w, w->c2u.eof ? "closed" : "upstream closed");
		return;
	}
	uint32_t cm =
	    (!w->c2u.eof && w->c2u.len < w->c2u.cap ? EPOLLIN : 0) | (w->u2c.len ? EPOLLOUT : 0);
	uint32_t um =
	    (!w->u2c.eof && w->u2c.len < w->u2c.cap ? EPOLLIN : 0) | (w->c2u.len ? EPOLLOUT : 0);
	watch(w, w->cfd, &w->cmask, cm, GATE_TAG_WSC);
	watch(w, w->ufd, &w->umask, um, GATE_TAG_WSU);
}

static void on_upgraded(void *cls, struct MHD_Connection *c, void *req_cls, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock,
                        struct MHD_UpgradeResponseHandle *urh)
{
	(void)c, (void)req_cls;
	gate_ws *w = cls;
	if (w->state != WS_UPGRADING) {
		/* The gate is stopping and has let go of it already. */
		MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
		return;
	}
	w->urh = urh;
	w->cfd = sock;
	int fl = fcntl(sock, F_GETFL);
	if (fl >= 0)
		fcntl(sock, F_SETFL, fl | O_NONBLOCK);
	/* Frames the client sent with its head are the first to go upstream. */
	if (extra_in_size > w->c2u.cap) {
		char *nb = realloc(w->c2u.b, extra_in_size);
		if (!nb) {
			ws_end(w, "out of memory");
			return;
		}
		w->c2u.b = nb;
		w->c2u.cap = extra_in_size;
	}
	memcpy(w->c2u.b, extra_in, extra_in_size);
	w->c2u.len = extra_in_size;
	gate_srv *g = w->g;
	pthread_mutex_lock(&g->mu);
	gate_req_ws_done(w->r); /* the request is libmicrohttpd's to finish now */
	w->r = NULL;
	pthread_mutex_unlock(&g->mu);
	w->state = WS_RELAY;
	w->last_ns = gw_mono_ns();
	relay(w);
}

struct MHD_Response *gate_ws_response(gate_req *r)
{
	return MHD_create_response_for_upgrade(on_upgraded, r->ws);
}

/* ------------------------------------------------------------ the loop */

static void ws_event(gate_loop *l, uint64_t data, uint32_t events)
{
	(void)l;
	gate_ws *w = (gate_ws *)(uintptr_t)(data & ~GATE_TAG_MASK);
	switch (w->state) {
	case WS_CONNECTING:
		connected(w);
		break;
	case WS_SENDING:
		send_head(w);
		break;
	case WS_HEAD:
		read_head(w);
		break;
	case WS_RELAY:
		relay(w);
		break;
	default:
		(void)events;
		break;
	}
}

/* End idle WebSockets and late handshakes; *next is lowered to the next due. */
static void ws_tick(gate_loop *l, int64_t *next)
{
	gate_srv *g = l->g;
	if (!l->wss)
		return;
	int64_t now = gw_mono_ns(), idle = g->cfg.websocket_idle_ms * 1000000LL;
	for (gate_ws *w = l->wss; w; w = w->next) {
		int64_t due = w->state == WS_RELAY ? w->last_ns + idle : w->handshake_due_ns;
		if (w->state == WS_DEAD)
			continue;
		if (w->state == WS_UPGRADING) {
			/* Done by the daemon without an upgrade: the client left. */
			if (w->r && w->r->conn_gone)
				ws_end(w, "client left");
			continue;
		}
		if (now < due) {
			if (due < *next)
				*next = due;
			continue;
		}
		if (w->state == WS_RELAY)
			ws_end(w, "idle timeout");
		else
			ws_refuse(w, 504,
			          "upstream %s did not answer the WebSocket upgrade in time",
			          g->up[w->up].cfg.url);
	}
	gate_ws_reap(l);
}

const gate_loop_handler gate_ws_handler = {
    .tags = {GATE_TAG_WSU, GATE_TAG_WSC},
    .tick = ws_tick,
    .event = ws_event,
    .stop = ws_close_all,
};
