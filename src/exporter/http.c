/*
 * http.c - the exporter's HTTP face on libmicrohttpd.
 *
 * Three exact paths (/, /metrics, /health), GET and HEAD only; the path is
 * only ever compared with those strings, so nothing reaches the file system.
 * Abuse limits: MHD's per-connection memory pool bounds the request line and
 * headers (431 beyond it), a connection cap, an idle timeout, and a watchdog
 * that shuts down any connection that has not completed a request within the
 * timeout even while it keeps trickling bytes (slowloris), which MHD's idle
 * timeout alone would allow.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include "util/mhd_dl.h"
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "exporter/http.h"
#include "exporter/page.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define CONTENT_TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

/* ------------------------------------------------------------ pure helpers */

int exporter_parse_listen(const char *s, exporter_listen_addr *out, gw_fail *err)
{
	memset(out, 0, sizeof *out);
	const char *colon, *host = s;
	size_t hostlen;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':') {
			gw_fail_set(err, GW_EXIT_USAGE, s, NULL, "expected [IPV6]:PORT");
			return -1;
		}
		host = s + 1;
		hostlen = (size_t)(close - host);
		colon = close + 1;
		out->ipv6 = true;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			gw_fail_set(err, GW_EXIT_USAGE, s, NULL, "expected ADDRESS:PORT");
			return -1;
		}
		hostlen = (size_t)(colon - s);
	}
	if (hostlen == 0) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, "no address before the port");
		return -1;
	}
	if (hostlen >= sizeof out->host) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, "address too long");
		return -1;
	}
	memcpy(out->host, host, hostlen);
	out->host[hostlen] = '\0';
	long long port;
	if (!gw_parse_int(colon + 1, 0, 65535, &port)) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL,
		            "port '%s' is not a number from 0 to 65535", colon + 1);
		return -1;
	}
	out->port = (int)port;
	if (!out->ipv6 && !strcmp(out->host, "localhost"))
		snprintf(out->host, sizeof out->host, "127.0.0.1");
	unsigned char tmp[sizeof(struct in6_addr)];
	if (inet_pton(out->ipv6 ? AF_INET6 : AF_INET, out->host, tmp) != 1) {
		gw_fail_set(err, GW_EXIT_USAGE, s, NULL, "'%s' is not a numeric %s address",
		            out->host, out->ipv6 ? "IPv6" : "IPv4");
		return -1;
	}
	return 0;
}

/* Parse a qvalue ("0", "0.5", "1.000"); false when malformed. */
static bool parse_qvalue(const char *p, size_t n, bool *zero)
{
	if (n == 0 || n > 5 || (p[0] != '0' && p[0] != '1'))
		return false;
	bool nonzero = p[0] == '1';
	if (n > 1) {
		if (p[1] != '.')
			return false;
		for (size_t i = 2; i < n; i++) {
			if (p[i] < '0' || p[i] > '9' || (p[0] == '1' && p[i] != '0'))
				return false;
			if (p[i] != '0')
				nonzero = true;
		}
	}
	*zero = !nonzero;
	return true;
}

bool exporter_accepts_gzip(const char *h)
{
	if (!h)
		return false;
	int gzip = -1, star = -1; /* -1 unseen, 0 refused, 1 accepted */
	const char *p = h;
	while (*p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *tok = p;
		while (*p && *p != ',' && *p != ';' && *p != ' ' && *p != '\t')
			p++;
		size_t toklen = (size_t)(p - tok);
		bool zero = false;
		/* Parameters: only q matters; a malformed q makes the coding unusable. */
		while (*p && *p != ',') {
			if (*p == ';') {
				p++;
				while (*p == ' ' || *p == '\t')
					p++;
				const char *par = p;
				while (*p && *p != ',' && *p != ';')
					p++;
				size_t parlen = (size_t)(p - par);
				while (parlen &&
				       (par[parlen - 1] == ' ' || par[parlen - 1] == '\t'))
					parlen--;
				if (parlen >= 2 && (par[0] == 'q' || par[0] == 'Q') &&
				    par[1] == '=' && !parse_qvalue(par + 2, parlen - 2, &zero))
					zero = true;
			} else {
				p++;
			}
		}
		if (!toklen)
			continue;
		int verdict = zero ? 0 : 1;
		if ((toklen == 4 && !strncasecmp(tok, "gzip", 4)) ||
		    (toklen == 6 && !strncasecmp(tok, "x-gzip", 6)))
			gzip = verdict;
		else if (toklen == 1 && tok[0] == '*')
			star = verdict;
	}
	return gzip == 1 || (gzip == -1 && star == 1);
}

exporter_route exporter_route_request(const char *method, const char *url)
{
	if (!method || (strcmp(method, "GET") && strcmp(method, "HEAD")))
		return EXPORTER_ROUTE_BAD_METHOD;
	if (!url)
		return EXPORTER_ROUTE_NOT_FOUND;
	if (!strcmp(url, "/"))
		return EXPORTER_ROUTE_INDEX;
	if (!strcmp(url, "/metrics"))
		return EXPORTER_ROUTE_METRICS;
	if (!strcmp(url, "/health"))
		return EXPORTER_ROUTE_HEALTH;
	return EXPORTER_ROUTE_NOT_FOUND;
}

