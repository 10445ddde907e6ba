/*
 * metrics.c - the gate's Prometheus page: queue depth, in flight per user
 * and upstream, latency / queue-wait / upstream-time / batch-size
 * histograms, rejections by reason, upstream errors, and each upstream's
 * GPU verdict. Series that are unknown (no GPU read) are left out.
 * The metrics port serves it (and /health) from its own daemon.
 */
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/buf.h"
#include "gate/metrics.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define GATE_REASON_NAME(id, name) name,
const char *const gate_reason_names[GATE_R__COUNT] = {GATE_REASONS(GATE_REASON_NAME)};
#undef GATE_REASON_NAME

static const double time_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                 0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
static const double size_le[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

void gate_hist_init(gate_hist *h, const double *le, int n)
{
	memset(h, 0, sizeof *h);
	h->n = n < GATE_HIST_N ? n : GATE_HIST_N;
	memcpy(h->le, le, (size_t)h->n * sizeof *le);
}

void gate_hist_add(gate_hist *h, double v)
{
	int i = 0;
	while (i < h->n && v > h->le[i])
		i++;
	h->count[i]++;
	h->sum += v;
	h->total++;
}

void gate_metrics_init(gate_srv *g)
{
	int nt = (int)(sizeof time_le / sizeof *time_le);
	gate_hist_init(&g->m.latency, time_le, nt);
	gate_hist_init(&g->m.queue_wait, time_le, nt);
	gate_hist_init(&g->m.batch_size, size_le, (int)(sizeof size_le / sizeof *size_le));
	for (int i = 0; i < g->nup; i++)
		gate_hist_init(&g->up[i].upstream_s, time_le, nt);
}

/* A label value escaped as the text format wants (the exporter's escapes),
 * into out (len bytes). */
static const char *esc(const char *s, char *out, size_t len)
{
	gw_strbuf t = {0};
	exporter_buf_label_value(&t, s);
	snprintf(out, len, "%s", gw_sb_str(&t));
	gw_sb_free(&t);
	return out;
}

static void head(gw_strbuf *b, const char *name, const char *type, const char *help)
{
	exporter_buf_family(b, name, type, help);
}

static void hist(gw_strbuf *b, const char *name, const char *labels, const gate_hist *h)
{
	exporter_buf_histogram(b, name, labels, h->le, h->count, h->n, h->total, h->sum);
}

static void render_users(gw_strbuf *b, gate_srv *g)
{
	char e[300];
	head(b, "gpuwhy_gate_user_queued", "gauge", "Requests of the user waiting in the gate.");
	for (int i = 0; i < g->q.nusers; i++)
		gw_sb_printf(b, "gpuwhy_gate_user_queued{user=\"%s\"} %ld\n",
		             esc(g->q.users[i].name, e, sizeof e), g->q.users[i].queued);
	head(b, "gpuwhy_gate_user_inflight", "gauge", "Requests of the user at an upstream.");
	for (int i = 0; i < g->q.nusers; i++)
		gw_sb_printf(b, "gpuwhy_gate_user_inflight{user=\"%s\"} %ld\n",
		             esc(g->q.users[i].name, e, sizeof e), g->q.users[i].inflight);
	head(b, "gpuwhy_gate_user_served_total", "counter",
	     "Requests of the user sent to an upstream.");
	for (int i = 0; i < g->q.nusers; i++)
		gw_sb_printf(b, "gpuwhy_gate_user_served_total{user=\"%s\"} %llu\n",
		             esc(g->q.users[i].name, e, sizeof e),
		             (unsigned long long)g->q.users[i].served);
	head(b, "gpuwhy_gate_user_rejected_total", "counter",
	     "Requests of the user refused with 429 or 503.");
	for (int i = 0; i < g->q.nusers; i++)
		gw_sb_printf(b, "gpuwhy_gate_user_rejected_total{user=\"%s\"} %llu\n",
		             esc(g->q.users[i].name, e, sizeof e),
		             (unsigned long long)g->q.users[i].rejected);
}

static void render_upstreams(gw_strbuf *b, gate_srv *g)
{
	static const char *const kinds[GATE_UE__COUNT] = {"connect", "timeout", "status_5xx",
	                                                  "other"};
	char e[600], l[700];
	head(b, "gpuwhy_gate_upstream_inflight", "gauge", "Requests at the upstream now.");
	for (int i = 0; i < g->nup; i++)
		gw_sb_printf(b, "gpuwhy_gate_upstream_inflight{upstream=\"%s\"} %ld\n",
		             esc(g->up[i].cfg.url, e, sizeof e), g->up[i].inflight);
	head(b, "gpuwhy_gate_upstream_healthy", "gauge",
	     "1 when the upstream may take work, 0 while its GPUs hold it.");
	for (int i = 0; i < g->nup; i++)
		gw_sb_printf(b, "gpuwhy_gate_upstream_healthy{upstream=\"%s\"} %d\n",
		             esc(g->up[i].cfg.url, e, sizeof e), g->up[i].health[0] ? 0 : 1);
	head(b, "gpuwhy_gate_upstream_requests_total", "counter",
	     "Transfers sent to the upstream (a batch is one).");
	for (int i = 0; i < g->nup; i++)
		gw_sb_printf(b, "gpuwhy_gate_upstream_requests_total{upstream=\"%s\"} %llu\n",
		             esc(g->up[i].cfg.url, e, sizeof e),
		             (unsigned long long)g->up[i].requests);
	head(b, "gpuwhy_gate_upstream_errors_total", "counter",
	     "Failed transfers to the upstream by kind.");
	for (int i = 0; i < g->nup; i++)
		for (int k = 0; k < GATE_UE__COUNT; k++)
			gw_sb_printf(
			    b,
			    "gpuwhy_gate_upstream_errors_total{upstream=\"%s\",kind=\"%s\"} %llu\n",
			    esc(g->up[i].cfg.url, e, sizeof e), kinds[k],
			    (unsigned long long)g->up[i].errors[k]);
	head(b, "gpuwhy_gate_upstream_duration_seconds", "histogram",
	     "Time from sending to the upstream until its whole answer.");
	for (int i = 0; i < g->nup; i++) {
		snprintf(l, sizeof l, "upstream=\"%s\"", esc(g->up[i].cfg.url, e, sizeof e));
		hist(b, "gpuwhy_gate_upstream_duration_seconds", l, &g->up[i].upstream_s);
	}
	bool any = false;
	for (int i = 0; i < g->nup; i++)
		any |= !isnan(g->up[i].free_mib);
	if (any) {
		head(b, "gpuwhy_gate_upstream_gpu_free_mib", "gauge",
		     "Least free memory among the upstream's GPUs (MiB).");
		for (int i = 0; i < g->nup; i++)
			if (!isnan(g->up[i].free_mib))
				gw_sb_printf(
				    b, "gpuwhy_gate_upstream_gpu_free_mib{upstream=\"%s\"} %.0f\n",
				    esc(g->up[i].cfg.url, e, sizeof e), g->up[i].free_mib);
	}
}

char *gate_metrics_render(gate_srv *g, size_t *len)
{
	gw_strbuf b = {0};
	pthread_mutex_lock(&g->mu);
	head(&b, "gpuwhy_gate_queue_depth", "gauge", "Requests waiting in the gate's queue.");
	gw_sb_printf(&b, "gpuwhy_gate_queue_depth %ld\n", g->q.total);
	head(&b, "gpuwhy_gate_inflight", "gauge", "Requests at upstreams now.");
	gw_sb_printf(&b, "gpuwhy_gate_inflight %ld\n", g->inflight);
	head(&b, "gpuwhy_gate_requests_total", "counter", "Requests received.");
	gw_sb_printf(&b, "gpuwhy_gate_requests_total %llu\n", (unsigned long long)g->m.requests);
	head(&b, "gpuwhy_gate_responses_total", "counter", "Responses sent, by status class.");
	static const char *const cls[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
	for (int i = 0; i < 6; i++)
		gw_sb_printf(&b, "gpuwhy_gate_responses_total{code=\"%s\"} %llu\n", cls[i],
		             (unsigned long long)g->m.responses[i]);
	head(&b, "gpuwhy_gate_rejected_total", "counter", "Requests the gate refused, by reason.");
	for (int i = 0; i < GATE_R__COUNT; i++)
		gw_sb_printf(&b, "gpuwhy_gate_rejected_total{reason=\"%s\"} %llu\n",
		             gate_reason_names[i], (unsigned long long)g->m.rejected[i]);
	head(&b, "gpuwhy_gate_request_duration_seconds", "histogram",
	     "Time from a complete request to the start of its answer.");
	hist(&b, "gpuwhy_gate_request_duration_seconds", "", &g->m.latency);
	head(&b, "gpuwhy_gate_queue_wait_seconds", "histogram",
	     "Time requests waited in the gate's queue.");
	hist(&b, "gpuwhy_gate_queue_wait_seconds", "", &g->m.queue_wait);
	head(&b, "gpuwhy_gate_batch_size", "histogram", "Inputs per batch sent to an upstream.");
	hist(&b, "gpuwhy_gate_batch_size", "", &g->m.batch_size);
	head(&b, "gpuwhy_gate_batches_total", "counter", "Merged batches sent to upstreams.");
	gw_sb_printf(&b, "gpuwhy_gate_batches_total %llu\n", (unsigned long long)g->m.batches);
	head(&b, "gpuwhy_gate_batch_retries_total", "counter",
	     "Members of merged batches an upstream refused with a 4xx, sent again alone.");
	gw_sb_printf(&b, "gpuwhy_gate_batch_retries_total %llu\n",
	             (unsigned long long)g->m.batch_retries);
	head(&b, "gpuwhy_gate_websockets_open", "gauge", "WebSockets relayed now.");
	gw_sb_printf(&b, "gpuwhy_gate_websockets_open %ld\n", g->ws_open);
	head(&b, "gpuwhy_gate_websockets_total", "counter", "WebSocket upgrades tried.");
	gw_sb_printf(&b, "gpuwhy_gate_websockets_total %llu\n", (unsigned long long)g->ws_total);
	render_users(&b, g);
	render_upstreams(&b, g);
	pthread_mutex_unlock(&g->mu);
	*len = b.len;
	return gw_sb_take(&b);
}

/* The metrics port's handler: /metrics, and /health for probes. */
enum MHD_Result gate_metrics_serve(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls)
{
	gate_srv *g = cls;
	const char *body = "not found\n";
	unsigned status = 404;
	char *page = NULL;
	size_t len = strlen(body);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		body = "only GET\n";
		status = 405;
		len = strlen(body);
	} else if (!strcmp(url, "/metrics")) {
		page = gate_metrics_render(g, &len);
		body = page ? page : "out of memory\n";
		status = page ? 200 : 503;
		len = page ? len : strlen(body);
	} else if (!strcmp(url, "/health")) {
		body = "ok\n";
		status = 200;
		len = 3;
	}
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	free(page);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
	                        status == 200 && !strcmp(url, "/metrics")
	                            ? "text/plain; version=0.0.4; charset=utf-8"
	                            : "text/plain; charset=utf-8");
	enum MHD_Result rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}
