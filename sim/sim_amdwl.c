/* sim_amdwl.c - `gpuwhy sim train` workloads on a simulated AMD GPU (sim_amdwl.h). */
#include "sim_amdwl.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sim_state.h"

/* "w<pid>-g<gpu>.state" for this GPU. */
static bool is_gpu_file(const char *name, unsigned gpu)
{
	unsigned pid, g;
	char tail[8];
	return sscanf(name, "w%u-g%u%7s", &pid, &g, tail) == 3 && g == gpu &&
	       !strcmp(tail, ".state");
}

/* Add one workload file's share of the windows and, while it runs, its memory and process. */
static void add_file(const sim_wl_file *f, int64_t now_ns, double window_s, sim_amdwl *out)
{
	double acc[SIM_ACC_N] = {0}, acc30[SIM_ACC_N] = {0}, tot[SIM_ACC_N] = {0};
	sim_wl_activity(f, now_ns - (int64_t)(window_s * 1e9), now_ns, acc);
	sim_wl_activity(f, now_ns - 30000000000LL, now_ns, acc30);
	out->busy += acc[SIM_ACC_BUSY] / window_s;
	out->sm += acc[SIM_ACC_SM] / window_s;
	out->dram += acc[SIM_ACC_DRAM] / window_s;
	out->act30 += (0.35 * acc30[SIM_ACC_BUSY] + 0.65 * acc30[SIM_ACC_SM]) / 30.0;
	sim_wl_file h;
	if (!sim_wl_header(f, &h) || !sim_wl_running(&h))
		return;
	out->mem_bytes += h.mem_bytes;
	if (!h.shown_pid || out->n == SIM_AMDWL_PROCS)
		return; /* listed by no driver (--hidden all) */
	sim_wl_totals(f, now_ns, tot);
	out->procs[out->n++] = (sim_amdwl_proc){
	    .pid = h.shown_pid, .mem_bytes = h.mem_bytes, .busy_s = tot[SIM_ACC_BUSY]};
}

static double cap1(double v)
{
	return v > 1 ? 1 : v;
}

void sim_amdwl_read(const char *dir, unsigned gpu, int64_t now_ns, double window_s, sim_amdwl *out)
{
	memset(out, 0, sizeof *out);
	DIR *d = dir ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!is_gpu_file(e->d_name, gpu))
			continue;
		char p[PATH_MAX];
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p)
			continue;
		const sim_wl_file *f = sim_wl_map(p);
		if (!f)
			continue;
		add_file(f, now_ns, window_s, out);
		sim_wl_unmap(f);
	}
	closedir(d);
	out->busy = cap1(out->busy);
	out->sm = cap1(out->sm);
	out->dram = cap1(out->dram);
	out->act30 = cap1(out->act30);
}
