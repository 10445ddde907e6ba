/* host_int.h - helpers shared by the host/ sources; not part of the API. */
#ifndef GPUWHY_HOST_INT_H
#define GPUWHY_HOST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A cursor over a buffer that need not be NUL-terminated. */
typedef struct host_cur {
	const char *p, *end;
} host_cur;

static inline bool host_cur_eof(const host_cur *c)
{
	return c->p >= c->end;
}

/* Skip spaces and tabs (not newlines). */
void host_cur_skip_blanks(host_cur *c);
/* Advance past the next '\n' (or to the end). */
void host_cur_next_line(host_cur *c);
/* Unsigned decimal after optional blanks. Consumes all digits even on overflow;
 * false when there is no digit or the value does not fit in 64 bits. */
bool host_cur_u64(host_cur *c, uint64_t *out);
/* Same with an optional leading '-'. */
bool host_cur_i64(host_cur *c, int64_t *out);
/* Next blank-delimited word (not crossing a newline); false when none. */
bool host_cur_word(host_cur *c, const char **w, size_t *wlen);
/* True (and consumed) when the cursor is at the literal s. */
bool host_cur_lit(host_cur *c, const char *s);

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
