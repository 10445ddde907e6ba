/*
 * upstream.c - the dispatcher: takes requests from the fair queue when an
 * upstream has a free slot (forming batches on batchable endpoints), runs
 * every transfer on a libcurl multi handle, and hands answers back to
 * the suspended client connections. It runs in the gate's event loops
 * (loop.c): any loop dispatches (under the gate's mutex, in fair order
 * over every loop's requests), and a transfer runs on the multi of the
 * loop that holds its (first) client, so a request usually goes from its
 * client to its upstream and back without a thread hop.
 *
 * Waiting requests time out here (503), so do transfers (504 via curl's
 * timeout); an unreachable upstream is a 502 and is tried again by later
 * requests, so it recovers without a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/gate_int.h"
#include "util/i18n.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define MAX_RESPONSE_BYTES (256UL << 20)

typedef struct {
	struct MHD_Connection *c;
	gate_loop *l;
} resume_one;

/* Connections to resume once the lock is let go; most passes have a few. */
typedef struct {
	resume_one *c;
	int n, cap;
	resume_one inl[16];
} resume_list;

static void rl_init(resume_list *l)
{
	l->c = l->inl;
	l->n = 0;
	l->cap = 16;
}

static void rl_add(resume_list *l, gate_req *r)
{
	if (r->conn_gone)
		return; /* its connection is closed: nothing to resume */
	if (l->n == l->cap) {
		int nc = l->cap * 2;
		resume_one *np = l->c == l->inl ? malloc((size_t)nc * sizeof *np)
		                                : realloc(l->c, (size_t)nc * sizeof *np);
		if (!np) {
			/* Resuming now is safe, only slower: MHD takes its own lock. */
			gate_resume(r->lp, r->conn);
			return;
		}
		if (l->c == l->inl)
			memcpy(np, l->inl, sizeof l->inl);
		l->c = np;
		l->cap = nc;
	}
	l->c[l->n++] = (resume_one){r->conn, r->lp};
}

static void rl_free(resume_list *l)
{
	if (l->c != l->inl)
		free(l->c);
}

/* A suspended connection stays until resumed, so these are still there. */
static void rl_run(resume_list *l)
{
	for (int i = 0; i < l->n; i++)
		gate_resume(l->c[i].l, l->c[i].c);
	l->n = 0;
}

/* ------------------------------------------------------------- callbacks */

static bool skip_response_header(const char *name, size_t n)
{
	static const char *const h[] = {"Connection",     "Keep-Alive", "Transfer-Encoding",
	                                "Content-Length", "Date",       "Trailer",
	                                "Upgrade",        NULL};
	for (int i = 0; h[i]; i++)
		if (strlen(h[i]) == n && !strncasecmp(name, h[i], n))
			return true;
	return false;
}

static void buf_add(char **b, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = *cap ? *cap : 1024;
		while (nc < *len + n + 1)
			nc *= 2;
		char *nb = realloc(*b, nc);
		if (!nb)
			return;
		*b = nb;
		*cap = nc;
	}
	memcpy(*b + *len, p, n);
	*len += n;
	(*b)[*len] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nitems, void *ud)
{
	gate_xfer *x = ud;
	size_t len = size * nitems, n = len;
	while (n && (p[n - 1] == '\r' || p[n - 1] == '\n'))
		n--;
	if (n >= 5 && !strncmp(p, "HTTP/", 5)) {
		/* A new status line (after 100 Continue): forget what came before. */
		x->hlen = 0;
		x->ctype[0] = '\0';
		x->has_length = x->chunked = false;
		return len;
	}
	const char *colon = memchr(p, ':', n);
	if (!colon)
		return len;
	size_t kl = (size_t)(colon - p);
	const char *v = colon + 1;
	while (v < p + n && *v == ' ')
		v++;
	size_t vl = (size_t)(p + n - v);
	if (kl == 14 && !strncasecmp(p, "Content-Length", 14))
		x->has_length = true;
	if (kl == 17 && !strncasecmp(p, "Transfer-Encoding", 17))
		x->chunked = true;
	if (kl == 12 && !strncasecmp(p, "Content-Type", 12)) {
		size_t cl = vl < sizeof x->ctype ? vl : sizeof x->ctype - 1;
		memcpy(x->ctype, v, cl);
		x->ctype[cl] = '\0';
	}
	if (!skip_response_header(p, kl)) {
		buf_add(&x->hbuf, &x->hlen, &x->hcap, p, n);
		buf_add(&x->hbuf, &x->hlen, &x->hcap, "\n", 1);
	}
	return len;
}

