/* sim_model.c - scenario behaviour as closed-form functions of time (sim_model.h). */
#include "sim_model.h"

#include <math.h>
#include <string.h>

/* ∫_0^x of the segment's level share l(τ) (0 at base, 1 at level). */
static double shape_F(const sim_segment *s, double x)
{
	switch (s->shape) {
	case SIM_SHAPE_SQUARE: {
		double p = s->period, on = s->duty * p;
		double n = floor(x / p), r = x - n * p;
		return n * on + (r < on ? r : on);
	}
	case SIM_SHAPE_RAMP: {
		double r = s->ramp;
		return x <= r ? x * x / (2 * r) : r / 2 + (x - r);
	}
	case SIM_SHAPE_SINE: {
		double p = s->period;
		return x / 2 - p / (4 * M_PI) * sin(2 * M_PI * x / p);
	}
	case SIM_SHAPE_STEADY:
		break;
	}
	return x;
}

static double shape_l(const sim_segment *s, double x)
{
	switch (s->shape) {
	case SIM_SHAPE_SQUARE:
		return fmod(x, s->period) < s->duty * s->period ? 1.0 : 0.0;
	case SIM_SHAPE_RAMP:
		return x >= s->ramp ? 1.0 : x / s->ramp;
	case SIM_SHAPE_SINE:
		return (1 - cos(2 * M_PI * x / s->period)) / 2;
	case SIM_SHAPE_STEADY:
		break;
	}
	return 1.0;
}

/* Position of t inside the behaviour's period (t itself when it does not repeat). */
static double fold_t(const sim_gpu *g, double t)
{
	if (g->repeat <= 0 || t < 0)
		return t;
	return t - floor(t / g->repeat) * g->repeat;
}

void sim_scn_value(const sim_gpu *g, double t, double out[SIM_M_COUNT])
{
	memcpy(out, g->idle.v, SIM_M_COUNT * sizeof *out);
	double te = fold_t(g, t);
	for (int i = 0; i < g->n_segments; i++) {
		const sim_segment *s = &g->segments[i];
		if (te < s->start)
			break;
		if (te >= s->end)
			continue;
		double l = shape_l(s, te - s->start);
		for (int m = 0; m < SIM_M_COUNT; m++)
			out[m] = s->base.v[m] + (s->level.v[m] - s->base.v[m]) * l;
		break;
	}
}

/* Functions folded over the period: each adds its integral over [a, b] inside one period. */
typedef void (*piece_fn)(const sim_gpu *g, const void *ctx, double a, double b, double *out);

static void fold(const sim_gpu *g, double a, double b, piece_fn fn, const void *ctx, double *out,
                 int nout)
{
	if (b <= a)
		return;
	if (a < 0) { /* before the scenario started: only idle, no episodes */
		fn(g, ctx, a, b < 0 ? b : 0, out);
		if (b <= 0)
			return;
		a = 0;
	}
	if (g->repeat <= 0) {
		fn(g, ctx, a, b, out);
		return;
	}
	double r = g->repeat;
	double k0 = floor(a / r), k1 = floor(b / r);
	if (k0 == k1) {
		fn(g, ctx, a - k0 * r, b - k0 * r, out);
		return;
	}
	fn(g, ctx, a - k0 * r, r, out);
	double full = k1 - k0 - 1;
	if (full > 0) {
		double tmp[SIM_M_COUNT] = {0};
		fn(g, ctx, 0, r, tmp);
		for (int i = 0; i < nout; i++)
			out[i] += full * tmp[i];
	}
	if (b - k1 * r > 0)
		fn(g, ctx, 0, b - k1 * r, out);
}

static void integral_piece(const sim_gpu *g, const void *ctx, double a, double b, double *out)
{
	(void)ctx;
	for (int m = 0; m < SIM_M_COUNT; m++)
		out[m] += g->idle.v[m] * (b - a);
	for (int i = 0; i < g->n_segments; i++) {
		const sim_segment *s = &g->segments[i];
		if (s->start >= b)
			break;
		double x0 = a > s->start ? a : s->start, x1 = b < s->end ? b : s->end;
		if (x1 <= x0)
			continue;
		double d = x1 - x0;
		double l = shape_F(s, x1 - s->start) - shape_F(s, x0 - s->start);
		for (int m = 0; m < SIM_M_COUNT; m++)
			out[m] +=
			    (s->base.v[m] - g->idle.v[m]) * d + (s->level.v[m] - s->base.v[m]) * l;
	}
}

