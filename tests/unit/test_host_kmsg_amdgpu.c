/*
 * amdgpu's fault lines in the kernel log (tests/fixtures/host/kmsg/amdgpu.txt:
 * the shapes of real logs of kernels 5.x to 7.x, numbers changed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host_kmsg.h"

#include <string.h>

#define FIX FIXTURES_DIR "/host/kmsg/"

static int parse(const char *s, host_kmsg_event *e)
{
	return host_kmsg_parse_line(s, strlen(s), e);
}

static void test_ring_timeout(void **state)
{
	(void)state;
	host_kmsg_event e;
	/* before 6.x: no device on the line */
	assert_int_equal(parse("[ 2679.300365] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring "
	                       "gfx_0.0.0 timeout, signaled seq=502589, emitted seq=502591",
	                       &e),
	                 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RING_TIMEOUT);
	assert_string_equal(e.ring, "gfx_0.0.0");
	assert_string_equal(e.pci, "");
	assert_true(e.ts_ok);
	assert_string_equal(e.msg,
	                    "ring gfx_0.0.0 timeout, signaled seq=502589, emitted seq=502591");
	/* 6.x: "amdgpu DEV: amdgpu: ", a journal line */
	assert_int_equal(parse("Sep 03 21:38:54 host kernel: amdgpu 0000:08:00.0: amdgpu: ring "
	                       "comp_1.1.0 timeout, signaled seq=7, emitted seq=9",
	                       &e),
	                 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RING_TIMEOUT);
	assert_string_equal(e.ring, "comp_1.1.0");
	assert_string_equal(e.pci, "0000:08:00.0");
	/* 7.x: "amdgpu DEV: " only, a kmsg record */
	assert_int_equal(
	    parse("3,900,40000000001,-;amdgpu 0000:28:00.0: ring sdma0 timeout, signaled seq=1, "
	          "emitted seq=2",
	          &e),
	    1);
	assert_string_equal(e.ring, "sdma0");
	assert_string_equal(e.pci, "0000:28:00.0");
	assert_true(e.seq_ok);
}

static void test_resets(void **state)
{
	(void)state;
	host_kmsg_event e;
	assert_int_equal(parse("amdgpu 0000:0C:00.0: amdgpu: GPU reset begin!", &e), 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RESET);
	assert_string_equal(e.pci, "0000:0c:00.0"); /* one spelling */
	assert_int_equal(parse("amdgpu 0000:28:00.0: GPU reset begin!. Source:  1", &e), 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RESET);
	assert_int_equal(parse("amdgpu 0000:0c:00.0: amdgpu: GPU reset(2) succeeded!", &e), 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RESET_OK);
	assert_true(e.xid_ok);
	assert_int_equal(e.xid, 2);
	assert_int_equal(parse("amdgpu 0000:08:00.0: amdgpu: GPU reset(3) failed", &e), 1);
	assert_int_equal(e.kind, HOST_KMSG_AMDGPU_RESET_FAILED);
	assert_int_equal(e.xid, 3);
}

/* Lines around a fault that are not one, and look-alikes of other drivers. */
static void test_not_faults(void **state)
{
	(void)state;
	host_kmsg_event e;
	static const char *const lines[] = {
	    "amdgpu 0000:0c:00.0: amdgpu: GPU reset succeeded, trying to resume",
	    "[drm] VRAM is lost due to GPU reset!",
	    "amdgpu 0000:0c:00.0: [drm:amdgpu_ring_test_helper [amdgpu]] *ERROR* ring kiq_2.1.0 "
	    "test "
	    "failed (-110)",
	    "amdgpu 0000:08:00.0: amdgpu: Starting comp_1.1.0 ring reset",
	    "amdgpu 0000:08:00.0: amdgpu: Ring comp_1.1.0 reset failed",
	    "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* Process information: process x pid 1",
	    "i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in Xorg [1234]",
	    "[drm:i915_gem_execbuffer [i915]] ring render timeout", /* no amdgpu */
	    "amdgpu 0000:08:00.0: amdgpu: GPU reset(x) succeeded!",
	    "amdgpu 0000:08:00.0: amdgpu: ring  timeout",
	    "amdgpu 0000:08:00.0: amdgpu: ring gfx/0 timeout",
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		if (parse(lines[i], &e))
			fail_msg("parsed as kind %d: %s", e.kind, lines[i]);
	/* the Xid and AER forms are still theirs */
	assert_int_equal(parse("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.", &e),
	                 1);
	assert_int_equal(e.kind, HOST_KMSG_XID);
}

static void test_reader(void **state)
{
	(void)state;
	host_kmsg *k = host_kmsg_open(FIX "amdgpu.txt", 0);
	assert_non_null(k);
	host_kmsg_event ev[16];
	int n = host_kmsg_read(k, ev, 16);
	host_kmsg_close(k);
	static const struct {
		enum host_kmsg_kind kind;
		const char *pci;
	} want[] = {
	    {HOST_KMSG_AMDGPU_RING_TIMEOUT, ""},
	    {HOST_KMSG_AMDGPU_RESET, "0000:0c:00.0"},
	    {HOST_KMSG_AMDGPU_RESET_OK, "0000:0c:00.0"},
	    {HOST_KMSG_AMDGPU_RING_TIMEOUT, "0000:08:00.0"},
	    {HOST_KMSG_AMDGPU_RESET, "0000:08:00.0"},
	    {HOST_KMSG_AMDGPU_RESET_FAILED, "0000:08:00.0"},
	    {HOST_KMSG_AMDGPU_RING_TIMEOUT, "0000:28:00.0"},
	};
	assert_int_equal(n, (int)(sizeof want / sizeof *want));
	for (int i = 0; i < n; i++) {
		assert_int_equal(ev[i].kind, want[i].kind);
		assert_string_equal(ev[i].pci, want[i].pci);
	}
	assert_true(ev[6].ts_ok && ev[6].ts > 39999.9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_timeout),
	    cmocka_unit_test(test_resets),
	    cmocka_unit_test(test_not_faults),
	    cmocka_unit_test(test_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
