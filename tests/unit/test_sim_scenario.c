/*
 * test_sim_scenario.c - the scenario parser: shipped files parse to their
 * values; every kind of bad input gives one clear "<file>:<line>:<column>:
 * <path>: <what>" message, never a crash or a partial result.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nvml_abi.h"
#include "sim_scenario.h"
#include "sim_state.h"

static const char *scenario_path(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/%s.json", GPUWHY_SOURCE_SCENARIOS, name);
	return path;
}

/* Parse text; return the error message, or NULL on success (result freed). */
static const char *parse_err(const char *text)
{
	static char err[1024];
	sim_scenario *s = (sim_scenario *)1;
	int rc = sim_scenario_parse(text, strlen(text), "t.json", &s, err, sizeof err);
	if (rc == 0) {
		assert_non_null(s);
		sim_scenario_free(s);
		return NULL;
	}
	assert_int_equal(rc, -1);
	assert_null(s);
	return err;
}

#define HEAD                                                                                       \
	"{\n"                                                                                      \
	"  \"schema\": 1,\n"                                                                       \
	"  \"driver\": {\"version\": \"550.54.15\", \"cuda_version\": 12040, \"nvml_version\": "   \
	"\"12.550\"},\n"

/* One GPU object (lines 5-14 of a document that starts with HEAD and "gpus": [). */
#define GPU_LINES(extra) GPU_LINES_ARCH("hopper", extra)
#define GPU_LINES_ARCH(arch, extra)                                                                \
	"    {\"name\": \"Test GPU\", \"architecture\": \"" arch "\", \"vbios\": \"1.0\",\n"       \
	"     \"compute_capability\": [9, 0],\n"                                                   \
	"     \"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": \"0x233010DE\",\n"            \
	"             \"max_gen\": 5, \"max_width\": 16},\n"                                       \
	"     \"memory\": {\"total_mib\": 1000},\n"                                                \
	"     \"power\": {\"limit_w\": 500, \"min_limit_w\": 100, \"max_limit_w\": 500,\n"         \
	"               \"idle_w\": 50, \"busy_w\": 450},\n"                                       \
	"     \"clocks\": {\"max_sm_mhz\": 2000, \"max_mem_mhz\": 2600, \"idle_sm_mhz\": 300},\n"  \
	"     \"thermal\": {\"idle_c\": 30, \"busy_c\": 70, \"slowdown_c\": 90, \"shutdown_c\": "  \
	"95}" extra "}"

#define DOC(extra) HEAD "  \"gpus\": [\n" GPU_LINES(extra) "\n  ]\n}\n"

static void expect(const char *text, const char *want)
{
	const char *err = parse_err(text);
	if (!err)
		fail_msg("parsed, expected error '%s'", want);
	if (!strstr(err, want))
		fail_msg("error '%s' does not contain '%s'", err, want);
}

static void test_minimal_document_parses(void **state)
{
	(void)state;
	const char *err = parse_err(DOC(""));
	if (err)
		fail_msg("%s", err);
}

