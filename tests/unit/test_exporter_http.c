/*
 * test_exporter_http.c - the exporter's HTTP server in-process, on an
 * ephemeral loopback port: routes, gzip, HEAD, health, and abuse (oversized
 * headers, slowloris, the connection cap, other methods, path traversal).
 */
#include <stdbool.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "exporter/buf.h"
#include "exporter/http.h"
#include "exporter/page.h"
#include "util/err.h"
#include "util/timeutil.h"
#include "util/strbuf.h"

#define TIMEOUT_S 2
#define MAX_CONN 16

typedef struct {
	exporter_board *board;
	exporter_server *server;
	int port;
	char *text;
	size_t len;
} fixture;

typedef struct {
	int status;
	char headers[4096];
	char *body;
	size_t body_len;
	bool closed; /* the server closed the connection */
} reply;

static char *metrics_text(size_t *len)
{
	exporter_buf b = {0};
	gw_sb_puts(&b, "# HELP gpuwhy_test A test family.\n# TYPE gpuwhy_test gauge\n");
	for (int i = 0; i < 3000; i++) {
		gw_sb_puts(&b, "gpuwhy_test{i=\"");
		exporter_buf_int(&b, i);
		gw_sb_puts(&b, "\"} ");
		exporter_buf_fixed6(&b, i * 0.5);
		gw_sb_puts(&b, "\n");
	}
	*len = b.len;
	return b.p;
}

static void publish_text(fixture *f, int64_t mono)
{
	char *copy = malloc(f->len + 1);
	memcpy(copy, f->text, f->len + 1);
	exporter_board_publish(f->board, exporter_page_new(copy, f->len, gw_wall_s(), mono));
}

static int setup(void **state)
{
	signal(SIGPIPE, SIG_IGN);
	fixture *f = calloc(1, sizeof *f);
	f->text = metrics_text(&f->len);
	f->board = exporter_board_new();
	publish_text(f, gw_mono_ns());
	exporter_server_opts o;
	exporter_server_opts_default(&o);
	o.addr.port = 0;
	o.timeout_s = TIMEOUT_S;
	o.max_connections = MAX_CONN;
	o.version = "test";
	assert_int_equal(exporter_server_start(&o, f->board, &f->server), 0);
	f->port = exporter_server_port(f->server);
	assert_true(f->port > 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	exporter_server_stop(f->server);
	exporter_board_free(f->board);
	free(f->text);
	free(f);
	return 0;
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return; /* the server may close early on purpose */
		p += w;
		n -= (size_t)w;
	}
}

/* Read until the server closes or wait_ms passes without data. */
static size_t read_until_close(int fd, char **out, int wait_ms, bool *closed)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	*closed = false;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, wait_ms) <= 0)
			break;
		if (len + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
		if (r <= 0) {
			*closed = true;
			break;
		}
		len += (size_t)r;
	}
	buf[len] = '\0';
	*out = buf;
	return len;
}

static void parse_reply(char *raw, size_t len, reply *r)
{
	memset(r, 0, sizeof *r);
	sscanf(raw, "HTTP/1.%*d %d", &r->status);
	char *end = strstr(raw, "\r\n\r\n");
	if (!end)
		return;
	size_t hl = (size_t)(end - raw);
	if (hl >= sizeof r->headers)
		hl = sizeof r->headers - 1;
	memcpy(r->headers, raw, hl);
	r->headers[hl] = '\0';
	r->body = end + 4;
	r->body_len = len - (size_t)(r->body - raw);
}

/* One request on a fresh connection ("Connection: close" is added). */
static char *request_wait(int port, const char *method, const char *path, const char *extra,
                          reply *r, int wait_ms)
{
	int fd = connect_to(port);
	char req[1024];
	snprintf(req, sizeof req,
	         "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n", method, path,
	         extra ? extra : "");
	send_all(fd, req, strlen(req));
	char *raw;
	bool closed;
	size_t len = read_until_close(fd, &raw, wait_ms, &closed);
	close(fd);
	parse_reply(raw, len, r);
	r->closed = closed;
	return raw;
}

static char *request(int port, const char *method, const char *path, const char *extra, reply *r)
{
	return request_wait(port, method, path, extra, r, 5000);
}

