/*
 * The HTML report in a real browser: headless Chromium renders pages for a
 * starved single-GPU run and a four-GPU sync-wait run, and the screenshots
 * must not be blank. Skipped (77) when chromium is not installed
 * (scripts/install-deps --extra installs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "diag_fixture.h"
#include "html_check.h"
#include "test_tmpdir.h"
#include "report/report.h"

static char dir[64];

static int find_chromium(char *out, size_t len)
{
	static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
	const char *path = getenv("PATH");
	if (!path)
		return -1;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", path);
		for (char *d = strtok(buf, ":"); d; d = strtok(NULL, ":")) {
			snprintf(out, len, "%s/%s", d, names[i]);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	return -1;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/*
 * Decode an 8-bit, non-interlaced PNG (RGB or RGBA) and measure it: the share
 * of pixels that are not near-white and the number of distinct colours seen.
 */
static int png_stats(const char *path, int *w, int *h, double *ink, int *colours)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *d = malloc((size_t)n);
	if (fread(d, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(d);
		return -1;
	}
	fclose(f);
	if (n < 33 || memcmp(d, "\x89PNG\r\n\x1a\n", 8)) {
		free(d);
		return -1;
	}
	unsigned char *idat = NULL;
	size_t ilen = 0;
	int depth = 0, ctype = 0, interlace = 0;
	for (long p = 8; p + 12 <= n;) {
		uint32_t clen = be32(d + p);
		const unsigned char *type = d + p + 4, *data = d + p + 8;
		if (p + 12 + (long)clen > n)
			break;
		if (!memcmp(type, "IHDR", 4)) {
			*w = (int)be32(data);
			*h = (int)be32(data + 4);
			depth = data[8];
			ctype = data[9];
			interlace = data[12];
		} else if (!memcmp(type, "IDAT", 4)) {
			idat = realloc(idat, ilen + clen);
			memcpy(idat + ilen, data, clen);
			ilen += clen;
		}
		p += 12 + (long)clen;
	}
	int bpp = ctype == 6 ? 4 : ctype == 2 ? 3 : 0;
	if (depth != 8 || !bpp || interlace || !idat) {
		free(d);
		free(idat);
		return -1;
	}
	size_t stride = (size_t)*w * bpp, rawlen = (stride + 1) * (size_t)*h;
	unsigned char *raw = malloc(rawlen);
	uLongf dl = rawlen;
	int rc = uncompress(raw, &dl, idat, ilen);
	free(idat);
	free(d);
	if (rc != Z_OK || dl != rawlen) {
		free(raw);
		return -1;
	}
	unsigned char *prev = calloc(stride, 1), *cur = malloc(stride);
	long inked = 0;
	unsigned seen[64] = {0}; /* a coarse colour histogram: 4 levels per channel */
	for (int y = 0; y < *h; y++) {
		const unsigned char *row = raw + (size_t)y * (stride + 1);
		int ft = row[0];
		for (size_t x = 0; x < stride; x++) {
			int a = x >= (size_t)bpp ? cur[x - bpp] : 0, b = prev[x];
			int c = x >= (size_t)bpp ? prev[x - bpp] : 0, v = row[1 + x];
			switch (ft) {
			case 1:
				v += a;
				break;
			case 2:
				v += b;
				break;
			case 3:
				v += (a + b) / 2;
				break;
			case 4:
				v += paeth(a, b, c);
				break;
			default:
				break;
			}
			cur[x] = (unsigned char)v;
		}
		for (int x = 0; x < *w; x++) {
			const unsigned char *px = cur + (size_t)x * bpp;
			if (px[0] < 235 || px[1] < 235 || px[2] < 235)
				inked++;
			seen[(px[0] >> 6) << 4 | (px[1] >> 6) << 2 | (px[2] >> 6)] = 1;
		}
		unsigned char *t = prev;
		prev = cur;
		cur = t;
	}
	*colours = 0;
	for (int i = 0; i < 64; i++)
		*colours += seen[i];
	*ink = (double)inked / ((double)*w * *h);
	free(prev);
	free(cur);
	free(raw);
	return 0;
}

