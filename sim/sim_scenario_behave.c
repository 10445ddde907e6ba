/*
 * sim_scenario_behave.c - a GPU's behaviour over time: idle and load
 * profiles, segments of a shape (steady, square, ramp, sine), episodes
 * (throttling, PCIe replays, link downtraining, Xid, ECC) and noise.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nvml_abi.h"
#include "sim_parse_int.h"

static const char *const profile_keys[] = {"util",
                                           "mem_util",
                                           "enc_util",
                                           "dec_util",
                                           "sm_active",
                                           "sm_occupancy",
                                           "tensor_active",
                                           "dram_active",
                                           "fp64_active",
                                           "fp32_active",
                                           "fp16_active",
                                           "int_active",
                                           "pcie_tx_mib_s",
                                           "pcie_rx_mib_s",
                                           "nvlink_tx_mib_s",
                                           "nvlink_rx_mib_s",
                                           NULL};
_Static_assert(sizeof profile_keys / sizeof *profile_keys == SIM_M_COUNT + 1, "profile keys");

/*
 * A profile: keys not given come from dflt, except that when util is given
 * the activity keys left out are derived from it (sm_active = 0.8 * util,
 * and the pipes as fixed shares of sm_active), so `{"util": 90}` is enough
 * for a plausible busy GPU.
 */
static bool parse_profile(sim_sc_ctx *c, json_t *o, const char *path, const sim_profile *dflt,
                          sim_profile *out)
{
	if (!sim_sc_check_keys(c, o, path, profile_keys))
		return false;
	*out = *dflt;
	bool given[SIM_M_COUNT] = {false};
	for (int m = 0; m < SIM_M_COUNT; m++) {
		double v;
		bool pct = m <= SIM_M_DEC, rate = m >= SIM_M_PCIE_TX;
		double hi = pct ? 100 : rate ? 1e7 : 1;
		if (!sim_sc_member(o, profile_keys[m]))
			continue;
		if (!sim_sc_get_num(c, o, path, profile_keys[m], true, 0, hi, &v))
			return false;
		out->v[m] = pct ? v / 100.0 : rate ? v * MIB : v;
		given[m] = true;
	}
	if (given[SIM_M_UTIL]) {
		double u = out->v[SIM_M_UTIL];
		double sm = given[SIM_M_SM] ? out->v[SIM_M_SM] : 0.8 * u;
		static const struct {
			sim_metric m;
			double share;
		} derive[] = {{SIM_M_OCC, 0.5},  {SIM_M_TENSOR, 0.5}, {SIM_M_DRAM, 0.4},
		              {SIM_M_FP64, 0.0}, {SIM_M_FP32, 0.3},   {SIM_M_FP16, 0.1},
		              {SIM_M_INT, 0.1}};
		out->v[SIM_M_SM] = sm;
		for (size_t k = 0; k < sizeof derive / sizeof *derive; k++)
			if (!given[derive[k].m])
				out->v[derive[k].m] = derive[k].share * sm;
		if (!given[SIM_M_MEM_UTIL])
			out->v[SIM_M_MEM_UTIL] = out->v[SIM_M_DRAM];
	}
	/* An SM can only be active while a kernel runs, a pipe only while its SM is. */
	if (out->v[SIM_M_SM] > out->v[SIM_M_UTIL] + 1e-9)
		return sim_sc_fail(c, path, NULL, "sm_active %.3g exceeds util %.3g%% / 100",
		                   out->v[SIM_M_SM], out->v[SIM_M_UTIL] * 100);
	for (int m = SIM_M_OCC; m <= SIM_M_INT; m++)
		if (m != SIM_M_DRAM && out->v[m] > out->v[SIM_M_SM] + 1e-9)
			return sim_sc_fail(c, path, profile_keys[m], "%.3g exceeds sm_active %.3g",
			                   out->v[m], out->v[SIM_M_SM]);
	return true;
}

static const char *const shape_names[] = {"steady", "square", "ramp", "sine", NULL};

