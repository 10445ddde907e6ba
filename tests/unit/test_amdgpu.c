/* The amdgpu reader on the fixture trees of tests/fixtures/amdgpu (see its README). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"
#include "gpu/amdgpu_map.h"

#include <stdio.h>
#include <string.h>

#define ROOT(name) FIXTURES_DIR "/amdgpu/" name

static amdgpu_card cards[AMDGPU_MAX_CARDS];

/* A present value, compared to a tolerance far below any unit the faces print. */
static void assert_val(const amdgpu_values *v, amdgpu_field f, double want)
{
	if (!v->ok[f])
		fail_msg("%s: absent, want %g", amdgpu_field_name(f), want);
	if (v->v[f] < want - 1e-6 || v->v[f] > want + 1e-6)
		fail_msg("%s: %g, want %g", amdgpu_field_name(f), v->v[f], want);
}

static void assert_absent(const amdgpu_values *v, amdgpu_field f)
{
	if (v->ok[f])
		fail_msg("%s: %g, want absent", amdgpu_field_name(f), v->v[f]);
}

static void test_discover_mi300x(void **state)
{
	(void)state;
	int n = amdgpu_discover(ROOT("mi300x"), cards, AMDGPU_MAX_CARDS);
	assert_int_equal(n, 2); /* render nodes are no cards */
	/* PCI order, not card order */
	assert_string_equal(cards[0].card, "card1");
	assert_string_equal(cards[0].bdf, "0000:1b:00.0");
	assert_string_equal(cards[1].card, "card0");
	assert_string_equal(cards[1].bdf, "0000:9f:00.0");
	assert_true(cards[1].ids_ok);
	assert_int_equal(cards[1].vendor, 0x1002);
	assert_int_equal(cards[1].device, 0x74a1);
	assert_string_equal(cards[1].product_name, "AMD Instinct MI300X OAM");
	assert_string_equal(cards[1].unique_id, "2c1e6a4f8b0d3e57");
	assert_non_null(strstr(cards[1].hwmon_path, "/hwmon/hwmon3"));
	assert_non_null(strstr(cards[0].hwmon_path, "/hwmon/hwmon5"));
}

static void test_read_mi300x(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_discover(ROOT("mi300x"), cards, AMDGPU_MAX_CARDS), 2);
	amdgpu_values v;
	amdgpu_read(&cards[1], &v);
	assert_val(&v, AMD_GPU_BUSY, 87);
	assert_val(&v, AMD_MEM_BUSY, 41);
	assert_val(&v, AMD_VRAM_TOTAL, 192.0 * 1024 * 1024 * 1024);
	assert_val(&v, AMD_VRAM_USED, (150.0 * 1024 + 512) * 1024 * 1024);
	assert_val(&v, AMD_GTT_TOTAL, 1024.0 * 1024 * 1024 * 1024);
	assert_val(&v, AMD_GTT_USED, 24.0 * 1024 * 1024);
	assert_val(&v, AMD_POWER_W, 642);
	assert_val(&v, AMD_POWER_CAP_W, 750);
	assert_absent(&v, AMD_TEMP_EDGE); /* no edge sensor: not 0, not junction's */
	assert_val(&v, AMD_TEMP_JUNCTION, 71);
	assert_val(&v, AMD_TEMP_MEM, 58);
	assert_absent(&v, AMD_FAN_RPM);
	assert_absent(&v, AMD_FAN_PCT);
	assert_val(&v, AMD_SCLK_MHZ, 1400);
	assert_val(&v, AMD_MCLK_MHZ, 1300);
	assert_val(&v, AMD_SCLK_MAX_MHZ, 2100);
	assert_val(&v, AMD_MCLK_MAX_MHZ, 1300);
	assert_val(&v, AMD_PCIE_GEN, 5);
	assert_val(&v, AMD_PCIE_WIDTH, 16);
	assert_val(&v, AMD_PCIE_GEN_MAX, 5);
	assert_val(&v, AMD_PCIE_WIDTH_MAX, 16);
	/* the idle card: its own values, not the first card's */
	amdgpu_read(&cards[0], &v);
	assert_val(&v, AMD_GPU_BUSY, 0);
	assert_val(&v, AMD_SCLK_MHZ, 132);
	assert_val(&v, AMD_POWER_W, 131);
}

