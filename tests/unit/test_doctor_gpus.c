/* gpus.*: inventory and bad states (lost, memory errors, Xid, AER, link, thermal, clocks, power).
 */
#include <stdbool.h>
#include <stdio.h>
#include "test_doctor_common.h"

#define KLOG FX_DOCTOR "/klog"

static fx_t *two_h100(void)
{
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-8f2a1c3e-0000-1111-2222-333344445555",
	       "00000000:3B:00.0");
	fx_gpu(f, "NVIDIA H100 80GB HBM3", "GPU-1b7e9d00-6666-7777-8888-999900001111",
	       "00000000:5E:00.0");
	return f;
}

static void pci_dev(fx_t *f, const char *bdf, const char *vendor, const char *cls)
{
	char rel[256];
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/vendor", bdf);
	fx_write(f, rel, vendor);
	snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/class", bdf);
	fx_write(f, rel, cls);
}

static void no_nvml_skips_every_gpu_check(void **state)
{
	(void)state;
	doctor_check_fn fns[] = {doctor_check_gpus_inventory,     doctor_check_gpus_lost,
	                         doctor_check_gpus_memory_errors, doctor_check_gpus_pcie_link,
	                         doctor_check_gpus_thermal,       doctor_check_gpus_clocks,
	                         doctor_check_gpus_power_limit};
	for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
		fx_t *f = fx_new();
		f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
		fx_expect(fx_run(f, fns[i]), DOCTOR_SKIP, "driver.nvml", NULL);
		fx_free(f);
	}
}

static void inventory_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	pci_dev(f, "0000:3b:00.0", "0x10de\n", "0x030200\n");
	pci_dev(f, "0000:5e:00.0", "0x10de\n", "0x030200\n");
	pci_dev(f, "0000:0c:00.0", "0x10de\n", "0x068000\n"); /* an NVSwitch is not a GPU */
	const doctor_result *r = fx_run(f, doctor_check_gpus_inventory);
	fx_expect(
	    r, DOCTOR_PASS,
	    "2 GPUs: 0 NVIDIA H100 80GB HBM3 GPU-8f2a1c3e-0000-1111-2222-333344445555 79.6 GiB",
	    NULL);
	assert_non_null(strstr(r->found, "; 1 NVIDIA H100 80GB HBM3 GPU-1b7e9d00"));
	/* a third GPU on the bus that the driver skipped */
	pci_dev(f, "0000:86:00.0", "0x10de\n", "0x030200\n");
	fx_expect(fx_run(f, doctor_check_gpus_inventory), DOCTOR_WARN,
	          "NVML sees 2 GPUs but the PCI bus has 3: 0000:86:00.0 not initialised",
	          "RmInitAdapter");
	fx_free(f);

	f = fx_new();
	fx_nvml_ok(f);
	fx_expect(fx_run(f, doctor_check_gpus_inventory), DOCTOR_FAIL, "enumerates no GPU",
	          "dmesg | grep -i nvrm");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_PERMISSION;
	fx_expect(fx_run(f, doctor_check_gpus_inventory), DOCTOR_SKIP, "needs a working NVML",
	          NULL);
	fx_free(f);
}

static void lost_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_lost), DOCTOR_PASS, "all 2 GPUs answer", NULL);
	f->m.gpu[1].lost = true;
	fx_expect(fx_run(f, doctor_check_gpus_lost), DOCTOR_FAIL, "GPU 1 (00000000:5E:00.0) lost",
	          "Xid 79");
	fx_free(f);
	f = fx_new();
	fx_nvml_ok(f);
	fx_expect(fx_run(f, doctor_check_gpus_lost), DOCTOR_SKIP, "no GPUs", NULL);
	fx_free(f);
}