static bool has_header(const reply *r, const char *line)
{
	return strcasestr(r->headers, line) != NULL;
}

static void expect_metrics_ok(fixture *f)
{
	reply r;
	char *raw = request(f->port, "GET", "/metrics", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, f->len);
	assert_memory_equal(r.body, f->text, f->len);
	free(raw);
}

static void test_metrics_get_head(void **state)
{
	fixture *f = *state;
	reply r;
	char *raw = request(f->port, "GET", "/metrics", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(has_header(&r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8"));
	assert_false(has_header(&r, "Content-Encoding"));
	assert_int_equal(r.body_len, f->len);
	assert_memory_equal(r.body, f->text, f->len);
	free(raw);
	/* Query strings do not change the route. */
	raw = request(f->port, "GET", "/metrics?collect[]=x", NULL, &r);
	assert_int_equal(r.status, 200);
	free(raw);
	raw = request(f->port, "HEAD", "/metrics", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	char want[64];
	snprintf(want, sizeof want, "Content-Length: %zu", f->len);
	assert_true(has_header(&r, want));
	free(raw);
}

static void test_gzip(void **state)
{
	fixture *f = *state;
	reply r;
	char *raw = request(f->port, "GET", "/metrics", "Accept-Encoding: gzip\r\n", &r);
	assert_int_equal(r.status, 200);
	assert_true(has_header(&r, "Content-Encoding: gzip"));
	assert_true(has_header(&r, "Vary: Accept-Encoding"));
	assert_true(r.body_len < f->len / 3);
	z_stream z;
	memset(&z, 0, sizeof z);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	char *out = malloc(f->len + 16);
	z.next_in = (Bytef *)r.body;
	z.avail_in = (uInt)r.body_len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)(f->len + 16);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, f->len);
	assert_memory_equal(out, f->text, f->len);
	inflateEnd(&z);
	free(out);
	free(raw);
	raw = request(f->port, "GET", "/metrics", "Accept-Encoding: gzip;q=0, identity\r\n", &r);
	assert_false(has_header(&r, "Content-Encoding"));
	assert_int_equal(r.body_len, f->len);
	free(raw);
}

static void test_health_and_index(void **state)
{
	fixture *f = *state;
	reply r;
	char *raw = request(f->port, "GET", "/health", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "OK\n");
	free(raw);
	raw = request(f->port, "GET", "/", NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(has_header(&r, "Content-Type: text/html"));
	assert_non_null(strstr(r.body, "href=\"/metrics\""));
	free(raw);
	/* A sampler that stopped publishing makes /health fail. */
	publish_text(f, gw_mono_ns() - 60LL * 1000000000LL);
	raw = request(f->port, "GET", "/health", NULL, &r);
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body, "stale: last sample"));
	free(raw);
	publish_text(f, gw_mono_ns());
	raw = request(f->port, "GET", "/health", NULL, &r);
	assert_int_equal(r.status, 200);
	free(raw);
}

static void test_not_found_and_traversal(void **state)
{
	fixture *f = *state;
	const char *paths[] = {"/metrics/",
	                       "/metricsX",
	                       "//metrics",
	                       "/../../etc/passwd",
	                       "/%2e%2e/%2e%2e/etc/passwd",
	                       "/etc/passwd",
	                       "/health/..",
	                       "/index.html",
	                       "/metrics%00",
	                       "/debug/pprof/"};
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		reply r;
		char *raw = request(f->port, "GET", paths[i], NULL, &r);
		if (r.status != 404) {
			print_error("%s: status %d\n", paths[i], r.status);
			fail();
		}
		assert_null(strstr(r.body, "root:"));
		free(raw);
	}
	expect_metrics_ok(f);
}

static void test_other_methods(void **state)
{
	fixture *f = *state;
	const char *methods[] = {"POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH", "FOO"};
	for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
		reply r;
		char *raw = request(f->port, methods[i], "/metrics", NULL, &r);
		if (r.status != 405) {
			print_error("%s: status %d\n", methods[i], r.status);
			fail();
		}
		assert_true(has_header(&r, "Allow: GET, HEAD"));
		free(raw);
	}
	/* A POST with a body: answered without reading it, then closed. */
	int fd = connect_to(f->port);
	const char *req = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n";
	send_all(fd, req, strlen(req));
	char junk[4096];
	memset(junk, 'x', sizeof junk);
	send_all(fd, junk, sizeof junk);
	char *raw;
	bool closed;
	size_t len = read_until_close(fd, &raw, 5000, &closed);
	reply r;
	parse_reply(raw, len, &r);
	assert_int_equal(r.status, 405);
	assert_true(closed);
	close(fd);
	free(raw);
	expect_metrics_ok(f);
}