static void test_rx7900xtx(void **state)
{
	(void)state;
	/* connectors, the render node and the Intel GPU are skipped */
	assert_int_equal(amdgpu_discover(ROOT("rx7900xtx"), cards, AMDGPU_MAX_CARDS), 1);
	assert_string_equal(cards[0].card, "card0");
	assert_string_equal(cards[0].bdf, "0000:03:00.0");
	assert_int_equal(cards[0].device, 0x744c);
	assert_int_equal(cards[0].subsys_vendor, 0x1da2);
	assert_string_equal(cards[0].product_name, "");
	assert_string_equal(cards[0].unique_id, "");
	amdgpu_values v;
	amdgpu_read(&cards[0], &v);
	assert_val(&v, AMD_POWER_W, 338); /* power1_input when there is no power1_average */
	assert_val(&v, AMD_POWER_CAP_W, 355);
	assert_val(&v, AMD_TEMP_EDGE, 64);
	assert_val(&v, AMD_TEMP_JUNCTION, 88);
	assert_val(&v, AMD_TEMP_MEM, 78);
	assert_val(&v, AMD_FAN_RPM, 1675);
	assert_val(&v, AMD_FAN_PCT, 40);
	assert_val(&v, AMD_SCLK_MHZ, 2526);
	assert_val(&v, AMD_MCLK_MAX_MHZ, 1249);
	assert_val(&v, AMD_PCIE_GEN, 4);
	assert_val(&v, AMD_VRAM_TOTAL, 24.0 * 1024 * 1024 * 1024);
}

static void test_apu_missing_files(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_discover(ROOT("apu"), cards, AMDGPU_MAX_CARDS), 1);
	assert_string_equal(cards[0].bdf, "0000:0a:00.0"); /* from uevent: no link to follow */
	assert_string_equal(cards[0].product_name, "");
	amdgpu_values v;
	amdgpu_read(&cards[0], &v);
	assert_val(&v, AMD_GPU_BUSY, 12);
	assert_absent(&v, AMD_MEM_BUSY); /* a file that does not parse is absent, not 0 */
	assert_val(&v, AMD_VRAM_TOTAL, 512.0 * 1024 * 1024);
	assert_val(&v, AMD_GTT_USED, (1024.0 + 5) * 1024 * 1024);
	assert_val(&v, AMD_POWER_W, 9);
	assert_absent(&v, AMD_POWER_CAP_W);
	assert_val(&v, AMD_TEMP_EDGE, 47);
	assert_absent(&v, AMD_TEMP_JUNCTION);
	assert_absent(&v, AMD_TEMP_MEM);
	assert_absent(&v, AMD_FAN_RPM);
	assert_absent(&v, AMD_FAN_PCT);
	assert_val(&v, AMD_SCLK_MHZ, 400);
	assert_val(&v, AMD_SCLK_MAX_MHZ, 1400);
	assert_absent(&v, AMD_MCLK_MHZ);
	assert_absent(&v, AMD_MCLK_MAX_MHZ);
	assert_val(&v, AMD_PCIE_GEN, 3); /* "8 GT/s" */
	assert_val(&v, AMD_PCIE_WIDTH, 16);
	assert_absent(&v, AMD_PCIE_GEN_MAX);
	assert_absent(&v, AMD_PCIE_WIDTH_MAX);
}

static void test_no_sysfs(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_discover(ROOT("no-such-tree"), cards, AMDGPU_MAX_CARDS), 0);
	/* a card that vanished between discovery and reading: everything absent */
	amdgpu_card gone = {.dev_path = ROOT("no-such-tree") "/device"};
	amdgpu_values v;
	amdgpu_read(&gone, &v);
	for (int f = 0; f < AMD__COUNT; f++)
		assert_absent(&v, (amdgpu_field)f);
}