static void memory_errors_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_memory_errors), DOCTOR_SKIP, "no GPU reports ECC",
	          NULL);
	for (int i = 0; i < 2; i++) {
		fx_set(&f->m.gpu[i], GM_ECC_UNCORR_VOL, 0);
		fx_set(&f->m.gpu[i], GM_REMAP_PENDING, 0);
		fx_set(&f->m.gpu[i], GM_REMAP_FAILURE, 0);
	}
	fx_set(&f->m.gpu[0], GM_REMAP_UNCORR, 2);
	fx_expect(fx_run(f, doctor_check_gpus_memory_errors), DOCTOR_PASS,
	          "nothing pending; history: GPU 0: 2 rows remapped", NULL);
	fx_set(&f->m.gpu[1], GM_REMAP_PENDING, 1);
	fx_expect(fx_run(f, doctor_check_gpus_memory_errors), DOCTOR_WARN,
	          "GPU 1: row remap pending", "reset GPU 1 when it is idle");
	fx_set(&f->m.gpu[0], GM_ECC_UNCORR_VOL, 3);
	const doctor_result *r = fx_run(f, doctor_check_gpus_memory_errors);
	fx_expect(r, DOCTOR_FAIL, "GPU 0: 3 uncorrected ECC errors since the driver loaded",
	          "drain GPU 0");
	fx_set(&f->m.gpu[1], GM_REMAP_FAILURE, 1);
	fx_expect(fx_run(f, doctor_check_gpus_memory_errors), DOCTOR_FAIL,
	          "GPU 1: row remapping failed", "board needs replacing");
	fx_free(f);
}

static void xid_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_copy(f, "kmsg", KLOG "/dmesg-xid.log");
	const doctor_result *r = fx_run(f, doctor_check_gpus_xid);
	fx_expect(r, DOCTOR_FAIL, "GPU 1: Xid 79 x1 (GPU has fallen off the bus)", "drain the GPU");
	assert_non_null(strstr(r->found, "GPU 0: Xid 13 x2 (graphics engine exception"));
	fx_free(f);

	f = two_h100(); /* kmsg record format, an application fault only */
	fx_copy(f, "kmsg", KLOG "/kmsg-app-xid.txt");
	fx_expect(fx_run(f, doctor_check_gpus_xid), DOCTOR_WARN,
	          "GPU 0: Xid 31 x1 (GPU memory page fault", "compute-sanitizer");
	fx_free(f);

	f = two_h100(); /* --gpus 1: GPU 0's faults are not this run's business */
	fx_copy(f, "kmsg", KLOG "/kmsg-app-xid.txt");
	f->m.has_selection = true;
	f->m.selected[1] = true;
	fx_expect(fx_run(f, doctor_check_gpus_xid), DOCTOR_PASS, "no Xid errors", NULL);
	fx_free(f);

	f = fx_new(); /* no NVML: Xids still name the PCI address */
	f->m.nvml = DOCTOR_NVML_OTHER;
	fx_copy(f, "kmsg", KLOG "/journal-xid.log");
	fx_expect(fx_run(f, doctor_check_gpus_xid), DOCTOR_FAIL,
	          "PCI 0000:3b:00: Xid 48 x1 (double-bit ECC", "reset it");
	fx_free(f);

	f = two_h100();
	fx_copy(f, "kmsg", KLOG "/clean.log");
	fx_expect(fx_run(f, doctor_check_gpus_xid), DOCTOR_PASS, "no Xid errors in the kernel log",
	          NULL);
	fx_free(f);

	f = two_h100(); /* kernel log not readable, no fallback tools */
	fx_expect(fx_run(f, doctor_check_gpus_xid), DOCTOR_SKIP, "kernel log not readable",
	          "dmesg_restrict=0");
	assert_non_null(
	    strstr(f->r.v[f->r.n - 1].found, "run as root or set kernel.dmesg_restrict=0"));
	fx_free(f);
}

/* sysfs: each GPU below its root port, as /sys/bus/pci/devices links show it */
static void pci_topology(fx_t *f)
{
	fx_mkdirs(strcat(strcpy((char[PATH_MAX]){0}, f->root),
	                 "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"));
	fx_mkdirs(strcat(strcpy((char[PATH_MAX]){0}, f->root),
	                 "/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0"));
	fx_symlink(f, "sys/bus/pci/devices/0000:3b:00.0",
	           "../../../devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0");
	fx_symlink(f, "sys/bus/pci/devices/0000:5e:00.0",
	           "../../../devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0");
}

