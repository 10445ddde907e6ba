/* test_trace_semantics.c - HTA's semantics, one rule per test, on traces written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "trace_test_util.h"

#define US(x) ((int64_t)(x)*1000)

/* Gap categories: host_wait when the launch began after the previous event ended; else
 * kernel_wait below 30 us; else other. The first event of a stream opens an empty "other". */
static void test_gap_categories(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "aten::mm", "0", "1");
	tb_call(&b, "cudaLaunchKernel", "90", "5", 1);
	tb_kernel(&b, "gemm", "100", "10", 7, 1);
	tb_call(&b, "cudaLaunchKernel", "150", "5", 2); /* after 110: host_wait, gap 90 */
	tb_kernel(&b, "gemm", "200", "10", 7, 2);
	tb_call(&b, "cudaLaunchKernel", "205", "2", 3); /* before 210, gap 5: kernel_wait */
	tb_kernel(&b, "gemm", "215", "5", 7, 3);
	tb_call(&b, "cudaLaunchKernel", "210", "2", 4); /* before 220, gap 80: other */
	tb_kernel(&b, "gemm", "300", "10", 7, 4);
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	const trace_idle_stream *s = trun_stream(&t, 7);
	assert_non_null(s);
	assert_int_equal(s->time[TRACE_IDLE_HOST], US(90));
	assert_int_equal(s->time[TRACE_IDLE_KERNEL], US(5));
	assert_int_equal(s->time[TRACE_IDLE_OTHER], US(80));
	assert_int_equal(s->gaps[TRACE_IDLE_HOST].count, 1);
	assert_int_equal(s->gaps[TRACE_IDLE_OTHER].count, 1);
	assert_true(s->present[TRACE_IDLE_OTHER]);
	/* ratios over the stream's idle time, as HTA rounds them */
	assert_float_equal(trace_round(s->ratio[TRACE_IDLE_HOST], 2), 0.51, 1e-12);
	/* temporal: span 100..310, busy 35 */
	assert_int_equal(t.res.temporal.span, US(210));
	assert_int_equal(t.res.temporal.idle, US(175));
	assert_int_equal(t.res.temporal.compute, US(35));
	assert_float_equal(t.res.temporal.idle_pct, 83.33, 1e-9);
	trun_free(&t);
	free(b.s);
}

/* Three 1 us launches at 1, 2 and 3 us (correlations 1..3), before any kernel they launch. */
static void three_launches(tbuf *b)
{
	tb_call(b, "cudaLaunchKernel", "1", "1", 1);
	tb_call(b, "cudaLaunchKernel", "2", "1", 2);
	tb_call(b, "cudaLaunchKernel", "3", "1", 3);
}

/* The kernel_wait threshold is 30 us, strict: 29 us is kernel_wait, 30 us is other. */
static void test_threshold_30us(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "aten::add", "0", "1");
	three_launches(&b);
	tb_kernel(&b, "add", "100", "10", 7, 1);
	tb_kernel(&b, "add", "139", "10", 7, 2); /* gap 29 */
	tb_kernel(&b, "add", "179", "10", 7, 3); /* gap 30 */
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	const trace_idle_stream *s = trun_stream(&t, 7);
	assert_int_equal(s->time[TRACE_IDLE_KERNEL], US(29));
	assert_int_equal(s->time[TRACE_IDLE_OTHER], US(30));
	assert_false(s->present[TRACE_IDLE_HOST]);
	trun_free(&t);
	free(b.s);
}

/* Overlaps: the union counts once across streams; on one stream a negative gap is kernel_wait. */
static void test_overlapping_intervals(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	three_launches(&b);
	tb_kernel(&b, "a", "100", "20", 7, 1);
	tb_kernel(&b, "b", "110", "5", 7, 2);  /* inside a: gap 110 - 120 = -10 */
	tb_kernel(&b, "c", "115", "50", 8, 3); /* other stream, overlapping */
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.temporal.span, US(65));
	assert_int_equal(t.res.temporal.idle, 0);
	assert_int_equal(trun_stream(&t, 7)->time[TRACE_IDLE_KERNEL], US(-10));
	trun_free(&t);
	free(b.s);
}

/* Touching intervals merge (a group continues while ts <= the running end): no idle, gap 0. */
static void test_touching_intervals(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	three_launches(&b);
	tb_kernel(&b, "gemm", "100", "10", 7, 1);
	tb_kernel(&b, "ncclKernel_AllReduce", "110", "10", 7, 2);
	tb_kernel(&b, "gemm", "120", "10", 7, 3);
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.temporal.idle, 0);
	assert_int_equal(t.res.temporal.span, US(30));
	assert_int_equal(trun_stream(&t, 7)->time[TRACE_IDLE_KERNEL], 0);
	assert_int_equal(trun_stream(&t, 7)->gaps[TRACE_IDLE_KERNEL].count, 2);
	/* touching computation and communication do not overlap */
	assert_int_equal(t.res.ktime[1], US(20));
	assert_int_equal(t.res.ktime[2], US(10));
	assert_int_equal(t.res.ktime[3], 0);
	assert_float_equal(t.res.overlap_pct, 0.0, 0);
	trun_free(&t);
	free(b.s);
}

