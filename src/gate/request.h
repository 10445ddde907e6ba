/*
 * request.h - a request's life in the gate (request.c): the request, its
 * states, and every change of them: created, admitted or refused, sent,
 * answered whole or streamed, failed, ended; the resumes of its
 * connection once the gate's mutex is let go. The seams above (xfer.c,
 * dispatch.c, ws.c, conn.c, server.c) call these and never write a
 * request's state themselves.
 */
#ifndef GPUWHY_GATE_REQUEST_H
#define GPUWHY_GATE_REQUEST_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gate/config.h"
#include "gate/fairq.h"
#include "gate/srv.h"
#include "util/curl_dl.h"
#include "util/mhd_dl.h"

/* A stream's buffer in the gate: the upstream is paused above HIGH bytes
 * not yet taken by the client and resumed once it is down to LOW. */
#define GATE_STREAM_HIGH (1UL << 20)
#define GATE_STREAM_LOW (256UL << 10)

enum {
	RQ_READING,   /* receiving the request */
	RQ_QUEUED,    /* suspended in the fair queue */
	RQ_INFLIGHT,  /* at an upstream (suspended) */
	RQ_READY,     /* a whole response is ready: resume and send it */
	RQ_STREAMING, /* headers known, body streams from the upstream */
	RQ_SENT,      /* handed to MHD */
	RQ_WS,        /* a WebSocket upgrade: the upstream's answer is awaited */
	RQ_WS_READY,  /* the upstream said 101: upgrade the client */
};

/* A client address as text (IPv6 included). */
#define GATE_CLIENT_LEN 64

struct gate_req {
	gate_qitem q; /* first: the fair queue's link */
	gate_srv *g;
	gate_loop *lp; /* the event loop whose daemon holds its connection */
	struct MHD_Connection *conn;
	uint64_t id;
	int state;
	int refs; /* the connection and, while at an upstream, the transfer */
	char method[16];
	char *uri; /* raw path and query as the client sent it */
	char *url; /* the URL fetched for it (the access log's "url") */
	char client[GATE_CLIENT_LEN];
	char user[128];
	gate_user *u;
	struct curl_slist *fwd; /* headers forwarded to the upstream */
	uint64_t cred;          /* hash of forwarded credentials (batch key) */
	char *body;
	size_t len, cap;
	bool too_big;
	int64_t t_arrive, t_queued, t_sent, t_done;
	/* batching */
	int rule;              /* -1: not batchable */
	gate_batch_rule brule; /* its rule as it was on arrival */
	json_t *jroot;
	char *bkey;
	long ninputs;
	uint64_t batch_id;
	int batch_size; /* inputs in the batch it went in */
	bool retried;   /* its merged batch got a 4xx: sent again alone */
	unsigned pass;  /* the dispatcher's pass that last looked at it */
	int up;         /* upstream index, -1 before routing */
	/* response */
	int status;
	char *rbody;
	size_t rlen;
	char *rhdrs; /* "Name: value\n" lines to pass on */
	char reason_code[32];
	char reason[512]; /* why the gate answered itself */
	long retry_after_s;
	size_t bytes_out;
	/* streaming: the transfer writes, MHD's reader takes */
	pthread_mutex_t smu;
	char *sbuf;
	size_t slen, scap, soff;
	bool s_done, s_waiting, conn_gone;
	gate_xfer *x;  /* its transfer while the answer streams */
	gate_ws *ws;   /* its WebSocket until the client is upgraded */
	bool upgraded; /* answered 101: ws.c logs it when it ends */
};

/* request.c: a request's life; every change of its state is made here */
gate_req *gate_req_new(gate_loop *l, struct MHD_Connection *c, const char *uri);
/* The refusals every new request or WebSocket meets first (mu held): the gate
 * is draining, or r has no user slot left. True when r may go on. */
bool gate_admit_open(gate_srv *g, gate_req *r);
/* Queue r and suspend its connection, or refuse it (mu held). True when queued. */
bool gate_req_admit(gate_srv *g, gate_req *r);
/* Member r of a batch refused with a 4xx goes back to its queue, to be sent
 * alone (mu held). */
void gate_req_requeue_alone(gate_srv *g, gate_req *r, int64_t now);
/* r, taken from the queue, goes to upstream up in a transfer (mu held). */
void gate_req_send(gate_srv *g, gate_req *r, int up, uint64_t batch_id, long inputs, int64_t now);
/* r's transfer ended: it is no longer in flight (mu held). */
void gate_req_back(gate_srv *g, gate_req *r);
/* r's whole answer: body (len bytes) and hdrs ("Name: value\n" lines) are
 * taken over (mu held); the caller resumes it. */
void gate_req_answer(gate_req *r, int status, char *body, size_t len, char *hdrs);
/* r's answer was handed to libmicrohttpd. */
void gate_req_answered(gate_req *r);
/* Give r a response of the gate's own (mu held); the caller resumes it. */
void gate_req_fail(gate_req *r, int status, int reason, long retry_after_s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same with the reason given in English (the access log) and in the
 * gate's language (the body). */
void gate_req_fail_said(gate_req *r, int status, int reason, long retry_after_s, const char *why,
                        const char *why_text);
/* 503 while no upstream may take work (why, why_text: gate_route_any_healthy's). */
void gate_req_fail_held(gate_req *r, const char *why, const char *why_text);
/* The answer streams from transfer x: headers now (mu taken inside; resumes r). */
void gate_req_stream_begin(gate_req *r, gate_xfer *x, int status, const char *hdrs);
/* Add n bytes to r's stream: 0 taken, 1 the buffer is full (pause the
 * upstream, nothing taken), -1 the client left. */
int gate_req_stream_put(gate_req *r, const char *p, size_t n);
/* Whether a paused upstream may go on: the client took most of the buffer. */
bool gate_req_stream_drained(gate_req *r);
/* The stream is complete (mu held). */
void gate_req_stream_end(gate_req *r);
/* libmicrohttpd's reader of r's stream and its end (cls is r). */
ssize_t gate_req_stream_read(void *cls, uint64_t pos, char *buf, size_t max);
void gate_req_stream_free(void *cls);
/* r waits for WebSocket w's upstream at up, which fetches url (mu held). */
void gate_req_ws_wait(gate_req *r, gate_ws *w, int up, const char *url);
/* The upstream said 101: hdrs are taken over (mu held). True when the client left. */
bool gate_req_ws_ready(gate_req *r, char *hdrs);
/* w lets go of r (mu held). */
void gate_req_ws_done(gate_req *r);
/* r's connection ended: counted and let go (mu held). */
void gate_req_end(gate_srv *g, gate_req *r);
/* Drop one reference (mu held); frees r at zero. */
void gate_req_unref(gate_req *r);

/* Append n bytes at p to the NUL-terminated buffer *b (*len used, *cap
 * allocated); on out of memory nothing is added. */
void gate_buf_add(char **b, size_t *len, size_t *cap, const char *p, size_t n);

/* Connections to resume once the gate's mutex is let go (libmicrohttpd
 * takes its own lock); most passes have a few. */
typedef struct {
	struct MHD_Connection *c;
	gate_loop *l;
} gate_resume_one;
typedef struct {
	gate_resume_one *c;
	int n, cap;
	gate_resume_one inl[16];
} gate_resume_list;
void gate_rl_init(gate_resume_list *l);
void gate_rl_add(gate_resume_list *l, gate_req *r);
/* Resume them all (mu not held) and empty the list. */
void gate_rl_run(gate_resume_list *l);

#endif
