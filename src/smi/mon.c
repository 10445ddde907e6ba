/*
 * mon.c - `gpuwhy dmon` and `gpuwhy pmon`: nvidia-smi's scrolling monitors.
 *
 * Columns, group letters, units and widths follow nvidia-smi 590 (the
 * header lines are the ones its captures show); a value NVML does not give
 * prints '-'. Group 'g' (GPM SM activity, occupancy, tensor and DRAM
 * activity) is gpuwhy's own.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "smi/smi.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

typedef struct {
	char group;
	const char *name, *unit;
	int id;       /* gpu_metric_id, or -1 when NVML has no source for it */
	double scale; /* table unit -> dmon unit */
} dmon_col;

static const dmon_col dmon_cols[] = {
    {'p', "pwr", "W", GM_POWER_DRAW, 1},
    {'p', "gtemp", "C", GM_TEMP_GPU, 1},
    {'p', "mtemp", "C", GM_TEMP_MEM, 1},
    {'u', "sm", "%", GM_UTIL_GPU, 1},
    {'u', "mem", "%", GM_UTIL_MEM, 1},
    {'u', "enc", "%", GM_UTIL_ENC, 1},
    {'u', "dec", "%", GM_UTIL_DEC, 1},
    {'u', "jpg", "%", GM_UTIL_JPG, 1},
    {'u', "ofa", "%", GM_UTIL_OFA, 1},
    {'c', "mclk", "MHz", GM_CLK_MEM, 1},
    {'c', "pclk", "MHz", GM_CLK_SM, 1},
    /* power/thermal violation time needs nvmlDeviceGetViolationStatus */
    {'v', "pviol", "%", -1, 1},
    {'v', "tviol", "%", -1, 1},
    {'m', "fb", "MB", GM_MEM_USED, 1},
    {'m', "bar1", "MB", GM_BAR1_USED, 1},
    {'m', "ccpm", "MB", GM_PROT_MEM_USED, 1},
    {'e', "sbecc", "errs", GM_ECC_CORR_VOL, 1},
    {'e', "dbecc", "errs", GM_ECC_UNCORR_VOL, 1},
    {'e', "pci", "errs", GM_PCIE_REPLAY, 1},
    {'t', "rxpci", "MB/s", GM_PCIE_RX, 1},
    {'t', "txpci", "MB/s", GM_PCIE_TX, 1},
    {'g', "smact", "%", GM_GPM_SM_ACTIVE, 1},
    {'g', "smocc", "%", GM_GPM_SM_OCCUPANCY, 1},
    {'g', "tensor", "%", GM_GPM_TENSOR_ACTIVE, 1},
    {'g', "dram", "%", GM_GPM_DRAM_ACTIVE, 1},
};
#define DMON_NCOLS (sizeof dmon_cols / sizeof *dmon_cols)

int smi_mon_groups(const char *s, const char *valid, char *out, size_t outlen)
{
	size_t n = 0;
	for (const char *p = s; *p; p++) {
		if (!strchr(valid, *p))
			return gw_error(GW_EXIT_USAGE, "-s", NULL,
			                "unknown metric group '%c' (use letters of %s)", *p, valid);
		if (!memchr(out, *p, n) && n + 1 < outlen)
			out[n++] = *p;
	}
	out[n] = '\0';
	if (n == 0)
		return gw_error(GW_EXIT_USAGE, "-s", NULL, "no metric group (use letters of %s)",
		                valid);
	return 0;
}

int smi_mon_dt(const char *s, smi_mon_opts *o)
{
	o->date = o->time = false;
	for (const char *p = s; *p; p++) {
		if (*p == 'D' || *p == 'd')
			o->date = true;
		else if (*p == 'T' || *p == 't')
			o->time = true;
		else
			return gw_error(GW_EXIT_USAGE, "-o", N_("D, T or DT"),
			                "unknown time format '%s'", s);
	}
	if (!o->date && !o->time)
		return gw_error(GW_EXIT_USAGE, "-o", N_("D, T or DT"), "empty time format");
	return 0;
}

/*
 * The leading columns: "# gpu " alone, or "#Date       Time        gpu "
 * with -o DT (date 11 wide after '#', time 12), rows a space where '#' is.
 */