static void test_oversized_headers(void **state)
{
	fixture *f = *state;
	size_t n = 64 * 1024;
	char *big = malloc(n + 64);
	strcpy(big, "X-Big: ");
	memset(big + 7, 'a', n);
	strcpy(big + 7 + n, "\r\n");
	reply r;
	char *raw = request(f->port, "GET", "/metrics", big, &r);
	/* Refused (431, or 413/414 for MHD's wording) and closed; never served. */
	assert_true(r.status == 431 || r.status == 413 || r.status == 414 || r.status == 0);
	assert_true(r.closed);
	free(raw);
	free(big);
	/* Many headers within the limit still work. */
	char many[4096] = "";
	for (int i = 0; i < 50; i++) {
		char h[64];
		snprintf(h, sizeof h, "X-H%d: v\r\n", i);
		strcat(many, h);
	}
	raw = request(f->port, "GET", "/metrics", many, &r);
	assert_int_equal(r.status, 200);
	free(raw);
	expect_metrics_ok(f);
}

/* A client trickling header bytes is cut off after the request timeout. */
static void test_slowloris(void **state)
{
	fixture *f = *state;
	int fd = connect_to(f->port);
	send_all(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32);
	int64_t start = gw_mono_ns(), limit = start + (TIMEOUT_S + 4) * 1000000000LL;
	bool closed = false;
	while (!closed && gw_mono_ns() < limit) {
		send_all(fd, "X-A: b\r\n", 8); /* keeps MHD's idle timer from firing */
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 300) > 0) {
			char buf[256];
			ssize_t rr = recv(fd, buf, sizeof buf, 0);
			closed = rr <= 0;
		}
	}
	close(fd);
	assert_true(closed);
	double took = (double)(gw_mono_ns() - start) / 1e9;
	assert_true(took >= TIMEOUT_S - 0.5);
	expect_metrics_ok(f);
}

/*
 * A flood of idle connections past the cap cannot lock scrapes out: each
 * accepted one is cut at the request timeout, freeing its slot, and a real
 * request waiting behind the flood is answered.
 */
static void test_connection_cap(void **state)
{
	fixture *f = *state;
	enum { FLOOD = MAX_CONN * 3 };
	int fds[FLOOD];
	for (int i = 0; i < FLOOD; i++)
		fds[i] = connect_to(f->port);
	int64_t start = gw_mono_ns();
	reply r;
	int wait_ms = (FLOOD / MAX_CONN + 2) * (TIMEOUT_S + 1) * 1000;
	char *raw = request_wait(f->port, "GET", "/metrics", NULL, &r, wait_ms);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, f->len);
	free(raw);
	/* It had to wait for the flood's slots to time out, not forever. */
	double took = (double)(gw_mono_ns() - start) / 1e9;
	assert_true(took < (FLOOD / MAX_CONN + 1) * (TIMEOUT_S + 1));
	for (int i = 0; i < FLOOD; i++)
		close(fds[i]);
	expect_metrics_ok(f);
}

