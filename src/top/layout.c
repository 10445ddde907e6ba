/* layout.c - panel rectangles for a terminal size (pure; see layout.h). */
#include "top/layout.h"

#include <string.h>

/* Process list: header plus at least one row; prefer five rows before GPU blocks grow. */
#define PROCS_MIN 2
#define PROCS_PREF 6
/* Core cells are used while they take at most this many rows. */
#define CPU_CELL_ROWS_MAX 8
/* Tick rows are capped: beyond it cores are merged (the busiest of a group shows). */
#define CPU_TICK_ROWS_MAX 4
#define TICK_PREFIX 4 /* "cpu " */

static int div_up(int a, int b)
{
	return (a + b - 1) / b;
}

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int min_i(int a, int b)
{
	return a < b ? a : b;
}

static top_rect rect(int x, int y, int w, int h)
{
	return (top_rect){x, y, w > 0 && h > 0 ? w : 0, w > 0 && h > 0 ? h : 0};
}

/* Host rows wanted when there is room: cells if they stay small, else ticks. */
static int host_pref_rows(int cols, int ncpu)
{
	int cells = div_up(ncpu, cols / TOP_CPU_CELL_W);
	if (cells <= CPU_CELL_ROWS_MAX)
		return cells + 1;
	return min_i(div_up(ncpu, cols - TICK_PREFIX), CPU_TICK_ROWS_MAX) + 1;
}

/*
 * Core bars: cells when they fit in cell_budget rows, else ticks in at most
 * tick_budget rows (at least one).
 */
static void place_cpus(top_layout *L, int ncpu, int cell_budget, int tick_budget)
{
	int cols = L->cols;
	int per_row = cols / TOP_CPU_CELL_W;
	int cell_rows = div_up(ncpu, per_row);
	if (cell_rows <= min_i(cell_budget, CPU_CELL_ROWS_MAX)) {
		L->cpu_style = TOP_CPU_CELLS;
		L->cpu_per_row = per_row;
		L->cpu_rows = cell_rows;
		L->cores_per_tick = 1;
		return;
	}
	int tick_w = cols - TICK_PREFIX;
	int rows = clamp(min_i(tick_budget, CPU_TICK_ROWS_MAX), 1, div_up(ncpu, tick_w));
	L->cpu_style = TOP_CPU_TICKS;
	L->cpu_per_row = tick_w;
	L->cores_per_tick = div_up(ncpu, rows * tick_w);
	L->cpu_rows = div_up(div_up(ncpu, L->cores_per_tick), tick_w);
}

/* GPU block height and how many GPUs get one. Returns the rows the GPU panel takes. */
static int place_gpus(top_layout *L, int ngpu, int ncpu, int avail)
{
	if (ngpu <= 0) {
		L->gpu_rows = 1;
		L->gpus_shown = 0;
		return 1;
	}
	int host_pref = host_pref_rows(L->cols, ncpu);
	for (int h = 4; h >= 2; h--) {
		if (ngpu * h + host_pref + PROCS_PREF <= avail) {
			L->gpu_rows = h;
			L->gpus_shown = ngpu;
			return ngpu * h;
		}
	}
	/* One row each; the host keeps its smallest form and the list one row. */
	int host_min = min_i(div_up(ncpu, L->cols - TICK_PREFIX), 2) + 1;
	L->gpu_rows = 1;
	L->gpus_shown = clamp(avail - host_min - PROCS_MIN, 1, ngpu);
	return L->gpus_shown;
}

static void place_graph(top_layout *L, int gpu_h, int *rest)
{
	if (L->gpus_shown == 0)
		return;
	if (L->cols >= TOP_GRAPH_BESIDE_MIN_COLS) {
		/* Meters first (their fields want about 124 columns); the graph gets the rest. */
		int meters_w = clamp(L->cols - 28, 80, TOP_GPU_METER_MAX_W);
		L->p[TOP_P_GPUS].w = meters_w;
		L->p[TOP_P_GRAPH] = rect(meters_w, 1, L->cols - meters_w, gpu_h);
		L->graph_beside = true;
		L->graph_rows = L->gpu_rows;
		return;
	}
	/* Narrow: a row (or up to three) per GPU under the meters, only with room to spare. */
	int spare = *rest - host_pref_rows(L->cols, 1) - PROCS_PREF;
	int each = min_i(spare / L->gpus_shown, 3);
	if (each < 1)
		return;
	L->p[TOP_P_GRAPH] = rect(0, 1 + gpu_h, L->cols, each * L->gpus_shown);
	L->graph_rows = each;
	*rest -= each * L->gpus_shown;
}

