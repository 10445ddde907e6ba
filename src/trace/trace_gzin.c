/* trace_gzin.c - gzip or plain trace text through zlib's inflate, the CRC-32 computed apart.
 *
 * zlib computes a gzip member's CRC-32 one table lookup per byte, which costs about as much
 * as inflating itself. Here inflate only decodes (inflateValidate off) and the check value is
 * computed by libdeflate (or zlib's crc32 without it), then compared with the member's
 * trailer, the last 8 bytes inflate consumed, so a corrupt file is still refused.
 */
#include "trace/trace_gzin.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#ifdef GPUWHY_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

typedef enum { GZ_OK, GZ_END, GZ_TRUNC, GZ_DATA, GZ_IO } gz_state;

struct trace_gzin {
	int fd;
	z_stream z;
	bool zinit, direct, eof_in;
	gz_state state;
	int err_no;
	const char *msg;
	unsigned char *in;
	size_t insz;
	uint64_t file_read;
	uint32_t crc, isize;
	unsigned char last8[8]; /* the last bytes inflate consumed: the trailer at a member's end */
};

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
#ifdef GPUWHY_HAVE_LIBDEFLATE
	return libdeflate_crc32(crc, p, n);
#else
	return (uint32_t)crc32_z(crc, p, n);
#endif
}

/* More file bytes after the unconsumed ones; 0 at the end of the file, -1 on an error. */
static int fill(trace_gzin *g)
{
	if (g->z.avail_in && g->z.next_in != g->in)
		memmove(g->in, g->z.next_in, g->z.avail_in);
	g->z.next_in = g->in;
	ssize_t n;
	do
		n = read(g->fd, g->in + g->z.avail_in, g->insz - g->z.avail_in);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		g->err_no = errno;
		g->state = GZ_IO;
		return -1;
	}
	if (n == 0)
		g->eof_in = true;
	g->z.avail_in += (uInt)n;
	g->file_read += (uint64_t)n;
	return n > 0;
}

static bool at_magic(const trace_gzin *g)
{
	return g->z.avail_in > 1 && g->z.next_in[0] == 0x1f && g->z.next_in[1] == 0x8b;
}

trace_gzin *trace_gzin_open(const char *path, size_t bufsz)
{
	trace_gzin *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->insz = bufsz < 4096 ? 4096 : bufsz > UINT_MAX / 2 ? UINT_MAX / 2 : bufsz;
	g->in = malloc(g->insz);
	g->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (!g->in || g->fd < 0) {
		int e = g->in ? errno : ENOMEM;
		trace_gzin_close(g);
		errno = e;
		return NULL;
	}
	g->z.next_in = g->in;
	/* A gzip file starts with its two magic bytes (a lone 0x1f is a one-byte text). */
	while (g->z.avail_in < 2 && !g->eof_in && g->state == GZ_OK)
		fill(g);
	g->direct = !at_magic(g);
	if (!g->direct) {
		if (inflateInit2(&g->z, 15 + 16) != Z_OK) {
			trace_gzin_close(g);
			errno = ENOMEM;
			return NULL;
		}
		g->zinit = true;
		inflateValidate(&g->z, 0);
	}
	return g;
}

void trace_gzin_close(trace_gzin *g)
{
	if (!g)
		return;
	if (g->zinit)
		inflateEnd(&g->z);
	if (g->fd >= 0)
		close(g->fd);
	free(g->in);
	free(g);
}

static int read_direct(trace_gzin *g, unsigned char *buf, size_t len)
{
	if (g->z.avail_in) { /* the bytes read to look for the magic */
		size_t n = g->z.avail_in < len ? g->z.avail_in : len;
		memcpy(buf, g->z.next_in, n);
		g->z.next_in += n;
		g->z.avail_in -= (uInt)n;
		return (int)n;
	}
	ssize_t n;
	do
		n = read(g->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		g->err_no = errno;
		g->state = GZ_IO;
		return -1;
	}
	g->file_read += (uint64_t)n;
	return (int)n;
}

