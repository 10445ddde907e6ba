/* test_prom_parse.c - query_range answers into series: values as Prometheus writes them,
 * chunks that join up, and every malformed, truncated or refused answer an error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom/prom.h"
#include "util/err.h"
#include "util/strbuf.h"

#define OK_HEAD "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
#define OK_TAIL "]}}"

static int parse(const char *body, prom_matrix *m, gw_fail *err)
{
	return prom_parse_matrix(body, strlen(body), m, "up", err);
}

/* The answer must be refused, with a reason, whatever it left in a matrix. */
static void expect_error(const char *body, const char *why_part)
{
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(body, &m, &err), GW_EXIT_ENV);
	assert_true(err.why[0] != 0);
	if (why_part && !strstr(err.why, why_part))
		fail_msg("why '%s' lacks '%s' for %s", err.why, why_part, body);
	prom_matrix_free(&m);
}

static void test_one_series(void **state)
{
	(void)state;
	const char *body = OK_HEAD
	    "{\"metric\":{\"gpu\":\"3\",\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"Hostname\":\"n1\"},"
	    "\"values\":[[1700000000,\"97\"],[1700000015.5,\"0.25\"],[1700000030,\"-1e3\"]]"
	    "}" OK_TAIL;
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(body, &m, &err), 0);
	assert_int_equal(m.n, 1);
	const prom_series *s = &m.s[0];
	/* labels sorted by name */
	assert_int_equal(s->nlabels, 3);
	assert_string_equal(s->labels[0].name, "Hostname");
	assert_string_equal(s->labels[1].name, "__name__");
	assert_string_equal(s->labels[2].name, "gpu");
	assert_string_equal(prom_label_get(s, "gpu"), "3");
	assert_string_equal(prom_label_get(s, "Hostname"), "n1");
	assert_null(prom_label_get(s, "UUID"));
	assert_int_equal(s->n, 3);
	assert_true(s->t[0] == 1700000000.0 && s->v[0] == 97.0);
	assert_true(s->t[1] == 1700000015.5 && s->v[1] == 0.25);
	assert_true(s->t[2] == 1700000030.0 && s->v[2] == -1000.0);
	prom_matrix_free(&m);
	assert_int_equal(m.n, 0);
	assert_null(m.s);
}

static void test_several_series_and_chunks_join(void **state)
{
	(void)state;
	const char *c1 =
	    OK_HEAD "{\"metric\":{\"Hostname\":\"a\",\"gpu\":\"0\"},\"values\":[[10,\"1\"]]},"
	            "{\"metric\":{\"Hostname\":\"a\",\"gpu\":\"1\"},\"values\":[[10,\"2\"]]},"
	            "{\"metric\":{\"Hostname\":\"b\",\"gpu\":\"0\"},\"values\":[]}" OK_TAIL;
	/* the next chunk: same labels in another order, one series new, one gone */
	const char *c2 =
	    OK_HEAD "{\"metric\":{\"gpu\":\"1\",\"Hostname\":\"a\"},\"values\":[[20,\"4\"]]},"
	            "{\"metric\":{\"gpu\":\"0\",\"Hostname\":\"a\"},\"values\":[[20,\"3\"],"
	            "[30,\"5\"]]},"
	            "{\"metric\":{\"Hostname\":\"a\",\"gpu\":\"0\",\"pod\":\"p\"},"
	            "\"values\":[[30,\"6\"]]}" OK_TAIL;
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(c1, &m, &err), 0);
	assert_int_equal(m.n, 3);
	assert_int_equal(parse(c2, &m, &err), 0);
	assert_int_equal(m.n, 4);
	const prom_series *a0 = &m.s[0], *a1 = &m.s[1], *b0 = &m.s[2], *pod = &m.s[3];
	assert_string_equal(prom_label_get(a0, "gpu"), "0");
	assert_int_equal(a0->n, 3);
	assert_true(a0->t[0] == 10 && a0->v[0] == 1 && a0->t[1] == 20 && a0->v[1] == 3 &&
	            a0->t[2] == 30 && a0->v[2] == 5);
	assert_string_equal(prom_label_get(a1, "gpu"), "1");
	assert_int_equal(a1->n, 2);
	assert_true(a1->t[1] == 20 && a1->v[1] == 4);
	assert_string_equal(prom_label_get(b0, "Hostname"), "b");
	assert_int_equal(b0->n, 0);
	assert_string_equal(prom_label_get(pod, "pod"), "p");
	assert_int_equal(pod->n, 1);
	assert_true(pod->v[0] == 6);
	prom_matrix_free(&m);
}

