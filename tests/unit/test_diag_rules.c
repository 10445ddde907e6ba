/*
 * The rules table (diagnose/rules.def): ids unique and stable in form, every
 * rule with advice, findings carrying their rule, and evidence named after
 * the metric tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdlib.h>

#include "diagnose/diag_int.h"
#include "diag_fixture.h"

static void test_ids(void **state)
{
	(void)state;
	for (int r = 0; r < DIAG_R__COUNT; r++) {
		const char *id = diag_rule_id((diag_rule)r);
		assert_non_null(id);
		assert_true(id[0] != '\0');
		for (const char *p = id; *p; p++) /* kebab-case */
			assert_true(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
			            *p == '-');
		assert_int_equal(diag_rule_lookup(id), r); /* unique: the first match is r */
		assert_non_null(diag_rule_summary((diag_rule)r));
	}
	assert_null(diag_rule_id(DIAG_R__COUNT));
	assert_int_equal(diag_rule_lookup("no-such-rule"), -1);
	/* The ids printed before the table existed. */
	assert_string_equal(diag_rule_id(DIAG_R_DATA_STARVED), "data-starved");
	assert_string_equal(diag_rule_id(DIAG_R_MEMORY_FULL_IDLE), "memory-full-compute-idle");
	assert_string_equal(diag_rule_id(DIAG_R_ALL_ON_GPU0), "all-on-gpu0");
}

static void test_labels(void **state)
{
	(void)state;
	char l[48];
	diag_rule_label(DIAG_R_MEMORY_FULL_IDLE, l, sizeof l);
	assert_string_equal(l, "memory_full_compute_idle");
	diag_rule_label(DIAG_R_THROTTLED, l, sizeof l);
	assert_string_equal(l, "throttled");
	diag_rule_label(DIAG_R_PCIE_DEGRADED, l, 5); /* cut, still terminated */
	assert_string_equal(l, "pcie");
}

/* Every rule has its own advice, or (throttled) one per kind of throttling, for every vendor. */
static void test_advice(void **state)
{
	(void)state;
	static const char *const vendors[] = {"nvidia", "amd", "", NULL, "intel"};
	for (int v = 0; v < 5; v++)
		for (int g = DIAG_GOAL_THROUGHPUT; g <= DIAG_GOAL_LATENCY; g++)
			for (int r = 0; r < DIAG_R__COUNT; r++) {
				const char *change, *verify, *vd = vendors[v];
				if (r == DIAG_R_THROTTLED) {
					static const char *const kinds[] = {"power", "thermal",
					                                    "hw"};
					for (int k = 0; k < 3; k++) {
						diag_advice_lookup((diag_rule)r, kinds[k], vd,
						                   (diag_goal)g, &change, &verify);
						assert_non_null(change);
						assert_non_null(verify);
					}
					continue;
				}
				diag_advice_lookup((diag_rule)r, NULL, vd, (diag_goal)g, &change,
				                   &verify);
				if (!change)
					fail_msg("no advice for %s (%s)",
					         diag_rule_id((diag_rule)r), vd ? vd : "NULL");
				assert_non_null(verify);
				diag_advice_lookup((diag_rule)r, "no-such-case", vd, (diag_goal)g,
				                   &change, &verify);
				assert_null(change);
			}
}

/* The advice that names tools names the GPUs' vendor's: NVIDIA's, AMD's, or, for GPUs of
 * unknown vendor (a recording older than the vendor column), neither, or both side by side
 * (the variable that selects GPUs, the build's version). */
