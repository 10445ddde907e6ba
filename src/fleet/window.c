/*
 * window.c - one node's (or GPU's, or job's) window of Prometheus as one
 * timeline: the same timeline a recording is read into, so report and
 * compare run the same diagnosis and renderers on it. What Prometheus lacks
 * (host series, processes, steps) stays absent and is reported as not
 * checked, never as 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/window.h"
#include "fleet/window_int.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/xalloc.h"

/* A window this long or longer is read at a coarser step than 15 s. */
#define FW_TARGET_SAMPLES 2000.0
#define FW_MIN_STEP 15.0
/* More samples than this per GPU is a usage error: a larger step or a shorter range. */
#define FW_MAX_SAMPLES 1000000.0
/* How far back a job found by its label alone is looked for when no range is given. */
#define FW_JOB_LOOKBACK (7 * 86400.0)

void fleet_window_spec_init(fleet_window_spec *s)
{
	*s = (fleet_window_spec){.gpu = -1};
}

bool fleet_parse_time(const char *text, double *out)
{
	if (!text || !*text)
		return false;
	if (gw_parse_double(text, out))
		return isfinite(*out) && *out >= 0;
	struct tm tm = {0};
	const char *end = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || (strcmp(end, "Z") && *end))
		return false;
	*out = (double)timegm(&tm);
	return true;
}

static bool parse_seconds(const char *v, double *out)
{
	int64_t ns;
	if (!gw_parse_duration_ns(v, 1000000000LL, &ns) || ns <= 0)
		return false;
	*out = (double)ns / 1e9;
	return true;
}

static bool set_text(char *dst, size_t len, const char *v)
{
	if (!*v || strlen(v) >= len)
		return false;
	memcpy(dst, v, strlen(v) + 1);
	return true;
}

/* One key=value of a spec into s; false with why. seen marks the keys given. */
static bool spec_pair(const char *key, const char *v, fleet_window_spec *s, unsigned *seen,
                      const char **why)
{
	static const char *const keys[] = {"node", "gpu", "job", "from", "to", "since", "step"};
	int k = -1;
	for (int i = 0; i < (int)(sizeof keys / sizeof *keys); i++)
		if (!strcmp(key, keys[i]))
			k = i;
	if (k < 0)
		return *why = N_("unknown key (node, gpu, job, from, to, since, step)"), false;
	if (*seen & (1u << k))
		return *why = N_("key given twice"), false;
	*seen |= 1u << k;
	long long g;
	bool ok = false;
	switch (k) {
	case 0:
		ok = set_text(s->node, sizeof s->node, v);
		break;
	case 1:
		ok = gw_parse_int(v, 0, 999999, &g);
		s->gpu = ok ? (int)g : s->gpu;
		break;
	case 2:
		ok = set_text(s->job, sizeof s->job, v);
		break;
	case 3:
		ok = fleet_parse_time(v, &s->from);
		break;
	case 4:
		ok = fleet_parse_time(v, &s->to);
		break;
	case 5:
		ok = parse_seconds(v, &s->since);
		break;
	default:
		ok = parse_seconds(v, &s->step) && s->step <= 86400;
		break;
	}
	if (!ok)
		*why = k == 3 || k == 4   ? N_("not a time (epoch seconds or 2026-01-02T03:04:05Z)")
		       : k == 5 || k == 6 ? N_("not a duration (e.g. 15s, 6h)")
		       : k == 1           ? N_("not a GPU index")
		                          : N_("empty or too long");
	return ok;
}

bool fleet_window_spec_parse(const char *text, fleet_window_spec *s, char *what, size_t len,
                             const char **why)
{
	fleet_window_spec_init(s);
	unsigned seen = 0;
	snprintf(what, len, "%s", text ? text : "");
	if (!text || !*text)
		return *why = N_("an empty window"), false;
	char buf[1024];
	if (strlen(text) >= sizeof buf)
		return *why = N_("empty or too long"), false;
	memcpy(buf, text, strlen(text) + 1);
	char *save = NULL;
	for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(p, '=');
		snprintf(what, len, "%s", p);
		if (!eq)
			return *why = N_("expected key=value"), false;
		*eq = '\0';
		if (!spec_pair(p, eq + 1, s, &seen, why))
			return false;
	}
	snprintf(what, len, "%s", text);
	return true;
}

