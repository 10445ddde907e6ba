/* top's drawing: the canvas (clipping, wide characters) and whole frames at several sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top/render.h"
#include "top/render_int.h"

static bool utf8_locale(void)
{
	return setlocale(LC_CTYPE, "C.UTF-8") != NULL;
}

static char *row(const top_canvas *c, int y)
{
	static char buf[4096];
	top_canvas_row(c, y, buf, sizeof buf);
	return buf;
}

/* The whole canvas as text, rows joined by newlines (caller frees). */
static char *text_of(const top_canvas *c)
{
	size_t len = (size_t)c->rows * ((size_t)c->cols * 4 + 1) + 1;
	char *out = calloc(1, len);
	for (int y = 0; y < c->rows; y++) {
		strcat(out, row(c, y));
		strcat(out, "\n");
	}
	return out;
}

static void test_canvas_clip_and_wide(void **state)
{
	(void)state;
	if (!utf8_locale())
		skip();
	top_canvas c;
	assert_int_equal(top_canvas_init(&c, 10, 2, true), 0);
	top_rect clip = {2, 0, 5, 1};
	int end = top_put(&c, clip, 2, 0, TOP_S_NORMAL, "abcdefgh");
	assert_int_equal(end, 10);
	assert_string_equal(row(&c, 0), "  abcde");
	/* nothing lands outside the clip, not even on the next row */
	assert_string_equal(row(&c, 1), "");
	top_canvas_clear(&c);
	/* a two-column character takes two cells; half of one is not drawn */
	top_put(&c, (top_rect){0, 0, 10, 2}, 0, 0, TOP_S_NORMAL, "\xe6\x97\xa5x");
	assert_int_equal(c.cell[1].ch, TOP_WCONT);
	assert_string_equal(row(&c, 0), "\xe6\x97\xa5x");
	top_put(&c, (top_rect){0, 1, 3, 1}, 2, 1, TOP_S_NORMAL, "\xe6\x97\xa5");
	assert_string_equal(row(&c, 1), "");
	/* overwriting half of a wide character blanks its other half */
	top_putw(&c, (top_rect){0, 0, 10, 2}, 1, 0, TOP_S_NORMAL, L'y');
	assert_string_equal(row(&c, 0), " yx");
	/* control bytes and broken UTF-8 become '?', never raw bytes on the terminal */
	top_canvas_clear(&c);
	top_put(&c, (top_rect){0, 0, 10, 2}, 0, 0, TOP_S_NORMAL, "a\tb\x1b[\xff");
	assert_string_equal(row(&c, 0), "a?b?[?");
	assert_int_equal(top_text_width(&c, "\xe6\x97\xa5"
	                                    "ab"),
	                 4);
	top_canvas_free(&c);
	setlocale(LC_CTYPE, "C");
}

static void test_canvas_ascii(void **state)
{
	(void)state;
	top_canvas c;
	assert_int_equal(top_canvas_init(&c, 12, 1, false), 0);
	top_put(&c, (top_rect){0, 0, 12, 1}, 0, 0, TOP_S_NORMAL, "caf\xc3\xa9 ok");
	/* without UTF-8 every byte above ASCII is a '?' column of its own */
	assert_string_equal(row(&c, 0), "caf?? ok");
	top_canvas_free(&c);
}

/* ------------------------------------------------------------------ frames */

typedef struct {
	top_model m;
	snapshot s;
} world;

static void setv(gpu_values *v, gpu_metric_id id, double x)
{
	v->v[id] = x;
	v->ok[id] = 1;
}

