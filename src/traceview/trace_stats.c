/* trace_stats.c - numpy/pandas-compatible ordering and summary statistics. */
#include "traceview/trace_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { SMALL_SORT = 15, MAX_STACK = 128 };

static int msb(size_t n)
{
	int d = 0;
	while (n >>= 1)
		d++;
	return d;
}

/*
 * numpy's introsort (npy_aquicksort: median of three, insertion sort up to 16 elements,
 * heapsort past the depth limit, the heap 1-based as numpy's is) over elements of type T that
 * LESS(x, y) orders, written once for two element types: indices into the keys v, and keys
 * packed with their index (see argsort_ranked). Every step depends only on how elements
 * compare, so two element types that compare alike end in the same permutation.
 */
#define TRACE_INTROSORT(NAME, T, LESS)                                                             \
	/* tmp sifted down from 1-based position l of the heap t[0..n), bottom-up: the hole goes   \
	 * down the larger children to a leaf, then back up past every child tmp is not less than. \
	 * The path is non-increasing, so the elements that stay raised are those greater than     \
	 * tmp, as with numpy's top-down sift: the same heap after one comparison a level instead  \
	 * of two. The grandchildren are fetched ahead: a big heap's lower levels miss the cache.  \
	 */                                                                                        \
	static void NAME##_sift(T *t, size_t n, size_t l, T tmp, const int64_t *v)                 \
	{                                                                                          \
		(void)v;                                                                           \
		size_t i = l, j = l << 1;                                                          \
		while (j < n) {                                                                    \
			if (4 * j <= n)                                                            \
				__builtin_prefetch(&t[4 * j - 1]);                                 \
			j += LESS(t[j - 1], t[j]);                                                 \
			t[i - 1] = t[j - 1];                                                       \
			i = j;                                                                     \
			j += j;                                                                    \
		}                                                                                  \
		if (j == n) {                                                                      \
			t[i - 1] = t[j - 1];                                                       \
			i = j;                                                                     \
		}                                                                                  \
		while (i > l && !LESS(tmp, t[(i >> 1) - 1])) {                                     \
			t[i - 1] = t[(i >> 1) - 1];                                                \
			i >>= 1;                                                                   \
		}                                                                                  \
		t[i - 1] = tmp;                                                                    \
	}                                                                                          \
	static void NAME##_heap(T *t, size_t n, const int64_t *v)                                  \
	{                                                                                          \
		for (size_t l = n >> 1; l > 0; --l)                                                \
			NAME##_sift(t, n, l, t[l - 1], v);                                         \
		while (n > 1) {                                                                    \
			T tmp = t[n - 1];                                                          \
			t[n - 1] = t[0];                                                           \
			n -= 1;                                                                    \
			NAME##_sift(t, n, 1, tmp, v);                                              \
		}                                                                                  \
	}                                                                                          \
	static void NAME(T *t, size_t num, const int64_t *v)                                       \
	{                                                                                          \
		(void)v;                                                                           \
		T sw;                                                                              \
		/* Indices instead of pointers so that "one before the start" stays defined. */    \
		ptrdiff_t pl = 0, pr = (ptrdiff_t)num - 1;                                         \
		ptrdiff_t stack[MAX_STACK];                                                        \
		int depth[MAX_STACK / 2];                                                          \
		int sp = 0, dp = 0;                                                                \
		int cdepth = msb(num) * 2;                                                         \
		for (;;) {                                                                         \
			if (cdepth < 0) {                                                          \
				NAME##_heap(t + pl, (size_t)(pr - pl + 1), v);                     \
				goto pop;                                                          \
			}                                                                          \
			while (pr - pl > SMALL_SORT) {                                             \
				ptrdiff_t pm = pl + ((pr - pl) >> 1);                              \
				if (LESS(t[pm], t[pl]))                                            \
					SWAP(t[pm], t[pl]);                                        \
				if (LESS(t[pr], t[pm]))                                            \
					SWAP(t[pr], t[pm]);                                        \
				if (LESS(t[pm], t[pl]))                                            \
					SWAP(t[pm], t[pl]);                                        \
				T vp = t[pm];                                                      \
				ptrdiff_t pi = pl, pj = pr - 1;                                    \
				SWAP(t[pm], t[pj]);                                                \
				for (;;) {                                                         \
					do                                                         \
						++pi;                                              \
					while (LESS(t[pi], vp));                                   \
					do                                                         \
						--pj;                                              \
					while (LESS(vp, t[pj]));                                   \
					if (pi >= pj)                                              \
						break;                                             \
					SWAP(t[pi], t[pj]);                                        \
				}                                                                  \
				SWAP(t[pi], t[pr - 1]);                                            \
				/* The larger part waits on the stack, the smaller goes on. */     \
				if (pi - pl < pr - pi) {                                           \
					stack[sp++] = pi + 1;                                      \
					stack[sp++] = pr;                                          \
					pr = pi - 1;                                               \
				} else {                                                           \
					stack[sp++] = pl;                                          \
					stack[sp++] = pi - 1;                                      \
					pl = pi + 1;                                               \
				}                                                                  \
				depth[dp++] = --cdepth;                                            \
			}                                                                          \
			for (ptrdiff_t pi = pl + 1; pi <= pr; ++pi) {                              \
				T vi = t[pi];                                                      \
				ptrdiff_t pj = pi, pk = pi - 1;                                    \
				while (pj > pl && LESS(vi, t[pk]))                                 \
					t[pj--] = t[pk--];                                         \
				t[pj] = vi;                                                        \
			}                                                                          \
		pop:                                                                               \
			if (sp == 0)                                                               \
				break;                                                             \
			pr = stack[--sp];                                                          \
			pl = stack[--sp];                                                          \
			cdepth = depth[--dp];                                                      \
		}                                                                                  \
	}