static void lead(const smi_mon_opts *o, bool header, int line, const struct tm *tm)
{
	char b[32];
	if (!o->date && !o->time) {
		fputs(header ? "# " : "  ", stdout);
		return;
	}
	putchar(header ? '#' : ' ');
	if (o->date) {
		if (header)
			printf("%-11s", line == 0 ? "Date" : "YYYYMMDD");
		else {
			strftime(b, sizeof b, "%Y%m%d", tm);
			printf("%-11s", b);
		}
	}
	if (o->time) {
		if (header)
			printf("%-12s", line == 0 ? "Time" : "HH:MM:SS");
		else {
			strftime(b, sizeof b, "%H:%M:%S", tm);
			printf("%-12s", b);
		}
	}
}

static void dmon_header(const smi_mon_opts *o)
{
	for (int line = 0; line < 2; line++) {
		lead(o, true, line, NULL);
		printf("%3s ", line == 0 ? "gpu" : "Idx");
		for (const char *g = o->groups; *g; g++)
			for (size_t k = 0; k < DMON_NCOLS; k++)
				if (dmon_cols[k].group == *g)
					printf("%6s ",
					       line == 0 ? dmon_cols[k].name : dmon_cols[k].unit);
		putchar('\n');
	}
}

static void dmon_row(const smi_mon_opts *o, const struct tm *tm, const gpu_static *st,
                     const gpu_values *v)
{
	lead(o, false, 0, tm);
	printf("%3d ", st->index);
	for (const char *g = o->groups; *g; g++)
		for (size_t k = 0; k < DMON_NCOLS; k++) {
			const dmon_col *cl = &dmon_cols[k];
			if (cl->group != *g)
				continue;
			if (cl->id >= 0 && v->ok[cl->id] && !v->lost)
				printf("%6.0f ", floor(v->v[cl->id] * cl->scale));
			else
				printf("%6s ", "-");
		}
	putchar('\n');
}

/* Sleep to the next deadline of a fixed cadence (the schedule, not the last wake-up). */
static void next_tick(int64_t *next, int64_t interval)
{
	*next += interval;
	int64_t now = gw_mono_ns();
	if (*next < now)
		*next = now;
	gw_sleep_until_ns(*next);
}

static void local_now(struct tm *tm)
{
	time_t t = (time_t)gw_wall_s();
	localtime_r(&t, tm);
}

/* What dmon and pmon print: the header, and one GPU's rows at one instant. */
typedef struct {
	void (*header)(const smi_mon_opts *o);
	void (*rows)(gpu_ctx *c, const smi_mon_opts *o, const struct tm *tm, int gpu);
} mon_view;

/*
 * The monitors' loop: the header once, then every selected GPU's rows each
 * interval on the cadence that started at next, o->count times (0: until *stop).
 */
static int mon_loop(gpu_ctx *c, const smi_sel *s, const smi_mon_opts *o,
                    volatile sig_atomic_t *stop, int64_t next, const mon_view *view)
{
	for (long long n = 0; !*stop && (!o->count || n < o->count); n++) {
		if (n == 0)
			view->header(o);
		struct tm tm;
		local_now(&tm);
		for (int k = 0; k < s->n && !*stop; k++)
			view->rows(c, o, &tm, s->idx[k]);
		if (fflush(stdout) || ferror(stdout))
			return gw_error(GW_EXIT_ENV, "stdout", NULL, "write failed");
		if (o->count && n + 1 >= o->count)
			break;
		next_tick(&next, o->interval_ns);
	}
	return GW_EXIT_OK;
}

static void dmon_rows(gpu_ctx *c, const smi_mon_opts *o, const struct tm *tm, int gpu)
{
	gpu_values v;
	gpu_sample(c, gpu, &v);
	dmon_row(o, tm, gpu_static_info(c, gpu), &v);
}

int smi_dmon_run(gpu_ctx *c, const smi_sel *s, const smi_mon_opts *o, volatile sig_atomic_t *stop)
{
	/* Rates need an interval; slow fields refresh on their own thread. */
	gpu_wait_rate_window(c);
	gpu_slow_thread_start(c);
	static const mon_view view = {dmon_header, dmon_rows};
	return mon_loop(c, s, o, stop, gw_mono_ns(), &view);
}

