/*
 * render.h - one frame of `gpuwhy top` drawn into a canvas: the GPU meters
 * and history, host cores, memory and IO, the process list and tree, the
 * findings, the keys and the help box.
 *
 * Drawing knows nothing of the terminal: screen.h copies the canvas to
 * ncurses, --once prints it. Glyphs are Unicode block and box characters
 * when the canvas is UTF-8, plain ASCII otherwise. An absent value prints
 * as "n/a", never as 0.
 */
#ifndef GPUWHY_TOP_RENDER_H
#define GPUWHY_TOP_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "top/canvas.h"
#include "top/input.h"
#include "top/layout.h"
#include "top/model.h"

/* The GPU values one meter block shows, at most this many (render_gpu.c lists them). */
#define TOP_GPU_KEY_N 32

/* What one GPU block was drawn from. */
typedef struct {
	int g;    /* GPU position, -1: nothing drawn */
	int kind; /* waiting, lost or meters */
	double v[TOP_GPU_KEY_N];
	unsigned char ok[TOP_GPU_KEY_N];
} top_gpu_key;

/*
 * What the last frame into the same canvas was drawn from. With one,
 * top_render keeps the canvas and redraws only what changed: a GPU block
 * whose values are the same is left as it is (most GPUs of a busy node
 * hold still between samples), and the other panels are blanked and drawn
 * over instead of the whole canvas being cleared. Zero it to start; a
 * changed layout, model or canvas, the help box or a too-small terminal
 * draws the whole frame again.
 */
typedef struct {
	bool valid;
	top_layout L;
	const top_model *m;
	const top_canvas *c;
	int cols, rows;
	bool utf8;
	int ngpu; /* GPU blocks in gpu[] */
	top_gpu_key gpu[GPU_MAX];
	long redrawn, kept; /* GPU blocks drawn and left as they were, ever */
} top_render_memo;

typedef struct {
	const top_model *m;
	const top_layout *L; /* computed for the canvas size */
	const top_input *in; /* prompt and help state; NULL for none */
	const char *hostname;
	int64_t interval_ns;
	const char *record_path; /* -o FILE, or NULL */
	const char *message;     /* a passing message for the status line, or NULL */
	const char *no_gpu;      /* why there is no GPU (when m->ngpu == 0), or NULL */
	top_render_memo *memo;   /* the last frame into this canvas; NULL: draw it all */
	bool once; /* one frame printed as text (--once): no keys; the header names the span of its
	              rates */
} top_frame;

void top_render(top_canvas *c, const top_frame *f);

/* Rows of the process list that are visible (for paging and scrolling). */
int top_render_proc_rows(const top_layout *L);

/* The process list row under a screen position, -1 if none; *header set when on the titles. */
int top_render_hit_row(const top_layout *L, const top_model *m, int x, int y, bool *header);
/* The sort key of the column title at x, -1 if none. */
int top_render_hit_column(const top_layout *L, int x);

#endif