#define SWAP(a, b) (sw = (a), (a) = (b), (b) = sw)
#define LESS_BY_KEY(x, y) (v[x] < v[y])
#define LESS_BY_RANK(x, y) ((x) >> 32 < (y) >> 32)
TRACE_INTROSORT(introsort_idx, uint32_t, LESS_BY_KEY)
TRACE_INTROSORT(introsort_ranked, uint64_t, LESS_BY_RANK)
#undef SWAP
#undef LESS_BY_KEY
#undef LESS_BY_RANK

void trace_argsort(const int64_t *v, uint32_t *t, size_t num)
{
	for (size_t i = 0; i < num; i++)
		t[i] = (uint32_t)i;
	/* Strictly increasing keys have one order whatever the algorithm: the identity. Trace
	 * columns often come that way (events in time order). */
	size_t up = 1;
	while (up < num && v[up - 1] < v[up])
		up++;
	if (up >= num)
		return;
	introsort_idx(t, num, v);
}

/* Sorts k (with idx) stably and says whether that order is numpy's too: whether no run of
 * equal keys holds a pair whose order tie() says matters (long runs: not worth asking). */
static bool stable_order_will_do(uint64_t *k, uint32_t *idx, size_t n, trace_tie_fn tie,
                                 const void *arg)
{
	bool ok = trace_radix_sort(k, idx, n);
	for (size_t i = 0; ok && tie && i + 1 < n; i++) {
		size_t j = i + 1;
		while (j < n && k[j] == k[i])
			j++;
		if (j - i > 64) {
			ok = false;
		} else {
			for (size_t a = i; ok && a < j; a++)
				for (size_t b = a + 1; ok && b < j; b++)
					ok = !tie(idx[a], idx[b], arg);
		}
		i = j - 1;
	}
	return ok;
}

static int64_t key_at(const unsigned char *base, size_t stride, size_t i)
{
	int64_t v;
	memcpy(&v, base + i * stride, sizeof v);
	return v;
}

typedef enum {
	RUNS_ORDERED,    /* idx holds the stable order, which is numpy's too */
	RUNS_NEED_NUMPY, /* a tie needs numpy's order */
	RUNS_TOO_MANY,   /* not a few ascending runs: nothing decided */
} runs_verdict;

/* The stable order of keys that come as at most four ascending runs (a time-ordered column,
 * or two such one after the other), merged straight into idx with no copy of the keys, and
 * the same check of ties as stable_order_will_do on the way. */