/* Begin streaming to the client: headers go now, the body as it comes. */
static void start_stream(gate_xfer *x)
{
	gate_srv *g = x->g;
	gate_req *r = x->m[0];
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	pthread_mutex_lock(&g->mu);
	r->status = (int)x->status;
	free(r->rhdrs);
	r->rhdrs = x->hbuf ? strdup(x->hbuf) : NULL;
	r->state = RQ_STREAMING;
	r->x = x;
	pthread_mutex_unlock(&g->mu);
	gate_resume(r->lp, r->conn);
}

static size_t on_data(char *p, size_t size, size_t nitems, void *ud)
{
	gate_xfer *x = ud;
	size_t len = size * nitems;
	if (!x->decided) {
		x->decided = true;
		bool sse = !strncasecmp(x->ctype, "text/event-stream", 17);
		/* A batch is never streamed: it is split once complete. */
		x->streaming = x->n == 1 && (sse || x->chunked || !x->has_length);
		if (x->streaming)
			start_stream(x);
	}
	if (!x->streaming) {
		if (x->rlen + len > MAX_RESPONSE_BYTES)
			return 0;
		buf_add(&x->rbuf, &x->rlen, &x->rcap, p, len);
		return len;
	}
	gate_req *r = x->m[0];
	pthread_mutex_lock(&r->smu);
	if (r->conn_gone) {
		pthread_mutex_unlock(&r->smu);
		return 0; /* the client left: stop the transfer */
	}
	if (r->slen - r->soff >= GATE_STREAM_HIGH) {
		/* The client reads slower than the upstream writes: hold the
		 * upstream (curl keeps this chunk) until the client has taken most
		 * of what is buffered, so a stream never grows without bound. */
		x->paused = x->held = true;
		x->l->npaused++;
		pthread_mutex_unlock(&r->smu);
		return CURL_WRITEFUNC_PAUSE;
	}
	buf_add(&r->sbuf, &r->slen, &r->scap, p, len);
	bool wake = r->s_waiting && !r->conn_gone;
	r->s_waiting = false;
	if (wake)
		gate_resume(r->lp, r->conn);
	pthread_mutex_unlock(&r->smu);
	return len;
}

/* ----------------------------------------------------------- transfers */

/*
 * Finished easy handles are kept for the loop's next transfers, with
 * their options: the fixed ones are set once per handle, and a transfer
 * sets only its own (curl_easy_reset and setting everything again cost
 * as much as the rest of a transfer's setup). A handle whose transfer
 * failed, was paused or was cut short is dropped instead, so that no
 * transfer inherits another's state.
 */
static CURL *easy_get(gate_loop *l, bool *fresh)
{
	*fresh = !l->easy_pooled;
	if (l->easy_pooled)
		return l->easy_pool[--l->easy_pooled];
	return curl_easy_init();
}

static void easy_put(gate_loop *l, CURL *e, bool reusable)
{
	if (reusable && l->easy_pooled < GATE_EASY_POOL)
		l->easy_pool[l->easy_pooled++] = e;
	else
		curl_easy_cleanup(e);
}

static void easy_pool_drain(gate_loop *l)
{
	while (l->easy_pooled)
		curl_easy_cleanup(l->easy_pool[--l->easy_pooled]);
}

static void xfer_free(gate_xfer *x)
{
	if (x->paused)
		x->l->npaused--;
	if (x->easy)
		easy_put(x->l, x->easy, x->reusable);
	curl_slist_free_all(x->hdrs);
	free(x->m);
	free(x->counts);
	free(x->body);
	free(x->hbuf);
	free(x->rbuf);
	free(x->url);
	free(x);
}