static char *step_trace(tbuf *b, int steps)
{
	tb_begin(b);
	tb_cpu(b, "user_annotation", "ProfilerStep#1", "0", "100");
	if (steps > 1)
		tb_cpu(b, "user_annotation", "ProfilerStep#2", "100", "100");
	tb_call(b, "cudaLaunchKernel", "10", "2", 1);
	tb_kernel(b, "k1", "20", "10", 7, 1);
	tb_call(b, "cudaLaunchKernel", "110", "2", 2);
	tb_kernel(b, "k2", "120", "10", 7, 2);
	tb_kernel(b, "k3", "50", "5", 7, -2);  /* no correlation: HTA's CPU side, kept by ts */
	tb_kernel(b, "k4", "150", "5", 7, 99); /* correlation without a launch: dropped */
	return tb_end(b);
}

/* ProfilerStep filter: with two or more step names, events of the last step go, and so do GPU
 * events whose correlation no kept CPU row carries. */
static void test_profiler_step_filter(void **state)
{
	(void)state;
	tbuf b;
	trun t;
	trun_do(&t, step_trace(&b, 2));
	assert_int_equal(t.rc, 0);
	assert_true(t.res.frame.filtered);
	assert_int_equal(t.res.n_gpu_events, 2); /* k1, k3 */
	assert_int_equal(t.res.frame.n_gpu_dropped, 2);
	assert_int_equal(t.res.temporal.span, US(35)); /* k1 at 20 .. k3 ending at 55 */
	trun_free(&t);

	trace_prep_opts last = {.ns_rounding = true, .include_last_step = true};
	trun_opts(&t, b.s, &last);
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.n_gpu_events, 3); /* k1, k2, k3 */
	trun_free(&t);
	free(b.s);

	/* One step name: no filtering at all. */
	trun_do(&t, step_trace(&b, 1));
	assert_int_equal(t.rc, 0);
	assert_false(t.res.frame.filtered);
	assert_int_equal(t.res.n_gpu_events, 4);
	trun_free(&t);
	free(b.s);
}

/* ns timestamps: ts = ceil(ts), end = floor(ts + dur); a sub-us event gets -1 us; the negative
 * non-compute time that stops HTA is reported, not fatal; --no-ns-rounding keeps ns. */
static void test_ns_rounding(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0.5", "1.0");
	tb_call(&b, "cudaLaunchKernel", "1.0", "1.0", 1);
	tb_call(&b, "cudaLaunchKernel", "2.0", "1.0", 2);
	tb_call(&b, "cudaMemcpyAsync", "3.0", "1.0", 3);
	tb_kernel(&b, "gemm", "100.2", "9.9", 7, 1); /* 101 .. floor(110.1) = 110 */
	tb_gpu(&b, "gpu_memcpy", "Memcpy DtoD (Device -> Device)", "120.3", "0.4", 7, 3);
	tb_kernel(&b, "gemm", "130.0", "10.0", 7, 2);
	char *json = tb_end(&b);
	trun t;
	trun_do(&t, json);
	assert_int_equal(t.rc, 0);
	assert_true(t.r.ts_float);
	assert_true(t.res.frame.rounded);
	assert_int_equal(t.res.frame.n_neg_dur, 1);
	/* merged groups [101,110], [121,120] (the memcpy), [130,140]: busy 18 of 39 */
	assert_int_equal(t.res.temporal.span, US(39));
	assert_int_equal(t.res.temporal.idle, US(21));
	assert_int_equal(t.res.temporal.compute, US(19));
	assert_int_equal(t.res.temporal.non_compute, US(-1));
	assert_true(t.res.hta_would_fail);
	/* the memcpy's gap: 121 - 110 */
	assert_int_equal(trun_stream(&t, 7)->time[TRACE_IDLE_HOST] +
	                     trun_stream(&t, 7)->time[TRACE_IDLE_KERNEL] +
	                     trun_stream(&t, 7)->time[TRACE_IDLE_OTHER],
	                 US(11 + 10));
	trun_free(&t);

	trace_prep_opts exact = {.ns_rounding = false};
	trun_opts(&t, json, &exact);
	assert_int_equal(t.rc, 0);
	assert_false(t.res.frame.rounded);
	assert_int_equal(t.res.temporal.span, 39800);
	assert_int_equal(t.res.temporal.compute, 19900);
	assert_int_equal(t.res.temporal.non_compute, 400); /* the 0.4 us memcpy */
	assert_false(t.res.hta_would_fail);
	/* HTA's float microseconds: each kernel type piece is truncated, 9.9 us counts 9 */
	assert_int_equal(t.res.ktime[1], US(9 + 10));
	assert_int_equal(t.res.ktime[4], 0);
	trun_free(&t);
	free(b.s);
}