static runs_verdict merge_few_runs(const unsigned char *base, size_t stride, uint32_t *idx,
                                   size_t n, trace_tie_fn tie, const void *arg)
{
	enum { MAX_MERGE = 4 };
	size_t at[MAX_MERGE], end[MAX_MERGE], nr = 1;
	at[0] = 0;
	for (size_t i = 1; i < n; i++) {
		if (key_at(base, stride, i) >= key_at(base, stride, i - 1))
			continue;
		if (nr == MAX_MERGE)
			return RUNS_TOO_MANY;
		end[nr - 1] = i;
		at[nr++] = i;
	}
	end[nr - 1] = n;
	size_t g0 = 0; /* where the current group of equal keys starts in idx */
	int64_t prev = 0;
	for (size_t o = 0; o < n; o++) {
		size_t best = nr;
		int64_t bk = 0;
		for (size_t r = 0; r < nr; r++) { /* the earlier run first among equal keys */
			if (at[r] == end[r])
				continue;
			int64_t k = key_at(base, stride, at[r]);
			if (best == nr || k < bk) {
				best = r;
				bk = k;
			}
		}
		if (best == nr) /* cannot be: o < n keys were left */
			return RUNS_TOO_MANY;
		idx[o] = (uint32_t)at[best]++;
		if (o == 0 || bk != prev) {
			g0 = o;
		} else if (tie) {
			if (o - g0 >= 64)
				return RUNS_NEED_NUMPY;
			for (size_t a = g0; a < o; a++)
				if (tie(idx[a], idx[o], arg))
					return RUNS_NEED_NUMPY;
		}
		prev = bk;
	}
	return RUNS_ORDERED;
}

/*
 * numpy's order of the n keys at base (stride bytes apart) into idx, given their stable order
 * there: each key becomes its rank among the distinct keys (which compare as the keys do) packed
 * above its index, so that the introsort compares and moves the 8 bytes in front of it instead
 * of indices whose keys lie elsewhere, and ends in numpy's permutation all the same. k: room for
 * n values. False (idx unchanged) when idx is not in key order after all.
 */
static bool argsort_ranked(const unsigned char *base, size_t stride, uint32_t *idx, size_t n,
                           uint64_t *k)
{
	uint64_t r = 0;
	int64_t prev = 0;
	for (size_t j = 0; j < n; j++) {
		int64_t key = key_at(base, stride, idx[j]);
		if (j > 0 && key < prev)
			return false;
		r += j > 0 && key != prev;
		prev = key;
		k[idx[j]] = r << 32 | idx[j];
	}
	size_t up = 1; /* strictly increasing: the identity, as trace_argsort finds */
	while (up < n && k[up - 1] >> 32 < k[up] >> 32)
		up++;
	if (up < n)
		introsort_ranked(k, n, NULL);
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)k[i];
	return true;
}

/* numpy's order where merge_few_runs found that a tie needs it, or where the stable order in
 * idx (from the radix sort) did not do: by ranks, else the plain way. keys NULL: the keys are
 * copied into k's room for that. */
static void numpy_order(const unsigned char *base, size_t stride, runs_verdict rv, uint32_t *idx,
                        size_t n, uint64_t *k, const int64_t *keys)
{
	if (rv == RUNS_NEED_NUMPY) /* the whole stable order, no longer asking about ties */
		merge_few_runs(base, stride, idx, n, NULL, NULL);
	if (argsort_ranked(base, stride, idx, n, k))
		return;
	if (!keys) { /* idx not in order after all: the radix sort ran short of memory */
		int64_t *copy = (int64_t *)k;
		for (size_t i = 0; i < n; i++)
			copy[i] = key_at(base, stride, i);
		keys = copy;
	}
	trace_argsort(keys, idx, n);
}

void trace_argsort_fast(const int64_t *keys, uint32_t *idx, size_t n, trace_tie_fn tie,
                        const void *arg)
{
	const unsigned char *base = (const unsigned char *)keys;
	runs_verdict rv = merge_few_runs(base, sizeof *keys, idx, n, tie, arg);
	if (rv == RUNS_ORDERED)
		return;
	uint64_t *k = malloc((n + 1) * sizeof *k);
	if (!k) {
		trace_argsort(keys, idx, n);
		return;
	}
	bool ok = false;
	if (rv == RUNS_TOO_MANY) {
		for (size_t i = 0; i < n; i++) {
			k[i] = trace_key_i64(keys[i]);
			idx[i] = (uint32_t)i;
		}
		ok = stable_order_will_do(k, idx, n, tie, arg);
	}
	if (!ok)
		numpy_order(base, sizeof *keys, rv, idx, n, k, keys);
	free(k);
}

