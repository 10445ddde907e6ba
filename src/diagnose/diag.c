/* diag.c - the diagnosis run: job GPUs, analysed window, rules in order, result helpers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/diag_int.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/xalloc.h"

/* ---- thresholds ---- */

const diag_threshold_desc diag_threshold_table[] = {
#define X(name, def, unit, help) {#name, unit, help, def},
#include "diagnose/thresholds.def"
#undef X
};

double *diag_threshold_field(diag_thresholds *th, int i)
{
	int k = 0;
#define X(name, def, unit, help)                                                                   \
	if (k++ == i)                                                                              \
		return &th->name;
#include "diagnose/thresholds.def"
#undef X
	return NULL;
}
const int diag_threshold_count = sizeof diag_threshold_table / sizeof *diag_threshold_table;

bool diag_threshold_set(diag_thresholds *th, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	if (!eq)
		return false;
	size_t klen = (size_t)(eq - assignment);
	double v;
	if (!gw_parse_double(eq + 1, &v) || !isfinite(v) || v < 0)
		return false;
	for (int i = 0; i < diag_threshold_count; i++) {
		const diag_threshold_desc *d = &diag_threshold_table[i];
		if (strlen(d->name) == klen && !strncmp(d->name, assignment, klen)) {
			*diag_threshold_field(th, i) = v;
			return true;
		}
	}
	return false;
}

void diag_opts_default(diag_opts *o)
{
	memset(o, 0, sizeof *o);
	o->goal = DIAG_GOAL_THROUGHPUT;
	o->localize = true;
	for (int i = 0; i < diag_threshold_count; i++)
		*diag_threshold_field(&o->th, i) = diag_threshold_table[i].def;
}

bool diag_goal_parse(const char *s, diag_goal *out)
{
	if (!strcmp(s, "throughput"))
		*out = DIAG_GOAL_THROUGHPUT;
	else if (!strcmp(s, "latency"))
		*out = DIAG_GOAL_LATENCY;
	else
		return false;
	return true;
}

const char *diag_goal_name(diag_goal g)
{
	return g == DIAG_GOAL_LATENCY ? "latency" : "throughput";
}

const char *diag_severity_name(diag_severity s)
{
	switch (s) {
	case DIAG_ERROR:
		return "error";
	case DIAG_WARN:
		return "warn";
	default:
		return "info";
	}
}

/* ---- rules ---- */

static const struct {
	const char *id, *summary;
	void (*run)(diag_ctx *);
} rule_table[DIAG_R__COUNT] = {
#define RULE(sym, id, fn, summary) [DIAG_R_##sym] = {id, summary, fn},
#define RULE_ID(sym, id, summary) [DIAG_R_##sym] = {id, summary, NULL},
#include "diagnose/rules.def"
#undef RULE
#undef RULE_ID
};

const char *diag_rule_id(diag_rule r)
{
	return (unsigned)r < DIAG_R__COUNT ? rule_table[r].id : NULL;
}

const char *diag_rule_summary(diag_rule r)
{
	return (unsigned)r < DIAG_R__COUNT ? rule_table[r].summary : NULL;
}

int diag_rule_lookup(const char *id)
{
	for (int r = 0; r < DIAG_R__COUNT; r++)
		if (!strcmp(rule_table[r].id, id))
			return r;
	return -1;
}

void diag_rule_label(diag_rule r, char *out, size_t len)
{
	const char *id = diag_rule_id(r);
	size_t i = 0;
	for (; id && id[i] && i + 1 < len; i++)
		out[i] = id[i] == '-' ? '_' : id[i];
	if (len)
		out[i] = '\0';
}

/* ---- meta ---- */

void diag_meta_set(diag_meta *m, const char *key, const char *value)
{
	if (!key || !value)
		return;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key)) {
			free(m->kv[i].value);
			m->kv[i].value = gw_xstrdup(value);
			return;
		}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->kv = gw_xrealloc(m->kv, (size_t)m->cap * sizeof *m->kv);
	}
	m->kv[m->n].key = gw_xstrdup(key);
	m->kv[m->n].value = gw_xstrdup(value);
	m->n++;
}