/* The 2021 format: categories Kernel/Runtime/Memcpy/Operator, tid "stream 7". */
static void test_old_categories(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#5\", \"pid\": 1, "
	       "\"tid\": \"1890023232\", \"ts\": 0, \"dur\": 100, \"args\": {}}");
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"ProfilerStep#6\", \"pid\": 1, "
	       "\"tid\": \"1890023232\", \"ts\": 100, \"dur\": 100, \"args\": {}}");
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
	       "\"tid\": \"1890023232\", \"ts\": 10, \"dur\": 5, \"args\": {\"correlation\": 1, "
	       "\"external id\": 3}}");
	tb_raw(&b, "{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"volta_sgemm\", \"pid\": 0, "
	           "\"tid\": \"stream 7\", \"ts\": 20, \"dur\": 10, \"args\": {\"stream\": 7, "
	           "\"correlation\": 1, \"external id\": 3}}");
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 1, "
	       "\"tid\": \"1890023232\", \"ts\": 40, \"dur\": 5, \"args\": {\"correlation\": 2}}");
	tb_raw(
	    &b,
	    "{\"ph\": \"X\", \"cat\": \"Memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
	    "\"pid\": 0, \"tid\": \"stream 7\", \"ts\": 50, \"dur\": 4, \"args\": {\"stream\": 7, "
	    "\"correlation\": 2, \"bytes\": 4000, \"memory bandwidth (GB/s)\": 1.0}}");
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_non_null(strstr(t.r.format, "2021"));
	assert_true(t.res.frame.filtered);
	const trace_idle_stream *s = trun_stream(&t, 7);
	assert_non_null(s);
	/* the memcpy counts in the idle breakdown: launch at 40 after the kernel ended at 30 */
	assert_int_equal(s->time[TRACE_IDLE_HOST], US(20));
	assert_int_equal(t.res.launch.n, 2);
	assert_int_equal(t.res.n_membw, 1);
	assert_string_equal(t.res.membw[0].group, "Memcpy HtoD");
	trun_free(&t);
	free(b.s);
}

/* args.stream is coerced like pandas.to_numeric: "7" and 7.0 are 7, "stream 7" is no stream. */
static void test_string_stream_ids(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_raw(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"ts\": 10, \"dur\": 5, "
	           "\"args\": {\"stream\": \"7\", \"correlation\": 1}}");
	tb_raw(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"b\", \"ts\": 20, \"dur\": 5, "
	           "\"args\": {\"stream\": 7.0, \"correlation\": 2}}");
	tb_raw(&b, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"c\", \"ts\": 30, \"dur\": 5, "
	           "\"args\": {\"stream\": \"stream 9\", \"correlation\": 3}}");
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.n_gpu_events, 2);
	assert_int_equal(t.res.n_idle, 1);
	assert_int_equal(t.res.idle[0].stream, 7);
	trun_free(&t);
	free(b.s);
}

/* Without a correlation a GPU event has no launch time: never host_wait. With a correlation
 * but no launch row, HTA's index_correlation is 0 and it borrows row 0's start. */
static void test_missing_correlation(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "late row 0", "1000", "1");
	tb_kernel(&b, "a", "100", "10", 7, -2);
	tb_kernel(&b, "b", "200", "10", 7, -2); /* no correlation: gap 90 -> other */
	tb_kernel(&b, "c", "300", "10", 7, 5);  /* no launch: row 0 (ts 1000) > 210 -> host */
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	const trace_idle_stream *s = trun_stream(&t, 7);
	assert_int_equal(s->time[TRACE_IDLE_OTHER], US(90));
	assert_int_equal(s->time[TRACE_IDLE_HOST], US(90));
	assert_int_equal(t.res.launch.n, 0);
	trun_free(&t);
	free(b.s);

	/* Row 0 without a duration is dropped by HTA: no launch time, the gap is "other". */
	tb_begin(&b);
	tb_raw(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"ts\": 1000, "
	           "\"args\": {\"name\": \"python\"}}");
	tb_kernel(&b, "a", "100", "10", 7, -2);
	tb_kernel(&b, "c", "300", "10", 7, 5);
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	s = trun_stream(&t, 7);
	assert_false(s->present[TRACE_IDLE_HOST]);
	assert_int_equal(s->time[TRACE_IDLE_OTHER], US(190));
	trun_free(&t);
	free(b.s);
}

static void test_kernel_types(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		trace_ktype want;
	} cases[] = {
	    {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
	     TRACE_KT_COMMUNICATION},
	    {"ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*)", TRACE_KT_COMMUNICATION},
	    {"void foo::ncclKernel_x()", TRACE_KT_COMMUNICATION},
	    {"hipLaunchKernel", TRACE_KT_COMMUNICATION},
	    {"Memcpy DtoD (Device -> Device)", TRACE_KT_MEMORY},
	    {"Memset (Device)", TRACE_KT_MEMORY},
	    {"dma_copy", TRACE_KT_MEMORY},
	    {"void at::native::vectorized_elementwise_kernel<4>()", TRACE_KT_COMPUTATION},
	    {"volta_sgemm_128x64_nn", TRACE_KT_COMPUTATION},
	    {"Stream Wait Event", TRACE_KT_OTHER},
	    {"Context Sync", TRACE_KT_OTHER},
	    {"void my_kernel_Sync()", TRACE_KT_OTHER},
	    {"cudaLaunchKernel", TRACE_KT_OTHER},
	    {"void copy_from_Memcpy_buffer()", TRACE_KT_OTHER},
	    {"", TRACE_KT_COMPUTATION},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		assert_int_equal(trace_kernel_type(cases[i].name), cases[i].want);
	char g[16];
	trace_mem_group("Memcpy HtoD (Pinned -> Device)", g, sizeof g);
	assert_string_equal(g, "Memcpy HtoD");
	trace_mem_group("Memset (Device)", g, sizeof g);
	assert_string_equal(g, "Memset");
	trace_mem_group("dma_copy", g, sizeof g);
	assert_string_equal(g, "Memcpy Unknown");
}

