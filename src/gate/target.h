/*
 * target.h - which request-targets are forwarded, and the URL each one
 * fetches on its upstream (target.c).
 */
#ifndef GPUWHY_GATE_TARGET_H
#define GPUWHY_GATE_TARGET_H

#include <stddef.h>

#include "util/fail.h"

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

/* Parse an upstream URL (scheme://host[:port]); loads libcurl. 0, or GW_EXIT_USAGE with *err
 * filled (--upstream, why, the form to give); gate_origin_free() after 0. */
int gate_origin_parse(const char *url, gate_origin *o, gw_fail *err);
void gate_origin_free(gate_origin *o);
/*
 * The URL that target fetches at o: a new string (free()) whose scheme,
 * host and port are o's, the target's bytes after them as sent. NULL when
 * target is refused or no such URL can be built; *why (may be NULL) says
 * which. Any thread may build on one origin at once (o is only read).
 */
char *gate_url_build(const gate_origin *o, const char *target, gate_target_kind *why);

#endif