static void test_shipped_scenarios(void **state)
{
	(void)state;
	static const char *names[] = {"h100x1",           "h100x8-nvlink",        "a100x4-pcie",
	                              "rtx4090-throttle", "a100x2-pcie-degraded", "l4x2-foreign",
	                              "h100x1-lost"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		sim_scenario *s;
		char err[600];
		if (sim_scenario_load(scenario_path(names[i]), &s, err, sizeof err) != 0)
			fail_msg("%s", err);
		assert_string_equal(s->name, names[i]);
		assert_true(strlen(s->description) > 10);
		sim_scenario_free(s);
	}
	sim_scenario *s;
	char err[600];
	assert_int_equal(sim_scenario_load(scenario_path("h100x8-nvlink"), &s, err, sizeof err), 0);
	assert_int_equal(s->n_gpus, 8);
	for (int i = 0; i < 8; i++) {
		const sim_gpu *g = &s->gpus[i];
		assert_string_equal(g->name, "NVIDIA H100 80GB HBM3"); /* from gpu_defaults */
		assert_int_equal(g->mem_total, 81559);
		assert_int_equal(g->n_links, 18);
		assert_int_equal(g->numa_node, i < 4 ? 0 : 1);
		assert_true(g->gpm);
		assert_int_equal(g->pci.device_id, 0x233010DE);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(g->uuid, s->gpus[j].uuid);
	}
	assert_string_equal(s->gpus[4].pci.bus_id, "00000000:9D:00.0");
	sim_scenario_free(s);
	assert_int_equal(sim_scenario_load(scenario_path("rtx4090-throttle"), &s, err, sizeof err),
	                 0);
	const sim_gpu *g = &s->gpus[0];
	assert_false(g->has_ecc);
	assert_false(g->has_serial);
	assert_true(g->has_fan);
	assert_false(g->gpm);
	assert_int_equal(g->n_episodes, 2);
	assert_float_equal(g->repeat, 120, 0);
	assert_int_equal(g->episodes[0].reasons, nvmlClocksEventReasonSwThermalSlowdown |
	                                             nvmlClocksThrottleReasonHwThermalSlowdown);
	sim_scenario_free(s);
	assert_int_equal(sim_scenario_load(scenario_path("l4x2-foreign"), &s, err, sizeof err), 0);
	assert_int_equal(s->n_procs, 2);
	assert_int_equal(s->procs[1].pid, 4194001);
	assert_int_equal(s->procs[0].used_mib, 15360);
	assert_string_equal(s->procs[0].user, "alice");
	sim_scenario_free(s);
}

static void test_syntax_errors(void **state)
{
	(void)state;
	expect("", "t.json:1:");
	expect("   \n", "t.json:2:");
	expect("{\n  \"schema\": 1,\n  oops\n}\n", "t.json:3:");
	expect("{\"schema\": 1,}", "t.json:1:");
	expect("[1, 2]", "t.json:1:1: (top level): a scenario is a JSON object");
	expect("{\"schema\": 1} trailing", "t.json:1:");
	expect("{\"schema\": 1, \"schema\": 1}", "duplicate object key");
	expect("{\"a\": \"\xff\xfe\"}", "t.json:1:");
	const char nul[] = "{\"name\": \"a\0b\"}";
	char err[256];
	sim_scenario *s;
	assert_int_equal(sim_scenario_parse(nul, sizeof nul - 1, "t.json", &s, err, sizeof err),
	                 -1);
}

static void test_structure_errors(void **state)
{
	(void)state;
	expect("{\"schema\": 2}", "t.json:1:12: schema: 2 is out of range (1 to 1)");
	expect("{\"schema\": \"1\"}", "t.json:1:12: schema: expected an integer, got a string");
	expect("{}", "t.json:1:1: (top level): missing required key \"schema\"");
	expect(HEAD "  \"gpus\": []\n}", "t.json:4:11: gpus: a scenario needs at least one GPU");
	expect(HEAD "  \"gpus\": [],\n  \"gpuz\": 1\n}",
	       "t.json:5:3: gpuz: unknown key \"gpuz\" (known keys: schema, name,");
	expect(HEAD "  \"gpus\": [7]\n}",
	       "t.json:4:12: gpus[0]: expected an object, got an integer");
	expect("{\"schema\": 1, \"driver\": {\"version\": \"x\", \"cuda_version\": 12040}}",
	       "driver: missing required key \"nvml_version\"");
}

