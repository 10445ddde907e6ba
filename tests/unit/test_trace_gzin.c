/* test_trace_gzin.c - the gzip reader against zlib's own gzip writer: members one after another,
 * trailing bytes, damaged trailers, truncation, plain files, reads of every size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "trace/trace_gzin.h"
#include "util/err.h"

static char path[64];

static int setup(void **state)
{
	(void)state;
	/* mkstemp's template: six X at the end */
	size_t n = (size_t)snprintf(path, sizeof path, "/tmp/gpuwhy-gzin-test-");
	memset(path + n, 'X', 6);
	path[n + 6] = 0;
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return unlink(path);
}

/* Text that compresses, but not to nothing: a counter in words. */
static unsigned char *text(size_t n)
{
	unsigned char *t = malloc(n + 1);
	assert_non_null(t);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		t[i] = (unsigned char)("{}[],:\" abcdefgh0123456789\n"[(x >> 16) % 27]);
	}
	return t;
}

/* One gzip member of t[0..n) appended to the file (zlib's writer, level 1-9). */
static void append_member(const unsigned char *t, size_t n, int level)
{
	char mode[8];
	snprintf(mode, sizeof mode, "ab%d", level);
	gzFile g = gzopen(path, mode);
	assert_non_null(g);
	if (n)
		assert_int_equal(gzwrite(g, t, (unsigned)n), (int)n);
	assert_int_equal(gzclose(g), Z_OK);
}

static void append_raw(const void *b, size_t n)
{
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

static void truncate_file(void)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fclose(f);
}

/* Reads the whole file in reads of step bytes; returns the text, its length in *len and the
 * status in *status (1, or -1 with err). */
static unsigned char *read_all(size_t step, size_t *len, int *status, gw_fail *err)
{
	trace_gzin *g = trace_gzin_open(path, 4096);
	assert_non_null(g);
	size_t cap = 1 << 16, n = 0;
	unsigned char *out = malloc(cap);
	assert_non_null(out);
	int r;
	for (;;) {
		if (cap - n < step) {
			cap = cap * 2 + step;
			unsigned char *grown = realloc(out, cap);
			assert_non_null(grown);
			out = grown;
		}
		r = trace_gzin_read(g, out + n, step);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	memset(err, 0, sizeof *err);
	*status = trace_gzin_status(g, r, err);
	*len = n;
	trace_gzin_close(g);
	return out;
}

static void expect_text(const unsigned char *want, size_t n)
{
	static const size_t steps[] = {1, 7, 4096, 65536, 1 << 20};
	for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
		size_t len;
		int st;
		gw_fail err;
		unsigned char *got = read_all(steps[s], &len, &st, &err);
		assert_int_equal(st, 1);
		assert_int_equal(len, n);
		assert_memory_equal(got, want, n);
		free(got);
	}
}

static void expect_error(const char *what)
{
	size_t len;
	int st;
	gw_fail err;
	free(read_all(65536, &len, &st, &err));
	assert_int_equal(st, -1);
	assert_int_equal(err.code, GW_EXIT_ENV);
	assert_string_equal(err.what, ""); /* the caller names the file */
	assert_non_null(strstr(err.why, what));
	assert_string_equal(err.why_text, err.why); /* English: the callers word it */
}

static void test_members(void **state)
{
	(void)state;
	size_t n = 3 << 20;
	unsigned char *t = text(n);
	/* One member; then three (one empty) written at different levels, as `cat a.gz b.gz`. */
	truncate_file();
	append_member(t, n, 6);
	expect_text(t, n);
	truncate_file();
	append_member(t, 1000, 1);
	append_member(t, 0, 6);
	append_member(t + 1000, n - 1000, 9);
	expect_text(t, n);
	/* Bytes after the last member that are not a gzip header are ignored, as gzread does. */
	append_raw("not gzip", 8);
	expect_text(t, n);
	/* Many small members: headers and trailers cut by the 4096-byte input buffer at every
	 * offset (igzip holds a trailer's first bytes in its bit buffer, the rest come later). */
	truncate_file();
	size_t at = 0;
	for (int i = 0; at < n && i < 600; i++) {
		size_t m = (size_t)(i * 37) % 211;
		m = m < n - at ? m : n - at;
		append_member(t + at, m, 1 + i % 9);
		at += m;
	}
	expect_text(t, at);
	free(t);
}

static void test_plain(void **state)
{
	(void)state;
	size_t n = 200000;
	unsigned char *t = text(n);
	truncate_file();
	append_raw(t, n);
	expect_text(t, n);
	truncate_file();
	expect_text(t, 0);
	append_raw("\x1f", 1); /* a lone first magic byte is text */
	expect_text((const unsigned char *)"\x1f", 1);
	trace_gzin *g = trace_gzin_open(path, 4096);
	assert_non_null(g);
	assert_true(trace_gzin_direct(g));
	trace_gzin_close(g);
	free(t);
}

/* Flips one bit at offset from the end of a one-member file and expects err. */
static void damaged(const unsigned char *t, size_t n, long from_end, const char *err)
{
	truncate_file();
	append_member(t, n, 6);
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, -from_end, SEEK_END), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, -from_end, SEEK_END), 0);
	fputc(c ^ 1, f);
	fclose(f);
	expect_error(err);
}

static void test_damage(void **state)
{
	(void)state;
	size_t n = 500000;
	unsigned char *t = text(n);
	damaged(t, n, 8, "incorrect data check");   /* the CRC-32 */
	damaged(t, n, 2, "incorrect length check"); /* the length */
	/* Cut short: what was there is read, then the truncation is reported. */
	truncate_file();
	append_member(t, n, 6);
	long size;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fclose(f);
	assert_int_equal(truncate(path, size - 3), 0);
	expect_error("truncated gzip file");
	assert_int_equal(truncate(path, size / 2), 0);
	expect_error("truncated gzip file");
	/* A broken deflate stream. */
	truncate_file();
	append_raw("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff", 14);
	expect_error("corrupt gzip data");
	free(t);
}

static void test_offset(void **state)
{
	(void)state;
	size_t n = 1 << 20;
	unsigned char *t = text(n);
	truncate_file();
	append_member(t, n, 6);
	trace_gzin *g = trace_gzin_open(path, 4096);
	assert_non_null(g);
	assert_false(trace_gzin_direct(g));
	unsigned char *buf = malloc(n);
	assert_non_null(buf);
	uint64_t last = 0;
	int r;
	while ((r = trace_gzin_read(g, buf, 65536)) > 0) {
		assert_true(trace_gzin_offset(g) >= last);
		last = trace_gzin_offset(g);
	}
	assert_int_equal(r, 0);
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	assert_int_equal(last, (uint64_t)ftell(f));
	fclose(f);
	trace_gzin_close(g);
	free(buf);
	free(t);
	assert_null(trace_gzin_open("/nonexistent/trace.json.gz", 4096));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_members),
	    cmocka_unit_test(test_plain),
	    cmocka_unit_test(test_damage),
	    cmocka_unit_test(test_offset),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