/* Equal keys end up where numpy 1.24's argsort(kind="quicksort") puts them (vectors and
 * orders from numpy itself). */
static void test_argsort_numpy_ties(void **state)
{
	(void)state;
	static const int64_t a[] = {3, 1, 3, 0, 1, 3, 2, 0, 1, 3, 3, 2, 0, 0, 1, 2, 3, 1, 0, 2};
	static const uint32_t a_np[] = {3,  7, 18, 12, 13, 1, 17, 4, 8,  14,
	                                19, 6, 15, 11, 16, 0, 5,  2, 10, 9};
	static const uint32_t b_np[] = {0,  22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 23, 12,
	                                10, 9,  8,  7,  6,  5,  4,  3,  2,  1,  11, 24};
	uint32_t idx[32];
	trace_argsort(a, idx, 20);
	assert_memory_equal(idx, a_np, sizeof a_np);
	int64_t same[25];
	for (int i = 0; i < 25; i++)
		same[i] = 5;
	trace_argsort(same, idx, 25);
	assert_memory_equal(idx, b_np, sizeof b_np);
	/* up to 16 elements numpy uses insertion sort: stable */
	int64_t small[16] = {2, 1, 2, 1, 0, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2};
	trace_argsort(small, idx, 16);
	for (int i = 1; i < 16; i++)
		assert_true(small[idx[i - 1]] < small[idx[i]] ||
		            (small[idx[i - 1]] == small[idx[i]] && idx[i - 1] < idx[i]));
}

static bool tie_always(uint32_t a, uint32_t b, const void *arg)
{
	(void)a;
	(void)b;
	(void)arg;
	return true;
}

static bool tie_same_parity(uint32_t a, uint32_t b, const void *arg)
{
	(void)arg;
	return (a & 1) == (b & 1);
}

/* The same through a field of records: numpy's order on the field, with or without ties. */
static void test_argsort_fast_field(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct {
		int64_t ts;
		int64_t other;
		double d;
	} rec[N];
	static int64_t keys[N];
	static uint32_t want[N], got[N];
	uint64_t rng = 11;
	for (int round = 0; round < 4; round++) {
		int64_t range = round < 2 ? 1000000000 : 20;
		for (int i = 0; i < N; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			keys[i] = rec[i].ts = (int64_t)((rng >> 33) % (uint64_t)range) - range / 2;
			rec[i].other = -keys[i];
		}
		trace_argsort(keys, want, N);
		assert_true(trace_argsort_fast_field(&rec[0].ts, sizeof *rec, got, N,
		                                     round & 1 ? tie_always : NULL, NULL));
		if (round & 1 || range > N * 100)
			assert_memory_equal(got, want, sizeof want);
		for (int i = 1; i < N; i++)
			assert_true(keys[got[i - 1]] <= keys[got[i]]);
	}
}

/* trace_radix_sort is stable whichever way it goes: merging a few ascending runs (one to 16)
 * or radix passes (more), with and without a payload. */
static void test_radix_runs(void **state)
{
	(void)state;
	enum { N = 4000 };
	static uint64_t k[N], k2[N], orig[N];
	static uint32_t p[N];
	uint64_t rng = 5;
	for (size_t runs = 1; runs <= 20; runs++) {
		size_t len = N / runs;
		uint64_t at = 0;
		for (size_t i = 0; i < N; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			if (i % len == 0)
				at = (rng >> 40) %
				     50; /* a new run starts low: many equal keys across runs */
			at += (rng >> 62) == 0; /* steps of 0 or 1 */
			k[i] = k2[i] = orig[i] = at | (runs & 1 ? 0 : 0xff00000000000000ull);
			p[i] = (uint32_t)i;
		}
		assert_true(trace_radix_sort(k, p, N));
		assert_true(trace_radix_sort(k2, NULL, N));
		assert_memory_equal(k, k2, sizeof k);
		for (size_t i = 1; i < N; i++) {
			assert_true(k[i - 1] <= k[i]);
			if (k[i - 1] == k[i])
				assert_true(p[i - 1] < p[i]); /* stable */
		}
		for (size_t i = 0; i < N; i++) /* a permutation carried with its keys */
			k2[i] = 0;
		for (size_t i = 0; i < N; i++) {
			assert_int_equal(k[i], orig[p[i]]);
			k2[p[i]]++;
		}
		for (size_t i = 0; i < N; i++)
			assert_int_equal(k2[i], 1);
	}
}

/* Selection: ranks r and r + 1 as the sorted keys have them, on spreads that end the radix
 * passes early (all equal, one byte apart, 32 keys or fewer) or late (wide and narrow values,
 * many ties), at every rank of small inputs and at the medians of large ones. */
