/* host_util.c - cursor scanning, buffers and arrays shared by the host/ sources. */
#include "host/host_int.h"
#include "host/host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void host_cur_skip_blanks(host_cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

void host_cur_next_line(host_cur *c)
{
	const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	c->p = nl ? nl + 1 : c->end;
}

bool host_cur_u64(host_cur *c, uint64_t *out)
{
	host_cur_skip_blanks(c);
	const char *start = c->p;
	uint64_t v = 0;
	bool overflow = false;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
		c->p++;
	}
	if (c->p == start || overflow)
		return false;
	*out = v;
	return true;
}

bool host_cur_i64(host_cur *c, int64_t *out)
{
	host_cur_skip_blanks(c);
	bool neg = false;
	if (c->p < c->end && *c->p == '-') {
		neg = true;
		c->p++;
	}
	uint64_t u;
	if (!host_cur_u64(c, &u))
		return false;
	if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

bool host_cur_word(host_cur *c, const char **w, size_t *wlen)
{
	host_cur_skip_blanks(c);
	const char *s = c->p;
	while (c->p < c->end && *c->p != ' ' && *c->p != '\t' && *c->p != '\n')
		c->p++;
	*w = s;
	*wlen = (size_t)(c->p - s);
	return *wlen > 0;
}

bool host_cur_lit(host_cur *c, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return false;
	c->p += n;
	return true;
}

void host_copy_name(char *dst, size_t size, const char *src, size_t n)
{
	if (size == 0)
		return;
	if (n > size - 1)
		n = size - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)src[i];
		dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	dst[n] = '\0';
}

int host_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -1;
		ncap *= 2;
	}
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Files under /proc are small; a runaway (a fixture pointing at a huge file) stops here. */
#define HOST_READ_MAX (64u << 20)

int host_buf_readat(host_buf *b, int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	b->len = 0;
	int rc = 0;
	for (;;) {
		if (b->cap - b->len < 1024) {
			size_t ncap = b->cap ? b->cap * 2 : 4096;
			if (ncap > HOST_READ_MAX) {
				rc = -EFBIG;
				break;
			}
			char *p = realloc(b->p, ncap);
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			b->p = p;
			b->cap = ncap;
		}
		ssize_t n = read(fd, b->p + b->len, b->cap - b->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
	}
	close(fd);
	if (b->p)
		b->p[b->len] = '\0';
	return rc;
}

void host_buf_free(host_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int host_arena_reserve(host_sample *s, size_t total)
{
	void *a = s->arena;
	s->arena_len = 0;
	if (host_grow(&a, &s->arena_cap, total, 1) != 0)
		return -1;
	s->arena = a;
	return 0;
}

const char *host_arena_put(host_sample *s, const char *str, size_t len)
{
	if (!s->arena || s->arena_cap - s->arena_len < len + 1)
		return NULL;
	char *dst = s->arena + s->arena_len;
	memcpy(dst, str, len);
	dst[len] = '\0';
	s->arena_len += len + 1;
	return dst;
}
