/* The gate's request-targets: which are forwarded, and the URL each fetches
 * (always on the configured upstream's scheme, host and port). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gate/target.h"
#include "util/curl_dl.h"

static void test_target_check(void **state)
{
	(void)state;
	static const struct {
		const char *t;
		gate_target_kind k;
		size_t at;
	} cases[] = {
	    {"/", GATE_TGT_OK, 0},
	    {"/v1/embeddings?x=1&y=%40", GATE_TGT_OK, 0},
	    {"/a/../b/./c", GATE_TGT_OK, 0},
	    {"/@127.0.0.1:1/x", GATE_TGT_OK, 0},
	    {"/a?b=//c", GATE_TGT_OK, 0},
	    {"@127.0.0.1:18999/s.txt", GATE_TGT_NOT_ORIGIN, 0},
	    {"\\@127.0.0.1/x", GATE_TGT_NOT_ORIGIN, 0},
	    {"http://127.0.0.1:1/", GATE_TGT_NOT_ORIGIN, 0},
	    {"127.0.0.1:1", GATE_TGT_NOT_ORIGIN, 0},
	    {"*", GATE_TGT_NOT_ORIGIN, 0},
	    {"", GATE_TGT_NOT_ORIGIN, 0},
	    {"%2F%2Fh/x", GATE_TGT_NOT_ORIGIN, 0},
	    {"//127.0.0.1:1/x", GATE_TGT_NETWORK_PATH, 0},
	    {"///x", GATE_TGT_NETWORK_PATH, 0},
	    {"/a b", GATE_TGT_BAD_BYTE, 2},
	    {"/a\tb", GATE_TGT_BAD_BYTE, 2},
	    {"/a\r\nHost: x", GATE_TGT_BAD_BYTE, 2},
	    {"/a#@127.0.0.1:1", GATE_TGT_BAD_BYTE, 2},
	    {"/\\\\127.0.0.1/x", GATE_TGT_BAD_BYTE, 1},
	    {"/x\x7f", GATE_TGT_BAD_BYTE, 2},
	    {"/\xc3\xa9", GATE_TGT_BAD_BYTE, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		size_t at = 99;
		gate_target_kind k = gate_target_check(cases[i].t, &at);
		if (k != cases[i].k || at != cases[i].at)
			fail_msg("target '%s': kind %d at %zu, expected %d at %zu", cases[i].t,
			         (int)k, at, (int)cases[i].k, cases[i].at);
	}
	assert_int_equal(gate_target_check(NULL, NULL), GATE_TGT_NOT_ORIGIN);
}

static void test_origin_parse(void **state)
{
	(void)state;
	gate_origin o;
	gw_fail err = {0};
	assert_int_equal(gate_origin_parse("http://127.0.0.1:8000", &o, &err), 0);
	assert_string_equal(o.scheme, "http");
	assert_string_equal(o.host, "127.0.0.1");
	assert_int_equal(o.port, 8000);
	assert_string_equal(o.url, "http://127.0.0.1:8000/");
	assert_string_equal(o.connect_to, "::127.0.0.1:8000");
	gate_origin_free(&o);
	assert_int_equal(gate_origin_parse("http://[::1]:9000/", &o, &err), 0);
	assert_string_equal(o.host, "[::1]");
	assert_string_equal(o.connect_to, "::[::1]:9000");
	gate_origin_free(&o);
	assert_int_equal(gate_origin_parse("https://Up.Example", &o, &err), 0);
	assert_string_equal(o.scheme, "https");
	assert_int_equal(o.port, 443);
	assert_string_equal(o.url, "https://Up.Example:443/");
	gate_origin_free(&o);
	assert_int_equal(gate_origin_parse("http://localhost", &o, &err), 0);
	assert_int_equal(o.port, 80);
	gate_origin_free(&o);
	static const char *const bad[] = {
	    "ftp://127.0.0.1:21",
	    "http://u:p@127.0.0.1:1",
	    "http://u@127.0.0.1:1",
	    "http://127.0.0.1:1/v1",
	    "http://127.0.0.1:1?x=1",
	    "http://127.0.0.1:1#f",
	    "http://[fe80::1%25eth0]:8",
	    "http://127.0.0.1:0",
	    "http://127.0.0.1:99999",
	    "127.0.0.1:8000",
	    "",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		if (gate_origin_parse(bad[i], &o, &err) == 0)
			fail_msg("upstream '%s' was accepted", bad[i]);
		assert_null(o.base);
		/* the line the gate prints: "gpuwhy: --upstream: WHY (give scheme://host:port)" */
		assert_string_equal(err.what, "--upstream");
		assert_string_equal(err.hint, "give scheme://host:port");
		assert_non_null(strstr(err.why, "'"));
	}
}

