/* CUDA_VISIBLE_DEVICES resolved like CUDA, and CUDA_DEVICE_ORDER on mixed machines. */
#include <stdbool.h>
#include "test_doctor_common.h"

#define U0 "GPU-8f2a1c3e-0000-1111-2222-333344445555"
#define U1 "GPU-8f2b9d00-6666-7777-8888-999900001111"
#define U2 "GPU-c0ffee00-aaaa-bbbb-cccc-ddddeeeeffff"

/* GPU 0: T4 (7.5), GPU 1 and 2: A100 (8.0), in PCI order */
static const doctor_cvd_gpu mixed[3] = {
    {U0, "Tesla T4", "00000000:1A:00.0", 7.5, 1590, false},
    {U1, "NVIDIA A100-PCIE-40GB", "00000000:3B:00.0", 8.0, 1410, false},
    {U2, "NVIDIA A100-PCIE-40GB", "00000000:5E:00.0", 8.0, 1410, false},
};

static void expect_map(const char *value, bool pci, int n, const int *phys)
{
	doctor_cvd_map m;
	doctor_cvd_resolve(value, mixed, 3, pci, &m);
	if (m.n != n)
		print_error("'%s': %d ordinals, want %d (stopped at %d: %s %s)\n",
		            value ? value : "(unset)", m.n, n, m.stopped_at, m.stop_entry,
		            m.stop_why);
	assert_int_equal(m.n, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(m.phys[i], phys[i]);
}

static void resolve_unset_and_orders(void **state)
{
	(void)state;
	/* FASTEST_FIRST: the A100s (newer compute capability) before the T4, ties in PCI order */
	expect_map(NULL, false, 3, (int[]){1, 2, 0});
	expect_map(NULL, true, 3, (int[]){0, 1, 2});
	doctor_cvd_map m;
	doctor_cvd_resolve(NULL, mixed, 3, false, &m);
	assert_false(m.set);
	assert_false(m.order_is_pci);
	doctor_cvd_resolve(NULL, mixed, 3, true, &m);
	assert_true(m.order_is_pci);
	/* identical GPUs: the default order is the PCI order */
	doctor_cvd_resolve(NULL, mixed + 1, 2, false, &m);
	assert_true(m.order_is_pci);
}

static void resolve_indices_follow_cuda_order(void **state)
{
	(void)state;
	expect_map("0", true, 1, (int[]){0});
	expect_map("0", false, 1, (int[]){1}); /* cuda index 0 is the fastest GPU */
	expect_map("2,0", true, 2, (int[]){2, 0});
	expect_map(" 1 , 2 ", true, 2, (int[]){1, 2}); /* blanks around entries are fine */
	expect_map("1abc", true, 1, (int[]){1});       /* like strtoul: trailing junk ignored */
}

static void resolve_stops_at_invalid_entry(void **state)
{
	(void)state;
	expect_map("1,7,2", true, 1, (int[]){1});
	doctor_cvd_map m;
	doctor_cvd_resolve("1,7,2", mixed, 3, true, &m);
	assert_int_equal(m.stopped_at, 1);
	assert_string_equal(m.stop_entry, "7");
	assert_non_null(strstr(m.stop_why, "there are 3 GPUs"));
	expect_map("-1", true, 0, NULL);
	doctor_cvd_resolve("-1", mixed, 3, true, &m);
	assert_true(m.set);
	assert_int_equal(m.stopped_at, 0);
	assert_non_null(strstr(m.stop_why, "negative"));
	expect_map("", true, 0, NULL);
	expect_map("0,,1", true, 1, (int[]){0});
	expect_map("none", true, 0, NULL);
	expect_map("0,GPU-deadbeef", true, 1, (int[]){0});
}

static void resolve_uuids(void **state)
{
	(void)state;
	expect_map(U2 "," U0, true, 2, (int[]){2, 0});
	expect_map("GPU-c0ffee", false, 1, (int[]){2}); /* short UUID */
	expect_map("gpu-C0FFEE00", false, 1, (int[]){2});
	doctor_cvd_map m;
	/* "GPU-8f2" is the start of two UUIDs: ambiguous, so it stops there */
	doctor_cvd_resolve("2,GPU-8f2", mixed, 3, true, &m);
	assert_int_equal(m.n, 1);
	assert_non_null(strstr(m.stop_why, "matches 2 GPUs"));
	expect_map("GPU-8f2a,1", true, 2, (int[]){0, 1});
}

static void resolve_duplicates_hide_all(void **state)
{
	(void)state;
	doctor_cvd_map m;
	doctor_cvd_resolve("0,1,0", mixed, 3, true, &m);
	assert_int_equal(m.n, 0);
	assert_true(m.duplicate);
	doctor_cvd_resolve("2," U2, mixed, 3, true, &m); /* the same GPU by index and UUID */
	assert_int_equal(m.n, 0);
	assert_true(m.duplicate);
}

static void resolve_mig(void **state)
{
	(void)state;
	doctor_cvd_map m;
	doctor_cvd_resolve("MIG-" U2 "/1/0", mixed, 3, true, &m);
	assert_int_equal(m.n, 1);
	assert_int_equal(m.phys[0], 2);
	assert_int_equal(m.mig_entry[0], 1);
	/* a MIG UUID (new form) cannot be placed, and a second MIG device is ignored */
	doctor_cvd_resolve("MIG-11111111-2222-3333-4444-555555555555,MIG-" U2 "/1/0,0", mixed, 3,
	                   true, &m);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.phys[0], -2);
	assert_int_equal(m.phys[1], 0);
	assert_true(doctor_cvd_hides_all("-1"));
	assert_true(doctor_cvd_hides_all(""));
	assert_true(doctor_cvd_hides_all("NoDevFiles"));
	assert_false(doctor_cvd_hides_all("0,1"));
	assert_false(doctor_cvd_hides_all("GPU-8f2a"));
	assert_false(doctor_cvd_hides_all("MIG-abc"));
}

