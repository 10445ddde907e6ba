/* test_trace_jscan.c - the fast JSON scanner makes yajl's calls, or gives up where yajl fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support/trace_jscan_diff.h"

static trace_jscan_diff cmp_text(const char *s, const trace_jscan_mode *m)
{
	return trace_jscan_compare((const unsigned char *)s, strlen(s), m);
}

static int calls;
static int on_null(void *c)
{
	(void)c;
	return ++calls;
}
static int on_bool(void *c, int v)
{
	(void)v;
	return on_null(c);
}
static int on_number(void *c, const char *s, size_t n)
{
	(void)s;
	(void)n;
	return on_null(c);
}
static int on_string(void *c, const unsigned char *s, size_t n)
{
	(void)s;
	(void)n;
	return on_null(c);
}

/* What the traces contain is read by the scanner itself, with yajl's values. */
static void test_fast_path_matches_yajl(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void "
	    "at::gemm<float>\","
	    " \"ts\": 4458676388068.751, \"dur\": 2.5, \"args\": {\"stream\": 7, \"correlation\": "
	    "-12, \"grid\": [1, 2, 3], \"flag\": true, \"none\": null, \"off\": false}}]}",
	    "{}",
	    "[]",
	    " \t\r\n{\"a\":[[],{},[{}]]}\n",
	    "{\"n\": [0, -0, 1e5, 1E+5, 1.5e-3, -12.25, 123456789012345678901234567890]}",
	    "{\"esc\": \"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t end\", \"\": \"\"}",
	    "{\"utf8\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
	    "{\"lead\": \"\\n\", \"\\t\": [\"\\\"\"]}", /* an escape first: no text before it */
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		trace_jscan_diff d = cmp_text(ok[i], NULL);
		assert_true(d.yajl_ok);
		assert_true(d.scan_ok);
		assert_true(d.same);
	}
}

/* Malformed text is never accepted; forms the scanner does not know are left to yajl. */
static void test_gives_up_where_unsure(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "",
	    "{",
	    "{\"a\"}",
	    "{\"a\":}",
	    "[1,]",
	    "[,1]",
	    "{\"a\":1,}",
	    "[01]",
	    "[1.]",
	    "[.5]",
	    "[1e]",
	    "[-]",
	    "[+1]",
	    "[1 2]",
	    "[tru]",
	    "[nul]",
	    "[\"a]",
	    "[\"\\x\"]",
	    "[\"\x01\"]",
	    "[\"\xff\"]",
	    "[\"\xc3\"]",
	    "[]]",
	    "[] x",
	    "{\"a\":1]",
	    "[1}",
	    "{1:2}",
	    "[NaN]",
	    "[1]/**/",
	    "[\"\xe2\x82\"]",
	    "5",
	    "\"s\"",
	    "[\"\\u00e9\"]",
	    "[1\v]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		trace_jscan_diff d = cmp_text(bad[i], NULL);
		assert_false(d.scan_ok);
	}
	/* yajl reads these; the scanner leaves them to it */
	assert_true(cmp_text("[\"\\u00e9\\ud83d\\ude00\"]", NULL).yajl_ok);
	assert_true(cmp_text("[1\v]", NULL).yajl_ok);
}

/* Numbers far from the end of the text, where the scanner counts digits sixteen at a time:
 * the same values as yajl, or it gives up where yajl fails. */
static void test_numbers_mid_text(void **state)
{
	(void)state;
	/* Forms yajl takes and forms it refuses, space-separated. */
	static const char nums_text[] =
	    "0 -0 7 -12 123456789012345 1234567890123456 12345678901234567890 "
	    "4458676388068.751 1.5 1.123456789012345 1.1234567890123456 0.25 -0.5 "
	    "1e5 1.5E-3 2e+7 01 -01 00 1. .5 - 1.e5 1x 1.5.5 -a 0x10 1.5e "
	    "12345678901234567.5 --1 1234567890123456789012345678901 "
	    "12345678901234567890123456789012 -1610366662254362 01610366662254362";
	static const char *const after[] = {"", " ", "\n", "}"};
	char words[sizeof nums_text], *save = NULL;
	memcpy(words, nums_text, sizeof words);
	for (char *num = strtok_r(words, " ", &save); num; num = strtok_r(NULL, " ", &save)) {
		for (size_t j = 0; j < sizeof after / sizeof *after; j++) {
			char text[200];
			snprintf(text, sizeof text, "[%s%s, 1%64s]", num, after[j], "");
			trace_jscan_diff d = cmp_text(text, NULL);
			if (d.yajl_ok) {
				assert_true(d.scan_ok);
				assert_true(d.same);
			} else {
				assert_false(d.scan_ok);
			}
			char obj[200];
			snprintf(obj, sizeof obj, "{\"ts\": %s%s, \"x\":%s,%64s\"y\": 1}", num,
			         after[j], num, "");
			d = cmp_text(obj, NULL);
			assert_true(d.yajl_ok ? d.scan_ok && d.same : !d.scan_ok);
			/* the value after "x" passed over, not read */
			d = trace_jscan_compare_skipping((const unsigned char *)obj, strlen(obj),
			                                 NULL);
			assert_true(d.yajl_ok ? d.scan_ok && d.same : !d.scan_ok);
		}
	}
}

