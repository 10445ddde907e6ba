/* top's layout: every size from 40x10 to 300x100, panels inside the screen and apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "top/layout.h"

static bool visible(top_rect r)
{
	return r.w > 0 && r.h > 0;
}

/* Every property a layout must have; fails with the size and counts in the message. */
static void check(int cols, int rows, int ngpu, int ncpu, bool tree)
{
	top_layout L;
	top_layout_compute(cols, rows, ngpu, ncpu, tree, &L);
	char where[96];
	snprintf(where, sizeof where, "%dx%d ngpu=%d ncpu=%d tree=%d", cols, rows, ngpu, ncpu,
	         tree);
	if (L.too_small)
		fail_msg("%s: too small", where);
	for (int i = 0; i < TOP_P__COUNT; i++) {
		top_rect r = L.p[i];
		if (!visible(r))
			continue;
		if (r.x < 0 || r.y < 0 || r.x + r.w > cols || r.y + r.h > rows)
			fail_msg("%s: panel %d (%d,%d %dx%d) leaves the screen", where, i, r.x, r.y,
			         r.w, r.h);
		for (int j = i + 1; j < TOP_P__COUNT; j++)
			if (top_rect_overlap(r, L.p[j]))
				fail_msg("%s: panels %d and %d overlap", where, i, j);
	}
	/* fixed lines */
	if (L.p[TOP_P_HEADER].y != 0 || L.p[TOP_P_HEADER].h != 1 || L.p[TOP_P_HEADER].w != cols)
		fail_msg("%s: header", where);
	if (L.p[TOP_P_STATUS].y != rows - 2 || L.p[TOP_P_STATUS].h != 1)
		fail_msg("%s: status line", where);
	if (L.p[TOP_P_KEYS].y != rows - 1 || L.p[TOP_P_KEYS].h != 1)
		fail_msg("%s: key line", where);
	/* the process list (or the tree in its place) has a title and at least one row */
	top_rect list = visible(L.p[TOP_P_PROCS]) ? L.p[TOP_P_PROCS] : L.p[TOP_P_TREE];
	if (list.h < 2)
		fail_msg("%s: no room for processes (%d rows)", where, list.h);
	if (tree && !visible(L.p[TOP_P_TREE]))
		fail_msg("%s: tree asked for but hidden", where);
	if (!tree && visible(L.p[TOP_P_TREE]))
		fail_msg("%s: tree shown unasked", where);
	/* GPUs */
	top_rect g = L.p[TOP_P_GPUS];
	if (ngpu > 0) {
		if (L.gpus_shown < 1 || L.gpus_shown > ngpu)
			fail_msg("%s: %d GPUs shown", where, L.gpus_shown);
		if (g.h != L.gpus_shown * L.gpu_rows || L.gpu_rows < 1 || L.gpu_rows > 4)
			fail_msg("%s: GPU panel %d rows for %d x %d", where, g.h, L.gpus_shown,
			         L.gpu_rows);
		if (g.w < 40)
			fail_msg("%s: GPU meters only %d wide", where, g.w);
	} else if (g.h != 1 || L.gpus_shown != 0) {
		fail_msg("%s: no-GPU line", where);
	}
	top_rect gr = L.p[TOP_P_GRAPH];
	if (visible(gr) && L.graph_beside &&
	    (gr.y != g.y || gr.h != g.h || L.graph_rows != L.gpu_rows || gr.x != g.x + g.w))
		fail_msg("%s: graph beside the meters is misaligned", where);
	if (visible(gr) && !L.graph_beside && gr.h != L.gpus_shown * L.graph_rows)
		fail_msg("%s: graph below the meters has %d rows", where, gr.h);
	/* host: enough cells or ticks for every core, one line below them */
	top_rect h = L.p[TOP_P_HOST];
	if (L.cpu_rows < 1 || h.h != L.cpu_rows + 1)
		fail_msg("%s: host panel %d rows for %d core rows", where, h.h, L.cpu_rows);
	if (L.cpu_style == TOP_CPU_CELLS) {
		if (L.cpu_per_row * TOP_CPU_CELL_W > cols || L.cpu_per_row * L.cpu_rows < ncpu)
			fail_msg("%s: core cells do not fit", where);
	} else if (L.cpu_per_row + 4 > cols ||
	           (long)L.cpu_per_row * L.cpu_rows * L.cores_per_tick < ncpu) {
		fail_msg("%s: core ticks do not cover the cores", where);
	}
}

static void test_sweep(void **state)
{
	(void)state;
	static const int gpus[] = {0, 1, 2, 8};
	static const int cpus[] = {1, 2, 64};
	for (int cols = TOP_MIN_COLS; cols <= 300; cols++)
		for (int rows = TOP_MIN_ROWS; rows <= 100; rows++)
			for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++)
				for (size_t c = 0; c < sizeof cpus / sizeof *cpus; c++) {
					check(cols, rows, gpus[g], cpus[c], false);
					check(cols, rows, gpus[g], cpus[c], true);
				}
}

