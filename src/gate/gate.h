/*
 * gate.h - `gpuwhy gate`: a reverse proxy that protects and feeds a GPU
 * inference server.
 *
 * Layers, one file each (a file calls only those above it in this list;
 * the running gate's seams are in gate_int.h):
 *   config.c   options and the JSON config / keys files (jansson, strict)
 *   flags.c    the configuration from the command line (defaults, file, flags)
 *   fairq.c    per-user FIFO queues served round-robin with weights
 *   batch.c    merging list-input JSON bodies and splitting the response
 *   target.c   which request-targets are forwarded, and the URL each one fetches
 *   loop.c     the event loops, running the handlers the others register
 *   say.c      reasons worded in English and in the gate's language
 *   metrics.c  counters and histograms, Prometheus text
 *   route.c    GPU health of each upstream and the least-loaded choice
 *   request.c  a request's whole life: every change of its state
 *   gpuwatch.c the project's sampler feeding route.c
 *   xfer.c     transfers to upstreams on each loop's libcurl multi
 *   dispatch.c which queued request goes to which upstream, and when
 *   ws.c       WebSockets: the upstream handshake, then relayed bytes
 *   conn.c     client connections: addresses, the slow-client watchdog
 *   server.c   the client side on libmicrohttpd (suspend/resume while queued)
 *   run.c      starts the parts in order, reloads, drains, stops
 *
 * One mutex (gate.mu) guards the queue, the users, the upstream state and
 * the metrics; a request's streaming buffer has its own.
 */
#ifndef GPUWHY_GATE_GATE_H
#define GPUWHY_GATE_GATE_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GATE_MAX_UPSTREAMS 16
#define GATE_MAX_GPUS_PER_UP 8
#define GATE_MAX_RULES 8
#define GATE_MAX_PREFERRED 8
#define GATE_MAX_ALLOW 16
#define GATE_MAX_USERS 4096
#define GATE_MAX_WORKERS 64 /* event loops */
/* libmicrohttpd 0.9 reads a request's line and headers into one buffer
 * that stops near 32 KiB whatever its memory pool: a larger limit would
 * answer its own 431 below the limit the user set. */
#define GATE_MAX_HEADER_BYTES (31L << 10)

/* ------------------------------------------------------------------ config */

typedef enum { GATE_GOAL_LATENCY, GATE_GOAL_THROUGHPUT } gate_goal;

typedef struct {
	char url[512]; /* scheme://host:port, no trailing slash */
	int ngpu;      /* GPUs this server uses; -1: every GPU the gate sees, 0: none */
	int gpu[GATE_MAX_GPUS_PER_UP];
	char gpu_text[128]; /* as given after @ ("" when none) */
	long max_inflight;  /* 0: the global default */
} gate_upstream_cfg;

/* A batchable endpoint: POST PATH whose JSON body has a list at input. */
typedef struct {
	char path[256];
	char input[128];  /* JSON pointer to the list of inputs ("/input") */
	char output[128]; /* JSON pointer to the list in the response ("/data") */
	long max_batch_size;
	int npreferred;
	long preferred[GATE_MAX_PREFERRED];
	long max_queue_delay_us;
} gate_batch_rule;

typedef struct {
	uint8_t addr[16];
	int bits;
	bool v6;
} gate_net;

typedef struct {
	char name[128];
	long concurrency; /* 0: the default */
	long queue;       /* 0: the default */
	long weight;      /* >= 1 */
} gate_key_limits;

typedef struct {
	char key[256];
	gate_key_limits lim;
} gate_key;

typedef struct {
	/* where */
	char listen[128];
	char metrics_listen[128]; /* "" = no metrics endpoint */
	bool allow_remote;
	int nallow;
	gate_net allow[GATE_MAX_ALLOW];
	int nup;
	gate_upstream_cfg up[GATE_MAX_UPSTREAMS];
	/* limits */
	long max_body_bytes;
	long max_header_bytes;
	long max_inflight;        /* all upstreams together */
	long max_inflight_per_up; /* default for each upstream */
	long user_concurrency;
	long user_queue;
	long queue_size;
	long queue_timeout_ms;
	long upstream_timeout_ms;
	long client_timeout_ms; /* a client must send its whole request within this */
	long max_connections;
	long drain_timeout_ms;
	long user_websockets;   /* open WebSockets per user (0: none allowed) */
	long websocket_idle_ms; /* a WebSocket with no bytes this long is closed */
	long workers;           /* event loops; 0: one per online CPU, at most 4 */
	/* users */
	char user_header[64]; /* extra header naming the key ("" = none) */
	char keys_file[512];
	bool require_keys;
	int nkeys;
	gate_key *keys;
	/* GPU */
	long min_free_mib;
	bool hold_throttled;
	long gpu_interval_ms;
	/* batching */
	gate_goal goal;
	int nrules;
	gate_batch_rule rule[GATE_MAX_RULES];
	char access_log[512]; /* "" = stderr, "-" = stdout, "off" */
	char config_file[512];
} gate_config;