static void end_stream(gate_req *r)
{
	pthread_mutex_lock(&r->smu);
	r->s_done = true;
	bool wake = r->s_waiting && !r->conn_gone;
	r->s_waiting = false;
	if (wake)
		gate_resume(r->lp, r->conn);
	pthread_mutex_unlock(&r->smu);
}

/*
 * The headers of one member's answer: the upstream's, and what the
 * member shares with the others (their number; the batch's usage, which
 * its body no longer claims as its own). A new string, or NULL.
 */
static char *member_headers(const gate_xfer *x, const char *usage)
{
	gw_strbuf b = {0};
	if (x->hbuf)
		gw_sb_put(&b, x->hbuf, x->hlen);
	gw_sb_printf(&b, "X-Gpuwhy-Batch-Members: %d\n", x->n);
	if (usage)
		gw_sb_printf(&b, "X-Gpuwhy-Batch-Usage: %s\n", usage);
	return gw_sb_take(&b);
}

/* Give every member its answer from a finished batch (mu held). */
static void answer_batch(gate_xfer *x)
{
	gate_req *r0 = x->m[0];
	bool ok2xx = x->status >= 200 && x->status < 300;
	char **parts = calloc((size_t)x->n, sizeof *parts);
	char *usage = NULL;
	bool split = ok2xx && parts &&
	             gate_batch_split(&r0->brule, x->rbuf ? x->rbuf : "", x->rlen, x->counts, x->n,
	                              parts, &usage) == 0;
	char *hdrs = member_headers(x, usage);
	for (int i = 0; i < x->n; i++) {
		gate_req *r = x->m[i];
		if (ok2xx && !split) {
			gate_req_fail(r, 502, -1, 0,
			              "the upstream's batch answer has no list of %ld items at %s",
			              x->counts[i], r0->brule.output);
			continue;
		}
		r->status = (int)x->status;
		free(r->rbody);
		free(r->rhdrs);
		r->rhdrs = hdrs ? strdup(hdrs) : NULL;
		if (split) {
			r->rbody = parts[i];
			r->rlen = strlen(parts[i]);
			parts[i] = NULL;
		} else {
			/* A batch that failed with a 5xx fails each member with the
			 * upstream's status and body (a 4xx sends them alone: retry_alone). */
			r->rbody = malloc(x->rlen + 1);
			if (r->rbody && x->rlen)
				memcpy(r->rbody, x->rbuf, x->rlen);
			r->rlen = r->rbody ? x->rlen : 0;
		}
		r->state = RQ_READY;
	}
	if (parts)
		for (int i = 0; i < x->n; i++)
			free(parts[i]);
	free(parts);
	free(usage);
	free(hdrs);
}

/*
 * An upstream that refuses a merged batch with a 4xx may refuse what one
 * member sent (too many inputs for it, an input it rejects), or the
 * merge itself: no member should get that answer for what another sent.
 * Each member goes back to its queue, not batchable any more, and is sent
 * alone, once: its answer is its own. A 429 is the upstream asking for
 * fewer requests and reaches every member as it is.
 */
static bool retry_alone(const gate_xfer *x)
{
	return x->n > 1 && !x->streaming && x->status >= 400 && x->status < 500 && x->status != 429;
}

/* Put member r of a refused batch back in its user's queue (mu held). */
static void requeue_alone(gate_srv *g, gate_req *r, int64_t now)
{
	r->rule = -1;
	r->retried = true;
	r->batch_id = 0;
	r->batch_size = 0;
	r->t_queued = r->q.t_enqueue_ns = now;
	r->state = RQ_QUEUED;
	gate_fairq_push(&g->q, r->u, &r->q);
	g->m.batch_retries++;
}

