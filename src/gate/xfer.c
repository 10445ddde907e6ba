/*
 * xfer.c - the transfers to upstreams, on libcurl: one curl multi per
 * event loop, driven by that loop (this file is its handler, loop.c: the
 * multi's sockets and timer, finished transfers, streams to resume), easy
 * handles kept for the next transfers, each transfer's URL pinned to its
 * upstream's host and port (target.c), and its outcome given to its
 * requests (request.c): a whole answer, a streamed one (with backpressure:
 * the upstream is paused while the client reads slowly), a batch split
 * into its members' answers, or a refused batch sent again alone.
 * An unreachable upstream is a 502 and is tried again by later requests,
 * so it recovers without a restart; a transfer past upstream_timeout_ms
 * is a 504 (curl's timeout). Which request goes where is dispatch.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>

#include "gate/batch.h"
#include "gate/loop.h"
#include "gate/metrics.h"
#include "gate/request.h"
#include "gate/say.h"
#include "gate/xfer.h"
#include "util/i18n.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define MAX_RESPONSE_BYTES (256UL << 20)

/* One transfer to an upstream: a request, or a batch of them merged. */
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

/* ------------------------------------------------ the multi's descriptors */

/*
 * What the loop knows of a curl descriptor. A socket curl lets go of
 * (CURL_POLL_REMOVE: its transfer ended, the connection waits in curl's
 * cache) stays in the epoll set as it was: the next transfer on that
 * connection usually wants the same events, so it costs no epoll_ctl,
 * and an event on it while unwanted removes it then. A closed descriptor
 * leaves the set by itself; its number's next user finds that out below.
 */
#define FD_IN_SET (1U << 31) /* registered with epoll (as far as we know) */
#define FD_WANTED (1U << 30) /* curl asked for events on it */
#define FD_SOON (1U << 29)   /* to be told "writable" without asking epoll */
#define FD_TRIED (1U << 28)  /* ... which was tried: ask epoll next time */
#define FD_EVENTS 0xffffU

static uint32_t *fd_state(gate_loop *l, curl_socket_t s)
{
	if (s < 0)
		return NULL;
	if (s >= l->nfdst) {
		int n = l->nfdst ? l->nfdst : 256;
		while (n <= s)
			n *= 2;
		uint32_t *p = realloc(l->fdst, (size_t)n * sizeof *p);
		if (!p)
			return NULL;
		memset(p + l->nfdst, 0, (size_t)(n - l->nfdst) * sizeof *p);
		l->fdst = p;
		l->nfdst = n;
	}
	return &l->fdst[s];
}

