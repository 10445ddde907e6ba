/*
 * target.c - where a request goes. The request-target a client sent must
 * be origin-form ("/path?query", RFC 9112 3.2.1); it is then resolved by
 * libcurl's URL API against a base built from the configured upstream's
 * parsed scheme, host and port, and what results must name that same
 * scheme, host and port, with no user name. Nothing is joined as text:
 * an "@host" target appended to "http://upstream" would have made the
 * upstream a user name and "host" the server connected to.
 *
 * Refused before anything is built: absolute-form ("http://h/"),
 * authority-form ("h:80"), asterisk-form ("*") and anything else not
 * starting with '/'; "//..." (a reference naming a host to anyone who
 * resolves it); and bytes no origin-form holds (control characters,
 * space, backslash, '#', bytes above 0x7e). Percent escapes are kept as
 * sent: nothing here decodes them, so "%40" never becomes an '@'.
 *
 * The transfer is pinned besides (xfer.c): CURLOPT_CONNECT_TO sends
 * any host and port to the upstream's, and redirects are not followed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/target.h"
#include "util/curl_dl.h"
#include "util/err.h"
#include "util/i18n.h"

/* Bytes an origin-form target never holds, raw. */
static bool bad_byte(unsigned char ch)
{
	return ch <= 0x20 || ch >= 0x7f || ch == '\\' || ch == '#';
}

gate_target_kind gate_target_check(const char *target, size_t *at)
{
	size_t pos = 0;
	if (at)
		*at = 0;
	if (!target || target[0] != '/')
		return GATE_TGT_NOT_ORIGIN;
	if (target[1] == '/')
		return GATE_TGT_NETWORK_PATH;
	for (const char *p = target; *p; p++, pos++)
		if (bad_byte((unsigned char)*p)) {
			if (at)
				*at = pos;
			return GATE_TGT_BAD_BYTE;
		}
	return GATE_TGT_OK;
}

/* A part of h as a string in out; false when absent or too long. */
static bool get_part(CURLU *h, CURLUPart what, unsigned flags, char *out, size_t len)
{
	char *v = NULL;
	CURLUcode rc = curl_url_get(h, what, &v, flags);
	bool ok = rc == CURLUE_OK && v && strlen(v) < len;
	if (ok)
		memcpy(out, v, strlen(v) + 1);
	curl_free(v);
	return ok;
}

static bool has_part(CURLU *h, CURLUPart what)
{
	char *v = NULL;
	CURLUcode rc = curl_url_get(h, what, &v, 0);
	curl_free(v);
	return rc == CURLUE_OK;
}

/* Whether h names o's scheme, host and port, and nothing that would add a
 * user name or a zone to them. */
static bool names_origin(CURLU *h, const gate_origin *o)
{
	char scheme[sizeof o->scheme], host[sizeof o->host], port[16];
	if (!get_part(h, CURLUPART_SCHEME, 0, scheme, sizeof scheme) ||
	    !get_part(h, CURLUPART_HOST, 0, host, sizeof host) ||
	    !get_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, port, sizeof port))
		return false;
	return !strcasecmp(scheme, o->scheme) && !strcasecmp(host, o->host) &&
	       strtol(port, NULL, 10) == o->port && !has_part(h, CURLUPART_USER) &&
	       !has_part(h, CURLUPART_PASSWORD) && !has_part(h, CURLUPART_OPTIONS) &&
	       !has_part(h, CURLUPART_ZONEID) && !has_part(h, CURLUPART_FRAGMENT);
}

/* An upstream is given by --upstream or the config's "upstreams": either way the option names
 * it. why is marked N_() where it is written; gw_fail_set translates it. */
static int origin_fail(CURLU *h, gw_fail *err, const char *why, const char *url)
{
	curl_url_cleanup(h);
	return gw_fail_set(err, GW_EXIT_USAGE, "--upstream", N_("give scheme://host:port"), why,
	                   url);
}