void sim_scn_integral(const sim_gpu *g, double a, double b, double out[SIM_M_COUNT])
{
	fold(g, a, b, integral_piece, NULL, out, SIM_M_COUNT);
}

bool sim_ep_active(const sim_gpu *g, const sim_episode *e, double t)
{
	if (t < 0 || e->end <= e->start)
		return false;
	double te = fold_t(g, t);
	return te >= e->start && te < e->end;
}

static void overlap_piece(const sim_gpu *g, const void *ctx, double a, double b, double *out)
{
	(void)g;
	const sim_episode *e = ctx;
	double x0 = a > e->start ? a : e->start, x1 = b < e->end ? b : e->end;
	if (x1 > x0)
		out[0] += x1 - x0;
}

double sim_ep_overlap(const sim_gpu *g, const sim_episode *e, double a, double b)
{
	double out[1] = {0};
	fold(g, a, b, overlap_piece, e, out, 1);
	return out[0];
}

unsigned long long sim_ep_count(const sim_gpu *g, const sim_episode *e, double t)
{
	if (t < e->start)
		return 0;
	if (g->repeat <= 0)
		return 1;
	return (unsigned long long)floor((t - e->start) / g->repeat) + 1;
}

double sim_ep_next(const sim_gpu *g, const sim_episode *e, double after)
{
	if (after < e->start)
		return e->start;
	if (g->repeat <= 0)
		return INFINITY;
	return e->start + g->repeat * (floor((after - e->start) / g->repeat) + 1);
}

double sim_power_of(const sim_gpu *g, double util, double sm)
{
	return g->power_idle + (g->power_busy - g->power_idle) * (0.35 * util + 0.65 * sm);
}

static void correction_piece(const sim_gpu *g, const void *ctx, double a, double b, double *out)
{
	const sim_episode *e = ctx;
	double x0 = a > e->start ? a : e->start, x1 = b < e->end ? b : e->end;
	if (x1 <= x0)
		return;
	double m[SIM_M_COUNT] = {0};
	integral_piece(g, NULL, x0, x1, m);
	double d = x1 - x0;
	double modelled = g->power_idle * d + (g->power_busy - g->power_idle) *
	                                          (0.35 * m[SIM_M_UTIL] + 0.65 * m[SIM_M_SM]);
	out[0] += e->power_w * d - modelled;
}

double sim_ep_power_correction(const sim_gpu *g, const sim_episode *e, double a, double b)
{
	if (e->kind != SIM_EP_THROTTLE || isnan(e->power_w))
		return 0;
	double out[1] = {0};
	fold(g, a, b, correction_piece, e, out, 1);
	return out[0];
}

double sim_noise(uint64_t seed, int gpu, int metric, long long slot)
{
	uint64_t h = sim_hash(seed, (uint64_t)gpu, (uint64_t)metric, (uint64_t)slot);
	return (double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

void sim_ecc_counts(const sim_gpu *g, double t, unsigned long long *sbe_vol,
                    unsigned long long *dbe_vol, unsigned long long *sbe_agg,
                    unsigned long long *dbe_agg)
{
	unsigned long long sbe = 0, dbe = 0;
	for (int i = 0; i < g->n_episodes; i++)
		if (g->episodes[i].kind == SIM_EP_ECC) {
			unsigned long long n = sim_ep_count(g, &g->episodes[i], t);
			sbe += n * g->episodes[i].sbe;
			dbe += n * g->episodes[i].dbe;
		}
	*sbe_vol = g->ecc_sbe_vol + sbe;
	*dbe_vol = g->ecc_dbe_vol + dbe;
	*sbe_agg = g->ecc_sbe_agg + sbe;
	*dbe_agg = g->ecc_dbe_agg + dbe;
}

double sim_energy_j(const sim_gpu *g, double t, const double m[SIM_M_COUNT])
{
	if (t < 0)
		t = 0;
	double j = g->power_idle * t +
	           (g->power_busy - g->power_idle) * (0.35 * m[SIM_M_UTIL] + 0.65 * m[SIM_M_SM]);
	for (int i = 0; i < g->n_episodes; i++)
		j += sim_ep_power_correction(g, &g->episodes[i], 0, t);
	return j > 0 ? j : 0;
}