static void test_gpu_errors(void **state)
{
	(void)state;
	/* An unknown key nested in the GPU, located at the key. */
	expect(DOC(",\n     \"power_cap\": 3"),
	       "t.json:14:6: gpus[0].power_cap: unknown key \"power_cap\"");
	/* Wrong type, located at the value. */
	expect(DOC(",\n     \"numa_node\": \"zero\""),
	       "t.json:14:19: gpus[0].numa_node: expected an integer, got a string");
	expect(DOC(",\n     \"fan\": 50"), "gpus[0].fan: expected an object, got an integer");
	/* Out of range. */
	expect(DOC(",\n     \"pstate\": {\"idle\": 16}"),
	       "t.json:14:25: gpus[0].pstate.idle: 16 is out of range (0 to 15)");
	expect(DOC(",\n     \"util_period_ms\": 20"), "gpus[0].util_period_ms: 20 is out of range");
	expect(DOC(",\n     \"cpu_affinity\": \"0-3,x\""), "is not a CPU list");
	expect(DOC(",\n     \"cpu_affinity\": \"5-2\""), "is not a CPU list");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES_ARCH("ampere", ", \"gpm\": true") "\n  ]\n}\n",
	       "t.json:13:90: gpus[0].gpm: GPM needs a Hopper");
	expect(DOC(",\n     \"retired_pages\": {\"sbe\": [1]}"),
	       "retired pages need an \"ecc\" object");
	expect(DOC(",\n     \"ecc\": {\"sbe_volatile\": 5, \"sbe_aggregate\": 2}"),
	       "aggregate counts include the volatile ones");
	expect(DOC(",\n     \"nvlink\": [{\"links\": 2, \"gpu\": 0}]"),
	       "a GPU cannot link to itself");
	expect(DOC(",\n     \"nvlink\": [{\"links\": 2}]"), "give the remote end as \"gpu\"");
	expect(DOC(",\n     \"nvlink\": [{\"links\": 30, \"bus_id\": \"0000:05:00.0\"}, "
	           "{\"links\": 7, \"bus_id\": \"0000:06:00.0\"}]"),
	       "more than 36 NVLinks");
	expect(DOC(",\n     \"uuid\": \"1234\""), "a GPU UUID starts with \"GPU-\"");
	expect(HEAD "  \"gpus\": [{\"name\": \"\", \"architecture\": \"hopper\", \"vbios\": \"1\", "
	            "\"compute_capability\": [9, 0]}]}",
	       "t.json:4:21: gpus[0].name: the name cannot be empty");
	expect(HEAD
	       "  \"gpus\": [{\"name\": \"x\", \"architecture\": \"hopper\", \"vbios\": \"1\", "
	       "\"compute_capability\": [9]}]}",
	       "gpus[0].compute_capability: expected [major, minor], like [9, 0]");
	expect(DOC(",\n     \"compute_mode\": \"shared\""),
	       "unknown value \"shared\" (one of: default, exclusive_thread, prohibited, "
	       "exclusive_process)");
}

/* An AMD GPU: its own architectures and vendor id, after the NVIDIA GPUs, no NVLink or MIG. */
#define AMD_GPU(arch, did, extra)                                                                  \
	"    {\"vendor\": \"amd\", \"name\": \"MI\", \"architecture\": \"" arch "\", "             \
	"\"vbios\": \"1\",\n"                                                                      \
	"     \"pci\": {\"bus_id\": \"0000:09:00.0\", \"device_id\": \"" did "\",\n"               \
	"             \"max_gen\": 5, \"max_width\": 16},\n"                                       \
	"     \"memory\": {\"total_mib\": 1000},\n"                                                \
	"     \"power\": {\"limit_w\": 500, \"min_limit_w\": 100, \"max_limit_w\": 500,\n"         \
	"               \"idle_w\": 50, \"busy_w\": 450},\n"                                       \
	"     \"clocks\": {\"max_sm_mhz\": 2000, \"max_mem_mhz\": 2600, \"idle_sm_mhz\": 300},\n"  \
	"     \"thermal\": {\"idle_c\": 30, \"busy_c\": 70, \"slowdown_c\": 90, \"shutdown_c\": "  \
	"95}" extra "}"

