/* test_prom_chunk.c - a long range is asked for in chunks under Prometheus's points limit,
 * and the chunks together ask for every point of the grid from + i*step exactly once. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "prom/prom.h"

/*
 * Ask for [from, to] at step chunk by chunk and evaluate each chunk the way
 * Prometheus does: in milliseconds, at start + i*step while that is not past
 * end, refusing more than 11,000 points. Every point must be the next one of
 * the grid. Returns the number of chunks.
 */
static long check_range(double from, double to, double step)
{
	/* the request carries times with three decimals (prom_http.c's form) */
	int64_t step_ms = llround(step * 1000);
	long want_points = to >= from ? (long)floor((to - from) / step + 1e-9) + 1 : 0;
	long got = 0, k = 0;
	double a, b, prev_end = -INFINITY;
	for (; prom_range_chunk(from, to, step, k, &a, &b); k++) {
		int64_t a_ms = llround(a * 1000), b_ms = llround(b * 1000);
		if (!(a > prev_end) || b < a || b > to)
			fail_msg("chunk %ld [%.3f, %.3f] after %.3f in [%.3f, %.3f]", k, a, b,
			         prev_end, from, to);
		prev_end = b;
		if ((b_ms - a_ms) / step_ms + 1 > PROM_MAX_POINTS)
			fail_msg("chunk %ld has more than Prometheus's %d points", k,
			         PROM_MAX_POINTS);
		long in_chunk = 0;
		for (int64_t t = a_ms; t <= b_ms; t += step_ms, in_chunk++, got++) {
			int64_t want = llround((from + (double)got * step) * 1000);
			if (t != want)
				fail_msg("point %ld at %lld ms, want %lld ms (chunk %ld)", got,
				         (long long)t, (long long)want, k);
		}
		if (in_chunk > PROM_CHUNK_POINTS || in_chunk == 0)
			fail_msg("chunk %ld asks for %ld points", k, in_chunk);
	}
	if (got != want_points)
		fail_msg("%ld points asked for, want %ld over [%.3f, %.3f] step %g", got,
		         want_points, from, to, step);
	/* past the last chunk, every later one is empty too */
	assert_false(prom_range_chunk(from, to, step, k + 1, &a, &b));
	return k;
}

/* Smaller chunks (an answer kept within a number of points): the same grid, each point once,
 * no chunk above its size; a size out of range is Prometheus's limit. */
static void test_chunks_of_n(void **state)
{
	(void)state;
	static const long sizes[] = {1, 60, 240, 7812, PROM_CHUNK_POINTS};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		double from = 1700000000.5, step = 15, to = from + 86400, a, b;
		long got = 0, k = 0;
		for (; prom_range_chunk_n(from, to, step, sizes[i], k, &a, &b); k++) {
			long pts = llround((b - a) / step) + 1;
			if (pts > sizes[i] || llround((a - from) / step) != got)
				fail_msg("size %ld chunk %ld: [%.3f, %.3f] after %ld points",
				         sizes[i], k, a, b, got);
			got += pts;
		}
		assert_int_equal(got, 5761);
		assert_int_equal(k, (5761 + sizes[i] - 1) / sizes[i]);
	}
	double a, b;
	assert_true(prom_range_chunk_n(0, 1e6, 1, 0, 0, &a, &b));
	assert_true(b - a == PROM_CHUNK_POINTS - 1);
	assert_true(prom_range_chunk_n(0, 1e6, 1, PROM_MAX_POINTS + 5, 0, &a, &b));
	assert_true(b - a == PROM_CHUNK_POINTS - 1);
}

static void test_one_chunk(void **state)
{
	(void)state;
	double a = -1, b = -1;
	assert_true(prom_range_chunk(1700000000, 1700003600, 15, 0, &a, &b));
	assert_true(a == 1700000000 && b == 1700003600);
	assert_false(prom_range_chunk(1700000000, 1700003600, 15, 1, &a, &b));
	assert_int_equal(check_range(1700000000, 1700003600, 15), 1);
	/* one point: from == to */
	assert_int_equal(check_range(1700000000, 1700000000, 60), 1);
	/* a range shorter than one step */
	assert_int_equal(check_range(1700000000, 1700000010, 60), 1);
}

/* Exactly PROM_CHUNK_POINTS points fit one chunk; one more starts a second with that point. */
static void test_boundaries_exact(void **state)
{
	(void)state;
	const double from = 1700000000, step = 15;
	double last = from + (PROM_CHUNK_POINTS - 1) * step;
	assert_int_equal(check_range(from, last, step), 1);
	assert_int_equal(check_range(from, last + step, step), 2);
	double a, b;
	assert_true(prom_range_chunk(from, last + step, step, 0, &a, &b));
	assert_true(a == from && b == last);
	assert_true(prom_range_chunk(from, last + step, step, 1, &a, &b));
	assert_true(a == last + step && b == last + step);
	/* a to just short of the next point adds no point and no chunk */
	assert_int_equal(check_range(from, last + step - 0.5, step), 1);
	/* several whole chunks */
	assert_int_equal(check_range(from, from + (3.0 * PROM_CHUNK_POINTS - 1) * step, step), 3);
	assert_int_equal(check_range(from, from + 3.0 * PROM_CHUNK_POINTS * step, step), 4);
}

/* Steps that do not divide the range: the last point is the last one not past to. */
static void test_steps_not_dividing(void **state)
{
	(void)state;
	assert_int_equal(check_range(1700000000, 1700000000 + 86400, 7), 2); /* 12,343 points */
	assert_int_equal(check_range(1700000000, 1700000000 + 86400, 1), 9); /* 86,401 points */
	assert_int_equal(check_range(1700000000.25, 1700000000 + 30 * 86400 + 11, 13), 20);
	assert_int_equal(check_range(1767225600, 1767225600 + 90 * 86400 + 59, 60), 13);
	assert_int_equal(check_range(0, 123456.789, 1.5), 9);
	assert_int_equal(check_range(1700000000.5, 1700000000.5 + 604800, 3600), 1);
}

static void test_nothing_to_ask(void **state)
{
	(void)state;
	double a = 7, b = 7;
	assert_false(prom_range_chunk(100, 99, 1, 0, &a, &b)); /* to before from */
	assert_false(prom_range_chunk(100, 200, 0, 0, &a, &b));
	assert_false(prom_range_chunk(100, 200, -1, 0, &a, &b));
	assert_false(prom_range_chunk(100, 200, NAN, 0, &a, &b));
	assert_false(prom_range_chunk(100, 200, 1, -1, &a, &b));
	assert_true(a == 7 && b == 7);
	assert_int_equal(check_range(100, 99, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_chunk),        cmocka_unit_test(test_chunks_of_n),
	    cmocka_unit_test(test_boundaries_exact), cmocka_unit_test(test_steps_not_dividing),
	    cmocka_unit_test(test_nothing_to_ask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