static bool parse_segment(sim_sc_ctx *c, json_t *o, const char *path, const sim_gpu *g,
                          sim_segment *s)
{
	static const char *const keys[] = {"start_s", "end_s", "shape", "period_s", "duty",
	                                   "ramp_s",  "base",  "level", NULL};
	if (!json_is_object(o))
		return sim_sc_fail(c, path, NULL, "expected an object, got %s", sim_sc_tname(o));
	if (!sim_sc_check_keys(c, o, path, keys))
		return false;
	memset(s, 0, sizeof *s);
	s->end = INFINITY;
	s->duty = 0.5;
	int shape = SIM_SHAPE_STEADY;
	if (!sim_sc_get_num(c, o, path, "start_s", true, 0, 1e9, &s->start) ||
	    !sim_sc_get_num(c, o, path, "end_s", false, 0, 1e9, &s->end) ||
	    !sim_sc_get_enum(c, o, path, "shape", false, shape_names, NULL, &shape))
		return false;
	s->shape = (sim_shape)shape;
	if (s->end <= s->start)
		return sim_sc_fail(c, path, "end_s", "end_s must be after start_s (%g)", s->start);
	bool periodic = s->shape == SIM_SHAPE_SQUARE || s->shape == SIM_SHAPE_SINE;
	if (periodic && !sim_sc_get_num(c, o, path, "period_s", true, 0.001, 1e7, &s->period))
		return false;
	if (!periodic && sim_sc_member(o, "period_s"))
		return sim_sc_fail(c, path, "period_s",
		                   "period_s only applies to square and sine shapes");
	if (s->shape == SIM_SHAPE_SQUARE &&
	    !sim_sc_get_num(c, o, path, "duty", false, 0.001, 0.999, &s->duty))
		return false;
	if (s->shape != SIM_SHAPE_SQUARE && sim_sc_member(o, "duty"))
		return sim_sc_fail(c, path, "duty", "duty only applies to the square shape");
	if (s->shape == SIM_SHAPE_RAMP) {
		s->ramp = isinf(s->end) ? 0 : s->end - s->start;
		if (!sim_sc_get_num(c, o, path, "ramp_s", isinf(s->end), 0.001, 1e9, &s->ramp))
			return false;
	} else if (sim_sc_member(o, "ramp_s")) {
		return sim_sc_fail(c, path, "ramp_s", "ramp_s only applies to the ramp shape");
	}
	json_t *base, *level;
	char sub[300];
	if (!sim_sc_get_obj(c, o, path, "base", false, &base) ||
	    !sim_sc_get_obj(c, o, path, "level", true, &level))
		return false;
	s->base = g->idle;
	if (base) {
		snprintf(sub, sizeof sub, "%.200s.base", path);
		if (!parse_profile(c, base, sub, &g->idle, &s->base))
			return false;
	}
	snprintf(sub, sizeof sub, "%.200s.level", path);
	return parse_profile(c, level, sub, &s->base, &s->level);
}

static const char *const reason_names[] = {
    "gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown",    "sync_boost",
    "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clocks", NULL};
static const unsigned long long reason_bits[] = {
    nvmlClocksEventReasonGpuIdle,
    nvmlClocksEventReasonApplicationsClocksSetting,
    nvmlClocksEventReasonSwPowerCap,
    nvmlClocksThrottleReasonHwSlowdown,
    nvmlClocksEventReasonSyncBoost,
    nvmlClocksEventReasonSwThermalSlowdown,
    nvmlClocksThrottleReasonHwThermalSlowdown,
    nvmlClocksThrottleReasonHwPowerBrakeSlowdown,
    nvmlClocksEventReasonDisplayClockSetting,
};

static bool parse_reasons(sim_sc_ctx *c, json_t *o, const char *path, unsigned long long *out)
{
	json_t *arr;
	if (!sim_sc_get_arr(c, o, path, "reasons", true, 16, &arr))
		return false;
	if (json_array_size(arr) == 0)
		return sim_sc_fail(c, path, "reasons",
		                   "a throttle episode needs at least one reason");
	char sub[300];
	snprintf(sub, sizeof sub, "%.200s.reasons", path);
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		char ep[330];
		snprintf(ep, sizeof ep, "%.200s[%zu]", sub, i);
		if (!json_is_string(v))
			return sim_sc_fail(c, ep, NULL, "expected a reason name, got %s",
			                   sim_sc_tname(v));
		int k;
		for (k = 0; reason_names[k]; k++)
			if (!strcmp(reason_names[k], json_string_value(v)))
				break;
		if (!reason_names[k])
			return sim_sc_fail(
			    c, ep, NULL,
			    "unknown reason \"%s\" (one of: gpu_idle, applications_clocks, "
			    "sw_power_cap, hw_slowdown, sync_boost, sw_thermal, hw_thermal, "
			    "hw_power_brake, display_clocks)",
			    json_string_value(v));
		*out |= reason_bits[k];
	}
	return true;
}

static const char *const episode_kinds[] = {"throttle", "pcie_replay", "link_downtrain",
                                            "xid",      "ecc",         NULL};