const char *diag_meta_get(const diag_meta *m, const char *key)
{
	if (!m)
		return NULL;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->kv[i].key, key))
			return m->kv[i].value;
	return NULL;
}

void diag_meta_free(diag_meta *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->kv[i].key);
		free(m->kv[i].value);
	}
	free(m->kv);
	memset(m, 0, sizeof *m);
}

void diag_meta_from_timeline(diag_meta *m, const timeline *tl)
{
	for (int i = 0; i < tl->nmeta; i++)
		diag_meta_set(m, tl->meta[i].key, tl->meta[i].value);
	/* Facts the timeline carries win only where the meta table is silent. */
	if (tl->command[0] && !diag_meta_get(m, "command"))
		diag_meta_set(m, "command", tl->command);
	if (tl->driver[0] && !diag_meta_get(m, "driver"))
		diag_meta_set(m, "driver", tl->driver);
	if (tl->cuda[0] && !diag_meta_get(m, "cuda"))
		diag_meta_set(m, "cuda", tl->cuda);
	if (tl->hostname[0] && !diag_meta_get(m, "hostname"))
		diag_meta_set(m, "hostname", tl->hostname);
	if (tl->ngpu > 0 && !diag_meta_get(m, "gpus")) {
		char buf[1024] = "";
		size_t o = 0;
		for (int g = 0; g < tl->ngpu && o < sizeof buf; g++)
			o += (size_t)snprintf(
			    buf + o, sizeof buf - o, "%s%d:%s", g ? "," : "", tl->gpu[g].index,
			    tl->gpu[g].uuid[0] ? tl->gpu[g].uuid : tl->gpu[g].name);
		diag_meta_set(m, "gpus", buf);
	}
}

/* ---- findings ---- */

diag_finding *diag_add(diag_ctx *c, diag_rule rule, diag_severity sev, double confidence)
{
	diag_result *r = c->res;
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->f = gw_xrealloc(r->f, (size_t)r->cap * sizeof *r->f);
	}
	diag_finding *f = &r->f[r->n++];
	memset(f, 0, sizeof *f);
	f->rule = rule;
	f->id = diag_rule_id(rule);
	f->severity = sev;
	f->confidence = confidence < 0 ? 0 : confidence > 1 ? 1 : confidence;
	return f;
}

/* One diagnosis runs in one language; per thread, so that concurrent
 * diagnoses (the exporter's, a JSON one) do not disturb each other. */
static _Thread_local bool diag_localize;

void diag_set_localize(bool on)
{
	diag_localize = on;
}

const char *diag_tr(const char *msgid)
{
	return diag_localize ? gw_gettext(msgid) : msgid;
}

void diag_title(diag_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->title, sizeof f->title, diag_tr(fmt), ap);
	va_end(ap);
}

void diag_note(diag_finding *f, const char *fmt, ...)
{
	size_t o = strlen(f->note);
	if (o + 2 >= sizeof f->note)
		return;
	/* A space between sentences, except after CJK text (its punctuation is wide). */
	if (o && !(o >= 3 && (unsigned char)f->note[o - 3] >= 0xE0))
		f->note[o++] = ' ';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->note + o, sizeof f->note - o, diag_tr(fmt), ap);
	va_end(ap);
}

void diag_ev_add(diag_finding *f, int gpu, const diag_ev_spec *in)
{
	if (f->nev >= DIAG_MAX_EVIDENCE)
		return;
	diag_evidence *e = &f->ev[f->nev++];
	const char *op = in->per ? "/" : in->plus ? "+" : "";
	const char *second = in->per ? in->per : in->plus ? in->plus : "";
	snprintf(e->metric, sizeof e->metric, "%s%s%s", in->metric, op, second);
	snprintf(e->stat, sizeof e->stat, "%s", diag_tr(in->stat));
	e->value = in->value;
	snprintf(e->cmp, sizeof e->cmp, "%s", in->cmp ? in->cmp : "");
	e->threshold = in->cmp && *in->cmp ? in->threshold : NAN;
	snprintf(e->unit, sizeof e->unit, "%s", in->unit ? in->unit : "");
	e->gpu = gpu;
}