static void test_amd_gpus(void **state)
{
	(void)state;
	sim_scenario *s;
	char err[600];
	const char *mixed = HEAD
	    "  \"gpus\": [\n" GPU_LINES("") ",\n" AMD_GPU("cdna3", "0x74A11002", "") "\n  ]\n}\n";
	assert_int_equal(sim_scenario_parse(mixed, strlen(mixed), "t.json", &s, err, sizeof err),
	                 0);
	assert_int_equal(s->n_gpus, 2);
	assert_int_equal(s->n_nvidia, 1); /* NVML sees the H100 alone */
	assert_true(s->gpus[1].amd);
	assert_int_equal(s->gpus[1].amd_family, SIM_AMD_CDNA3);
	sim_scenario_free(s);
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("cdna3", "0x74A11002",
	                                      "") ",\n" GPU_LINES("") "\n  ]\n}\n",
	       "gpus[1].vendor: NVIDIA GPUs come before the AMD GPUs");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("hopper", "0x74A11002", "") "\n  ]\n}\n",
	       "an AMD GPU's architecture is cdna2, cdna3, rdna2 or rdna3");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES_ARCH("rdna3", "") "\n  ]\n}\n",
	       "cdna and rdna architectures need \"vendor\": \"amd\"");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("cdna3", "0x233010DE", "") "\n  ]\n}\n",
	       "an AMD GPU's device_id ends in vendor 1002");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("cdna3", "0x74A11002",
	                                      ", \"mig\": {\"current\": false}") "\n  ]\n}\n",
	       "an AMD GPU has no MIG");
	/* a reset that succeeds: AMD only, after lost_after_s never, back_after_s with it */
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(", \"reset_at_s\": 4") "\n  ]\n}\n",
	       "gpus[0].reset_at_s: a GPU reset is simulated on AMD GPUs only");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("cdna3", "0x74A11002",
	                                      ", \"back_after_s\": 2") "\n  ]\n}\n",
	       "gpus[0].back_after_s: needs reset_at_s");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU(
	           "cdna3", "0x74A11002", ", \"reset_at_s\": 4, \"back_after_s\": 0") "\n  ]\n}\n",
	       "gpus[0].back_after_s: ");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU(
	           "cdna3", "0x74A11002", ", \"reset_at_s\": 4, \"lost_after_s\": 5") "\n  ]\n}\n",
	       "gpus[0].reset_at_s: the reset must be over before lost_after_s (5)");
	for (const char *n = "mi300x8"; n; n = strcmp(n, "mi300x8") ? NULL : "rx7900xtx") {
		if (sim_scenario_load(scenario_path(n), &s, err, sizeof err) != 0)
			fail_msg("%s", err);
		assert_int_equal(s->n_nvidia, 0);
		/* the table each family's driver writes: none for MI300 (v1.4+), v1.3 for Navi 31
		 */
		assert_int_equal(s->gpus[0].gpu_metrics,
		                 strcmp(n, "mi300x8") ? SIM_AMDM_V1_3 : SIM_AMDM_NONE);
		assert_false(s->gpus[0].apu);
		sim_scenario_free(s);
	}
}

/* "amdgpu": an APU, its GTT and its gpu_metrics version. */
static void test_amdgpu_object(void **state)
{
	(void)state;
	sim_scenario *s;
	char err[512];
	if (sim_scenario_load(scenario_path("apu-780m"), &s, err, sizeof err) != 0)
		fail_msg("%s", err);
	assert_true(s->gpus[0].apu);
	assert_int_equal(s->gpus[0].gpu_metrics, SIM_AMDM_V2_1);
	assert_int_equal(s->gpus[0].gtt_total_b, 15360ull << 20);
	assert_int_equal(s->gpus[0].gtt_used_b, 9216ull << 20);
	assert_false(s->gpus[0].has_fan);
	sim_scenario_free(s);
	const char *e = parse_err(
	    HEAD "  \"gpus\": [\n" AMD_GPU("rdna3", "0x15BF1002",
	                                   ", \"amdgpu\": {\"apu\": true, \"gpu_metrics\": "
	                                   "\"2.2\", \"gtt_mib\": 4096}") "\n  ]\n}\n");
	if (e)
		fail_msg("%s", e);
	expect(HEAD "  \"gpus\": [\n" AMD_GPU(
	           "rdna3", "0x744C1002", ", \"amdgpu\": {\"gpu_metrics\": \"2.2\"}") "\n  ]\n}\n",
	       "gpus[0].amdgpu.gpu_metrics: v2 tables are an APU's");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("rdna3", "0x15BF1002",
	                                      ", \"amdgpu\": {\"apu\": true, \"gpu_metrics\": "
	                                      "\"1.4\"}") "\n  ]\n}\n",
	       "gpus[0].amdgpu.gpu_metrics");
	expect(HEAD "  \"gpus\": [\n" AMD_GPU("rdna3", "0x15BF1002",
	                                      ", \"amdgpu\": {\"gtt_mib\": 10, \"gtt_used_mib\": "
	                                      "11}") "\n  ]\n}\n",
	       "gpus[0].amdgpu.gtt_used_mib: 11 is out of range");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(", \"amdgpu\": {\"apu\": true}") "\n  ]\n}\n",
	       "only a GPU with \"vendor\": \"amd\" has it");
}