static void place_tree(top_layout *L, bool tree)
{
	top_rect pr = L->p[TOP_P_PROCS];
	if (!tree || pr.h < PROCS_MIN)
		return;
	if (L->cols >= 140) {
		int tw = L->cols * 2 / 5;
		L->p[TOP_P_PROCS].w = L->cols - tw;
		L->p[TOP_P_TREE] = rect(L->cols - tw, pr.y, tw, pr.h);
	} else if (pr.h >= 8) {
		int ph = pr.h / 2;
		L->p[TOP_P_PROCS].h = ph;
		L->p[TOP_P_TREE] = rect(0, pr.y + ph, L->cols, pr.h - ph);
	} else {
		/* No room for both: the tree replaces the list while shown. */
		L->p[TOP_P_TREE] = pr;
		L->p[TOP_P_PROCS] = rect(0, 0, 0, 0);
	}
}

void top_layout_compute(int cols, int rows, int ngpu, int ncpu, bool tree, top_layout *L)
{
	memset(L, 0, sizeof *L);
	L->cols = cols;
	L->rows = rows;
	if (cols < TOP_MIN_COLS || rows < TOP_MIN_ROWS) {
		L->too_small = true;
		return;
	}
	if (ncpu < 1)
		ncpu = 1;
	int avail = rows - 3; /* header, status, keys */
	L->p[TOP_P_HEADER] = rect(0, 0, cols, 1);
	int gpu_h = place_gpus(L, ngpu, ncpu, avail);
	L->p[TOP_P_GPUS] = rect(0, 1, cols, gpu_h);
	int rest = avail - gpu_h;
	place_graph(L, gpu_h, &rest);
	int y = L->p[TOP_P_GRAPH].h && !L->graph_beside ? L->p[TOP_P_GRAPH].y + L->p[TOP_P_GRAPH].h
	                                                : 1 + gpu_h;
	/* Cells get what the list can spare beyond its preferred rows; ticks beyond its minimum. */
	place_cpus(L, ncpu, rest - PROCS_PREF - 1, rest - PROCS_MIN - 1);
	int host_h = L->cpu_rows + 1;
	L->p[TOP_P_HOST] = rect(0, y, cols, host_h);
	y += host_h;
	L->p[TOP_P_PROCS] = rect(0, y, cols, rows - 2 - y);
	place_tree(L, tree);
	L->p[TOP_P_STATUS] = rect(0, rows - 2, cols, 1);
	L->p[TOP_P_KEYS] = rect(0, rows - 1, cols, 1);
}

int top_layout_natural_rows(int cols, int ngpu, int ncpu, int nproc_rows, bool tree, int ntree_rows)
{
	top_layout L;
	for (int rows = TOP_MIN_ROWS; rows < 4000; rows++) {
		top_layout_compute(cols, rows, ngpu, ncpu, tree, &L);
		if (L.too_small)
			return rows; /* too narrow: the caller prints the message */
		if (ngpu > 0 && (L.gpus_shown < ngpu || L.gpu_rows < 2))
			continue;
		if (L.p[TOP_P_PROCS].h - 1 < nproc_rows)
			continue;
		if (tree && L.p[TOP_P_TREE].h - 1 < ntree_rows)
			continue;
		return rows;
	}
	return 4000;
}

top_rect top_layout_box(int cols, int rows, int want_w, int want_h)
{
	int w = clamp(want_w, 1, cols > 2 ? cols - 2 : cols);
	int h = clamp(want_h, 1, rows > 2 ? rows - 2 : rows);
	return rect((cols - w) / 2, (rows - h) / 2, w, h);
}

bool top_rect_overlap(top_rect a, top_rect b)
{
	if (!a.w || !a.h || !b.w || !b.h)
		return false;
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}
