/* test_exporter_render.c - the exposition text from hand-built snapshots. */
#include <stdbool.h>
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "exporter/buf.h"
#include "exporter/collectors.h"
#include "exporter/exposition.h"
#include "exporter/frame.h"
#include "util/strbuf.h"

/* The frame's values live in its snapshot; the test owns both. */
static gpu_values *vals_of(exporter_gpu *g)
{
	return (gpu_values *)g->vals;
}

static void set(exporter_gpu *g, gpu_metric_id id, double v)
{
	vals_of(g)->v[id] = v;
	vals_of(g)->ok[id] = 1;
}

static snapshot *snap_of(exporter_frame *f)
{
	return (snapshot *)f->snap;
}

/* Two H100s: GPU 0 fully populated, GPU 1 with GPM absent. */
static exporter_frame *two_gpus(void)
{
	exporter_frame *s = exporter_frame_new(2);
	snapshot *sn = calloc(1, sizeof *sn);
	assert_non_null(sn);
	snapshot_init(sn, 2);
	s->snap = sn;
	snprintf(s->driver, sizeof s->driver, "550.54.15");
	snprintf(s->nvml, sizeof s->nvml, "12.550.54.15");
	sn->t_wall = 1700000000.25;
	s->sample_seconds = 0.0042;
	s->samples_total = 7;
	for (int i = 0; i < 2; i++) {
		exporter_gpu *g = &s->gpus[i];
		g->vals = &sn->gpu[i];
		g->index = i;
		snprintf(g->uuid, sizeof g->uuid, "GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", i);
		snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "00000000:%02X:00.0", 0x18 + i);
		snprintf(g->name, sizeof g->name, "NVIDIA H100 80GB HBM3");
		snprintf(g->serial, sizeof g->serial, "165000000000%d", i);
		snprintf(g->vbios, sizeof g->vbios, "96.00.74.00.0%d", i);
		g->nprocs_total = 0;
		set(g, GM_UTIL_GPU, 87 + i);
		set(g, GM_POWER_DRAW, 312.5 + i);
		set(g, GM_TEMP_GPU, 61);
		set(g, GM_MEM_USED, 40960);
		set(g, GM_CLK_SM, 1980);
		set(g, GM_ENERGY, 123456789);
		set(g, GM_PCIE_GEN_CUR, 5);
		set(g, GM_PCIE_GEN_MAX, 5);
		set(g, GM_PCIE_WIDTH_CUR, 16);
		set(g, GM_PCIE_WIDTH_MAX, 16);
		set(g, GM_CLK_REASONS, 0x4);
	}
	set(&s->gpus[0], GM_GPM_TENSOR_ACTIVE, 45.5);
	set(&s->gpus[0], GM_GPM_SM_ACTIVE, 91.25);
	set(&s->gpus[0], GM_GPM_PCIE_TX, 2097152.0);
	return s;
}

static void frame_free(exporter_frame *s)
{
	snapshot_free(snap_of(s));
	free(snap_of(s));
	exporter_frame_free(s);
}

static char *render(const exporter_frame *s, const exporter_render_opts *o)
{
	exporter_buf b = {0};
	exporter_render(s, o, &b);
	assert_non_null(b.p);
	return b.p;
}

static exporter_render_opts opts_default(void)
{
	exporter_render_opts o = {.host_label = EXPORTER_HOSTLABEL_UPPER,
	                          .hostname = "node-7",
	                          .processes = 5,
	                          .version = "0.1.0"};
	return o;
}

/* The whole line that starts with prefix, or NULL. */
static const char *line_with(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, n))
			return p;
	return NULL;
}

static void assert_line(const char *text, const char *line)
{
	const char *p = line_with(text, line);
	if (!p || (p[strlen(line)] != '\n')) {
		print_error("missing line: %s\n--- output ---\n%s\n", line, text);
		fail();
	}
}

static int count_prefix(const char *text, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, prefix, len))
			n++;
	return n;
}

