/* gpu-fault on amdgpu's kernel-log faults: ring timeouts and GPU resets, as an Xid is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_fixture.h"

#define EPS 1e-6

static void test_ring_timeout_and_reset(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl_add_event(tl, 30, TL_EV_AMDGPU, 0, TL_AMDGPU_RING_TIMEOUT,
	             "amdgpu 0000:08:00.0: ring comp_1.1.0 timeout, signaled seq=7, emitted seq=9");
	tl_add_event(tl, 30.2, TL_EV_AMDGPU, 0, TL_AMDGPU_RESET,
	             "amdgpu 0000:08:00.0: GPU reset begin!");
	tl_add_event(tl, 33, TL_EV_AMDGPU, 0, TL_AMDGPU_RESET_OK,
	             "amdgpu 0000:08:00.0: GPU reset(2) succeeded!");
	tl_add_event(tl, 40, TL_EV_AMDGPU, 0, TL_AMDGPU_RING_TIMEOUT, "again");
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "gpu-fault", DIAG_ERROR);
	assert_string_equal(f->title,
	                    "amdgpu ring timeout on GPU 0 at 30.0 s; 4 amdgpu fault events");
	assert_float_equal(fx_ev(f, TL_EV_AMDGPU, "at 30.0 s: ring timeout")->value,
	                   TL_AMDGPU_RING_TIMEOUT, EPS);
	assert_non_null(fx_ev(f, TL_EV_AMDGPU, "at 30.2 s: GPU reset"));
	assert_non_null(fx_ev(f, TL_EV_AMDGPU, "at 33.0 s: GPU reset succeeded"));
	assert_null(fx_ev(f, TL_EV_AMDGPU, "at 40.0 s")); /* the same kind again: no new line */
	assert_float_equal(fx_ev(f, TL_EV_AMDGPU, "events")->value, 4, EPS);
	/* the job was hit: healthy is no longer said */
	assert_null(strstr(fx_ids(&r), "healthy"));
	diag_result_free(&r);
	tl_free(tl);
}

static void test_reset_failed(void **state)
{
	(void)state;
	timeline *tl = fx_healthy();
	tl_add_event(tl, 5, TL_EV_AMDGPU, 0, TL_AMDGPU_RESET_FAILED, "GPU reset(3) failed");
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "gpu-fault", DIAG_ERROR);
	assert_string_equal(f->title,
	                    "amdgpu GPU reset failed on GPU 0 at 5.0 s; 1 amdgpu fault event");
	diag_result_free(&r);
	tl_free(tl);
}

/* An Xid and an amdgpu fault in one run (two vendors): the Xid titles, both are evidence. */
static void test_with_xid(void **state)
{
	(void)state;
	timeline *tl = fx_healthy_n(2);
	tl_add_event(tl, 10, TL_EV_XID, 0, 79, "GPU has fallen off the bus");
	tl_add_event(tl, 11, TL_EV_AMDGPU, 1, TL_AMDGPU_RESET, "GPU reset begin!");
	diag_result r;
	fx_run(tl, &r);
	const diag_finding *f = fx_expect(&r, "gpu-fault", DIAG_ERROR);
	assert_non_null(strstr(f->title, "Xid 79"));
	assert_non_null(fx_ev(f, TL_EV_AMDGPU, "at 11.0 s: GPU reset"));
	assert_non_null(fx_ev(f, "xid", "events"));
	diag_result_free(&r);
	tl_free(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring_timeout_and_reset),
	    cmocka_unit_test(test_reset_failed),
	    cmocka_unit_test(test_with_xid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