static void test_select_pair(void **state)
{
	(void)state;
	enum { N = 5000 };
	static uint64_t k[N], sorted[N];
	uint64_t rng = 11;
	const size_t sizes[] = {1, 2, 3, 31, 32, 33, 34, 200, 4999, 5000};
	for (int spread = 0; spread < 5; spread++) {
		for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
			size_t n = sizes[si];
			for (size_t i = 0; i < n; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t v = rng >> 1;
				k[i] = spread == 0   ? 42
				       : spread == 1 ? 0x8000000000000000ull | (v % 3) << 8
				       : spread == 2 ? v % 17
				       : spread == 3 ? 0x8000000000000000ull + v % 100000000
				                     : v;
			}
			memcpy(sorted, k, n * sizeof *k);
			assert_true(trace_radix_sort(sorted, NULL, n));
			for (size_t r = 0; r<n; r += n> 300 ? n / 2 - 1 : 1) {
				uint64_t at, next;
				trace_select_pair_u64(k, n, r, &at, &next);
				assert_int_equal(at, sorted[r]);
				assert_int_equal(next, r + 1 < n ? sorted[r + 1] : UINT64_MAX);
			}
			assert_true(trace_radix_sort(k, NULL, n)); /* the same keys, reordered */
			assert_memory_equal(k, sorted, n * sizeof *k);
		}
	}
}

/* Inputs that drive numpy's median of three past its depth limit into heapsort (an organ pipe,
 * where every key comes twice, and Musser's median-of-3 killer): the permutation's FNV-1a hash
 * as numpy 1.24's argsort(kind="quicksort") gives it, through the plain and the ranked sort. */
static void test_argsort_heap_path(void **state)
{
	(void)state;
	enum { N = 1000 };
	static int64_t keys[N];
	static uint32_t got[N];
	const uint64_t want[2] = {0x36390d7da3d22fb9ull, 0x7bee98bc575a45fdull};
	for (int shape = 0; shape < 2; shape++) {
		for (int i = 0; i < N / 2; i++) {
			if (shape == 0) {
				keys[i] = i;
				keys[N / 2 + i] = N / 2 - i;
			} else {
				int k = N / 2, j = i + 1;
				if (j % 2 == 1) {
					keys[j - 1] = j;
					keys[j] = k + j;
				}
				keys[k + j - 1] = 2 * j;
			}
		}
		for (int ranked = 0; ranked < 2; ranked++) {
			if (ranked)
				trace_argsort_fast(keys, got, N, tie_always, NULL);
			else
				trace_argsort(keys, got, N);
			uint64_t h = 0xcbf29ce484222325ull;
			for (int i = 0; i < N; i++)
				h = (h ^ got[i]) * 0x100000001b3ull;
			assert_int_equal(h, want[shape]);
		}
	}
}

/* numpy's order through the fast paths where ties need it, by ranks: keys in many runs with
 * many ties (the radix path, its tie check failing) and in two runs (the merge path), with
 * and without a strided field, against the plain introsort. */
static void test_argsort_ranked(void **state)
{
	(void)state;
	enum { N = 60000 };
	static int64_t keys[N];
	static struct {
		int64_t ts;
		int32_t a, b;
	} rec[N];
	static uint32_t want[N], got[N];
	uint64_t rng = 23;
	const size_t sizes[] = {17, 100, 4096, N};
	for (int shape = 0; shape < 3; shape++) {
		for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
			size_t n = sizes[si];
			for (size_t i = 0; i < n; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				keys[i] = shape == 0   ? (int64_t)((rng >> 33) % 50) - 25
				          : shape == 1 ? (int64_t)(i < n / 2 ? i : i - n / 2) / 3
				                       : (int64_t)(rng >> 1);
				rec[i].ts = keys[i];
			}
			trace_argsort(keys, want, n);
			trace_argsort_fast(keys, got, n, tie_always, NULL);
			assert_memory_equal(got, want, n * sizeof *got);
			assert_true(trace_argsort_fast_field(&rec[0].ts, sizeof *rec, got, n,
			                                     tie_always, NULL));
			assert_memory_equal(got, want, n * sizeof *got);
		}
	}
}

/* Keys in one to six ascending runs (four at most are merged directly, more go the radix way):
 * numpy's order where a tie matters, else the stable order, through keys and through a field. */
