/*
 * fleet_render.c - the fleet report as text for people and JSON for scripts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fleet/fleet.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/termsafe.h"

static void iso(double t, char *out, size_t len)
{
	time_t s = (time_t)floor(t);
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void text_hours(const fleet_report *r, FILE *out)
{
	double all = 0;
	for (int s = 0; s < FS__COUNT; s++)
		all += r->total.h[s];
	fprintf(out, "%s\n", _("GPU-hours by state, fleet-wide:"));
	for (int s = 0; s < FS__COUNT; s++)
		fprintf(out, "  %-28s %9.1f  %5.1f %%\n", _(fleet_state_label((fleet_state)s)),
		        r->total.h[s], all > 0 ? 100 * r->total.h[s] / all : 0.0);
	if (r->total.nodata_h > 0)
		fprintf(out, "  %-28s %9.1f\n", _(fleet_state_label(FS_NODATA)), r->total.nodata_h);
}

static void text_groups(const fleet_opts *o, const fleet_report *r, FILE *out)
{
	fprintf(out, "\n");
	fprintf(out, _("By %s, most GPU-hours not busy first:\n"), fleet_by_id(o->by));
	fprintf(out, "  %-24s", "");
	for (int s = 0; s < FS__COUNT; s++)
		fprintf(out, " %12.12s", fleet_state_id((fleet_state)s));
	fprintf(out, " %12s\n", _("not busy"));
	for (int i = 0; i < r->ngroups; i++) {
		const fleet_group *g = &r->group[i];
		char name[64];
		gw_term_safe(g->name, name, sizeof name);
		fprintf(out, "  %-24s", name);
		for (int s = 0; s < FS__COUNT; s++)
			fprintf(out, " %12.1f", g->hours.h[s]);
		fprintf(out, " %12.1f\n", fleet_hours_lost(&g->hours));
	}
}

static void gpu_list(const prom_node *nd, uint64_t mask, char *out, size_t len)
{
	out[0] = 0;
	for (int g = 0; g < nd->tl->ngpu; g++)
		if (mask >> g & 1) {
			size_t l = strlen(out);
			snprintf(out + l, len - l, "%s%d", l ? "," : "", nd->gpus[g].gpu);
		}
}

static void text_findings(const prom_fleet *fl, const fleet_report *r, FILE *out)
{
	fprintf(out, "\n%s\n", _("Findings, most GPU-hours lost first:"));
	if (!r->nf)
		fprintf(out, "  %s\n", _("none"));
	for (int i = 0; i < r->nf; i++) {
		const fleet_finding *x = &r->f[i];
		const prom_node *nd = &fl->node[x->node];
		char gpus[200], a[32], b[32], host[128], job[160], title[480];
		gpu_list(nd, x->gpus, gpus, sizeof gpus);
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		gw_term_safe(nd->host, host, sizeof host);
		gw_term_safe(x->job, job, sizeof job);
		gw_term_safe(x->title, title, sizeof title);
		fprintf(out, _("%2d. %s GPU %s%s%s: %s [%s] %.1f GPU-h lost, %s .. %s\n"), i + 1,
		        host, gpus, job[0] ? _(", job ") : "", job, diag_rule_id(x->rule),
		        diag_severity_name(x->severity), x->lost_h, a, b);
		fprintf(out, "    %s\n", title);
		if (isfinite(x->power_w) && isfinite(x->limit_w)) {
			fprintf(out, "    ");
			fprintf(out, _("power %.0f W against its %.0f W limit (%.0f %%)\n"),
			        x->power_w, x->limit_w, 100 * x->power_w / x->limit_w);
		}
		fprintf(out, _("    PromQL: %s  (%s .. %s, step %gs)\n"), x->promql, a, b,
		        fl->step);
		for (int k = 0; k < x->nhost_promql; k++)
			fprintf(out, _("    PromQL (node_exporter): %s\n"), x->host_promql[k]);
	}
}

/* What gpuwhy exporters found themselves, where Prometheus has their gpuwhy_finding series. */
static void text_own(const prom_fleet *fl, FILE *out)
{
	if (!fl->nown)
		return;
	fprintf(out, "\n%s\n", _("Found by gpuwhy exporter itself (gpuwhy_finding):"));
	for (int i = 0; i < fl->nown; i++) {
		const prom_own_finding *x = &fl->own[i];
		char a[32], b[32], host[128], rule[64], sev[32];
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		gw_term_safe(fl->node[x->node].host, host, sizeof host);
		gw_term_safe(x->rule, rule, sizeof rule);
		gw_term_safe(x->severity, sev, sizeof sev);
		fprintf(out, _("  %s GPU %d: %s [%s] %s .. %s, %d samples\n"), host, x->gpu, rule,
		        sev, a, b, x->samples);
	}
}