/*
 * Structural check of the text format: every family is HELP then TYPE then
 * its samples, contiguous, declared once; every sample belongs to the family
 * declared last; the text ends with a newline.
 */
static void assert_well_formed(const char *text)
{
	char family[256] = "", seen[64][256];
	int nseen = 0;
	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = (size_t)(nl - p);
		char line[4096];
		assert_true(n < sizeof line);
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl + 1;
		char name[256];
		if (!strncmp(line, "# HELP ", 7)) {
			assert_int_equal(sscanf(line + 7, "%255s", name), 1);
			for (int k = 0; k < nseen; k++)
				assert_string_not_equal(seen[k], name);
			assert_true(nseen < 64);
			snprintf(seen[nseen++], sizeof seen[0], "%s", name);
			snprintf(family, sizeof family, "%s", name);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char type[32];
			assert_int_equal(sscanf(line + 7, "%255s %31s", name, type), 2);
			assert_string_equal(name, family);
			assert_true(!strcmp(type, "gauge") || !strcmp(type, "counter") ||
			            !strcmp(type, "untyped"));
			continue;
		}
		size_t k = strcspn(line, "{ ");
		assert_true(k > 0 && k < sizeof name);
		memcpy(name, line, k);
		name[k] = '\0';
		assert_string_equal(name, family);
		/* A value follows the last space; it must parse entirely. */
		const char *val = strrchr(line, ' ');
		assert_non_null(val);
		char *end;
		strtod(val + 1, &end);
		assert_true(*end == '\0');
	}
}