/* NaN and the infinities as Prometheus spells them; what is not a number whole is absent. */
static void test_special_values(void **state)
{
	(void)state;
	const char *body =
	    OK_HEAD "{\"metric\":{},\"values\":[[1,\"NaN\"],[2,\"+Inf\"],[3,\"-Inf\"],[4,\"\"],"
	            "[5,\"12abc\"],[6,\"abc\"],[7,\"1e999\"],[8,\"0\"],[9,\"-0\"]]}" OK_TAIL;
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(body, &m, &err), 0);
	assert_int_equal(m.n, 1);
	const prom_series *s = &m.s[0];
	assert_int_equal(s->nlabels, 0);
	assert_int_equal(s->n, 9);
	assert_true(isnan(s->v[0]));
	assert_true(isinf(s->v[1]) && s->v[1] > 0);
	assert_true(isinf(s->v[2]) && s->v[2] < 0);
	assert_true(isnan(s->v[3])); /* an empty value is absent, never 0 */
	assert_true(isnan(s->v[4]));
	assert_true(isnan(s->v[5]));
	assert_true(isinf(s->v[6]));
	assert_true(s->v[7] == 0 && !signbit(s->v[7]));
	assert_true(s->v[8] == 0);
	prom_matrix_free(&m);
}

/* Every value and timestamp is the double strtod reads, to the last bit. */
static void test_values_as_strtod(void **state)
{
	(void)state;
	static const char *const v[] = {"0.1",
	                                "1796541885.5",
	                                "62345.678",
	                                "-3.14",
	                                "5.",
	                                ".5",
	                                "-0.000",
	                                "123456789012345",
	                                "1234567890123456",
	                                "0.30000000000000004",
	                                "1e3",
	                                "2.5E-3",
	                                "99.999",
	                                "0.723",
	                                "1980",
	                                "81559",
	                                "0007",
	                                "-123.456",
	                                "4503599627370497"};
	enum { N = sizeof v / sizeof *v };
	gw_strbuf b = {0};
	gw_sb_puts(&b, OK_HEAD "{\"metric\":{},\"values\":[");
	for (int i = 0; i < N; i++)
		gw_sb_printf(&b, "%s[%d,\"%s\"]", i ? "," : "", 1000 + i, v[i]);
	gw_sb_puts(&b, "]}" OK_TAIL);
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(prom_parse_matrix(gw_sb_str(&b), b.len, &m, "up", &err), 0);
	assert_int_equal(m.s[0].n, N);
	for (int i = 0; i < N; i++) {
		double want = strtod(v[i], NULL);
		if (memcmp(&m.s[0].v[i], &want, sizeof want))
			fail_msg("'%s' read as %.17g, strtod reads %.17g", v[i], m.s[0].v[i], want);
	}
	prom_matrix_free(&m);
	gw_sb_free(&b);
}

/* A series that goes stale stops; the parser keeps the gap as a gap, with no invented points. */
static void test_gaps_kept(void **state)
{
	(void)state;
	const char *body =
	    OK_HEAD "{\"metric\":{\"gpu\":\"0\"},\"values\":[[100,\"1\"],[115,\"2\"],"
	            "[400,\"3\"]]}" OK_TAIL;
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(body, &m, &err), 0);
	assert_int_equal(m.s[0].n, 3);
	assert_true(m.s[0].t[1] == 115 && m.s[0].t[2] == 400);
	prom_matrix_free(&m);
}

static void test_empty_result(void **state)
{
	(void)state;
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(parse(OK_HEAD OK_TAIL, &m, &err), 0);
	assert_int_equal(m.n, 0);
	/* an answer without resultType is read as the matrix query_range always gives */
	assert_int_equal(parse("{\"status\":\"success\",\"data\":{\"result\":[]}}", &m, &err), 0);
	prom_matrix_free(&m);
}

