/*
 * train_gpu.c - the GPU as the training job meets it: memory that runs
 * out, a GPU that falls off the bus, clocks and neighbours that set the
 * speed of each phase, and the link its collectives cross.
 */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "nvml_abi.h"
#include "train/train_int.h"
#include "util/timeutil.h"

#define MIB 1048576.0

static void fmt_size(double bytes, char *out, size_t len)
{
	if (bytes >= 1073741824.0)
		snprintf(out, len, "%.2f GiB", bytes / 1073741824.0);
	else
		snprintf(out, len, "%.2f MiB", bytes / 1048576.0);
}

/* What PyTorch prints when the caching allocator cannot get memory. */
static void print_oom(unsigned gpu, double want, double total, double free_b, double held)
{
	char a[32], t[32], f[32], h[32];
	fmt_size(want, a, sizeof a);
	fmt_size(total, t, sizeof t);
	fmt_size(free_b, f, sizeof f);
	fmt_size(held, h, sizeof h);
	fprintf(
	    stderr,
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %u has a total "
	    "capacity of %s of which %s is free. Including non-PyTorch memory, this process has "
	    "%s memory in use. Of the allocated memory %s is allocated by PyTorch, and 0 bytes is "
	    "reserved by PyTorch but unallocated.\n",
	    a, gpu, t, f, h, h);
}

/* Memory check before an allocation of `want` bytes. 0: fits; 1: out of memory; -1: GPU gone. */
int train_try_alloc(train_rank *r, double want, bool forced)
{
	gpu_values v;
	gpu_sample(r->gpu_ctx, (int)r->gpu, &v);
	if (v.lost || !v.ok[GM_MEM_FREE] || !v.ok[GM_MEM_TOTAL]) {
		fprintf(stderr, "RuntimeError: CUDA error: %s\n",
		        v.lost ? "unspecified launch failure (the GPU is lost)" : "unknown error");
		return -1;
	}
	double free_b = v.v[GM_MEM_FREE] * MIB, total = v.v[GM_MEM_TOTAL] * MIB;
	if (forced || want > free_b) {
		print_oom(r->gpu, want, total, free_b, r->held);
		return 1;
	}
	r->held += want;
	sim_wl_set_mem(r->wl, (uint64_t)r->held);
	return 0;
}

/* What PyTorch prints when a kernel fails because the GPU has fallen off the bus. */
static void print_gpu_lost(const train_rank *r)
{
	fprintf(stderr,
	        "RuntimeError: CUDA error: unspecified launch failure (GPU %u is lost)\n"
	        "CUDA kernel errors might be asynchronously reported at some other API call, so "
	        "the stacktrace below might be incorrect.\n",
	        r->gpu);
}

/*
 * The GPU's speed for this job now: 1 is the GPU alone at its unthrottled
 * clock. Returns 0, or 1 when the GPU is lost (error printed).
 */
static int gpu_speed(train_rank *r, double *speed, double *h2d_bps)
{
	double clock = 1, share = 1, bps = 25e9;
	/* -1: a real driver without the simulator's probe; the GPU runs at full speed. */
	int rc =
	    gpu_sim_work_rate(r->gpu_ctx, (int)r->gpu, (unsigned)getpid(), &clock, &share, &bps);
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		print_gpu_lost(r);
		return 1;
	}
	if (rc != NVML_SUCCESS)
		clock = share = 1, bps = 25e9;
	*speed = clock * share > 0.001 ? clock * share : 0.001;
	if (h2d_bps)
		*h2d_bps = bps > 1e6 ? bps : 1e6;
	return 0;
}

/*
 * One step on the GPU: the host-to-device copy at what the current PCIe link
 * carries (a copy engine's work, not slowed by SM clocks), then `work_ms` of
 * full-speed GPU work, both published at once. The GPU is asked for its
 * speed again every slice, so a throttle or a neighbour that starts
 * mid-phase stretches the rest of it. 0 done, -1 stopped, 1 GPU lost.
 */