/* Two GPUs (NVML 0 and 1), 4 cores, 3 processes; GPU 1 has no power reading. */
static void make_world(world *w, int nsamples)
{
	top_gpu_info g[2] = {{.index = 0,
	                      .name = "NVIDIA H100 80GB HBM3",
	                      .uuid = "GPU-aaaa",
	                      .pci_bus_id = "00000000:1B:00.0"},
	                     {.index = 1,
	                      .name = "NVIDIA H100 80GB HBM3",
	                      .uuid = "GPU-bbbb",
	                      .pci_bus_id = "00000000:43:00.0"}};
	top_model_init(&w->m, 2, g);
	for (int k = 0; k < nsamples; k++) {
		snapshot *s = &w->s;
		snapshot_init(s, 2);
		s->t_wall = 1700000000 + k;
		for (int i = 0; i < 2; i++) {
			gpu_values *v = &s->gpu[i];
			setv(v, GM_UTIL_GPU, i == 0 ? 97 : 12);
			setv(v, GM_MEM_USED, 40960);
			setv(v, GM_MEM_TOTAL, 81559);
			setv(v, GM_TEMP_GPU, 61);
			setv(v, GM_CLK_SM, 1980);
			setv(v, GM_CLK_MAX_SM, 1980);
			setv(v, GM_PCIE_GEN_CUR, i == 0 ? 5 : 3);
			setv(v, GM_PCIE_GEN_MAX, 5);
			setv(v, GM_PCIE_WIDTH_CUR, 16);
			setv(v, GM_PCIE_WIDTH_MAX, 16);
			if (i == 0) {
				setv(v, GM_POWER_DRAW, 650);
				setv(v, GM_POWER_ENFORCED_LIMIT, 700);
				setv(v, GM_GPM_SM_ACTIVE, 71);
			}
		}
		snapshot_set_ncpu(s, 4);
		for (int c = 0; c < 4; c++)
			s->cpu_busy[c] = c == 3 ? 100 : 5;
		s->h[HM_MEM_USED] = 8000;
		s->h[HM_MEM_TOTAL] = 64000;
		const char *cmds[] = {"python train.py", "ollama serve",
		                      "\xe6\x97\xa5\xe6\x9c\xac job"};
		for (int p = 0; p < 3; p++) {
			tl_proc *t = snapshot_add_proc(s);
			t->pid = 100 + p;
			t->ppid = 1;
			t->gpu = p == 1;
			t->alive = true;
			t->gpu_mem_mib = 1024.0 * (p + 1);
			t->cpu_pct = p == 0 ? 100 : NAN;
			snprintf(t->user, sizeof t->user, "user%d", p);
			snprintf(t->cmd, sizeof t->cmd, "%s", cmds[p]);
		}
		top_model_ingest(&w->m, s);
		snapshot_free(s);
	}
	top_model_refresh(&w->m);
}

static char *frame(world *w, int cols, int rows, bool utf8, const top_input *in, top_canvas *c)
{
	top_layout L;
	top_layout_compute(cols, rows, top_model_gpus_shown(&w->m), 4, w->m.tree, &L);
	assert_int_equal(top_canvas_init(c, cols, rows, utf8), 0);
	top_frame f = {
	    .m = &w->m, .L = &L, .in = in, .hostname = "node7", .interval_ns = 1000000000LL};
	top_render(c, &f);
	return text_of(c);
}

static void test_frame_80x24(void **state)
{
	(void)state;
	if (!utf8_locale())
		skip();
	world w;
	make_world(&w, 5);
	top_canvas c;
	char *t = frame(&w, 80, 24, true, NULL, &c);
	assert_non_null(strstr(t, "gpuwhy top  2 GPUs"));
	assert_non_null(strstr(t, "every 1 s  on node7"));
	assert_non_null(strstr(t, "GPU 0"));
	assert_non_null(strstr(t, "GPU 1"));
	assert_non_null(strstr(t, " 97%"));
	/* an absent reading says so, never 0, and carries no unit */
	assert_non_null(strstr(t, "\xe2\x96\x8f n/a  temp"));
	assert_null(strstr(t, "n/aW"));
	assert_non_null(strstr(t, "650/700W"));
	/* a link below its maximum is spelled out */
	assert_non_null(strstr(t, "Gen3x16<Gen5x16"));
	/* processes with their columns; unknown CPU % is n/a */
	assert_non_null(strstr(t, "python train.py"));
	assert_non_null(strstr(t, "user1"));
	assert_non_null(strstr(t, "\xe6\x97\xa5\xe6\x9c\xac job"));
	assert_non_null(strstr(t, "PID"));
	assert_non_null(strstr(t, "COMMAND"));
	/* the saturated core is drawn as a full bar with 100 */
	assert_non_null(strstr(t, "100"));
	assert_non_null(strstr(t, "q quit"));
	/* the selected row is reverse video */
	int sel_y = -1;
	for (int y = 0; y < 24; y++)
		if (strstr(row(&c, y), "python train.py"))
			sel_y = y;
	assert_true(sel_y > 0);
	assert_int_equal(c.cell[sel_y * 80 + 2].style, TOP_S_SEL);
	free(t);
	top_canvas_free(&c);
	top_model_free(&w.m);
	setlocale(LC_CTYPE, "C");
}

