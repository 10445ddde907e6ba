/* trace_gzin.c - gzip or plain trace text, inflated by ISA-L's igzip or zlib.
 *
 * Inflating was the largest cost of a .gz trace after the JSON scanner. ISA-L's igzip (where
 * it is there at build time) streams the same deflate data at two to three times zlib's speed
 * and computes the CRC-32 as it goes (carry-less multiply). Without it zlib's inflate only
 * decodes (inflateValidate off) and the check value is computed by libdeflate (or zlib's
 * crc32 without it): zlib's own costs about as much as inflating. Either way the trailer, the
 * last 8 bytes of a member, is compared here with the check value and the length, so a
 * corrupt file is refused with the same words.
 */
#include "trace/trace_gzin.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include <zlib.h>

#ifdef GPUWHY_HAVE_ISAL
#include "util/isal_dl.h"
#endif
#if defined GPUWHY_HAVE_LIBDEFLATE && !defined GPUWHY_HAVE_ISAL
#include <libdeflate.h>
#endif

typedef enum { GZ_OK, GZ_END, GZ_TRUNC, GZ_DATA, GZ_IO, GZ_NOLIB } gz_state;

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
	const unsigned char *map; /* trace_gzin_map's mapping, of map_len bytes */
	size_t map_len, map_released;
	unsigned char last8[8]; /* the last bytes inflate consumed: the trailer at a member's end */
#ifdef GPUWHY_HAVE_ISAL
	/* z.next_in/avail_in stay the input cursor; igzip works on copies of it. */
	struct inflate_state *is;
	struct isal_gzip_header hdr;
	int phase;      /* PH_HEADER, PH_BODY, PH_TRAILER */
	int trail_have; /* trailer bytes in last8 */
#endif
};

#ifdef GPUWHY_HAVE_ISAL
enum { PH_HEADER, PH_BODY, PH_TRAILER };
#endif

#ifndef GPUWHY_HAVE_ISAL
static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
#ifdef GPUWHY_HAVE_LIBDEFLATE
	return libdeflate_crc32(crc, p, n);
#else
	return (uint32_t)crc32_z(crc, p, n);
#endif
}
#endif

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

#ifdef GPUWHY_HAVE_ISAL
static void backend_reset(trace_gzin *g)
{
	gw_isal()->inflate_reset(g->is);
	gw_isal()->gzip_header_init(&g->hdr); /* name, comment and extra NULL: passed over */
	g->phase = PH_HEADER;
	g->trail_have = 0;
}

static bool backend_init(trace_gzin *g)
{
	g->is = malloc(sizeof *g->is);
	if (!g->is)
		return false;
	if (gw_isal_error()) {
		/* Reported by the first read, as a corrupt stream would be. */
		g->state = GZ_NOLIB;
		return true;
	}
	gw_isal()->inflate_init(g->is);
	backend_reset(g);
	return true;
}
#else
static void backend_reset(trace_gzin *g)
{
	inflateReset(&g->z);
	inflateValidate(&g->z, 0);
}