int gate_origin_parse(const char *url, gate_origin *o, gw_fail *err)
{
	memset(o, 0, sizeof *o);
	CURLU *h = curl_url();
	if (!h)
		return gw_fail_set(err, GW_EXIT_USAGE, "--upstream", N_("give scheme://host:port"),
		                   "%s", gw_curl_error() ? gw_curl_error() : _("out of memory"));
	char path[8];
	if (curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK)
		return origin_fail(h, err, N_("'%s' is not a URL libcurl can parse"), url);
	if (!get_part(h, CURLUPART_SCHEME, 0, o->scheme, sizeof o->scheme) ||
	    (strcasecmp(o->scheme, "http") && strcasecmp(o->scheme, "https")))
		return origin_fail(h, err, N_("'%s' is not an http:// or https:// URL"), url);
	char port[16];
	if (!get_part(h, CURLUPART_HOST, 0, o->host, sizeof o->host) || !o->host[0] ||
	    !get_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, port, sizeof port) ||
	    (o->port = strtol(port, NULL, 10)) < 1 || o->port > 65535)
		return origin_fail(h, err, N_("'%s' names no host and port"), url);
	if (has_part(h, CURLUPART_USER) || has_part(h, CURLUPART_PASSWORD) ||
	    has_part(h, CURLUPART_OPTIONS))
		return origin_fail(h, err, N_("'%s' has a user name; send credentials in headers"),
		                   url);
	if (has_part(h, CURLUPART_ZONEID))
		return origin_fail(h, err, N_("'%s' has an IPv6 zone; give the address alone"),
		                   url);
	if (has_part(h, CURLUPART_QUERY) || has_part(h, CURLUPART_FRAGMENT) ||
	    (get_part(h, CURLUPART_PATH, 0, path, sizeof path) && strcmp(path, "/")))
		return origin_fail(h, err, N_("'%s' has a path; give only scheme://host:port"),
		                   url);
	curl_url_cleanup(h);
	/* The base every target is resolved against: made from the parts
	 * (port included), not from the text the user wrote. */
	snprintf(port, sizeof port, "%ld", o->port);
	o->base = curl_url();
	if (!o->base || curl_url_set(o->base, CURLUPART_SCHEME, o->scheme, 0) != CURLUE_OK ||
	    curl_url_set(o->base, CURLUPART_HOST, o->host, 0) != CURLUE_OK ||
	    curl_url_set(o->base, CURLUPART_PORT, port, 0) != CURLUE_OK ||
	    curl_url_set(o->base, CURLUPART_PATH, "/", 0) != CURLUE_OK ||
	    !get_part(o->base, CURLUPART_URL, 0, o->url, sizeof o->url)) {
		gate_origin_free(o);
		return origin_fail(NULL, err, N_("'%s' names no host and port"), url);
	}
	/* Empty host and port match any: every transfer goes to this one. */
	snprintf(o->connect_to, sizeof o->connect_to, "::%s:%ld", o->host, o->port);
	return 0;
}

void gate_origin_free(gate_origin *o)
{
	curl_url_cleanup(o->base);
	o->base = NULL;
}

char *gate_url_build(const gate_origin *o, const char *target, gate_target_kind *why)
{
	gate_target_kind k = gate_target_check(target, NULL);
	if (why)
		*why = k;
	if (k != GATE_TGT_OK)
		return NULL;
	/*
	 * libcurl resolves the target as a reference against the base; its
	 * parts setters would do with less work, but lower the case of every
	 * percent escape, and the target is to reach the upstream as sent.
	 * What comes out is checked, not trusted: the fuzzer (fuzz_gate_target)
	 * also reads the text back as the transfer does.
	 */
	CURLU *h = o->base ? curl_url_dup(o->base) : NULL;
	char *s = NULL, *out = NULL;
	if (h && curl_url_set(h, CURLUPART_URL, target, CURLU_PATH_AS_IS) == CURLUE_OK &&
	    names_origin(h, o) && curl_url_get(h, CURLUPART_URL, &s, 0) == CURLUE_OK && s)
		out = strdup(s);
	curl_free(s);
	curl_url_cleanup(h);
	if (!out && why)
		*why = GATE_TGT_UNBUILDABLE;
	return out;
}