void exporter_server_opts_default(exporter_server_opts *o)
{
	memset(o, 0, sizeof *o);
	snprintf(o->addr.host, sizeof o->addr.host, "127.0.0.1");
	o->addr.port = 9400;
	o->max_connections = 256;
	o->timeout_s = 10;
	o->memory_limit = 16 * 1024;
	o->stale_ns = 10LL * 1000000000LL;
	o->version = "";
}

/* ------------------------------------------------------- connection watchdog */

typedef struct track {
	struct track *prev, *next;
	int fd;
	int64_t deadline_ns;
	bool shut;
} track;

struct exporter_server {
	struct MHD_Daemon *d;
	exporter_board *board;
	exporter_server_opts o;
	int port;
	pthread_mutex_t mu; /* guards the track list; held while a tracked fd may be used */
	track *tracks;
	pthread_t watchdog;
	pthread_cond_t cv;
	bool stopping, watchdog_running;
};

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	exporter_server *s = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		track *t = calloc(1, sizeof *t);
		if (!t || !ci) {
			free(t);
			return;
		}
		t->fd = ci->connect_fd;
		t->deadline_ns = gw_mono_ns() + (int64_t)s->o.timeout_s * 1000000000LL;
		pthread_mutex_lock(&s->mu);
		t->next = s->tracks;
		if (s->tracks)
			s->tracks->prev = t;
		s->tracks = t;
		pthread_mutex_unlock(&s->mu);
		*socket_context = t;
		return;
	}
	/* CLOSED comes before MHD closes the fd, so the watchdog can never
	 * shut down a reused descriptor: it only touches fds still listed. */
	track *t = *socket_context;
	if (!t)
		return;
	pthread_mutex_lock(&s->mu);
	if (t->prev)
		t->prev->next = t->next;
	else
		s->tracks = t->next;
	if (t->next)
		t->next->prev = t->prev;
	pthread_mutex_unlock(&s->mu);
	free(t);
	*socket_context = NULL;
}

/* A request completed: the connection gets a new deadline for the next one. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	exporter_server *s = cls;
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (!ci || !ci->socket_context)
		return;
	track *t = ci->socket_context;
	pthread_mutex_lock(&s->mu);
	t->deadline_ns = gw_mono_ns() + (int64_t)s->o.timeout_s * 1000000000LL;
	pthread_mutex_unlock(&s->mu);
}

static void *watchdog_main(void *arg)
{
	exporter_server *s = arg;
	pthread_mutex_lock(&s->mu);
	while (!s->stopping) {
		int64_t now = gw_mono_ns();
		for (track *t = s->tracks; t; t = t->next)
			if (!t->shut && now > t->deadline_ns) {
				/* MHD sees the hang-up and closes the connection itself. */
				shutdown(t->fd, SHUT_RDWR);
				t->shut = true;
			}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---------------------------------------------------------------- handler */

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *ctype,
                                 const char *body)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static void page_release(void *cls)
{
	exporter_page_unref(cls);
}

static enum MHD_Result send_metrics(exporter_server *s, struct MHD_Connection *c)
{
	exporter_page *p = exporter_board_get(s->board);
	if (!p)
		return send_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		                 "no sample yet\n");
	size_t len;
	const char *body = exporter_page_text(p, &len);
	bool gz = false;
	if (exporter_accepts_gzip(
	        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING))) {
		size_t glen;
		const char *g = exporter_page_gzip(p, &glen);
		if (g) {
			body = g;
			len = glen;
			gz = true;
		}
	}
	/* The response borrows the page's bytes and drops the reference when done. */
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback_cls(
	    len, (void *)body, page_release, p);
	if (!r) {
		exporter_page_unref(p);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, CONTENT_TYPE_METRICS);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result send_health(exporter_server *s, struct MHD_Connection *c)
{
	exporter_page *p = exporter_board_get(s->board);
	char msg[96];
	unsigned status = MHD_HTTP_OK;
	if (!p) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(msg, sizeof msg, "no sample yet\n");
	} else {
		int64_t age = gw_mono_ns() - exporter_page_mono_ns(p);
		exporter_page_unref(p);
		if (age > s->o.stale_ns) {
			status = MHD_HTTP_SERVICE_UNAVAILABLE;
			snprintf(msg, sizeof msg, "stale: last sample %lld ms ago\n",
			         (long long)(age / 1000000));
		} else {
			snprintf(msg, sizeof msg, "OK\n");
		}
	}
	return send_text(c, status, "text/plain; charset=utf-8", msg);
}

