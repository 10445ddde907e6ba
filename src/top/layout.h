/*
 * layout.h - which panels of `gpuwhy top` fit a terminal, and where.
 *
 * Pure: terminal size, number of GPUs shown and host cores in, rectangles
 * out. No panel overlaps another and none leaves the screen (unit-tested
 * over every size from 40x10 to 300x100). The help box is an overlay and
 * is placed separately.
 *
 *   row 0        header
 *   GPUS|GRAPH   one block of gpu_rows rows per GPU; the history graph beside
 *                the meters when the terminal is wide, else below them
 *   HOST         per-core CPU bars (cells or one tick per core), then one
 *                line of memory, swap, disk and network
 *   PROCS|TREE   GPU processes; the process tree beside or below when shown
 *   STATUS       the live findings
 *   KEYS         the key summary
 */
#ifndef GPUWHY_TOP_LAYOUT_H
#define GPUWHY_TOP_LAYOUT_H

#include <stdbool.h>

#define TOP_MIN_COLS 40
#define TOP_MIN_ROWS 10
/* Width of one CPU cell: "%3d" core, bar, "%4.0f". */
#define TOP_CPU_CELL_W 20
/* A GPU meter block is never wider than this; the graph takes the rest. */
#define TOP_GPU_METER_MAX_W 124
/* Below this width the graph goes under the meters instead of beside them. */
#define TOP_GRAPH_BESIDE_MIN_COLS 100

typedef struct {
	int x, y, w, h;
} top_rect;

typedef enum {
	TOP_P_HEADER,
	TOP_P_GPUS,
	TOP_P_GRAPH,
	TOP_P_HOST,
	TOP_P_PROCS,
	TOP_P_TREE,
	TOP_P_STATUS,
	TOP_P_KEYS,
	TOP_P__COUNT
} top_panel;

typedef enum {
	TOP_CPU_CELLS, /* "  3 [||||||    ] 45" per core, several per row */
	TOP_CPU_TICKS  /* one character per core (or per group of cores: the busiest) */
} top_cpu_style;

typedef struct {
	int cols, rows;
	bool too_small;           /* below TOP_MIN_COLS x TOP_MIN_ROWS: only a message fits */
	top_rect p[TOP_P__COUNT]; /* w == 0 or h == 0: panel hidden */
	int gpu_rows;             /* rows of each GPU block in GPUS */
	int gpus_shown;           /* how many GPUs have a block (the first ones of the selection) */
	bool graph_beside;        /* graph rows line up with the GPU blocks */
	int graph_rows;           /* rows of each GPU's graph */
	top_cpu_style cpu_style;
	int cpu_per_row;    /* cells or ticks per row */
	int cpu_rows;       /* rows of core bars (HOST has one more line below them) */
	int cores_per_tick; /* TICKS: cores merged into one character (1 = each its own) */
} top_layout;

/* Lay out a cols x rows terminal for ngpu GPUs (0: one line says there are none) and ncpu cores. */
void top_layout_compute(int cols, int rows, int ngpu, int ncpu, bool tree, top_layout *out);

/*
 * Rows a frame needs to show everything (two rows per GPU, every process
 * row): what --once prints, which has no terminal to fit.
 */
int top_layout_natural_rows(int cols, int ngpu, int ncpu, int nproc_rows, bool tree,
                            int ntree_rows);

/* A centred box of at most want_w x want_h that stays on the screen. */
top_rect top_layout_box(int cols, int rows, int want_w, int want_h);

/* True when a and b share a cell; empty rectangles share none. */
bool top_rect_overlap(top_rect a, top_rect b);

#endif