static void classify(gate_srv *g, gate_xfer *x, CURLcode rc, int *status, char *why, char *text,
                     size_t wl)
{
	gate_up *u = &g->up[x->up];
	*status = 0;
	if (x->refused) {
		*status = 400;
		gate_say(why, text, wl,
		         "no URL on upstream %s can be built from this request-target", u->cfg.url);
		return;
	}
	if (rc == CURLE_OK) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		if (x->status >= 500)
			u->errors[GATE_UE_STATUS_5XX]++;
		u->down = false;
		return;
	}
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST) {
		u->errors[GATE_UE_CONNECT]++;
		u->down = true;
		u->down_until_ns = gw_mono_ns() + 1000000000LL;
		*status = 502;
		gate_say(why, text, wl, "upstream %s is unreachable: %s", u->cfg.url,
		         curl_easy_strerror(rc));
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		u->errors[GATE_UE_TIMEOUT]++;
		*status = 504;
		gate_say(why, text, wl, "upstream %s did not answer within upstream_timeout_ms %ld",
		         u->cfg.url, g->cfg.upstream_timeout_ms);
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		*status = 503;
		gate_say(why, text, wl, "the gate shut down before %s answered", u->cfg.url);
	} else {
		u->errors[GATE_UE_OTHER]++;
		*status = 502;
		gate_say(why, text, wl, "upstream %s failed: %s", u->cfg.url,
		         curl_easy_strerror(rc));
	}
}

static void finish(gate_xfer *x, CURLcode rc)
{
	gate_srv *g = x->g;
	resume_list rl;
	rl_init(&rl);
	pthread_mutex_lock(&g->mu);
	if (x->prev)
		x->prev->next = x->next;
	else
		x->l->xfers = x->next;
	if (x->next)
		x->next->prev = x->prev;
	gate_up *u = &g->up[x->up];
	u->inflight--;
	g->inflight_xfers--;
	int64_t now = gw_mono_ns();
	gate_hist_add(&u->upstream_s, (double)(now - x->t_start) / 1e9);
	int fail;
	char why[700], text[700];
	classify(g, x, rc, &fail, why, text, sizeof why);
	x->reusable = rc == CURLE_OK && !x->held;
	bool again = !fail && retry_alone(x);
	if (!fail && !again && !x->streaming && x->n > 1)
		answer_batch(x);
	for (int i = 0; i < x->n; i++) {
		gate_req *r = x->m[i];
		if (r->u)
			r->u->inflight--;
		g->inflight--;
		if (again) {
			if (!r->conn_gone && r->u)
				requeue_alone(g, r, now);
		} else if (x->streaming) {
			r->x = NULL;
			end_stream(r);
		} else if (fail) {
			gate_req_fail_said(r, fail, -1, 0, why, text);
			rl_add(&rl, r);
		} else if (x->n == 1) {
			r->status = (int)x->status;
			free(r->rbody);
			free(r->rhdrs);
			r->rbody = x->rbuf;
			r->rlen = x->rlen;
			x->rbuf = NULL;
			r->rhdrs = x->hbuf;
			x->hbuf = NULL;
			r->state = RQ_READY;
			rl_add(&rl, r);
		} else {
			rl_add(&rl, r);
		}
		gate_req_unref(r);
	}
	pthread_mutex_unlock(&g->mu);
	rl_run(&rl);
	rl_free(&rl);
	if (again)
		gate_dispatch_wake(g); /* they may go at once, from any loop */
	if (x->easy)
		curl_multi_remove_handle(x->l->multi, x->easy);
	xfer_free(x);
}

/* The options every transfer of a handle shares. */
static void easy_fixed(CURL *e)
{
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	/* A redirect is the upstream's answer, passed to the client: the gate
	 * fetches nothing from anywhere but the upstream (target.c). */
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_MAXREDIRS, 0L);
	curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_DISALLOW_USERNAME_IN_URL, 1L);
	/* The path as the client sent it, as the access log shows it. */
	curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
	/* Upstreams are reached directly: an http_proxy meant for the user's
	 * own traffic must not reroute a reverse proxy (and reading the
	 * environment for it, and for no_proxy, costs every request). */
	curl_easy_setopt(e, CURLOPT_PROXY, "");
	curl_easy_setopt(e, CURLOPT_NOPROXY, "");
}