static enum MHD_Result send_index(exporter_server *s, struct MHD_Connection *c)
{
	char html[512];
	snprintf(html, sizeof html,
	         "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>gpuwhy exporter"
	         "</title></head>\n<body><h1>gpuwhy exporter</h1>\n<p>Version %s</p>\n<ul>\n"
	         "<li><a href=\"/metrics\">/metrics</a>: Prometheus metrics (dcgm-exporter "
	         "names plus gpuwhy_*)</li>\n<li><a href=\"/health\">/health</a>: OK while "
	         "sampling</li>\n</ul>\n</body></html>\n",
	         s->o.version);
	return send_text(c, MHD_HTTP_OK, "text/html; charset=utf-8", html);
}

/* Whether the request announces a body (any Content-Length but 0, or any Transfer-Encoding). */
static bool request_has_body(struct MHD_Connection *c)
{
	if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return true;
	const char *cl =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl)
		return false;
	bool zero = false;
	while (*cl == ' ' || *cl == '\t')
		cl++;
	for (; *cl == '0'; cl++)
		zero = true;
	while (*cl == ' ' || *cl == '\t')
		cl++;
	return !zero || *cl != '\0';
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
	exporter_server *s = cls;
	/*
	 * MHD closes the connection after any response queued on the first call,
	 * which comes before it knows the request is complete. A request without
	 * a body is answered on the second call, so the connection stays open for
	 * the next (keep-alive, pipelining); one announcing a body is answered at
	 * once, and MHD closes the connection instead of reading an upload nobody
	 * asked for.
	 */
	static int seen_marker;
	if (!*con_cls && !request_has_body(c)) {
		*con_cls = &seen_marker;
		return MHD_YES;
	}
	*upload_data_size = 0;
	switch (exporter_route_request(method, url)) {
	case EXPORTER_ROUTE_INDEX:
		return send_index(s, c);
	case EXPORTER_ROUTE_METRICS:
		return send_metrics(s, c);
	case EXPORTER_ROUTE_HEALTH:
		return send_health(s, c);
	case EXPORTER_ROUTE_BAD_METHOD:
		return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
		                 "method not allowed: use GET or HEAD\n");
	case EXPORTER_ROUTE_NOT_FOUND:
		break;
	}
	return send_text(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
	                 "404 page not found\n");
}

/*
 * No percent-decoding: the path is compared as sent, so "/metrics%00" or
 * "/%6detrics" are not /metrics. Prometheus asks for the literal path.
 */
static size_t keep_escapes(void *cls, struct MHD_Connection *c, char *s)
{
	return strlen(s);
}

/* ------------------------------------------------------------------ start */

static int listen_socket(const exporter_listen_addr *a, int *port_out, char *why, size_t whylen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof ss);
	if (a->ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)a->port);
		inet_pton(AF_INET6, a->host, &s6->sin6_addr);
		sl = sizeof *s6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)a->port);
		inet_pton(AF_INET, a->host, &s4->sin_addr);
		sl = sizeof *s4;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		return -1;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (a->ipv6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, SOMAXCONN) < 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	struct sockaddr_storage got;
	socklen_t gl = sizeof got;
	*port_out = a->port;
	if (getsockname(fd, (struct sockaddr *)&got, &gl) == 0)
		*port_out =
		    ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
		                                    : ((struct sockaddr_in *)&got)->sin_port);
	return fd;
}

int exporter_server_start(const exporter_server_opts *o, exporter_board *board,
                          exporter_server **out)
{
	char what[96], why[160];
	snprintf(what, sizeof what, "--listen %s%s%s:%d", o->addr.ipv6 ? "[" : "", o->addr.host,
	         o->addr.ipv6 ? "]" : "", o->addr.port);
	exporter_server *s = calloc(1, sizeof *s);
	if (!s)
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "out of memory");
	s->o = *o;
	s->board = board;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	const char *lib = gw_mhd_error();
	if (lib) {
		exporter_server_stop(s);
		return gw_error(GW_EXIT_ENV, "exporter", NULL, "%s", lib);
	}
	int fd = listen_socket(&o->addr, &s->port, why, sizeof why);
	if (fd < 0) {
		exporter_server_stop(s);
		return gw_error(GW_EXIT_ENV, what,
		                N_("is another exporter running? pick another port with --listen"),
		                "cannot listen: %s", why);
	}
	s->d = MHD_start_daemon(
	    MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET,
	    (MHD_socket)fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->memory_limit,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, s, MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL, MHD_OPTION_END);
	if (!s->d) {
		close(fd);
		exporter_server_stop(s);
		return gw_error(GW_EXIT_ENV, what, NULL, "cannot start the HTTP server");
	}
	if (pthread_create(&s->watchdog, NULL, watchdog_main, s) == 0)
		s->watchdog_running = true;
	*out = s;
	return 0;
}

int exporter_server_port(const exporter_server *s)
{
	return s->port;
}

void exporter_server_stop(exporter_server *s)
{
	if (!s)
		return;
	if (s->d)
		MHD_stop_daemon(s->d); /* closes the listening socket and every connection */
	if (s->watchdog_running) {
		pthread_mutex_lock(&s->mu);
		s->stopping = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->watchdog, NULL);
	}
	while (s->tracks) {
		track *t = s->tracks;
		s->tracks = t->next;
		free(t);
	}
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