static void test_error_status(void **state)
{
	(void)state;
	prom_matrix m = {0};
	gw_fail err = {0};
	const char *body = "{\"status\":\"error\",\"errorType\":\"bad_data\","
	                   "\"error\":\"1:5: parse error: unexpected '}'\"}";
	assert_int_equal(parse(body, &m, &err), GW_EXIT_ENV);
	assert_string_equal(err.why, "bad_data: 1:5: parse error: unexpected '}'");
	assert_int_equal(m.n, 0);
	/* an error answer that also carries data is still an error */
	body = "{\"status\":\"error\",\"error\":\"too many samples\",\"data\":{\"resultType\":"
	       "\"matrix\",\"result\":[]}}";
	assert_int_equal(parse(body, &m, &err), GW_EXIT_ENV);
	assert_string_equal(err.why, "too many samples");
	/* no error text: the status itself */
	assert_int_equal(parse("{\"status\":\"warning\"}", &m, &err), GW_EXIT_ENV);
	assert_string_equal(err.why, "warning");
	/* the query is what failed, and Prometheus's words are not translated */
	assert_string_equal(err.what, "up");
	assert_string_equal(err.why_text, "warning");
	assert_int_equal(err.code, GW_EXIT_ENV);
	prom_matrix_free(&m);
}

static void test_malformed(void **state)
{
	(void)state;
	expect_error("", "not JSON");
	expect_error("<html>502 Bad Gateway</html>", "not JSON");
	expect_error(OK_HEAD OK_TAIL " trailing", "not JSON");
	expect_error("[]", "no data.result");
	expect_error("{\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", "no data.result");
	expect_error("{\"status\":\"success\"}", "no data.result");
	expect_error("{\"status\":\"success\",\"data\":{}}", "no data.result");
	expect_error("{\"status\":\"success\",\"data\":{\"result\":{}}}", "no data.result");
	expect_error("{\"status\":7,\"data\":{\"result\":[]}}", "no data.result");
	expect_error("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}",
	             "vector");
	expect_error(OK_HEAD "{\"values\":[]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{}}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":[],\"values\":[]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":{}}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[]},7" OK_TAIL, "result 1");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[1,2]]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[\"1\",\"2\"]]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[1]]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[]]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[\"1\"]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[null]}" OK_TAIL, "result 0");
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[1,null]]}" OK_TAIL, "result 0");
	/* a second, bad series after a good one */
	expect_error(OK_HEAD "{\"metric\":{},\"values\":[[1,\"1\"]]},{\"metric\":{\"a\":\"b\"},"
	                     "\"values\":[[2,\"2\"],[3,4]]}" OK_TAIL,
	             "result 1");
}