static void test_argsort_runs(void **state)
{
	(void)state;
	enum { N = 3000 };
	static int64_t keys[N];
	static struct {
		int32_t pad;
		int64_t ts;
	} rec[N];
	static uint32_t want[N], got[N];
	uint64_t rng = 3;
	for (size_t runs = 1; runs <= 6; runs++) {
		for (int dense = 0; dense < 2; dense++) {
			int64_t at = 0;
			for (size_t i = 0; i < N; i++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				if (i % (N / runs) == 0)
					at = (int64_t)((rng >> 40) % 100) - 50;
				at += dense ? (int64_t)(rng >> 63)
				            : 1 + (int64_t)((rng >> 33) % 1000);
				keys[i] = rec[i].ts = at;
			}
			trace_argsort(keys, want, N);
			trace_argsort_fast(keys, got, N, tie_always, NULL);
			assert_memory_equal(got, want, sizeof want);
			assert_true(trace_argsort_fast_field(&rec[0].ts, sizeof *rec, got, N,
			                                     tie_always, NULL));
			assert_memory_equal(got, want, sizeof want);
			for (int field = 0; field < 2; field++) {
				if (field)
					assert_true(trace_argsort_fast_field(
					    &rec[0].ts, sizeof *rec, got, N, NULL, NULL));
				else
					trace_argsort_fast(keys, got, N, NULL, NULL);
				for (size_t i = 1; i < N; i++) { /* stable: ties never matter */
					assert_true(keys[got[i - 1]] <= keys[got[i]]);
					if (keys[got[i - 1]] == keys[got[i]])
						assert_true(got[i - 1] < got[i]);
				}
			}
			trace_argsort_fast(keys, got, N, tie_same_parity, NULL);
			for (size_t i = 1; i < N; i++)
				assert_true(keys[got[i - 1]] <= keys[got[i]]);
		}
	}
}

/* The radix path gives numpy's order whenever it is taken. */
static void test_argsort_fast(void **state)
{
	(void)state;
	enum { N = 5000 };
	static int64_t keys[N];
	static uint32_t want[N], got[N];
	uint64_t rng = 7;
	for (int round = 0; round < 6; round++) {
		int64_t range = round < 2 ? 1000000000 : round < 4 ? 3000 : 20;
		for (int i = 0; i < N; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			keys[i] = (int64_t)((rng >> 33) % (uint64_t)range) - range / 2;
		}
		trace_argsort(keys, want, N);
		trace_argsort_fast(keys, got, N, tie_always, NULL);
		assert_memory_equal(got, want, sizeof want);
		trace_argsort_fast(keys, got, N, tie_same_parity, NULL);
		for (int i = 1; i < N; i++) /* sorted; equal keys of one parity in numpy's order */
			assert_true(keys[got[i - 1]] <= keys[got[i]]);
		if (range > N * 100) { /* no ties at all: every path agrees */
			trace_argsort_fast(keys, got, N, NULL, NULL);
			assert_memory_equal(got, want, sizeof want);
		}
	}
}

/* Nanosecond keys give, bit for bit, the summary of their microsecond doubles. */
static void test_describe_ns_keys(void **state)
{
	(void)state;
	enum { N = 3000 };
	static uint64_t k[N];
	static double v[N];
	uint64_t rng = 17;
	const size_t sizes[] = {0, 1, 2, 5, 100, N};
	for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		size_t n = sizes[si];
		for (size_t i = 0; i < n; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			int64_t ns = (int64_t)((rng >> 33) % 2000000) - (si == 3 ? 1000000 : 1000);
			k[i] = trace_key_i64(ns);
			v[i] = (double)ns / 1000.0;
		}
		trace_describe a, b;
		trace_describe_values(v, n, &a);
		trace_describe_ns_keys(k, n, &b);
		assert_int_equal(a.count, b.count);
		assert_memory_equal(&a, &b, sizeof a); /* NaN where empty: same bits too */
	}
}

static void test_describe(void **state)
{
	(void)state;
	double v[] = {4, 2, NAN, 1, 3};
	trace_describe d;
	trace_describe_values(v, 5, &d);
	assert_int_equal(d.count, 4);
	assert_float_equal(d.mean, 2.5, 1e-15);
	assert_float_equal(d.std, 1.2909944487358056, 1e-15);
	assert_float_equal(d.q25, 1.75, 1e-15);
	assert_float_equal(d.q75, 3.25, 1e-15);
	double one[] = {7};
	trace_describe_values(one, 1, &d);
	assert_true(isnan(d.std));
	assert_float_equal(d.q50, 7, 0);
	/* the histogram form gives the same summary */
	double five[] = {5, 2, 1, 2, 3};
	const uint64_t counts[] = {1, 2, 1, 0, 1};
	trace_describe h;
	trace_describe_values(five, 5, &d);
	trace_describe_hist(1, counts, 5, &h);
	assert_int_equal(h.count, d.count);
	assert_float_equal(h.mean, d.mean, 1e-12);
	assert_float_equal(h.std, d.std, 1e-12);
	assert_float_equal(h.min, d.min, 0);
	assert_float_equal(h.q25, d.q25, 1e-12);
	assert_float_equal(h.q50, d.q50, 1e-12);
	assert_float_equal(h.q75, d.q75, 1e-12);
	assert_float_equal(h.max, d.max, 0);
	assert_float_equal(trace_round(0.125, 2), 0.12, 1e-15); /* half to even */
	assert_float_equal(trace_round(53.5649, 2), 53.56, 1e-12);
}

/* More than ten kernel names: HTA folds those past 80% of the cumulative time (and past the
 * tenth) into "others", and reports the kept ones with max = min = mean = sum. */
