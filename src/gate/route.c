/*
 * route.c - which upstream may take work, and which one should.
 *
 * An upstream is held when one of its GPUs is lost, has less free memory
 * than min_free_mib, or (with hold_throttled) has its clocks held down by a
 * thermal or hardware slowdown; the reason is kept in words for the 503
 * body and the log. Among the healthy ones with a free slot, the least
 * loaded wins: fewest in flight relative to its cap, then lowest GPU
 * utilization, then most free memory. One whose last connection failed is
 * tried only when no other is available.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate/route.h"
#include "gate/say.h"
#include "gpu/gpu_reasons.h"
#include "util/timeutil.h"

static const gate_gpu *find_gpu(const gate_srv *g, int index)
{
	for (int i = 0; i < g->ngpu; i++)
		if (g->gpu[i].index == index)
			return &g->gpu[i];
	return NULL;
}

static void reasons_text(uint64_t r, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s%s",
	         r & gpu_reason_bit(GPU_REASON_HW_SLOWDOWN) ? " hw_slowdown" : "",
	         r & gpu_reason_bit(GPU_REASON_SW_THERMAL) ? " sw_thermal" : "",
	         r & gpu_reason_bit(GPU_REASON_HW_THERMAL) ? " hw_thermal" : "",
	         r & gpu_reason_bit(GPU_REASON_HW_POWER_BRAKE) ? " power_brake" : "");
}

/* One GPU's verdict: "" when it may take work (why in English, text in the gate's language). */
static void gpu_health(const gate_srv *g, const gate_gpu *x, char *why, char *text, size_t len,
                       bool *lost)
{
	why[0] = text[0] = '\0';
	if (x->lost) {
		gate_say(why, text, len, "GPU %d is lost (fell off the bus)", x->index);
		*lost = true;
		return;
	}
	if (g->cfg.min_free_mib > 0 && !isnan(x->free_mib) && x->free_mib < g->cfg.min_free_mib) {
		gate_say(why, text, len, "GPU %d has %.0f MiB free, below min_free_mib %ld",
		         x->index, x->free_mib, g->cfg.min_free_mib);
		return;
	}
	uint64_t bad = gpu_reasons_unwanted(x->reasons);
	if (g->cfg.hold_throttled && x->reasons_ok && bad) {
		char names[80];
		reasons_text(bad, names, sizeof names);
		gate_say(why, text, len, "GPU %d is throttled (clock event reasons 0x%llx:%s)",
		         x->index, (unsigned long long)x->reasons, names);
	}
}

static void refresh_one(gate_srv *g, gate_up *u)
{
	u->health[0] = u->health_text[0] = '\0';
	u->lost = false;
	u->util = NAN;
	u->free_mib = NAN;
	if (!g->gpu_aware || u->cfg.ngpu == 0)
		return;
	int n = u->cfg.ngpu < 0 ? g->ngpu : u->cfg.ngpu, seen = 0;
	double util = 0;
	for (int k = 0; k < n; k++) {
		const gate_gpu *x = u->cfg.ngpu < 0 ? &g->gpu[k] : find_gpu(g, u->cfg.gpu[k]);
		if (!x || !x->valid)
			continue;
		char why[200], text[200];
		gpu_health(g, x, why, text, sizeof why, &u->lost);
		if (why[0] && !u->health[0]) {
			gate_cut(u->health, sizeof u->health, "%s: %s", u->cfg.url, why);
			gate_cut(u->health_text, sizeof u->health_text, "%s: %s", u->cfg.url, text);
		}
		if (!isnan(x->util)) {
			util += x->util;
			seen++;
		}
		if (!isnan(x->free_mib) && (isnan(u->free_mib) || x->free_mib < u->free_mib))
			u->free_mib = x->free_mib;
	}
	if (seen)
		u->util = util / seen;
}

void gate_route_refresh(gate_srv *g)
{
	for (int i = 0; i < g->nup; i++)
		refresh_one(g, &g->up[i]);
}

static long cap_of(const gate_srv *g, const gate_up *u)
{
	return u->cfg.max_inflight > 0 ? u->cfg.max_inflight : g->cfg.max_inflight_per_up;
}

/* Lower is better. */
static double load_of(const gate_srv *g, const gate_up *u)
{
	double s = (double)u->inflight / (double)cap_of(g, u);
	if (!isnan(u->util))
		s += u->util / 1000.0;
	if (!isnan(u->free_mib))
		s -= fmin(u->free_mib, 1e6) / 1e9;
	return s;
}

/* The upstreams' reasons joined by "; ": health, or health_text when text. */
static void join_health(const gate_srv *g, bool text, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = 0; i < g->nup && n + 2 < len; i++) {
		const char *h = text ? g->up[i].health_text : g->up[i].health;
		int w = snprintf(out + n, len - n, "%s%s", i ? "; " : "", h);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

bool gate_route_any_healthy(gate_srv *g, char *why, char *why_text, size_t whylen)
{
	why[0] = why_text[0] = '\0';
	for (int i = 0; i < g->nup; i++)
		if (!g->up[i].health[0])
			return true;
	join_health(g, false, why, whylen);
	join_health(g, true, why_text, whylen);
	return false;
}

int gate_route_pick(gate_srv *g, bool *held, char *why, char *why_text, size_t whylen)
{
	*held = false;
	if (!gate_route_any_healthy(g, why, why_text, whylen)) {
		*held = true;
		return -1;
	}
	int64_t now = gw_mono_ns();
	int best = -1, best_down = -1;
	double bs = 0, bds = 0;
	for (int i = 0; i < g->nup; i++) {
		gate_up *u = &g->up[i];
		if (u->health[0] || u->inflight >= cap_of(g, u))
			continue;
		double s = load_of(g, u);
		if (u->down && now < u->down_until_ns) {
			if (best_down < 0 || s < bds) {
				best_down = i;
				bds = s;
			}
		} else if (best < 0 || s < bs) {
			best = i;
			bs = s;
		}
	}
	return best >= 0 ? best : best_down;
}
