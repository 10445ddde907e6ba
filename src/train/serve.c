/*
 * serve.c - `gpuwhy sim serve`'s simulated inference server (the options
 * are cmd/sim_serve.c's).
 *
 * POST any path with a JSON body whose "input" is a list (or one string):
 * the request takes the simulated GPU for batch_ms + item_ms x n, during
 * which the work is published to the simulated GPU (sim/sim_state.h), so
 * the simulated NVML shows utilization and memory rising with it. The
 * GPU runs one batch at a time, as a model server with one instance does.
 * A batch needing more than --mem-mib fails with a CUDA out-of-memory
 * style 500. Kernels are 10 us per input, so SM activity rises with the
 * batch size as on a real GPU. With "stream": true the answer is server-sent events, one
 * every item_ms. Embeddings are a deterministic function of each input,
 * so a batched answer can be checked against a direct one.
 */
#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "exporter/http.h"
#include "sim_state.h"
#include "train/serve.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/mhd_dl.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

typedef struct {
	train_serve_opts o;
	pthread_mutex_t gpu; /* the GPU runs one batch at a time */
	pthread_mutex_t mu;  /* the counters */
	sim_wl *wl;
	uint64_t requests, batches, items, max_seen, ooms;
	double busy_ms;
} serve_state;

typedef struct {
	gw_strbuf body;
	bool too_big;
} serve_req;

/* ------------------------------------------------------------- the work */

static double embed_value(const char *s, long k)
{
	/* The basis is the gate's (util/hash.h's standard one is a digit longer),
	 * mixed with k: the embeddings of recordings stay as they were. */
	uint64_t h = gw_fnv1a64(s, 1469598103934665603ULL ^ (uint64_t)k * 0x9E3779B97F4A7C15ULL);
	return (double)(h % 20001) / 10000.0 - 1.0;
}

static json_t *embedding_of(json_t *in, long dim)
{
	char *text = json_is_string(in) ? strdup(json_string_value(in)) : jsonw_tree_text(in, 0, 0);
	json_t *v = json_array();
	for (long k = 0; text && k < dim; k++)
		json_array_append_new(v, json_real(round(embed_value(text, k) * 1e4) / 1e4));
	free(text);
	return v;
}

/* An input's tokens: its words (a string), else one. */
static json_int_t tokens_of(json_t *in)
{
	const char *t = json_is_string(in) ? json_string_value(in) : NULL;
	json_int_t n = 0;
	for (bool word = false; t && *t; t++) {
		bool w = *t != ' ';
		n += w && !word;
		word = w;
	}
	return n > 0 ? n : 1;
}

/* Run n inputs on the GPU; returns false (with msg) on out of memory. */
static bool run_on_gpu(serve_state *s, long n, char *msg, size_t msglen)
{
	const train_serve_opts *o = &s->o;
	double need = o->item_mib * (double)n;
	pthread_mutex_lock(&s->gpu);
	if (o->model_mib + need > o->mem_mib) {
		pthread_mutex_unlock(&s->gpu);
		snprintf(msg, msglen,
		         "CUDA out of memory. Tried to allocate %.2f MiB (GPU %d; %.2f MiB total "
		         "capacity; %.2f MiB already allocated; %.2f MiB free)",
		         need, o->gpu, o->mem_mib, o->model_mib, o->mem_mib - o->model_mib);
		pthread_mutex_lock(&s->mu);
		s->ooms++;
		pthread_mutex_unlock(&s->mu);
		return false;
	}
	double ms = o->batch_ms + o->item_ms * (double)n;
	int64_t t0 = gw_mono_ns(), t1 = t0 + (int64_t)(ms * 1e6);
	if (s->wl) {
		sim_wl_set_mem(s->wl, (uint64_t)((o->model_mib + need) * 1048576.0));
		/* Kernels grow with the batch: one input alone leaves most SMs idle
		 * between launches, a full batch keeps them working. */
		double k_us = fmin(fmax(10.0 * (double)n, 10.0), 10000.0);
		sim_wl_push(s->wl, t0, t1, (unsigned)k_us, SIM_WL_COMPUTE, 0, 0);
	}
	gw_sleep_until_ns(t1);
	while (gw_mono_ns() < t1)
		gw_sleep_until_ns(t1);
	if (s->wl)
		sim_wl_set_mem(s->wl, (uint64_t)(o->model_mib * 1048576.0));
	pthread_mutex_unlock(&s->gpu);
	pthread_mutex_lock(&s->mu);
	s->batches++;
	s->items += (uint64_t)n;
	if ((uint64_t)n > s->max_seen)
		s->max_seen = (uint64_t)n;
	s->busy_ms += ms;
	pthread_mutex_unlock(&s->mu);
	return true;
}