int diag_evidence_met(const diag_evidence *e)
{
	if (!e->cmp[0] || isnan(e->threshold) || isnan(e->value))
		return -1;
	double v = e->value, t = e->threshold;
	if (!strcmp(e->cmp, ">="))
		return v >= t;
	if (!strcmp(e->cmp, "<="))
		return v <= t;
	if (!strcmp(e->cmp, ">"))
		return v > t;
	if (!strcmp(e->cmp, "<"))
		return v < t;
	return -1;
}

void diag_gpu(diag_finding *f, int g)
{
	if (g >= 0 && g < 64)
		f->gpus |= 1ULL << g;
}

/*
 * GPU g's vendor: the recording's, else what its events prove (only NVIDIA's
 * driver reports Xids, only amdgpu its faults: a recording older than the
 * vendor column still says whose a faulting GPU is), else "".
 */
static const char *gpu_vendor(const diag_ctx *c, int g)
{
	const timeline *tl = c->tl;
	if (tl->gpu[g].vendor[0])
		return tl->gpu[g].vendor;
	for (int i = 0; i < tl->nevents; i++)
		if (tl->events[i].gpu == g && !strcmp(tl->events[i].kind, TL_EV_XID))
			return "nvidia";
		else if (tl->events[i].gpu == g && !strcmp(tl->events[i].kind, TL_EV_AMDGPU))
			return "amd";
	return "";
}

/* The vendor of f's GPUs (all of the timeline's when f names none); "" when they differ
 * or one is unknown. */
static const char *finding_vendor(const diag_ctx *c, const diag_finding *f)
{
	const char *v = NULL;
	for (int g = 0; g < c->ngpu && g < 64; g++) {
		if (f->gpus && !(f->gpus >> g & 1))
			continue;
		const char *gv = gpu_vendor(c, g);
		if (!v)
			v = gv;
		else if (strcmp(v, gv) != 0)
			return "";
	}
	return v ? v : "";
}

void diag_advice(diag_ctx *c, diag_finding *f, const char *variant)
{
	diag_advice_lookup(f->rule, variant, finding_vendor(c, f), c->o->goal, &f->advice,
	                   &f->verify);
}

void diag_add_range(diag_finding *f, double t0, double t1)
{
	if (!(t1 >= t0))
		return;
	/* Insert in time order, then merge overlaps. */
	int i = f->nranges;
	if (i == DIAG_MAX_RANGES) {
		/* Full: merge the pair with the smallest gap to make room. */
		int best = 0;
		double gap = INFINITY;
		for (int k = 0; k + 1 < f->nranges; k++) {
			double d = f->ranges[k + 1].t0 - f->ranges[k].t1;
			if (d < gap) {
				gap = d;
				best = k;
			}
		}
		f->ranges[best].t1 = f->ranges[best + 1].t1;
		memmove(&f->ranges[best + 1], &f->ranges[best + 2],
		        (size_t)(f->nranges - best - 2) * sizeof *f->ranges);
		f->nranges--;
		i = f->nranges;
	}
	while (i > 0 && f->ranges[i - 1].t0 > t0) {
		f->ranges[i] = f->ranges[i - 1];
		i--;
	}
	f->ranges[i].t0 = t0;
	f->ranges[i].t1 = t1;
	f->nranges++;
	int w = 0;
	for (int k = 1; k < f->nranges; k++) {
		if (f->ranges[k].t0 <= f->ranges[w].t1) {
			if (f->ranges[k].t1 > f->ranges[w].t1)
				f->ranges[w].t1 = f->ranges[k].t1;
		} else {
			f->ranges[++w] = f->ranges[k];
		}
	}
	f->nranges = w + 1;
}

