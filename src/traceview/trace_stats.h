/* trace_stats.h - the sorting and statistics HTA's numbers come from: numpy's quicksort
 * argsort (whose order of equal keys decides gaps and counter values), pandas' describe(),
 * linear quantiles and numpy's rounding. */
#ifndef GPUWHY_TRACE_STATS_H
#define GPUWHY_TRACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Sorts the positions 0..n-1 by keys[pos] ascending into idx, leaving equal keys in the order
 * numpy 1.24's argsort(kind="quicksort") leaves them (introsort: median-of-three quicksort,
 * insertion sort up to 16 elements, heapsort past the depth limit). pandas' sort_values uses it.
 */
void trace_argsort(const int64_t *keys, uint32_t *idx, size_t n);

/* Sorts keys ascending, carrying payload along when it is not NULL (LSD radix on bytes; the
 * passes where all keys share the byte are skipped). Returns false when memory runs out. */
bool trace_radix_sort(uint64_t *keys, uint32_t *payload, size_t n);

/* The r-th and (r + 1)-th smallest (from 0) of keys[0..n), r < n, reordering keys (the values
 * stay the same): keys[r] and keys[r + 1] as trace_radix_sort would leave them, without sorting
 * (a median needs no order). *next is UINT64_MAX when r + 1 == n. */
void trace_select_pair_u64(uint64_t *keys, size_t n, size_t r, uint64_t *at, uint64_t *next);
/* Order-preserving keys for signed integers and doubles (no NaN). */
static inline uint64_t trace_key_i64(int64_t v)
{
	return (uint64_t)v ^ (1ull << 63);
}
uint64_t trace_key_double(double v);
double trace_double_of_key(uint64_t k);

/*
 * trace_argsort's order, through a radix sort when that gives the same: when no two equal keys
 * need numpy's order. tie(a, b, arg) says whether the relative order of positions a and b with
 * equal keys matters (NULL: never, a tie anywhere is harmless). Falls back to trace_argsort.
 */
typedef bool (*trace_tie_fn)(uint32_t a, uint32_t b, const void *arg);
void trace_argsort_fast(const int64_t *keys, uint32_t *idx, size_t n, trace_tie_fn tie,
                        const void *arg);
/* The same for keys that are an int64_t field of n records stride bytes apart (first: the
 * field of record 0), without a copy of the keys unless the fallback needs one. False when
 * memory runs out. */
bool trace_argsort_fast_field(const void *first, size_t stride, uint32_t *idx, size_t n,
                              trace_tie_fn tie, const void *arg);

/* pandas' describe() of a numeric series, NaN values excluded. */
typedef struct {
	size_t count;
	double mean, std, min, q25, q50, q75,
	    max; /* std NaN below two values; all NaN when empty */
} trace_describe;

/* describe() of integers given as a histogram: counts[i] values equal lo + i (no sorting). */
void trace_describe_hist(int64_t lo, const uint64_t *counts, size_t nb, trace_describe *out);

/* values is reordered (sorted). */
void trace_describe_values(double *values, size_t n, trace_describe *out);

/* The same of nanosecond values given as trace_key_i64 keys, described in microseconds (ns /
 * 1000.0, the order unchanged by the division): the keys are sorted, where few of their bytes
 * vary, and then overwritten by those doubles. */
void trace_describe_ns_keys(uint64_t *keys, size_t n, trace_describe *out);

/* numpy's linear quantile of sorted values (q in [0,1]). Not model/timeline.h's tl_percentile:
 * numpy interpolates from the nearer of the two values (b - d * (1 - g) past the middle), which
 * gives other last digits than a + d * g, and HTA's numbers are compared digit for digit. */
double trace_quantile_sorted(const double *sorted, size_t n, double q);

/* numpy's round(x, decimals): half to even on x * 10^decimals. */
double trace_round(double x, int decimals);

#endif
