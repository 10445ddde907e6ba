/* trace_jscan_lex.h - the scanner's lexing steps (whitespace, plain string runs, numbers), shared
 * by the scanner (trace_jscan.c) and the Kineto event reader (trace_kineto_event.c), so that both
 * take exactly the same grammar. Each step stays inside [p, end). */
#ifndef GPUWHY_TRACE_JSCAN_LEX_H
#define GPUWHY_TRACE_JSCAN_LEX_H

#include <stdbool.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Bytes a plain string run stops at: '"', '\\', control characters and non-ASCII. */
static const uint8_t tj_str_stop[256] = {
    [0 ... 0x1f] = 1,
    ['"'] = 1,
    ['\\'] = 1,
    [0x80 ... 0xff] = 1,
};

/* JSON's whitespace (yajl also takes \v and \f; the scanner leaves those to it). */
static const uint8_t tj_is_ws[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

/* Bytes that may follow a value: whitespace or punctuation ("01", "1x" are not numbers). */
static const uint8_t tj_value_end[256] = {
    [','] = 1, [']'] = 1, ['}'] = 1, [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1,
};

/*
 * The first byte at or after p that is not whitespace, or end. Pretty-printed traces put a
 * newline and an indent before most keys, so whitespace runs are often longer than a byte: past
 * the first, sixteen bytes are tested at a time where SSE2 is there (every x86-64). All four
 * whitespace bytes are below '!', so one comparison ends the common case of no whitespace at all.
 */
static inline const unsigned char *tj_ws(const unsigned char *p, const unsigned char *e)
{
	if (p == e || *p > ' ')
		return p;
	/* One space, the most common run (after a colon or a comma on one line). */
	if (*p == ' ' && e - p > 1 && p[1] > ' ')
		return p + 1;
#ifdef __SSE2__
	const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
	              tab = _mm_set1_epi8('\t');
	while (e - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i w =
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
		                 _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
		unsigned m = (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < e && tj_is_ws[*p])
		p++;
	return p;
}

/* The first byte at or after q that ends a plain string run (see tj_str_stop), or end. With
 * SSE2, a signed comparison with 0x20 finds control characters and non-ASCII bytes at once. */
static inline const unsigned char *tj_str_run(const unsigned char *q, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'),
	              ctl = _mm_set1_epi8(0x20);
	while (end - q >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
		__m128i w =
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bs)),
		                 _mm_cmplt_epi8(v, ctl));
		unsigned m = (unsigned)_mm_movemask_epi8(w);
		if (m)
			return q + __builtin_ctz(m);
		q += 16;
	}
#endif
	while (q < end && !tj_str_stop[*q])
		q++;
	return q;
}

/* The value of eight digits given one a byte (0-9), the first in the lowest byte, as a
 * little-endian load of the text gives them: pairs, then quads, then the halves, by
 * multiplications instead of eight steps. */
static inline uint64_t tj_swar8(uint64_t v)
{
	v = v * 10 + (v >> 8);
	return (((v & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
	        (((v >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >>
	       32;
}

static inline bool tj_is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The end of the number at q by JSON's grammar, which is what yajl's lexer takes too; NULL if
 * the text there is not one. */
static inline const unsigned char *tj_number_end_slow(const unsigned char *q,
                                                      const unsigned char *e)
{
	if (q < e && *q == '-')
		q++;
	if (q == e)
		return NULL;
	if (*q == '0')
		q++;
	else if (tj_is_digit(*q))
		while (q < e && tj_is_digit(*q))
			q++;
	else
		return NULL;
	if (q < e && *q == '.') {
		q++;
		if (q == e || !tj_is_digit(*q))
			return NULL;
		while (q < e && tj_is_digit(*q))
			q++;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (q == e || !tj_is_digit(*q))
			return NULL;
		while (q < e && tj_is_digit(*q))
			q++;
	}
	if (q == e || !tj_value_end[*q])
		return NULL;
	return q;
}

#ifdef __SSE2__
/* How many of the sixteen bytes at q are digits before the first that is not (16: all are).
 * Subtracting '0' + 128 maps '0'..'9' to the ten lowest signed bytes. */
static inline unsigned tj_digit_run16(const unsigned char *q)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
	__m128i t = _mm_sub_epi8(v, _mm_set1_epi8((char)('0' + 128)));
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(t, _mm_set1_epi8(-128 + 10)));
	return (unsigned)__builtin_ctz(~m); /* bit 16 of ~m is set: at most 16 */
}
#endif

/*
 * tj_number_end_slow for the common forms, an integer part of up to 31 digits (microsecond
 * timestamps have 16) and an optional fraction of up to 15, counted sixteen bytes at a time.
 * Anything else (an exponent, a leading zero before digits, longer runs, errors, the last bytes
 * of the text) is left to tj_number_end_slow, which decides.
 */
static inline const unsigned char *tj_number_end(const unsigned char *q, const unsigned char *e)
{
#ifdef __SSE2__
	if (e - q >= 64) { /* every load below stays inside the text */
		const unsigned char *p = q + (*q == '-');
		unsigned n = tj_digit_run16(p);
		if (n == 16)
			n += tj_digit_run16(p + 16);
		if (n - 1 < 31 && (n == 1 || *p != '0')) {
			p += n;
			if (*p == '.') {
				unsigned f = tj_digit_run16(++p);
				if (f - 1 >= 15)
					return tj_number_end_slow(q, e);
				p += f;
			}
			if (tj_value_end[*p])
				return p;
		}
	}
#endif
	return tj_number_end_slow(q, e);
}

#endif