int train_gpu_step(train_rank *r, double h2d_bytes, double work_ms, unsigned kernel_us)
{
	const int64_t slice = 50000000LL;
	/* Published at once with the last speed known, then corrected: no idle gap here. */
	double speed = r->speed, bps = r->h2d_bps;
	int64_t t = gw_mono_ns(), copy_end = t;
	if (h2d_bytes > 0) {
		copy_end += (int64_t)llround(h2d_bytes / bps * 1e9);
		sim_wl_push(r->wl, t, copy_end, 0, SIM_WL_COPY, (uint64_t)h2d_bytes, 0);
	}
	double left_ns = work_ms * 1e6;
	int64_t end = copy_end + (int64_t)llround(left_ns / speed);
	sim_wl_push(r->wl, copy_end, end, kernel_us, SIM_WL_COMPUTE, 0, 0);
	bool first = true;
	for (;;) {
		if (gpu_speed(r, &speed, first ? &bps : NULL)) {
			sim_wl_set_end(r->wl, gw_mono_ns());
			return 1;
		}
		if (first && bps != r->h2d_bps && h2d_bytes > 0) {
			/* The link changed since the last step: the copy takes what it takes now.
			 */
			int64_t c = t + (int64_t)llround(h2d_bytes / bps * 1e9);
			end += c - copy_end;
			copy_end = c;
		}
		first = false;
		r->speed = speed;
		r->h2d_bps = bps;
		int64_t now = gw_mono_ns(), base = now > copy_end ? now : copy_end;
		int64_t want = left_ns > 0 ? base + (int64_t)llround(left_ns / speed) : now;
		if (want != end) {
			end = want;
			sim_wl_set_end(r->wl, end);
		}
		if (now >= end)
			return 0;
		int64_t until = end - now > slice ? now + slice : end;
		if (train_sleep_until(until) != 0) {
			sim_wl_set_end(r->wl, gw_mono_ns());
			return -1;
		}
		int64_t after = gw_mono_ns(), from = now > copy_end ? now : copy_end;
		if (after > from)
			left_ns -= (double)(after - from) * speed;
		if (left_ns <= 0 && after >= end)
			return 0;
	}
}

/* Whether the GPU has an active NVLink (collectives go over it, else over PCIe). */
bool train_has_nvlink(train_rank *r)
{
	int st[GPU_NVLINK_MAX];
	int n = gpu_nvlink_states(r->gpu_ctx, (int)r->gpu, st, GPU_NVLINK_MAX);
	for (int l = 0; l < n && l < GPU_NVLINK_MAX; l++)
		if (st[l] == 1)
			return true;
	return false;
}

/* Tell the other ranks what this rank's PCIe link carries now. */
void train_publish_link(train_rank *r)
{
	double speed, bps;
	if (gpu_speed(r, &speed, &bps) == 0)
		__atomic_store(&r->sh->link_bps[r->rank], &bps, __ATOMIC_RELAXED);
}

/*
 * How long moving an all-reduce of `bytes` takes once every rank is there:
 * about 100 GiB/s over NVLink; over PCIe a ring sends 2 (R - 1) / R of it
 * through every link, so the slowest rank's link sets the pace.
 */
int64_t train_allreduce_ns(train_rank *r, double bytes)
{
	if (r->nvlink)
		return (int64_t)(bytes / (102.4 * 1048576.0) * 1e6);
	double slowest = 0;
	for (long long k = 0; k < r->o->ranks; k++) {
		double b;
		__atomic_load(&r->sh->link_bps[k], &b, __ATOMIC_RELAXED);
		if (b > 0 && (slowest == 0 || b < slowest))
			slowest = b;
	}
	if (slowest <= 0)
		slowest = 25e9;
	double n = (double)r->o->ranks;
	return (int64_t)(2 * (n - 1) / n * bytes / slowest * 1e9);
}
