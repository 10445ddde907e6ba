/*
 * prom_http.c - range queries through Prometheus's HTTP API: one POST of
 * /api/v1/query_range per chunk, with a deadline, bounded retries, an
 * optional bearer token and CA bundle; a batch of them with bounded
 * concurrency (threads, each with its own easy handle). libcurl is loaded on
 * first use (util/curl_dl.h).
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prom/prom.h"
#include "util/curl_dl.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/strbuf.h"

/* Answers larger than this are refused rather than held: a matcher that is far too wide. */
#define PROM_MAX_BODY ((size_t)1 << 30)

typedef struct {
	gw_strbuf body;
	bool too_big;
} prom_sink;

static size_t prom_write(char *p, size_t size, size_t n, void *ctx)
{
	prom_sink *s = ctx;
	size_t len = size * n;
	if (s->body.len + len > PROM_MAX_BODY) {
		s->too_big = true;
		return 0;
	}
	gw_sb_put(&s->body, p, len);
	return len;
}

/* Percent-encode s for a form body (RFC 3986 unreserved characters kept). */
static void form_escape(gw_strbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
			gw_sb_putc(b, (char)c);
		else
			gw_sb_printf(b, "%%%02X", c);
	}
}

/* The token file's first line, without surrounding blanks; -1 when unreadable or empty. */
static int read_token(const char *path, char *out, size_t len, gw_fail *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "cannot read the bearer token: %s",
		                   strerror(errno));
	size_t n = fread(out, 1, len - 1, f);
	fclose(f);
	out[n] = 0;
	out[strcspn(out, "\r\n")] = 0;
	char *p = out;
	while (*p == ' ' || *p == '\t')
		p++;
	memmove(out, p, strlen(p) + 1);
	for (n = strlen(out); n && (out[n - 1] == ' ' || out[n - 1] == '\t');)
		out[--n] = 0;
	if (!*out)
		return gw_fail_set(err, GW_EXIT_ENV, path, NULL, "the bearer token file is empty");
	return 0;
}

/* Prometheus's own error text from an answer body ("" when it has none). */
static void api_error(const char *body, size_t len, char *out, size_t outlen)
{
	prom_matrix m = {0};
	gw_fail err = {0};
	out[0] = 0;
	if (prom_parse_matrix(body, len, &m, NULL, &err) != 0)
		snprintf(out, outlen, "%s", err.why);
	prom_matrix_free(&m);
}

typedef struct {
	const prom_conn *c;
	const char *url;  /* the full endpoint */
	const char *form; /* the POST body */
	const char *expr; /* for messages */
	struct curl_slist *hdr;
	bool gzip; /* ask for a compressed answer */
} prom_request;

/*
 * Whether url's host is this machine (localhost, 127.0.0.0/8, [::1]). A compressed answer
 * costs Prometheus 3 times the time of a plain one (measured at 32 GPUs x 6 h at 5 s) and
 * saves nothing on loopback; across a network, JSON shrinks about tenfold.
 */
static bool url_loopback(const char *url)
{
	const char *h = strstr(url, "://");
	h = h ? h + 3 : url;
	const char *at = strpbrk(h, "@/");
	if (at && *at == '@')
		h = at + 1;
	return !strncmp(h, "localhost", 9) ? (h[9] == 0 || h[9] == ':' || h[9] == '/')
	                                   : !strncmp(h, "127.", 4) || !strncmp(h, "[::1]", 5);
}

/* One try. Returns 0 with the body, 1 for a failure worth retrying, else the exit code. */
static int try_once(const prom_request *r, prom_sink *sink, gw_fail *err)
{
	CURL *h = curl_easy_init();
	if (!h)
		return gw_fail_set(err, GW_EXIT_ENV, r->c->url, NULL, "%s",
		                   gw_curl_error() ? gw_curl_error() : "cannot start libcurl");
	char cerr[CURL_ERROR_SIZE] = "";
	long ms = (long)(r->c->timeout_s * 1000);
	curl_easy_setopt(h, CURLOPT_URL, r->url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->form);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, prom_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	if (r->gzip)
		curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	if (r->c->cacert)
		curl_easy_setopt(h, CURLOPT_CAINFO, r->c->cacert);
	CURLcode rc = curl_easy_perform(h);
	long status = 0;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	if (sink->too_big)
		return gw_fail_set(err, GW_EXIT_ENV, r->expr,
		                   N_("narrow it with --match or a later --from"),
		                   "the answer is larger than 1 GiB");
	if (rc != CURLE_OK) {
		bool again = rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_CONNECT ||
		             rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
		             rc == CURLE_GOT_NOTHING;
		gw_fail_set(err, GW_EXIT_ENV, r->c->url,
		            rc == CURLE_OPERATION_TIMEDOUT
		                ? N_("a longer --timeout or a larger --step")
		                : N_("is Prometheus running at that address?"),
		            "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
		return again ? 1 : GW_EXIT_ENV;
	}
	if (status >= 200 && status < 300)
		return 0;
	char why[sizeof err->why];
	api_error(gw_sb_str(&sink->body), sink->body.len, why, sizeof why);
	gw_fail_set(
	    err, GW_EXIT_ENV, r->url,
	    status == 401 || status == 403
	        ? N_("check --bearer-token-file")
	        : (status == 400 || status == 422 ? N_("check the --match selector") : NULL),
	    "HTTP %ld%s%s", status, why[0] ? ": " : "", why);
	return status >= 500 ? 1 : GW_EXIT_ENV;
}

/* POST the form to the endpoint, retrying what may pass on a second try; the body into out. */
static int post(const prom_conn *c, const char *expr, const char *form, gw_strbuf *out,
                gw_fail *err)
{
	gw_strbuf url = {0};
	size_t ul = strlen(c->url);
	gw_sb_put(&url, c->url, ul && c->url[ul - 1] == '/' ? ul - 1 : ul);
	gw_sb_puts(&url, "/api/v1/query_range");
	prom_request r = {.c = c,
	                  .url = gw_sb_str(&url),
	                  .form = form,
	                  .expr = expr,
	                  .gzip = !url_loopback(c->url)};
	r.hdr = curl_slist_append(NULL, "Content-Type: application/x-www-form-urlencoded");
	int rc = 0;
	if (c->bearer_file) {
		char tok[4096], line[4200];
		if ((rc = read_token(c->bearer_file, tok, sizeof tok, err)) != 0)
			goto out;
		snprintf(line, sizeof line, "Authorization: Bearer %s", tok);
		r.hdr = curl_slist_append(r.hdr, line);
	}
	for (int attempt = 0;; attempt++) {
		prom_sink sink = {0};
		rc = try_once(&r, &sink, err);
		if (rc == 0) {
			gw_sb_free(out);
			*out = sink.body;
			break;
		}
		gw_sb_free(&sink.body);
		if (rc != 1 || attempt >= c->retries) {
			rc = rc == 1 ? GW_EXIT_ENV : rc;
			break;
		}
		/* A short pause that grows: a restarting server or a brief overload. */
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 250000000L * (attempt + 1)};
		nanosleep(&ts, NULL);
	}
out:
	curl_slist_free_all(r.hdr);
	gw_sb_free(&url);
	return rc;
}

