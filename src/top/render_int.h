/*
 * render_int.h - what the parts of top's renderer share (not for other modules):
 * the glyph set, the drawing context, the line writer and number formats of
 * render_frame.c, and one drawing function per panel (render_gpu.c: GPU meters and
 * history; render_host.c: host line, status and keys; render_proc.c: process
 * list and tree).
 */
#ifndef GPUWHY_TOP_RENDER_INT_H
#define GPUWHY_TOP_RENDER_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "top/render.h"

typedef struct {
	const char *bar_l, *bar_r;
	const char *eighth[8]; /* partial horizontal fill, 1/8 .. 7/8 (index 0 unused) */
	const char *full;
	const char *level[9]; /* bottom-aligned column, 0/8 .. 8/8 */
	const char *dot, *up, *down;
	const char *t_mid, *t_last, *t_pipe, *t_none;
	const char *box_h, *box_v, *box_tl, *box_tr, *box_bl, *box_br;
} top_glyphs;

typedef struct {
	top_canvas *c;
	const top_frame *f;
	const top_glyphs *g;
	top_render_memo *keep; /* the last frame is still on the canvas (else NULL) */
} top_rctx;

/* Writes fields left to right and stops at the first that does not fit whole. */
typedef struct {
	top_rctx *x;
	top_rect r;
	int col, y;
	bool full;
} top_line;

/*
 * A label whose English word means two things on the screen ("mem": GPU
 * memory in a GPU block, host memory on the host line): its catalogue entry
 * carries the context (gettext's msgctxt; xgettext knows TOP_C_ from
 * CMakeLists.txt). English, or no entry, gives the word itself.
 */
#define TOP_C_(ctx, s) top_r_pgettext(ctx "\004" s, s)
const char *top_r_pgettext(const char *ctx_msgid, const char *msgid);

/* ---- numbers (render_frame.c) ---- */

/*
 * snprintf(out, len, fmt, v) for a fmt with one "%.0f" or "%W.0f" (and "%%"),
 * without printf's floating-point conversion where v allows: rint rounds half
 * to even like printf. Any other fmt, or v infinite, NaN or beyond 1e15, goes
 * to snprintf.
 */
void top_r_fmt_f0(char *out, size_t len, const char *fmt, double v);
/* MiB as "512M", "1.5G", "2.0T"; "n/a" when NaN. */
void top_r_fmt_mib(double mib, char *out, size_t len);
/* Bytes per second as "0B", "12K", "1.2M", "3.4G"; "n/a" when NaN. */
void top_r_fmt_rate(double bps, char *out, size_t len);
/* A metric's value with fmt, "n/a" when absent. */
void top_r_fmt_num(const gpu_values *v, gpu_metric_id id, const char *fmt, char *out, size_t len);
/* Dim when unknown, else ok, mid or high by the two thresholds. */
top_style top_r_load_style(double pct, double mid, double high);
/* Dim for a value printed as "n/a", else st. */
top_style top_r_st_of(const char *s, top_style st);

/* ---- the line writer (render_frame.c) ---- */

top_line top_r_line_at(top_rctx *x, top_rect r, int col, int y);
/* Columns left on the line. */
int top_r_room(const top_line *l);
/* Whether w more columns fit; the first field that does not marks the line full. */
bool top_r_fits(top_line *l, int w);
/* Write text at the cursor, whether or not it fits (the clip cuts it). */
void top_r_put(top_line *l, top_style st, const char *text);
bool top_r_text(top_line *l, top_style st, const char *s);
/* "label value" after gap spaces, as one field. */
bool top_r_pair(top_line *l, int gap, const char *label, top_style st, const char *value);
/* A bar of w inner cells filled to frac (0..1). */
void top_r_bar(top_rctx *x, top_rect clip, int col, int y, int w, double frac, top_style st);
/* "label [bar] value" as one field. */
bool top_r_bar_field(top_line *l, int gap, const char *label, int w, double frac, top_style fill,
                     top_style vst, const char *value);

/* ---- the panels ---- */

/*
 * A GPU's name in at most cols columns, cut only between words: without the
 * vendor prefix, then without product-line words in front ("GeForce"), then
 * without words (or "-" parts) from the end; "" when not even the first word
 * fits.
 */
void top_r_gpu_name(char *out, size_t len, const char *name, int cols);

/* Whether the host line's labels list (for the catalogue) holds this host table label. */
bool top_r_host_label_listed(const char *label);
/* Whether a GPU block shows metric id (its key holds exactly these). */
bool top_r_gpu_metric_drawn(gpu_metric_id id);
/* Blank panel p before it is drawn over the last frame (nothing when the canvas was cleared). */
void top_r_blank(top_rctx *x, top_panel p);

void top_r_gpus(top_rctx *x);
void top_r_graph(top_rctx *x);
void top_r_host(top_rctx *x);
void top_r_status(top_rctx *x);
void top_r_keys(top_rctx *x);
void top_r_procs(top_rctx *x);
void top_r_tree(top_rctx *x);

#endif
