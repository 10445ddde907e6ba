/*
 * srv.h - the running gate's shared state, the bottom of its seams: the
 * gate (gate_srv) with its settings, fair queue, upstreams, GPUs, counters
 * and event loops, which every file of the running gate reads or changes
 * under the gate's mutex. Types only; each is implemented by the seam that
 * changes it (loop.h, metrics.h, route.h, ...). The seams from the bottom
 * up are listed in seams.txt beside it.
 */
#ifndef GPUWHY_GATE_SRV_H
#define GPUWHY_GATE_SRV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gate/config.h"
#include "gate/fairq.h"
#include "gate/target.h"
#include "gpu/gpu.h"
#include "util/curl_dl.h"
#include "util/mhd_dl.h"

typedef struct gate_srv gate_srv;
typedef struct gate_loop gate_loop;
typedef struct gate_req gate_req;   /* request.h */
typedef struct gate_xfer gate_xfer; /* xfer.c */
typedef struct gate_ws gate_ws;     /* ws.c */
struct gate_loop_handler;           /* loop.h */
struct gate_track;                  /* conn.h */

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

#define GATE_HIST_N 16
typedef struct {
	double le[GATE_HIST_N]; /* upper bounds; +Inf is implicit */
	int n;
	uint64_t count[GATE_HIST_N + 1];
	double sum;
	uint64_t total;
} gate_hist;

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
 * One event loop (loop.h): its own listening socket (SO_REUSEPORT with the
 * others), libmicrohttpd daemon, curl multi, epoll set and WebSockets. A
 * request is served by the loop that accepted its connection; what is
 * shared (queue, users, limits, upstreams, metrics) is the gate_srv's,
 * under its mu. Beside the loop's own fields it holds what its handlers
 * keep per loop: the transfers' (xfer.c) and the WebSockets' (ws.c).
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
	/* the event loops (loop.h) and what they run, in order */
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

#endif