static void test_frame_ascii_only(void **state)
{
	(void)state;
	world w;
	make_world(&w, 30);
	w.m.tree = true;
	top_canvas c;
	for (int cols = 40; cols <= 200; cols += 40) {
		char *t = frame(&w, cols, 30, false, NULL, &c);
		for (const unsigned char *p = (const unsigned char *)t; *p; p++)
			if (*p >= 0x80)
				fail_msg("%dx30: non-ASCII byte 0x%02x in an ASCII frame", cols,
				         *p);
		assert_non_null(strstr(t, "tree of PID"));
		free(t);
		top_canvas_free(&c);
	}
	top_model_free(&w.m);
}

static void test_history_graph(void **state)
{
	(void)state;
	if (!utf8_locale())
		skip();
	world w;
	make_world(&w, 40);
	top_canvas c;
	char *t = frame(&w, 160, 40, true, NULL, &c);
	/* wide: the graph beside the meters, full blocks for GPU 0 at 97 % */
	top_layout L;
	top_layout_compute(160, 40, 2, 4, false, &L);
	assert_true(L.graph_beside);
	top_rect g = L.p[TOP_P_GRAPH];
	int full = 0;
	for (int x = g.x; x < g.x + g.w; x++)
		full += c.cell[(g.y + L.graph_rows - 1) * 160 + x].ch == L'\x2588';
	/* one column per sample, newest on the right, as many as fit (a gap column first) */
	assert_int_equal(full, g.w - 1 < 40 ? g.w - 1 : 40);
	assert_int_equal(c.cell[(g.y + L.graph_rows - 1) * 160 + g.x].ch, L' ');
	assert_non_null(strstr(t, "util history"));
	free(t);
	top_canvas_free(&c);
	top_model_free(&w.m);
	setlocale(LC_CTYPE, "C");
}

static void test_status_and_help(void **state)
{
	(void)state;
	world w;
	make_world(&w, 3);
	w.m.nfindings = 2;
	w.m.findings[0] = (top_finding){
	    TOP_SEV_WARN,
	    "GPU 0 idle 45 % of the last 30 s while core 3 is at 100 %: data-starved?"};
	w.m.findings[1] =
	    (top_finding){TOP_SEV_ERROR,
	                  "GPU 1 fell off the bus: gpu-lost? and a long tail of words that goes on "
	                  "beyond the width of the help box so that it has to wrap: end"};
	top_canvas c;
	char *t = frame(&w, 120, 30, false, NULL, &c);
	assert_non_null(strstr(row(&c, 28), "data-starved?"));
	assert_non_null(strstr(row(&c, 28), "(+1 more: h)"));
	assert_int_equal(c.cell[28 * 120].style, TOP_S_WARN);
	free(t);
	top_canvas_free(&c);
	/* the help box lists the keys and every finding */
	top_input in = {.mode = TOP_IN_HELP};
	t = frame(&w, 120, 30, false, &in, &c);
	assert_non_null(strstr(t, "any key closes"));
	assert_non_null(strstr(t, "sort processes by the next column"));
	assert_non_null(strstr(t, "fell off the bus"));
	assert_non_null(strstr(t, "wrap: end")); /* wrapped, not cut */
	free(t);
	top_canvas_free(&c);
	/* a finding longer than the status line is cut visibly, the count stays */
	snprintf(w.m.findings[0].text, sizeof w.m.findings[0].text, "%s",
	         "GPU 0 waits in step for GPU 1 (utilization 18 % vs 70 %), 3 times; the link "
	         "between the GPUs is unknown: sync-wait?");
	t = frame(&w, 80, 24, false, NULL, &c);
	const char *st = row(&c, 22);
	assert_non_null(strstr(st, "...  (+1 more: h)"));
	free(t);
	top_canvas_free(&c);
	/* a prompt takes the status line */
	in = (top_input){.mode = TOP_IN_FILTER, .buf = "trai", .len = 4};
	t = frame(&w, 120, 30, false, &in, &c);
	assert_non_null(strstr(row(&c, 28), "filter: trai"));
	assert_non_null(strstr(row(&c, 29), "Esc clear"));
	free(t);
	top_canvas_free(&c);
	top_model_free(&w.m);
}

