/* test_fleet_html.c - the fleet's heat map and its HTML and CSV faces: columns bounded for a
 * 1,000-GPU day, each cell the state most of its samples had, a lost GPU in its own row and
 * column, a page that is self-contained, escaped and small, and CSV that parses back. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fleet/fleet.h"
#include "html_check.h"
#include "util/xalloc.h"

typedef struct {
	prom_fleet fl;
	fleet_report r;
} fake;

/* nodes x gpus GPUs over hours at step, all busy; node 0 is named name0. */
static void fake_new(fake *f, int nodes, int gpus, double hours, double step, const char *name0)
{
	memset(f, 0, sizeof *f);
	f->fl.from = 1.8e9;
	f->fl.step = step;
	f->fl.to = f->fl.from + hours * 3600;
	f->fl.n = (int)lround(hours * 3600 / step) + 1;
	f->fl.nnodes = nodes;
	f->fl.node = gw_xcalloc((size_t)nodes, sizeof *f->fl.node);
	f->r.states = gw_xcalloc((size_t)nodes, sizeof *f->r.states);
	f->r.nstates = nodes;
	for (int k = 0; k < nodes; k++) {
		prom_node *nd = &f->fl.node[k];
		if (k == 0 && name0)
			snprintf(nd->host, sizeof nd->host, "%s", name0);
		else
			snprintf(nd->host, sizeof nd->host, "node%03d", k + 1);
		snprintf(nd->host_label, sizeof nd->host_label, "Hostname");
		nd->tl = tl_new(gpus, 0);
		for (int g = 0; g < gpus; g++)
			nd->gpus[g].gpu = g;
		f->r.states[k] = gw_xcalloc((size_t)gpus * f->fl.n, 1);
		memset(f->r.states[k], FS_BUSY, (size_t)gpus * f->fl.n);
	}
	f->r.ngpus = nodes * gpus;
	f->r.total.h[FS_BUSY] = f->r.ngpus * hours;
}

static void fake_set(fake *f, int k, int g, int a, int b, fleet_state st)
{
	for (int s = a; s < b && s < f->fl.n; s++)
		f->r.states[k][(size_t)g * f->fl.n + s] = (unsigned char)st;
}

static void fake_free(fake *f)
{
	for (int k = 0; k < f->fl.nnodes; k++)
		tl_free(f->fl.node[k].tl);
	free(f->fl.node);
	fleet_report_free(&f->r);
}

