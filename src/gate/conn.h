/*
 * conn.h - the client connections (conn.c): libmicrohttpd's callbacks run
 * in the loop that holds a connection, the watchdog's deadlines, the
 * client's address, and libmicrohttpd's error log answered in its place.
 */
#ifndef GPUWHY_GATE_CONN_H
#define GPUWHY_GATE_CONN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "gate/request.h"
#include "gate/srv.h"
#include "util/mhd_dl.h"

/*
 * One client connection (conn.c), from its start to its close: the
 * watchdog's deadline and what a request of it needs to be named.
 */
typedef struct gate_track {
	struct gate_track *prev, *next;
	int fd;
	int64_t deadline_ns; /* 0 while a request of it is being served */
	/* The client's address and the X-Forwarded-For line naming it, made
	 * once for every request of the connection. */
	char client[GATE_CLIENT_LEN];
	char xff[GATE_CLIENT_LEN + 24];
	bool shut;
	bool ws; /* upgraded to a WebSocket: ws.c times it out */
	/* For answering in place of libmicrohttpd (gate_mhd_log): the loop
	 * whose daemon holds it, and its request (that loop's thread only). */
	struct MHD_Connection *conn;
	gate_loop *lp;
	gate_req *req;
} gate_track;

/* conn.c: the MHD callbacks run in the loop that holds the connection */
void gate_conn_addr(struct MHD_Connection *c, char client[GATE_CLIENT_LEN],
                    char xff[GATE_CLIENT_LEN + 24]);
gate_track *gate_conn_track(struct MHD_Connection *c);
/* A request of c is being served (no deadline) or awaited (client_timeout_ms). */
void gate_track_busy(struct MHD_Connection *c, gate_srv *g, bool busy);
/* c became a WebSocket: ws.c times it out, the watchdog leaves it. */
void gate_track_ws(struct MHD_Connection *c, gate_srv *g);
void gate_on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
enum MHD_Result gate_on_accept(void *cls, const struct sockaddr *addr, socklen_t len);
void *gate_watchdog_main(void *arg);
/* libmicrohttpd's error log of loop cls (MHD_OPTION_EXTERNAL_LOGGER). */
void gate_mhd_log(void *cls, const char *fmt, va_list ap);

#endif