static int on_socket(CURL *e, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)e, (void)socketp;
	gate_loop *l = userp;
	uint32_t *st = fd_state(l, s);
	if (what == CURL_POLL_REMOVE) {
		if (st)
			*st &= ~(FD_WANTED | FD_SOON | FD_TRIED);
		else
			epoll_ctl(l->ep, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	struct epoll_event ev = {.data.u64 = GATE_TAG_CURL | (uint32_t)s};
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (st && (*st & FD_IN_SET) && (*st & FD_EVENTS) == ev.events) {
		*st = (*st | FD_WANTED) & ~FD_TRIED;
		return 0;
	}
	/*
	 * A connection from curl's cache that wants to write is about to send
	 * a request on an idle, connected socket: it can write now. Telling
	 * curl so when this action returns saves two epoll_ctl calls and a
	 * pass of the loop; should the socket be full after all, curl asks
	 * again and epoll is asked then.
	 */
	if (st && (*st & FD_IN_SET) && what == CURL_POLL_OUT && !(*st & FD_TRIED) &&
	    l->nsoon < (int)(sizeof l->soon / sizeof *l->soon)) {
		if (!(*st & FD_SOON))
			l->soon[l->nsoon++] = s;
		*st |= FD_WANTED | FD_SOON;
		return 0;
	}
	/* A reused descriptor number may still be in the set, or gone from it
	 * when curl closed it: try the other operation. */
	bool in = st && (*st & FD_IN_SET);
	if (epoll_ctl(l->ep, in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0) {
		if (errno == EEXIST)
			epoll_ctl(l->ep, EPOLL_CTL_MOD, s, &ev);
		else if (errno == ENOENT)
			epoll_ctl(l->ep, EPOLL_CTL_ADD, s, &ev);
	}
	if (st)
		*st = FD_IN_SET | FD_WANTED | ev.events;
	return 0;
}

static void curl_action(gate_loop *l, curl_socket_t s, int mask);

/* Tell curl the sockets it is about to write on are writable. */
static void run_soon(gate_loop *l)
{
	while (l->nsoon) {
		curl_socket_t s = l->soon[--l->nsoon];
		uint32_t *st = s < l->nfdst ? &l->fdst[s] : NULL;
		if (!st || !(*st & FD_SOON))
			continue;
		*st = (*st & ~FD_SOON) | FD_TRIED;
		if (*st & FD_WANTED)
			curl_action(l, s, CURL_CSELECT_OUT);
	}
}

/* An event on a curl descriptor: true when curl wants it. */
static bool curl_wants(gate_loop *l, curl_socket_t s)
{
	uint32_t *st = s < l->nfdst ? &l->fdst[s] : NULL;
	if (!st || (*st & FD_WANTED))
		return true;
	/* An idle connection in curl's cache has news (most often: the
	 * upstream closed it); curl looks at it when it picks it again. */
	epoll_ctl(l->ep, EPOLL_CTL_DEL, s, NULL);
	*st = 0;
	return false;
}

static int on_timer(CURLM *m, long timeout_ms, void *userp)
{
	(void)m;
	gate_loop *l = userp;
	l->curl_due_ns = timeout_ms < 0 ? INT64_MAX : gw_mono_ns() + timeout_ms * 1000000LL;
	return 0;
}

static void curl_action(gate_loop *l, curl_socket_t s, int mask)
{
	int running;
	if (s == CURL_SOCKET_TIMEOUT)
		l->curl_due_ns = INT64_MAX; /* curl sets the next one as it acts */
	curl_multi_socket_action(l->multi, s, mask, &running);
	run_soon(l);
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
		gate_buf_add(&x->hbuf, &x->hlen, &x->hcap, p, n);
		gate_buf_add(&x->hbuf, &x->hlen, &x->hcap, "\n", 1);
	}
	return len;
}

/* Begin streaming to the client: headers go now, the body as it comes. */
static void start_stream(gate_xfer *x)
{
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	gate_req_stream_begin(x->m[0], x, (int)x->status, x->hbuf);
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
		gate_buf_add(&x->rbuf, &x->rlen, &x->rcap, p, len);
		return len;
	}
	int took = gate_req_stream_put(x->m[0], p, len);
	if (took < 0)
		return 0; /* the client left: stop the transfer */
	if (took > 0) {
		/* The client reads slower than the upstream writes: hold the
		 * upstream (curl keeps this chunk) until the client has taken most
		 * of what is buffered, so a stream never grows without bound. */
		x->paused = x->held = true;
		x->l->npaused++;
		return CURL_WRITEFUNC_PAUSE;
	}
	return len;
}

/* ------------------------------------------------------------ easy handles */

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
		char *h = hdrs ? strdup(hdrs) : NULL;
		if (split) {
			gate_req_answer(r, (int)x->status, parts[i], strlen(parts[i]), h);
			parts[i] = NULL;
			continue;
		}
		/* A batch that failed with a 5xx fails each member with the
		 * upstream's status and body (a 4xx sends them alone: retry_alone). */
		char *b = malloc(x->rlen + 1);
		if (b && x->rlen)
			memcpy(b, x->rbuf, x->rlen);
		gate_req_answer(r, (int)x->status, b, b ? x->rlen : 0, h);
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

/* --------------------------------------------------- starting, finishing */

gate_xfer *gate_xfer_new(gate_srv *g, int up, gate_req **m, int n, int64_t now)
{
	gate_xfer *x = calloc(1, sizeof *x);
	gate_req **mm = x ? malloc((size_t)n * sizeof *mm) : NULL;
	long *counts = x ? malloc((size_t)n * sizeof *counts) : NULL;
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
		if (x)
			xfer_free(x);
		else {
			free(mm);
			free(counts);
		}
		return NULL;
	}
	x->t_start = now;
	for (int i = 0; i < n; i++) {
		mm[i] = m[i];
		counts[i] = m[i]->ninputs;
	}
	return x;
}

void gate_xfer_hand(gate_xfer *x)
{
	/* Its loop starts it: the curl multi is that thread's only. */
	x->next = x->l->pending;
	x->l->pending = x;
	if (x->l != gate_loop_self())
		gate_loop_wake(x->l);
}

/* End member r of finished transfer x (mu held); what to resume goes in rl. */
static void end_member(gate_xfer *x, gate_req *r, bool again, int fail, const char *why,
                       const char *text, int64_t now, gate_resume_list *rl)
{
	gate_srv *g = x->g;
	gate_req_back(g, r);
	if (again) {
		if (!r->conn_gone && r->u)
			gate_req_requeue_alone(g, r, now);
	} else if (x->streaming) {
		gate_req_stream_end(r);
	} else if (fail) {
		gate_req_fail_said(r, fail, -1, 0, why, text);
		gate_rl_add(rl, r);
	} else if (x->n == 1) {
		gate_req_answer(r, (int)x->status, x->rbuf, x->rlen, x->hbuf);
		x->rbuf = NULL;
		x->hbuf = NULL;
		gate_rl_add(rl, r);
	} else {
		gate_rl_add(rl, r);
	}
	gate_req_unref(r);
}