static char *render_csv(fake *f, fleet_csv table, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	assert_non_null(m);
	fleet_opts o = {.by = FLEET_BY_NODE, .csv = table, .window_s = 3600};
	fleet_render_csv(&f->fl, &o, &f->r, m);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static char *render(fake *f, bool html, size_t *len)
{
	char *buf = NULL;
	FILE *m = open_memstream(&buf, len);
	assert_non_null(m);
	fleet_opts o = {.by = FLEET_BY_NODE, .window_s = 3600, .localize = true};
	if (html)
		fleet_render_html(&f->fl, &o, &f->r, m);
	else
		fleet_render_csv(&f->fl, &o, &f->r, m);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static void test_columns_bounded(void **state)
{
	(void)state;
	int per;
	/* 24 h at 15 s: 5,761 samples into at most 288 columns covering all of them */
	int n = 24 * 240 + 1, c = fleet_heat_cols(n, &per);
	assert_true(c <= FLEET_HEAT_COLS);
	assert_true((long)c * per >= n && (long)(c - 1) * per < n);
	assert_int_equal(fleet_heat_cols(288, &per), 288);
	assert_int_equal(per, 1);
	assert_int_equal(fleet_heat_cols(289, &per), 145);
	assert_int_equal(per, 2);
	assert_int_equal(fleet_heat_cols(0, &per), 0);
}

static void test_cell_majority(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 1, 2, 1, 60, NULL); /* 61 samples */
	fake_set(&f, 0, 0, 0, 4, FS_IDLE_EMPTY);
	assert_int_equal(fleet_heat_cell(&f.r, f.fl.n, 0, 0, 0, 10), FS_BUSY);
	fake_set(&f, 0, 0, 4, 6, FS_IDLE_EMPTY);
	assert_int_equal(fleet_heat_cell(&f.r, f.fl.n, 0, 0, 0, 10), FS_IDLE_EMPTY);
	/* a tie goes to the worse state */
	fake_set(&f, 0, 1, 0, 5, FS_LOST);
	assert_int_equal(fleet_heat_cell(&f.r, f.fl.n, 0, 1, 0, 10), FS_LOST);
	/* no data wins only when most samples had none; the cell past the end holds one */
	fake_set(&f, 0, 1, 10, 16, FS_NODATA);
	assert_int_equal(fleet_heat_cell(&f.r, f.fl.n, 0, 1, 10, 20), FS_NODATA);
	assert_int_equal(fleet_heat_cell(&f.r, f.fl.n, 0, 1, 60, 70), FS_BUSY);
	fake_free(&f);
}

/* The runs of class s-<state> on a row of the page: their [from, to) columns. */
static int runs(const char *html, const char *state, int row, int *from, int *to, int max)
{
	char cls[64];
	snprintf(cls, sizeof cls, "class=\"s-%s\"", state);
	int n = 0;
	for (const char *p = html; (p = strstr(p, cls)); p++) {
		const char *d = strstr(p, " d=\"") + 4, *end = strchr(d, '"');
		while (d < end) {
			int c, r, len, used;
			assert_int_equal(sscanf(d, "M%d %d.5h%d%n", &c, &r, &len, &used), 3);
			if (r == row && n < max) {
				from[n] = c;
				to[n++] = c + len;
			}
			d += used;
		}
	}
	return n;
}

/* 1,000 GPUs over 24 h at 15 s: the page is valid, self-contained and small; a lost GPU and
 * a thermal episode are where they happened. */
static void test_fleet_page(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 125, 8, 24, 15, "<gpu&\"a\">");
	int n = f.fl.n, per, cols = fleet_heat_cols(n, &per);
	/* Every GPU idles a few times a day, at times of its own. */
	for (int k = 0; k < 125; k++)
		for (int g = 0; g < 8; g++)
			for (int e = 0; e < 4; e++) {
				int a = (k * 131 + g * 977 + e * 1543) % n;
				fake_set(&f, k, g, a, a + 120 + 40 * g, FS_IDLE_EMPTY);
			}
	/* node 42's GPU 5 is lost from noon; node 7's GPU 2 throttled 02:00 to 04:00 */
	fake_set(&f, 41, 5, n / 2, n, FS_LOST);
	fake_set(&f, 6, 2, 2 * 240, 4 * 240, FS_THROTTLED);
	size_t len;
	char *html = render(&f, true, &len);
	const char *bad = html_check(html);
	if (bad)
		fail_msg("%s", bad);
	assert_true(cols <= FLEET_HEAT_COLS);
	char attr[96];
	snprintf(attr, sizeof attr, "data-cols=\"%d\" data-rows=\"1000\"", cols);
	assert_non_null(strstr(html, attr));
	/* small: well under what one element per cell would take */
	assert_true(len < 1500000);
	/* the hostile node name only ever appears escaped */
	assert_null(strstr(html, "<gpu&"));
	assert_non_null(strstr(html, "&lt;gpu&amp;&quot;a&quot;&gt;"));
	/* 125 node groups, and every row covered by exactly cols cells */
	int groups = 0;
	for (const char *p = html; (p = strstr(p, "<g class=\"node\"")); p++)
		groups++;
	assert_int_equal(groups, 125);
	int from[64], to[64];
	static const char *const st[] = {"lost", "throttled",           "power-capped",
	                                 "busy", "idle-holding-memory", "idle-empty"};
	for (int row = 0; row < 1000; row += 37) {
		int cells = 0;
		for (size_t s = 0; s < sizeof st / sizeof *st; s++) {
			int nr = runs(html, st[s], row, from, to, 64);
			for (int i = 0; i < nr; i++)
				cells += to[i] - from[i];
		}
		assert_int_equal(cells, cols);
	}
	/* the lost GPU: row 41 * 8 + 5, from the column holding noon to the end; no other */
	int nr = runs(html, "lost", 41 * 8 + 5, from, to, 64);
	assert_int_equal(nr, 1);
	assert_int_equal(from[0], (n / 2) / per);
	assert_int_equal(to[0], cols);
	assert_int_equal(runs(html, "lost", 41 * 8 + 4, from, to, 64), 0);
	nr = runs(html, "throttled", 6 * 8 + 2, from, to, 64);
	assert_int_equal(nr, 1);
	assert_true(abs(from[0] - 480 / per) <= 1);
	assert_true(abs(to[0] - 960 / per) <= 1);
	free(html);
	fake_free(&f);
}

/* What exporters found themselves: a table of its own on the page (escaped, not counted as
 * fleet's findings), an array in JSON, nothing of either when there is none. */