static void test_parse_listen(void **state)
{
	exporter_listen_addr a;
	gw_fail err = {0};
	assert_int_equal(exporter_parse_listen("127.0.0.1:9400", &a, &err), 0);
	assert_int_equal(err.code, 0);
	assert_string_equal(a.host, "127.0.0.1");
	assert_int_equal(a.port, 9400);
	assert_false(a.ipv6);
	assert_int_equal(exporter_parse_listen("0.0.0.0:0", &a, &err), 0);
	assert_int_equal(a.port, 0);
	assert_int_equal(exporter_parse_listen("localhost:19400", &a, &err), 0);
	assert_string_equal(a.host, "127.0.0.1");
	assert_int_equal(exporter_parse_listen("[::1]:9400", &a, &err), 0);
	assert_true(a.ipv6);
	assert_string_equal(a.host, "::1");
	assert_int_equal(exporter_parse_listen(":9400", &a, &err), -1);
	/* The address as what, the reason as why; the callers name the option. */
	assert_int_equal(err.code, GW_EXIT_USAGE);
	assert_string_equal(err.what, ":9400");
	assert_string_equal(err.why, "no address before the port");
	assert_string_equal(err.why_text, err.why);
	assert_string_equal(err.hint, "");
	assert_int_equal(exporter_parse_listen("9400", &a, &err), -1);
	assert_int_equal(exporter_parse_listen("127.0.0.1:65536", &a, &err), -1);
	assert_string_equal(err.why, "port '65536' is not a number from 0 to 65535");
	assert_int_equal(exporter_parse_listen("127.0.0.1:", &a, &err), -1);
	assert_int_equal(exporter_parse_listen("127.0.0.1:94x", &a, &err), -1);
	assert_int_equal(exporter_parse_listen("example.com:9400", &a, &err), -1);
	assert_string_equal(err.what, "example.com:9400");
	assert_string_equal(err.why, "'example.com' is not a numeric IPv4 address");
	assert_int_equal(exporter_parse_listen("[::1]:x", &a, NULL), -1);
	assert_int_equal(exporter_parse_listen("[::1:9400", &a, &err), -1);
	assert_int_equal(exporter_parse_listen("[nope]:9400", &a, &err), -1);
}

static void test_accepts_gzip(void **state)
{
	assert_true(exporter_accepts_gzip("gzip"));
	assert_true(exporter_accepts_gzip("GZip"));
	assert_true(exporter_accepts_gzip("deflate, gzip;q=0.5"));
	assert_true(exporter_accepts_gzip("identity;q=1, *;q=0.1"));
	assert_true(exporter_accepts_gzip("x-gzip"));
	assert_true(exporter_accepts_gzip("gzip ; q=1.000"));
	assert_false(exporter_accepts_gzip(NULL));
	assert_false(exporter_accepts_gzip(""));
	assert_false(exporter_accepts_gzip("identity"));
	assert_false(exporter_accepts_gzip("gzip;q=0"));
	assert_false(exporter_accepts_gzip("gzip;q=0.000"));
	assert_false(exporter_accepts_gzip("*;q=1, gzip;q=0"));
	assert_false(exporter_accepts_gzip("gzip;q=2"));
	assert_false(exporter_accepts_gzip("gzip;q=abc"));
	assert_false(exporter_accepts_gzip("gzipx"));
	assert_false(exporter_accepts_gzip("br, deflate"));
}

static void test_route(void **state)
{
	assert_int_equal(exporter_route_request("GET", "/metrics"), EXPORTER_ROUTE_METRICS);
	assert_int_equal(exporter_route_request("HEAD", "/health"), EXPORTER_ROUTE_HEALTH);
	assert_int_equal(exporter_route_request("GET", "/"), EXPORTER_ROUTE_INDEX);
	assert_int_equal(exporter_route_request("GET", "/Metrics"), EXPORTER_ROUTE_NOT_FOUND);
	assert_int_equal(exporter_route_request("GET", ""), EXPORTER_ROUTE_NOT_FOUND);
	assert_int_equal(exporter_route_request("GET", NULL), EXPORTER_ROUTE_NOT_FOUND);
	assert_int_equal(exporter_route_request("get", "/metrics"), EXPORTER_ROUTE_BAD_METHOD);
	assert_int_equal(exporter_route_request("POST", "/nope"), EXPORTER_ROUTE_BAD_METHOD);
	assert_int_equal(exporter_route_request(NULL, "/metrics"), EXPORTER_ROUTE_BAD_METHOD);
}

static void test_port_in_use(void **state)
{
	fixture *f = *state;
	exporter_server_opts o;
	exporter_server_opts_default(&o);
	o.addr.port = f->port;
	exporter_server *s2 = NULL;
	assert_int_equal(exporter_server_start(&o, f->board, &s2), 3);
	assert_null(s2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_listen),
	    cmocka_unit_test(test_accepts_gzip),
	    cmocka_unit_test(test_route),
	    cmocka_unit_test_setup_teardown(test_metrics_get_head, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_health_and_index, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_found_and_traversal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_other_methods, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_oversized_headers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slowloris, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_connection_cap, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_port_in_use, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