bool trace_argsort_fast_field(const void *first, size_t stride, uint32_t *idx, size_t n,
                              trace_tie_fn tie, const void *arg)
{
	const unsigned char *base = first;
	runs_verdict rv = merge_few_runs(base, stride, idx, n, tie, arg);
	if (rv == RUNS_ORDERED)
		return true;
	uint64_t *k = malloc((n + 1) * sizeof *k);
	if (!k)
		return false;
	if (rv == RUNS_TOO_MANY) {
		for (size_t i = 0; i < n; i++) {
			k[i] = trace_key_i64(key_at(base, stride, i));
			idx[i] = (uint32_t)i;
		}
		if (stable_order_will_do(k, idx, n, tie, arg)) {
			free(k);
			return true;
		}
	}
	numpy_order(base, stride, rv, idx, n, k, NULL);
	free(k);
	return true;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

uint64_t trace_key_double(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	return (b >> 63) ? ~b : b | (1ull << 63);
}

double trace_double_of_key(uint64_t k)
{
	uint64_t b = (k >> 63) ? k & ~(1ull << 63) : ~k;
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

/* The keys (and payload) pass back and forth between the caller's arrays and scratch: after
 * each pass the two change roles, and the last pass's output ends in the caller's arrays. */
static void pp_swap(uint64_t **src, uint64_t **dst, uint32_t **psrc, uint32_t **pdst)
{
	uint64_t *t = *src;
	*src = *dst;
	*dst = t;
	uint32_t *pt = *psrc;
	*psrc = *pdst;
	*pdst = pt;
}

static void pp_finish(const uint64_t *src, const uint32_t *psrc, uint64_t *keys, uint32_t *payload,
                      size_t n)
{
	if (src == keys)
		return;
	memcpy(keys, src, n * sizeof *keys);
	if (payload)
		memcpy(payload, psrc, n * sizeof *payload);
}

/* Stable merge of the sorted runs [a, b) and [b, c) of k (with p when not NULL) into k2/p2. */
static void merge_runs(const uint64_t *k, const uint32_t *p, size_t a, size_t b, size_t c,
                       uint64_t *k2, uint32_t *p2)
{
	size_t i = a, j = b, o = a;
	while (i < b && j < c) {
		bool left = k[i] <= k[j]; /* the left run first among equal keys: stable */
		size_t from = left ? i++ : j++;
		k2[o] = k[from];
		if (p)
			p2[o] = p[from];
		o++;
	}
	size_t from = i < b ? i : j, rest = i < b ? b - i : c - j;
	memcpy(k2 + o, k + from, rest * sizeof *k);
	if (p)
		memcpy(p2 + o, p + from, rest * sizeof *p);
}

/* Merges the nruns sorted runs that start at run[0..nruns) (run[nruns] = n) pairwise until one
 * is left, in tk/tp and back; the result ends in keys/payload. */
static void merge_all(uint64_t *keys, uint32_t *payload, size_t *run, size_t nruns, uint64_t *tk,
                      uint32_t *tp)
{
	uint64_t *src = keys, *dst = tk;
	uint32_t *psrc = payload, *pdst = tp;
	while (nruns > 1) {
		size_t out = 0, r = 0;
		for (; r + 1 < nruns; r += 2, out++) {
			merge_runs(src, psrc, run[r], run[r + 1], run[r + 2], dst, pdst);
			run[out] = run[r];
		}
		if (r < nruns) { /* an odd run out: copied as it is */
			memcpy(dst + run[r], src + run[r], (run[r + 1] - run[r]) * sizeof *dst);
			if (payload)
				memcpy(pdst + run[r], psrc + run[r],
				       (run[r + 1] - run[r]) * sizeof *pdst);
			run[out++] = run[r];
		}
		run[out] = run[nruns];
		nruns = out;
		pp_swap(&src, &dst, &psrc, &pdst);
	}
	pp_finish(src, psrc, keys, payload, run[1]);
}

bool trace_radix_sort(uint64_t *keys, uint32_t *payload, size_t n)
{
	/* Trace columns mostly come as a few ascending runs (events in time order, or two such
	 * series one after the other): a stable merge of those is a pass or two where radix needs
	 * up to eight. One run, keys already in order, stays as it is. */
	enum { MAX_RUNS = 16 };
	size_t run[MAX_RUNS + 1] = {0}, nruns = 1;
	for (size_t i = 1; i < n && nruns <= MAX_RUNS; i++)
		if (keys[i] < keys[i - 1] && nruns++ < MAX_RUNS)
			run[nruns - 1] = i;
	if (nruns == 1)
		return true;
	uint64_t *tk = malloc(n * sizeof *tk);
	uint32_t *tp = payload ? malloc(n * sizeof *tp) : NULL;
	size_t(*hist)[256] = nruns > MAX_RUNS ? calloc(8, sizeof *hist) : NULL;
	if (!tk || (payload && !tp) || (nruns > MAX_RUNS && !hist)) {
		free(tk);
		free(tp);
		free(hist);
		return false;
	}
	if (nruns <= MAX_RUNS) {
		run[nruns] = n;
		merge_all(keys, payload, run, nruns, tk, tp);
		free(tk);
		free(tp);
		return true;
	}
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < 8; d++)
			hist[d][(keys[i] >> (8 * d)) & 0xff]++;
	uint64_t *src = keys, *dst = tk;
	uint32_t *psrc = payload, *pdst = tp;
	for (int d = 0; d < 8; d++) {
		if (hist[d][(keys[0] >> (8 * d)) & 0xff] == n)
			continue; /* every key has this byte */
		size_t off = 0;
		for (int b = 0; b < 256; b++) {
			size_t c = hist[d][b];
			hist[d][b] = off;
			off += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t at = hist[d][(src[i] >> (8 * d)) & 0xff]++;
			dst[at] = src[i];
			if (payload)
				pdst[at] = psrc[i];
		}
		pp_swap(&src, &dst, &psrc, &pdst);
	}
	pp_finish(src, psrc, keys, payload, n);
	free(tk);
	free(tp);
	free(hist);
	return true;
}

/* The highest byte (as a shift) where keys[lo..hi) differ, or -1 when they are all equal. */
static int top_differing_byte(const uint64_t *keys, size_t lo, size_t hi)
{
	uint64_t diff = 0;
	for (size_t i = lo + 1; i < hi; i++)
		diff |= keys[i] ^ keys[lo];
	return diff ? (63 - __builtin_clzll(diff)) / 8 * 8 : -1;
}

/* The largest key with byte b at shift and the smallest with a byte above it, in [lo, hi). */
static void bucket_edges(const uint64_t *keys, size_t lo, size_t hi, int shift, unsigned b,
                         uint64_t *max_in, uint64_t *min_above)
{
	uint64_t mx = 0, mn = UINT64_MAX;
	for (size_t i = lo; i < hi; i++) {
		unsigned d = (keys[i] >> shift) & 255;
		if (d == b && keys[i] > mx)
			mx = keys[i];
		else if (d > b && keys[i] < mn)
			mn = keys[i];
	}
	*max_in = mx;
	*min_above = mn;
}

/*
 * An MSD radix selection: each pass counts one byte of the keys still in play, starting at the
 * highest byte where they differ, and keeps only the bucket that holds rank r (swapped to the
 * front), so the work shrinks pass by pass and never depends on how the keys are ordered, as a
 * quickselect's pivots would. Rank r + 1 comes along: while it shares r's bucket it is selected
 * with it, and where it does not, it is the smallest key above that bucket (and r the largest
 * in it).
 */
void trace_select_pair_u64(uint64_t *keys, size_t n, size_t r, uint64_t *at, uint64_t *next)
{
	size_t lo = 0, hi = n;
	bool split = r + 1 >= n; /* no rank r + 1 */
	*next = UINT64_MAX;
	for (int shift = top_differing_byte(keys, lo, hi); shift >= 0 && hi - lo > 32;
	     shift = shift ? top_differing_byte(keys, lo, hi) : -1) {
		size_t cnt[256] = {0};
		for (size_t i = lo; i < hi; i++)
			cnt[(keys[i] >> shift) & 255]++;
		unsigned b = 0;
		while (r >= cnt[b])
			r -= cnt[b++];
		if (!split && r + 1 == cnt[b]) {
			bucket_edges(keys, lo, hi, shift, b, at, next);
			return;
		}
		size_t w = lo;
		for (size_t i = lo; i < hi; i++) {
			if (((keys[i] >> shift) & 255) != b)
				continue;
			uint64_t t = keys[w];
			keys[w++] = keys[i];
			keys[i] = t;
		}
		hi = w;
	}
	for (size_t i = lo + 1; i < hi; i++) {
		uint64_t v = keys[i];
		size_t j = i;
		for (; j > lo && keys[j - 1] > v; j--)
			keys[j] = keys[j - 1];
		keys[j] = v;
	}
	*at = keys[lo + r];
	if (!split)
		*next = keys[lo + r + 1];
}

double trace_quantile_sorted(const double *s, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double vi = q * (double)(n - 1);
	size_t lo = (size_t)floor(vi);
	if (lo >= n - 1)
		return s[n - 1];
	double g = vi - (double)lo;
	double a = s[lo], b = s[lo + 1], d = b - a;
	/* numpy's _lerp: from the nearer end for accuracy. */
	return g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
}

/* describe() of m sorted values, none NaN. */
static void describe_sorted(const double *values, size_t m, trace_describe *out)
{
	out->count = m;
	out->mean = out->std = out->min = out->q25 = out->q50 = out->q75 = out->max = NAN;
	if (m == 0)
		return;
	double sum = 0;
	for (size_t i = 0; i < m; i++)
		sum += values[i];
	out->mean = sum / (double)m;
	if (m > 1) {
		double sq = 0;
		for (size_t i = 0; i < m; i++)
			sq += (out->mean - values[i]) * (out->mean - values[i]);
		out->std = sqrt(sq / (double)(m - 1));
	}
	out->min = values[0];
	out->max = values[m - 1];
	out->q25 = trace_quantile_sorted(values, m, 0.25);
	out->q50 = trace_quantile_sorted(values, m, 0.5);
	out->q75 = trace_quantile_sorted(values, m, 0.75);
}

void trace_describe_values(double *values, size_t n, trace_describe *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(values[i]))
			values[m++] = values[i];
	uint64_t *k = m ? malloc(m * sizeof *k) : NULL;
	bool sorted = false;
	if (k) {
		for (size_t i = 0; i < m; i++)
			k[i] = trace_key_double(values[i]);
		sorted = trace_radix_sort(k, NULL, m);
		for (size_t i = 0; sorted && i < m; i++)
			values[i] = trace_double_of_key(k[i]);
		free(k);
	}
	if (!sorted) /* short of memory for the fast path */
		qsort(values, m, sizeof *values, cmp_double);
	describe_sorted(values, m, out);
}