bool fleet_window_check(const fleet_window_spec *s, const char **why)
{
	if (s->node[0] && s->job[0])
		*why = N_("a node or a job, not both");
	else if (!s->node[0] && !s->job[0])
		*why = N_("name a node (with its GPU) or a job");
	else if (s->gpu >= 0 && !s->node[0])
		*why = N_("a GPU index needs its node");
	else if (s->since > 0 && s->from > 0)
		*why = N_("give from or since, not both");
	else if (s->node[0] && s->from <= 0 && s->since <= 0)
		*why = N_("a node's window needs from (and to) or since");
	else if (s->from > 0 && s->to > 0 && s->to <= s->from)
		*why = N_("from is not before to");
	else if (s->from > 0 && s->to > 0 && s->step > 0 &&
	         (s->to - s->from) / s->step > FW_MAX_SAMPLES)
		*why = N_("more than 1,000,000 samples per GPU: a larger step or a shorter range");
	else
		return true;
	return false;
}

void fleet_window_range(const fleet_window_spec *s, double now, double *from, double *to,
                        double *step)
{
	*to = s->to > 0 ? s->to : now;
	*from = s->from > 0 ? s->from : *to - (s->since > 0 ? s->since : FW_JOB_LOOKBACK);
	if (s->step > 0) {
		*step = s->step;
		return;
	}
	double st = ceil((*to - *from) / FW_TARGET_SAMPLES);
	*step = st > FW_MIN_STEP ? st : FW_MIN_STEP;
}

void fleet_window_describe(const fleet_window_spec *s, const timeline *tl, const char *url,
                           char *out, size_t len)
{
	char who[700];
	const char *user = tl ? tl_meta_get(tl, "user") : NULL,
	           *from = tl ? tl_meta_get(tl, "job.from") : NULL;
	if (s->job[0])
		snprintf(who, sizeof who, "job %s%s%s on %s (%s)", s->job, user ? " of " : "",
		         user ? user : "", tl ? tl->hostname : "?",
		         from && !strcmp(from, "slurm") ? "Slurm" : "hpc_job label");
	else if (s->gpu >= 0)
		snprintf(who, sizeof who, "%s GPU %d", s->node, s->gpu);
	else
		snprintf(who, sizeof who, "%s", s->node);
	snprintf(out, len, "%s (Prometheus %s)", who, url);
}

/* ---- PromQL matchers ---- */

/* text as the inside of a PromQL string; regex: its regex characters escaped too. */
static void prom_quote(const char *text, bool regex, char *out, size_t len)
{
	size_t n = 0;
	for (const char *p = text; *p && n + 4 < len; p++) {
		if (*p == '"' || *p == '\\')
			out[n++] = '\\';
		else if (regex && strchr(".+*?()[]{}|^$", *p))
			out[n++] = '\\', out[n++] = '\\';
		out[n++] = *p;
	}
	out[n] = '\0';
}

void fw_node_matcher(const char *host_label, const char *node, const char *gpus, char *out,
                     size_t len)
{
	char q[600];
	bool inst = !strcmp(host_label, "instance");
	prom_quote(node, inst, q, sizeof q);
	int n = inst ? snprintf(out, len, "instance=~\"%s(:[0-9]+)?\"", q)
	             : snprintf(out, len, "%s=\"%s\"", host_label, q);
	if (gpus && *gpus && n > 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, ",gpu=~\"%s\"", gpus);
}

void fw_hosts_matcher(const char *host_label, const queue_slurm_alloc *al, const char *gpus,
                      char *out, size_t len)
{
	bool inst = !strcmp(host_label, "instance");
	size_t n = (size_t)snprintf(out, len, "%s=~\"%s", host_label, inst ? "(" : "");
	for (int i = 0; i < al->nnodes && n < len; i++) {
		char q[200];
		prom_quote(al->node[i].host, true, q, sizeof q);
		n += (size_t)snprintf(out + n, len - n, "%s%s", i ? "|" : "", q);
	}
	if (n < len)
		n += (size_t)snprintf(out + n, len - n, "%s\"", inst ? ")(:[0-9]+)?" : "");
	if (gpus && *gpus && n < len)
		snprintf(out + n, len - n, ",gpu=~\"%s\"", gpus);
}

void fw_alloc_gpus(const queue_slurm_alloc *al, char *out, size_t len)
{
	uint64_t all = 0;
	out[0] = '\0';
	for (int i = 0; i < al->nnodes; i++) {
		if (!al->node[i].gpus)
			return;
		all |= al->node[i].gpus;
	}
	size_t n = 0;
	for (int g = 0; g < 64 && n < len; g++)
		if (all & (1ull << g))
			n += (size_t)snprintf(out + n, len - n, "%s%d", n ? "|" : "", g);
}