static void test_too_small_and_hits(void **state)
{
	(void)state;
	world w;
	make_world(&w, 2);
	top_canvas c;
	char *t = frame(&w, 30, 8, false, NULL, &c);
	assert_non_null(strstr(t, "terminal too small (30x8)"));
	assert_non_null(strstr(t, "need 40x10; q quits"));
	free(t);
	top_canvas_free(&c);
	/* clicks: a column title sorts, a row selects */
	top_layout L;
	top_layout_compute(120, 30, 2, 4, false, &L);
	top_rect p = L.p[TOP_P_PROCS];
	bool header;
	assert_int_equal(top_render_hit_row(&L, &w.m, 5, p.y + 2, &header), 1);
	assert_false(header);
	top_render_hit_row(&L, &w.m, 5, p.y, &header);
	assert_true(header);
	assert_int_equal(top_render_hit_column(&L, p.x + 1), TOP_SORT_PID);
	assert_int_equal(top_render_hit_column(&L, p.x + 70), TOP_SORT_CMD);
	assert_int_equal(top_render_hit_row(&L, &w.m, 5, 0, &header), -1);
	assert_int_equal(top_render_proc_rows(&L), p.h - 1);
	top_model_free(&w.m);
}

static void test_every_size_draws(void **state)
{
	(void)state;
	/* Drawing at any size stays on the canvas (ASan watches) and fills the fixed lines. */
	world w;
	make_world(&w, 10);
	w.m.tree = true;
	top_canvas c;
	for (int cols = 40; cols <= 300; cols += 13)
		for (int rows = 10; rows <= 100; rows += 9) {
			char *t = frame(&w, cols, rows, false, NULL, &c);
			if (!strstr(row(&c, 0), "gpuwhy top") ||
			    !strstr(row(&c, rows - 1), "q quit"))
				fail_msg("%dx%d: header or key line missing", cols, rows);
			free(t);
			top_canvas_free(&c);
		}
	top_model_free(&w.m);
}

static void test_gpu_name_whole_words(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int cols;
		const char *want;
	} cases[] = {
	    {"NVIDIA H100 80GB HBM3", 16, "H100 80GB HBM3"},
	    {"NVIDIA H100 80GB HBM3", 12, "H100 80GB"},
	    {"NVIDIA H100 80GB HBM3", 8, "H100"},
	    {"NVIDIA H100 80GB HBM3", 3, ""},
	    {"NVIDIA GeForce RTX 4090", 16, "GeForce RTX 4090"},
	    {"NVIDIA GeForce RTX 4090", 12, "RTX 4090"},
	    {"NVIDIA GeForce RTX 4090", 7, "RTX"},
	    {"NVIDIA A100-SXM4-80GB", 12, "A100-SXM4"},
	    {"NVIDIA L4", 12, "L4"},
	    {"Tesla", 12, "Tesla"},
	    {"GeForce", 4, ""},
	};
	char out[96];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		top_r_gpu_name(out, sizeof out, cases[i].name, cases[i].cols);
		if (strcmp(out, cases[i].want))
			fail_msg("'%s' in %d columns: '%s', want '%s'", cases[i].name,
			         cases[i].cols, out, cases[i].want);
	}
}

/*
 * Whether t holds a start of words of name cut inside a word and then ended
 * (a space or the end of a row): "H100 80GB HB " for "H100 80GB HBM3".
 */
static const char *cut_inside_word(const char *t, const char *name)
{
	static char frag[128];
	size_t n = strlen(name);
	for (size_t j = 0; j < n; j++) {
		if (j && name[j - 1] != ' ')
			continue;
		for (size_t i = j + 3; i < n; i++) {
			if (name[i] == ' ' || name[i - 1] == ' ')
				continue;
			for (const char *end = " \n"; *end; end++) {
				snprintf(frag, sizeof frag, "%.*s%c", (int)(i - j), name + j, *end);
				if (strstr(t, frag))
					return frag;
			}
		}
	}
	return NULL;
}