void trace_describe_ns_keys(uint64_t *keys, size_t n, trace_describe *out)
{
	bool sorted = trace_radix_sort(keys, NULL, n); /* false: short of memory */
	/* In place: each key read before its slot holds the double (memcpy: no aliasing). */
	for (size_t i = 0; i < n; i++) {
		double d = (double)(int64_t)(keys[i] ^ (1ull << 63)) / 1000.0;
		memcpy(&keys[i], &d, sizeof d);
	}
	if (sorted)
		describe_sorted((const double *)(const void *)keys, n, out);
	else
		trace_describe_values((double *)(void *)keys, n, out);
}

/* The k-th smallest value (from 0) of a histogram. */
static double hist_at(int64_t lo, const uint64_t *counts, size_t nb, uint64_t k)
{
	uint64_t cum = 0;
	for (size_t i = 0; i < nb; i++) {
		cum += counts[i];
		if (k < cum)
			return (double)(lo + (int64_t)i);
	}
	return (double)(lo + (int64_t)nb - 1);
}

static double hist_quantile(int64_t lo, const uint64_t *counts, size_t nb, uint64_t n, double q)
{
	double vi = q * (double)(n - 1);
	uint64_t k = (uint64_t)floor(vi);
	if (k >= n - 1)
		return hist_at(lo, counts, nb, n - 1);
	double g = vi - (double)k;
	double a = hist_at(lo, counts, nb, k), b = hist_at(lo, counts, nb, k + 1), d = b - a;
	return g >= 0.5 ? b - d * (1.0 - g) : a + d * g;
}