double diag_t0(const diag_ctx *c, int s)
{
	return s > 0 ? c->tl->t[s - 1] : c->tl->t[s];
}

void diag_ranges_mask(const diag_ctx *c, diag_finding *f, const bool *mask)
{
	int s = c->from;
	while (s < c->to) {
		if (!mask[s]) {
			s++;
			continue;
		}
		int e = s;
		while (e + 1 < c->to && mask[e + 1])
			e++;
		diag_add_range(f, diag_t0(c, s), c->tl->t[e]);
		s = e + 1;
	}
}

void diag_range_window(const diag_ctx *c, diag_finding *f)
{
	if (c->to > c->from)
		diag_add_range(f, diag_t0(c, c->from), c->tl->t[c->to - 1]);
}

const diag_finding *diag_ctx_find(const diag_ctx *c, diag_rule rule)
{
	return diag_find_rule(c->res, rule);
}

bool diag_has(const diag_ctx *c, diag_rule rule)
{
	return diag_ctx_find(c, rule) != NULL;
}

/* ---- series ---- */

const double *diag_series(const diag_ctx *c, int g, gpu_metric_id id)
{
	if (g < 0 || g >= c->ngpu)
		return NULL;
	return c->tl->gpu[g].m[id];
}

/* Time-weighted: the recorder samples fast at first, and a mean per sample
 * would overweight those first seconds. */
double diag_mean(const diag_ctx *c, const double *x)
{
	return tl_wmean(c->tl, x, c->from, c->to);
}

double diag_max(const diag_ctx *c, const double *x)
{
	return tl_max(x, c->from, c->to);
}

double diag_min(const diag_ctx *c, const double *x)
{
	return tl_min(x, c->from, c->to);
}

int diag_present(const diag_ctx *c, const double *x)
{
	int k = 0;
	if (x)
		for (int s = c->from; s < c->to; s++)
			k += !isnan(x[s]);
	return k;
}

/*
 * Idle share: 100 minus utilization is the share of time no kernel ran. The
 * driver's sub-sample idle share is only a fallback: each sub-sample is
 * itself an average over a sixth of a second or more, so gaps of a few
 * milliseconds between kernels (a starved loop) never show in it.
 */
double diag_idle_pct(const diag_ctx *c, int g)
{
	double u = diag_mean(c, c->act[g]);
	if (isnan(u))
		return diag_mean(c, diag_series(c, g, GM_UTIL_SAMPLES_IDLE));
	return u >= 100 ? 0 : u <= 0 ? 100 : 100 - u;
}

double diag_idle_at(const diag_ctx *c, int g, int s)
{
	double u = c->act[g] ? c->act[g][s] : NAN;
	if (isnan(u))
		return tl_gpu_at(c->tl, g, GM_UTIL_SAMPLES_IDLE, s);
	return u >= 100 ? 0 : u <= 0 ? 100 : 100 - u;
}

const char *diag_act_key(const diag_ctx *c, int g)
{
	const tl_gpu *G = &c->tl->gpu[g];
	if (c->act[g] && c->act[g] == G->m[GM_UTIL_GPU])
		return DIAG_GM(UTIL_GPU);
	if (c->act[g] && c->act[g] == G->m[GM_GPM_GR_ACTIVE])
		return DIAG_GM(GPM_GR_ACTIVE);
	if (c->act[g])
		return DIAG_GM(GPM_SM_ACTIVE);
	return DIAG_GM(UTIL_SAMPLES_IDLE);
}

double diag_mem_total(const diag_ctx *c, int g)
{
	double t = diag_max(c, diag_series(c, g, GM_MEM_TOTAL));
	if (!isnan(t) && t > 0)
		return t;
	/* used + free (+ reserved) at any sample gives the capacity. */
	for (int s = c->from; s < c->to; s++) {
		double u = tl_gpu_at(c->tl, g, GM_MEM_USED, s),
		       fr = tl_gpu_at(c->tl, g, GM_MEM_FREE, s);
		double rs = tl_gpu_at(c->tl, g, GM_MEM_RESERVED, s);
		if (!isnan(u) && !isnan(fr))
			return u + fr + (isnan(rs) ? 0 : rs);
	}
	return NAN;
}