static void test_gpu_names_not_cut(void **state)
{
	(void)state;
	world w;
	make_world(&w, 10);
	snprintf(w.m.gpu[1].name, sizeof w.m.gpu[1].name, "NVIDIA GeForce RTX 4090");
	top_canvas c;
	for (int cols = 40; cols <= 300; cols += 7)
		for (int rows = 10; rows <= 60; rows += 25) {
			char *t = frame(&w, cols, rows, false, NULL, &c);
			const char *bad = cut_inside_word(t, "H100 80GB HBM3");
			if (!bad)
				bad = cut_inside_word(t, "GeForce RTX 4090");
			if (bad)
				fail_msg("%dx%d: a name cut inside a word: '%s'\n%s", cols, rows,
				         bad, t);
			if (cols == 80 && rows == 35 &&
			    (!strstr(t, "H100 80GB ") || !strstr(t, "RTX 4090")))
				fail_msg("80x35: the names' first words are missing\n%s", t);
			free(t);
			top_canvas_free(&c);
		}
	top_model_free(&w.m);
}

/* Every label of the host table that the host line prints reaches the catalogue. */
static void test_host_labels_listed(void **state)
{
	(void)state;
	for (int id = 0; id < HM__COUNT; id++) {
		const char *l = host_metrics[id].label;
		if (l[0] && !top_r_host_label_listed(l))
			fail_msg("host label '%s' (%s) is not in render_host.c's list", l,
			         host_metrics[id].key);
	}
}

/* Text without spaces (Chinese) wraps in the help box between characters, whole and in the box. */
static void test_help_wraps_chinese(void **state)
{
	(void)state;
	if (!utf8_locale())
		skip();
	world w;
	make_world(&w, 3);
	w.m.nfindings = 1;
	/* 显存占满但计算空闲 ten times: 180 columns, no space to break at */
	char text[TOP_FINDING_LEN] = "";
	for (int i = 0; i < 10; i++)
		strcat(text, "\xe6\x98\xbe\xe5\xad\x98\xe5\x8d\xa0\xe6\xbb\xa1\xe4\xbd\x86"
		             "\xe8\xae\xa1\xe7\xae\x97\xe7\xa9\xba\xe9\x97\xb2");
	char zh[TOP_FINDING_LEN];
	snprintf(zh, sizeof zh, "%s", text);
	strcat(text, ": memory-full-idle?");
	w.m.findings[0] = (top_finding){TOP_SEV_WARN, ""};
	snprintf(w.m.findings[0].text, sizeof w.m.findings[0].text, "%s", text);
	top_input in = {.mode = TOP_IN_HELP};
	top_canvas c;
	char *t = frame(&w, 80, 40, true, &in, &c);
	/* Join the box's inner rows after the findings heading: the whole text, in order. */
	char joined[2048] = "";
	bool in_findings = false;
	for (int y = 0; y < 40; y++) {
		const char *r = row(&c, y);
		if (strstr(r, "findings over the last")) {
			in_findings = true;
			continue;
		}
		if (!in_findings)
			continue;
		const char *v = strstr(r, "\xe2\x94\x82"); /* the box's left edge */
		if (!v)
			continue;
		v += 3;
		while (*v == ' ')
			v++;
		char piece[512];
		snprintf(piece, sizeof piece, "%s", v);
		char *edge = strstr(piece, "\xe2\x94\x82");
		if (edge)
			*edge = '\0';
		size_t n = strlen(piece);
		while (n && piece[n - 1] == ' ')
			piece[--n] = '\0';
		strcat(joined, piece);
	}
	/* (the line may break at the space before the id) */
	if (!strstr(joined, zh) || !strstr(joined, "memory-full-idle?"))
		fail_msg("the finding is not whole in the help box: %s", joined);
	free(t);
	top_canvas_free(&c);
	top_model_free(&w.m);
	setlocale(LC_CTYPE, "C");
}