void trace_describe_hist(int64_t lo, const uint64_t *counts, size_t nb, trace_describe *out)
{
	uint64_t n = 0;
	int64_t sum = 0;
	for (size_t i = 0; i < nb; i++) {
		n += counts[i];
		sum += (lo + (int64_t)i) * (int64_t)counts[i];
	}
	out->count = (size_t)n;
	out->mean = out->std = out->min = out->q25 = out->q50 = out->q75 = out->max = NAN;
	if (n == 0)
		return;
	out->mean = (double)sum / (double)n;
	if (n > 1) {
		double sq = 0;
		for (size_t i = 0; i < nb; i++) {
			double d = out->mean - (double)(lo + (int64_t)i);
			sq += (double)counts[i] * d * d;
		}
		out->std = sqrt(sq / (double)(n - 1));
	}
	out->min = hist_at(lo, counts, nb, 0);
	out->max = hist_at(lo, counts, nb, n - 1);
	out->q25 = hist_quantile(lo, counts, nb, n, 0.25);
	out->q50 = hist_quantile(lo, counts, nb, n, 0.5);
	out->q75 = hist_quantile(lo, counts, nb, n, 0.75);
}

double trace_round(double x, int decimals)
{
	double f = pow(10.0, decimals);
	return rint(x * f) / f;
}