int diag_runs(const diag_ctx *c, const bool *mask)
{
	int k = 0;
	for (int s = c->from; s < c->to; s++)
		if (mask[s] && (s == c->from || !mask[s - 1]))
			k++;
	return k;
}

void diag_gpu_list(const diag_ctx *c, uint64_t mask, char *out, size_t len)
{
	int idx[64], n = 0;
	for (int g = 0; g < c->ngpu && g < 64; g++)
		if (mask & (1ULL << g))
			idx[n++] = c->tl->gpu[g].index;
	/* TRANSLATORS: "GPU 3"; the plural form leads a list: "GPUs 0, 1 and 2". */
	size_t o = (size_t)snprintf(out, len, "%s",
	                            diag_localize ? P_("GPU ", "GPUs ", n)
	                            : n == 1      ? "GPU "
	                                          : "GPUs ");
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d",
		                      i == 0       ? ""
		                      : i == n - 1 ? L_(" and ")
		                                   : L_(", "),
		                      idx[i]);
	if (n == 0)
		snprintf(out, len, "%s", L_("no GPU"));
}

bool *diag_mask_new(const diag_ctx *c)
{
	bool *m = gw_xcalloc(c->tl->n ? (size_t)c->tl->n : 1, sizeof *m);
	return m;
}

/* ---- the job's intent ---- */

const char *diag_env(const diag_ctx *c, const char *name)
{
	char key[96];
	snprintf(key, sizeof key, "env.%s", name);
	const char *v = diag_meta_get(c->o->meta, key);
	return v ? v : tl_meta_get(c->tl, key);
}

int diag_visible_count(const char *cvd)
{
	if (!cvd)
		return -1;
	while (*cvd == ' ')
		cvd++;
	if (!*cvd || !strncmp(cvd, "-1", 2))
		return 0;
	int n = 1;
	for (const char *p = cvd; *p; p++)
		n += *p == ',';
	return n;
}

/* The integer after `opt` ("=4" or " 4") in cmd, -1 when absent. */
static int option_count(const char *cmd, const char *opt)
{
	const char *p = cmd;
	size_t ol = strlen(opt);
	while ((p = strstr(p, opt)) != NULL) {
		const char *v = p + ol;
		if (*v == '=' || *v == ' ') {
			long n = strtol(v + 1, NULL, 10);
			if (n > 0 && n <= GPU_MAX)
				return (int)n;
		}
		p = v;
	}
	return -1;
}

int diag_intended_gpus(const diag_ctx *c)
{
	const char *cmd = diag_meta_get(c->o->meta, "command");
	if (!cmd)
		cmd = c->tl->command;
	static const char *const count_opts[] = {"--nproc_per_node", "--nproc-per-node",
	                                         "--num_gpus",       "--num-gpus",
	                                         "--gpus-per-node",  "--ngpus"};
	for (size_t i = 0; i < sizeof count_opts / sizeof *count_opts; i++) {
		int n = option_count(cmd, count_opts[i]);
		if (n > 0)
			return n;
	}
	int visible = diag_visible_count(diag_env(c, "CUDA_VISIBLE_DEVICES"));
	static const char *const launchers[] = {"torchrun",  "torch.distributed",
	                                        "deepspeed", "accelerate launch",
	                                        "mpirun",    "horovodrun"};
	bool launcher = false;
	for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
		launcher |= strstr(cmd, launchers[i]) != NULL;
	/* CUDA_VISIBLE_DEVICES alone says what the job may use, not what it means to. */
	if (launcher)
		return visible > 0 ? visible : c->ngpu;
	return -1;
}

/* ---- the run ---- */

/*
 * Does GPU g show work anywhere in the recording: utilization or SM activity
 * above the idle threshold, or memory held beyond what an idle board keeps?
 * Such a GPU is diagnosed whether or not its processes are visible.
 */
