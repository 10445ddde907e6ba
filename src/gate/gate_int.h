/*
 * gate_int.h - the running gate: requests, transfers, upstream state and
 * metrics, and the seams between its files. From the bottom up: loop.c
 * (the event loops; handlers register with them), say.c, metrics.c and
 * route.c, request.c (a request's whole life), xfer.c (transfers on
 * libcurl), dispatch.c (which request goes where), ws.c (WebSockets),
 * conn.c and server.c (the client side), lifecycle.c (starts and stops it
 * all). A file calls only files below it; a lower one reaches a higher
 * one only through the handlers it was given.
 */
#ifndef GPUWHY_GATE_GATE_INT_H
#define GPUWHY_GATE_GATE_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gate/config.h"
#include "gate/fairq.h"
#include "gate/target.h"
#include "gpu/gpu.h"
#include "util/curl_dl.h"
#include "util/fail.h"
#include "util/mhd_dl.h"

/* Why a request was refused: the label of gpuwhy_gate_rejected_total. */
#define GATE_REASONS(X)                                                                            \
	X(BODY_TOO_LARGE, "body_too_large")                                                        \
	X(HEADERS_TOO_LARGE, "headers_too_large")                                                  \
	X(NO_KEY, "unknown_key")                                                                   \
	X(USER_QUEUE_FULL, "user_queue_full")                                                      \
	X(QUEUE_FULL, "queue_full")                                                                \
	X(QUEUE_TIMEOUT, "queue_timeout")                                                          \
	X(GPU_HOLD, "gpu_unavailable")                                                             \
	X(DRAINING, "draining")                                                                    \
	X(TOO_MANY_USERS, "too_many_users")                                                        \
	X(USER_WEBSOCKETS, "user_websockets")                                                      \
	X(BAD_TARGET, "bad_target")                                                                \
	X(BAD_LENGTH, "bad_content_length")

#define GATE_REASON_ENUM(id, name) GATE_R_##id,
enum { GATE_REASONS(GATE_REASON_ENUM) GATE_R__COUNT };
#undef GATE_REASON_ENUM

/* How a transfer to an upstream failed: gpuwhy_gate_upstream_errors_total. */
enum { GATE_UE_CONNECT, GATE_UE_TIMEOUT, GATE_UE_STATUS_5XX, GATE_UE_OTHER, GATE_UE__COUNT };

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

/* What an epoll event of the loop is about: a tag in the top bits of its
 * data (below them a descriptor, or a pointer: user space ends at 2^47). */
#define GATE_TAG_MHD (1ULL << 56)
#define GATE_TAG_WAKE (2ULL << 56)
#define GATE_TAG_CURL (3ULL << 56)
#define GATE_TAG_WSU (4ULL << 56) /* a WebSocket's upstream socket */
#define GATE_TAG_WSC (5ULL << 56) /* a WebSocket's client socket */
#define GATE_TAG_MASK (0xffULL << 56)

#define GATE_HIST_N 16
typedef struct {
	double le[GATE_HIST_N]; /* upper bounds; +Inf is implicit */
	int n;
	uint64_t count[GATE_HIST_N + 1];
	double sum;
	uint64_t total;
} gate_hist;

typedef struct gate_srv gate_srv;
/* A client address as text (IPv6 included). */
#define GATE_CLIENT_LEN 64

typedef struct gate_xfer gate_xfer;
typedef struct gate_ws gate_ws;
typedef struct gate_loop gate_loop;

typedef struct gate_req {
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
} gate_req;

struct gate_xfer {
	struct gate_xfer *prev, *next; /* its loop's transfers in flight */
	gate_loop *l;                  /* the loop whose curl multi runs it */
	CURL *easy;
	bool decided; /* whether the answer streams is known */
	bool refused; /* no URL on the upstream could be built for it (400) */
	char *url;    /* what it fetches: gate_url_build's */
	gate_srv *g;
	int up;
	int n;
	gate_req **m; /* members; one unless batched */
	long *counts;
	char *body;            /* the merged body of a batch */
	const char *orig_body; /* what is sent: body, or the one member's */
	size_t orig_len;
	gate_xfer *pnext; /* scratch for take_pending */
	struct curl_slist *hdrs;
	long status;
	char ctype[128];
	bool has_length, chunked;
	char *hbuf; /* response headers to pass on */
	size_t hlen, hcap;
	char *rbuf;
	size_t rlen, rcap;
	bool streaming;
	bool paused;   /* held by backpressure (on_data returned PAUSE) */
	bool held;     /* was paused at least once */
	bool reusable; /* its handle ended cleanly and may serve the next transfer */
	int64_t t_start;
	uint64_t batch_id;
};

typedef struct {
	gate_upstream_cfg cfg;
	gate_origin origin;     /* cfg.url as libcurl parsed it */
	struct curl_slist *pin; /* CURLOPT_CONNECT_TO: every transfer to origin's host:port */
	long inflight;
	bool down; /* last connect failed: others are preferred */
	int64_t down_until_ns;
	char health[512];      /* why it may not take work now, "" when healthy */
	char health_text[512]; /* the same in the gate's language */
	bool lost;             /* a GPU of it fell off the bus */
	double util;           /* mean GPU utilization of its GPUs, NAN unknown */
	double free_mib;       /* least free memory among its GPUs, NAN unknown */
	uint64_t errors[GATE_UE__COUNT];
	uint64_t requests;
	long websockets; /* open through it */
	gate_hist upstream_s;
} gate_up;