static void test_missing_required_in_gpu(void **state)
{
	(void)state;
	const char *text = HEAD "  \"gpus\": [\n    {\"architecture\": \"hopper\"}\n  ]\n}\n";
	expect(text, "t.json:5:5: gpus[0]: missing required key \"name\"");
	expect(HEAD
	       "  \"gpus\": [{\"name\": \"x\", \"architecture\": \"hopper\", \"vbios\": \"1\", "
	       "\"compute_capability\": [9, 0]}]}",
	       "gpus[0]: missing required key \"pci\"");
}

static void test_value_errors(void **state)
{
	(void)state;
	const char *base = HEAD "  \"gpus\": [{\"name\": \"x\", \"architecture\": \"hopper\", "
	                        "\"vbios\": \"1\", \"compute_capability\": [9, 0], ";
	char buf[4096];
	snprintf(buf, sizeof buf, "%s\"pci\": {\"bus_id\": \"1:2:3\"}}]}", base);
	expect(buf, "is not a PCI bus id");
	snprintf(buf, sizeof buf,
	         "%s\"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": \"0xZZ\"}}]}", base);
	expect(buf, "\"0xZZ\" is not a 32-bit hex number");
	snprintf(buf, sizeof buf,
	         "%s\"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": 1, \"max_gen\": 4, "
	         "\"max_width\": 16, \"gen\": 5}}]}",
	         base);
	expect(buf, "gpus[0].pci.gen: 5 is out of range (1 to 4)");
	snprintf(buf, sizeof buf,
	         "%s\"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": 1, \"max_gen\": 4, "
	         "\"max_width\": 3}}]}",
	         base);
	expect(buf, "3 is not a PCIe link width");
	/* Power limit above its maximum, reserved memory as large as the memory, thresholds. */
	const char *full =
	    "\"pci\": {\"bus_id\": \"0000:01:00.0\", \"device_id\": 1, \"max_gen\": 4, "
	    "\"max_width\": 16}, \"clocks\": {\"max_sm_mhz\": 2000, \"max_mem_mhz\": 2600, "
	    "\"idle_sm_mhz\": 300}, ";
	snprintf(buf, sizeof buf,
	         "%s%s\"memory\": {\"total_mib\": 1000}, \"power\": {\"limit_w\": 900, "
	         "\"min_limit_w\": 100, \"max_limit_w\": 500, \"idle_w\": 50, \"busy_w\": 450}}]}",
	         base, full);
	expect(buf, "gpus[0].power.limit_w: 900 is out of range (100 to 500)");
	snprintf(buf, sizeof buf,
	         "%s%s\"memory\": {\"total_mib\": 1000, \"reserved_mib\": 1000}}]}", base, full);
	expect(buf, "gpus[0].memory.reserved_mib: 1000 is out of range (0 to 999)");
	snprintf(buf, sizeof buf,
	         "%s%s\"memory\": {\"total_mib\": 1000}, \"power\": {\"limit_w\": 400, "
	         "\"min_limit_w\": 100, \"max_limit_w\": 500, \"idle_w\": 50, \"busy_w\": 450}, "
	         "\"thermal\": {\"idle_c\": 30, \"busy_c\": 70, \"slowdown_c\": 99, "
	         "\"shutdown_c\": 95}}]}",
	         base, full);
	expect(buf, "gpus[0].thermal.slowdown_c: 99 is out of range (20 to 94)");
	expect(DOC(",\n     \"serial\": \"0123456789012345678901234567890123456789\""),
	       "gpus[0].serial: string is 40 bytes long, at most 29 allowed");
}