/* The defaults, then --goal's batching defaults. */
void gate_config_defaults(gate_config *c);
void gate_goal_defaults(gate_config *c, gate_goal goal);
/* A batching rule with the goal's defaults for path. */
void gate_rule_defaults(gate_batch_rule *r, gate_goal goal, const char *path);
/*
 * Apply a JSON config text (the file's contents) over c. Returns 0, or -1
 * with "line:col: what" in err. Unknown keys are errors.
 */
int gate_config_parse(gate_config *c, const char *text, size_t len, char *err, size_t errlen);
/* Read a config file into c (and its keys file). Returns 0 or -1 with err. */
int gate_config_load(gate_config *c, const char *path, char *err, size_t errlen);
/* Parse a keys file's text into c->keys. Returns 0 or -1 with err. */
int gate_keys_parse(gate_config *c, const char *text, size_t len, char *err, size_t errlen);
int gate_keys_load(gate_config *c, const char *path, char *err, size_t errlen);
void gate_config_free(gate_config *c);
/* Deep copy (keys included). */
int gate_config_copy(gate_config *dst, const gate_config *src);
/* "URL" or "URL@0,1" or "URL@none". Returns 0 or -1 with err. */
int gate_parse_upstream(const char *s, gate_upstream_cfg *out, char *err, size_t errlen);
/* "10.0.0.0/8", "192.168.1.7", "::1/128". Returns 0 or -1 with err. */
int gate_parse_net(const char *s, gate_net *out, char *err, size_t errlen);
bool gate_net_match(const gate_net *n, const void *addr, bool v6);
/* Whether a numeric host address is a loopback address. */
bool gate_is_loopback(const char *host);
const gate_key *gate_key_find(const gate_config *c, const char *key);
/* Check the whole config for consistency. Returns 0 or -1 with err. */
int gate_config_check(const gate_config *c, char *err, size_t errlen);
/* How many event loops c asks for (workers, or the CPUs' default). */
int gate_workers(const gate_config *c);

/* -------------------------------------------------------------- fair queue */

/* A queued request's link; the first member of the server's request. */
typedef struct gate_qitem {
	struct gate_qitem *next, *prev;
	struct gate_user *user;
	int64_t t_enqueue_ns;
} gate_qitem;

typedef struct gate_user {
	char name[128];
	long concurrency, queue_max, weight;
	long inflight; /* requests of this user at an upstream */
	long queued;
	long websockets; /* open WebSockets (ws.c) */
	long credit;     /* picks left in the current turn */
	long taken;      /* scratch for gate_fairq_walk */
	long refs;       /* requests that name this user; 0: its slot may be reused */
	gate_qitem *head, *tail;
	uint64_t served, rejected;
} gate_user;

typedef struct {
	gate_user *users; /* fixed array of GATE_MAX_USERS: pointers stay valid */
	int nusers;
	int cursor;       /* the user served last ... */
	bool cursor_next; /* ... and whether its turn is over */
	long total;       /* queued requests */
} gate_fairq;

int gate_fairq_init(gate_fairq *q);
void gate_fairq_free(gate_fairq *q);
/*
 * Find or add a user; limits are updated. When the table is full, the slot
 * of a user with nothing queued, in flight or referenced is reused; NULL
 * when there is none.
 */
gate_user *gate_fairq_user(gate_fairq *q, const char *name, long concurrency, long queue_max,
                           long weight);
gate_user *gate_fairq_find(gate_fairq *q, const char *name);
/* Append it to u's FIFO. */
void gate_fairq_push(gate_fairq *q, gate_user *u, gate_qitem *it);
/* Remove it from its user's FIFO (it must be queued). */
void gate_fairq_remove(gate_fairq *q, gate_qitem *it);
/*
 * The next item in fair order among users below their concurrency, without
 * removing it; NULL when none may go.
 */
gate_qitem *gate_fairq_peek(gate_fairq *q);
/* Remove it and charge its user's turn (weight picks per turn). */
void gate_fairq_take(gate_fairq *q, gate_qitem *it);
/*
 * Visit queued items in fair order (round-robin across users, weight items
 * per turn, FIFO within each) without removing them. fn returns 1 to count
 * the item against its user's concurrency, 0 to pass it over, -1 to stop;
 * a user whose inflight plus counted items reaches its concurrency is
 * passed over from then on.
 */
void gate_fairq_walk(gate_fairq *q, int (*fn)(gate_qitem *it, void *arg), void *arg);

/* ---------------------------------------------------------------- batching */