static bool gpu_works(diag_ctx *c, int g)
{
	const timeline *tl = c->tl;
	double idle = c->th->idle_util_pct;
	if (tl_max(c->act[g], 0, tl->n) > idle ||
	    tl_max(tl->gpu[g].m[GM_GPM_SM_ACTIVE], 0, tl->n) > idle)
		return true;
	int from = c->from, to = c->to;
	c->from = 0;
	c->to = tl->n;
	double used = tl_max(tl->gpu[g].m[GM_MEM_USED], 0, tl->n), tot = diag_mem_total(c, g);
	c->from = from;
	c->to = to;
	return tot > 0 && 100 * used / tot > c->th->idle_mem_pct;
}

/* Which GPUs belong to the job: where the watched tree held a context. */
static void find_job_gpus(diag_ctx *c)
{
	const timeline *tl = c->tl;
	for (int i = 0; i < tl->nprocs; i++) {
		const tl_proc *p = &tl->procs[i];
		if (p->gpu < 0 || p->gpu >= c->ngpu)
			continue;
		c->procs_seen[p->gpu] = true;
		if (p->in_tree) {
			c->job[p->gpu] = true;
			c->tree_on_gpu = true;
		} else if (!p->alive) {
			c->unmatched = true;
		}
	}
	for (int g = 0; g < c->ngpu; g++)
		c->works[g] = gpu_works(c, g);
	if (tl->have_root && !c->tree_on_gpu) {
		/* A tree whose PIDs cannot be matched to the GPU's (a container's PID
		 * namespace): every GPU counts as the job's. A GPU that works while no
		 * process at all is visible on it (a driver that hides other
		 * namespaces' processes) may be the job's too. */
		for (int g = 0; g < c->ngpu; g++) {
			if (c->unmatched || (c->works[g] && !c->procs_seen[g]))
				c->job[g] = true;
			if (c->job[g] && c->works[g])
				c->hidden = true;
		}
	}
	/* No tree watched (record without --pid, the live views): the job is
	 * whatever runs on a GPU, or shows work there with its processes out of
	 * sight. An idle GPU that nobody uses has no job to diagnose. */
	if (!tl->have_root)
		for (int g = 0; g < c->ngpu; g++) {
			c->job[g] = c->procs_seen[g] || c->works[g];
			if (c->works[g] && !c->procs_seen[g])
				c->hidden = true;
		}
	c->njob = 0;
	for (int g = 0; g < c->ngpu; g++)
		c->njob += c->job[g];
}

/*
 * The analysed window: from the first to the last sample where a job GPU was
 * active, so model loading before and teardown after do not read as idle
 * gaps: start-up, data loading and compilation have a pattern of their own.
 * Live windows are taken whole: an idle tail is exactly what they must show.
 * A tail where the job is stopped (a breakpoint, SIGSTOP) is no teardown: the
 * job still holds its GPUs, so the window runs on through it.
 */
static void find_window(diag_ctx *c)
{
	const timeline *tl = c->tl;
	c->from = 0;
	c->to = tl->n;
	if (!c->o->live && c->njob > 0) {
		int first = -1, last = -1;
		for (int s = 0; s < tl->n; s++)
			for (int g = 0; g < c->ngpu; g++)
				if (c->job[g] && c->act[g] && c->act[g][s] > c->th->idle_util_pct) {
					if (first < 0)
						first = s;
					last = s;
				}
		while (first >= 0 && last + 1 < tl->n && c->stopped[last + 1])
			last++;
		if (first >= 0) {
			c->from = first;
			c->to = last + 1;
		}
	}
	c->window_s = 0;
	if (c->to > c->from) {
		int k = c->to - c->from;
		double span = tl->t[c->to - 1] - tl->t[c->from];
		c->window_s = k > 1 ? span + span / (k - 1) : (tl->n > 1 ? tl->t[1] - tl->t[0] : 0);
	}
	if (c->o->live)
		snprintf(c->span, sizeof c->span, L_("the last %.0f s"), c->window_s);
	else
		snprintf(c->span, sizeof c->span, "%s", L_("the run"));
}