static void pcie_errors_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	pci_topology(f);
	fx_copy(f, "kmsg", KLOG "/dmesg-aer.log");
	const doctor_result *r = fx_run(f, doctor_check_gpus_pcie_errors);
	fx_expect(r, DOCTOR_FAIL, "GPU 1 (00000000:5E:00.0): 1 uncorrected AER error",
	          "check power, seating and risers/cables of GPU 0,1");
	assert_non_null(strstr(r->found, "GPU 0 (00000000:3B:00.0): 1 corrected AER error"));
	fx_free(f);

	f = two_h100(); /* an error on the root port above GPU 0 is on its link */
	pci_topology(f);
	fx_write(
	    f, "kmsg",
	    "[  1.0] pcieport 0000:3a:00.0: PCIe Bus Error: severity=Corrected, type=Data Link "
	    "Layer, (Transmitter ID)\n");
	fx_expect(fx_run(f, doctor_check_gpus_pcie_errors), DOCTOR_WARN,
	          "GPU 0 (00000000:3B:00.0): 1 corrected", "GPU 0");
	fx_free(f);

	f = two_h100(); /* only another device had errors; replay counters low */
	pci_topology(f);
	fx_write(f, "kmsg",
	         "[400.0] igb 0000:02:00.0: PCIe Bus Error: severity=Corrected, type=Data Link "
	         "Layer, (Transmitter ID)\n");
	fx_set(&f->m.gpu[0], GM_PCIE_REPLAY, 3);
	fx_expect(fx_run(f, doctor_check_gpus_pcie_errors), DOCTOR_PASS,
	          "no AER errors on GPU links, replay counters low (other PCI devices", NULL);
	fx_free(f);

	f = two_h100(); /* log unreadable, but a replay counter speaks */
	fx_set(&f->m.gpu[1], GM_PCIE_REPLAY, 5120);
	fx_expect(fx_run(f, doctor_check_gpus_pcie_errors), DOCTOR_WARN, "GPU 1: 5120 PCIe replays",
	          "GPU 1");
	fx_free(f);

	f = two_h100(); /* neither */
	fx_expect(fx_run(f, doctor_check_gpus_pcie_errors), DOCTOR_SKIP, "kernel log not readable",
	          "dmesg_restrict");
	fx_free(f);
}

static void set_link(doctor_gpu *g, int gc, int gm, int wc, int wm)
{
	fx_set(g, GM_PCIE_GEN_CUR, gc);
	fx_set(g, GM_PCIE_GEN_MAX, gm);
	fx_set(g, GM_PCIE_WIDTH_CUR, wc);
	fx_set(g, GM_PCIE_WIDTH_MAX, wm);
}

static void pcie_link_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_pcie_link), DOCTOR_SKIP, "not reported", NULL);
	set_link(&f->m.gpu[0], 5, 5, 16, 16);
	set_link(&f->m.gpu[1], 1, 5, 16, 16); /* idle power saving */
	fx_set(&f->m.gpu[1], GM_UTIL_GPU, 0);
	const doctor_result *r = fx_run(f, doctor_check_gpus_pcie_link);
	fx_expect(r, DOCTOR_PASS, "GPU 1: gen 1 of 5, x16 of x16 (idle: the link slows down", NULL);
	fx_set(&f->m.gpu[1], GM_UTIL_GPU, 97);
	fx_expect(fx_run(f, doctor_check_gpus_pcie_link), DOCTOR_WARN,
	          "GPU 1: gen 1 of 5, x16 of x16 under load", "reseat GPU 1");
	set_link(&f->m.gpu[0], 5, 5, 8, 16);
	r = fx_run(f, doctor_check_gpus_pcie_link);
	fx_expect(r, DOCTOR_WARN, "GPU 0: gen 5 of 5, x8 of x16", "reseat GPU 0,1");
	fx_free(f);
}

static void thermal_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_thermal), DOCTOR_SKIP, "not reported", NULL);
	for (int i = 0; i < 2; i++)
		fx_set(&f->m.gpu[i], GM_TEMP_SLOWDOWN, 87);
	fx_set(&f->m.gpu[0], GM_TEMP_GPU, 41);
	fx_set(&f->m.gpu[1], GM_TEMP_GPU, 66);
	fx_expect(fx_run(f, doctor_check_gpus_thermal), DOCTOR_PASS,
	          "hottest GPU 1 at 66 C (slowdown at 87 C)", NULL);
	/* one GPU measured: nothing to be hottest among */
	fx_set(&f->m.gpu[0], GM_TEMP_SLOWDOWN, 0);
	const doctor_result *one = fx_run(f, doctor_check_gpus_thermal);
	fx_expect(one, DOCTOR_PASS, "GPU 1 at 66 C (slowdown at 87 C)", NULL);
	assert_null(strstr(one->found, "hottest"));
	fx_set(&f->m.gpu[0], GM_TEMP_SLOWDOWN, 87);
	fx_set(&f->m.gpu[1], GM_TEMP_GPU, 84);
	fx_expect(fx_run(f, doctor_check_gpus_thermal), DOCTOR_WARN,
	          "GPU 1 at 84 C, slowdown at 87 C", "cool GPU 1");
	fx_set(&f->m.gpu[0], GM_TEMP_GPU, 90);
	fx_expect(fx_run(f, doctor_check_gpus_thermal), DOCTOR_FAIL, "clocks are being cut",
	          "cool GPU 0,1");
	fx_free(f);
}

