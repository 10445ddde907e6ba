/*
 * record_status.c - `gpuwhy record`'s status line. The recorder's sampler
 * thread hands every snapshot to a small ring (top's model); once a second
 * the main thread diagnoses the last minute of it, as top does, and redraws
 * "rec 1:23  83 samples  412 KiB  <top finding>" in place, cut to the
 * terminal's width so it never wraps (a wrapped line cannot be redrawn).
 */
#include "cmd/record_status.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

#include "top/findings.h"
#include "top/model.h"
#include "util/i18n.h"
#include "util/textwidth.h"
#include "util/termsafe.h"

struct record_status {
	FILE *out;
	char *path;
	pthread_mutex_t mu;
	top_model m;
	int64_t drawn_at; /* elapsed_ns of the last drawing, -1 before the first */
	bool drawn;
};

record_status *record_status_new(gpu_ctx *gc, const char *path, FILE *out)
{
	record_status *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	top_gpu_info info[GPU_MAX];
	int n = gc ? gpu_count(gc) : 0;
	if (n > GPU_MAX)
		n = GPU_MAX;
	for (int i = 0; i < n; i++) {
		const gpu_static *s = gpu_static_info(gc, i);
		info[i] = (top_gpu_info){.index = s->index};
		snprintf(info[i].name, sizeof info[i].name, "%s", s->name);
		snprintf(info[i].uuid, sizeof info[i].uuid, "%s", s->uuid);
		snprintf(info[i].vendor, sizeof info[i].vendor, "%s", s->vendor);
	}
	st->path = strdup(path);
	if (!st->path || top_model_init(&st->m, n, info) != 0) {
		free(st->path);
		free(st);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j) {
				st->m.nvlinks[i][j] = gpu_nvlink_count(gc, i, j);
				st->m.xgmi[i][j] = gpu_xgmi_pair(gc, i, j);
				st->m.topo[i][j] = gpu_topology_level(gc, i, j);
			}
	pthread_mutex_init(&st->mu, NULL);
	st->out = out;
	st->drawn_at = -1;
	return st;
}

void record_status_feed(const snapshot *s, void *arg)
{
	record_status *st = arg;
	pthread_mutex_lock(&st->mu);
	top_model_ingest(&st->m, s);
	pthread_mutex_unlock(&st->mu);
}

/* The most severe live finding of the last minute, or what there is instead. */
static void top_finding_text(record_status *st, char *out, size_t len)
{
	pthread_mutex_lock(&st->mu);
	timeline *tl = top_model_window(&st->m, TOP_WINDOW_S, 120);
	top_finding f[1];
	int n = tl ? top_findings(tl, f, 1) : 0;
	pthread_mutex_unlock(&st->mu);
	tl_free(tl);
	if (n > 0)
		gw_term_safe(f[0].text, out, len);
	else
		snprintf(out, len, "%s", tl ? _("no findings") : _("no findings yet"));
}

static int term_width(FILE *out)
{
	struct winsize ws;
	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

/* s cut to at most cols display columns (a CJK character takes two), on a
 * character boundary, so that the line never wraps on the terminal. */
static void cut_to(char *s, int cols)
{
	s[gw_text_fit(s, cols, NULL)] = '\0';
}

static void size_text(const char *path, char *out, size_t len)
{
	struct stat sb;
	if (stat(path, &sb) != 0) {
		snprintf(out, len, "%s", _("n/a"));
		return;
	}
	double b = (double)sb.st_size;
	if (b < 1024 * 1024)
		snprintf(out, len, "%.0f KiB", b / 1024);
	else if (b < 1024.0 * 1024 * 1024)
		snprintf(out, len, "%.1f MiB", b / (1024 * 1024));
	else
		snprintf(out, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

void record_status_tick(record_status *st, long samples, int64_t elapsed_ns)
{
	if (!st || (st->drawn_at >= 0 && elapsed_ns - st->drawn_at < 1000000000LL))
		return;
	st->drawn_at = elapsed_ns;
	long s = (long)(elapsed_ns / 1000000000LL);
	char el[32], sz[32], finding[GW_TERM_SAFE_LEN(200)], line[sizeof finding + 128];
	if (s >= 3600)
		snprintf(el, sizeof el, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(el, sizeof el, "%ld:%02ld", s / 60, s % 60);
	size_text(st->path, sz, sizeof sz);
	top_finding_text(st, finding, sizeof finding);
	snprintf(line, sizeof line,
	         P_("rec %s  %ld sample  %s  %s", "rec %s  %ld samples  %s  %s", samples), el,
	         samples, sz, finding);
	cut_to(line, term_width(st->out) - 1);
	fprintf(st->out, "\r\033[K%s", line);
	fflush(st->out);
	st->drawn = true;
}

void record_status_free(record_status *st)
{
	if (!st)
		return;
	if (st->drawn) {
		fputs("\r\033[K", st->out);
		fflush(st->out);
	}
	top_model_free(&st->m);
	pthread_mutex_destroy(&st->mu);
	free(st->path);
	free(st);
}
