/* Placement: reservations, per-GPU caps, preference order, foreign processes, nothing fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "gpu/gpu.h"
#include "queue/place.h"

/* An idle 80 GiB GPU. */
static queue_gpu_view gpu(int index)
{
	queue_gpu_view v;
	memset(&v, 0, sizeof v);
	v.index = index;
	v.usable = true;
	v.total_ok = v.free_ok = true;
	v.total_mib = v.free_mib = 81920;
	return v;
}

static queue_place_req req(int gpus, int64_t mem, int per_gpu)
{
	queue_place_req r = {.gpus = gpus, .mem_mib = mem, .per_gpu = per_gpu, .mode = QP_SPREAD};
	return r;
}

/* Simulate placing a task the way the worker books it. */
static void book(queue_gpu_view *v, int64_t mem, int per_gpu)
{
	v->ntasks++;
	if (v->cap == 0 || per_gpu < v->cap)
		v->cap = per_gpu;
	v->pending_mib += mem;
	v->held_mib += mem;
}

static void test_reservations_count_before_allocation(void **state)
{
	(void)state;
	/* Memory is measured before new tasks allocate: three 30 GiB tasks would all see
	 * 80 GiB free. Counting reservations admits two. */
	queue_gpu_view v[1] = {gpu(0)};
	queue_place_req r = req(1, 30720, 8);
	queue_place_result res;
	int placed = 0;
	for (int i = 0; i < 5; i++) {
		if (queue_place(v, 1, &r, &res) != QP_OK)
			break;
		book(&v[0], r.mem_mib, r.per_gpu);
		placed++;
	}
	assert_int_equal(placed, 2);
	assert_int_equal(res.verdict, QP_WAIT);
	assert_non_null(strstr(res.reason, "GPU 0 has 20480 MiB available"));
}

static void test_allocated_memory_is_not_counted_twice(void **state)
{
	(void)state;
	/* A task that reserved 30 GiB and allocated 25 of it: 5 GiB are still pending. */
	queue_gpu_view v = gpu(0);
	v.free_mib = 81920 - 25600;
	v.pending_mib = 30720 - 25600;
	v.held_mib = 30720;
	v.ntasks = 1;
	v.cap = 4;
	assert_int_equal(queue_gpu_available(&v), 81920 - 30720);
	/* A task using more than it reserved shows up in free memory alone. */
	v.free_mib = 81920 - 40960;
	v.pending_mib = 0;
	v.held_mib = 40960;
	assert_int_equal(queue_gpu_available(&v), 40960);
	/* Free memory unknown: total minus what our tasks hold and others use. */
	v.free_ok = false;
	v.foreign_mib = 1024;
	assert_int_equal(queue_gpu_available(&v), 81920 - 40960 - 1024);
	v.total_ok = false;
	assert_int_equal(queue_gpu_available(&v), -1);
	queue_place_req r = req(1, 1024, 4);
	queue_place_result res;
	assert_int_equal(queue_place(&v, 1, &r, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "unknown memory"));
}

static void test_free_memory_read_before_the_process_list(void **state)
{
	(void)state;
	/*
	 * Free memory is read, then task B allocates, then the process list is
	 * read: free memory shows only A's 30000 MiB, the list shows both. The
	 * reservations still hold 2 x 30 GiB of the GPU, so a third one waits.
	 */
	queue_gpu_view v = gpu(0);
	v.total_mib = 81559;
	v.free_mib = 81559 - 30000;
	v.ntasks = 2;
	v.cap = 8;
	v.pending_mib = 2 * (30720 - 30000);
	v.held_mib = 2 * 30720;
	assert_int_equal(queue_gpu_available(&v), 81559 - 2 * 30720);
	queue_place_req r = req(1, 30720, 8);
	queue_place_result res;
	assert_int_equal(queue_place(&v, 1, &r, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "GPU 0 has 20119 MiB available"));
	/* Memory a foreign process uses is not ours to hand out either. */
	v.ntasks = 1;
	v.free_mib = 81559 - 30000;
	v.pending_mib = 720;
	v.held_mib = 30720;
	v.foreign = 1;
	v.foreign_mib = 40000;
	assert_int_equal(queue_gpu_available(&v), 81559 - 30720 - 40000);
}

static void test_per_gpu_cap(void **state)
{
	(void)state;
	queue_gpu_view v[1] = {gpu(0)};
	queue_place_req r = req(1, -1, 3);
	queue_place_result res;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(queue_place(v, 1, &r, &res), QP_OK);
		book(&v[0], 0, 3);
	}
	assert_int_equal(queue_place(v, 1, &r, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "runs 3 tasks (cap 3)"));
	/* A task that wants the GPU to itself does not join them ... */
	queue_place_req alone = req(1, -1, 1);
	v[0].ntasks = 1;
	v[0].cap = 3;
	assert_int_equal(queue_place(v, 1, &alone, &res), QP_WAIT);
	/* ... and nobody joins a task that wants it alone. */
	v[0].cap = 1;
	queue_place_req many = req(1, -1, 8);
	assert_int_equal(queue_place(v, 1, &many, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "cap 1"));
}