static void test_parse_dpm(void **state)
{
	(void)state;
	amdgpu_dpm d;
	const char *t = "S: 100Mhz\n0: 500Mhz \n1: 1900MHz *\n2: 2100Mhz\n";
	assert_true(amdgpu_parse_dpm(t, strlen(t), &d));
	assert_int_equal(d.levels, 4);
	assert_true(d.cur_ok);
	assert_true(d.cur_mhz == 1900);
	assert_true(d.max_mhz == 2100);
	/* no level marked: levels known, the current one absent */
	t = "0: 500Mhz\n1: 800Mhz";
	assert_true(amdgpu_parse_dpm(t, strlen(t), &d));
	assert_false(d.cur_ok);
	assert_true(d.max_mhz == 800);
	/* other units (pp_dpm_pcie), trailing words, no level: nothing parses */
	t = "0: 2.5GT/s, x8 *\n1: 1900Mhz * more\n: 5Mhz\n-1: 5Mhz\n1: Mhz *";
	assert_false(amdgpu_parse_dpm(t, strlen(t), &d));
	assert_int_equal(d.levels, 0);
	assert_false(amdgpu_parse_dpm("", 0, &d));
	/* the length is honoured: the '*' past it is not seen */
	t = "0: 500Mhz\n1: 800Mhz *";
	assert_true(amdgpu_parse_dpm(t, strlen(t) - 2, &d));
	assert_false(d.cur_ok);
}

static void test_link_gen(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_link_gen("2.5 GT/s PCIe"), 1);
	assert_int_equal(amdgpu_link_gen("5.0 GT/s PCIe"), 2);
	assert_int_equal(amdgpu_link_gen("8 GT/s"), 3);
	assert_int_equal(amdgpu_link_gen("16.0 GT/s PCIe"), 4);
	assert_int_equal(amdgpu_link_gen("32.0 GT/s PCIe"), 5);
	assert_int_equal(amdgpu_link_gen("64.0 GT/s PCIe"), 6);
	assert_int_equal(amdgpu_link_gen("128.0 GT/s PCIe"), 7);
	assert_int_equal(amdgpu_link_gen("16.0GT/s"), 4);
	assert_int_equal(amdgpu_link_gen("Unknown"), 0);
	assert_int_equal(amdgpu_link_gen("Unknown speed"), 0);
	assert_int_equal(amdgpu_link_gen("12.0 GT/s PCIe"), 0);
	assert_int_equal(amdgpu_link_gen("16.0 Gb/s"), 0);
	assert_int_equal(amdgpu_link_gen(""), 0);
	assert_int_equal(amdgpu_link_gen(NULL), 0);
	assert_int_equal(amdgpu_link_gen("99999999999999999999999 GT/s"), 0);
}

static void test_parse_fdinfo(void **state)
{
	(void)state;
	amdgpu_fdinfo f;
	const char *t =
	    "pos:\t0\ndrm-driver:\tamdgpu\ndrm-client-id:\t17\ndrm-pdev:\t0000:9F:00.0\n"
	    "drm-memory-vram:\t8388608 KiB\ndrm-memory-gtt: \t2048 KiB\n"
	    "drm-resident-vram:\t1 KiB\ndrm-engine-gfx:\t0 ns\n"
	    "drm-engine-compute:\t123 ns\n";
	assert_true(amdgpu_parse_fdinfo(t, strlen(t), &f));
	assert_true(f.client_ok);
	assert_int_equal(f.client_id, 17);
	assert_string_equal(f.pdev, "0000:9f:00.0");
	assert_true(f.vram_ok);
	/* drm-memory-vram wins over the later drm-resident-vram */
	assert_int_equal(f.vram_bytes, 8388608ull * 1024);
	assert_int_equal(f.gtt_bytes, 2048ull * 1024);
	assert_true(f.gfx_ok);
	assert_int_equal(f.gfx_ns, 0);
	assert_int_equal(f.compute_ns, 123);
	/* another driver, and a file without drm-driver */
	t = "drm-driver:\ti915\ndrm-client-id:\t3\n";
	assert_false(amdgpu_parse_fdinfo(t, strlen(t), &f));
	t = "pdev:\t0000:9f:00.0\nvram mem:\t4096 kB\n";
	assert_false(amdgpu_parse_fdinfo(t, strlen(t), &f));
	/* units that are no size, numbers that overflow: absent */
	t = "drm-driver: amdgpu\ndrm-memory-vram: 5 parsecs\ndrm-memory-gtt: "
	    "99999999999999999999 KiB\ndrm-engine-gfx: 5 ms\ndrm-client-id: 7x\n";
	assert_true(amdgpu_parse_fdinfo(t, strlen(t), &f));
	assert_false(f.vram_ok);
	assert_false(f.gtt_ok);
	assert_false(f.gfx_ok);
	assert_false(f.client_ok);
	t = "drm-driver: amdgpu\ndrm-memory-vram: 17592186044416 GiB\ndrm-memory-gtt: 3 GiB\n";
	assert_true(amdgpu_parse_fdinfo(t, strlen(t), &f));
	assert_false(f.vram_ok); /* 2^44 GiB does not fit in 64 bits of bytes */
	assert_int_equal(f.gtt_bytes, 3ull << 30);
}