static void test_behaviour_errors(void **state)
{
	(void)state;
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"level\": {\"util\": 50, \"sm_active\": "
	           "0.9}}]"),
	       "gpus[0].load[0].level: sm_active 0.9 exceeds util 50% / 100");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"level\": {\"util\": 150}}]"),
	       "gpus[0].load[0].level.util: 150 is out of range (0 to 100)");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"end_s\": 10, \"level\": {\"util\": 5}}, "
	           "{\"start_s\": 5, \"level\": {\"util\": 5}}]"),
	       "gpus[0].load[1].start_s: load segments must be in order and must not overlap");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"shape\": \"square\", \"level\": {}}]"),
	       "gpus[0].load[0]: missing required key \"period_s\"");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"shape\": \"saw\", \"level\": {}}]"),
	       "unknown value \"saw\" (one of: steady, square, ramp, sine)");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"duty\": 0.5, \"level\": {}}]"),
	       "duty only applies to the square shape");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"shape\": \"ramp\", \"level\": {}}]"),
	       "missing required key \"ramp_s\"");
	expect(DOC(",\n     \"load\": [{\"start_s\": 5, \"end_s\": 5, \"level\": {}}]"),
	       "end_s must be after start_s");
	expect(DOC(",\n     \"load\": [{\"start_s\": 0, \"level\": {\"utilisation\": 5}}]"),
	       "unknown key \"utilisation\"");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"meltdown\", \"start_s\": 1}]"),
	       "unknown value \"meltdown\"");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"throttle\", \"start_s\": 1, \"reasons\": "
	           "[]}]"),
	       "a throttle episode needs at least one reason");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"throttle\", \"start_s\": 1, "
	           "\"reasons\": [\"too_hot\"]}]"),
	       "gpus[0].episodes[0].reasons[0]: unknown reason \"too_hot\"");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"throttle\", \"start_s\": 1, "
	           "\"reasons\": [\"sw_thermal\"], \"fan_pct\": 100}]"),
	       "this GPU has no fan");
	expect(
	    DOC(",\n     \"episodes\": [{\"kind\": \"throttle\", \"start_s\": 1, "
	        "\"reasons\": [\"sw_thermal\"], \"sm_clock_mhz\": 900, \"clock_drop_pct\": 20}]"),
	    "give sm_clock_mhz or clock_drop_pct, not both");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"ecc\", \"at_s\": 1, \"sbe\": 1}]"),
	       "ECC episodes need an \"ecc\" object");
	expect(DOC(",\n     \"episodes\": [{\"kind\": \"xid\", \"start_s\": 1, \"code\": 1}]"),
	       "unknown key \"start_s\"");
	expect(
	    DOC(",\n     \"episodes\": [{\"kind\": \"link_downtrain\", \"start_s\": 1, \"gen\": 6, "
	        "\"width\": 8}]"),
	    "gen: 6 is out of range (1 to 5)");
	expect(DOC(",\n     \"repeat_s\": 10, \"load\": [{\"start_s\": 0, \"end_s\": 20, "
	           "\"level\": {}}]"),
	       "ends after repeat_s (10)");
	expect(DOC(",\n     \"lost_after_s\": -1"), "lost_after_s: -1 is out of range");
}