/* The URL target fetches at upstream up: gate_url_build's, or the same
 * one built a moment ago by this loop. A new string, NULL when refused. */
static char *loop_url(gate_loop *l, const gate_up *u, int up, const char *target)
{
	for (int i = 0; i < GATE_URL_CACHE; i++)
		if (l->urls[i].target && l->urls[i].up == up && !strcmp(l->urls[i].target, target))
			return strdup(l->urls[i].url);
	char *url = gate_url_build(&u->origin, target, NULL);
	if (!url || strlen(target) > GATE_URL_CACHE_TARGET)
		return url;
	char *t = strdup(target), *c = strdup(url);
	if (t && c) {
		unsigned i = l->nurls++ % GATE_URL_CACHE;
		free(l->urls[i].target);
		free(l->urls[i].url);
		l->urls[i].up = up;
		l->urls[i].target = t;
		l->urls[i].url = c;
	} else {
		free(t);
		free(c);
	}
	return url;
}

static void loop_urls_free(gate_loop *l)
{
	for (int i = 0; i < GATE_URL_CACHE; i++) {
		free(l->urls[i].target);
		free(l->urls[i].url);
		l->urls[i].target = l->urls[i].url = NULL;
	}
}

static int setup_easy(gate_srv *g, gate_xfer *x, gate_req *r, const char *body, size_t len)
{
	bool fresh;
	CURL *e = x->easy = easy_get(x->l, &fresh);
	if (!e)
		return -1;
	if (fresh)
		easy_fixed(e);
	gate_up *u = &g->up[x->up];
	x->url = loop_url(x->l, u, x->up, r->uri);
	if (!x->url) {
		x->refused = true;
		return -1;
	}
	for (int i = 0; i < x->n; i++) {
		free(x->m[i]->url);
		x->m[i]->url = strdup(x->url);
	}
	curl_easy_setopt(e, CURLOPT_URL, x->url);
	/* Whatever the URL says, the connection goes to the upstream's host and port. */
	curl_easy_setopt(e, CURLOPT_CONNECT_TO, u->pin);
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, g->cfg.upstream_timeout_ms);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
	                 g->cfg.upstream_timeout_ms < 10000 ? g->cfg.upstream_timeout_ms : 10000L);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs ? x->hdrs : r->fwd);
	/* The method of the handle's last transfer is undone first. */
	curl_easy_setopt(e, CURLOPT_NOBODY, 0L);
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, (char *)NULL);
	if (!strcmp(r->method, "GET"))
		return 0;
	if (!strcmp(r->method, "HEAD")) {
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		return 0;
	}
	if (strcmp(r->method, "POST"))
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method);
	if (len || !strcmp(r->method, "POST")) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, body ? body : "");
	}
	return 0;
}