static const struct {
	char group;
	const char *name, *unit;
} pmon_cols[] = {
    {'u', "sm", "%"},  {'u', "mem", "%"}, {'u', "enc", "%"}, {'u', "dec", "%"},
    {'u', "jpg", "%"}, {'u', "ofa", "%"}, {'m', "fb", "MB"}, {'m', "ccpm", "MB"},
};
#define PMON_NCOLS (sizeof pmon_cols / sizeof *pmon_cols)

/* nvidia-smi's own header is one column wider at pid than its rows. */
static void pmon_header(const smi_mon_opts *o)
{
	for (int line = 0; line < 2; line++) {
		lead(o, true, line, NULL);
		printf("%3s%12s%7s", line == 0 ? "gpu" : "Idx", line == 0 ? "pid" : "#",
		       line == 0 ? "type" : "C/G");
		for (const char *g = o->groups; *g; g++)
			for (size_t k = 0; k < PMON_NCOLS; k++)
				if (pmon_cols[k].group == *g)
					printf("%7s",
					       line == 0 ? pmon_cols[k].name : pmon_cols[k].unit);
		printf("    %s \n", line == 0 ? "command" : "name");
	}
}

/* A per-process percentage: '-' when the driver had no sample of the PID in the window. */
static void pct(const gpu_proc *p, unsigned v, bool known)
{
	if (p && p->util_ok && p->util_sampled && known)
		printf("%7u", v);
	else
		printf("%7s", "-");
}

static void pmon_row(gpu_ctx *c, const smi_mon_opts *o, const struct tm *tm, int index,
                     const gpu_proc *p)
{
	lead(o, false, 0, tm);
	printf("%3d", index);
	if (p) {
		unsigned t = p->type;
		printf("%11u%6s", p->pid,
		       t == (GPU_PROC_COMPUTE | GPU_PROC_GRAPHICS) ? "C+G"
		       : (t & GPU_PROC_GRAPHICS)                   ? "G"
		                                                   : "C");
	} else {
		printf("%11s%6s", "-", "-");
	}
	for (const char *g = o->groups; *g; g++) {
		if (*g == 'u') {
			pct(p, p ? p->sm_pct : 0, true);
			pct(p, p ? p->mem_pct : 0, true);
			pct(p, p ? p->enc_pct : 0, true);
			pct(p, p ? p->dec_pct : 0, true);
			pct(p, 0, false); /* jpg, ofa: NVML's v1 process samples lack them */
			pct(p, 0, false);
		} else if (*g == 'm') {
			if (p && p->mem_ok)
				printf("%7llu", (unsigned long long)(p->mem_bytes / 1048576ULL));
			else
				printf("%7s", "-");
			printf("%7s", "-");
		}
	}
	char name[256] = "-";
	if (p && gpu_process_name(c, p->pid, name, sizeof name)) {
		const char *slash = strrchr(name, '/');
		if (slash && slash[1])
			memmove(name, slash + 1, strlen(slash + 1) + 1);
	}
	printf("    %-15s\n", name);
}

/* One row a process, or one row of dashes for a GPU without any. */
static void pmon_rows(gpu_ctx *c, const smi_mon_opts *o, const struct tm *tm, int gpu)
{
	gpu_proc procs[256];
	int np = gpu_processes(c, gpu, procs, 256);
	int index = gpu_static_info(c, gpu)->index;
	if (np <= 0)
		pmon_row(c, o, tm, index, NULL);
	for (int p = 0; p < np; p++)
		pmon_row(c, o, tm, index, &procs[p]);
}

int smi_pmon_run(gpu_ctx *c, const smi_sel *s, const smi_mon_opts *o, volatile sig_atomic_t *stop)
{
	gpu_proc procs[256];
	int64_t next = gw_mono_ns();
	/* The first utilization read only sets the window start; wait one interval. */
	for (int k = 0; k < s->n; k++)
		gpu_processes(c, s->idx[k], procs, 256);
	gw_sleep_ns(o->interval_ns < 1000000000LL ? o->interval_ns : 1000000000LL);
	static const mon_view view = {pmon_header, pmon_rows};
	return mon_loop(c, s, o, stop, next, &view);
}
