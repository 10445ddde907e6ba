/*
 * plan.c - the variables of a sweep and the configurations they make: by
 * default the baseline (every variable at its first value) and then one
 * variable changed at a time, because a gain can only be attributed to a
 * variable when nothing else changed; --grid for the full product.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/plan.h"
#include "sweep/subst.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/hash.h"
#include "util/parse.h"
#include "util/xalloc.h"
#include "util/i18n.h"

void sweep_spec_init(sweep_spec *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->max_values = SWEEP_DEFAULT_MAX_VALUES;
	sp->max_runs = SWEEP_DEFAULT_MAX_RUNS;
	sp->repeat = 1;
}

void sweep_spec_free(sweep_spec *sp)
{
	for (int i = 0; i < sp->nvars; i++) {
		for (int k = 0; k < sp->vars[i].nvalues; k++)
			free(sp->vars[i].values[k]);
		free(sp->vars[i].values);
	}
	sp->nvars = 0;
}

int sweep_var_index(const sweep_spec *sp, const char *name)
{
	for (int i = 0; i < sp->nvars; i++)
		if (!strcmp(sp->vars[i].name, name))
			return i;
	return -1;
}

static bool valid_name(const char *s, size_t n)
{
	if (n == 0 || n >= SWEEP_NAME_MAX || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return false;
	return true;
}

static void add_value(sweep_var *v, const char *s, size_t n)
{
	v->values = gw_xrealloc(v->values, (size_t)(v->nvalues + 1) * sizeof *v->values);
	char *d = gw_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	v->values[v->nvalues++] = d;
}

/* "LO..HI[:STEP]" into v; false when not whole numbers in order. */
static bool parse_range(const char *s, sweep_var *v)
{
	const char *dots = strstr(s, "..");
	if (!dots)
		return false;
	char lo[32], rest[64];
	size_t n = (size_t)(dots - s);
	if (n == 0 || n >= sizeof lo || strlen(dots + 2) >= sizeof rest)
		return false;
	memcpy(lo, s, n);
	lo[n] = '\0';
	snprintf(rest, sizeof rest, "%s", dots + 2);
	char *colon = strchr(rest, ':');
	long long st = 0;
	if (colon) {
		*colon = '\0';
		if (!gw_parse_int(colon + 1, 1, 1LL << 40, &st))
			return false;
	}
	if (!gw_parse_int(lo, 1, 1LL << 40, &v->lo) || !gw_parse_int(rest, 1, 1LL << 40, &v->hi))
		return false;
	if (v->hi < v->lo)
		return false;
	v->step = st ? st : v->lo;
	return true;
}

/* What an error of the variables and the specification says after its why, and one of the
 * plan. */
static const char spec_hint[] = N_("see gpuwhy sweep --help");
static const char plan_hint[] = N_("fewer values, or --max-runs");

/* fmt is marked N_() where it is written; gw_fail_set translates it. */
static int fail(gw_fail *err, const char *fmt, const char *a, const char *b)
{
	return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint, fmt, a, b);
}

/* --search: the range of the searched variable. */
static int parse_search(sweep_var *v, const char *arg, const char *rhs, gw_fail *err)
{
	v->search = true;
	v->pow2 = !strncmp(rhs, "pow2:", 5);
	if (!parse_range(v->pow2 ? rhs + 5 : rhs, v))
		return fail(err,
		            N_("--search %s: '%s' is not a range of whole numbers (e.g. "
		               "batch=pow2:8..4096, batch=16..512:16)"),
		            arg, rhs);
	char lo[32];
	snprintf(lo, sizeof lo, "%lld", v->lo);
	add_value(v, lo, strlen(lo));
	return 0;
}