void fleet_render_text(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out)
{
	char a[32], b[32];
	iso(fl->from, a, sizeof a);
	iso(fl->to, b, sizeof b);
	fprintf(out, _("gpuwhy fleet: %d nodes, %d GPUs, %s .. %s (%.1f h) at %g s\n\n"),
	        fl->nnodes, r->ngpus, a, b, (fl->to - fl->from) / 3600, fl->step);
	text_hours(r, out);
	text_groups(o, r, out);
	text_findings(fl, r, out);
	text_own(fl, out);
	bool head = false;
	for (int m = 0; m < PF__COUNT; m++)
		if (!fl->have[m]) {
			if (!head)
				fprintf(out, "\n%s\n",
				        _("Not in Prometheus (the rules that need them were not "
				          "checked):"));
			head = true;
			fprintf(out, "  %s\n", fl->expr[m]);
		}
	const char *hn[PROM_HOST_QUERIES], *hw[PROM_HOST_QUERIES];
	int nh = fleet_host_absent(fl, hn, hw, PROM_HOST_QUERIES);
	for (int i = 0; i < nh; i++) {
		if (!i)
			fprintf(out, "\n%s\n",
			        _("node_exporter series not in Prometheus (not checked):"));
		fprintf(out, "  %s: %s\n", hn[i], _(hw[i]));
	}
	for (int i = 0; i < r->nnot_checked; i++)
		fprintf(out, "%s%s\n", i ? "  " : "\n", r->not_checked[i]);
	if (r->not_checked_more) {
		fprintf(out, "  ");
		fprintf(out,
		        P_("... and %d more such note (another node or rule), left out.\n",
		           "... and %d more such notes (other nodes or rules), left out.\n",
		           r->not_checked_more),
		        r->not_checked_more);
	}
	if (fl->gpus_dropped) {
		fprintf(out, "\n");
		fprintf(out, _("%d GPUs beyond %d on one node were left out.\n"), fl->gpus_dropped,
		        GPU_MAX);
	}
}

static void json_hours(jsonw *w, const fleet_hours *h)
{
	jsonw_obj_begin(w);
	for (int s = 0; s < FS__COUNT; s++) {
		jsonw_key(w, fleet_state_id((fleet_state)s));
		jsonw_num(w, h->h[s]);
	}
	jsonw_key(w, "no-data");
	jsonw_num(w, h->nodata_h);
	jsonw_key(w, "not-busy");
	jsonw_num(w, fleet_hours_lost(h));
	jsonw_obj_end(w);
}

static void json_finding(jsonw *w, const prom_fleet *fl, const fleet_finding *x)
{
	const prom_node *nd = &fl->node[x->node];
	char a[32], b[32];
	iso(x->t0, a, sizeof a);
	iso(x->t1, b, sizeof b);
	jsonw_obj_begin(w);
	jsonw_key(w, "node");
	jsonw_str(w, nd->host);
	jsonw_key(w, "gpus");
	jsonw_arr_begin(w);
	for (int g = 0; g < nd->tl->ngpu; g++)
		if (x->gpus >> g & 1)
			jsonw_int(w, nd->gpus[g].gpu);
	jsonw_arr_end(w);
	jsonw_key(w, "uuids");
	jsonw_arr_begin(w);
	for (int g = 0; g < nd->tl->ngpu; g++)
		if (x->gpus >> g & 1)
			jsonw_str(w, nd->gpus[g].uuid);
	jsonw_arr_end(w);
	jsonw_key(w, "job");
	jsonw_str(w, x->job[0] ? x->job : NULL);
	jsonw_key(w, "rule");
	jsonw_str(w, diag_rule_id(x->rule));
	jsonw_key(w, "severity");
	jsonw_str(w, diag_severity_name(x->severity));
	jsonw_key(w, "from");
	jsonw_str(w, a);
	jsonw_key(w, "to");
	jsonw_str(w, b);
	jsonw_key(w, "from_epoch");
	jsonw_num(w, x->t0);
	jsonw_key(w, "to_epoch");
	jsonw_num(w, x->t1);
	jsonw_key(w, "gpu_hours_lost");
	jsonw_num(w, x->lost_h);
	jsonw_key(w, "title");
	jsonw_str(w, x->title);
	jsonw_key(w, "promql");
	jsonw_str(w, x->promql);
	jsonw_key(w, "host_promql");
	jsonw_arr_begin(w);
	for (int k = 0; k < x->nhost_promql; k++)
		jsonw_str(w, x->host_promql[k]);
	jsonw_arr_end(w);
	jsonw_key(w, "host_held"); /* the host metrics whose condition held */
	jsonw_arr_begin(w);
	for (int q = 0; q < PROM_HOST_QUERIES; q++)
		if (x->host_met >> q & 1 && (!q || prom_host_metric(q) != prom_host_metric(q - 1)))
			jsonw_str(w, host_metrics[prom_host_metric(q)].key);
	jsonw_arr_end(w);
	if (isfinite(x->power_w)) {
		jsonw_key(w, "power_w");
		jsonw_num(w, x->power_w);
	}
	if (isfinite(x->limit_w)) {
		jsonw_key(w, "power_limit_w");
		jsonw_num(w, x->limit_w);
	}
	jsonw_key(w, "step");
	jsonw_num(w, fl->step);
	jsonw_obj_end(w);
}