/* Whether keep (NULL: everything) holds GPU index gpu of host. */
static bool kept(const queue_slurm_alloc *keep, const char *host, int gpu)
{
	if (!keep)
		return true;
	for (int i = 0; i < keep->nnodes; i++)
		if (!strcmp(keep->node[i].host, host))
			return !keep->node[i].gpus ||
			       (gpu >= 0 && gpu < 64 && (keep->node[i].gpus & (1ull << gpu)));
	return false;
}

void fw_job_matcher(const char *job, char *out, size_t len)
{
	char q[300];
	prom_quote(job, false, q, sizeof q);
	snprintf(out, len, "hpc_job=\"%s\"", q);
}

/* ---- joining nodes into one timeline ---- */

/* The nodes' samples [a, b] side by side as one timeline, times from sample a. */
timeline *fw_join(const prom_fleet *fl, int a, int b, const queue_slurm_alloc *keep)
{
	int ngpu = 0, nnodes = 0;
	for (int k = 0; k < fl->nnodes; k++) {
		int n = 0;
		for (int g = 0; g < fl->node[k].tl->ngpu; g++)
			n += kept(keep, fl->node[k].host, fl->node[k].tl->gpu[g].index);
		ngpu += n;
		nnodes += n > 0;
	}
	timeline *w = tl_new(ngpu < GPU_MAX ? ngpu : GPU_MAX, 0);
	w->t0_wall = fl->from + a * fl->step;
	for (int s = a; s <= b; s++)
		tl_add_sample(w, (s - a) * fl->step);
	size_t hl = 0;
	int pos = 0;
	for (int k = 0; k < fl->nnodes; k++) {
		const prom_node *nd = &fl->node[k];
		int at[GPU_MAX]; /* the node's GPU positions in w, -1 left out */
		int first = pos;
		for (int g = 0; g < nd->tl->ngpu; g++)
			at[g] = kept(keep, nd->host, nd->tl->gpu[g].index) && pos < w->ngpu ? pos++
			                                                                    : -1;
		if (pos > first && hl + 2 < sizeof w->hostname)
			hl += (size_t)snprintf(w->hostname + hl, sizeof w->hostname - hl, "%s%s",
			                       hl ? "," : "", nd->host);
		for (int g = 0; g < nd->tl->ngpu; g++) {
			if (at[g] < 0)
				continue;
			tl_gpu *d = &w->gpu[at[g]];
			const tl_gpu *src = &nd->tl->gpu[g];
			d->index = src->index;
			d->lost_at_end = src->lost_at_end;
			snprintf(d->uuid, sizeof d->uuid, "%s", src->uuid);
			memcpy(d->vendor, src->vendor, sizeof d->vendor);
			if (nnodes > 1)
				snprintf(d->name, sizeof d->name, "%.40s %.50s", nd->host,
				         src->name);
			else
				snprintf(d->name, sizeof d->name, "%s", src->name);
			for (int m = 0; m < GM__COUNT; m++)
				for (int s = a; src->m[m] && s <= b; s++)
					if (isfinite(src->m[m][s]))
						tl_set_gpu(w, at[g], (gpu_metric_id)m, s - a,
						           src->m[m][s]);
		}
		/* the host summary is one node's: kept for a window of one node */
		for (int m = 0; nnodes == 1 && pos > first && m < HM__COUNT; m++)
			for (int s = a; nd->tl->h[m] && s <= b; s++)
				if (isfinite(nd->tl->h[m][s]))
					tl_set_host(w, (host_metric_id)m, s - a, nd->tl->h[m][s]);
		for (int e = 0; e < nd->tl->nevents; e++) {
			const tl_event *ev = &nd->tl->events[e];
			double t = ev->t - a * fl->step;
			if (t >= -1e-9 && t <= (b - a) * fl->step + 1e-9 &&
			    (ev->gpu < 0 || (ev->gpu < nd->tl->ngpu && at[ev->gpu] >= 0)))
				tl_add_event(w, t, ev->kind, ev->gpu < 0 ? -1 : at[ev->gpu],
				             ev->value, ev->text);
		}
	}
	w->duration = (b - a) * fl->step;
	return w;
}

/* The first and last sample where any GPU has a utilization value; false when none. */
bool fw_present_span(const prom_fleet *fl, int *a, int *b)
{
	*a = fl->n, *b = -1;
	for (int k = 0; k < fl->nnodes; k++) {
		const timeline *tl = fl->node[k].tl;
		for (int g = 0; g < tl->ngpu; g++)
			for (int s = 0; s < tl->n; s++)
				if (isfinite(tl_gpu_at(tl, g, GM_UTIL_GPU, s))) {
					*a = s < *a ? s : *a;
					*b = s > *b ? s : *b;
				}
	}
	return *b >= 0;
}