static void test_own_findings(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 2, 2, 1, 60, "gpu-a");
	size_t len;
	char *html = render(&f, true, &len);
	assert_null(strstr(html, "gpuwhy_finding"));
	free(html);
	f.fl.nown = 2;
	f.fl.own = gw_xcalloc(2, sizeof *f.fl.own);
	f.fl.own[0] = (prom_own_finding){
	    .node = 0, .gpu = 1, .t0 = f.fl.from + 60, .t1 = f.fl.from + 600, .samples = 10};
	snprintf(f.fl.own[0].rule, sizeof f.fl.own[0].rule, "throttled");
	snprintf(f.fl.own[0].severity, sizeof f.fl.own[0].severity, "error");
	f.fl.own[1] =
	    (prom_own_finding){.node = 1, .gpu = 0, .t0 = f.fl.from, .t1 = f.fl.from, .samples = 1};
	snprintf(f.fl.own[1].rule, sizeof f.fl.own[1].rule, "<r&>");
	snprintf(f.fl.own[1].severity, sizeof f.fl.own[1].severity, "warn");
	html = render(&f, true, &len);
	const char *bad = html_check(html);
	if (bad)
		fail_msg("%s", bad);
	assert_non_null(strstr(html,
	                       "<tr class=\"own\"><td>gpu-a</td><td>1</td><td><b>throttled</b> "
	                       "<span class=\"sev\">error</span>"));
	assert_non_null(strstr(html, "<b>&lt;r&amp;&gt;</b>"));
	assert_null(strstr(html, "<r&>"));
	assert_null(strstr(html, "<tr class=\"f-"));
	free(html);
	char *json = NULL;
	FILE *m = open_memstream(&json, &len);
	fleet_opts o = {.by = FLEET_BY_NODE, .window_s = 3600};
	fleet_render_json(&f.fl, &o, &f.r, m);
	fclose(m);
	assert_non_null(strstr(json, "\"exporter_findings\": [\n"));
	assert_non_null(strstr(json, "\"node\": \"node002\",\n      \"gpu\": 0,\n      \"rule\": "
	                             "\"<r&>\",\n      \"severity\": \"warn\""));
	assert_non_null(strstr(json, "\"samples\": 10"));
	free(json);
	free(f.fl.own);
	fake_free(&f);
}

static void test_csv(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 2, 1, 1, 60, "a,\"b\"");
	f.r.ngroups = 2;
	f.r.group = gw_xcalloc(2, sizeof *f.r.group);
	snprintf(f.r.group[0].name, sizeof f.r.group[0].name, "a,\"b\"");
	f.r.group[0].hours.h[FS_LOST] = 0.25;
	f.r.group[0].hours.h[FS_BUSY] = 0.75;
	snprintf(f.r.group[1].name, sizeof f.r.group[1].name, "node002");
	f.r.group[1].hours.h[FS_BUSY] = 1;
	size_t len;
	char *csv = render(&f, false, &len);
	const char *want = "group_by,group,state,gpu_hours,share\n"
	                   "fleet,all,lost,0.0000,0.000000\n";
	assert_memory_equal(csv, want, strlen(want));
	assert_non_null(strstr(csv, "\nnode,\"a,\"\"b\"\"\",lost,0.2500,0.250000\n"));
	assert_non_null(strstr(csv, "\nnode,\"a,\"\"b\"\"\",busy,0.7500,0.750000\n"));
	assert_non_null(strstr(csv, "\nnode,node002,no-data,0.0000,0.000000\n"));
	int lines = 0;
	for (const char *p = csv; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + 3 * (FS__COUNT + 1));
	free(csv);
	fake_free(&f);
}

/* The findings and the exporters' findings as tables of their own: a header, one row per
 * finding with every column filled or empty where unknown, fields quoted where they must be. */
