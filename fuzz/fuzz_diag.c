/*
 * fuzz_diag.c - diagnosis and every report face on arbitrary timelines.
 * A recording is outside input: its numbers may be negative, NaN, infinite
 * or out of order, and its command and environment any bytes. The input
 * is decoded into a small timeline (sizes, then a value per series and
 * sample, then processes, events, steps and a command line); the rules run
 * under both goals, live and not, and the text, JSON and HTML faces and a
 * comparison with a second decoding are written to /dev/null.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/diag.h"
#include "report/report.h"

typedef struct {
	const uint8_t *p;
	size_t n;
} rd;

static uint8_t byte(rd *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

/* A value: mostly plausible, sometimes absent, infinite or negative. */
static double value(rd *r, double scale)
{
	uint8_t b = byte(r);
	switch (b) {
	case 255: return NAN;
	case 254: return INFINITY;
	case 253: return -INFINITY;
	case 252: return -1;
	case 251: return 1e300;
	default: return b * scale;
	}
}

static const gpu_metric_id gpu_ids[] = {
	GM_UTIL_GPU,	    GM_UTIL_SAMPLES_MIN, GM_UTIL_SAMPLES_MAX, GM_UTIL_SAMPLES_IDLE,
	GM_GPM_SM_ACTIVE,   GM_GPM_DRAM_ACTIVE,	 GM_UTIL_MEM,	      GM_MEM_USED,
	GM_MEM_TOTAL,	    GM_POWER_DRAW,	 GM_POWER_LIMIT,      GM_CLK_SM,
	GM_CLK_MAX_SM,	    GM_CLK_REASONS,	 GM_TEMP_GPU,	      GM_TEMP_SLOWDOWN,
	GM_PCIE_GEN_CUR,    GM_PCIE_GEN_MAX,	 GM_PCIE_WIDTH_CUR,   GM_PCIE_WIDTH_MAX,
	GM_PCIE_REPLAY,	    GM_ECC_UNCORR_VOL,	 GM_PCIE_RX,	      GM_GPM_PCIE_TX,
};
static const host_metric_id host_ids[] = {HM_CPU_BUSY_MAX, HM_CPU_BUSY_MAX_CORE, HM_CPU_IOWAIT,
					  HM_DISK_BUSY_MAX,	HM_SWAP_IN,	      HM_TREE_CPU};

static timeline *decode(rd *r)
{
	int ngpu = byte(r) % 5, ncpu = byte(r) % 5, n = byte(r) % 48;
	timeline *tl = tl_new(ngpu, ncpu);
	uint8_t flags = byte(r);
	tl->have_root = flags & 1;
	tl->exit_status = flags & 2 ? byte(r) : -1;
	for (int g = 0; g < ngpu; g++) {
		tl->gpu[g].index = g;
		tl->gpu[g].lost_at_end = byte(r) == 7;
		for (int h = 0; h < ngpu; h++) {
			tl->nvlinks[g][h] = (int)(byte(r) % 4) - 1;
			tl->topo[g][h] = (int)(byte(r) % 6) * 10 - 10;
		}
	}
	uint8_t gmask = byte(r), hmask = byte(r);
	for (int i = 0; i < n; i++) {
		/* time mostly increasing, sometimes not */
		double t = flags & 4 ? value(r, 0.5) : i * 0.25;
		int s = tl_add_sample(tl, t);
		for (int g = 0; g < ngpu; g++)
			for (size_t k = 0; k < sizeof gpu_ids / sizeof *gpu_ids; k++)
				if (gmask & (1u << (k % 8)))
					tl_set_gpu(tl, g, gpu_ids[k], s, value(r, k == 7 || k == 8 ? 400 : 1));
		for (size_t k = 0; k < sizeof host_ids / sizeof *host_ids; k++)
			if (hmask & (1u << k))
				tl_set_host(tl, host_ids[k], s, value(r, k == 4 ? 1e5 : 1));
		for (int c = 0; c < ncpu; c++)
			tl_set_cpu(tl, c, s, value(r, 1), value(r, 1));
	}
	int nproc = byte(r) % 32;
	for (int i = 0; i < nproc; i++) {
		tl_proc *p = tl_add_proc(tl);
		p->s = n ? byte(r) % n : 0;
		p->pid = byte(r) % 8;
		p->gpu = (int)(byte(r) % 6) - 1;
		if (p->gpu >= ngpu)
			p->gpu = -1;
		uint8_t f = byte(r);
		p->in_tree = f & 1;
		p->alive = f & 2;
		p->gpu_mem_mib = value(r, 100);
		p->sm_pct = value(r, 1);
		p->cpu_pct = value(r, 1);
	}
	static const char *const kinds[] = {TL_EV_OOM, TL_EV_XID, TL_EV_GPU_LOST, TL_EV_AER,
					    TL_EV_PROC_EXIT};
	int nev = byte(r) % 6;
	for (int i = 0; i < nev; i++) {
		int g = (int)(byte(r) % 6) - 1;
		tl_add_event(tl, value(r, 0.5), kinds[byte(r) % 5], g < ngpu ? g : -1, byte(r),
			     byte(r) & 1 ? "CUDA out of memory" : "Killed process");
	}
	int nsteps = byte(r) % 40;
	for (int i = 0; i < nsteps; i++)
		tl_add_step(tl, flags & 8 ? value(r, 0.1) : i * 0.1, i);
	tl->trace.kernels = byte(r);
	tl->trace.short_kernels = byte(r);
	tl->trace.kernel_s = value(r, 0.001);
	tl->trace.span_s = value(r, 0.01);
	/* the rest is the command line */
	size_t cl = r->n < sizeof tl->command - 1 ? r->n : sizeof tl->command - 1;
	memcpy(tl->command, r->p, cl);
	tl->command[cl] = 0;
	tl->duration = n ? tl->t[n - 1] : 0;
	return tl;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	rd r = {data, size};
	timeline *tl = decode(&r);
	diag_meta m = {0};
	diag_meta_from_timeline(&m, tl);
	diag_meta_set(&m, "env.CUDA_VISIBLE_DEVICES", tl->command);
	for (int v = 0; v < 4; v++) {
		diag_opts o;
		diag_opts_default(&o);
		o.goal = v & 1 ? DIAG_GOAL_LATENCY : DIAG_GOAL_THROUGHPUT;
		o.live = v & 2;
		o.meta = &m;
		diag_result res;
		diag_run(tl, &o, &res);
		report_style st = {.utf8 = v & 1, .color = v & 2, .source = tl->command, .opts = &o};
		report_text(null, tl, &m, &res, &st);
		report_json(null, tl, &m, &res, &st);
		report_html(null, tl, &m, &res, &st);
		diag_result_free(&res);
		char line[256];
		diag_live_summary(tl, &o, line, sizeof line);
	}
	/* compare against the same input read from its middle */
	rd r2 = {data + size / 2, size - size / 2};
	timeline *t2 = decode(&r2);
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison c;
	diag_compare(tl, &m, t2, NULL, &o, &c);
	report_style st = {.utf8 = true, .opts = &o};
	compare_text(null, &c, "a", "b", &st);
	compare_json(null, &c, "a", "b");
	diag_comparison_free(&c);
	tl_free(t2);
	diag_meta_free(&m);
	tl_free(tl);
	return 0;
}