/* Parts of a document: the elements of an open array, and the rest of one. */
static void test_parts(void **state)
{
	(void)state;
	const trace_jscan_mode elements = {.open = "[", .end_depth = 1};
	const trace_jscan_mode tail = {.open = "{[", .end_depth = 0};
	trace_jscan_diff d = cmp_text("{\"ts\": 1}, 2, [3, {\"x\": \"y\"}]", &elements);
	assert_true(d.scan_ok && d.same);
	d = cmp_text("{\"ts\": 1}, {}], \"deviceProperties\": [{\"name\": \"H100\"}]}", &tail);
	assert_true(d.scan_ok && d.same);
	/* an element list may not close its array, nor end on a comma */
	assert_false(cmp_text("1, 2]", &elements).scan_ok);
	assert_false(cmp_text("1, 2,", &elements).scan_ok);
	assert_false(cmp_text("{\"a\": 1}], 5", &tail).scan_ok);
	/* the first part of a document ends just after a comma, two containers deep */
	const trace_jscan_mode head = {.open = "", .end_depth = 2, .end_after_comma = true};
	static const yajl_callbacks count = {
	    .yajl_null = on_null,
	    .yajl_boolean = on_bool,
	    .yajl_number = on_number,
	    .yajl_string = on_string,
	    .yajl_start_map = on_null,
	    .yajl_map_key = on_string,
	    .yajl_end_map = on_null,
	    .yajl_start_array = on_null,
	    .yajl_end_array = on_null,
	};
	static const char *const heads[] = {
	    "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\"},\n  ", /* ok */
	    "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\"}",      /* no comma */
	    "{\"a\": [1], ",                                                 /* one deep */
	    "{\"a\": [[1, ",                                                 /* three deep */
	};
	for (size_t i = 0; i < sizeof heads / sizeof *heads; i++) {
		calls = 0;
		bool ok = trace_jscan_part((const unsigned char *)heads[i], strlen(heads[i]),
		                           &count, NULL, &head);
		assert_int_equal(ok, i == 0);
		if (i == 0)
			assert_int_equal(calls, 9);
	}
}

/* Values passed over: checked as strictly as the rest, and a watched key is never passed. */
static void test_skipping(void **state)
{
	(void)state;
	static const char *const ok[] = {
	    "{\"a\": {\"x1\": [1, {\"b\": 2}, [[]], \"s\\n\"], \"y\": 1, \"x2\": {}}}",
	    "{\"x\": {\"c\": {\"rank\": 3}, \"x3\": [true, false, null]}, \"z\": -1.5e3}",
	    "{\"x\": \"caf\xc3\xa9\", \"xx\": 0, \"x\\n\": [{\"q\": {}}]}",
	    "{\"traceEvents\": [{\"ph\": \"X\", \"xpid\": 7, \"args\": {\"xs\": [[1, 2], [3]]}}]}",
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		trace_jscan_diff d =
		    trace_jscan_compare_skipping((const unsigned char *)ok[i], strlen(ok[i]), NULL);
		assert_true(d.yajl_ok);
		assert_true(d.scan_ok);
		assert_true(d.same);
	}
	/* malformed inside a value passed over: refused as without passing over */
	static const char *const bad[] = {
	    "{\"x\": [1,]}",  "{\"x\": [01]}",     "{\"x\": {\"a\"}}", "{\"x\": {\"a\":1,}}",
	    "{\"x\": [1}",    "{\"x\": \"\x01\"}", "{\"x\": tru}",     "{\"x\": [\"\\x\"]}",
	    "{\"x\": [1 2]}", "{\"x\": 1.}",       "{\"x\": {1:2}}",   "{\"x\": [\"\xff\"]}",
	    "{\"x\": [[[1]]", "{\"x\": -}",        "{\"x\": [1\v]}",   "{\"x\": \"\\u00e9\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_false(trace_jscan_compare_skipping((const unsigned char *)bad[i],
		                                          strlen(bad[i]), NULL)
		                 .scan_ok);
	/* nesting past the limit inside a value passed over */
	char deep[700] = "{\"x\": ";
	size_t n = strlen(deep);
	for (int i = 0; i < 300; i++)
		deep[n++] = '[';
	for (int i = 0; i < 300; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	assert_false(trace_jscan_compare_skipping((const unsigned char *)deep, n, NULL).scan_ok);
	/* parts: an element list and a document's rest */
	const trace_jscan_mode elements = {.open = "[", .end_depth = 1};
	const char *part = "{\"x\": [1, {\"rank\": 2}]}, {\"xy\": {\"a\": [3]}}";
	trace_jscan_diff d =
	    trace_jscan_compare_skipping((const unsigned char *)part, strlen(part), &elements);
	assert_true(d.scan_ok && d.same);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fast_path_matches_yajl),
	    cmocka_unit_test(test_gives_up_where_unsure),
	    cmocka_unit_test(test_numbers_mid_text),
	    cmocka_unit_test(test_parts),
	    cmocka_unit_test(test_skipping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
