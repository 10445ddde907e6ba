/*
 * lifecycle.c - the running gate: the access log, the GPU watch, the dispatcher and
 * the server started in order; SIGHUP reloads the settings, SIGTERM or SIGINT
 * drains the requests in flight and stops.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/dispatch.h"
#include "gate/gate.h"
#include "gate/gpuwatch.h"
#include "gate/loop.h"
#include "gate/metrics.h"
#include "gate/route.h"
#include "gate/server.h"
#include "gate/ws.h"
#include "gate/xfer.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

static int open_log(gate_srv *g)
{
	const char *p = g->cfg.access_log;
	if (!strcmp(p, "off"))
		g->log = NULL;
	else if (!*p)
		g->log = stderr;
	else if (!strcmp(p, "-"))
		g->log = stdout;
	else {
		g->log = fopen(p, "a");
		if (!g->log)
			return gw_error(GW_EXIT_ENV, p, N_("check the directory and permissions"),
			                "cannot open the access log: %s", strerror(errno));
		g->log_close = true;
	}
	return 0;
}

static void reload(gate_srv *g, gate_reload_fn fn, void *ctx)
{
	gate_config nc;
	int rc = fn(ctx, &nc);
	if (rc) {
		fprintf(stderr, _("gpuwhy gate: config not reloaded (the message above says why); "
		                  "the previous settings stay\n"));
		gate_config_free(&nc);
		return;
	}
	pthread_mutex_lock(&g->mu);
	bool moved = strcmp(nc.listen, g->cfg.listen) || nc.nup != g->nup ||
	             strcmp(nc.metrics_listen, g->cfg.metrics_listen);
	for (int i = 0; !moved && i < nc.nup; i++)
		moved = strcmp(nc.up[i].url, g->up[i].cfg.url) != 0;
	/* Addresses and upstreams stay as started; everything else changes now. */
	snprintf(nc.listen, sizeof nc.listen, "%s", g->cfg.listen);
	snprintf(nc.metrics_listen, sizeof nc.metrics_listen, "%s", g->cfg.metrics_listen);
	nc.nup = g->cfg.nup;
	memcpy(nc.up, g->cfg.up, sizeof nc.up);
	for (int i = 0; i < g->nup; i++)
		if (i < nc.nup)
			g->up[i].cfg.max_inflight = nc.up[i].max_inflight;
	gate_config_free(&g->cfg);
	g->cfg = nc;
	gate_route_refresh(g);
	pthread_mutex_unlock(&g->mu);
	gate_loops_wake(g);
	fprintf(stderr, _("gpuwhy gate: config reloaded%s\n"),
	        moved ? _(" (listen addresses and upstreams change only on restart)") : "");
}

static bool idle(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	bool done = g->inflight_xfers == 0 && g->q.total == 0;
	pthread_mutex_unlock(&g->mu);
	return done;
}

static void drain(gate_srv *g)
{
	pthread_mutex_lock(&g->mu);
	g->draining = true;
	int64_t deadline = gw_mono_ns() + g->cfg.drain_timeout_ms * 1000000LL;
	pthread_mutex_unlock(&g->mu);
	gate_server_quiesce(g);
	fprintf(stderr, _("gpuwhy gate: draining (up to %ld ms)\n"), g->cfg.drain_timeout_ms);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	struct timespec tick = {0, 50000000L};
	while (!idle(g) && gw_mono_ns() < deadline)
		if (sigtimedwait(&set, NULL, &tick) > 0)
			break; /* a second signal: stop waiting */
	if (!idle(g)) {
		pthread_mutex_lock(&g->mu);
		g->abort_all = true;
		pthread_mutex_unlock(&g->mu);
		gate_loops_wake(g);
		for (int i = 0; i < 40 && !idle(g); i++)
			gw_sleep_ns(25000000LL);
	}
	/* Let the last answers leave before the daemon closes connections. */
	gw_sleep_ns(100000000LL);
}

static void print_start(gate_srv *g)
{
	fprintf(stderr, _("gpuwhy gate: serving http://%s -> "), g->cfg.listen);
	for (int i = 0; i < g->nup; i++)
		fprintf(stderr, "%s%s%s%s", i ? ", " : "", g->up[i].cfg.url,
		        g->up[i].cfg.gpu_text[0] ? "@" : "", g->up[i].cfg.gpu_text);
	fprintf(stderr, _(" (port %d)\n"), g->port);
	fprintf(stderr,
	        P_("gpuwhy gate: %d event loop\n", "gpuwhy gate: %d event loops\n", g->nloops),
	        g->nloops);
	if (g->md)
		fprintf(stderr, _("gpuwhy gate: metrics on http://%s/metrics (port %d)\n"),
		        g->cfg.metrics_listen, g->metrics_port);
}