/* ----------------------------------------------------------------- HTTP */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, json_t *j, long batch_size)
{
	char *text = jsonw_tree_text(j, 6, 0);
	json_decref(j);
	if (!text)
		return MHD_NO;
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (batch_size > 0) {
		char b[32];
		snprintf(b, sizeof b, "%ld", batch_size);
		MHD_add_response_header(r, "X-Sim-Batch-Size", b);
	}
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static json_t *error_json(const char *msg, const char *type)
{
	return json_pack("{s:{s:s,s:s}}", "error", "message", msg, "type", type);
}

typedef struct {
	serve_state *s;
	long n, k;
} stream_ctx;

static ssize_t stream_next(void *cls, uint64_t pos, char *buf, size_t max)
{
	stream_ctx *x = cls;
	if (x->k > x->n)
		return MHD_CONTENT_READER_END_OF_STREAM;
	gw_sleep_ns((int64_t)(x->s->o.item_ms * 1e6));
	int w = x->k == x->n ? snprintf(buf, max, "data: [DONE]\n\n")
	                     : snprintf(buf, max, "data: {\"index\":%ld,\"token\":\"tok%ld\"}\n\n",
	                                x->k, x->k);
	x->k++;
	return w > 0 && (size_t)w < max ? w : MHD_CONTENT_READER_END_WITH_ERROR;
}

static enum MHD_Result stream_reply(serve_state *s, struct MHD_Connection *c, json_t *root)
{
	json_t *mt = json_object_get(root, "max_tokens");
	stream_ctx *x = calloc(1, sizeof *x);
	if (!x)
		return MHD_NO;
	x->s = s;
	x->n = json_is_integer(mt) && json_integer_value(mt) > 0 && json_integer_value(mt) < 10000
	           ? (long)json_integer_value(mt)
	           : 5;
	struct MHD_Response *r =
	    MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256, stream_next, x, free);
	if (!r) {
		free(x);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	enum MHD_Result rc = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result infer(serve_state *s, struct MHD_Connection *c, const char *body, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(body ? body : "", len, 0, &je);
	if (!json_is_object(root)) {
		json_decref(root);
		return reply(c, 400, error_json("the body is not a JSON object", "invalid_request"),
		             0);
	}
	if (json_is_true(json_object_get(root, "stream"))) {
		enum MHD_Result rc = stream_reply(s, c, root);
		json_decref(root);
		return rc;
	}
	json_t *in = json_object_get(root, "input");
	json_t *list = json_is_array(in) ? json_incref(in) : in ? json_pack("[O]", in) : NULL;
	long n = list ? (long)json_array_size(list) : 0;
	if (n < 1 || n > s->o.max_batch) {
		char m[160];
		snprintf(m, sizeof m, "\"input\" must be a list of 1 to %d items", s->o.max_batch);
		json_decref(list);
		json_decref(root);
		return reply(c, 400, error_json(m, "invalid_request"), 0);
	}
	pthread_mutex_lock(&s->mu);
	s->requests++;
	pthread_mutex_unlock(&s->mu);
	char msg[300];
	if (!run_on_gpu(s, n, msg, sizeof msg)) {
		json_decref(list);
		json_decref(root);
		return reply(c, 500, error_json(msg, "OutOfMemoryError"), n);
	}
	json_t *data = json_array();
	size_t i;
	json_t *v;
	json_int_t tokens = 0;
	json_array_foreach(list, i, v)
	{
		json_int_t t = tokens_of(v);
		json_t *item = json_pack("{s:s,s:I,s:o}", "object", "embedding", "index",
		                         (json_int_t)i, "embedding", embedding_of(v, s->o.dim));
		if (s->o.item_usage)
			json_object_set_new(
			    item, "usage",
			    json_pack("{s:I,s:I}", "prompt_tokens", t, "total_tokens", t));
		json_array_append_new(data, item);
		tokens += t;
	}
	json_t *model = json_object_get(root, "model");
	json_t *out = json_pack("{s:s,s:o,s:O,s:{s:I,s:I}}", "object", "list", "data", data,
	                        "model", model ? model : json_null(), "usage", "prompt_tokens",
	                        tokens, "total_tokens", tokens);
	json_decref(list);
	json_decref(root);
	return reply(c, 200, out, n);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	serve_state *s = cls;
	serve_req *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof *r);
		*con_cls = r;
		return r ? MHD_YES : MHD_NO;
	}
	if (*upload_size) {
		if (r->body.len + *upload_size > (64u << 20))
			r->too_big = true;
		else
			gw_sb_put(&r->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(method, "GET") && !strcmp(url, "/health"))
		return reply(c, 200, json_pack("{s:s}", "status", "ok"), 0);
	if (!strcmp(method, "GET") && !strcmp(url, "/stats")) {
		pthread_mutex_lock(&s->mu);
		json_t *j = json_pack(
		    "{s:I,s:I,s:I,s:I,s:I,s:f}", "requests", (json_int_t)s->requests, "batches",
		    (json_int_t)s->batches, "items", (json_int_t)s->items, "max_batch",
		    (json_int_t)s->max_seen, "ooms", (json_int_t)s->ooms, "busy_ms", s->busy_ms);
		pthread_mutex_unlock(&s->mu);
		return reply(c, 200, j, 0);
	}
	if (strcmp(method, "POST"))
		return reply(
		    c, 405,
		    error_json("POST a JSON body, or GET /health or /stats", "invalid_request"), 0);
	if (r->too_big)
		return reply(c, 413, error_json("body larger than 64 MiB", "invalid_request"), 0);
	return infer(s, c, r->body.p, r->body.len);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
	serve_req *r = *con_cls;
	if (r) {
		gw_sb_free(&r->body);
		free(r);
	}
	*con_cls = NULL;
}

static int open_workload(serve_state *s)
{
	const char *scen = getenv("GPUWHY_SIM_SCENARIO");
	if (!scen || !*scen)
		return gw_error(GW_EXIT_USAGE, "sim serve",
		                N_("run it as gpuwhy --sim SCENARIO sim serve"),
		                "needs the simulated GPU");
	char dir[PATH_MAX], err[600];
	if (sim_state_dir(scen, dir, sizeof dir, err, sizeof err) != 0 ||
	    sim_wl_create(dir, (unsigned)s->o.gpu, &s->wl, err, sizeof err) != 0)
		return gw_error(GW_EXIT_ENV, "sim serve", NULL, "%s", err);
	sim_wl_set_mem(s->wl, (uint64_t)(s->o.model_mib * 1048576.0));
	return 0;
}

int train_serve_run(const train_serve_opts *o)
{
	serve_state s = {.o = *o};
	int rc;
	exporter_listen_addr a;
	gw_fail err = {0};
	if (exporter_parse_listen(s.o.listen, &a, &err)) {
		err.why_text[199] = '\0'; /* as this line has always cut it */
		return gw_error(GW_EXIT_USAGE, s.o.listen, N_("use ADDRESS:PORT"), "%s",
		                err.why_text);
	}
	const char *why = gw_mhd_error();
	if (why)
		return gw_error(GW_EXIT_ENV, "sim serve", NULL, "%s", why);
	if ((rc = open_workload(&s)))
		return rc;
	pthread_mutex_init(&s.gpu, NULL);
	pthread_mutex_init(&s.mu, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct sockaddr_storage ss = {0};
	if (a.ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)a.port);
		inet_pton(AF_INET6, a.host, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)a.port);
		inet_pton(AF_INET, a.host, &s4->sin_addr);
	}
	struct MHD_Daemon *d =
	    MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	                         MHD_USE_ERROR_LOG | (a.ipv6 ? MHD_USE_IPv6 : 0),
	                     0, NULL, NULL, on_request, &s, MHD_OPTION_SOCK_ADDR,
	                     (struct sockaddr *)&ss, MHD_OPTION_NOTIFY_COMPLETED, on_done, &s,
	                     MHD_OPTION_CONNECTION_LIMIT, 2048U, MHD_OPTION_CONNECTION_TIMEOUT,
	                     120U, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024U, MHD_OPTION_END);
	if (!d) {
		sim_wl_close(s.wl);
		return gw_error(GW_EXIT_ENV, s.o.listen, N_("pick another port"), "cannot listen");
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	fprintf(stderr, _("gpuwhy sim serve: listening on http://%s (port %d) on GPU %d\n"),
	        s.o.listen, di ? di->port : -1, s.o.gpu);
	int sig;
	sigwait(&set, &sig);
	MHD_stop_daemon(d);
	sim_wl_close(s.wl);
	return GW_EXIT_OK;
}