typedef struct {
	int index; /* NVML index */
	bool valid, lost;
	double free_mib, total_mib, util;
	uint64_t reasons;
	bool reasons_ok;
} gate_gpu;

typedef struct {
	uint64_t rejected[GATE_R__COUNT];
	uint64_t responses[6]; /* by status class 1xx..5xx, [0] other */
	gate_hist latency, queue_wait, batch_size;
	uint64_t batches;
	uint64_t batch_retries; /* members of a batch refused with a 4xx, sent again alone */
	uint64_t requests;
} gate_metrics;

/* Finished easy handles kept for the next transfers of a loop. */
#define GATE_EASY_POOL 64
/* URLs a loop built last, and the longest target kept with one. */
#define GATE_URL_CACHE 8
#define GATE_URL_CACHE_TARGET 512
#define GATE_MAX_LOOPS GATE_MAX_WORKERS
#define GATE_MAX_HANDLERS 4

/*
 * One event loop (loop.c): its own listening socket (SO_REUSEPORT with the
 * others), libmicrohttpd daemon, curl multi, epoll set and WebSockets. A
 * request is served by the loop that accepted its connection; what is
 * shared (queue, users, limits, upstreams, metrics) is the gate_srv's,
 * under its mu.
 */
struct gate_loop {
	gate_srv *g;
	int idx;
	struct MHD_Daemon *d;
	CURLM *multi;
	int ep, wakefd;
	int64_t curl_due_ns; /* when curl wants its timeout action, INT64_MAX none */
	pthread_t thread;
	bool running, quiesced;
	bool mhd_kick;      /* a connection was resumed: the daemon must run (atomic) */
	gate_xfer *xfers;   /* in flight on this multi (this loop's only) */
	gate_xfer *pending; /* dispatched by another loop, to start here (mu) */
	int npaused;        /* paused transfers (this loop's only) */
	CURL *easy_pool[GATE_EASY_POOL];
	int easy_pooled;
	/* The URLs it built last, by upstream and target: building one costs
	 * about as much as the rest of a transfer's setup, and most requests
	 * repeat a few paths (this loop's thread only). */
	struct {
		int up;
		char *target, *url;
	} urls[GATE_URL_CACHE];
	unsigned nurls;
	gate_ws *wss;   /* this loop's WebSockets */
	uint32_t *fdst; /* per curl descriptor: FD_* bits and the events epoll has */
	int nfdst;
	curl_socket_t soon[64]; /* reused connections to try writing at once */
	int nsoon;
};

struct gate_srv {
	pthread_mutex_t mu;
	gate_config cfg;
	gate_fairq q;
	int nup;
	gate_up up[GATE_MAX_UPSTREAMS];
	int ngpu;
	gate_gpu gpu[GPU_MAX];
	bool gpu_aware;
	long inflight; /* transfers' members at upstreams */
	long inflight_xfers;
	uint64_t next_id, next_batch;
	gate_metrics m;
	bool draining, stopping, abort_all;
	int64_t drain_deadline_ns;
	/* the dispatcher (any loop, under mu) */
	gate_req **cand; /* the dispatcher's scratch: queued requests in fair order */
	long cand_cap;
	unsigned pass;
	char hold_why[1200]; /* why no upstream may take work, "" when one may */
	char hold_why_text[1200];
	/* the event loops (loop.c) and what they run, in order */
	const struct gate_loop_handler *handlers[GATE_MAX_HANDLERS];
	int nhandlers;
	int nloops;
	gate_loop loops[GATE_MAX_LOOPS];
	bool loop_exit, quiesce_req;
	/* the client side */
	struct MHD_Daemon *md;
	int port, metrics_port;
	FILE *log; /* access log, NULL when off */
	bool log_close;
	int64_t t_start;
	/* WebSockets (ws.c; the counts under mu) */
	long ws_open;
	uint64_t ws_total;
	/* the connection watchdog */
	pthread_t watchdog;
	bool watchdog_running;
	pthread_cond_t cv;
	struct gate_track *tracks;
};

/* route.c */
/* Recompute each upstream's health from the GPUs (mu held). */
void gate_route_refresh(gate_srv *g);
/*
 * The upstream to send to now (mu held), or -1: *held is then true when
 * no upstream is healthy (why in why), false when all are merely full.
 */
int gate_route_pick(gate_srv *g, bool *held, char *why, char *why_text, size_t whylen);
/* Whether some upstream is healthy; why explains when none is (mu held),
 * why_text in the gate's language (both whylen bytes). */
bool gate_route_any_healthy(gate_srv *g, char *why, char *why_text, size_t whylen);