/* --vary: a comma-separated list, or a range LO..HI[:STEP] of whole numbers. */
static int parse_list(const sweep_spec *sp, sweep_var *v, const char *arg, const char *rhs,
                      gw_fail *err)
{
	sweep_var r = {0};
	if (strstr(rhs, "..") && !strchr(rhs, ',')) {
		if (!parse_range(!strncmp(rhs, "pow2:", 5) ? rhs + 5 : rhs, &r))
			return fail(
			    err,
			    N_("--vary %s: '%s' is not a range of whole numbers (e.g. 1..8, "
			       "pow2:1..64)"),
			    arg, rhs);
		bool pow2 = !strncmp(rhs, "pow2:", 5);
		for (long long x = r.lo; x <= r.hi; x = pow2 ? x * 2 : x + r.step) {
			if (v->nvalues >= sp->max_values)
				break;
			char b[32];
			snprintf(b, sizeof b, "%lld", x);
			add_value(v, b, strlen(b));
		}
		if (v->nvalues >= sp->max_values && (pow2 ? r.hi / 2 >= r.lo : r.hi > r.lo))
			goto too_many;
		return 0;
	}
	for (const char *p = rhs;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n == 0)
			return fail(err,
			            N_("--vary %s: empty value in '%s' (values are v1,v2,...)"),
			            arg, rhs);
		for (int k = 0; k < v->nvalues; k++)
			if (strlen(v->values[k]) == n && !strncmp(v->values[k], p, n))
				return fail(err, N_("--vary %s: value listed twice in '%s'"), arg,
				            rhs);
		if (v->nvalues >= sp->max_values)
			goto too_many;
		add_value(v, p, n);
		if (!c)
			break;
		p = c + 1;
	}
	return 0;
too_many:
	return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
	                   "--vary %s: more than %d values (--max-values N raises the limit)", arg,
	                   sp->max_values);
}

int sweep_var_parse(sweep_spec *sp, const char *arg, bool search, gw_fail *err)
{
	const char *opt = search ? "--search" : "--vary";
	const char *eq = strchr(arg, '=');
	if (!eq || !valid_name(arg, (size_t)(eq - arg))) {
		return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
		                   "%s %s: expected NAME=VALUES with NAME a word like workers", opt,
		                   arg);
	}
	char name[SWEEP_NAME_MAX];
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	const char *rhs = eq + 1;
	if (!*rhs) {
		return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
		                   "%s %s: empty list of values (e.g. %s=1,2,4)", opt, arg, name);
	}
	if (sweep_var_index(sp, name) >= 0) {
		return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
		                   "%s %s: variable '%s' given twice", opt, arg, name);
	}
	if (sp->nvars >= SWEEP_MAX_VARS) {
		return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
		                   "%s %s: at most %d variables", opt, arg, SWEEP_MAX_VARS);
	}
	if (search)
		for (int i = 0; i < sp->nvars; i++)
			if (sp->vars[i].search) {
				return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
				                   "--search %s: only one variable can be searched",
				                   arg);
			}
	sweep_var *v = &sp->vars[sp->nvars];
	memset(v, 0, sizeof *v);
	snprintf(v->name, sizeof v->name, "%s", name);
	int rc = search ? parse_search(v, arg, rhs, err) : parse_list(sp, v, arg, rhs, err);
	if (rc) {
		for (int k = 0; k < v->nvalues; k++)
			free(v->values[k]);
		free(v->values);
		memset(v, 0, sizeof *v);
		return rc;
	}
	sp->nvars++;
	return 0;
}

typedef struct {
	const sweep_spec *sp;
	bool used[SWEEP_MAX_VARS];
	char bad[SWEEP_NAME_MAX + 8];
} check_ctx;

static int check_one(const char *name, size_t len, void *arg)
{
	check_ctx *cx = arg;
	for (int i = 0; i < cx->sp->nvars; i++)
		if (strlen(cx->sp->vars[i].name) == len &&
		    !strncmp(cx->sp->vars[i].name, name, len)) {
			cx->used[i] = true;
			return 0;
		}
	snprintf(cx->bad, sizeof cx->bad, "%.*s",
	         (int)(len < SWEEP_NAME_MAX ? len : SWEEP_NAME_MAX), name);
	return -1;
}

