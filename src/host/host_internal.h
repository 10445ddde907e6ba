/* host_internal.h - helpers shared by the host/ sources; not part of the API. */
#ifndef GPUWHY_HOST_INTERNAL_H
#define GPUWHY_HOST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A cursor over a buffer that need not be NUL-terminated. */
typedef struct hcur {
	const char *p, *end;
} hcur;

static inline bool hc_eof(const hcur *c)
{
	return c->p >= c->end;
}

/* Skip spaces and tabs (not newlines). */
void hc_skip_blanks(hcur *c);
/* Advance past the next '\n' (or to the end). */
void hc_next_line(hcur *c);
/* Unsigned decimal after optional blanks. Consumes all digits even on overflow;
 * false when there is no digit or the value does not fit in 64 bits. */
bool hc_u64(hcur *c, uint64_t *out);
/* Same with an optional leading '-'. */
bool hc_i64(hcur *c, int64_t *out);
/* Next blank-delimited word (not crossing a newline); false when none. */
bool hc_word(hcur *c, const char **w, size_t *wlen);
/* True (and consumed) when the cursor is at the literal s. */
bool hc_lit(hcur *c, const char *s);

/* Copy at most n bytes of src to dst[size], NUL-terminated, control bytes -> '?'. */
void host_copy_name(char *dst, size_t size, const char *src, size_t n);

/* Grow *arr (elements of size elem) to hold at least need; zeroes new space. */
int host_grow(void **arr, size_t *cap, size_t need, size_t elem);

/* A reusable read buffer, NUL-terminated after reads. */
typedef struct host_buf {
	char *p;
	size_t len, cap;
} host_buf;

/* Read a whole file (relative to dirfd, or absolute) into b. 0 or -errno. */
int host_buf_readat(host_buf *b, int dirfd, const char *path);
void host_buf_free(host_buf *b);

/* A sample's string arena: reserve room for every string first, so that the
 * pointers handed out by put stay valid (put never reallocates). */
struct host_sample;
int host_arena_reserve(struct host_sample *s, size_t total);
const char *host_arena_put(struct host_sample *s, const char *str, size_t len);

#endif