static void test_dcgm_labels_and_values(void **state)
{
	exporter_frame *s = two_gpus();
	exporter_render_opts o = opts_default();
	char *t = render(s, &o);
	assert_well_formed(t);
	assert_line(t, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).");
	assert_line(t, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge");
	assert_line(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-00000000-aaaa-bbbb-cccc-"
	               "dddddddddddd\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
	               "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-7\","
	               "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 87");
	assert_line(t, "DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-00000001-aaaa-bbbb-cccc-"
	               "dddddddddddd\",pci_bus_id=\"00000000:19:00.0\",device=\"nvidia1\","
	               "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-7\","
	               "DCGM_FI_DRIVER_VERSION=\"550.54.15\"} 313.500000");
	/* Counters without _total would fail promtool's lint: untyped by default. */
	assert_line(t, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION untyped");
	/* GPM percentages become DCGM's ratios; PCIe bytes stay integers. */
	const char *tensor = line_with(t, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\"");
	assert_non_null(tensor);
	assert_true(!strncmp(strchr(tensor, '}'), "} 0.455000\n", 11));
	const char *pcie = line_with(t, "DCGM_FI_PROF_PCIE_TX_BYTES{gpu=\"0\"");
	assert_non_null(pcie);
	assert_true(!strncmp(strchr(pcie, '}'), "} 2097152\n", 10));
	/* GPU 1 has no GPM values: no series, never a 0. */
	assert_null(line_with(t, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"1\""));
	assert_int_equal(count_prefix(t, "DCGM_FI_DEV_GPU_UTIL{"), 2);
	/* A metric no GPU has: no family at all. */
	assert_null(line_with(t, "# HELP DCGM_FI_DEV_FB_FREE"));
	assert_null(line_with(t, "DCGM_FI_DEV_FB_FREE"));
	free(t);
	frame_free(s);
}

static void test_hostname_label_modes(void **state)
{
	exporter_frame *s = two_gpus();
	exporter_render_opts o = opts_default();
	o.host_label = EXPORTER_HOSTLABEL_LOWER;
	char *t = render(s, &o);
	const char *l = line_with(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"");
	assert_non_null(l);
	assert_non_null(strstr(l, "modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"node-7\","
	                          "DCGM_FI_DRIVER_VERSION"));
	free(t);
	o.host_label = EXPORTER_HOSTLABEL_NONE;
	t = render(s, &o);
	l = line_with(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"");
	assert_non_null(strstr(l, "modelName=\"NVIDIA H100 80GB HBM3\",DCGM_FI_DRIVER_VERSION="));
	assert_null(strstr(t, "ostname=\""));
	free(t);
	frame_free(s);
}

static void test_lost_gpu(void **state)
{
	exporter_frame *s = two_gpus();
	vals_of(&s->gpus[1])->lost = true;
	exporter_render_opts o = opts_default();
	char *t = render(s, &o);
	assert_well_formed(t);
	assert_int_equal(count_prefix(t, "DCGM_FI_DEV_GPU_UTIL{"), 1);
	assert_null(line_with(t, "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\""));
	assert_line(t, "gpuwhy_gpu_lost{gpu=\"1\"} 1");
	assert_line(t, "gpuwhy_gpu_lost{gpu=\"0\"} 0");
	assert_line(t,
	            "gpuwhy_gpu_info{gpu=\"1\",uuid=\"GPU-00000001-aaaa-bbbb-cccc-dddddddddddd\","
	            "pci_bus_id=\"00000000:19:00.0\",model_name=\"NVIDIA H100 80GB HBM3\","
	            "driver_version=\"550.54.15\"} 1");
	free(t);
	frame_free(s);
}

static void test_collectors_limit_order_help_labels(void **state)
{
	const char csv[] = "# comment\n"
	                   "DCGM_FI_DEV_POWER_USAGE, gauge, Power now (W).\n"
	                   "DCGM_FI_DEV_GPU_UTIL, counter, \n"
	                   "DCGM_FI_DEV_SERIAL, label, Serial\n"
	                   "DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, not ours\n";
	exporter_collectors c;
	char unknown[128];
	gw_fail err = {0};
	assert_int_equal(
	    exporter_collectors_parse(csv, strlen(csv), &c, unknown, sizeof unknown, &err), 0);
	assert_string_equal(unknown, "DCGM_FI_DEV_VGPU_LICENSE_STATUS");
	exporter_frame *s = two_gpus();
	exporter_render_opts o = opts_default();
	o.collectors = &c;
	char *t = render(s, &o);
	assert_well_formed(t);
	/* Only the listed families, in the CSV's order, with its help and type. */
	const char *power = strstr(t, "# HELP DCGM_FI_DEV_POWER_USAGE Power now (W).\n");
	const char *util = strstr(t, "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n");
	assert_non_null(power);
	assert_non_null(util);
	assert_true(power < util);
	assert_line(t, "# TYPE DCGM_FI_DEV_GPU_UTIL counter");
	assert_null(strstr(t, "DCGM_FI_DEV_GPU_TEMP"));
	assert_null(strstr(t, "DCGM_FI_PROF_"));
	/* The serial label replaces the driver version label (not listed). */
	const char *l = line_with(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"");
	assert_non_null(
	    strstr(l, "Hostname=\"node-7\",DCGM_FI_DEV_SERIAL=\"1650000000001\"} 88\n"));
	assert_null(strstr(t, "DCGM_FI_DRIVER_VERSION"));
	/* gpuwhy's own series are not affected by the collectors file. */
	assert_non_null(line_with(t, "gpuwhy_gpu_info{"));
	free(t);
	frame_free(s);
	exporter_collectors_free(&c);
}

static void test_label_fields_sorted(void **state)
{
	const char csv[] = "DCGM_FI_NVML_VERSION, label, x\nDCGM_FI_DRIVER_VERSION, label, x\n"
	                   "DCGM_FI_DEV_VBIOS_VERSION, label, x\nDCGM_FI_DEV_SERIAL, label, x\n"
	                   "DCGM_FI_DEV_GPU_TEMP, gauge, t\n";
	exporter_collectors c;
	char unknown[64];
	gw_fail err = {0};
	assert_int_equal(
	    exporter_collectors_parse(csv, strlen(csv), &c, unknown, sizeof unknown, &err), 0);
	exporter_frame *s = two_gpus();
	exporter_render_opts o = opts_default();
	o.collectors = &c;
	char *t = render(s, &o);
	assert_non_null(strstr(t, "Hostname=\"node-7\",DCGM_FI_DEV_SERIAL=\"1650000000000\","
	                          "DCGM_FI_DEV_VBIOS_VERSION=\"96.00.74.00.00\","
	                          "DCGM_FI_DRIVER_VERSION=\"550.54.15\","
	                          "DCGM_FI_NVML_VERSION=\"12.550.54.15\"} 61\n"));
	free(t);
	frame_free(s);
	exporter_collectors_free(&c);
}

static void test_escaping_and_utf8(void **state)
{
	exporter_frame *s = two_gpus();
	snprintf(s->gpus[0].name, sizeof s->gpus[0].name, "Odd \"GPU\" \\ x\ny");
	exporter_render_opts o = opts_default();
	o.hostname = "h\xff\xc3\xa9";
	char *t = render(s, &o);
	assert_well_formed(t);
	assert_non_null(strstr(t, "modelName=\"Odd \\\"GPU\\\" \\\\ x\\ny\""));
	/* An invalid byte becomes '?', valid UTF-8 (é) stays. */
	assert_non_null(strstr(t, "Hostname=\"h?\xc3\xa9\""));
	free(t);
	frame_free(s);
}

static void test_pcie_fallback_without_gpm(void **state)
{
	exporter_frame *s = two_gpus();
	set(&s->gpus[1], GM_PCIE_TX, 1.5); /* MiB/s from NVML's PCIe counters */
	set(&s->gpus[1], GM_PCIE_RX, 0.25);
	exporter_render_opts o = opts_default();
	char *t = render(s, &o);
	const char *l = line_with(t, "DCGM_FI_PROF_PCIE_TX_BYTES{gpu=\"1\"");
	assert_non_null(l);
	assert_true(!strncmp(strchr(l, '}'), "} 1572864\n", 10));
	l = line_with(t, "DCGM_FI_PROF_PCIE_RX_BYTES{gpu=\"1\"");
	assert_non_null(l);
	assert_true(!strncmp(strchr(l, '}'), "} 262144\n", 9));
	free(t);
	frame_free(s);
}

static void test_gpuwhy_series(void **state)
{
	exporter_frame *s = two_gpus();
	set(&s->gpus[1], GM_CLK_REASONS, 0x1 | 0x40);
	s->gpus[0].nprocs_total = 3;
	s->gpus[0].nprocs = 3;
	const char *names[] = {"python3", "trainer", "x\"y"};
	for (int k = 0; k < 3; k++) {
		exporter_proc *p = &s->gpus[0].procs[k];
		p->pid = 1000 + (unsigned)k;
		snprintf(p->command, sizeof p->command, "%s", names[k]);
		p->mem_ok = true;
		p->mem_bytes = (3 - (uint64_t)k) * 1024ULL * 1024ULL * 1024ULL;
		p->sm_ok = k != 1;
		p->sm_ratio = 0.5;
	}
	s->nfindings = 2;
	s->findings[0] =
	    (exporter_finding){.gpu = 1, .rule = "throttled", .severity = EXPORTER_SEV_ERROR};
	s->findings[1] =
	    (exporter_finding){.gpu = -1, .rule = "host_swap", .severity = EXPORTER_SEV_WARN};
	exporter_render_opts o = opts_default();
	o.processes = 2;
	char *t = render(s, &o);
	assert_well_formed(t);
	assert_line(t, "gpuwhy_gpu_throttle_reason{gpu=\"0\",reason=\"sw_power_cap\"} 1");
	assert_line(t, "gpuwhy_gpu_throttle_reason{gpu=\"0\",reason=\"gpu_idle\"} 0");
	assert_line(t, "gpuwhy_gpu_throttle_reason{gpu=\"1\",reason=\"hw_thermal_slowdown\"} 1");
	assert_line(t, "gpuwhy_gpu_throttle_reason{gpu=\"1\",reason=\"gpu_idle\"} 1");
	assert_int_equal(count_prefix(t, "gpuwhy_gpu_throttle_reason{gpu=\"1\""), 9);
	assert_line(t, "gpuwhy_gpu_pcie_link_gen_current{gpu=\"1\"} 5");
	assert_line(t, "gpuwhy_gpu_pcie_link_width_max{gpu=\"0\"} 16");
	assert_line(t, "gpuwhy_gpu_processes{gpu=\"0\"} 3");
	assert_line(t, "gpuwhy_gpu_processes{gpu=\"1\"} 0");
	/* Top 2 only: bounded cardinality. */
	assert_line(t,
	            "gpuwhy_process_gpu_memory_bytes{gpu=\"0\",pid=\"1000\",command=\"python3\"} "
	            "3221225472");
	assert_line(t,
	            "gpuwhy_process_gpu_memory_bytes{gpu=\"0\",pid=\"1001\",command=\"trainer\"} "
	            "2147483648");
	assert_int_equal(count_prefix(t, "gpuwhy_process_gpu_memory_bytes{"), 2);
	assert_line(t, "gpuwhy_process_sm_utilization_ratio{gpu=\"0\",pid=\"1000\","
	               "command=\"python3\"} 0.500000");
	assert_int_equal(count_prefix(t, "gpuwhy_process_sm_utilization_ratio{"), 1);
	assert_line(t, "gpuwhy_finding{gpu=\"1\",rule=\"throttled\",severity=\"error\"} 1");
	assert_line(t, "gpuwhy_finding{rule=\"host_swap\",severity=\"warn\"} 1");
	assert_line(t, "gpuwhy_exporter_build_info{version=\"0.1.0\"} 1");
	assert_line(t, "gpuwhy_exporter_samples_total 7");
	assert_line(t, "gpuwhy_exporter_sample_duration_seconds 0.004200");
	assert_line(t, "gpuwhy_exporter_last_sample_timestamp_seconds 1700000000.250000");
	/* No host sample: no host families. */
	assert_null(strstr(t, "gpuwhy_host_"));
	free(t);
	o.processes = 0;
	t = render(s, &o);
	assert_null(strstr(t, "gpuwhy_process_"));
	assert_non_null(line_with(t, "gpuwhy_finding{gpu=\"1\",rule=\"throttled\""));
	free(t);
	frame_free(s);
}

static void test_host_series(void **state)
{
	exporter_frame *s = two_gpus();
	snapshot *h = snap_of(s);
	s->host = true;
	h->h[HM_CPU_BUSY_AVG] = 62.5;
	h->h[HM_CPU_IOWAIT] = 12.5;
	snapshot_set_ncpu(h, 4);
	h->cpu_busy[0] = 100;
	h->cpu_iowait[0] = 0;
	h->cpu_busy[3] = 25;
	h->h[HM_MEM_TOTAL] = 24576; /* MiB */
	h->h[HM_MEM_USED] = 1024;
	h->h[HM_SWAP_TOTAL] = 0;
	h->h[HM_DISK_READ] = 1048576.5;
	h->h[HM_CPU_BUSY_MAX] = 100;
	exporter_render_opts o = opts_default();
	char *t = render(s, &o);
	assert_well_formed(t);
	assert_line(t, "gpuwhy_host_cpu_busy_ratio 0.625000");
	assert_line(t, "gpuwhy_host_cpu_iowait_ratio 0.125000");
	assert_line(t, "gpuwhy_host_core_busy_ratio{cpu=\"0\"} 1.000000");
	assert_line(t, "gpuwhy_host_core_busy_ratio{cpu=\"3\"} 0.250000");
	assert_line(t, "gpuwhy_host_core_iowait_ratio{cpu=\"0\"} 0.000000");
	assert_null(line_with(t, "gpuwhy_host_core_iowait_ratio{cpu=\"3\"}"));
	assert_line(t, "gpuwhy_host_memory_total_bytes 25769803776");
	assert_line(t, "gpuwhy_host_memory_used_bytes 1073741824");
	assert_line(t, "gpuwhy_host_swap_total_bytes 0");
	assert_null(strstr(t, "gpuwhy_host_swap_used_bytes"));
	assert_null(strstr(t, "gpuwhy_host_memory_available_bytes"));
	/* Every family comes from the host table; a row without one is not exported. */
	assert_line(t, "gpuwhy_host_disk_read_bytes_per_second 1048576.500000");
	assert_line(t, "# TYPE gpuwhy_host_disk_read_bytes_per_second gauge");
	assert_null(strstr(t, "busy_max"));
	assert_null(strstr(t, "gpuwhy_host_swap_in"));
	free(t);
	frame_free(s);
}

static void fixed6(double v, const char *want)
{
	exporter_buf b = {0};
	exporter_buf_fixed6(&b, v);
	assert_string_equal(b.p, want);
	gw_sb_free(&b);
}

static void check_numbers(void)
{
	fixed6(0.123456, "0.123456");
	fixed6(0, "0.000000");
	fixed6(-0.5, "-0.500000");
	fixed6(-0.0000001, "0.000000");
	fixed6(1234.5, "1234.500000");
	fixed6(0.0000005, "0.000001");
	fixed6(312.4999996, "312.500000");
	fixed6(1e13, "10000000000000.000000");
	fixed6(-2.5e15, "-2500000000000000.000000");
	exporter_buf b = {0};
	exporter_buf_int(&b, -9223372036854775807LL - 1);
	gw_sb_puts(&b, " ");
	exporter_buf_int(&b, 0);
	gw_sb_puts(&b, " ");
	exporter_buf_int(&b, 1234567);
	assert_string_equal(b.p, "-9223372036854775808 0 1234567");
	gw_sb_free(&b);
}

static void test_numbers_c_locale(void **state)
{
	check_numbers();
}

/* A locale with a decimal comma must not leak into the exposition. */
static void test_numbers_decimal_comma_locale(void **state)
{
	char dir[] = "/tmp/gpuwhy-locale-XXXXXX";
	if (!mkdtemp(dir))
		skip();
	char cmd[256];
	snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
	         dir);
	bool have = system(cmd) == 0;
	if (have) {
		setenv("LOCPATH", dir, 1);
		have = setlocale(LC_ALL, "de_DE.UTF-8") != NULL;
	}
	if (have) {
		char probe[16];
		snprintf(probe, sizeof probe, "%.1f", 1.5);
		assert_string_equal(probe, "1,5"); /* the locale really is active */
		check_numbers();
		exporter_frame *s = two_gpus();
		exporter_render_opts o = opts_default();
		char *t = render(s, &o);
		assert_non_null(strstr(t, "} 312.500000\n"));
		assert_null(strstr(t, "312,5"));
		free(t);
		frame_free(s);
		setlocale(LC_ALL, "C");
		unsetenv("LOCPATH");
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if (!have)
		skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dcgm_labels_and_values),
	    cmocka_unit_test(test_hostname_label_modes),
	    cmocka_unit_test(test_lost_gpu),
	    cmocka_unit_test(test_collectors_limit_order_help_labels),
	    cmocka_unit_test(test_label_fields_sorted),
	    cmocka_unit_test(test_escaping_and_utf8),
	    cmocka_unit_test(test_pcie_fallback_without_gpm),
	    cmocka_unit_test(test_gpuwhy_series),
	    cmocka_unit_test(test_host_series),
	    cmocka_unit_test(test_numbers_c_locale),
	    cmocka_unit_test(test_numbers_decimal_comma_locale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