/* Send members (already taken from the queue) to upstream up (mu held). */
static void start_xfer(gate_srv *g, int up, gate_req **m, int n, resume_list *rl)
{
	int64_t now = gw_mono_ns();
	gate_xfer *x = calloc(1, sizeof *x);
	gate_req **mm = x ? malloc((size_t)n * sizeof *mm) : NULL;
	long *counts = x ? malloc((size_t)n * sizeof *counts) : NULL;
	long inputs = 0;
	for (int i = 0; i < n; i++)
		inputs += m[i]->ninputs;
	const char *body = m[0]->body;
	size_t len = m[0]->len;
	if (x && mm && counts && n > 1) {
		json_t **roots = malloc((size_t)n * sizeof *roots);
		for (int i = 0; roots && i < n; i++)
			roots[i] = m[i]->jroot;
		x->body = roots ? gate_batch_merge(&m[0]->brule, roots, n) : NULL;
		free(roots);
		body = x->body;
		len = body ? strlen(body) : 0;
	}
	/* A batch answer is split, so it must come uncompressed. */
	if (x && n > 1) {
		for (struct curl_slist *h = m[0]->fwd; h; h = h->next)
			if (strncasecmp(h->data, "Accept-Encoding:", 16))
				x->hdrs = curl_slist_append(x->hdrs, h->data);
		x->hdrs = curl_slist_append(x->hdrs, "Accept-Encoding: identity");
	}
	if (x) {
		x->g = g;
		x->l = m[0]->lp;
		x->up = up;
		x->m = mm;
		x->counts = counts;
		x->n = n;
		x->orig_body = body;
		x->orig_len = len;
	}
	if (!x || !mm || !counts || (n > 1 && !body)) {
		for (int i = 0; i < n; i++) {
			gate_req_fail(m[i], 503, -1, 1, "the gate could not start the transfer");
			rl_add(rl, m[i]);
		}
		if (x)
			xfer_free(x);
		else {
			free(mm);
			free(counts);
		}
		return;
	}
	x->t_start = now;
	uint64_t bid = m[0]->rule >= 0 ? ++g->next_batch : 0;
	if (bid)
		gate_hist_add(&g->m.batch_size, (double)inputs);
	if (n > 1)
		g->m.batches++;
	for (int i = 0; i < n; i++) {
		gate_req *r = m[i];
		mm[i] = r;
		counts[i] = r->ninputs;
		r->refs++;
		r->state = RQ_INFLIGHT;
		r->t_sent = now;
		r->up = up;
		r->batch_id = bid;
		r->batch_size = (int)inputs;
		if (r->u) {
			r->u->inflight++;
			r->u->served++;
		}
		gate_hist_add(&g->m.queue_wait, (double)(now - r->t_queued) / 1e9);
		g->inflight++;
	}
	g->up[up].inflight++;
	g->up[up].requests++;
	g->inflight_xfers++;
	/* Its loop starts it: the curl multi is that thread's only. */
	x->next = x->l->pending;
	x->l->pending = x;
	if (x->l != gate_loop_self())
		gate_loop_wake(x->l);
}

/* Start the transfers other loops (or this one) dispatched to l. */
/* (mu held) Returns the ones that could not start, for finish() once unlocked. */
static gate_xfer *take_pending(gate_loop *l)
{
	gate_srv *g = l->g;
	gate_xfer *failed = NULL;
	gate_xfer *x = l->pending;
	l->pending = NULL;
	while (x) {
		gate_xfer *nx = x->next;
		x->prev = NULL;
		x->next = l->xfers;
		if (l->xfers)
			l->xfers->prev = x;
		l->xfers = x;
		if (setup_easy(g, x, x->m[0], x->orig_body, x->orig_len) ||
		    curl_multi_add_handle(l->multi, x->easy) != CURLM_OK) {
			x->pnext = failed;
			failed = x;
		}
		x = nx;
	}
	return failed;
}

/* ----------------------------------------------------------- dispatching */

typedef struct {
	gate_req **c;
	long n, cap;
} cands;

static int collect(gate_qitem *it, void *arg)
{
	cands *c = arg;
	if (c->n == c->cap)
		return -1;
	c->c[c->n++] = (gate_req *)it;
	return 1;
}

/* Form the batch that r heads; returns how many members are in m (0: wait). */
static int form_batch(gate_srv *g, cands *c, long i, int64_t now, gate_req **m, int64_t *next,
                      bool *leftover)
{
	gate_req *r = c->c[i];
	const gate_batch_rule *rule = &r->brule;
	long total = r->ninputs;
	int64_t oldest = r->t_queued;
	int n = 1;
	m[0] = r;
	r->pass = g->pass;
	for (long j = i + 1; j < c->n; j++) {
		gate_req *s = c->c[j];
		if (s->state != RQ_QUEUED || s->rule < 0 || s->pass == g->pass ||
		    strcmp(s->bkey, r->bkey) != 0)
			continue;
		s->pass = g->pass;
		if (total + s->ninputs > rule->max_batch_size || n == 4096) {
			*leftover = true;
			continue;
		}
		m[n++] = s;
		total += s->ninputs;
		if (s->t_queued < oldest)
			oldest = s->t_queued;
	}
	int64_t due = oldest + rule->max_queue_delay_us * 1000LL;
	long size = gate_batch_choose(rule, total, now >= due);
	if (size == 0) {
		if (due < *next)
			*next = due;
		return 0;
	}
	long sum = 0;
	int k = 0;
	while (k < n && (k == 0 || sum + m[k]->ninputs <= size))
		sum += m[k++]->ninputs;
	if (k < n)
		*leftover = true;
	return k;
}