/* The host, port and user of url as the transfer will read it. */
static void reparse(const char *url, char *host, size_t hl, long *port, bool *user)
{
	CURLU *h = curl_url();
	assert_non_null(h);
	assert_int_equal(
	    curl_url_set(h, CURLUPART_URL, url,
	                 CURLU_GUESS_SCHEME | CURLU_NON_SUPPORT_SCHEME | CURLU_PATH_AS_IS),
	    CURLUE_OK);
	char *v = NULL;
	assert_int_equal(curl_url_get(h, CURLUPART_HOST, &v, 0), CURLUE_OK);
	snprintf(host, hl, "%s", v);
	curl_free(v);
	v = NULL;
	assert_int_equal(curl_url_get(h, CURLUPART_PORT, &v, CURLU_DEFAULT_PORT), CURLUE_OK);
	*port = strtol(v, NULL, 10);
	curl_free(v);
	v = NULL;
	*user = curl_url_get(h, CURLUPART_USER, &v, 0) == CURLUE_OK;
	curl_free(v);
	curl_url_cleanup(h);
}

static void test_url_build(void **state)
{
	(void)state;
	static const char *const ups[] = {"http://127.0.0.1:8000", "http://[::1]:9000",
	                                  "https://up.example"};
	/* Forwarded, and byte for byte as sent: escapes keep their case and are
	 * never decoded, dot segments stay for the upstream to judge. */
	static const char *const good[] = {"/v1/embeddings",
	                                   "/%2F%40evil.example/x?a=%3D%3d",
	                                   "/a/../b/./c?x/../y",
	                                   "/@127.0.0.1:18999/s.txt",
	                                   "/x?next=http://127.0.0.1:1/",
	                                   "/%",
	                                   "/[::1]:1/x",
	                                   "/a?b?c@d:1",
	                                   "/;p=1/x:y@z",
	                                   "/{}|^`\"<>"};
	static const char *const refused[] = {"@127.0.0.1:18999/s.txt",
	                                      "\\@127.0.0.1:18999/",
	                                      "//127.0.0.1:18999/",
	                                      "http://127.0.0.1:18999/",
	                                      "%40127.0.0.1:18999/",
	                                      "/a\tb",
	                                      "/a\r\nb",
	                                      "/a#@h:1",
	                                      "/\\\\127.0.0.1:18999/",
	                                      "[::1]:18999/",
	                                      "*",
	                                      "/x y"};
	for (size_t u = 0; u < sizeof ups / sizeof *ups; u++) {
		gate_origin o;
		gw_fail err = {0};
		assert_int_equal(gate_origin_parse(ups[u], &o, &err), 0);
		for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
			gate_target_kind why = GATE_TGT_UNBUILDABLE;
			char *url = gate_url_build(&o, good[i], &why);
			if (!url)
				fail_msg("%s + '%s' was refused (%d)", ups[u], good[i], (int)why);
			assert_int_equal(why, GATE_TGT_OK);
			size_t bl = strlen(o.url) - 1; /* without its '/' */
			if (strncmp(url, o.url, bl) || strcmp(url + bl, good[i]))
				fail_msg("%s + '%s' fetches %s", ups[u], good[i], url);
			char host[300];
			long port;
			bool user;
			reparse(url, host, sizeof host, &port, &user);
			assert_true(!strcasecmp(host, o.host));
			assert_int_equal(port, o.port);
			assert_false(user);
			free(url);
		}
		for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
			gate_target_kind why = GATE_TGT_OK;
			char *url = gate_url_build(&o, refused[i], &why);
			if (url)
				fail_msg("%s + '%s' fetches %s", ups[u], refused[i], url);
			assert_int_not_equal(why, GATE_TGT_OK);
		}
		gate_origin_free(&o);
	}
}

int main(void)
{
	if (gw_curl_error()) {
		fprintf(stderr, "skipped: %s\n", gw_curl_error());
		return 77;
	}
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_target_check),
	    cmocka_unit_test(test_origin_parse),
	    cmocka_unit_test(test_url_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