/*
 * Split a request body for batching: the list at rule->input (a single
 * string or number counts as a list of one) and a key of everything else,
 * canonical (sorted keys), so that requests with equal keys can be merged.
 * Returns the number of inputs (>= 1), or -1 when the body does not fit
 * (then it goes through unbatched).
 */
long gate_batch_key(const gate_batch_rule *rule, const char *body, size_t len, json_t **root,
                    char **key);
/*
 * Merge member bodies (already parsed roots, same key) into one body whose
 * input list is all their inputs in order. Returns a new string or NULL.
 */
char *gate_batch_merge(const gate_batch_rule *rule, json_t *const *roots, int n);
/*
 * Split a batch response: counts[i] items go to member i, in order.
 * Fills out[i] with a new string for each member; an "index" field in
 * the list's objects is renumbered from 0 per member. The root's "usage"
 * counts the whole batch, so with several members none gets it: a member
 * gets the sum of its items' own "usage" objects where every item has
 * one, else no "usage"; *usage (when usage is not NULL) is then the
 * batch's "usage" as one line of ASCII JSON (free()), NULL without one.
 * Returns 0, or -1 when the response is not a list of sum(counts) items
 * at rule->output.
 */
int gate_batch_split(const gate_batch_rule *rule, const char *body, size_t len, const long *counts,
                     int n, char **out, char **usage);
/* The batch size to send now from avail waiting inputs (0: keep waiting). */
long gate_batch_choose(const gate_batch_rule *rule, long avail, bool delay_expired);

/* ---------------------------------------------------------- request-targets */

/* What gate_target_check thinks of a request-target. */
typedef enum {
	GATE_TGT_OK,           /* origin-form: "/path?query" */
	GATE_TGT_NOT_ORIGIN,   /* absolute-, authority- or asterisk-form, or no leading '/' */
	GATE_TGT_NETWORK_PATH, /* "//...": a reference that names a host */
	GATE_TGT_BAD_BYTE,     /* a control character, space, '\\', '#' or a byte above 0x7e */
	GATE_TGT_UNBUILDABLE,  /* no URL on the upstream could be built from it */
} gate_target_kind;

/* Whether target may be forwarded; *at (may be NULL) is the offset of a bad byte. */
gate_target_kind gate_target_check(const char *target, size_t *at);

/* A configured upstream, as libcurl parsed it: the only place the gate connects to. */
typedef struct {
	char url[560];         /* "scheme://host:port/" as libcurl writes it */
	char scheme[8];        /* "http" or "https" */
	char host[256];        /* a name, an IPv4 address or a bracketed IPv6 address */
	long port;             /* the URL's, or the scheme's default */
	char connect_to[300];  /* "::host:port": CURLOPT_CONNECT_TO sends any host here */
	struct Curl_URL *base; /* url parsed (libcurl's CURLU), read by every build */
} gate_origin;

/* Parse an upstream URL (scheme://host[:port]); loads libcurl. 0, or -1 with
 * err; gate_origin_free() after 0. */
int gate_origin_parse(const char *url, gate_origin *o, char *err, size_t errlen);
void gate_origin_free(gate_origin *o);
/*
 * The URL that target fetches at o: a new string (free()) whose scheme,
 * host and port are o's, the target's bytes after them as sent. NULL when
 * target is refused or no such URL can be built; *why (may be NULL) says
 * which. Any thread may build on one origin at once (o is only read).
 */
char *gate_url_build(const gate_origin *o, const char *target, gate_target_kind *why);

/* ---------------------------------------------------------------- running */

/* Builds the settings anew (SIGHUP): 0, or an exit code with the reason printed. */
typedef int (*gate_reload_fn)(void *ctx, gate_config *out);

/* flags.c: the configuration from `gpuwhy gate`'s arguments */
typedef struct {
	int argc;
	char **argv;
} gate_args;
/* Defaults, then --config, then the flags into c. Returns 0, OPT_HELP or
 * GW_EXIT_* (the error printed). */
int gate_config_from_args(int argc, char **argv, gate_config *c);
/* A gate_reload_fn: the same steps again, ctx a gate_args. */
int gate_config_reload_args(void *ctx, gate_config *out);
/* Where c listens is loopback, or --allow-remote with an allow-list
 * (else the error is printed and GW_EXIT_USAGE returned). */
int gate_config_exposure(const gate_config *c);

/*
 * Serves with the settings c (taken over, freed at the end) until SIGTERM or
 * SIGINT, then drains the requests in flight. On SIGHUP, reload builds new
 * settings: limits, keys and batching change at once; listen addresses and
 * upstreams stay as started. Returns an exit code (GW_EXIT_*).
 */
int gate_run(gate_config *c, gate_reload_fn reload, void *ctx);

#endif
