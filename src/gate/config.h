/*
 * config.h - the gate's settings: their defaults, the JSON config and keys
 * files (jansson, strict), upstreams and allow-lists, and the checks of the
 * whole (config.c).
 */
#ifndef GPUWHY_GATE_CONFIG_H
#define GPUWHY_GATE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/fail.h"

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
 * with err filled (GW_EXIT_USAGE, what "config", why "line:col: what" or
 * "upstreams[1]: ..."). Unknown keys are errors. err may be NULL.
 */
int gate_config_parse(gate_config *c, const char *text, size_t len, gw_fail *err);
/* Read a config file into c (and its keys file). Returns 0 or -1 with err (what: the file). */
int gate_config_load(gate_config *c, const char *path, gw_fail *err);
/* Parse a keys file's text into c->keys. Returns 0 or -1 with err (what "keys file"). */
int gate_keys_parse(gate_config *c, const char *text, size_t len, gw_fail *err);
int gate_keys_load(gate_config *c, const char *path, gw_fail *err);
void gate_config_free(gate_config *c);
/* Deep copy (keys included). */
int gate_config_copy(gate_config *dst, const gate_config *src);
/* "URL" or "URL@0,1" or "URL@none". Returns 0 or -1 with err (what: s). */
int gate_parse_upstream(const char *s, gate_upstream_cfg *out, gw_fail *err);
/* "10.0.0.0/8", "192.168.1.7", "::1/128". Returns 0 or -1 with err (what: s). */
int gate_parse_net(const char *s, gate_net *out, gw_fail *err);
bool gate_net_match(const gate_net *n, const void *addr, bool v6);
/* Whether a numeric host address is a loopback address. */
bool gate_is_loopback(const char *host);
const gate_key *gate_key_find(const gate_config *c, const char *key);
/* Check the whole config for consistency. Returns 0 or -1 with err (what "gate", and the
 * hint), to print as it is. */
int gate_config_check(const gate_config *c, gw_fail *err);
/* How many event loops c asks for (workers, or the CPUs' default). */
int gate_workers(const gate_config *c);

#endif
