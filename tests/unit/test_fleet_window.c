/* A window of Prometheus for report and compare: its spec, range, matchers, and nodes joined. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/window.h"
#include "fleet/window_int.h"

static bool parse(const char *text, fleet_window_spec *s, const char **why)
{
	char what[256];
	return fleet_window_spec_parse(text, s, what, sizeof what, why);
}

static void test_spec_parse(void **state)
{
	(void)state;
	fleet_window_spec s;
	const char *why = NULL;
	assert_true(
	    parse("node=node03,gpu=2,from=2026-01-02T00:00:00Z,to=1767322800,step=30s", &s, &why));
	assert_string_equal(s.node, "node03");
	assert_int_equal(s.gpu, 2);
	assert_true(s.from == 1767312000.0);
	assert_true(s.to == 1767322800.0);
	assert_true(s.step == 30.0);
	assert_true(s.since == 0);
	assert_string_equal(s.job, "");
	assert_true(fleet_window_check(&s, &why));

	assert_true(parse("job=101", &s, &why));
	assert_string_equal(s.job, "101");
	assert_int_equal(s.gpu, -1);
	assert_true(fleet_window_check(&s, &why));
	assert_true(parse("since=6h,node=n1", &s, &why));
	assert_true(s.since == 6 * 3600.0);
	assert_true(fleet_window_check(&s, &why));

	/* refused, each with its reason */
	assert_false(parse("node=a,colour=red", &s, &why));
	assert_non_null(strstr(why, "unknown key"));
	assert_false(parse("node=a,node=b", &s, &why));
	assert_non_null(strstr(why, "twice"));
	assert_false(parse("node", &s, &why));
	assert_non_null(strstr(why, "key=value"));
	assert_false(parse("node=a,gpu=x", &s, &why));
	assert_non_null(strstr(why, "GPU index"));
	assert_false(parse("node=a,gpu=-1", &s, &why));
	assert_false(parse("node=a,from=yesterday", &s, &why));
	assert_non_null(strstr(why, "not a time"));
	assert_false(parse("node=a,from=2026-01-02T00:00:00+01:00", &s, &why));
	assert_false(parse("node=a,since=0s", &s, &why));
	assert_false(parse("node=a,step=2d", &s, &why));
	assert_false(parse("node=", &s, &why));
	assert_false(parse("", &s, &why));
}