/* A new sample for the world: GPU 0's values move with k, GPU 1's hold still. */
static void push_sample(world *w, int k)
{
	snapshot s;
	snapshot_init(&s, 2);
	top_snapshot_copy(&s, top_model_shown(&w->m));
	s.t_wall += 1;
	setv(&s.gpu[0], GM_UTIL_GPU, 40 + (k * 37) % 60);
	setv(&s.gpu[0], GM_TEMP_GPU, 60 + k % 3);
	if (k % 4 == 3)
		s.gpu[0].ok[GM_POWER_DRAW] = 0;
	for (int c = 0; c < s.ncpu; c++)
		s.cpu_busy[c] = (k * 13 + c * 7) % 100;
	top_model_ingest(&w->m, &s);
	snapshot_free(&s);
	top_model_refresh(&w->m);
}

/* Cell by cell, with the position of the first difference. */
static void assert_same_canvas(const top_canvas *a, const top_canvas *b, const char *what)
{
	assert_int_equal(a->cols, b->cols);
	assert_int_equal(a->rows, b->rows);
	for (int i = 0; i < a->cols * a->rows; i++)
		if (a->cell[i].ch != b->cell[i].ch || a->cell[i].style != b->cell[i].style)
			fail_msg(
			    "%s: cell %d,%d differs ('%lc' style %d, drawn whole: '%lc' style %d)",
			    what, i % a->cols, i / a->cols, (wint_t)a->cell[i].ch, a->cell[i].style,
			    (wint_t)b->cell[i].ch, b->cell[i].style);
}

/*
 * Frames drawn over the last one (with a memo) are exactly the frames drawn
 * whole, through new samples, a GPU that holds still, the help box, a
 * resize, a GPU selection, the tree and a prompt; and unchanged GPU blocks
 * are really kept.
 */
static void test_memo_draws_the_same(void **state)
{
	(void)state;
	bool utf8 = utf8_locale();
	world w;
	make_world(&w, 3);
	top_render_memo memo = {0};
	top_canvas kept = {0};
	int sizes[][2] = {{120, 30}, {160, 50}, {80, 24}};
	char err[96];
	for (int k = 0; k < 24; k++) {
		int cols = sizes[k / 8][0], rows = sizes[k / 8][1];
		if (kept.cols != cols || kept.rows != rows) {
			top_canvas_free(&kept);
			assert_int_equal(top_canvas_init(&kept, cols, rows, utf8), 0);
		}
		push_sample(&w, k);
		top_input in = {.mode = k % 8 == 5 ? TOP_IN_HELP : TOP_IN_NORMAL};
		if (k % 8 == 6)
			in = (top_input){.mode = TOP_IN_FILTER, .buf = "py", .len = 2};
		if (k % 8 == 3)
			w.m.tree = !w.m.tree;
		if (k == 12)
			assert_true(top_model_set_gpus(&w.m, "1", err, sizeof err));
		if (k == 15)
			assert_true(top_model_set_gpus(&w.m, "all", err, sizeof err));
		if (k % 5 == 2)
			top_model_move(&w.m, 1, 5);
		top_layout L;
		top_layout_compute(cols, rows, top_model_gpus_shown(&w.m), 4, w.m.tree, &L);
		top_frame f = {.m = &w.m,
		               .L = &L,
		               .in = &in,
		               .hostname = "node7",
		               .interval_ns = 1000000000LL,
		               .message = k % 8 == 1 ? "a passing message, longer than the status "
		                                       "line that follows it on the next frame"
		                                     : NULL,
		               .memo = &memo};
		top_render(&kept, &f);
		top_canvas whole;
		assert_int_equal(top_canvas_init(&whole, cols, rows, utf8), 0);
		f.memo = NULL;
		top_render(&whole, &f);
		char what[64];
		snprintf(what, sizeof what, "frame %d at %dx%d", k, cols, rows);
		assert_same_canvas(&kept, &whole, what);
		top_canvas_free(&whole);
	}
	/* GPU 1 holds still: most of its frames kept its block */
	assert_true(memo.kept >= 8);
	assert_true(memo.redrawn >= 24);
	top_canvas_free(&kept);
	top_model_free(&w.m);
	if (utf8)
		setlocale(LC_CTYPE, "C");
}

