/*
 * nvml_rate.c - not NVML: how fast a workload's work runs on the simulated
 * GPU now, so that `gpuwhy sim train` slows down the way a real job does
 * when its GPU throttles, its PCIe link trains down or another process
 * shares the GPU.
 */
#include <math.h>

#include <stdio.h>

#include "sim_lib.h"

/* Usable bytes/s per lane of a PCIe generation (line rate after encoding, 80 % after TLP overhead).
 */
static double pcie_lane_bps(unsigned gen)
{
	static const double gbs[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
	unsigned k = gen < 1 ? 1 : gen > 6 ? 6 : gen;
	return gbs[k] * 1e9 * 0.8;
}

/*
 * How much other work wanted the GPU over the last second, in GPUs: the
 * scenario's own load (other tenants) plus every other running workload
 * process's busy share (two GPU-bound neighbours make 2). A process that has
 * exited competes for nothing, whatever its last second was.
 */
static double others_busy(const struct nvmlDevice_st *d, const sim_time *now, unsigned pid)
{
	double a = now->t - 1.0 > 0 ? now->t - 1.0 : 0;
	double busy = 0;
	if (now->t > a) {
		double m[SIM_M_COUNT] = {0};
		sim_scn_integral(d->g, a, now->t, m);
		busy = m[SIM_M_UTIL] / (now->t - a);
	}
	double acc[SIM_ACC_N] = {0};
	for (int i = 0; i < sim_g.n_wl; i++)
		if (sim_g.wl[i].gpu == (unsigned)d->index && sim_g.wl[i].pid != pid &&
		    sim_wl_ref_alive(&sim_g.wl[i], now))
			sim_wl_activity(sim_g.wl[i].f, now->mono - 1000000000LL, now->mono, acc);
	busy += acc[SIM_ACC_BUSY];
	return busy < 0 ? 0 : busy;
}

nvmlReturn_t gpuwhySimWorkRate(nvmlDevice_t device, unsigned int pid, double *clock_share,
                               double *sm_share, double *h2d_bytes_per_s)
{
	struct nvmlDevice_st *d;
	sim_time now;
	nvmlReturn_t rc = sim_enter_dev(device, clock_share, &d, &now);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!sm_share || !h2d_bytes_per_s)
		return sim_leave(NVML_ERROR_INVALID_ARGUMENT);
	const sim_gpu *g = d->g;
	sim_inst in;
	sim_state_under_load(d, &now, now.t, true, &in);
	double busy_mhz = g->clk_busy_sm ? (double)g->clk_busy_sm : (double)g->clk_max_sm;
	double c = busy_mhz > 0 ? in.sm_mhz / busy_mhz : 1;
	*clock_share = c > 1 ? 1 : c < 0.01 ? 0.01 : c;
	/* Contexts are time-sliced: next to others wanting u GPUs, pid gets 1 / (1 + u). */
	*sm_share = 1.0 / (1.0 + others_busy(d, &now, pid));
	*h2d_bytes_per_s = pcie_lane_bps(in.pcie_gen) * (in.pcie_width ? in.pcie_width : 1);
	return sim_leave(NVML_SUCCESS);
}

/*
 * A process the scenario places on a GPU (not a workload of this host): its
 * name and user, so gpuwhy shows the simulated world's process and not
 * whatever the real host runs under that PID. NOT_FOUND for any other PID.
 */
nvmlReturn_t gpuwhySimProcessInfo(unsigned int pid, char *name, unsigned int nameLen, char *user,
                                  unsigned int userLen)
{
	sim_time now;
	if (!name || !user || !nameLen || !userLen)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t rc = sim_enter(&now);
	if (rc != NVML_SUCCESS)
		return rc;
	for (int i = 0; i < sim_g.scn->n_procs; i++) {
		const sim_fproc *p = &sim_g.scn->procs[i];
		if (p->pid != pid)
			continue;
		snprintf(name, nameLen, "%s", p->name);
		snprintf(user, userLen, "%s", p->user);
		return sim_leave(NVML_SUCCESS);
	}
	return sim_leave(NVML_ERROR_NOT_FOUND);
}