static bool batch_like(const char *n)
{
	return !strcmp(n, "batch") || !strcmp(n, "batch_size") || !strcmp(n, "bs") ||
	       !strcmp(n, "batchsize");
}

int sweep_spec_check(sweep_spec *sp, gw_fail *err)
{
	if (sp->nvars == 0) {
		return gw_fail_set(
		    err, GW_EXIT_USAGE, "sweep", spec_hint,
		    "nothing to sweep (give --vary NAME=V1,V2 or --search NAME=RANGE)");
	}
	if (sp->ncmd == 0) {
		return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
		                   "no command given (gpuwhy sweep ... -- CMD {name} ...)");
	}
	check_ctx cx = {.sp = sp};
	for (int i = 0; i < sp->ncmd + sp->nenv; i++) {
		const char *t = i < sp->ncmd ? sp->cmd[i] : strchr(sp->env[i - sp->ncmd], '=') + 1;
		if (sweep_placeholders(t, check_one, &cx) != 0) {
			return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
			                   "unknown placeholder {%s} in '%s' (variables come from "
			                   "--vary/--search; "
			                   "{{ and }} are literal braces)",
			                   cx.bad, t);
		}
	}
	for (int i = 0; i < sp->nvars; i++)
		if (!cx.used[i]) {
			return gw_fail_set(
			    err, GW_EXIT_USAGE, "sweep", spec_hint,
			    "variable '%s' is used nowhere (put {%s} in the command or an "
			    "--env)",
			    sp->vars[i].name, sp->vars[i].name);
		}
	if (sp->batch_var) {
		if (sweep_var_index(sp, sp->batch_var) < 0) {
			return gw_fail_set(err, GW_EXIT_USAGE, "sweep", spec_hint,
			                   "--batch-var %s: no such variable", sp->batch_var);
		}
	} else {
		for (int i = 0; i < sp->nvars; i++)
			if (batch_like(sp->vars[i].name))
				sp->batch_var = sp->vars[i].name;
	}
	return 0;
}

/* A file name from a configuration name: safe characters kept, a hash when any was changed. */
static void file_name(const char *name, char *out, size_t len)
{
	size_t k = 0;
	bool changed = false;
	uint32_t h = gw_fnv1a32(name, GW_FNV32_BASIS);
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		bool ok = isalnum(ch) || ch == '=' || ch == ',' || ch == '.' || ch == '-' ||
		          ch == '_' || ch == '+';
		if (k + 10 < len)
			out[k++] = ok ? (char)ch : '_';
		else
			ok = false; /* cut short: the hash tells long names apart */
		changed |= !ok;
	}
	out[k] = '\0';
	if (changed)
		snprintf(out + k, len - k, "~%06x", h & 0xffffffu);
}

void sweep_config_name(const sweep_spec *sp, sweep_config *c)
{
	size_t k = 0;
	c->name[0] = '\0';
	for (int i = 0; i < sp->nvars && k < sizeof c->name; i++)
		k += (size_t)snprintf(c->name + k, sizeof c->name - k, "%s%s=%s", i ? "," : "",
		                      sp->vars[i].name, c->val[i]);
	file_name(c->name, c->file, sizeof c->file);
}

static sweep_config *plan_push(sweep_plan *pl)
{
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 16;
		pl->c = gw_xrealloc(pl->c, (size_t)pl->cap * sizeof *pl->c);
	}
	sweep_config *c = &pl->c[pl->n++];
	memset(c, 0, sizeof *c);
	return c;
}

static void baseline_vals(const sweep_spec *sp, sweep_config *c)
{
	for (int i = 0; i < sp->nvars; i++)
		c->val[i] = sp->vars[i].values[0];
	c->varied = -1;
}

