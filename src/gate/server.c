/*
 * server.c - the client side of the gate on libmicrohttpd.
 *
 * A request is received (headers checked against max_header_bytes, the
 * body against max_body_bytes), its user identified, then admitted
 * (request.c): put in the fair queue and its connection suspended until
 * the dispatcher has an answer, or refused at once (429 / 503 with
 * Retry-After). Its answer is handed to libmicrohttpd here; a streamed
 * one is read from the request's buffer (request.c).
 *
 * A watchdog closes connections that take longer than client_timeout_ms
 * to send a whole request (slow clients trickling bytes keep MHD's idle
 * timeout from firing); connections whose request is being served are
 * left alone.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exporter/http.h"
#include "gate/batch.h"
#include "gate/conn.h"
#include "gate/loop.h"
#include "gate/metrics.h"
#include "gate/request.h"
#include "gate/server.h"
#include "gate/ws.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/timeutil.h"

/* ------------------------------------------------------------------ users */

/*
 * FNV-1a from the basis the gate's user names were first made with (one
 * digit short of the standard one): kept, so that a key's name in the
 * metrics and the access log stays the same.
 */
#define KEY_HASH_BASIS 1469598103934665603ULL

static uint64_t fnv1a(const char *s)
{
	return gw_fnv1a64(s, KEY_HASH_BASIS);
}

/* The API key the client presents, or NULL. */
static const char *client_key(gate_srv *g, struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (a && !strncasecmp(a, "Bearer ", 7)) {
		a += 7;
		while (*a == ' ')
			a++;
		if (*a)
			return a;
	}
	const char *k = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
	if (k && *k)
		return k;
	if (g->cfg.user_header[0]) {
		k = MHD_lookup_connection_value(c, MHD_HEADER_KIND, g->cfg.user_header);
		if (k && *k)
			return k;
	}
	return NULL;
}

/* Name the user and find its limits (mu held). Returns false when refused. */
static bool identify(gate_req *r, const char *key)
{
	gate_srv *g = r->g;
	const gate_key *k = key ? gate_key_find(&g->cfg, key) : NULL;
	long conc = g->cfg.user_concurrency, queue = g->cfg.user_queue, weight = 1;
	if (k) {
		snprintf(r->user, sizeof r->user, "%s", k->lim.name);
		conc = k->lim.concurrency ? k->lim.concurrency : conc;
		queue = k->lim.queue ? k->lim.queue : queue;
		weight = k->lim.weight;
	} else if (key) {
		if (g->cfg.require_keys)
			return false;
		/* Never the key itself: user names appear in metrics and logs. */
		snprintf(r->user, sizeof r->user, "key-%08" PRIx64, fnv1a(key) >> 32);
	} else {
		if (g->cfg.require_keys)
			return false;
		memcpy(r->user, r->client, sizeof r->client); /* both end in a NUL */
	}
	r->u = gate_fairq_user(&g->q, r->user, conc, queue, weight);
	if (r->u)
		r->u->refs++;
	return true;
}

/* ----------------------------------------------------------- the handlers */

static bool hop_by_hop(const char *k)
{
	static const char *const h[] = {"Connection",          "Keep-Alive", "Proxy-Connection",
	                                "Proxy-Authorization", "TE",         "Trailer",
	                                "Transfer-Encoding",   "Upgrade",    "Host",
	                                "Content-Length",      "Expect",     NULL};
	for (int i = 0; h[i]; i++)
		if (!strcasecmp(k, h[i]))
			return true;
	return false;
}