static void test_csv_findings(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 2, 8, 2, 60, "gpu-a");
	f.r.nf = 2;
	f.r.f = gw_xcalloc(2, sizeof *f.r.f);
	f.r.f[0] = (fleet_finding){.node = 1,
	                           .rule = DIAG_R_DATA_STARVED,
	                           .severity = DIAG_WARN,
	                           .gpus = 0x3,
	                           .t0 = f.fl.from,
	                           .t1 = f.fl.from + 3600,
	                           .lost_h = 1.25,
	                           .power_w = NAN,
	                           .limit_w = NAN,
	                           .nhost_promql = 1};
	snprintf(f.r.f[0].title, sizeof f.r.f[0].title, "GPUs 0, 1 idle while \"iowait\" is 35 %%");
	snprintf(f.r.f[0].job, sizeof f.r.f[0].job, "train-io");
	snprintf(f.r.f[0].promql, sizeof f.r.f[0].promql, "U{Hostname=\"node002\",gpu=~\"0|1\"}");
	snprintf(f.r.f[0].host_promql[0], sizeof f.r.f[0].host_promql[0], "max by (instance) (x)");
	f.r.f[1] = (fleet_finding){.node = 0,
	                           .rule = DIAG_R_POWER_CAPPED,
	                           .severity = DIAG_ERROR,
	                           .gpus = 0x40,
	                           .t0 = f.fl.from + 60,
	                           .t1 = f.fl.from + 120,
	                           .lost_h = 0.5,
	                           .power_w = 349.5,
	                           .limit_w = 350};
	snprintf(f.r.f[1].title, sizeof f.r.f[1].title, "GPU 6 capped");
	snprintf(f.r.f[1].promql, sizeof f.r.f[1].promql, "P / L");
	size_t len;
	char *csv = render_csv(&f, FLEET_CSV_FINDINGS, &len);
	const char *want =
	    "rank,node,gpus,job,rule,severity,from,to,from_epoch,to_epoch,step,gpu_hours_lost,"
	    "power_w,power_limit_w,title,promql,host_promql_1,host_promql_2,host_promql_3\n"
	    "1,node002,0;1,train-io,data-starved,warn,2027-01-15T08:00:00Z,2027-01-15T09:00:00Z,"
	    "1800000000,1800003600,60,1.2500,,,\"GPUs 0, 1 idle while \"\"iowait\"\" is 35 %\","
	    "\"U{Hostname=\"\"node002\"\",gpu=~\"\"0|1\"\"}\",max by (instance) (x),,\n"
	    "2,gpu-a,6,,power-capped,error,2027-01-15T08:01:00Z,2027-01-15T08:02:00Z,1800000060,"
	    "1800000120,60,0.5000,349.5,350.0,GPU 6 capped,P / L,,,\n";
	assert_string_equal(csv, want);
	free(csv);
	/* the exporters' own: the header alone when there are none */
	csv = render_csv(&f, FLEET_CSV_EXPORTER, &len);
	assert_string_equal(csv, "node,gpu,rule,severity,from,to,from_epoch,to_epoch,samples\n");
	free(csv);
	f.fl.nown = 1;
	f.fl.own = gw_xcalloc(1, sizeof *f.fl.own);
	f.fl.own[0] = (prom_own_finding){
	    .node = 1, .gpu = 3, .t0 = f.fl.from, .t1 = f.fl.from + 600, .samples = 11};
	snprintf(f.fl.own[0].rule, sizeof f.fl.own[0].rule, "contention");
	snprintf(f.fl.own[0].severity, sizeof f.fl.own[0].severity, "warn");
	csv = render_csv(&f, FLEET_CSV_EXPORTER, &len);
	assert_string_equal(csv, "node,gpu,rule,severity,from,to,from_epoch,to_epoch,samples\n"
	                         "node002,3,contention,warn,2027-01-15T08:00:00Z,"
	                         "2027-01-15T08:10:00Z,1800000000,1800000600,11\n");
	free(csv);
	free(f.fl.own);
	fake_free(&f);
}

/* Twelve nodes of one AMD GPU each without clock-event reasons: each node's not-checked
 * note and the host rules' one (no node_exporter here), eight of them listed and the other
 * five counted, never silently dropped. */
static void test_not_checked_more(void **state)
{
	(void)state;
	fake f;
	fake_new(&f, 12, 1, 0.01, 1, NULL);
	for (int k = 0; k < 12; k++) {
		timeline *tl = f.fl.node[k].tl;
		snprintf(tl->gpu[0].vendor, sizeof tl->gpu[0].vendor, "amd");
		for (int s = 0; s < f.fl.n; s++) {
			tl_add_sample(tl, s * f.fl.step);
			tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 90);
		}
	}
	fleet_opts o = {.by = FLEET_BY_NODE, .window_s = 3600};
	fleet_report r;
	fleet_analyse(&f.fl, &o, &r);
	assert_int_equal(r.nnot_checked, 8);
	assert_int_equal(r.not_checked_more, 5);
	char *buf = NULL;
	size_t len;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	fleet_render_text(&f.fl, &o, &r, m);
	fleet_render_json(&f.fl, &o, &r, m);
	fleet_render_html(&f.fl, &o, &r, m);
	assert_int_equal(fclose(m), 0);
	assert_non_null(strstr(buf, "node007: GPU 0 reports no clock-event reasons"));
	assert_null(strstr(buf, "node008: GPU 0 reports no clock-event reasons"));
	const char *more = "... and 5 more such notes (other nodes or rules), left out.";
	const char *t = strstr(buf, more);
	assert_non_null(t);                   /* the text */
	assert_non_null(strstr(t + 1, more)); /* the page */
	assert_non_null(strstr(buf, "\"not_checked_more\": 5"));
	free(buf);
	fleet_report_free(&r);
	fake_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_columns_bounded),  cmocka_unit_test(test_cell_majority),
	    cmocka_unit_test(test_fleet_page),       cmocka_unit_test(test_csv),
	    cmocka_unit_test(test_own_findings),     cmocka_unit_test(test_csv_findings),
	    cmocka_unit_test(test_not_checked_more),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