static bool backend_init(trace_gzin *g)
{
	if (inflateInit2(&g->z, 15 + 16) != Z_OK)
		return false;
	g->zinit = true;
	inflateValidate(&g->z, 0);
	return true;
}
#endif

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
	if (!g->direct && !backend_init(g)) {
		trace_gzin_close(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

void trace_gzin_close(trace_gzin *g)
{
	if (!g)
		return;
#ifdef GPUWHY_HAVE_ISAL
	free(g->is);
#else
	if (g->zinit)
		inflateEnd(&g->z);
#endif
	if (g->map)
		munmap((void *)(uintptr_t)g->map, g->map_len);
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

#ifndef GPUWHY_HAVE_ISAL
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
#endif

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
	backend_reset(g);
	g->crc = 0;
	g->isize = 0;
}

/* Compressed input at hand for the next step: false when reading failed or the
 * file ended inside the stream (truncated). */
static bool input_ready(trace_gzin *g)
{
	if (g->z.avail_in == 0 && !g->eof_in && fill(g) < 0)
		return false;
	if (g->z.avail_in == 0 && g->eof_in) {
		g->state = GZ_TRUNC;
		return false;
	}
	return true;
}

#ifdef GPUWHY_HAVE_ISAL
/* igzip's words for what it refuses, as zlib says them. */
static const char *isal_msg(int rc)
{
	switch (rc) {
	case ISAL_INVALID_WRAPPER:
		return "incorrect header check";
	case ISAL_UNSUPPORTED_METHOD:
		return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM:
		return "header crc mismatch";
	case ISAL_INVALID_BLOCK:
		return "invalid block type";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	case ISAL_NEED_DICT:
		return "internal error: inflate stream corrupt";
	default:
		return "invalid code";
	}
}

/* The 8 trailer bytes after a member's deflate data, gathered across reads. */
static void take_trailer(trace_gzin *g)
{
	while (g->trail_have < 8 && g->z.avail_in) {
		g->last8[g->trail_have++] = *g->z.next_in++;
		g->z.avail_in--;
	}
	if (g->trail_have == 8)
		member_end(g);
}

/* igzip reads ahead up to 8 bytes into its bit buffer and keeps them at the end of the deflate
 * data: past the last byte's padding bits, they are the first bytes of the trailer. */
static void trailer_from_bits(trace_gzin *g)
{
	const struct inflate_state *st = g->is;
	uint64_t bits = st->read_in >> (st->read_in_length % 8);
	for (int i = 0; i < st->read_in_length / 8 && g->trail_have < 8; i++, bits >>= 8)
		g->last8[g->trail_have++] = (unsigned char)(bits & 0xff);
	g->phase = PH_TRAILER;
}

/* Header, deflate data or trailer of the member, with igzip working on the cursor's copy. */
static int isal_run(trace_gzin *g)
{
	struct inflate_state *st = g->is;
	st->next_in = (uint8_t *)g->z.next_in;
	st->avail_in = g->z.avail_in;
	int rc;
	if (g->phase == PH_HEADER) {
		rc = gw_isal()->read_gzip_header(st, &g->hdr);
		if (rc == ISAL_DECOMP_OK) {
			g->phase = PH_BODY;
			st->crc_flag = ISAL_GZIP_NO_HDR; /* the CRC-32 of the text, in st->crc */
		}
	} else {
		st->next_out = g->z.next_out;
		st->avail_out = g->z.avail_out;
		rc = gw_isal()->inflate(st);
		size_t made = (size_t)(st->next_out - g->z.next_out);
		g->isize += (uint32_t)made;
		g->z.next_out = st->next_out;
		g->z.avail_out = st->avail_out;
		if (rc == ISAL_DECOMP_OK && st->block_state == ISAL_BLOCK_FINISH) {
			g->crc = st->crc;
			trailer_from_bits(g);
		}
	}
	g->z.next_in = st->next_in;
	g->z.avail_in = st->avail_in;
	return rc == ISAL_END_INPUT ? ISAL_DECOMP_OK : rc;
}

static void inflate_step(trace_gzin *g)
{
	if (!input_ready(g))
		return;
	if (g->phase == PH_TRAILER) {
		take_trailer(g);
		return;
	}
	int rc = isal_run(g);
	if (rc < 0 || rc == ISAL_NEED_DICT)
		data_error(g, isal_msg(rc));
	else if (g->phase == PH_TRAILER)
		take_trailer(g);
}
#else
static void inflate_step(trace_gzin *g)
{
	if (!input_ready(g))
		return;
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
#endif

int trace_gzin_read(trace_gzin *g, void *buf, size_t len)
{
	if (len > INT_MAX)
		len = INT_MAX;
	if (g->state != GZ_OK)
		return g->state == GZ_DATA || g->state == GZ_IO || g->state == GZ_NOLIB ? -1 : 0;
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

const unsigned char *trace_gzin_map(trace_gzin *g, size_t *len)
{
	struct stat st;
	if (!g->direct || g->map || g->file_read != g->z.avail_in || fstat(g->fd, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
		return NULL;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, g->fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* Read once from start to end: the kernel reads further ahead. */
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	g->map = m;
	g->map_len = (size_t)st.st_size;
	g->z.avail_in = 0; /* the bytes read to look for the magic are in the mapping too */
	g->file_read = 0;
	*len = g->map_len;
	return g->map;
}

/* Pages a fault may have mapped around one just before the released part (the kernel maps up to
 * fault_around_bytes, 64 KiB by default, around a faulting address). */
enum { FAULT_AROUND_MARGIN = 256 << 10 };

void trace_gzin_map_done(trace_gzin *g, size_t upto)
{
	if (!g->map || upto > g->map_len)
		return;
	if (upto > g->file_read)
		g->file_read = upto;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t from =
	    g->map_released > FAULT_AROUND_MARGIN ? g->map_released - FAULT_AROUND_MARGIN : 0;
	size_t to = upto / page * page;
	if (to > from) {
		madvise((void *)(uintptr_t)(g->map + from), to - from, MADV_DONTNEED);
		g->map_released = to;
	}
}

bool trace_gzin_direct(const trace_gzin *g)
{
	return g->direct;
}

/* The reasons are English, as trace_read_file gives them: formatted here and passed as data
 * ("%s"), never looked up in the catalogue. */
__attribute__((format(printf, 2, 3))) static int gz_fail(gw_fail *err, const char *fmt, ...)
{
	char why[sizeof err->why];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	gw_fail_set(err, GW_EXIT_ENV, NULL, NULL, "%s", why);
	return -1;
}

int trace_gzin_status(const trace_gzin *g, int n, gw_fail *err)
{
#ifdef GPUWHY_HAVE_ISAL
	if (g->state == GZ_NOLIB)
		return gz_fail(err, "cannot load %s (%s)", GW_ISAL_SONAME, GW_ISAL_INSTALL);
#endif
	if (n < 0 && g->state == GZ_IO)
		return gz_fail(err, "read error: %s", strerror(g->err_no));
	if (n < 0)
		return gz_fail(err, "corrupt gzip data: %s",
		               g->msg ? g->msg : "compressed data error");
	if (g->state == GZ_TRUNC)
		return gz_fail(err, "truncated gzip file (it ends in the middle of the compressed "
		                    "stream)");
	return 1;
}