/* Odd machines at a coarser step: many GPUs, hundreds of cores. */
static void test_sweep_big_machines(void **state)
{
	(void)state;
	static const int gpus[] = {3, 16, 64};
	static const int cpus[] = {8, 224, 1024};
	for (int cols = TOP_MIN_COLS; cols <= 300; cols += 7)
		for (int rows = TOP_MIN_ROWS; rows <= 100; rows += 3)
			for (size_t g = 0; g < sizeof gpus / sizeof *gpus; g++)
				for (size_t c = 0; c < sizeof cpus / sizeof *cpus; c++)
					for (int t = 0; t < 2; t++)
						check(cols, rows, gpus[g], cpus[c], t);
}

static void test_too_small(void **state)
{
	(void)state;
	top_layout L;
	top_layout_compute(39, 24, 8, 2, false, &L);
	assert_true(L.too_small);
	top_layout_compute(80, 9, 8, 2, false, &L);
	assert_true(L.too_small);
	top_layout_compute(40, 10, 8, 2, false, &L);
	assert_false(L.too_small);
}

static void test_80x24_eight_gpus(void **state)
{
	(void)state;
	top_layout L;
	top_layout_compute(80, 24, 8, 2, false, &L);
	assert_int_equal(L.gpus_shown, 8);
	assert_int_equal(L.gpu_rows, 1);
	assert_true(L.p[TOP_P_PROCS].h >= 6);
	assert_int_equal(L.cpu_style, TOP_CPU_CELLS);
	/* one GPU at 80x24: room for two meter lines and a graph below */
	top_layout_compute(80, 24, 1, 2, false, &L);
	assert_true(L.gpu_rows >= 2);
	assert_true(L.p[TOP_P_GRAPH].h >= 1);
	assert_false(L.graph_beside);
}

static void test_large_terminal(void **state)
{
	(void)state;
	top_layout L;
	top_layout_compute(300, 100, 8, 64, true, &L);
	assert_int_equal(L.gpus_shown, 8);
	assert_int_equal(L.gpu_rows, 4);
	assert_true(L.graph_beside);
	assert_true(L.p[TOP_P_GRAPH].w >= 150);
	assert_int_equal(L.cpu_style, TOP_CPU_CELLS);
	/* the tree sits beside the list */
	assert_int_equal(L.p[TOP_P_TREE].y, L.p[TOP_P_PROCS].y);
	assert_true(L.p[TOP_P_PROCS].h >= 20);
}

static void test_many_cores_merge_into_ticks(void **state)
{
	(void)state;
	top_layout L;
	top_layout_compute(80, 24, 8, 512, false, &L);
	assert_int_equal(L.cpu_style, TOP_CPU_TICKS);
	assert_true(L.cores_per_tick >= 2);
	assert_true((long)L.cpu_per_row * L.cpu_rows * L.cores_per_tick >= 512);
}

static void test_natural_rows(void **state)
{
	(void)state;
	int rows = top_layout_natural_rows(120, 8, 2, 30, false, 0);
	top_layout L;
	top_layout_compute(120, rows, 8, 2, false, &L);
	assert_int_equal(L.gpus_shown, 8);
	assert_true(L.gpu_rows >= 2);
	assert_true(L.p[TOP_P_PROCS].h - 1 >= 30);
	/* the smallest such height: one row less no longer shows everything */
	top_layout_compute(120, rows - 1, 8, 2, false, &L);
	assert_true(L.gpu_rows < 2 || L.p[TOP_P_PROCS].h - 1 < 30 || L.gpus_shown < 8);
	rows = top_layout_natural_rows(120, 2, 2, 3, true, 12);
	top_layout_compute(120, rows, 2, 2, true, &L);
	assert_true(L.p[TOP_P_TREE].h - 1 >= 12);
}

static void test_box_and_overlap(void **state)
{
	(void)state;
	top_rect b = top_layout_box(80, 24, 200, 200);
	assert_true(b.x >= 0 && b.y >= 0 && b.x + b.w <= 80 && b.y + b.h <= 24);
	b = top_layout_box(100, 40, 60, 10);
	assert_int_equal(b.w, 60);
	assert_int_equal(b.x, 20);
	assert_int_equal(b.y, 15);
	assert_true(top_rect_overlap((top_rect){0, 0, 2, 2}, (top_rect){1, 1, 2, 2}));
	assert_false(top_rect_overlap((top_rect){0, 0, 2, 2}, (top_rect){2, 0, 2, 2}));
	assert_false(top_rect_overlap((top_rect){0, 0, 0, 0}, (top_rect){0, 0, 5, 5}));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sweep),
	    cmocka_unit_test(test_sweep_big_machines),
	    cmocka_unit_test(test_too_small),
	    cmocka_unit_test(test_80x24_eight_gpus),
	    cmocka_unit_test(test_large_terminal),
	    cmocka_unit_test(test_many_cores_merge_into_ticks),
	    cmocka_unit_test(test_natural_rows),
	    cmocka_unit_test(test_box_and_overlap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