/*
 * How long a request just queued by its loop is left for that loop to
 * send: it dispatches right after reading the request, and sending from
 * there saves a hand-over (a wake-up of that loop) per request.
 */
#define HANDOFF_GRACE_NS 200000LL

static void dispatch(gate_srv *g, gate_loop *self, int64_t now, int64_t *next, resume_list *rl)
{
	g->hold_why[0] = g->hold_why_text[0] = '\0';
	if (!g->q.total)
		return;
	long want = g->q.total < 65536 ? g->q.total : 65536;
	if (want > g->cand_cap) {
		gate_req **nc = realloc(g->cand, (size_t)want * sizeof *nc);
		if (!nc)
			return;
		g->cand = nc;
		g->cand_cap = want;
	}
	cands c = {.c = g->cand, .cap = want};
	gate_req *m[4096];
	gate_fairq_walk(&g->q, collect, &c);
	g->pass++;
	bool leftover = false;
	for (long i = 0; i < c.n; i++) {
		gate_req *r = c.c[i];
		if (r->state != RQ_QUEUED || r->pass == g->pass)
			continue;
		if (g->inflight_xfers >= g->cfg.max_inflight)
			break;
		/* Stop rather than skip it: the fair order holds across loops. */
		if (r->lp != self && now - r->t_queued < HANDOFF_GRACE_NS) {
			if (r->t_queued + HANDOFF_GRACE_NS < *next)
				*next = r->t_queued + HANDOFF_GRACE_NS;
			break;
		}
		bool held;
		int up =
		    gate_route_pick(g, &held, g->hold_why, g->hold_why_text, sizeof g->hold_why);
		if (up < 0)
			break;
		int n = 1;
		m[0] = r;
		if (r->rule >= 0) {
			n = form_batch(g, &c, i, now, m, next, &leftover);
			if (n == 0)
				continue;
		}
		for (int k = 0; k < n; k++)
			gate_fairq_take(&g->q, &m[k]->q);
		start_xfer(g, up, m, n, rl);
	}
	if (leftover)
		*next = now;
}

/* A request that waited its queue_timeout_ms while no upstream could take it:
 * the reasons are said in each language already. */
static void held_too_long(gate_srv *g, gate_req *r)
{
	char en[sizeof r->reason], text[sizeof r->reason];
	gate_cut(en, sizeof en, "waited %ld ms in the queue, held: %s", g->cfg.queue_timeout_ms,
	         g->hold_why);
	gate_cut(text, sizeof text, _("waited %ld ms in the queue, held: %s"),
	         g->cfg.queue_timeout_ms, g->hold_why_text);
	gate_req_fail_said(r, 503, GATE_R_GPU_HOLD, 5, en, text);
}

/* Fail requests that waited longer than queue_timeout_ms (mu held). */
static void expire(gate_srv *g, int64_t now, int64_t *next, resume_list *rl, bool all)
{
	int64_t limit = g->cfg.queue_timeout_ms * 1000000LL;
	for (int i = 0; i < g->q.nusers; i++) {
		gate_user *u = &g->q.users[i];
		while (u->head) {
			gate_req *r = (gate_req *)u->head;
			if (!all && now - r->t_queued < limit) {
				if (r->t_queued + limit < *next)
					*next = r->t_queued + limit;
				break;
			}
			gate_fairq_remove(&g->q, &r->q);
			if (all)
				gate_req_fail(r, 503, GATE_R_DRAINING, 1,
				              "the gate shut down before this request was sent");
			else if (g->hold_why[0])
				held_too_long(g, r);
			else
				gate_req_fail(r, 503, GATE_R_QUEUE_TIMEOUT, 1,
				              "waited %ld ms in the queue (queue_timeout_ms)",
				              g->cfg.queue_timeout_ms);
			rl_add(rl, r);
		}
	}
}