static bool parse_episode(sim_sc_ctx *c, json_t *o, const char *path, const sim_gpu *g,
                          sim_episode *e)
{
	static const char *const k_throttle[] = {
	    "kind",           "start_s", "end_s",   "reasons", "sm_clock_mhz",
	    "clock_drop_pct", "temp_c",  "power_w", "fan_pct", NULL};
	static const char *const k_replay[] = {"kind", "start_s", "end_s", "per_s", NULL};
	static const char *const k_down[] = {"kind", "start_s", "end_s", "gen", "width", NULL};
	static const char *const k_xid[] = {"kind", "at_s", "code", NULL};
	static const char *const k_ecc[] = {"kind", "at_s", "sbe", "dbe", NULL};
	static const char *const *const kind_keys[] = {k_throttle, k_replay, k_down, k_xid, k_ecc};
	if (!json_is_object(o))
		return sim_sc_fail(c, path, NULL, "expected an object, got %s", sim_sc_tname(o));
	memset(e, 0, sizeof *e);
	int kind = 0;
	if (!sim_sc_get_enum(c, o, path, "kind", true, episode_kinds, NULL, &kind))
		return false;
	e->kind = (sim_episode_kind)kind;
	if (!sim_sc_check_keys(c, o, path, kind_keys[kind]))
		return false;
	e->end = INFINITY;
	e->clock_drop_pct = -1;
	e->temp_c = e->power_w = e->fan_pct = NAN;
	if (e->kind == SIM_EP_XID || e->kind == SIM_EP_ECC) {
		if (!sim_sc_get_num(c, o, path, "at_s", true, 0, 1e9, &e->start))
			return false;
		e->end = e->start;
	} else {
		if (!sim_sc_get_num(c, o, path, "start_s", true, 0, 1e9, &e->start) ||
		    !sim_sc_get_num(c, o, path, "end_s", false, 0, 1e9, &e->end))
			return false;
		if (e->end <= e->start)
			return sim_sc_fail(c, path, "end_s", "end_s must be after start_s (%g)",
			                   e->start);
	}
	switch (e->kind) {
	case SIM_EP_THROTTLE:
		if (!parse_reasons(c, o, path, &e->reasons) ||
		    !sim_sc_get_num(c, o, path, "sm_clock_mhz", false, 1, g->clk_max_sm,
		                    &e->sm_clock_mhz) ||
		    !sim_sc_get_num(c, o, path, "clock_drop_pct", false, 0, 100,
		                    &e->clock_drop_pct) ||
		    !sim_sc_get_num(c, o, path, "temp_c", false, 0, g->t_shutdown, &e->temp_c) ||
		    !sim_sc_get_num(c, o, path, "power_w", false, 0, g->power_max * 1.5,
		                    &e->power_w) ||
		    !sim_sc_get_num(c, o, path, "fan_pct", false, 0, 100, &e->fan_pct))
			return false;
		if (e->sm_clock_mhz > 0 && e->clock_drop_pct >= 0)
			return sim_sc_fail(c, path, "clock_drop_pct",
			                   "give sm_clock_mhz or clock_drop_pct, not both");
		if (!isnan(e->fan_pct) && !g->has_fan)
			return sim_sc_fail(c, path, "fan_pct",
			                   "this GPU has no fan (add a \"fan\" object)");
		return true;
	case SIM_EP_PCIE_REPLAY:
		return sim_sc_get_num(c, o, path, "per_s", true, 0.000001, 1e7, &e->per_s);
	case SIM_EP_DOWNTRAIN:
		if (!sim_sc_get_uns(c, o, path, "gen", true, 1, g->pcie_max_gen, &e->gen) ||
		    !sim_sc_get_uns(c, o, path, "width", true, 1, g->pcie_max_width, &e->width))
			return false;
		return true;
	case SIM_EP_XID:
		return sim_sc_get_uns(c, o, path, "code", true, 1, 1000000, &e->xid);
	case SIM_EP_ECC:
		if (!g->has_ecc)
			return sim_sc_fail(c, path, "kind",
			                   "ECC episodes need an \"ecc\" object on the GPU");
		if (!sim_sc_get_uns(c, o, path, "sbe", false, 0, 1000000, &e->sbe) ||
		    !sim_sc_get_uns(c, o, path, "dbe", false, 0, 1000000, &e->dbe))
			return false;
		if (e->sbe + e->dbe == 0)
			return sim_sc_fail(c, path, NULL,
			                   "an ECC episode needs sbe or dbe above 0");
		return true;
	}
	return true;
}

