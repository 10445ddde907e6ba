/*
 * diagnose_bench.c - cost of diagnosing and rendering a long recording, as a
 * ratio to one plain pass over the same samples (the baseline: summing every
 * series once). A synthetic 8-GPU, 1 Hz timeline of the given length with
 * the job's processes, host series and steps; times are medians of 5 runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "diagnose/diag.h"
#include "report/report.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static timeline *build(int ngpu, int n)
{
	timeline *tl = tl_new(ngpu, 32);
	tl->have_root = true;
	for (int g = 0; g < ngpu; g++)
		tl->gpu[g].index = g;
	for (int i = 0; i < n; i++) {
		int s = tl_add_sample(tl, i);
		for (int g = 0; g < ngpu; g++) {
			double u = (i / 5) % 2 ? 95 : 20; /* in phase: a starved job */
			tl_set_gpu(tl, g, GM_UTIL_GPU, s, u);
			tl_set_gpu(tl, g, GM_UTIL_SAMPLES_IDLE, s, 100 - u);
			tl_set_gpu(tl, g, GM_UTIL_SAMPLES_MIN, s, 0);
			tl_set_gpu(tl, g, GM_UTIL_SAMPLES_MAX, s, 100);
			tl_set_gpu(tl, g, GM_GPM_SM_ACTIVE, s, u * 0.8);
			tl_set_gpu(tl, g, GM_GPM_DRAM_ACTIVE, s, 30);
			tl_set_gpu(tl, g, GM_MEM_USED, s, 40000);
			tl_set_gpu(tl, g, GM_MEM_TOTAL, s, 81559);
			tl_set_gpu(tl, g, GM_POWER_DRAW, s, 200 + 4 * u);
			tl_set_gpu(tl, g, GM_POWER_LIMIT, s, 700);
			tl_set_gpu(tl, g, GM_CLK_SM, s, 1980);
			tl_set_gpu(tl, g, GM_CLK_MAX_SM, s, 1980);
			tl_set_gpu(tl, g, GM_CLK_REASONS, s, 0);
			tl_set_gpu(tl, g, GM_TEMP_GPU, s, 60);
			tl_set_gpu(tl, g, GM_PCIE_GEN_CUR, s, 5);
			tl_set_gpu(tl, g, GM_PCIE_GEN_MAX, s, 5);
			tl_proc *p = tl_add_proc(tl);
			p->s = s;
			p->pid = 1000 + g;
			p->gpu = g;
			p->in_tree = p->alive = true;
			p->gpu_mem_mib = 40000;
			p->cpu_pct = 100;
		}
		tl_set_host(tl, HM_CPU_BUSY_MAX, s, 100);
		tl_set_host(tl, HM_CPU_BUSY_MAX_CORE, s, 3);
		tl_set_host(tl, HM_CPU_IOWAIT, s, 2);
		for (int c = 0; c < 32; c++)
			tl_set_cpu(tl, c, s, 50, 1);
	}
	for (int k = 0; k < n * 4; k++)
		tl_add_step(tl, 0.25 * k, k);
	return tl;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median seconds of 5 runs of what. */
#define MEDIAN(what)                                                                               \
	({                                                                                         \
		double t_[5];                                                                      \
		for (int r_ = 0; r_ < 5; r_++) {                                                   \
			double a_ = now();                                                         \
			what;                                                                      \
			t_[r_] = now() - a_;                                                       \
		}                                                                                  \
		qsort(t_, 5, sizeof *t_, cmp);                                                     \
		t_[2];                                                                             \
	})

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3600, ngpu = 8;
	timeline *tl = build(ngpu, n);
	FILE *null = fopen("/dev/null", "w");
	volatile double sink = 0;
	double base = MEDIAN({
		for (int g = 0; g < ngpu; g++)
			for (int m = 0; m < GM__COUNT; m++)
				sink += tl_mean(tl->gpu[g].m[m], 0, tl->n);
		for (int c = 0; c < tl->ncpu; c++)
			sink += tl_mean(tl->cpu_busy[c], 0, tl->n);
		for (int i = 0; i < tl->nprocs; i++)
			sink += tl->procs[i].cpu_pct;
	});
	diag_opts o;
	diag_opts_default(&o);
	diag_result r;
	double run = MEDIAN({
		diag_run(tl, &o, &r);
		diag_result_free(&r);
	});
	diag_run(tl, &o, &r);
	report_style st = {.utf8 = true, .source = "bench", .opts = &o};
	double text = MEDIAN(report_text(null, tl, NULL, &r, &st));
	double json = MEDIAN(report_json(null, tl, NULL, &r, &st));
	char *html = NULL;
	size_t hl = 0;
	double htm = MEDIAN({
		FILE *f = open_memstream(&html, &hl);
		report_html(f, tl, NULL, &r, &st);
		fclose(f);
		free(html);
	});
	FILE *f = open_memstream(&html, &hl);
	report_html(f, tl, NULL, &r, &st);
	fclose(f);
	free(html);
	diag_comparison c;
	double cmpt = MEDIAN({
		diag_compare(tl, NULL, tl, NULL, &o, &c);
		diag_comparison_free(&c);
	});
	printf("timeline: %d GPUs x %d samples (1 Hz, %.1f h), %d process records, %d steps\n", ngpu,
	       n, n / 3600.0, tl->nprocs, tl->nsteps);
	printf("baseline (one pass over every series): %.2f ms\n", 1e3 * base);
	printf("diag_run:        %8.2f ms  = %6.1f x baseline  (%s first)\n", 1e3 * run, run / base,
	       r.n ? r.f[0].id : "-");
	printf("report text:     %8.2f ms  = %6.1f x baseline\n", 1e3 * text, text / base);
	printf("report json:     %8.2f ms  = %6.1f x baseline\n", 1e3 * json, json / base);
	printf("report html:     %8.2f ms  = %6.1f x baseline  (%zu bytes)\n", 1e3 * htm, htm / base,
	       hl);
	printf("compare (2000 bootstrap resamples x 3 percentiles, %d steps a side): %.2f ms = %.1f x "
	       "baseline\n",
	       tl->nsteps, 1e3 * cmpt, cmpt / base);
	diag_result_free(&r);
	tl_free(tl);
	fclose(null);
	return sink < 0;
}