static void json_own(jsonw *w, const prom_fleet *fl)
{
	jsonw_arr_begin(w);
	for (int i = 0; i < fl->nown; i++) {
		const prom_own_finding *x = &fl->own[i];
		char a[32], b[32];
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		jsonw_obj_begin(w);
		jsonw_key(w, "node");
		jsonw_str(w, fl->node[x->node].host);
		jsonw_key(w, "gpu");
		jsonw_int(w, x->gpu);
		jsonw_key(w, "rule");
		jsonw_str(w, x->rule);
		jsonw_key(w, "severity");
		jsonw_str(w, x->severity);
		jsonw_key(w, "from");
		jsonw_str(w, a);
		jsonw_key(w, "to");
		jsonw_str(w, b);
		jsonw_key(w, "from_epoch");
		jsonw_num(w, x->t0);
		jsonw_key(w, "to_epoch");
		jsonw_num(w, x->t1);
		jsonw_key(w, "samples");
		jsonw_int(w, x->samples);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

void fleet_render_json(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out)
{
	jsonw w;
	jsonw_init(&w, out, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "from");
	jsonw_num(&w, fl->from);
	jsonw_key(&w, "to");
	jsonw_num(&w, fl->to);
	jsonw_key(&w, "step");
	jsonw_num(&w, fl->step);
	jsonw_key(&w, "nodes");
	jsonw_int(&w, fl->nnodes);
	jsonw_key(&w, "gpus");
	jsonw_int(&w, r->ngpus);
	jsonw_key(&w, "queries");
	jsonw_obj_begin(&w);
	for (int m = 0; m < PF__COUNT; m++) {
		jsonw_key(&w, prom_fleet_metric_name((prom_fleet_metric)m));
		jsonw_obj_begin(&w);
		jsonw_key(&w, "promql");
		jsonw_str(&w, fl->expr[m]);
		jsonw_key(&w, "present");
		jsonw_bool(&w, fl->have[m]);
		jsonw_obj_end(&w);
	}
	/* node_exporter's series, each once (the CPU's first query cited), fleet-wide */
	for (int q = 0; q < PROM_HOST_QUERIES; q++) {
		const char *name = prom_host_series(q);
		if (q && !strcmp(name, prom_host_series(q - 1)))
			continue;
		bool have = false;
		for (int p = q; p < PROM_HOST_QUERIES && !strcmp(prom_host_series(p), name); p++)
			have |= fl->have_host[p];
		char e[600];
		prom_host_expr(q, "", prom_host_range(fl->step), e, sizeof e);
		jsonw_key(&w, name);
		jsonw_obj_begin(&w);
		jsonw_key(&w, "promql");
		jsonw_str(&w, e);
		jsonw_key(&w, "present");
		jsonw_bool(&w, have);
		jsonw_obj_end(&w);
	}
	jsonw_obj_end(&w);
	jsonw_key(&w, "hours");
	json_hours(&w, &r->total);
	jsonw_key(&w, "by");
	jsonw_str(&w, fleet_by_id(o->by));
	jsonw_key(&w, "groups");
	jsonw_arr_begin(&w);
	for (int i = 0; i < r->ngroups; i++) {
		jsonw_obj_begin(&w);
		jsonw_key(&w, "name");
		jsonw_str(&w, r->group[i].name);
		jsonw_key(&w, "hours");
		json_hours(&w, &r->group[i].hours);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_key(&w, "findings");
	jsonw_arr_begin(&w);
	for (int i = 0; i < r->nf; i++)
		json_finding(&w, fl, &r->f[i]);
	jsonw_arr_end(&w);
	jsonw_key(&w, "exporter_findings");
	json_own(&w, fl);
	jsonw_key(&w, "not_checked");
	jsonw_arr_begin(&w);
	for (int i = 0; i < r->nnot_checked; i++)
		jsonw_str(&w, r->not_checked[i]);
	jsonw_arr_end(&w);
	jsonw_key(&w, "not_checked_more");
	jsonw_int(&w, r->not_checked_more);
	jsonw_obj_end(&w);
	fputc('\n', out);
}

/* RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
static void csv_str(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_group(FILE *out, const char *by, const char *name, const fleet_hours *h)
{
	double all = h->nodata_h;
	for (int s = 0; s < FS__COUNT; s++)
		all += h->h[s];
	for (int s = 0; s <= FS__COUNT; s++) {
		double v = s == FS_NODATA ? h->nodata_h : h->h[s];
		csv_str(out, by);
		fputc(',', out);
		csv_str(out, name);
		fprintf(out, ",%s,%.4f,%.6f\n", fleet_state_id((fleet_state)s), v,
		        all > 0 ? v / all : 0.0);
	}
}

static void csv_states(const fleet_opts *o, const fleet_report *r, FILE *out)
{
	fputs("group_by,group,state,gpu_hours,share\n", out);
	csv_group(out, "fleet", "all", &r->total);
	for (int i = 0; i < r->ngroups; i++)
		csv_group(out, fleet_by_id(o->by), r->group[i].name, &r->group[i].hours);
}

/* A number, or an empty field when it is not known. */
static void csv_num(FILE *out, double v, const char *fmt)
{
	fputc(',', out);
	if (isfinite(v))
		fprintf(out, fmt, v);
}

/* Every field a script needs without parsing a title: the GPUs as their gpu labels joined by
 * ';' (no CSV quoting needed), the node_exporter queries in columns of their own. */
static void csv_findings(const prom_fleet *fl, const fleet_report *r, FILE *out)
{
	fputs("rank,node,gpus,job,rule,severity,from,to,from_epoch,to_epoch,step,gpu_hours_lost,"
	      "power_w,power_limit_w,title,promql",
	      out);
	for (int k = 0; k < FLEET_HOST_PROMQL; k++)
		fprintf(out, ",host_promql_%d", k + 1);
	fputc('\n', out);
	for (int i = 0; i < r->nf; i++) {
		const fleet_finding *x = &r->f[i];
		const prom_node *nd = &fl->node[x->node];
		char gpus[200], a[32], b[32];
		gpu_list(nd, x->gpus, gpus, sizeof gpus);
		for (char *p = gpus; *p; p++)
			if (*p == ',')
				*p = ';';
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		fprintf(out, "%d,", i + 1);
		csv_str(out, nd->host);
		fprintf(out, ",%s,", gpus);
		csv_str(out, x->job);
		fprintf(out, ",%s,%s,%s,%s,%.0f,%.0f,%g,%.4f", diag_rule_id(x->rule),
		        diag_severity_name(x->severity), a, b, x->t0, x->t1, fl->step, x->lost_h);
		csv_num(out, x->power_w, "%.1f");
		csv_num(out, x->limit_w, "%.1f");
		fputc(',', out);
		csv_str(out, x->title);
		fputc(',', out);
		csv_str(out, x->promql);
		for (int k = 0; k < FLEET_HOST_PROMQL; k++) {
			fputc(',', out);
			if (k < x->nhost_promql)
				csv_str(out, x->host_promql[k]);
		}
		fputc('\n', out);
	}
}

static void csv_exporter(const prom_fleet *fl, FILE *out)
{
	fputs("node,gpu,rule,severity,from,to,from_epoch,to_epoch,samples\n", out);
	for (int i = 0; i < fl->nown; i++) {
		const prom_own_finding *x = &fl->own[i];
		char a[32], b[32];
		iso(x->t0, a, sizeof a);
		iso(x->t1, b, sizeof b);
		csv_str(out, fl->node[x->node].host);
		fprintf(out, ",%d,", x->gpu);
		csv_str(out, x->rule);
		fputc(',', out);
		csv_str(out, x->severity);
		fprintf(out, ",%s,%s,%.0f,%.0f,%d\n", a, b, x->t0, x->t1, x->samples);
	}
}

void fleet_render_csv(const prom_fleet *fl, const fleet_opts *o, const fleet_report *r, FILE *out)
{
	switch (o->csv) {
	case FLEET_CSV_STATES:
		csv_states(o, r, out);
		break;
	case FLEET_CSV_FINDINGS:
		csv_findings(fl, r, out);
		break;
	case FLEET_CSV_EXPORTER:
		csv_exporter(fl, out);
		break;
	}
}