static void pick_activity(diag_ctx *c)
{
	for (int g = 0; g < c->ngpu; g++) {
		const tl_gpu *G = &c->tl->gpu[g];
		/* utilization.gpu is unsupported under MIG; GPM activity stands in. */
		c->act[g] = G->m[GM_UTIL_GPU]        ? G->m[GM_UTIL_GPU]
		            : G->m[GM_GPM_GR_ACTIVE] ? G->m[GM_GPM_GR_ACTIVE]
		                                     : G->m[GM_GPM_SM_ACTIVE];
	}
}

/* Errors first, then warnings, then info; within a severity the most
 * confident first, rule order between equals (a stable insertion sort). */
static bool ranks_below(const diag_finding *a, const diag_finding *b)
{
	return a->severity < b->severity ||
	       (a->severity == b->severity && a->confidence < b->confidence);
}

static void sort_findings(diag_result *r)
{
	for (int i = 1; i < r->n; i++) {
		diag_finding x = r->f[i];
		int j = i;
		while (j > 0 && ranks_below(&r->f[j - 1], &x)) {
			r->f[j] = r->f[j - 1];
			j--;
		}
		r->f[j] = x;
	}
}

/*
 * Live, a GPU lost at the window's end can no longer be read: what its
 * earlier samples said (starved, shared, throttled) is no longer news, and
 * only the fault that took it stays. A finding about other GPUs too keeps
 * them; one about no GPU in particular is left as it is.
 */
static void end_lost_findings(diag_ctx *c)
{
	uint64_t lost = 0;
	for (int p = 0; p < c->ngpu && p < 64; p++)
		if (c->tl->gpu[p].lost_at_end)
			lost |= 1ULL << p;
	diag_result *r = c->res;
	if (!lost || !c->o->live)
		return;
	int n = 0;
	for (int i = 0; i < r->n; i++) {
		diag_finding *f = &r->f[i];
		if (f->rule != DIAG_R_GPU_FAULT && (f->gpus & lost)) {
			f->gpus &= ~lost;
			if (!f->gpus)
				continue;
		}
		if (n != i)
			r->f[n] = *f;
		n++;
	}
	r->n = n;
}

int diag_run(const timeline *tl, const diag_opts *o, diag_result *res)
{
	memset(res, 0, sizeof *res);
	res->goal = o->goal;
	diag_set_localize(o->localize);
	diag_ctx c = {.tl = tl, .o = o, .th = &o->th, .res = res};
	c.ngpu = tl->ngpu < GPU_MAX ? tl->ngpu : GPU_MAX;
	pick_activity(&c);
	find_job_gpus(&c);
	c.stopped = diag_stopped_mask(&c);
	find_window(&c);
	res->from = c.from;
	res->to = c.to;
	res->t_from = c.to > c.from ? diag_t0(&c, c.from) : 0;
	res->t_to = c.to > c.from ? tl->t[c.to - 1] : 0;
	res->njob = c.njob;

	double *d;
	int nd = diag_step_times(tl, &d);
	diag_step_stats_of(d, nd, &res->steps);
	diag_step_quality(tl, &o->th, &res->steps);
	free(d);

	diag_gpu_summaries(&c);

	/* In rules.def's order: some rules read the findings of earlier ones. */
	for (int r = 0; r < DIAG_R__COUNT; r++)
		if (rule_table[r].run)
			rule_table[r].run(&c);
	end_lost_findings(&c);
	sort_findings(res);
	diag_chain(&c);
	free(c.stopped);
	return 0;
}

void diag_result_free(diag_result *res)
{
	free(res->f);
	free(res->gpu);
	memset(res, 0, sizeof *res);
}