int sweep_plan_add(sweep_plan *pl, const sweep_spec *sp, int v, const char *value)
{
	sweep_config tmp;
	baseline_vals(sp, &tmp);
	tmp.val[v] = value;
	for (int i = 0; i < pl->n; i++) {
		bool same = true;
		for (int k = 0; k < sp->nvars && same; k++)
			same = !strcmp(pl->c[i].val[k], tmp.val[k]);
		if (same)
			return i;
	}
	if (pl->nowned == pl->owned_cap) {
		pl->owned_cap = pl->owned_cap ? pl->owned_cap * 2 : 16;
		pl->owned = gw_xrealloc(pl->owned, (size_t)pl->owned_cap * sizeof *pl->owned);
	}
	char *own = gw_xstrdup(value);
	pl->owned[pl->nowned++] = own;
	sweep_config *c = plan_push(pl);
	baseline_vals(sp, c);
	c->val[v] = own;
	c->varied = v;
	sweep_config_name(sp, c);
	return pl->n - 1;
}

static void plan_grid(const sweep_spec *sp, sweep_plan *pl)
{
	int idx[SWEEP_MAX_VARS] = {0};
	for (;;) {
		sweep_config *c = plan_push(pl);
		int changed = -1, nchanged = 0;
		for (int i = 0; i < sp->nvars; i++) {
			c->val[i] = sp->vars[i].values[sp->vars[i].search ? 0 : idx[i]];
			if (idx[i]) {
				changed = i;
				nchanged++;
			}
		}
		/* A grid point off the baseline in one variable is also that variable's curve. */
		c->varied = nchanged == 1 ? changed : (nchanged == 0 ? -1 : -2);
		sweep_config_name(sp, c);
		int i = sp->nvars - 1;
		for (; i >= 0; i--) {
			if (sp->vars[i].search)
				continue;
			if (++idx[i] < sp->vars[i].nvalues)
				break;
			idx[i] = 0;
		}
		if (i < 0)
			return;
	}
}

static void plan_one_at_a_time(const sweep_spec *sp, sweep_plan *pl);

int sweep_plan_build(const sweep_spec *sp, sweep_plan *pl, gw_fail *err)
{
	memset(pl, 0, sizeof *pl);
	long long runs = 1;
	if (sp->grid) {
		for (int i = 0; i < sp->nvars; i++)
			runs *= sp->vars[i].search ? 1 : sp->vars[i].nvalues;
	} else {
		for (int i = 0; i < sp->nvars; i++)
			runs += sp->vars[i].search ? 0 : sp->vars[i].nvalues - 1;
	}
	runs *= sp->repeat;
	if (runs > sp->max_runs) {
		return gw_fail_set(
		    err, GW_EXIT_USAGE, "sweep", plan_hint,
		    "%lld runs planned, more than %d (--max-runs N raises the limit)", runs,
		    sp->max_runs);
	}
	if (sp->grid)
		plan_grid(sp, pl);
	else
		plan_one_at_a_time(sp, pl);
	/* Names key the state file and the recordings: they must stay apart. */
	for (int i = 0; i < pl->n; i++)
		for (int k = 0; k < i; k++)
			if (!strcmp(pl->c[i].name, pl->c[k].name) ||
			    !strcmp(pl->c[i].file, pl->c[k].file)) {
				int rc = gw_fail_set(
				    err, GW_EXIT_USAGE, "sweep", plan_hint,
				    "values too long to tell configurations apart (%.60s...)",
				    pl->c[i].name);
				sweep_plan_free(pl);
				return rc;
			}
	return 0;
}

static void plan_one_at_a_time(const sweep_spec *sp, sweep_plan *pl)
{
	sweep_config *b = plan_push(pl);
	baseline_vals(sp, b);
	sweep_config_name(sp, b);
	for (int v = 0; v < sp->nvars; v++) {
		if (sp->vars[v].search)
			continue;
		for (int k = 1; k < sp->vars[v].nvalues; k++) {
			sweep_config *c = plan_push(pl);
			baseline_vals(sp, c);
			c->val[v] = sp->vars[v].values[k];
			c->varied = v;
			sweep_config_name(sp, c);
		}
	}
}

void sweep_plan_free(sweep_plan *pl)
{
	for (int i = 0; i < pl->nowned; i++)
		free(pl->owned[i]);
	free(pl->owned);
	free(pl->c);
	memset(pl, 0, sizeof *pl);
}