static int start_gpus(gate_srv *g, gate_gpuwatch **w)
{
	bool named = false, any = false;
	for (int i = 0; i < g->nup; i++) {
		named |= g->up[i].cfg.ngpu > 0;
		any |= g->up[i].cfg.ngpu != 0;
	}
	if (!any)
		return 0;
	gw_fail err = {0};
	if (gate_gpuwatch_start(g, w, &err) != 0) {
		if (named)
			return gw_error(err.code, err.what, err.hint, "cannot read the GPUs: %s",
			                err.why_text);
		fprintf(stderr, _("gpuwhy gate: GPUs not read (%s); admission ignores the GPU\n"),
		        err.why_text);
		return 0;
	}
	for (int i = 0; i < g->nup; i++)
		for (int k = 0; k < g->up[i].cfg.ngpu; k++) {
			bool found = false;
			for (int j = 0; j < g->ngpu; j++)
				found |= g->gpu[j].index == g->up[i].cfg.gpu[k];
			if (!found)
				return gw_error(GW_EXIT_USAGE, g->up[i].cfg.url,
				                N_("gpuwhy status lists them"),
				                "GPU %d is not one of the %d GPUs here",
				                g->up[i].cfg.gpu[k], g->ngpu);
		}
	return 0;
}

/*
 * The event loops and what they run each pass, in this order: the
 * dispatcher first, so that a transfer it hands to its own loop starts in
 * the same pass, then the transfers, then the WebSockets.
 */
static int start_loops(gate_srv *g)
{
	if (gate_loops_init(g) != 0 || gate_xfer_start(g) != 0)
		return -1;
	gate_loop_handle(g, &gate_dispatch_handler);
	gate_loop_handle(g, &gate_xfer_handler);
	gate_loop_handle(g, &gate_ws_handler);
	return 0;
}

static void stop_loops(gate_srv *g)
{
	gate_xfer_stop(g);
	gate_loops_free(g);
	gate_dispatch_free(g);
}

static int serve(gate_srv *g, gate_reload_fn fn, void *ctx)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* Threads started from here on leave the signals to this one. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	gate_gpuwatch *w = NULL;
	int rc = start_gpus(g, &w);
	if (rc) {
		gate_gpuwatch_stop(w);
		return rc;
	}
	if (start_loops(g) != 0) {
		gate_gpuwatch_stop(w);
		return gw_error(GW_EXIT_ENV, "gate", NULL, "cannot start the dispatcher");
	}
	gw_fail fail = {0};
	if (gate_server_start(g, &fail) != 0) {
		stop_loops(g);
		gate_gpuwatch_stop(w);
		return gw_fail_print(&fail);
	}
	print_start(g);
	for (;;) {
		int sig = 0;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			reload(g, fn, ctx);
			continue;
		}
		break;
	}
	drain(g);
	gate_server_stop(g);
	stop_loops(g);
	gate_gpuwatch_stop(w);
	fprintf(stderr, _("gpuwhy gate: stopped\n"));
	return GW_EXIT_OK;
}

/* Both libraries are opened at start, so a missing one is one line and exit 3,
 * not a gate that listens and then fails every request. */
static int load_libraries(void)
{
	const char *why = gw_curl_error();
	if (!why)
		why = gw_mhd_error();
	return why ? gw_error(GW_EXIT_ENV, "gate", NULL, "%s", why) : 0;
}

/*
 * Each upstream's scheme, host and port as libcurl parses them: the only
 * place its transfers may connect to (every transfer is pinned there).
 */
static int parse_origins(gate_srv *g)
{
	for (int i = 0; i < g->nup; i++) {
		gate_up *u = &g->up[i];
		gw_fail err = {0};
		if (gate_origin_parse(u->cfg.url, &u->origin, &err) != 0)
			return gw_fail_print(&err);
		u->pin = curl_slist_append(NULL, u->origin.connect_to);
		if (!u->pin)
			return gw_error(GW_EXIT_ENV, "gate", NULL, "out of memory");
	}
	return 0;
}

static void free_origins(gate_srv *g)
{
	for (int i = 0; i < g->nup; i++) {
		curl_slist_free_all(g->up[i].pin);
		g->up[i].pin = NULL;
		gate_origin_free(&g->up[i].origin);
	}
}

int gate_run(gate_config *c, gate_reload_fn reload_fn, void *ctx)
{
	int lrc = load_libraries();
	if (lrc) {
		gate_config_free(c);
		return lrc;
	}
	gate_srv *g = calloc(1, sizeof *g);
	if (!g) {
		gate_config_free(c);
		return gw_error(GW_EXIT_ENV, "gate", NULL, "out of memory");
	}
	g->cfg = *c;
	g->nup = g->cfg.nup;
	for (int i = 0; i < g->nup; i++)
		g->up[i].cfg = g->cfg.up[i];
	int rc = parse_origins(g);
	if (!rc && gate_fairq_init(&g->q) != 0)
		rc = gw_error(GW_EXIT_ENV, "gate", NULL, "out of memory");
	if (!rc)
		rc = open_log(g);
	if (rc) {
		free_origins(g);
		gate_fairq_free(&g->q);
		gate_config_free(&g->cfg);
		free(g);
		return rc;
	}
	pthread_mutex_init(&g->mu, NULL);
	gate_metrics_init(g);
	gate_route_refresh(g);
	g->t_start = gw_mono_ns();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = serve(g, reload_fn, ctx);
	free_origins(g);
	curl_global_cleanup();
	if (g->log_close)
		fclose(g->log);
	gate_fairq_free(&g->q);
	gate_config_free(&g->cfg);
	pthread_mutex_destroy(&g->mu);
	free(g);
	return rc;
}