typedef struct {
	gate_req *r;
	size_t bytes;
	bool strip_creds;
	uint64_t cred;
	bool oom;
} hdr_walk;

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	hdr_walk *w = cls;
	w->bytes += strlen(k) + (v ? strlen(v) : 0) + 4;
	if (!v || hop_by_hop(k))
		return MHD_YES;
	bool cred = !strcasecmp(k, "Authorization") || !strcasecmp(k, "X-Api-Key") ||
	            (w->r->g->cfg.user_header[0] && !strcasecmp(k, w->r->g->cfg.user_header));
	if (cred) {
		/* The gate consumed the key when it manages keys; otherwise it goes on,
		 * and only requests with the same credentials share a batch. */
		if (w->strip_creds)
			return MHD_YES;
		w->cred = w->cred * 31 + fnv1a(v);
	}
	/* curl_slist_append copies the line: most fit on the stack. */
	size_t kl = strlen(k), vl = strlen(v), n = kl + vl + 3;
	char small[512];
	char *line = n <= sizeof small ? small : malloc(n);
	if (!line) {
		w->oom = true;
		return MHD_NO;
	}
	memcpy(line, k, kl);
	memcpy(line + kl, ": ", 2);
	memcpy(line + kl + 2, v, vl + 1);
	struct curl_slist *s = curl_slist_append(w->r->fwd, line);
	if (line != small)
		free(line);
	if (!s) {
		w->oom = true;
		return MHD_NO;
	}
	w->r->fwd = s;
	return MHD_YES;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	gate_req *r = gate_req_new(cls, c, uri);
	if (!r)
		return NULL;
	/* Only this loop's thread writes or reads its tracks' req: no lock. */
	gate_track *t = gate_conn_track(c);
	if (t)
		t->req = r;
	return r;
}

static void add_headers(struct MHD_Response *resp, const char *lines)
{
	if (!lines)
		return;
	const char *p = lines;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[8192];
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = '\0';
			char *colon = strchr(line, ':');
			if (colon) {
				*colon = '\0';
				char *v = colon + 1;
				while (*v == ' ')
					v++;
				MHD_add_response_header(resp, line, v);
			}
		}
		p += n + (nl ? 1 : 0);
	}
}