static void note_in(trace_gzin *g, const unsigned char *from, const unsigned char *to)
{
	size_t n = (size_t)(to - from);
	if (n >= 8) {
		memcpy(g->last8, to - 8, 8);
	} else if (n) {
		memmove(g->last8, g->last8 + n, 8 - n);
		memcpy(g->last8 + 8 - n, from, n);
	}
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void data_error(trace_gzin *g, const char *msg)
{
	g->state = GZ_DATA;
	g->msg = msg;
}

/* A member ended: its trailer checked, then the next member, or the end (bytes after the last
 * member that are not a gzip header are ignored, as gzread does). */
static void member_end(trace_gzin *g)
{
	if (le32(g->last8) != g->crc) {
		data_error(g, "incorrect data check");
		return;
	}
	if (le32(g->last8 + 4) != g->isize) {
		data_error(g, "incorrect length check");
		return;
	}
	while (g->z.avail_in < 2 && !g->eof_in && g->state == GZ_OK)
		fill(g);
	if (g->state != GZ_OK)
		return;
	if (!at_magic(g)) {
		g->state = GZ_END;
		return;
	}
	inflateReset(&g->z);
	inflateValidate(&g->z, 0);
	g->crc = 0;
	g->isize = 0;
}

static void inflate_step(trace_gzin *g)
{
	if (g->z.avail_in == 0 && !g->eof_in && fill(g) < 0)
		return;
	if (g->z.avail_in == 0 && g->eof_in) {
		g->state = GZ_TRUNC;
		return;
	}
	const unsigned char *in0 = g->z.next_in, *out0 = g->z.next_out;
	int rc = inflate(&g->z, Z_NO_FLUSH);
	note_in(g, in0, g->z.next_in);
	size_t made = (size_t)(g->z.next_out - out0);
	g->crc = crc_update(g->crc, out0, made);
	g->isize += (uint32_t)made;
	if (rc == Z_STREAM_END)
		member_end(g);
	else if (rc == Z_MEM_ERROR)
		data_error(g, "out of memory");
	else if (rc == Z_DATA_ERROR)
		data_error(g, g->z.msg ? g->z.msg : "compressed data error");
	else if (rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
		data_error(g, "internal error: inflate stream corrupt");
}

int trace_gzin_read(trace_gzin *g, void *buf, size_t len)
{
	if (len > INT_MAX)
		len = INT_MAX;
	if (g->state != GZ_OK)
		return g->state == GZ_DATA || g->state == GZ_IO ? -1 : 0;
	if (g->direct)
		return read_direct(g, buf, len);
	g->z.next_out = buf;
	g->z.avail_out = (uInt)len;
	while (g->z.avail_out && g->state == GZ_OK)
		inflate_step(g);
	int n = (int)(len - g->z.avail_out);
	/* What was inflated before an error comes first; the error with the next call. */
	if (n == 0 && (g->state == GZ_DATA || g->state == GZ_IO))
		return -1;
	return n;
}

uint64_t trace_gzin_offset(const trace_gzin *g)
{
	return g->file_read - g->z.avail_in;
}

bool trace_gzin_direct(const trace_gzin *g)
{
	return g->direct;
}

int trace_gzin_status(const trace_gzin *g, int n, char *err, size_t errsz)
{
	if (n < 0 && g->state == GZ_IO) {
		snprintf(err, errsz, "read error: %s", strerror(g->err_no));
		return -1;
	}
	if (n < 0) {
		snprintf(err, errsz, "corrupt gzip data: %s",
		         g->msg ? g->msg : "compressed data error");
		return -1;
	}
	if (g->state == GZ_TRUNC) {
		snprintf(err, errsz,
		         "truncated gzip file (it ends in the middle of the compressed stream)");
		return -1;
	}
	return 1;
}
