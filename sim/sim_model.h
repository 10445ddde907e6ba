/*
 * sim_model.h - the scenario's behaviour as functions of scenario time.
 *
 * Everything here is a pure function of (scenario, GPU, time): values at an
 * instant, and exact integrals over an interval (the shapes are integrated
 * in closed form, repeating behaviour is folded by period), so cumulative
 * counters agree between processes and never depend on how often anyone
 * asked. Workload activity is added on top by the library (nvml_core.c).
 */
#ifndef GPUWHY_SIM_MODEL_H
#define GPUWHY_SIM_MODEL_H

#include "sim_scenario.h"

/* Profile metrics at time t (fractions and bytes/s, before any workload). */
void sim_scn_value(const sim_gpu *g, double t, double out[SIM_M_COUNT]);
/* Add the integral of each profile metric over [a, b] to out. */
void sim_scn_integral(const sim_gpu *g, double a, double b, double out[SIM_M_COUNT]);

/* Whether a window episode is in force at t. */
bool sim_ep_active(const sim_gpu *g, const sim_episode *e, double t);
/* Seconds of [a, b] during which a window episode is in force. */
double sim_ep_overlap(const sim_gpu *g, const sim_episode *e, double a, double b);
/* How many times an instant episode (xid, ecc) has happened by t. */
unsigned long long sim_ep_count(const sim_gpu *g, const sim_episode *e, double t);
/* The first time an instant episode happens strictly after `after` (INFINITY: never). */
double sim_ep_next(const sim_gpu *g, const sim_episode *e, double after);
/*
 * Integral over [a, b] of a window episode's power override minus the
 * scenario's own modelled power during it (for the energy counter).
 */
double sim_ep_power_correction(const sim_gpu *g, const sim_episode *e, double a, double b);

/* Modelled power of a profile activity: idle + (busy - idle) * (0.35 util + 0.65 sm). */
double sim_power_of(const sim_gpu *g, double util, double sm);

/*
 * ECC error counts by t: the scenario's initial counts plus its ECC
 * episodes (single-bit corrected, double-bit uncorrected).
 */
void sim_ecc_counts(const sim_gpu *g, double t, unsigned long long *sbe_vol,
                    unsigned long long *dbe_vol, unsigned long long *sbe_agg,
                    unsigned long long *dbe_agg);

/*
 * Energy in J over [0, t] of the modelled power, given m, the integrals of
 * the metrics over [0, t] (sim_scn_integral, plus any workload's): the
 * energy counter of both simulated libraries.
 */
double sim_energy_j(const sim_gpu *g, double t, const double m[SIM_M_COUNT]);

/* Deterministic noise in [-1, 1] for (seed, GPU, metric, time slot). */
double sim_noise(uint64_t seed, int gpu, int metric, long long slot);

#endif