static void write_report(const timeline *tl, const char *path)
{
	diag_opts o;
	diag_opts_default(&o);
	diag_meta m = {0};
	diag_meta_from_timeline(&m, tl);
	o.meta = &m;
	diag_result r;
	diag_run(tl, &o, &r);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	report_style st = {.utf8 = true, .source = "run.gpuwhy", .opts = &o};
	report_html(f, tl, &m, &r, &st);
	assert_int_equal(fclose(f), 0);
	diag_result_free(&r);
	diag_meta_free(&m);

	/* Valid and self-contained before it goes to the browser. */
	f = fopen(path, "r");
	char *buf = calloc(1, 1 << 22);
	size_t n = fread(buf, 1, (1 << 22) - 1, f);
	fclose(f);
	assert_true(n > 1000);
	const char *bad = html_check(buf);
	if (bad)
		fail_msg("%s: %s", path, bad);
	free(buf);
}

static void screenshot(const char *html, const char *png)
{
	char chrome[512], cmd[2048];
	assert_int_equal(find_chromium(chrome, sizeof chrome), 0);
	snprintf(
	    cmd, sizeof cmd,
	    "timeout 90 %s --headless --no-sandbox --disable-gpu --disable-background-networking "
	    "--no-first-run --disable-component-update --disable-sync --disable-quic "
	    "--user-data-dir=%s/profile --hide-scrollbars --window-size=1000,1400 "
	    "--screenshot=%s file://%s >/dev/null 2>&1",
	    chrome, dir, png, html);
	int rc = system(cmd);
	if (rc != 0)
		fail_msg("chromium failed (status %d): %s", rc, cmd);
	int w = 0, h = 0, colours = 0;
	double ink = 0;
	if (png_stats(png, &w, &h, &ink, &colours))
		fail_msg("%s: not a PNG this test can read", png);
	assert_int_equal(w, 1000);
	assert_int_equal(h, 1400);
	/* Text, bars and charts put ink on a few percent of the page at least. */
	if (ink < 0.02 || colours < 4)
		fail_msg("%s looks blank: %.4f of pixels inked, %d colours", png, ink, colours);
}

static void test_starved_page(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	for (int s = 0; s < tl->n; s++) {
		double u = (s / 6) % 2 ? 96 : 12;
		tl_set_gpu(tl, 0, GM_UTIL_GPU, s, u);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_IDLE, s, 100 - u);
		tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
		tl_set_gpu(tl, 0, GM_POWER_DRAW, s, 150 + 4 * u);
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 3);
	}
	char html[128], png[128];
	snprintf(html, sizeof html, "%s/starved.html", dir);
	snprintf(png, sizeof png, "%s/starved.png", dir);
	write_report(tl, html);
	screenshot(html, png);
	tl_free(tl);
}

static void test_multi_gpu_page(void **state)
{
	(void)state;
	timeline *tl = fx_healthy_n(4);
	for (int g = 0; g < 4; g++)
		for (int h = 0; h < 4; h++)
			if (g != h)
				tl->nvlinks[g][h] = 0, tl->topo[g][h] = 30;
	for (int s = 0; s < tl->n; s++)
		if (s % 10 >= 5)
			for (int g = 1; g < 4; g++) {
				tl_set_gpu(tl, g, GM_UTIL_GPU, s, 25);
				tl_set_gpu(tl, g, GM_UTIL_SAMPLES_IDLE, s, 70);
			}
	char html[128], png[128];
	snprintf(html, sizeof html, "%s/sync.html", dir);
	snprintf(png, sizeof png, "%s/sync.png", dir);
	write_report(tl, html);
	screenshot(html, png);
	tl_free(tl);
}

static int cleanup(void **state)
{
	(void)state;
	return test_tmpdir_remove(dir);
}

int main(void)
{
	char chrome[512];
	if (find_chromium(chrome, sizeof chrome)) {
		fprintf(stderr, "chromium not installed (scripts/install-deps --extra): skipped\n");
		return 77;
	}
	if (test_tmpdir_make(dir, sizeof dir, "html"))
		return 1;
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_starved_page),
	    cmocka_unit_test(test_multi_gpu_page),
	};
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