static void test_procs_fixture(void **state)
{
	(void)state;
	amdgpu_proc p[8];
	int n = amdgpu_procs_read(ROOT("proc"), p, 8);
	assert_int_equal(n, 2);
	/* 4242: client 17 (open twice) and client 18; 4243 shares 17 and gets nothing */
	assert_int_equal(p[0].pid, 4242);
	assert_string_equal(p[0].pdev, "0000:9f:00.0");
	assert_int_equal(p[0].clients, 2);
	assert_true(p[0].vram_ok);
	assert_int_equal(p[0].vram_bytes, (8ull << 30) + (1ull << 20));
	assert_int_equal(p[0].gtt_bytes, 2ull << 20);
	assert_true(p[0].gfx_ok);
	assert_int_equal(p[0].gfx_ns, 0);
	assert_int_equal(p[0].compute_ns, 123456789ull + 1000);
	/* 5000: the newer keys */
	assert_int_equal(p[1].pid, 5000);
	assert_string_equal(p[1].pdev, "0000:1b:00.0");
	assert_int_equal(p[1].vram_bytes, 2ull << 30);
	assert_int_equal(p[1].gtt_bytes, 4ull << 20);
	assert_int_equal(p[1].gfx_ns, 777);
	assert_false(p[1].compute_ok);
	assert_int_equal(amdgpu_procs_read(ROOT("no-such-proc"), p, 8), 0);
	/* room for one: the output stays within it */
	assert_int_equal(amdgpu_procs_read(ROOT("proc"), p, 1), 1);
}

static void test_fold_same_client_two_gpus(void **state)
{
	(void)state;
	/* client ids are per device: the same number on two GPUs is two clients */
	amdgpu_client c[2] = {{.pid = 9}, {.pid = 9}};
	for (int i = 0; i < 2; i++) {
		c[i].info.is_amdgpu = c[i].info.client_ok = c[i].info.vram_ok = true;
		c[i].info.client_id = 1;
		c[i].info.vram_bytes = 100;
	}
	snprintf(c[0].info.pdev, sizeof c[0].info.pdev, "0000:9f:00.0");
	snprintf(c[1].info.pdev, sizeof c[1].info.pdev, "0000:1b:00.0");
	amdgpu_proc p[4];
	assert_int_equal(amdgpu_fold_clients(c, 2, p, 4), 2);
	assert_string_equal(p[0].pdev, "0000:1b:00.0");
	assert_int_equal(p[0].vram_bytes, 100);
	assert_int_equal(p[1].vram_bytes, 100);
	assert_int_equal(amdgpu_fold_clients(c, 0, p, 4), 0);
}

static void assert_gm(const gpu_values *o, gpu_metric_id id, double want)
{
	if (!o->ok[id])
		fail_msg("%s: absent, want %g", gpu_metrics[id].key, want);
	if (o->v[id] != want)
		fail_msg("%s: %g, want %g", gpu_metrics[id].key, o->v[id], want);
}