void gate_dispatch_step(gate_loop *l, int64_t *next)
{
	gate_srv *g = l->g;
	/* Nothing queued, nothing handed over: no need for the lock. A request
	 * queued meanwhile by another loop is dispatched by that loop, and one
	 * queued before a slot here was freed is seen, since freeing it took
	 * the lock after the queueing did. */
	if (!__atomic_load_n(&g->q.total, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&l->pending, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&g->abort_all, __ATOMIC_RELAXED)) {
		*next = gw_mono_ns() + 1000000000LL;
		return;
	}
	resume_list rl;
	rl_init(&rl);
	pthread_mutex_lock(&g->mu);
	bool abort_all = g->abort_all;
	int64_t now = gw_mono_ns();
	*next = now + 1000000000LL;
	expire(g, now, next, &rl, abort_all);
	if (!abort_all)
		dispatch(g, l, now, next, &rl);
	gate_xfer *failed = take_pending(l);
	pthread_mutex_unlock(&g->mu);
	rl_run(&rl);
	rl_free(&rl);
	for (gate_xfer *nx; failed; failed = nx) {
		nx = failed->pnext;
		finish(failed, CURLE_FAILED_INIT);
	}
	if (abort_all)
		gate_dispatch_abort(l);
}

bool gate_dispatch_reap(gate_loop *l)
{
	CURLMsg *msg;
	int left;
	bool freed = false;
	while ((msg = curl_multi_info_read(l->multi, &left)))
		if (msg->msg == CURLMSG_DONE) {
			gate_xfer *x;
			CURL *e = msg->easy_handle;
			CURLcode rc = msg->data.result;
			curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
			finish(x, rc);
			freed = true;
		}
	return freed;
}

void gate_dispatch_abort(gate_loop *l)
{
	gate_srv *g = l->g;
	pthread_mutex_lock(&g->mu);
	gate_xfer *p = l->pending;
	l->pending = NULL;
	pthread_mutex_unlock(&g->mu);
	/* Handed over but not started: they are finished here all the same. */
	while (p) {
		gate_xfer *np = p->next;
		p->prev = NULL;
		p->next = l->xfers;
		if (l->xfers)
			l->xfers->prev = p;
		l->xfers = p;
		p = np;
	}
	while (l->xfers)
		finish(l->xfers, CURLE_ABORTED_BY_CALLBACK);
}

void gate_dispatch_unpause(gate_loop *l)
{
	if (!l->npaused)
		return;
	for (gate_xfer *x = l->xfers; x; x = x->next) {
		if (!x->paused || !x->streaming)
			continue;
		gate_req *r = x->m[0];
		pthread_mutex_lock(&r->smu);
		bool go = r->conn_gone || r->slen - r->soff <= GATE_STREAM_LOW;
		pthread_mutex_unlock(&r->smu);
		if (go) {
			x->paused = false;
			l->npaused--;
			/* May deliver the held chunk at once, into on_data. */
			curl_easy_pause(x->easy, CURLPAUSE_CONT);
		}
	}
}

int gate_dispatch_start(gate_srv *g)
{
	g->nloops = gate_workers(&g->cfg);
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		l->g = g;
		l->idx = i;
		l->ep = l->wakefd = -1;
		l->multi = curl_multi_init();
		if (!l->multi)
			return -1;
		/* Idle connections to each upstream are kept for reuse. */
		curl_multi_setopt(l->multi, CURLMOPT_MAXCONNECTS, (long)g->cfg.max_inflight * 2);
		if (gate_loop_init(l) != 0)
			return -1;
	}
	return 0;
}

void gate_dispatch_stop(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (!l->multi)
			continue;
		/* The loops have ended: what is still in flight has no one to answer. */
		gate_dispatch_abort(l);
		gate_loop_free(l);
		easy_pool_drain(l);
		loop_urls_free(l);
		curl_multi_cleanup(l->multi);
		l->multi = NULL;
	}
	free(g->cand);
	g->cand = NULL;
}