static void test_preference_order_and_spread(void **state)
{
	(void)state;
	/* The view is in preference order: 2, 0, 1. */
	queue_gpu_view v[3] = {gpu(2), gpu(0), gpu(1)};
	queue_place_req r = req(1, 10240, 4);
	queue_place_result res;
	assert_int_equal(queue_place(v, 3, &r, &res), QP_OK);
	assert_int_equal(res.n, 1);
	assert_int_equal(v[res.pick[0]].index, 2);
	book(&v[res.pick[0]], 10240, 4);
	/* Spread: an idle GPU before a second task on the preferred one. */
	assert_int_equal(queue_place(v, 3, &r, &res), QP_OK);
	assert_int_equal(v[res.pick[0]].index, 0);
	/* Pack: fill the preferred GPU first. */
	r.mode = QP_PACK;
	assert_int_equal(queue_place(v, 3, &r, &res), QP_OK);
	assert_int_equal(v[res.pick[0]].index, 2);
}

static void test_multi_gpu(void **state)
{
	(void)state;
	queue_gpu_view v[4] = {gpu(0), gpu(1), gpu(2), gpu(3)};
	v[1].free_mib = 1000; /* someone else's memory */
	queue_place_req r = req(2, 20480, 1);
	queue_place_result res;
	assert_int_equal(queue_place(v, 4, &r, &res), QP_OK);
	assert_int_equal(res.n, 2);
	assert_int_equal(v[res.pick[0]].index, 0);
	assert_int_equal(v[res.pick[1]].index, 2);
	r.gpus = 4;
	assert_int_equal(queue_place(v, 4, &r, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "waiting for 4 GPUs with 20480 MiB"));
	assert_non_null(strstr(res.reason, "GPU 1 has 1000 MiB available"));
}

static void test_foreign_processes(void **state)
{
	(void)state;
	queue_gpu_view v[2] = {gpu(0), gpu(1)};
	v[0].foreign = 1;
	queue_place_req r = req(1, -1, 1);
	queue_place_result res;
	assert_int_equal(queue_place(v, 2, &r, &res), QP_OK);
	assert_int_equal(v[res.pick[0]].index, 1);
	v[1].foreign = 2;
	assert_int_equal(queue_place(v, 2, &r, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "GPU 0 has 1 foreign process,"));
	assert_non_null(strstr(res.reason, "GPU 1 has 2 foreign processes"));
	r.allow_foreign = true;
	assert_int_equal(queue_place(v, 2, &r, &res), QP_OK);
}

static void test_nothing_fits(void **state)
{
	(void)state;
	queue_gpu_view v[2] = {gpu(0), gpu(1)};
	queue_place_result res;
	/* Bigger than any GPU: never. */
	queue_place_req big = req(1, 100000, 1);
	assert_int_equal(queue_place(v, 2, &big, &res), QP_NEVER);
	assert_non_null(strstr(res.reason, "the largest GPU has 81920 MiB"));
	/* More GPUs than there are: never. */
	queue_place_req many = req(3, -1, 1);
	assert_int_equal(queue_place(v, 2, &many, &res), QP_NEVER);
	assert_non_null(strstr(res.reason, "2 usable GPUs"));
	/* A lost GPU does not count; a drained one only waits. */
	v[1].usable = false;
	queue_place_req two = req(2, -1, 1);
	assert_int_equal(queue_place(v, 2, &two, &res), QP_NEVER);
	v[1].usable = true;
	v[1].drained = true;
	assert_int_equal(queue_place(v, 2, &two, &res), QP_WAIT);
	assert_non_null(strstr(res.reason, "GPU 1 is drained"));
	/* Busy memory is a wait, not a never. */
	v[1].drained = false;
	v[0].free_mib = v[1].free_mib = 100;
	queue_place_req some = req(1, 4096, 1);
	assert_int_equal(queue_place(v, 2, &some, &res), QP_WAIT);
	/* No GPUs at all. */
	assert_int_equal(queue_place(v, 0, &some, &res), QP_NEVER);
}

static void test_reason_is_bounded(void **state)
{
	(void)state;
	queue_gpu_view v[GPU_MAX];
	for (int i = 0; i < GPU_MAX; i++) {
		v[i] = gpu(i);
		v[i].foreign = 100 + i;
	}
	queue_place_req r = req(1, 1, 1);
	queue_place_result res;
	assert_int_equal(queue_place(v, GPU_MAX, &r, &res), QP_WAIT);
	assert_true(strlen(res.reason) < sizeof res.reason);
	assert_non_null(strstr(res.reason, "..."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reservations_count_before_allocation),
	    cmocka_unit_test(test_allocated_memory_is_not_counted_twice),
	    cmocka_unit_test(test_free_memory_read_before_the_process_list),
	    cmocka_unit_test(test_per_gpu_cap),
	    cmocka_unit_test(test_preference_order_and_spread),
	    cmocka_unit_test(test_multi_gpu),
	    cmocka_unit_test(test_foreign_processes),
	    cmocka_unit_test(test_nothing_fits),
	    cmocka_unit_test(test_reason_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