static void test_map_mi300x(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_discover(ROOT("mi300x"), cards, AMDGPU_MAX_CARDS), 2);
	gpu_static st;
	amdgpu_static(&cards[1], 1, &st);
	assert_string_equal(st.name, "AMD Instinct MI300X OAM");
	assert_string_equal(st.serial, "2c1e6a4f8b0d3e57");
	assert_string_equal(st.uuid, "");
	assert_string_equal(st.pci_bus_id, "00000000:9F:00.0");
	assert_true(st.pci_ok);
	amdgpu_values a;
	amdgpu_read(&cards[1], &a);
	gpu_values o;
	memset(&o, 0xff, sizeof o); /* stale values must not survive */
	amdgpu_to_gpu_values(&st, &a, &o);
	assert_false(o.lost);
	assert_gm(&o, GM_INDEX, 1);
	assert_gm(&o, GM_PCI_BUS, 0x9f);
	assert_gm(&o, GM_PCI_DEVICE_ID, 0x74a11002u);
	assert_gm(&o, GM_UTIL_GPU, 87);
	assert_gm(&o, GM_UTIL_MEM, 41);
	assert_gm(&o, GM_MEM_TOTAL, 192 * 1024);
	assert_gm(&o, GM_MEM_USED, 150 * 1024 + 512);
	assert_gm(&o, GM_MEM_FREE, 41 * 1024 + 512);
	assert_gm(&o, GM_POWER_DRAW, 642);
	assert_gm(&o, GM_POWER_LIMIT, 750);
	assert_gm(&o, GM_TEMP_GPU, 71); /* no edge sensor: the junction */
	assert_gm(&o, GM_TEMP_MEM, 58);
	assert_gm(&o, GM_CLK_SM, 1400);
	assert_gm(&o, GM_CLK_GR, 1400);
	assert_gm(&o, GM_CLK_MEM, 1300);
	assert_gm(&o, GM_CLK_MAX_SM, 2100);
	assert_gm(&o, GM_PCIE_GEN_CUR, 5);
	assert_gm(&o, GM_PCIE_WIDTH_MAX, 16);
	assert_false(o.ok[GM_FAN]);
	/* what only NVIDIA measures stays absent */
	assert_false(o.ok[GM_CLK_REASONS]);
	/* power1_cap is the limit the driver enforces: status shows draw against it */
	assert_gm(&o, GM_POWER_ENFORCED_LIMIT, 750);
	int n = 0;
	for (int k = 0; k < GM__COUNT; k++)
		n += o.ok[k] != 0;
	assert_int_equal(n, 26);
}

static void test_map_rx_apu(void **state)
{
	(void)state;
	assert_int_equal(amdgpu_discover(ROOT("rx7900xtx"), cards, AMDGPU_MAX_CARDS), 1);
	gpu_static st;
	amdgpu_static(&cards[0], 0, &st);
	assert_string_equal(st.name, "AMD GPU 1002:744c"); /* no product_name */
	assert_int_equal(st.pci_subsystem_id, 0x471e1da2u);
	amdgpu_values a;
	gpu_values o;
	amdgpu_read(&cards[0], &a);
	amdgpu_to_gpu_values(&st, &a, &o);
	assert_gm(&o, GM_TEMP_GPU, 64); /* the edge sensor where there is one */
	assert_gm(&o, GM_FAN, 40);
	assert_gm(&o, GM_PCIE_GEN_MAX, 4);
	assert_int_equal(amdgpu_discover(ROOT("apu"), cards, AMDGPU_MAX_CARDS), 1);
	amdgpu_static(&cards[0], 0, &st);
	amdgpu_read(&cards[0], &a);
	amdgpu_to_gpu_values(&st, &a, &o);
	assert_gm(&o, GM_MEM_FREE, 512 - 301);
	assert_false(o.ok[GM_UTIL_MEM]);
	assert_false(o.ok[GM_POWER_LIMIT]);
	assert_false(o.ok[GM_CLK_MEM]);
	assert_false(o.ok[GM_PCIE_GEN_MAX]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_discover_mi300x),
	    cmocka_unit_test(test_read_mi300x),
	    cmocka_unit_test(test_rx7900xtx),
	    cmocka_unit_test(test_apu_missing_files),
	    cmocka_unit_test(test_no_sysfs),
	    cmocka_unit_test(test_parse_dpm),
	    cmocka_unit_test(test_link_gen),
	    cmocka_unit_test(test_parse_fdinfo),
	    cmocka_unit_test(test_procs_fixture),
	    cmocka_unit_test(test_fold_same_client_two_gpus),
	    cmocka_unit_test(test_map_mi300x),
	    cmocka_unit_test(test_map_rx_apu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