/* Every cut of a good answer is an error, never a crash or a partial success. */
static void test_truncated(void **state)
{
	(void)state;
	const char *body = OK_HEAD
	    "{\"metric\":{\"Hostname\":\"n\\u00e9\",\"gpu\":\"0\"},\"values\":[[1.5,\"NaN\"],[2,"
	    "\"97.5\"]]},{\"metric\":{},\"values\":[[3,\"+Inf\"]]}" OK_TAIL;
	size_t len = strlen(body);
	for (size_t cut = 0; cut < len; cut++) {
		char *copy =
		    malloc(cut ? cut : 1); /* exactly cut bytes: no terminator to lean on */
		memcpy(copy, body, cut);
		prom_matrix m = {0};
		gw_fail err = {0};
		if (prom_parse_matrix(copy, cut, &m, NULL, &err) != GW_EXIT_ENV)
			fail_msg("a cut at %zu of %zu was accepted", cut, len);
		assert_true(err.why[0] != 0);
		prom_matrix_free(&m);
		free(copy);
	}
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(prom_parse_matrix(body, len, &m, NULL, &err), 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(prom_label_get(&m.s[0], "Hostname"), "n\xc3\xa9");
	prom_matrix_free(&m);
}

/* A large answer: many points, long labels, deep nesting where no nesting belongs. */
static void test_huge(void **state)
{
	(void)state;
	enum { POINTS = 200000 };
	gw_strbuf b = {0};
	gw_sb_puts(&b, OK_HEAD "{\"metric\":{\"gpu\":\"0\",\"long\":\"");
	for (int i = 0; i < 100000; i++)
		gw_sb_putc(&b, 'x');
	gw_sb_puts(&b, "\"},\"values\":[");
	for (int i = 0; i < POINTS; i++)
		gw_sb_printf(&b, "%s[%d,\"%d\"]", i ? "," : "", 1000 + 15 * i, i % 101);
	gw_sb_puts(&b, "]}" OK_TAIL);
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(prom_parse_matrix(gw_sb_str(&b), b.len, &m, NULL, &err), 0);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.s[0].n, POINTS);
	assert_int_equal(strlen(prom_label_get(&m.s[0], "long")), 100000);
	assert_true(m.s[0].t[POINTS - 1] == 1000 + 15.0 * (POINTS - 1));
	assert_true(m.s[0].v[POINTS - 1] == (POINTS - 1) % 101);
	/* the same answer cut in the middle of its points */
	prom_matrix_free(&m);
	assert_int_equal(prom_parse_matrix(gw_sb_str(&b), b.len / 2, &m, NULL, &err), GW_EXIT_ENV);
	prom_matrix_free(&m);
	gw_sb_free(&b);

	/* nesting far deeper than any answer: refused, not a stack overflow */
	gw_strbuf d = {0};
	gw_sb_puts(&d, OK_HEAD "{\"metric\":{},\"values\":[");
	for (int i = 0; i < 100000; i++)
		gw_sb_putc(&d, '[');
	for (int i = 0; i < 100000; i++)
		gw_sb_putc(&d, ']');
	gw_sb_puts(&d, "]}" OK_TAIL);
	assert_int_equal(prom_parse_matrix(gw_sb_str(&d), d.len, &m, NULL, &err), GW_EXIT_ENV);
	prom_matrix_free(&m);
	gw_sb_free(&d);
}

/* Keys in any order (the JSON object has none), and an answer's series hold exactly their
 * points once read: the fleet keeps its utilization answers until it knows every GPU. */
static void test_key_order_and_exact_size(void **state)
{
	(void)state;
	gw_strbuf b = {0};
	gw_sb_puts(&b, "{\"data\":{\"result\":[");
	for (int k = 0; k < 2; k++) {
		gw_sb_printf(&b, "%s{\"values\":[", k ? "," : "");
		for (int i = 0; i < 125; i++)
			gw_sb_printf(&b, "%s[%d,\"%d\"]", i ? "," : "", 1000 + 15 * i, i + k);
		gw_sb_printf(&b, "],\"metric\":{\"gpu\":\"%d\",\"Hostname\":\"n\"}}", k);
	}
	gw_sb_puts(&b, "],\"resultType\":\"matrix\"},\"status\":\"success\"}");
	prom_matrix m = {0};
	gw_fail err = {0};
	assert_int_equal(prom_parse_matrix(gw_sb_str(&b), b.len, &m, "up", &err), 0);
	assert_int_equal(m.n, 2);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(m.s[k].n, 125);
		assert_int_equal(m.s[k].cap, 125);
		assert_string_equal(prom_label_get(&m.s[k], "gpu"), k ? "1" : "0");
		assert_string_equal(m.s[k].labels[0].name, "Hostname"); /* sorted */
		assert_true(m.s[k].t[124] == 1000 + 15 * 124 && m.s[k].v[124] == 124 + k);
	}
	/* the next chunk joins them */
	assert_int_equal(prom_parse_matrix(gw_sb_str(&b), b.len, &m, "up", &err), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.s[1].n, 250);
	prom_matrix_free(&m);
	gw_sb_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_series),
	    cmocka_unit_test(test_several_series_and_chunks_join),
	    cmocka_unit_test(test_special_values),
	    cmocka_unit_test(test_values_as_strtod),
	    cmocka_unit_test(test_gaps_kept),
	    cmocka_unit_test(test_empty_result),
	    cmocka_unit_test(test_error_status),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_huge),
	    cmocka_unit_test(test_key_order_and_exact_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
