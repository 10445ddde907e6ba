/*
 * http.h - the exporter's HTTP server on libmicrohttpd: it serves the latest page of a
 * board, nothing else (http.c).
 */
#ifndef GPUWHY_EXPORTER_HTTP_H
#define GPUWHY_EXPORTER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exporter/page.h"
#include "util/fail.h"

typedef struct {
	char host[64]; /* numeric IPv4 or IPv6 address */
	int port;      /* 0: any free port */
	bool ipv6;
} exporter_listen_addr;

/*
 * "127.0.0.1:9400", "[::1]:9400", "localhost:9400", "0.0.0.0:9400". The host
 * part is required (no ":9400", so that exposing all interfaces is always
 * explicit). Returns 0, or -1 with err (when given) filled: s as what, the
 * reason as why (English; why_text in the user's language), code GW_EXIT_USAGE;
 * each caller names the option in its own line.
 */
int exporter_parse_listen(const char *s, exporter_listen_addr *out, gw_fail *err);

/* Whether an Accept-Encoding header value accepts gzip (q-values honoured). */
bool exporter_accepts_gzip(const char *accept_encoding);

typedef enum {
	EXPORTER_ROUTE_INDEX,
	EXPORTER_ROUTE_METRICS,
	EXPORTER_ROUTE_HEALTH,
	EXPORTER_ROUTE_NOT_FOUND,
	EXPORTER_ROUTE_BAD_METHOD,
} exporter_route;

/* Routing is an exact match on the path; nothing ever reaches the file system. */
exporter_route exporter_route_request(const char *method, const char *url);

typedef struct {
	exporter_listen_addr addr;
	unsigned max_connections; /* connection cap */
	unsigned timeout_s;       /* a connection must complete each request within this */
	size_t memory_limit;      /* per connection: bounds request line + headers */
	int64_t stale_ns;         /* /health answers 503 when the page is older than this */
	const char *version;
} exporter_server_opts;

void exporter_server_opts_default(exporter_server_opts *o);

typedef struct exporter_server exporter_server;

/* Bind and start serving board. Returns 0, or a GW_EXIT_* code with the message printed. */
int exporter_server_start(const exporter_server_opts *o, exporter_board *board,
                          exporter_server **out);
/* The port actually bound (useful with port 0). */
int exporter_server_port(const exporter_server *s);
void exporter_server_stop(exporter_server *s);

#endif