static void test_top_kernels_fold(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	char name[16], ts[16], dur[16];
	long t0 = 100;
	for (int k = 12; k >= 1; k--) {
		snprintf(name, sizeof name, "kern%02d", k);
		snprintf(ts, sizeof ts, "%ld", t0);
		snprintf(dur, sizeof dur, "%d", k);
		tb_kernel(&b, name, ts, dur, 7, -1);
		t0 += 100;
	}
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.n_kernels, 10); /* 9 kept + others */
	const trace_kernel_row *others = NULL;
	for (size_t i = 0; i < t.res.n_kernels; i++)
		if (t.res.kernels[i].name == TRACE_NONE)
			others = &t.res.kernels[i];
	assert_non_null(others);
	assert_int_equal(others->sum, US(6)); /* kern03 + kern02 + kern01 */
	assert_float_equal(others->hta_max, 3, 0);
	assert_float_equal(others->hta_min, 1, 0);
	assert_float_equal(others->hta_mean, 2, 0);
	assert_float_equal(others->hta_std, 1, 1e-15);
	const trace_kernel_row *k12 = &t.res.kernels[t.res.n_kernels - 1];
	assert_string_equal(trace_kernel_row_name(&t.res, k12), "others");
	assert_string_equal(trace_kernel_row_name(&t.res, &t.res.kernels[0]), "kern04");
	assert_float_equal(t.res.kernels[0].hta_mean, 4, 0);
	trun_free(&t);
	free(b.s);
}

/* Launch statistics: short kernels, runtime outliers (> 50 us), launch delay outliers
 * (> 100 us; the delay is clipped at 0). */
static void test_launch_stats(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_call(&b, "cudaLaunchKernel", "10", "10", 1); /* kernel 5 us: short, delay 0 */
	tb_kernel(&b, "a", "15", "5", 7, 1);
	tb_call(&b, "cudaLaunchKernel", "100", "60", 2); /* runtime outlier */
	tb_kernel(&b, "b", "170", "5", 7, 2);
	tb_call(&b, "cudaMemsetAsync", "300", "5", 3); /* delay 150: outlier */
	tb_gpu(&b, "gpu_memset", "Memset (Device)", "455", "1", 7, 3);
	tb_call(&b, "cuLaunchKernel", "600", "5", 4); /* not one HTA counts */
	tb_kernel(&b, "triton_", "610", "5", 7, 4);
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	const trace_launch *L = &t.res.launch;
	assert_int_equal(L->n, 3);
	assert_int_equal(L->n_short, 2); /* a, and the 1 us memset under a 5 us call */
	assert_int_equal(L->n_runtime_outliers, 1);
	assert_int_equal(L->n_delay_outliers, 1);
	assert_int_equal(L->rows[0].delay, 0);
	assert_int_equal(L->rows[1].delay, US(10));
	assert_int_equal(L->rows[2].delay, US(150));
	trun_free(&t);
	free(b.s);
}

/* Queue length: +1 at each launch, -1 at its kernel's start, sampled at every change. */
static void test_queue_length(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_call(&b, "cudaLaunchKernel", "1", "1", 1);
	tb_call(&b, "cudaLaunchKernel", "2", "1", 2);
	tb_call(&b, "cuLaunchKernel", "3", "1", 3);
	tb_kernel(&b, "a", "10", "5", 7, 1);
	tb_kernel(&b, "b", "20", "5", 7, 2);
	tb_kernel(&b, "c", "30", "5", 7, 3);
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.n_queue, 1);
	const trace_describe *q = &t.res.queue[0].len; /* 1,2,3,2,1,0 */
	assert_int_equal(q->count, 6);
	assert_float_equal(q->mean, 1.5, 1e-15);
	assert_float_equal(q->max, 3, 0);
	assert_int_equal(t.res.queue[0].blocked, 0);
	trun_free(&t);
	free(b.s);
}

/* Memory bandwidth: running sum per memory group, summarised over its points above zero. */
static void test_memory_bandwidth(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> "
	       "Device)\", \"ts\": 100, \"dur\": 10, \"args\": {\"stream\": 7, \"correlation\": 1, "
	       "\"memory bandwidth (GB/s)\": 5.0}}");
	tb_raw(&b,
	       "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> "
	       "Device)\", \"ts\": 105, \"dur\": 10, \"args\": {\"stream\": 8, \"correlation\": 2, "
	       "\"memory bandwidth (GB/s)\": 3.0}}");
	tb_raw(
	    &b,
	    "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"ts\": 200, "
	    "\"dur\": 0, \"args\": {\"stream\": 7, \"correlation\": 3, "
	    "\"memory bandwidth (GB/s)\": 4.25}}");
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_int_equal(t.res.n_membw, 2);
	assert_string_equal(t.res.membw[0].group, "Memcpy HtoD");
	assert_int_equal(t.res.membw[0].bw.count, 3); /* 5, 8, 3 */
	assert_float_equal(t.res.membw[0].bw.mean, 16.0 / 3, 1e-12);
	assert_string_equal(t.res.membw[1].group, "Memset");
	assert_int_equal(t.res.membw[1].bw.count, 1);
	assert_float_equal(t.res.membw[1].bw.max, 4.25, 0);
	trun_free(&t);
	free(b.s);
}

