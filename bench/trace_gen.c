/* trace_gen.c - writes a synthetic PyTorch profiler (Kineto) trace of a given size, shaped like
 * a 2024 trace: ns-resolution float timestamps relative to baseTimeNanoseconds, ProfilerSteps,
 * cpu_op / cuda_runtime / kernel / gpu_memcpy / gpu_memset events, ac2g flows, NCCL kernels on a
 * second stream. For benchmarks only.
 *
 *   cc -O2 -o trace_gen trace_gen.c && ./trace_gen OUT.json SIZE_MB [RANK]
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>"
    "(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>"
    "(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, "
    "float, float, float*, float*, float*, float*, float, float)",
    "ampere_sgemm_128x64_nn",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>"
    "(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned int, "
    "128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
    "unsigned int)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >"
    "(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned "
    "int, float, 4>)",
};
static const char *const ops[] = {"aten::add",    "aten::mm",  "aten::batch_norm",
                                  "aten::linear", "aten::cat", "aten::mean"};

typedef struct {
	FILE *f;
	unsigned long long bytes;
	unsigned long long rng;
} gen;

static unsigned rnd(gen *g, unsigned n)
{
	g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((g->rng >> 33) % n);
}

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(g->f, fmt, ap);
	va_end(ap);
	if (n > 0)
		g->bytes += (unsigned long long)n;
}

/* Microseconds with nanosecond decimals, as Kineto writes them since PyTorch 2.4. */
static void ts_us(char *buf, size_t sz, unsigned long long ns)
{
	snprintf(buf, sz, "%llu.%03llu", ns / 1000, ns % 1000);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT.json SIZE_MB [RANK]\n", argv[0]);
		return 2;
	}
	gen g = {.f = fopen(argv[1], "w"), .rng = 42};
	unsigned long long target = strtoull(argv[2], NULL, 10) << 20;
	int rank = argc > 3 ? atoi(argv[3]) : 0;
	if (!g.f) {
		perror(argv[1]);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(g.f, buf, _IOFBF, sizeof buf);
	out(&g,
	    "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, "
	    "\"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912,\n      "
	    "\"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132\n    }\n  ],\n  "
	    "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 8},\n  "
	    "\"traceEvents\": [\n",
	    rank);
	unsigned long long t = 4458676388068751ull, gpu = t, corr = 1000, ext = 1;
	char a[32], b[32], c[32];
	int step = 1;
	const unsigned long long step_events = 20000;
	unsigned long long n = 0;
	while (g.bytes < target) {
		unsigned long long step_start = t;
		ts_us(a, sizeof a, t);
		out(&g,
		    "  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
		    "\"ProfilerStep#%d\", \"pid\": 2910249, \"tid\": 2910249,\n    \"ts\": %s, "
		    "\"dur\": "
		    "%s,\n    \"args\": {\n      \"External id\": %llu, \"Record function id\": 0, "
		    "\"Ev Idx\": %llu\n    }\n  },\n",
		    step++, a, "220000.000", ext++, n++);
		for (unsigned long long i = 0; i < step_events && g.bytes < target; i++) {
			unsigned k = rnd(&g, 6);
			unsigned long long op_dur = 5000 + rnd(&g, 40000);
			ts_us(a, sizeof a, t);
			ts_us(b, sizeof b, op_dur);
			out(&g,
			    "  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", "
			    "\"pid\": "
			    "2910249, \"tid\": 2919752,\n    \"ts\": %s, \"dur\": %s,\n    "
			    "\"args\": {\n"
			    "      \"External id\": %llu, \"Record function id\": 0, \"Sequence "
			    "number\": "
			    "%llu, \"Fwd thread id\": 1, \"Ev Idx\": %llu\n    }\n  },\n",
			    ops[k], a, b, ext, ext, n++);
			unsigned long long launch = t + 1000 + rnd(&g, 2000);
			ts_us(a, sizeof a, launch);
			ts_us(b, sizeof b, 3000 + rnd(&g, 9000));
			bool memop = rnd(&g, 20) == 0;
			out(&g,
			    "  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"%s\", "
			    "\"pid\": "
			    "2910249, \"tid\": 2919752,\n    \"ts\": %s, \"dur\": %s,\n    "
			    "\"args\": {\n"
			    "      \"External id\": %llu, \"cbid\": 211, \"correlation\": %llu\n   "
			    " }\n"
			    "  },\n",
			    memop ? "cudaMemcpyAsync" : "cudaLaunchKernel", a, b, ext, corr);
			out(&g,
			    "  {\n    \"ph\": \"s\", \"id\": %llu, \"pid\": 2910249, \"tid\": "
			    "2919752, "
			    "\"ts\": %s, \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n",
			    corr, a);
			if (gpu < launch + 4000)
				gpu = launch + 4000 + rnd(&g, 3000);
			unsigned long long kdur = 1500 + rnd(&g, 60000);
			ts_us(c, sizeof c, gpu);
			ts_us(b, sizeof b, kdur);
			if (memop)
				out(&g,
				    "  {\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": "
				    "\"Memcpy "
				    "HtoD (Pinned -> Device)\", \"pid\": 0, \"tid\": 7,\n    "
				    "\"ts\": %s, "
				    "\"dur\": %s,\n    \"args\": {\n      \"External id\": %llu, "
				    "\"device\": 0, \"context\": 1, \"stream\": 7, "
				    "\"correlation\": %llu, "
				    "\"bytes\": 4194304, \"memory bandwidth (GB/s)\": %.6f\n    "
				    "}\n  },\n",
				    c, b, ext, corr, 4194304.0 / (double)kdur);
			else
				out(&g,
				    "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
				    "\"%s\", "
				    "\"pid\": 0, \"tid\": 7,\n    \"ts\": %s, \"dur\": %s,\n    "
				    "\"args\": "
				    "{\n      \"External id\": %llu, \"queued\": 0, \"device\": 0, "
				    "\"context\": 1, \"stream\": 7, \"correlation\": %llu, "
				    "\"registers per "
				    "thread\": 32, \"shared memory\": 0, \"blocks per SM\": "
				    "4.740741, "
				    "\"warps per SM\": 75.851852, \"grid\": [512, 1, 1], "
				    "\"block\": [512, 1, "
				    "1], \"est. achieved occupancy %%\": 100\n    }\n  },\n",
				    kernels[k], c, b, ext, corr);
			out(&g,
			    "  {\n    \"ph\": \"f\", \"id\": %llu, \"pid\": 0, \"tid\": 7, \"ts\": "
			    "%s, "
			    "\"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n",
			    corr, c);
			gpu += kdur;
			corr++;
			ext++;
			n += 4;
			/* an all-reduce on the NCCL stream now and then, overlapping compute */
			if (rnd(&g, 50) == 0) {
				ts_us(c, sizeof c, gpu - kdur / 2);
				ts_us(b, sizeof b, 20000 + rnd(&g, 200000));
				out(&g,
				    "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
				    "\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
				    "unsigned long, "
				    "ncclWork*)\", \"pid\": 0, \"tid\": 40,\n    \"ts\": %s, "
				    "\"dur\": %s,\n"
				    "    \"args\": {\n      \"External id\": %llu, \"device\": 0, "
				    "\"stream\": 40, \"correlation\": %llu\n    }\n  },\n",
				    c, b, ext, corr - 1);
				n++;
			}
			t += op_dur + rnd(&g, 20000);
		}
		if (t < step_start + 1000)
			t = step_start + 1000;
	}
	out(&g,
	    "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": 4458676388068.751, \"dur\": 1.0, "
	    "\"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\", \"name\": \"PyTorch Profiler "
	    "(0)\", \"args\": {\"Op count\": 0}\n  }\n  ],\n  \"traceName\": \"bench\", "
	    "\"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1711964646000000000\n}\n");
	if (fclose(g.f) != 0) {
		perror(argv[1]);
		return 1;
	}
	fprintf(stderr, "%s: %llu bytes, %llu events\n", argv[1], g.bytes, n + 1);
	return 0;
}