/* gpuwatch.c */
typedef struct gate_gpuwatch gate_gpuwatch;
/* Start sampling the GPUs. Returns 0, 1 when no GPU can be read (notice in msg). */
int gate_gpuwatch_start(gate_srv *g, gate_gpuwatch **out, char *msg, size_t msglen);
void gate_gpuwatch_stop(gate_gpuwatch *w);

/* metrics.c */
void gate_hist_init(gate_hist *h, const double *le, int n);
void gate_hist_add(gate_hist *h, double v);
void gate_metrics_init(gate_srv *g);
/* The Prometheus text page (mu taken inside); free() it. */
char *gate_metrics_render(gate_srv *g, size_t *len);
enum MHD_Result gate_metrics_serve(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls);
extern const char *const gate_reason_names[GATE_R__COUNT];

/* loop.c: the bottom of the gate */
/*
 * What a part of the gate asks of every event loop (gate_loop_handle).
 * Each pass a loop calls, handler by handler in the order registered:
 * tick (what is due; lower *next to when it next is), then settle
 * (whether work ended; if any did, the loop passes again at once), then
 * idle before it sleeps. An epoll event whose tag is one of tags goes to
 * event; stop ends what the handler holds when the gate stops (abort_all
 * is set). Every function is optional and runs in the loop's thread.
 */
typedef struct gate_loop_handler {
	uint64_t tags[2];
	void (*tick)(gate_loop *l, int64_t *next);
	void (*event)(gate_loop *l, uint64_t data, uint32_t events);
	bool (*settle)(gate_loop *l);
	void (*idle)(gate_loop *l, int64_t *next);
	void (*stop)(gate_loop *l);
} gate_loop_handler;

/* Register h with every loop (before gate_loop_start). */
void gate_loop_handle(gate_srv *g, const gate_loop_handler *h);
/* The loop the calling thread runs, NULL outside them. */
gate_loop *gate_loop_self(void);
/* Make the loops' epoll sets and wake-ups (cfg.workers of them). */
int gate_loops_init(gate_srv *g);
void gate_loops_free(gate_srv *g);
/* Start the loop threads once their daemons exist. */
int gate_loop_start(gate_srv *g);
/* Wake every loop (any thread): the queue, the GPUs or the config changed. */
void gate_loops_wake(gate_srv *g);
/* Wake one loop (any thread). */
void gate_loop_wake(gate_loop *l);
/* Stop accepting connections (each loop closes its listening socket). */
void gate_loop_quiesce(gate_srv *g);
/* End the loop threads; in-flight work is left to gate_xfer_stop. */
void gate_loop_stop(gate_srv *g);

/*
 * Resume a suspended connection of loop l (any thread; mu not needed). A
 * daemon run from an outside loop sees a resume only when it runs next,
 * so its loop is told to run it (and woken when that is another thread).
 */
static inline void gate_resume(gate_loop *l, struct MHD_Connection *c)
{
	MHD_resume_connection(c);
	__atomic_store_n(&l->mhd_kick, true, __ATOMIC_RELEASE);
	if (gate_loop_self() != l)
		gate_loop_wake(l);
}

/* say.c */
/* Format into out (len bytes); a reason cut at the end still says why. */
void gate_cut(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A reason said twice: fmt into en, its translation into text (len bytes each). */
void gate_say(char *en, char *text, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

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

/* xfer.c: transfers on each loop's curl multi */
extern const gate_loop_handler gate_xfer_handler;
/* Give every loop its curl multi (after gate_loops_init). */
int gate_xfer_start(gate_srv *g);
/* End what is still in flight (the loops have ended) and free the multis. */
void gate_xfer_stop(gate_srv *g);
/* A transfer of members m (n, taken from the queue) to upstream up (mu
 * held), or NULL when it cannot be made; gate_xfer_hand starts it. */
gate_xfer *gate_xfer_new(gate_srv *g, int up, gate_req **m, int n, int64_t now);
/* Hand x to the loop of its first member, which starts it (mu held). */
void gate_xfer_hand(gate_xfer *x);

/* dispatch.c: which request goes where, and when */
extern const gate_loop_handler gate_dispatch_handler;
void gate_dispatch_free(gate_srv *g);

/* ws.c: all in the loop thread */
extern const gate_loop_handler gate_ws_handler;
/* Whether the request asks for a WebSocket upgrade. */
bool gate_ws_wanted(struct MHD_Connection *c, const char *method);
/*
 * Check the limits and start the upstream side of r's upgrade, suspending
 * r until the upstream answers. False when r got an answer of the gate's
 * own instead (state RQ_READY).
 */
bool gate_ws_begin(gate_loop *l, gate_req *r);
/* The 101 answer for r (state RQ_WS_READY); its headers are r->rhdrs. */
struct MHD_Response *gate_ws_response(gate_req *r);
/* Free the ended ones (all once the daemon is gone). */
void gate_ws_reap(gate_loop *l);

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

/* server.c: 0, or GW_EXIT_ENV with *err filled (the gate, where it could not listen, a hint). */
int gate_server_start(gate_srv *g, gw_fail *err);
void gate_server_quiesce(gate_srv *g);
void gate_server_stop(gate_srv *g);

#endif