/* A GPU block's key holds every value it shows: a value outside the key changes nothing drawn. */
static void test_memo_key_is_complete(void **state)
{
	(void)state;
	world w;
	make_world(&w, 2);
	int sizes[][2] = {{160, 50}, {80, 24}, {200, 60}, {120, 20}};
	for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
		int cols = sizes[z][0], rows = sizes[z][1];
		top_layout L;
		top_layout_compute(cols, rows, 2, 4, false, &L);
		top_frame f = {.m = &w.m, .L = &L, .hostname = "n", .interval_ns = 1000000000LL};
		top_canvas ref, c;
		assert_int_equal(top_canvas_init(&ref, cols, rows, false), 0);
		top_render(&ref, &f);
		snapshot *s = (snapshot *)top_model_shown(&w.m);
		for (int id = 0; id < GM__COUNT; id++) {
			if (top_r_gpu_metric_drawn((gpu_metric_id)id))
				continue;
			gpu_values saved = s->gpu[0];
			setv(&s->gpu[0], (gpu_metric_id)id, 3.0 + id);
			assert_int_equal(top_canvas_init(&c, cols, rows, false), 0);
			top_render(&c, &f);
			char what[96];
			snprintf(what, sizeof what, "metric %d (%s) at %dx%d", id,
			         gpu_metrics[id].key, cols, rows);
			assert_same_canvas(&c, &ref, what);
			top_canvas_free(&c);
			s->gpu[0] = saved;
		}
		top_canvas_free(&ref);
	}
	top_model_free(&w.m);
}

/* The hand-made "%.0f" writes exactly what snprintf writes: ties, signs, widths, truncation. */
static void test_fmt_f0_matches_snprintf(void **state)
{
	(void)state;
	static const char *fmts[] = {"%.0f",  "%3.0f%%", "%4.0f",  "%4.0fMHz", "P%.0f",
	                             "%.0fC", "%.0fM",   "%.0f%%", "%.0fK",    "%.1f"};
	static const double special[] = {0.0,
	                                 -0.0,
	                                 0.5,
	                                 1.5,
	                                 2.5,
	                                 -0.5,
	                                 -1.5,
	                                 -0.4,
	                                 0.49999999999999994,
	                                 99.5,
	                                 100.5,
	                                 1e15,
	                                 1e15 - 0.5,
	                                 123456789012.5,
	                                 -98765.49,
	                                 INFINITY,
	                                 -INFINITY,
	                                 NAN};
	uint64_t r = 0x9e3779b97f4a7c15u;
	for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++)
		for (int i = 0; i < 2000; i++) {
			double v;
			if (i < (int)(sizeof special / sizeof *special)) {
				v = special[i];
			} else {
				r ^= r << 13;
				r ^= r >> 7;
				r ^= r << 17;
				double scale = (double)(1ull << (r % 40)) / 16;
				v = ((double)(r >> 11) / 9007199254740992.0 - 0.25) * scale;
				if (i % 3 == 0)
					v = rint(v * 2) / 2; /* exact halves */
			}
			for (size_t len = 0; len <= 12; len += 3) {
				char want[16] = "untouched", got[16] = "untouched";
				snprintf(want, len, fmts[f], v);
				top_r_fmt_f0(got, len, fmts[f], v);
				if (strcmp(want, got) != 0)
					fail_msg("%s of %.17g (len %zu): \"%s\", snprintf \"%s\"",
					         fmts[f], v, len, got, want);
			}
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fmt_f0_matches_snprintf),
	    cmocka_unit_test(test_canvas_clip_and_wide),
	    cmocka_unit_test(test_canvas_ascii),
	    cmocka_unit_test(test_frame_80x24),
	    cmocka_unit_test(test_frame_ascii_only),
	    cmocka_unit_test(test_history_graph),
	    cmocka_unit_test(test_status_and_help),
	    cmocka_unit_test(test_too_small_and_hits),
	    cmocka_unit_test(test_every_size_draws),
	    cmocka_unit_test(test_help_wraps_chinese),
	    cmocka_unit_test(test_host_labels_listed),
	    cmocka_unit_test(test_gpu_name_whole_words),
	    cmocka_unit_test(test_gpu_names_not_cut),
	    cmocka_unit_test(test_memo_draws_the_same),
	    cmocka_unit_test(test_memo_key_is_complete),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