/* "0-55,112-167" */
/*
 * reset_at_s, back_after_s: an amdgpu reset that succeeds (the card leaves the
 * driver at reset_at_s and is back back_after_s later, its work gone). AMD
 * only: NVML has no such event to deliver.
 */
static bool parse_reset(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	g->reset_at = INFINITY;
	g->back_after = NAN;
	if (!sim_sc_get_num(c, gj, path, "reset_at_s", false, 0, 1e9, &g->reset_at) ||
	    !sim_sc_get_num(c, gj, path, "back_after_s", false, 0.1, 3600, &g->back_after))
		return false;
	if (isinf(g->reset_at)) {
		if (!isnan(g->back_after))
			return sim_sc_fail(c, path, "back_after_s", "needs reset_at_s");
		return true;
	}
	if (!g->amd)
		return sim_sc_fail(
		    c, path, "reset_at_s",
		    "a GPU reset is simulated on AMD GPUs only (\"vendor\": \"amd\")");
	if (isnan(g->back_after))
		g->back_after = 3;
	if (g->reset_at + g->back_after > g->lost_after)
		return sim_sc_fail(c, path, "reset_at_s",
		                   "the reset must be over before lost_after_s (%g)",
		                   g->lost_after);
	return true;
}

bool sim_sc_parse_behaviour(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g)
{
	json_t *o, *arr;
	char sub[300];
	memset(&g->idle, 0, sizeof g->idle);
	if (!sim_sc_get_obj(c, gj, path, "idle", false, &o))
		return false;
	if (o) {
		snprintf(sub, sizeof sub, "%.200s.idle", path);
		sim_profile zero;
		memset(&zero, 0, sizeof zero);
		if (!parse_profile(c, o, sub, &zero, &g->idle))
			return false;
	}
	g->repeat = 0;
	g->lost_after = INFINITY;
	if (!sim_sc_get_num(c, gj, path, "repeat_s", false, 0.001, 1e9, &g->repeat) ||
	    !sim_sc_get_num(c, gj, path, "lost_after_s", false, 0, 1e9, &g->lost_after) ||
	    !parse_reset(c, gj, path, g))
		return false;
	if (!sim_sc_get_arr(c, gj, path, "load", false, SIM_MAX_SEGMENTS, &arr))
		return false;
	size_t i;
	json_t *v;
	if (arr && json_array_size(arr)) {
		g->segments = calloc(json_array_size(arr), sizeof *g->segments);
		if (!g->segments)
			return sim_sc_fail(c, path, "load", "out of memory");
		json_array_foreach(arr, i, v)
		{
			snprintf(sub, sizeof sub, "%.200s.load[%zu]", path, i);
			sim_segment *s = &g->segments[i];
			if (!parse_segment(c, v, sub, g, s))
				return false;
			g->n_segments++;
			if (i > 0 && s->start < g->segments[i - 1].end)
				return sim_sc_fail(
				    c, sub, "start_s",
				    "load segments must be in order and must not overlap "
				    "(the previous one ends at %g s)",
				    g->segments[i - 1].end);
			if (g->repeat > 0 && s->end > g->repeat && !isinf(s->end))
				return sim_sc_fail(c, sub, "end_s", "ends after repeat_s (%g)",
				                   g->repeat);
			if (g->repeat > 0 && s->start >= g->repeat)
				return sim_sc_fail(c, sub, "start_s", "starts after repeat_s (%g)",
				                   g->repeat);
			if (g->repeat > 0 && isinf(s->end))
				s->end = g->repeat;
			if (s->shape == SIM_SHAPE_RAMP && s->ramp > s->end - s->start)
				s->ramp = s->end - s->start;
		}
	}
	if (!sim_sc_get_arr(c, gj, path, "episodes", false, SIM_MAX_EPISODES, &arr))
		return false;
	if (arr && json_array_size(arr)) {
		g->episodes = calloc(json_array_size(arr), sizeof *g->episodes);
		if (!g->episodes)
			return sim_sc_fail(c, path, "episodes", "out of memory");
		json_array_foreach(arr, i, v)
		{
			snprintf(sub, sizeof sub, "%.200s.episodes[%zu]", path, i);
			sim_episode *e = &g->episodes[i];
			if (!parse_episode(c, v, sub, g, e))
				return false;
			g->n_episodes++;
			if (g->repeat > 0 &&
			    (e->start >= g->repeat || (!isinf(e->end) && e->end > g->repeat)))
				return sim_sc_fail(c, sub, NULL, "lies outside repeat_s (%g)",
				                   g->repeat);
			if (g->repeat > 0 && isinf(e->end))
				e->end = g->repeat;
		}
	}
	return true;
}