static void test_spec_check(void **state)
{
	(void)state;
	fleet_window_spec s;
	const char *why = NULL;
	assert_true(parse("node=a,job=1", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_non_null(strstr(why, "not both"));
	assert_true(parse("gpu=1,job=1", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_non_null(strstr(why, "needs its node"));
	assert_true(parse("gpu=1,since=1h", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_true(parse("node=a", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_non_null(strstr(why, "from"));
	assert_true(parse("node=a,from=100,since=1h", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_true(parse("node=a,from=200,to=100", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_true(parse("node=a,from=0.5,to=2000000,step=1s", &s, &why));
	assert_false(fleet_window_check(&s, &why));
	assert_non_null(strstr(why, "1,000,000"));
}

static void test_range(void **state)
{
	(void)state;
	fleet_window_spec s;
	const char *why;
	double from, to, step;
	assert_true(parse("node=a,since=6h", &s, &why));
	fleet_window_range(&s, 100000, &from, &to, &step);
	assert_true(to == 100000 && from == 100000 - 6 * 3600.0);
	assert_true(step == 15); /* 21600 s / 2000 = 11 s: at least 15 s */
	assert_true(parse("node=a,from=0.5,to=86400.5", &s, &why));
	fleet_window_range(&s, 1e9, &from, &to, &step);
	assert_true(step == 44); /* ceil(86400 / 2000) */
	assert_true(parse("node=a,from=1000,step=5s", &s, &why));
	fleet_window_range(&s, 2000, &from, &to, &step);
	assert_true(from == 1000 && to == 2000 && step == 5);
	/* a job without a range is looked for over the last week */
	assert_true(parse("job=7", &s, &why));
	fleet_window_range(&s, 1e6, &from, &to, &step);
	assert_true(to == 1e6 && from == 1e6 - 7 * 86400.0);
}

static void test_matchers(void **state)
{
	(void)state;
	char m[400];
	fw_node_matcher("Hostname", "node03", "2", m, sizeof m);
	assert_string_equal(m, "Hostname=\"node03\",gpu=~\"2\"");
	fw_node_matcher("hostname", "a\"b", NULL, m, sizeof m);
	assert_string_equal(m, "hostname=\"a\\\"b\"");
	/* instance carries a port; the node's dots are literal in the regex */
	fw_node_matcher("instance", "gpu1.lab", "", m, sizeof m);
	assert_string_equal(m, "instance=~\"gpu1\\\\.lab(:[0-9]+)?\"");
	fw_job_matcher("run \"7\"", m, sizeof m);
	assert_string_equal(m, "hpc_job=\"run \\\"7\\\"\"");
}

/* A fleet of two nodes (2 and 1 GPUs) over 6 samples at 10 s. */
static void make_fleet(prom_fleet *fl)
{
	*fl = (prom_fleet){.from = 1000, .to = 1050, .step = 10, .n = 6, .nnodes = 2};
	fl->node = calloc(2, sizeof *fl->node);
	const char *hosts[] = {"n1", "n2"};
	for (int k = 0; k < 2; k++) {
		prom_node *nd = &fl->node[k];
		strcpy(nd->host, hosts[k]);
		nd->tl = tl_new(k ? 1 : 2, 0);
		for (int s = 0; s < 6; s++)
			tl_add_sample(nd->tl, s * 10.0);
		for (int g = 0; g < nd->tl->ngpu; g++) {
			nd->tl->gpu[g].index = g + 4 * k;
			strcpy(nd->tl->gpu[g].name, "H100");
			nd->job[g] = calloc(6, sizeof(int));
		}
	}
	/* n1 GPU 1 has data in samples 1..3 only; n2 GPU 0 in 2..4, memory in 3 */
	for (int s = 1; s <= 3; s++)
		tl_set_gpu(fl->node[0].tl, 1, GM_UTIL_GPU, s, 10.0 * s);
	for (int s = 2; s <= 4; s++)
		tl_set_gpu(fl->node[1].tl, 0, GM_UTIL_GPU, s, 50);
	tl_set_gpu(fl->node[1].tl, 0, GM_MEM_USED, 3, 1024);
	tl_add_event(fl->node[1].tl, 30, "xid", 0, 79, "fell off the bus");
	tl_add_event(fl->node[1].tl, 50, "xid", 0, 48, "after the window");
}

static void test_join(void **state)
{
	(void)state;
	prom_fleet fl;
	make_fleet(&fl);
	int a, b;
	assert_true(fw_present_span(&fl, &a, &b));
	assert_int_equal(a, 1);
	assert_int_equal(b, 4);
	timeline *w = fw_join(&fl, a, b, NULL);
	assert_int_equal(w->n, 4);
	assert_int_equal(w->ngpu, 3);
	assert_true(w->t0_wall == 1010);
	assert_true(w->t[3] == 30);
	assert_string_equal(w->hostname, "n1,n2");
	/* GPUs side by side, each named by its node */
	assert_int_equal(w->gpu[2].index, 4);
	assert_string_equal(w->gpu[2].name, "n2 H100");
	assert_true(tl_gpu_at(w, 1, GM_UTIL_GPU, 0) == 10);
	assert_true(isnan(tl_gpu_at(w, 1, GM_UTIL_GPU, 3)));
	assert_true(tl_gpu_at(w, 2, GM_MEM_USED, 2) == 1024);
	/* what was never read stays absent: no series at all */
	assert_null(w->gpu[0].m[GM_UTIL_GPU]);
	assert_null(w->gpu[0].m[GM_POWER_DRAW]);
	assert_null(w->h[0]);
	/* the event inside the window, moved to its GPU's new place and time */
	assert_int_equal(w->nevents, 1);
	assert_int_equal(w->events[0].gpu, 2);
	assert_true(w->events[0].t == 20);
	tl_free(w);
	/* one node: its GPUs keep their names */
	fl.nnodes = 1;
	w = fw_join(&fl, 0, 5, NULL);
	assert_string_equal(w->hostname, "n1");
	assert_string_equal(w->gpu[1].name, "H100");
	tl_free(w);
	fl.nnodes = 2;
	/* a Slurm job's GPUs only: n1's GPU 1 (index 1) and all of n2 (indices unknown) */
	queue_slurm_alloc *keep = calloc(1, sizeof *keep);
	keep->nnodes = 2;
	strcpy(keep->node[0].host, "n1");
	keep->node[0].gpus = 1u << 1;
	strcpy(keep->node[1].host, "n2");
	w = fw_join(&fl, 0, 5, keep);
	assert_int_equal(w->ngpu, 2);
	assert_int_equal(w->gpu[0].index, 1);
	assert_int_equal(w->gpu[1].index, 4);
	assert_true(tl_gpu_at(w, 0, GM_UTIL_GPU, 2) == 20);
	assert_int_equal(w->nevents, 2);
	assert_int_equal(w->events[0].gpu, 1);
	tl_free(w);
	/* only n2: one node, its GPUs keep their names */
	strcpy(keep->node[0].host, "n9");
	w = fw_join(&fl, 0, 5, keep);
	assert_int_equal(w->ngpu, 1);
	assert_string_equal(w->hostname, "n2");
	assert_string_equal(w->gpu[0].name, "H100");
	tl_free(w);
	free(keep);
	prom_fleet_free(&fl);
}

static void test_alloc_matchers(void **state)
{
	(void)state;
	queue_slurm_alloc *al = calloc(1, sizeof *al);
	al->nnodes = 2;
	strcpy(al->node[0].host, "node01");
	strcpy(al->node[1].host, "gpu.b");
	al->node[0].gpus = 0x3;
	al->node[1].gpus = 0x4;
	char gpus[64], m[400];
	fw_alloc_gpus(al, gpus, sizeof gpus);
	assert_string_equal(gpus, "0|1|2");
	fw_hosts_matcher("Hostname", al, gpus, m, sizeof m);
	assert_string_equal(m, "Hostname=~\"node01|gpu\\\\.b\",gpu=~\"0|1|2\"");
	fw_hosts_matcher("instance", al, "", m, sizeof m);
	assert_string_equal(m, "instance=~\"(node01|gpu\\\\.b)(:[0-9]+)?\"");
	/* a node whose GPUs are not known: no GPU matcher at all */
	al->node[1].gpus = 0;
	fw_alloc_gpus(al, gpus, sizeof gpus);
	assert_string_equal(gpus, "");
	free(al);
	/* only ids Slurm could know are asked of it */
	assert_true(fw_slurm_id("101"));
	assert_true(fw_slurm_id("100_7"));
	assert_true(fw_slurm_id("100+1"));
	assert_false(fw_slurm_id("train-a"));
	assert_false(fw_slurm_id(""));
	assert_false(fw_slurm_id("12;rm"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_parse), cmocka_unit_test(test_spec_check),
	    cmocka_unit_test(test_range),      cmocka_unit_test(test_matchers),
	    cmocka_unit_test(test_join),       cmocka_unit_test(test_alloc_matchers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