static void finish(gate_xfer *x, CURLcode rc)
{
	gate_srv *g = x->g;
	gate_resume_list rl;
	gate_rl_init(&rl);
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
	for (int i = 0; i < x->n; i++)
		end_member(x, x->m[i], again, fail, why, text, now, &rl);
	pthread_mutex_unlock(&g->mu);
	gate_rl_run(&rl);
	if (again)
		gate_loops_wake(g); /* they may go at once, from any loop */
	if (x->easy)
		curl_multi_remove_handle(x->l->multi, x->easy);
	xfer_free(x);
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

/* Answer finished transfers. True when one ended (a slot is free). */
static bool reap(gate_loop *l)
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

/* End every transfer of l in flight (or handed to it) with a 503. */
static void abort_all(gate_loop *l)
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

/* Resume paused streams whose client has caught up. */
static void unpause(gate_loop *l)
{
	if (!l->npaused)
		return;
	for (gate_xfer *x = l->xfers; x; x = x->next) {
		if (!x->paused || !x->streaming)
			continue;
		if (gate_req_stream_drained(x->m[0])) {
			x->paused = false;
			l->npaused--;
			/* May deliver the held chunk at once, into on_data. */
			curl_easy_pause(x->easy, CURLPAUSE_CONT);
		}
	}
}

/* ------------------------------------------------------- the loop's handler */

/* Start what other loops (or this one) handed over; end all when the gate stops. */
static void xfer_tick(gate_loop *l, int64_t *next)
{
	gate_srv *g = l->g;
	if (__atomic_load_n(&l->pending, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&g->mu);
		gate_xfer *failed = take_pending(l);
		pthread_mutex_unlock(&g->mu);
		for (gate_xfer *nx; failed; failed = nx) {
			nx = failed->pnext;
			finish(failed, CURLE_FAILED_INIT);
		}
	}
	if (__atomic_load_n(&g->abort_all, __ATOMIC_RELAXED))
		abort_all(l);
	if (l->curl_due_ns <= gw_mono_ns())
		curl_action(l, CURL_SOCKET_TIMEOUT, 0);
	if (l->curl_due_ns < *next)
		*next = l->curl_due_ns;
}

static void xfer_idle(gate_loop *l, int64_t *next)
{
	unpause(l);
	if (l->curl_due_ns < *next)
		*next = l->curl_due_ns;
}

static void xfer_event(gate_loop *l, uint64_t data, uint32_t ev)
{
	int mask = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) | (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
	           (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
	curl_socket_t s = (curl_socket_t)(data & 0xffffffffULL);
	if (curl_wants(l, s))
		curl_action(l, s, mask);
}

static void xfer_stop(gate_loop *l)
{
	xfer_tick(l, &(int64_t){INT64_MAX});
}

const gate_loop_handler gate_xfer_handler = {
    .tags = {GATE_TAG_CURL},
    .tick = xfer_tick,
    .event = xfer_event,
    .settle = reap,
    .idle = xfer_idle,
    .stop = xfer_stop,
};

int gate_xfer_start(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		l->curl_due_ns = INT64_MAX;
		l->multi = curl_multi_init();
		if (!l->multi)
			return -1;
		/* Idle connections to each upstream are kept for reuse. */
		curl_multi_setopt(l->multi, CURLMOPT_MAXCONNECTS, (long)g->cfg.max_inflight * 2);
		curl_multi_setopt(l->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
		curl_multi_setopt(l->multi, CURLMOPT_SOCKETDATA, l);
		curl_multi_setopt(l->multi, CURLMOPT_TIMERFUNCTION, on_timer);
		curl_multi_setopt(l->multi, CURLMOPT_TIMERDATA, l);
	}
	return 0;
}

void gate_xfer_stop(gate_srv *g)
{
	for (int i = 0; i < g->nloops; i++) {
		gate_loop *l = &g->loops[i];
		if (!l->multi)
			continue;
		/* The loops have ended: what is still in flight has no one to answer. */
		abort_all(l);
		easy_pool_drain(l);
		loop_urls_free(l);
		curl_multi_cleanup(l->multi);
		l->multi = NULL;
		free(l->fdst);
		l->fdst = NULL;
		l->nfdst = 0;
	}
}
