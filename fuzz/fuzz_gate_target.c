/*
 * libFuzzer: request-targets and the URL the gate fetches for them. The
 * first byte picks a configured upstream (low bits) and whether the rest
 * is the request-target's bytes or, with the top bit, indices into a
 * table of pieces that name hosts in URLs, spliced into one.
 * Whatever the target, a URL that is built must name that upstream's
 * scheme, host and port, with no user name, when read back as libcurl's
 * transfer reads it; it must be the upstream's base followed by the
 * target's bytes as sent (libcurl drops only an empty query's '?'); and a
 * target gate_target_check refuses must build nothing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/target.h"
#include "util/curl_dl.h"

static const char *const upstreams[] = {
    "http://127.0.0.1:8000", "http://[::1]:9000",     "https://up.example",
    "http://localhost:1",    "https://10.0.0.7:8443", "http://a-b.example:65535",
};
#define NUP (sizeof upstreams / sizeof *upstreams)

/* Pieces an attacker puts in a target to make a URL name another host. */
static const char *const pieces[] = {
    "/",        "//",    "@", "\\",      "%40", "%2F",      "%2f",       "%5C",          "http://",
    "https://", "[::1]", "[", "]",       ":",   ":1",       "127.0.0.1", "evil.example", "?",
    "#",        "%23",   ".", "..",      "%2e", " ",        "\t",        "\r\n",         "%00",
    "%",        "a",     ";", "&",       "=",   "user:pw@", "%3A",       "\x7f",         "\xc3\xa9",
    "*",        "~",     "+", "!$'()*,",
};
#define NPIECES (sizeof pieces / sizeof *pieces)

static gate_origin origins[NUP];
static int ready = -1;

static void setup(void)
{
	gw_fail err;
	ready = gw_curl_error() ? 0 : 1;
	for (size_t i = 0; ready && i < NUP; i++)
		if (gate_origin_parse(upstreams[i], &origins[i], &err) != 0)
			abort();
}

static bool part_is(CURLU *h, CURLUPart what, unsigned flags, const char *want, long wantn)
{
	char *v = NULL;
	bool ok = curl_url_get(h, what, &v, flags) == CURLUE_OK && v &&
	          (want ? !strcasecmp(v, want) : strtol(v, NULL, 10) == wantn);
	curl_free(v);
	return ok;
}

static bool absent(CURLU *h, CURLUPart what)
{
	char *v = NULL;
	CURLUcode rc = curl_url_get(h, what, &v, 0);
	curl_free(v);
	return rc != CURLUE_OK;
}

static void check_built(const gate_origin *o, const char *target, const char *url)
{
	/* Read back as curl's easy handle reads CURLOPT_URL. */
	CURLU *h = curl_url();
	if (!h)
		return;
	if (curl_url_set(h, CURLUPART_URL, url,
	                 CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS) !=
	        CURLUE_OK ||
	    !part_is(h, CURLUPART_SCHEME, 0, o->scheme, 0) ||
	    !part_is(h, CURLUPART_HOST, 0, o->host, 0) ||
	    !part_is(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, NULL, o->port) ||
	    !absent(h, CURLUPART_USER) || !absent(h, CURLUPART_PASSWORD) ||
	    !absent(h, CURLUPART_FRAGMENT))
		abort();
	curl_url_cleanup(h);
	/* The upstream's base, then the target as sent. */
	size_t bl = strlen(o->url) - 1, tl = strlen(target), ul = strlen(url);
	if (strncmp(url, o->url, bl) != 0 || url[bl] != '/')
		abort();
	bool same = ul - bl == tl && !memcmp(url + bl, target, tl);
	bool no_query =
	    tl && target[tl - 1] == '?' && ul - bl == tl - 1 && !memcmp(url + bl, target, tl - 1);
	if (!same && !no_query)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ready < 0)
		setup();
	if (!ready || size == 0)
		return 0;
	const gate_origin *o = &origins[(data[0] & 0x7f) % NUP];
	char *target = malloc(size * 16 + 1);
	if (!target)
		return 0;
	size_t tl = 0;
	if (data[0] & 0x80)
		for (size_t i = 1; i < size; i++) {
			const char *p = pieces[data[i] % NPIECES];
			memcpy(target + tl, p, strlen(p));
			tl += strlen(p);
		}
	else {
		memcpy(target, data + 1, size - 1);
		tl = size - 1;
	}
	target[tl] = '\0';
	size_t at;
	gate_target_kind k = gate_target_check(target, &at);
	if (k == GATE_TGT_BAD_BYTE && at >= strlen(target))
		abort();
	gate_target_kind why;
	char *url = gate_url_build(o, target, &why);
	if (url && (k != GATE_TGT_OK || why != GATE_TGT_OK))
		abort();
	if (!url && why == GATE_TGT_OK)
		abort();
	if (url)
		check_built(o, target, url);
	free(url);
	free(target);
	return 0;
}