static enum MHD_Result send_answer(gate_req *r)
{
	struct MHD_Response *resp;
	if (r->state == RQ_WS_READY) {
		resp = gate_ws_response(r);
		if (resp)
			gate_track_ws(r->conn, r->g);
		r->upgraded = resp != NULL;
	} else if (r->state == RQ_STREAMING) {
		resp = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 16384, gate_req_stream_read, r, gate_req_stream_free);
		if (resp) {
			pthread_mutex_lock(&r->g->mu);
			r->refs++;
			pthread_mutex_unlock(&r->g->mu);
		}
	} else {
		resp = MHD_create_response_from_buffer(r->rlen, r->rbody, MHD_RESPMEM_MUST_COPY);
		r->bytes_out = r->rlen;
	}
	if (!resp)
		return MHD_NO;
	add_headers(resp, r->rhdrs);
	if (r->retry_after_s > 0) {
		char ra[24];
		snprintf(ra, sizeof ra, "%ld", r->retry_after_s);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	enum MHD_Result rc = MHD_queue_response(r->conn, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	gate_req_answered(r);
	return rc;
}

static void prepare_batching(gate_srv *g, gate_req *r, uint64_t cred)
{
	if (strcmp(r->method, "POST") != 0)
		return;
	const char *path = r->uri;
	size_t plen = strcspn(path, "?");
	int idx = -1;
	pthread_mutex_lock(&g->mu);
	for (int i = 0; i < g->cfg.nrules && idx < 0; i++)
		if (strlen(g->cfg.rule[i].path) == plen &&
		    !strncmp(g->cfg.rule[i].path, path, plen)) {
			idx = i;
			r->brule = g->cfg.rule[i];
		}
	pthread_mutex_unlock(&g->mu);
	if (idx < 0)
		return;
	char *key;
	long n = gate_batch_key(&r->brule, r->body ? r->body : "", r->len, &r->jroot, &key);
	if (n < 1)
		return;
	/* Requests share a batch only on the same endpoint, query and credentials. */
	size_t kl = strlen(key) + strlen(path) + 40;
	r->bkey = malloc(kl);
	if (r->bkey) {
		snprintf(r->bkey, kl, "%s %016" PRIx64 " %s", path, cred, key);
		r->rule = idx;
		r->ninputs = n;
	} else {
		json_decref(r->jroot);
		r->jroot = NULL;
	}
	free(key);
}

/* A request-target that is not "/path?query" (mu held): 400, nothing fetched. */
static void refuse_target(gate_req *r, gate_target_kind k, size_t at)
{
	if (k == GATE_TGT_NETWORK_PATH)
		gate_req_fail(r, 400, GATE_R_BAD_TARGET, 0,
		              "a request-target starting with // names a host; only /path?query "
		              "is forwarded");
	else if (k == GATE_TGT_BAD_BYTE)
		gate_req_fail(r, 400, GATE_R_BAD_TARGET, 0,
		              "the request-target has byte 0x%02x at offset %zu, which a path or "
		              "query never holds unencoded",
		              (unsigned)(unsigned char)r->uri[at], at);
	else
		gate_req_fail(r, 400, GATE_R_BAD_TARGET, 0,
		              "only origin-form request-targets (/path?query) are forwarded");
}

static enum MHD_Result first_call(gate_srv *g, gate_req *r, struct MHD_Connection *c,
                                  const char *method)
{
	snprintf(r->method, sizeof r->method, "%s", method);
	const gate_track *t = gate_conn_track(c);
	char xffb[GATE_CLIENT_LEN + 24];
	if (t)
		memcpy(r->client, t->client, sizeof r->client);
	else
		gate_conn_addr(c, r->client, xffb);
	const char *xff = t ? t->xff : xffb;
	gate_track_busy(c, g, false);
	pthread_mutex_lock(&g->mu);
	r->id = ++g->next_id;
	g->m.requests++;
	hdr_walk w = {.r = r, .strip_creds = g->cfg.nkeys > 0};
	MHD_get_connection_values(c, MHD_HEADER_KIND, on_header, &w);
	r->fwd = curl_slist_append(r->fwd, "Expect:");
	r->fwd = curl_slist_append(r->fwd, xff);
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	bool ok = identify(r, client_key(g, c));
	size_t at;
	gate_target_kind tk = gate_target_check(r->uri, &at);
	if (tk != GATE_TGT_OK)
		refuse_target(r, tk, at);
	else if (w.bytes > (size_t)g->cfg.max_header_bytes)
		gate_req_fail(r, 431, GATE_R_HEADERS_TOO_LARGE, 0,
		              "request headers are %zu bytes, more than max_header_bytes %ld",
		              w.bytes, g->cfg.max_header_bytes);
	else if (cl && strtoull(cl, NULL, 10) > (unsigned long long)g->cfg.max_body_bytes)
		gate_req_fail(r, 413, GATE_R_BODY_TOO_LARGE, 0,
		              "request body of %s bytes is more than max_body_bytes %ld", cl,
		              g->cfg.max_body_bytes);
	else if (!ok)
		gate_req_fail(
		    r, 401, GATE_R_NO_KEY, 0,
		    "an API key from the keys file is required (Authorization: Bearer KEY "
		    "or X-Api-Key)");
	else if (w.oom)
		gate_req_fail(r, 503, -1, 1, "out of memory");
	if (!ok && r->u) {
		r->u->refs--;
		r->u = NULL;
	}
	r->cred = w.cred;
	pthread_mutex_unlock(&g->mu);
	if (r->state == RQ_READY)
		return send_answer(r);
	return MHD_YES;
}

static enum MHD_Result on_body(gate_srv *g, gate_req *r, const char *data, size_t *size)
{
	size_t n = *size;
	*size = 0;
	if (r->too_big || r->state != RQ_READING)
		return MHD_YES;
	if (r->len + n > (size_t)g->cfg.max_body_bytes) {
		r->too_big = true;
		free(r->body);
		r->body = NULL;
		r->len = r->cap = 0;
		pthread_mutex_lock(&g->mu);
		gate_req_fail(r, 413, GATE_R_BODY_TOO_LARGE, 0,
		              "request body is more than max_body_bytes %ld",
		              g->cfg.max_body_bytes);
		pthread_mutex_unlock(&g->mu);
		/* MHD takes an answer only once the upload ends: the rest is read and
		 * dropped, within client_timeout_ms. */
		return MHD_YES;
	}
	if (r->len + n > r->cap) {
		size_t nc = r->cap ? r->cap : 4096;
		while (nc < r->len + n)
			nc *= 2;
		char *nb = realloc(r->body, nc);
		if (!nb)
			return MHD_NO;
		r->body = nb;
		r->cap = nc;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	gate_loop *l = cls;
	gate_srv *g = l->g;
	gate_req *r = *con_cls;
	if (!r)
		return MHD_NO;
	if (!r->method[0])
		return first_call(g, r, c, method);
	if (*upload_size)
		return on_body(g, r, upload, upload_size);
	if (r->state == RQ_READING && gate_ws_wanted(c, r->method)) {
		gate_track_busy(c, g, true);
		if (gate_ws_begin(l, r))
			return MHD_YES; /* suspended until the upstream answers */
		return send_answer(r);
	}
	if (r->state == RQ_READING) {
		prepare_batching(g, r, r->cred);
		gate_track_busy(c, g, true);
		pthread_mutex_lock(&g->mu);
		bool queued = gate_req_admit(g, r);
		pthread_mutex_unlock(&g->mu);
		/* Queued: the loop dispatches it as soon as this callback returns. */
		if (queued)
			return MHD_YES;
		return send_answer(r);
	}
	if (r->state == RQ_READY || r->state == RQ_STREAMING || r->state == RQ_WS_READY)
		return send_answer(r);
	return MHD_YES;
}

/* ------------------------------------------------------------- access log */

/*
 * The path as the log shows it. JSON strings are UTF-8, and a target
 * with bytes above 0x7e is refused anyway: those bytes are written as
 * %XX so that its line is written too. NULL when the path is ASCII.
 */
static char *log_path(const char *uri)
{
	size_t n = 0, hi = 0;
	for (; uri[n]; n++)
		hi += (unsigned char)uri[n] >= 0x80;
	char *out = hi ? malloc(n + 2 * hi + 1) : NULL;
	if (!out)
		return NULL;
	char *o = out;
	for (const unsigned char *p = (const unsigned char *)uri; *p; p++)
		o += *p >= 0x80 ? sprintf(o, "%%%02X", *p) : (*o = (char)*p, 1);
	*o = '\0';
	return out;
}

static void log_line(gate_srv *g, gate_req *r)
{
	if (!g->log)
		return;
	char *path = log_path(r->uri ? r->uri : "");
	double qw = r->t_sent && r->t_queued ? (double)(r->t_sent - r->t_queued) / 1e6 : 0;
	double up = r->t_sent && r->t_done ? (double)(r->t_done - r->t_sent) / 1e6 : 0;
	double total = r->t_done ? (double)(r->t_done - r->t_arrive) / 1e6 : 0;
	json_t *j = json_pack(
	    "{s:f,s:I,s:s,s:s,s:s,s:s,s:i,s:I,s:I,s:f,s:f,s:f}", "ts", gw_wall_s(), "id",
	    (json_int_t)r->id, "client", r->client, "user", r->user, "method", r->method, "path",
	    path     ? path
	    : r->uri ? r->uri
	             : "",
	    "status", r->status, "bytes_in", (json_int_t)r->len, "bytes_out",
	    (json_int_t)r->bytes_out, "queue_ms", qw, "upstream_ms", up, "total_ms", total);
	free(path);
	if (!j)
		return;
	if (r->batch_id) {
		json_object_set_new(j, "batch_id", json_integer((json_int_t)r->batch_id));
		json_object_set_new(j, "batch_size", json_integer(r->batch_size));
	}
	if (r->up >= 0)
		json_object_set_new(j, "upstream", json_string(g->up[r->up].cfg.url));
	if (r->url)
		json_object_set_new(j, "url", json_string(r->url));
	if (r->retried)
		json_object_set_new(j, "batch_retry", json_true());
	if (r->reason[0])
		json_object_set_new(j, "reason", json_string(r->reason));
	char *s = jsonw_tree_text(j, 0, 0);
	if (s) {
		fprintf(g->log, "%s\n", s);
		fflush(g->log);
	}
	free(s);
	json_decref(j);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	gate_srv *g = cls;
	gate_req *r = *con_cls;
	*con_cls = NULL;
	gate_track_busy(c, g, false);
	if (!r)
		return;
	pthread_mutex_lock(&g->mu);
	gate_track *t = gate_conn_track(c);
	if (t && t->req == r)
		t->req = NULL;
	if (r->status && !r->upgraded)
		log_line(g, r);
	gate_req_end(g, r);
	pthread_mutex_unlock(&g->mu);
}

/* --------------------------------------------------------------- starting */

static int bind_addr(const char *listen, struct sockaddr_storage *ss, char *err, size_t errlen,
                     bool *loopback)
{
	exporter_listen_addr a;
	gw_fail e2 = {0};
	if (exporter_parse_listen(listen, &a, &e2) != 0) {
		snprintf(err, errlen, "%s: %.199s", listen, e2.why_text);
		return -1;
	}
	memset(ss, 0, sizeof *ss);
	if (a.ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)a.port);
		inet_pton(AF_INET6, a.host, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)a.port);
		inet_pton(AF_INET, a.host, &s4->sin_addr);
	}
	*loopback = gate_is_loopback(a.host);
	return 0;
}