static void test_defaults_and_processes(void **state)
{
	(void)state;
	/* A value from gpu_defaults is reported where it is written. */
	const char *text =
	    HEAD "  \"gpu_defaults\": {\"fan\": {\"idle_pct\": \"x\", \"busy_pct\": 50}},\n"
	         "  \"gpus\": [\n" GPU_LINES("") "\n  ]\n}\n";
	expect(text, "t.json:4:40: gpu_defaults.fan.idle_pct (for gpus[0]): expected a number");
	expect(HEAD
	       "  \"gpu_defaults\": {\"watts\": 3},\n  \"gpus\": [\n" GPU_LINES("") "\n  ]\n}\n",
	       "t.json:4:20: gpu_defaults.watts: unknown key \"watts\"");
	/* null removes a default. */
	const char *err =
	    parse_err(HEAD "  \"gpu_defaults\": {\"fan\": {\"idle_pct\": 10, \"busy_pct\": 50}},\n"
	                   "  \"gpus\": [\n" GPU_LINES(", \"fan\": null") "\n  ]\n}\n");
	if (err)
		fail_msg("%s", err);
	/* Two GPUs on one bus id; processes beyond the memory; bad process entries. */
	expect(HEAD "  \"gpus\": [\n" GPU_LINES("") ",\n" GPU_LINES("") "\n  ]\n}\n",
	       "gpus[1].pci: same PCI bus id as gpus[0]");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(
	           "") "\n  ],\n"
	               "  \"processes\": [{\"gpu\": 0, \"pid\": 10, \"used_mib\": 600}, "
	               "{\"gpu\": 0, \"pid\": 11, \"used_mib\": 600}]\n}\n",
	       "processes[1].used_mib: GPU 0 would hold 1200 MiB, more than its 1000 MiB");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(
	           "") "\n  ],\n"
	               "  \"processes\": [{\"gpu\": 1, \"pid\": 10, \"used_mib\": 6}]\n}\n",
	       "processes[0].gpu: 1 is out of range (0 to 0)");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(
	           "") "\n  ],\n"
	               "  \"processes\": [{\"gpu\": 0, \"pid\": 10, \"used_mib\": 6}, "
	               "{\"gpu\": 0, \"pid\": 10, \"used_mib\": 6}]\n}\n",
	       "pid 10 is already listed on GPU 0");
	expect(HEAD "  \"gpus\": [\n" GPU_LINES(
	           "") "\n  ],\n"
	               "  \"processes\": [{\"gpu\": 0, \"pid\": 0, \"used_mib\": 6}]\n}\n",
	       "pid: 0 is out of range");
}

/* Every prefix of a real file fails cleanly; the whole file parses. */
static void test_truncations_never_crash(void **state)
{
	(void)state;
	FILE *f = fopen(scenario_path("rtx4090-throttle"), "rb");
	assert_non_null(f);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 100 && n < sizeof buf);
	char err[600];
	for (size_t len = 0; len < n; len += 7) {
		sim_scenario *s;
		if (sim_scenario_parse(buf, len, "t.json", &s, err, sizeof err) == 0)
			sim_scenario_free(s);
		else
			assert_non_null(strstr(err, "t.json:"));
	}
	sim_scenario *s;
	assert_int_equal(sim_scenario_parse(buf, n, "t.json", &s, err, sizeof err), 0);
	sim_scenario_free(s);
}

static void test_file_errors(void **state)
{
	(void)state;
	sim_scenario *s;
	char err[600];
	assert_int_equal(sim_scenario_load("/nonexistent/dir/x.json", &s, err, sizeof err), -1);
	assert_string_equal(err, "/nonexistent/dir/x.json: No such file or directory");
	char *big = malloc(SIM_MAX_FILE_BYTES + 2);
	assert_non_null(big);
	memset(big, ' ', SIM_MAX_FILE_BYTES + 1);
	assert_int_equal(
	    sim_scenario_parse(big, SIM_MAX_FILE_BYTES + 1, "big.json", &s, err, sizeof err), -1);
	assert_non_null(strstr(err, "big.json:1:1: file is larger than"));
	free(big);
}

static void test_state_name(void **state)
{
	(void)state;
	char out[64];
	sim_state_name("/a/b/h100x1.json", out, sizeof out);
	assert_string_equal(out, "h100x1");
	sim_state_name("weird name!.json", out, sizeof out);
	assert_string_equal(out, "weird_name_");
	sim_state_name("/x/.json", out, sizeof out);
	assert_string_equal(out, "_json");
	sim_state_name("/x/", out, sizeof out);
	assert_string_equal(out, "scenario");
	sim_state_name("..", out, sizeof out);
	assert_string_equal(out, "_.");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_minimal_document_parses),
	    cmocka_unit_test(test_shipped_scenarios),
	    cmocka_unit_test(test_syntax_errors),
	    cmocka_unit_test(test_structure_errors),
	    cmocka_unit_test(test_gpu_errors),
	    cmocka_unit_test(test_missing_required_in_gpu),
	    cmocka_unit_test(test_value_errors),
	    cmocka_unit_test(test_behaviour_errors),
	    cmocka_unit_test(test_defaults_and_processes),
	    cmocka_unit_test(test_truncations_never_crash),
	    cmocka_unit_test(test_file_errors),
	    cmocka_unit_test(test_amd_gpus),
	    cmocka_unit_test(test_amdgpu_object),
	    cmocka_unit_test(test_state_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
