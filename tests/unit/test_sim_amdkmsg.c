/*
 * test_sim_amdkmsg.c - a simulated AMD GPU's resets: when its card is gone and its
 * processes with it, and the kernel log lines the simulation writes, read back by
 * the host layer's parser as a real log is.
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

#include "host/host_kmsg.h"
#include "sim_amdkmsg.h"
#include "sim_scenario.h"

static sim_scenario *load(const char *name)
{
	char path[4096], err[600];
	snprintf(path, sizeof path, "%s/../../sim/scenarios/%s.json", FIXTURES_DIR, name);
	sim_scenario *s;
	if (sim_scenario_load(path, &s, err, sizeof err) != 0)
		fail_msg("%s", err);
	return s;
}

/* Every line of text parsed; kinds[] of those that are faults, their count returned. */
static int faults(const char *text, host_kmsg_event *ev, int max)
{
	int n = 0;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		assert_non_null(nl); /* every line is whole */
		assert_int_equal(p[0], '[');
		if (host_kmsg_parse_line(p, (size_t)(nl - p), &ev[n]) && n < max)
			n++;
		p = nl + 1;
	}
	return n;
}

static void test_reset_times(void **state)
{
	(void)state;
	sim_scenario *s = load("rx7900xtx-reset");
	const sim_gpu *g = &s->gpus[0];
	assert_true(g->amd);
	assert_true(g->reset_at == 4 && g->back_after == 3);
	assert_false(sim_amd_resetting(g, 3.999));
	assert_true(sim_amd_resetting(g, 4));
	assert_true(sim_amd_resetting(g, 6.999));
	assert_false(sim_amd_resetting(g, 7));
	const sim_fproc *p = &s->procs[0];
	assert_true(sim_amd_proc_on(g, p, 3.9));
	assert_false(sim_amd_proc_on(g, p, 4));
	assert_false(sim_amd_proc_on(g, p, 100)); /* gone with the reset, not back after it */
	sim_scenario_free(s);
}

static void test_reset_log(void **state)
{
	(void)state;
	sim_scenario *s = load("rx7900xtx-reset");
	char *none = sim_amdkmsg_text(s, -1, 3.99);
	assert_string_equal(none, "");
	char *all = sim_amdkmsg_text(s, -1, 100);
	host_kmsg_event ev[16];
	assert_int_equal(faults(all, ev, 16), 3); /* the lines between are no faults */
	assert_int_equal(ev[0].kind, HOST_KMSG_AMDGPU_RING_TIMEOUT);
	assert_string_equal(ev[0].ring, "gfx_0.0.0");
	assert_true(ev[0].ts_ok && fabs(ev[0].ts - 4) < 1e-9);
	assert_int_equal(ev[1].kind, HOST_KMSG_AMDGPU_RESET);
	assert_int_equal(ev[2].kind, HOST_KMSG_AMDGPU_RESET_OK);
	assert_int_equal(ev[2].xid, 1);
	assert_true(fabs(ev[2].ts - 7) < 1e-9);
	for (int i = 0; i < 3; i++)
		assert_string_equal(ev[i].pci, "0000:03:00.0");
	assert_non_null(strstr(all, "amdgpu:  Process information: process python3 pid 1"));
	assert_non_null(strstr(all, "VRAM is lost due to GPU reset!"));
	/* appended piece by piece as the clock passes, the log is the same */
	char *a = sim_amdkmsg_text(s, -1, 4), *b = sim_amdkmsg_text(s, 4, 6.5),
	     *c = sim_amdkmsg_text(s, 6.5, 100);
	size_t la = strlen(a), lb = strlen(b);
	char *joined = malloc(la + lb + strlen(c) + 1);
	assert_non_null(joined);
	memcpy(joined, a, la);
	memcpy(joined + la, b, lb);
	strcpy(joined + la + lb, c);
	assert_string_equal(joined, all);
	assert_true(strstr(a, "timeout") && !strstr(a, "begin!")); /* begin just after */
	free(joined), free(a), free(b), free(c), free(all), free(none);
	sim_scenario_free(s);
}

static void test_failed_reset_log(void **state)
{
	(void)state;
	sim_scenario *s = load("rx7900xtx-lost");
	char *all = sim_amdkmsg_text(s, -1, 100);
	host_kmsg_event ev[16];
	assert_int_equal(faults(all, ev, 16), 3);
	assert_int_equal(ev[2].kind, HOST_KMSG_AMDGPU_RESET_FAILED);
	assert_true(fabs(ev[2].ts - 5.0002) < 1e-9);
	free(all);
	sim_scenario_free(s);
	s = load("mi300x8"); /* no reset, no loss: an empty log */
	all = sim_amdkmsg_text(s, -1, 1e6);
	assert_string_equal(all, "");
	free(all);
	sim_scenario_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reset_times),
	    cmocka_unit_test(test_reset_log),
	    cmocka_unit_test(test_failed_reset_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