static int bound_port(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	return di ? di->port : -1;
}

static socklen_t addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* A listening socket on ss (SO_REUSEPORT when shared by several loops). */
static int listen_socket(const struct sockaddr_storage *ss, bool reuseport)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if ((reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
	    bind(fd, (const struct sockaddr *)ss, addr_len(ss)) != 0 || listen(fd, 1024) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static in_port_t port_of(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6
	           ? ((const struct sockaddr_in6 *)(const void *)ss)->sin6_port
	           : ((const struct sockaddr_in *)(const void *)ss)->sin_port;
}

/*
 * A port given by number is tried with a plain socket first: that bind
 * fails, as it should, when anyone holds the port, even another process
 * sharing it with SO_REUSEPORT, which the loops' sockets would join. Port
 * 0 is left to the first loop's socket, which the kernel gives a free one.
 */
static int claim_port(const struct sockaddr_storage *ss)
{
	if (!port_of(ss))
		return 0;
	int fd = listen_socket(ss, false);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int start_loop_daemon(gate_srv *g, gate_loop *l, struct sockaddr_storage *ss)
{
	int fd = listen_socket(ss, g->nloops > 1);
	if (fd < 0)
		return -1;
	socklen_t len = sizeof *ss;
	if (!port_of(ss) && getsockname(fd, (struct sockaddr *)ss, &len) != 0) {
		close(fd);
		return -1;
	}
	/* MHD's own messages stay off: every answer is in the access log. Its
	 * error log reaches only gate_mhd_log, which prints nothing and answers
	 * in place of one of libmicrohttpd's own answers (conn.c). */
	/* No threads of its own: the gate's loop runs it (loop.c). */
	unsigned flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO |
	                 MHD_ALLOW_UPGRADE | MHD_USE_ERROR_LOG;
	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The pool holds the request line and headers plus read buffers. */
	size_t pool = (size_t)g->cfg.max_header_bytes + 16384;
	unsigned timeout_s = (unsigned)((g->cfg.client_timeout_ms + 999) / 1000);
	/* max_connections is for the gate: each loop takes its share (the
	 * kernel spreads connections over the loops about evenly). */
	unsigned per_loop = (unsigned)((g->cfg.max_connections + g->nloops - 1) / g->nloops);
	l->d = MHD_start_daemon(
	    flags, 0, gate_on_accept, g, on_request, l, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, l, MHD_OPTION_NOTIFY_COMPLETED, on_completed, g,
	    MHD_OPTION_NOTIFY_CONNECTION, gate_on_connection, g, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    pool, MHD_OPTION_CONNECTION_LIMIT, per_loop, MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
	    MHD_OPTION_EXTERNAL_LOGGER, gate_mhd_log, l, MHD_OPTION_END);
	if (!l->d) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return 0;
}

static void stop_daemons(gate_srv *g)
{
	if (g->md)
		MHD_stop_daemon(g->md);
	g->md = NULL;
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (l->d)
			MHD_stop_daemon(l->d);
		l->d = NULL;
		gate_ws_reap(l);
	}
}

/* Every failure to start says where to look next. */
static const char listen_hint[] = N_("pick another port with --listen");

int gate_server_start(gate_srv *g, gw_fail *err)
{
	struct sockaddr_storage ss;
	bool lo;
	char e[sizeof err->why];
	if (bind_addr(g->cfg.listen, &ss, e, sizeof e, &lo) != 0)
		return gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint, "%s", e);
	if (claim_port(&ss) != 0)
		return gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint, "%s: cannot listen: %s",
		                   g->cfg.listen, strerror(errno));
	for (int i = 0; i < g->nloops; i++)
		if (start_loop_daemon(g, &g->loops[i], &ss) != 0) {
			gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint, "%s: cannot listen: %s",
			            g->cfg.listen, strerror(errno));
			stop_daemons(g);
			return GW_EXIT_ENV;
		}
	g->port = ntohs(port_of(&ss));
	if (g->cfg.metrics_listen[0]) {
		struct sockaddr_storage ms;
		bool mlo;
		if (bind_addr(g->cfg.metrics_listen, &ms, e, sizeof e, &mlo) != 0) {
			stop_daemons(g);
			return gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint, "%s", e);
		}
		unsigned mf = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
		if (ms.ss_family == AF_INET6)
			mf |= MHD_USE_IPv6;
		g->md = MHD_start_daemon(mf, 0, gate_on_accept, g, gate_metrics_serve, g,
		                         MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ms,
		                         MHD_OPTION_CONNECTION_LIMIT, 64U,
		                         MHD_OPTION_CONNECTION_TIMEOUT, 10U, MHD_OPTION_END);
		if (!g->md) {
			gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint, "%s: cannot listen: %s",
			            g->cfg.metrics_listen, strerror(errno));
			stop_daemons(g);
			return GW_EXIT_ENV;
		}
		g->metrics_port = bound_port(g->md);
	}
	pthread_cond_init(&g->cv, NULL);
	if (gate_loop_start(g) != 0) {
		gw_fail_set(err, GW_EXIT_ENV, "gate", listen_hint,
		            "%s: cannot start the event loops: %s", g->cfg.listen, strerror(errno));
		gate_loop_stop(g);
		stop_daemons(g);
		return GW_EXIT_ENV;
	}
	g->watchdog_running = pthread_create(&g->watchdog, NULL, gate_watchdog_main, g) == 0;
	return 0;
}

void gate_server_quiesce(gate_srv *g)
{
	gate_loop_quiesce(g);
}

void gate_server_stop(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	g->stopping = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (g->watchdog_running)
		pthread_join(g->watchdog, NULL);
	g->watchdog_running = false;
	/* A daemon is its loop's: end the loops before stopping them. */
	gate_loop_stop(g);
	stop_daemons(g);
}