/* Communication/computation overlap and the kernel type combinations. */
static void test_comm_overlap(void **state)
{
	(void)state;
	tbuf b;
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_kernel(&b, "ncclKernel_AllReduce", "100", "100", 20, -1);
	tb_kernel(&b, "gemm", "150", "100", 7, -1);
	tb_gpu(&b, "gpu_memcpy", "Memcpy DtoD (Device -> Device)", "240", "20", 9, -1);
	trun t;
	trun_do(&t, tb_end(&b));
	assert_int_equal(t.rc, 0);
	assert_float_equal(t.res.overlap_pct, 50.0, 0);
	assert_int_equal(t.res.comm_exposed, US(50));
	assert_int_equal(t.res.ktime[1], US(40));     /* computation alone */
	assert_int_equal(t.res.ktime[2], US(50));     /* communication alone */
	assert_int_equal(t.res.ktime[3], US(50));     /* both */
	assert_int_equal(t.res.ktime[4 | 1], US(10)); /* computation and memory */
	assert_int_equal(t.res.ktime[4], US(10));
	trun_free(&t);
	free(b.s);
}

static trace_verdict_id verdict_of(const char *json)
{
	trun t;
	trun_do(&t, json);
	assert_int_equal(t.rc, 0);
	trace_verdict_id v = t.res.verdict.id;
	assert_true(t.res.verdict.n_evidence > 0);
	trun_free(&t);
	return v;
}

/*
 * A trace of n kernels name, dur us each, one every period us from 1000 us,
 * each launched by an 8 us call that starts 10 us before it: the GPU waits
 * on every launch.
 */
static char *late_launches(tbuf *b, int n, const char *name, const char *dur, int period)
{
	char ts[32], call[32];
	tb_begin(b);
	tb_cpu(b, "cpu_op", "x", "0", "1");
	for (int i = 0; i < n; i++) {
		snprintf(ts, sizeof ts, "%d", 1000 + i * period);
		snprintf(call, sizeof call, "%d", 1000 + i * period - 10);
		tb_call(b, "cudaLaunchKernel", call, "8", i + 1);
		tb_kernel(b, name, ts, dur, 7, i + 1);
	}
	return tb_end(b);
}

static void test_verdicts(void **state)
{
	(void)state;
	tbuf b;
	char ts[32], call[32];
	/* healthy: back-to-back kernels */
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	for (int i = 0; i < 50; i++) {
		snprintf(ts, sizeof ts, "%d", 1000 + i * 100);
		snprintf(call, sizeof call, "%d", 10 + i);
		tb_call(&b, "cudaLaunchKernel", call, "5", i + 1);
		tb_kernel(&b, "gemm", ts, "98", 7, i + 1);
	}
	assert_int_equal(verdict_of(tb_end(&b)), TRACE_VERDICT_HEALTHY);
	free(b.s);
	/* launch-bound: 2 us kernels, each launched 20 us after the previous one ended */
	assert_int_equal(verdict_of(late_launches(&b, 50, "add", "2", 30)),
	                 TRACE_VERDICT_LAUNCH_BOUND);
	free(b.s);
	/* host-bound: 1 ms kernels with 5 ms waits for the next launch */
	assert_int_equal(verdict_of(late_launches(&b, 10, "gemm", "1000", 6000)),
	                 TRACE_VERDICT_HOST_BOUND);
	free(b.s);
	/* communication-bound: all-reduce alone for half the span */
	tb_begin(&b);
	tb_cpu(&b, "cpu_op", "x", "0", "1");
	tb_kernel(&b, "gemm", "100", "500", 7, -1);
	tb_kernel(&b, "ncclKernel_AllReduce", "600", "500", 20, -1);
	assert_int_equal(verdict_of(tb_end(&b)), TRACE_VERDICT_COMM_BOUND);
	free(b.s);
	assert_string_equal(trace_verdict_word(TRACE_VERDICT_COMM_BOUND), "communication-bound");
	assert_string_equal(trace_verdict_id_str(TRACE_VERDICT_HOST_BOUND), "host_bound");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gap_categories),
	    cmocka_unit_test(test_threshold_30us),
	    cmocka_unit_test(test_overlapping_intervals),
	    cmocka_unit_test(test_touching_intervals),
	    cmocka_unit_test(test_profiler_step_filter),
	    cmocka_unit_test(test_ns_rounding),
	    cmocka_unit_test(test_old_categories),
	    cmocka_unit_test(test_string_stream_ids),
	    cmocka_unit_test(test_missing_correlation),
	    cmocka_unit_test(test_kernel_types),
	    cmocka_unit_test(test_argsort_numpy_ties),
	    cmocka_unit_test(test_argsort_fast),
	    cmocka_unit_test(test_radix_runs),
	    cmocka_unit_test(test_argsort_runs),
	    cmocka_unit_test(test_argsort_ranked),
	    cmocka_unit_test(test_argsort_heap_path),
	    cmocka_unit_test(test_select_pair),
	    cmocka_unit_test(test_argsort_fast_field),
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_describe_ns_keys),
	    cmocka_unit_test(test_top_kernels_fold),
	    cmocka_unit_test(test_launch_stats),
	    cmocka_unit_test(test_queue_length),
	    cmocka_unit_test(test_memory_bandwidth),
	    cmocka_unit_test(test_comm_overlap),
	    cmocka_unit_test(test_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
