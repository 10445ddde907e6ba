/* Out-of-memory recognition in log tails: PyTorch, TensorFlow, JAX, plain CUDA, host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "queue/oom.h"

static queue_oom_info scan(const char *text)
{
	queue_oom_info o;
	queue_oom_scan(text, strlen(text), &o);
	return o;
}

static void expect(const char *text, queue_oom_kind kind, const char *source, int64_t tried)
{
	queue_oom_info o = scan(text);
	if (o.kind != kind)
		fail_msg("kind %d, wanted %d, for: %s", o.kind, kind, text);
	if (source)
		assert_string_equal(o.source, source);
	assert_int_equal(o.tried_mib, tried);
}

static void test_pytorch(void **state)
{
	(void)state;
	expect(
	    "step 3\nTraceback (most recent call last):\n  File \"train.py\", line 9\n"
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
	    "total capacity of 79.15 GiB of which 1.05 GiB is free.\n",
	    QOOM_GPU, "pytorch", 2048);
	expect("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 10.76 GiB "
	       "total capacity; 9.71 GiB already allocated; 5.56 MiB free)\n",
	       QOOM_GPU, "pytorch", 20);
	expect("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB\n",
	       QOOM_GPU, "pytorch", 512);
	/* The simulated workload's message. */
	expect(
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.0 MiB. GPU 0 has a "
	    "total capacity of 80.0 GiB of which 4.0 MiB is free.",
	    QOOM_GPU, "pytorch", 20);
	queue_oom_info o =
	    scan("x\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 "
	         "KiB\n");
	assert_non_null(strstr(o.line, "torch.OutOfMemoryError"));
	assert_int_equal(o.tried_mib, 1);
}

static void test_tensorflow(void **state)
{
	(void)state;
	expect(
	    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
	    "tensor with shape[8192,8192] and type float on /job:localhost/replica:0/task:0/"
	    "device:GPU:0 by allocator GPU_0_bfc\n",
	    QOOM_GPU, "tensorflow", -1);
	expect("W bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
	       "256.00MiB (rounded to 268435456)\n",
	       QOOM_GPU, "tensorflow", 256);
	expect("E cuda_driver.cc:802] failed to allocate 2.00G (2147483648 bytes) from device: "
	       "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
	       QOOM_GPU, "cuda", 2048);
}

static void test_jax(void **state)
{
	(void)state;
	expect(
	    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
	    "to allocate 17179869184 bytes.\n",
	    QOOM_GPU, "jax", 16384);
	expect("XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 2.00GiB "
	       "(2147483648B) on device ordinal 0\n",
	       QOOM_GPU, "jax", 2048);
}

static void test_plain_cuda(void **state)
{
	(void)state;
	expect("CUDA error: out of memory\n", QOOM_GPU, "cuda", -1);
	expect("cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)\n", QOOM_GPU, "cuda",
	       -1);
	expect("kernel.cu:42: CUDA runtime error: out of memory\n", QOOM_GPU, "cuda", -1);
	expect("CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)\n", QOOM_GPU, "cuda",
	       -1);
	expect("node1:123 [0] NCCL WARN Cuda failure 'out of memory'\n", QOOM_GPU, "nccl", -1);
}

static void test_host(void **state)
{
	(void)state;
	expect("Traceback (most recent call last):\nMemoryError\n", QOOM_HOST, "host", -1);
	expect("terminate called after throwing an instance of 'std::bad_alloc'\n", QOOM_HOST,
	       "host", -1);
	expect("slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. Some of the step "
	       "tasks have been OOM Killed.\n",
	       QOOM_HOST, "host", -1);
	/* GPU evidence wins over host evidence. */
	expect("MemoryError\nRuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB\n",
	       QOOM_GPU, "pytorch", 1024);
}

static void test_no_false_alarms(void **state)
{
	(void)state;
	expect("", QOOM_NONE, NULL, -1);
	expect("epoch 1 loss 0.31\nchecking for out-of-memory conditions: none\n", QOOM_NONE, NULL,
	       -1);
	expect("CUDA available: True\nmemory: 80 GiB\n", QOOM_NONE, NULL, -1);
	expect("raise NoMemoryErrorHere\n", QOOM_NONE, NULL, -1);
	expect("RuntimeError: synthetic failure at step 3 (--fail-exit 1)\n", QOOM_NONE, NULL, -1);
	/* A progress bar redrawn with \r: only its last state counts. */
	expect("100%|#####| CUDA ok\rdone\n", QOOM_NONE, NULL, -1);
	/* Text without a trailing newline, and a NUL-free binary-ish tail. */
	expect("\x01\x02\x03 CUDA out of memory", QOOM_GPU, "pytorch", -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pytorch), cmocka_unit_test(test_tensorflow),
	    cmocka_unit_test(test_jax),     cmocka_unit_test(test_plain_cuda),
	    cmocka_unit_test(test_host),    cmocka_unit_test(test_no_false_alarms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