static void clocks_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_SKIP, "not reported", NULL);
	for (int i = 0; i < 2; i++) {
		doctor_gpu *g = &f->m.gpu[i];
		fx_set(g, GM_CLK_REASONS, 1);
		fx_set(g, GM_CLK_R_IDLE, 1);
		fx_set(g, GM_CLK_R_SW_POWER, 0);
		fx_set(g, GM_CLK_R_HW_SLOW, 0);
		fx_set(g, GM_CLK_R_APP, 0);
		fx_set(g, GM_CLK_MAX_GR, 1980);
		fx_set(g, GM_CLK_MAX_SM, 1980);
		fx_set(g, GM_CLK_APP_GR, 1980);
	}
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_PASS, "no clocks held down", NULL);
	/* application clocks at maximum: the bit alone is no problem */
	fx_set(&f->m.gpu[0], GM_CLK_R_APP, 1);
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_PASS, "no clocks held down", NULL);
	fx_set(&f->m.gpu[0], GM_CLK_APP_GR, 1410);
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_WARN,
	          "applications clocks set to 1410 of 1980", "nvidia-smi -rac");
	fx_set(&f->m.gpu[0], GM_CLK_R_APP, 0);
	doctor_gpu *g = &f->m.gpu[1];
	fx_set(g, GM_CLK_R_SW_POWER, 1);
	fx_set(g, GM_POWER_DRAW, 699);
	fx_set(g, GM_POWER_ENFORCED_LIMIT, 700);
	fx_set(g, GM_CLK_SM, 1650);
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_WARN,
	          "GPU 1: power cap (699 W of 700 W) (SM 1650 of 1980 MHz)", "power bound");
	fx_set(g, GM_CLK_R_HW_SLOW, 1);
	fx_expect(fx_run(f, doctor_check_gpus_clocks), DOCTOR_FAIL, "hardware slowdown, power cap",
	          "GPU power cables");
	fx_free(f);
}

static void power_limit_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_h100();
	fx_expect(fx_run(f, doctor_check_gpus_power_limit), DOCTOR_SKIP, "not reported", NULL);
	for (int i = 0; i < 2; i++) {
		fx_set(&f->m.gpu[i], GM_POWER_LIMIT, 700);
		fx_set(&f->m.gpu[i], GM_POWER_DEFAULT_LIMIT, 700);
		fx_set(&f->m.gpu[i], GM_POWER_ENFORCED_LIMIT, 700);
	}
	fx_expect(fx_run(f, doctor_check_gpus_power_limit), DOCTOR_PASS, "at their defaults", NULL);
	fx_set(&f->m.gpu[1], GM_POWER_LIMIT, 450);
	fx_set(&f->m.gpu[1], GM_POWER_ENFORCED_LIMIT, 450);
	fx_expect(fx_run(f, doctor_check_gpus_power_limit), DOCTOR_WARN,
	          "GPU 1 limited to 450 W, default 700 W", "sudo nvidia-smi -i 1 -pl 700");
	fx_set(&f->m.gpu[1], GM_POWER_LIMIT, 700);
	fx_expect(fx_run(f, doctor_check_gpus_power_limit), DOCTOR_WARN,
	          "GPU 1 enforces 450 W, below its set 700 W", "BMC power policy");
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(no_nvml_skips_every_gpu_check),
	    cmocka_unit_test(inventory_outcomes),
	    cmocka_unit_test(lost_outcomes),
	    cmocka_unit_test(memory_errors_outcomes),
	    cmocka_unit_test(xid_outcomes),
	    cmocka_unit_test(pcie_errors_outcomes),
	    cmocka_unit_test(pcie_link_outcomes),
	    cmocka_unit_test(thermal_outcomes),
	    cmocka_unit_test(clocks_outcomes),
	    cmocka_unit_test(power_limit_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