/* The form of one range query. */
static void range_form(gw_strbuf *form, const char *expr, double a, double b, double step)
{
	gw_sb_clear(form);
	gw_sb_puts(form, "query=");
	form_escape(form, expr);
	gw_sb_printf(form, "&start=%.3f&end=%.3f&step=%.3f", a, b, step);
}

typedef struct {
	const prom_conn *c;
	const prom_req *r;
	const prom_batch *b;
	int n, next, done, rc;
	gw_fail *err;
	pthread_mutex_t mu;
} fetch_state;

/* One request of the batch: fetched and parsed outside the lock, handed on under it. */
static void fetch_one(fetch_state *f, int i)
{
	const prom_req *r = &f->r[i];
	gw_strbuf form = {0}, body = {0};
	gw_fail err = {0};
	prom_matrix m = {0};
	range_form(&form, r->expr, r->from, r->to, f->b->step);
	int rc = post(f->c, r->expr, gw_sb_str(&form), &body, &err);
	if (rc == 0)
		rc = prom_parse_matrix(gw_sb_str(&body), body.len, &m, r->expr, &err);
	gw_sb_free(&form);
	gw_sb_free(&body);
	pthread_mutex_lock(&f->mu);
	if (rc && !f->rc) {
		f->rc = rc;
		if (f->err)
			*f->err = err;
	} else if (!rc && !f->rc) {
		f->b->sink(f->b->ctx, r->tag, &m);
		f->done++;
		if (f->b->progress)
			f->b->progress(f->b->ctx, f->done, f->n);
	}
	pthread_mutex_unlock(&f->mu);
	prom_matrix_free(&m);
}

static void *fetch_worker(void *arg)
{
	fetch_state *f = arg;
	for (;;) {
		pthread_mutex_lock(&f->mu);
		int i = f->rc ? f->n : f->next++;
		pthread_mutex_unlock(&f->mu);
		if (i >= f->n)
			return NULL;
		fetch_one(f, i);
	}
}

int prom_fetch(const prom_conn *c, const prom_req *r, int n, const prom_batch *b, gw_fail *err)
{
	if (gw_curl_error()) /* loads libcurl here, before any thread uses it */
		return gw_fail_set(err, GW_EXIT_ENV, "libcurl", NULL, "%s", gw_curl_error());
	fetch_state f = {.c = c, .r = r, .b = b, .n = n, .err = err};
	pthread_mutex_init(&f.mu, NULL);
	int want = b->parallel < 1 ? 1 : b->parallel > 64 ? 64 : b->parallel, started = 0;
	if (want > n)
		want = n;
	pthread_t th[64];
	/* The calling thread works too; a thread that cannot start leaves its share to it. */
	for (int i = 1; i < want; i++)
		if (pthread_create(&th[started], NULL, fetch_worker, &f) == 0)
			started++;
	fetch_worker(&f);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&f.mu);
	return f.rc;
}

int prom_query_range(const prom_conn *c, const char *expr, double from, double to, double step,
                     prom_matrix *m, gw_fail *err)
{
	if (gw_curl_error())
		return gw_fail_set(err, GW_EXIT_ENV, "libcurl", NULL, "%s", gw_curl_error());
	gw_strbuf form = {0}, body = {0};
	int rc = 0;
	double a, b;
	for (long k = 0; rc == 0 && prom_range_chunk(from, to, step, k, &a, &b); k++) {
		range_form(&form, expr, a, b, step);
		if ((rc = post(c, expr, gw_sb_str(&form), &body, err)) != 0)
			break;
		rc = prom_parse_matrix(gw_sb_str(&body), body.len, m, expr, err);
	}
	gw_sb_free(&form);
	gw_sb_free(&body);
	return rc;
}