static fx_t *machine(bool mixed_models)
{
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	for (int i = 0; i < 3; i++) {
		const doctor_cvd_gpu *s = &mixed[mixed_models ? i : 1];
		doctor_gpu *g = fx_gpu(f, s->name, mixed[i].uuid, mixed[i].pci);
		fx_set(g, GM_COMPUTE_CAP, s->cc);
		fx_set(g, GM_CLK_MAX_SM, s->max_sm_clock);
	}
	return f;
}

static void visible_devices_outcomes(void **state)
{
	(void)state;
	fx_t *f = machine(false);
	const doctor_result *r = fx_run(f, doctor_check_cuda_visible_devices);
	fx_expect(
	    r, DOCTOR_PASS,
	    "unset: CUDA sees all 3 GPUs: cuda:0->GPU 0 (NVIDIA A100-PCIE-40GB, GPU-8f2a1c3e)",
	    NULL);
	assert_null(strstr(r->found, "predicted"));
	fx_free(f);

	f = machine(false);
	fx_env(f, "CUDA_VISIBLE_DEVICES=2,0");
	fx_expect(
	    fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_PASS,
	    "CUDA_VISIBLE_DEVICES='2,0': cuda:0->GPU 2 (NVIDIA A100-PCIE-40GB, GPU-c0ffee00), "
	    "cuda:1->GPU 0",
	    NULL);
	fx_free(f);

	f = machine(false);
	fx_env(f, "CUDA_VISIBLE_DEVICES=1,GPU-zzzz,2");
	fx_expect(
	    fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_WARN,
	    "entry 'GPU-zzzz' matches no GPU's UUID, so it and every entry after it are hidden",
	    "correct or remove 'GPU-zzzz'");
	fx_free(f);

	f = machine(false);
	fx_env(f, "CUDA_VISIBLE_DEVICES=-1");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_FAIL,
	          "the first entry '-1' is negative, so CUDA sees no GPU",
	          "unset CUDA_VISIBLE_DEVICES");
	fx_free(f);

	f = machine(false);
	fx_env(f, "CUDA_VISIBLE_DEVICES=");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_FAIL, "is empty", "unset");
	fx_free(f);

	f = machine(false);
	fx_env(f, "CUDA_VISIBLE_DEVICES=0,1,0");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_FAIL,
	          "lists a GPU a second time", "unset");
	fx_free(f);

	f = machine(false);
	fx_set(&f->m.gpu[1], GM_MIG_CURRENT, 1);
	fx_env(f, "CUDA_VISIBLE_DEVICES=1");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_WARN, "GPU 1 is in MIG mode",
	          "MIG-... UUID");
	fx_free(f);

	f = machine(true); /* mixed: the map is a prediction and says so */
	fx_expect(
	    fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_PASS,
	    "cuda:0->GPU 1 (NVIDIA A100-PCIE-40GB, GPU-8f2b9d00), cuda:1->GPU 2 (NVIDIA "
	    "A100-PCIE-40GB, GPU-c0ffee00), cuda:2->GPU 0 (Tesla T4, GPU-8f2a1c3e) (predicted",
	    NULL);
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_SKIP,
	          "no GPUs to map (see driver.nvml); CUDA_VISIBLE_DEVICES unset", NULL);
	fx_env(f, "CUDA_VISIBLE_DEVICES=NoDevFiles");
	fx_expect(fx_run(f, doctor_check_cuda_visible_devices), DOCTOR_FAIL,
	          "CUDA_VISIBLE_DEVICES='NoDevFiles' hides every GPU", "unset");
	fx_free(f);
}

static void device_order_outcomes(void **state)
{
	(void)state;
	fx_t *f = machine(false);
	fx_expect(fx_run(f, doctor_check_cuda_device_order), DOCTOR_PASS,
	          "all 3 GPUs are NVIDIA A100-PCIE-40GB", NULL);
	fx_free(f);

	f = machine(true);
	const doctor_result *r = fx_run(f, doctor_check_cuda_device_order);
	fx_expect(r, DOCTOR_WARN, "mixed models (1x Tesla T4, 2x NVIDIA A100-PCIE-40GB)",
	          "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
	assert_non_null(strstr(r->found, "cuda:0->GPU 1"));
	fx_env(f, "CUDA_DEVICE_ORDER=PCI_BUS_ID");
	fx_expect(fx_run(f, doctor_check_cuda_device_order), DOCTOR_PASS, "PCI_BUS_ID", NULL);
	fx_free(f);

	f = machine(true);
	fx_env(f, "CUDA_DEVICE_ORDER=PCI");
	fx_expect(fx_run(f, doctor_check_cuda_device_order), DOCTOR_WARN,
	          "CUDA_DEVICE_ORDER='PCI' is not FASTEST_FIRST or PCI_BUS_ID", "PCI_BUS_ID");
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "A", U0, "00000000:1A:00.0");
	fx_expect(fx_run(f, doctor_check_cuda_device_order), DOCTOR_SKIP, "fewer than two GPUs",
	          NULL);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(resolve_unset_and_orders),
	    cmocka_unit_test(resolve_indices_follow_cuda_order),
	    cmocka_unit_test(resolve_stops_at_invalid_entry),
	    cmocka_unit_test(resolve_uuids),
	    cmocka_unit_test(resolve_duplicates_hide_all),
	    cmocka_unit_test(resolve_mig),
	    cmocka_unit_test(visible_devices_outcomes),
	    cmocka_unit_test(device_order_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