const diag_finding *diag_top_finding(const diag_result *res)
{
	const diag_finding *best = NULL;
	for (int i = 0; i < res->n; i++) {
		const diag_finding *f = &res->f[i];
		if (!best || f->severity > best->severity ||
		    (f->severity == best->severity && f->confidence > best->confidence))
			best = f;
	}
	return best;
}

const diag_finding *diag_find_rule(const diag_result *res, diag_rule r)
{
	for (int i = 0; i < res->n; i++)
		if (res->f[i].rule == r)
			return &res->f[i];
	return NULL;
}

const diag_finding *diag_find(const diag_result *res, const char *id)
{
	for (int i = 0; i < res->n; i++)
		if (!strcmp(res->f[i].id, id))
			return &res->f[i];
	return NULL;
}

int diag_exit_code(const diag_result *res)
{
	for (int i = 0; i < res->n; i++)
		if (res->f[i].severity == DIAG_ERROR)
			return GW_EXIT_PROBLEMS;
	return GW_EXIT_OK;
}

/* ---- step times ---- */

int diag_step_times(const timeline *tl, double **out)
{
	double *d;
	int n = tl_step_durations(tl, &d);
	/* The first interval carries compilation and cache warm-up. */
	if (n >= DIAG_STEP_WARMUP_MIN) {
		memmove(d, d + 1, (size_t)(n - 1) * sizeof *d);
		n--;
	}
	*out = d;
	return n;
}

/*
 * The quantum of the step timestamps: the coarsest of 1 us .. 10 ms that
 * every timestamp (from the first) is a whole multiple of. Steps stamped by
 * the recorder come out at 1 us; timestamps printed by the job itself in
 * ms show 1 ms.
 */
static double step_resolution(const timeline *tl)
{
	static const double q[] = {1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
	if (tl->nsteps < 3)
		return 1e-6;
	for (size_t k = 0; k < sizeof q / sizeof *q; k++) {
		bool whole = true;
		for (int i = 1; i < tl->nsteps && whole; i++) {
			double x = (tl->steps[i].t - tl->steps[0].t) / q[k];
			whole = fabs(x - nearbyint(x)) < 1e-3;
		}
		if (whole)
			return q[k];
	}
	return 1e-6;
}

void diag_step_quality(const timeline *tl, const diag_thresholds *th, diag_step_stats *st)
{
	st->bursty = false;
	st->burst_share = NAN;
	st->resolution = step_resolution(tl);
	double *d;
	int n = tl_step_durations(tl, &d);
	if (n > 0) {
		double gap = th->step_burst_gap_ms / 1e3, sum = 0;
		int k = 0;
		for (int i = 0; i < n; i++) {
			k += d[i] < gap;
			sum += d[i];
		}
		st->burst_share = (double)k / n;
		/* Bursts, not a sub-millisecond loop: most intervals tiny while
		 * the steps take ten times longer on average, or every step line arriving
		 * within a sliver of a run that lasted far longer (one flush at exit). */
		double span = tl->steps[tl->nsteps - 1].t - tl->steps[0].t;
		bool sliver = tl->duration >= 1 && span < 0.1 * tl->duration;
		/* In bursts the typical interval is a line's copy time, far below the mean. */
		double p50 = tl_percentile(d, n, 50);
		st->bursty = n >= 4 && st->burst_share >= th->step_burst_share &&
		             (10 * p50 < sum / n || sliver);
	}
	free(d);
}

void diag_step_stats_of(const double *d, int n, diag_step_stats *out)
{
	out->bursty = false;
	out->burst_share = NAN;
	out->resolution = NAN;
	out->n = n;
	if (n <= 0) {
		out->mean = out->p50 = out->p90 = out->p99 = out->per_s = NAN;
		return;
	}
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += d[i];
	out->mean = sum / n;
	static const double ps[] = {50, 90, 99};
	double pv[3];
	tl_percentiles(d, n, ps, 3, pv);
	out->p50 = pv[0];
	out->p90 = pv[1];
	out->p99 = pv[2];
	out->per_s = out->mean > 0 ? 1.0 / out->mean : NAN;
}