static void test_advice_vendor(void **state)
{
	(void)state;
	static const struct {
		diag_rule r;
		const char *variant;
	} cases[] = {
	    {DIAG_R_GPU_FAULT, NULL},  {DIAG_R_THROTTLED, "power"}, {DIAG_R_THROTTLED, "thermal"},
	    {DIAG_R_THROTTLED, "hw"},  {DIAG_R_POWER_CAPPED, NULL}, {DIAG_R_PCIE_DEGRADED, NULL},
	    {DIAG_R_CONTENTION, NULL}, {DIAG_R_CONTENTION, "gone"}, {DIAG_R_NOT_ON_GPU, NULL},
	    {DIAG_R_IMBALANCE, NULL},  {DIAG_R_ALL_ON_GPU0, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const char *c, *v;
		char both[2048];
		diag_advice_lookup(cases[i].r, cases[i].variant, "amd", DIAG_GOAL_THROUGHPUT, &c,
		                   &v);
		snprintf(both, sizeof both, "%s %s", c, v);
		if (strstr(both, "nvidia") || strstr(both, "Xid") || strstr(both, "NVLink") ||
		    strstr(both, "CUDA_VISIBLE_DEVICES") || strstr(both, "torch.version.cuda"))
			fail_msg("AMD advice of %s names NVIDIA's: %s", diag_rule_id(cases[i].r),
			         both);
		diag_advice_lookup(cases[i].r, cases[i].variant, "", DIAG_GOAL_THROUGHPUT, &c, &v);
		snprintf(both, sizeof both, "%s %s", c, v);
		if (strstr(both, "nvidia") || strstr(both, "Xid") || strstr(both, "amd-smi") ||
		    strstr(both, "rocm-smi"))
			fail_msg("advice of %s for an unknown vendor names a vendor's tool: %s",
			         diag_rule_id(cases[i].r), both);
		/* NVIDIA's way of selecting GPUs or reading the build only beside AMD's */
		if ((strstr(both, "CUDA_VISIBLE_DEVICES") &&
		     !strstr(both, "HIP_VISIBLE_DEVICES")) ||
		    (strstr(both, "torch.version.cuda") && !strstr(both, "torch.version.hip")))
			fail_msg("advice of %s for an unknown vendor names CUDA's alone: %s",
			         diag_rule_id(cases[i].r), both);
	}
	const char *c, *v;
	diag_advice_lookup(DIAG_R_GPU_FAULT, NULL, "amd", DIAG_GOAL_THROUGHPUT, &c, &v);
	assert_non_null(strstr(c, "amd-smi reset --gpureset -g N"));
	assert_non_null(strstr(c, "rocm-smi --gpureset -d N"));
	diag_advice_lookup(DIAG_R_GPU_FAULT, NULL, "nvidia", DIAG_GOAL_THROUGHPUT, &c, &v);
	assert_non_null(strstr(c, "nvidia-smi -r"));
	diag_advice_lookup(DIAG_R_THROTTLED, "power", "nvidia", DIAG_GOAL_THROUGHPUT, &c, &v);
	assert_non_null(strstr(c, "nvidia-smi -pl"));
	/* AMD GPUs are selected with HIP's variable, and a ROCm build says so in torch.version.hip
	 */
	static const diag_rule select[] = {DIAG_R_NOT_ON_GPU, DIAG_R_IMBALANCE, DIAG_R_ALL_ON_GPU0};
	for (size_t i = 0; i < sizeof select / sizeof *select; i++) {
		diag_advice_lookup(select[i], NULL, "amd", DIAG_GOAL_THROUGHPUT, &c, &v);
		assert_non_null(strstr(c, "HIP_VISIBLE_DEVICES"));
		diag_advice_lookup(select[i], NULL, "nvidia", DIAG_GOAL_THROUGHPUT, &c, &v);
		assert_non_null(strstr(c, "CUDA_VISIBLE_DEVICES"));
		assert_null(strstr(c, "HIP_VISIBLE_DEVICES"));
	}
	diag_advice_lookup(DIAG_R_NOT_ON_GPU, NULL, "amd", DIAG_GOAL_THROUGHPUT, &c, &v);
	assert_non_null(strstr(c, "torch.version.hip"));
}

/* A metric key, a/b or a+b of keys, an event kind, or one of the named facts. */
static bool known_name(const char *m)
{
	static const char *const facts[] = {DIAG_EV_REASONS,
	                                    DIAG_EV_UTIL_SAMPLES,
	                                    DIAG_EV_PCIE_LINK,
	                                    DIAG_EV_PROC_GPU,
	                                    DIAG_EV_PROC_GPU_MEM,
	                                    DIAG_EV_PROC_CPU,
	                                    DIAG_EV_PROC_STATE,
	                                    DIAG_EV_PROC_SM,
	                                    DIAG_EV_STEPS,
	                                    DIAG_EV_TRACE_KERNELS,
	                                    DIAG_EV_GPUS,
	                                    DIAG_EV_SAMPLES,
	                                    DIAG_EV_DURATION,
	                                    DIAG_EV_COMMAND,
	                                    DIAG_EV_TOPOLOGY,
	                                    DIAG_EV_NVLINK,
	                                    TL_EV_XID,
	                                    TL_EV_GPU_LOST,
	                                    TL_EV_OOM,
	                                    TL_EV_AER};
	for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
		if (!strcmp(m, facts[i]))
			return true;
	if (gpu_metric_lookup(m) >= 0)
		return true;
	for (int h = 0; h < HM__COUNT; h++)
		if (!strcmp(m, host_metrics[h].key))
			return true;
	char a[40];
	snprintf(a, sizeof a, "%s", m);
	char *op = strpbrk(a, "/+");
	if (!op)
		return false;
	*op = '\0';
	return known_name(a) && known_name(op + 1);
}

static void check_names(const diag_result *r)
{
	for (int i = 0; i < r->n; i++) {
		const diag_finding *f = &r->f[i];
		assert_string_equal(f->id, diag_rule_id(f->rule));
		for (int e = 0; e < f->nev; e++)
			if (!known_name(f->ev[e].metric))
				fail_msg("%s cites '%s', in no table", f->id, f->ev[e].metric);
	}
}

static void test_evidence_names(void **state)
{
	(void)state;
	diag_result r;
	/* healthy; then heat and swapping on the same job; then a starved one */
	timeline *tl = fx_healthy();
	fx_run(tl, &r);
	assert_non_null(diag_find_rule(&r, DIAG_R_HEALTHY));
	check_names(&r);
	diag_result_free(&r);
	for (int s = 0; s < tl->n; s++) {
		tl_set_gpu(tl, 0, GM_CLK_REASONS, s, 0x44);
		tl_set_gpu(tl, 0, GM_CLK_SM, s, 1400);
		tl_set_host(tl, HM_SWAP_IN, s, 5.0 * 1024 * 1024);
	}
	fx_run(tl, &r);
	assert_non_null(diag_find_rule(&r, DIAG_R_THROTTLED));
	assert_non_null(diag_find_rule(&r, DIAG_R_HOST_SWAP));
	check_names(&r);
	diag_result_free(&r);
	tl_free(tl);
	tl = fx_healthy();
	for (int s = 0; s < tl->n; s++)
		if (s % 2) {
			tl_set_gpu(tl, 0, GM_UTIL_GPU, s, 0);
			tl_set_gpu(tl, 0, GM_UTIL_SAMPLES_MIN, s, 0);
			tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
			tl_set_host(tl, HM_TREE_CPU, s, 100);
		}
	fx_run(tl, &r);
	assert_non_null(diag_find_rule(&r, DIAG_R_DATA_STARVED));
	check_names(&r);
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids),
	    cmocka_unit_test(test_labels),
	    cmocka_unit_test(test_advice),
	    cmocka_unit_test(test_advice_vendor),
	    cmocka_unit_test(test_evidence_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
