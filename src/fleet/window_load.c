/*
 * window_load.c - a window's series read from Prometheus: a node found by
 * whichever label names it (Hostname, hostname, instance), a job by the
 * hpc_job label dcgm-exporter's job mapping sets, and the node timelines
 * joined into the one timeline report and compare read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/window.h"
#include "fleet/window_int.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/xalloc.h"

static const char *const host_labels[] = {"Hostname", "hostname", "instance"};

/* Whether the utilization series under match has any point in the range. */
static int any_series(const prom_conn *c, const char *match, double from, double to, double step,
                      bool *found, gw_fail *err)
{
	char expr[800];
	prom_selector(prom_fleet_metric_name(PF_UTIL), match, expr, sizeof expr);
	prom_matrix m = {0};
	int rc = prom_query_range(c, expr, from, to, step, &m, err);
	*found = rc == 0 && m.n > 0;
	prom_matrix_free(&m);
	return rc;
}

static int no_series(gw_fail *err, const char *who)
{
	return gw_fail_set(err, GW_EXIT_ENV, who,
	                   N_("check the name, the time range and that dcgm-exporter is scraped"),
	                   "no GPU series in that time range");
}

/* The series under match over the range as one timeline; trim: only the samples with data;
 * keep: only the job's GPUs (NULL: all). who names the window in the error when nothing
 * matches. */
static int load_into(const prom_conn *c, const char *match, const char *who, double from, double to,
                     double step, bool trim, const queue_slurm_alloc *keep, timeline **tl,
                     gw_fail *err)
{
	prom_fleet fl;
	prom_fleet_query q = {.from = from, .to = to, .step = step, .match = match};
	int rc = prom_fleet_load(c, &q, &fl, err);
	if (rc == GW_EXIT_ENV && !strcmp(err->why, "no series in that time range"))
		return no_series(err, who);
	if (rc)
		return rc;
	int a = 0, b = fl.n - 1;
	if (trim && !fw_present_span(&fl, &a, &b))
		rc = no_series(err, who);
	else
		*tl = fw_join(&fl, a, b, keep);
	prom_fleet_free(&fl);
	return rc;
}

static int load_node(const prom_conn *c, const fleet_window_spec *s, double from, double to,
                     double step, timeline **tl, gw_fail *err)
{
	char gpus[16] = "", match[900];
	if (s->gpu >= 0)
		snprintf(gpus, sizeof gpus, "%d", s->gpu);
	char who[300];
	if (s->gpu >= 0)
		snprintf(who, sizeof who, "%s GPU %d", s->node, s->gpu);
	else
		snprintf(who, sizeof who, "%s", s->node);
	for (size_t i = 0; i < sizeof host_labels / sizeof *host_labels; i++) {
		fw_node_matcher(host_labels[i], s->node, gpus, match, sizeof match);
		bool found;
		int rc = any_series(c, match, from, to, step, &found, err);
		if (rc)
			return rc;
		if (found)
			return load_into(c, match, who, from, to, step, false, NULL, tl, err);
	}
	return no_series(err, who);
}

/*
 * A job by its hpc_job label. Without a range it is looked for over the last
 * days at a coarse step first, then read at the step its own length gives.
 */
static int load_job_label(const prom_conn *c, const fleet_window_spec *s, double from, double to,
                          double step, timeline **tl, gw_fail *err)
{
	char match[400], who[160];
	fw_job_matcher(s->job, match, sizeof match);
	snprintf(who, sizeof who, "job %s", s->job);
	if (s->from > 0 || s->since > 0 || s->step > 0)
		return load_into(c, match, who, from, to, step, true, NULL, tl, err);
	timeline *first = NULL;
	int rc = load_into(c, match, who, from, to, step, true, NULL, &first, err);
	if (rc)
		return rc;
	fleet_window_spec found = *s;
	/* the coarse samples may lag the job's start and end by one step */
	found.from = first->t0_wall - step;
	found.to = first->t0_wall + first->duration + step;
	found.to = found.to < to ? found.to : to;
	tl_free(first);
	fleet_window_range(&found, to, &from, &to, &step);
	/* on the step's grid, as a scrape interval usually is */
	from = floor(from / step) * step;
	return load_into(c, match, who, from, to, step, true, NULL, tl, err);
}

/*
 * A job Slurm knows: its nodes and GPUs over its time (the spec's from, to
 * or since narrow it), read with one matcher for all its nodes, then only
 * its GPUs kept (a node's other GPUs may be another job's).
 */
static int load_job_slurm(const prom_conn *c, const fleet_window_spec *s,
                          const queue_slurm_alloc *al, double now, timeline **tl, gw_fail *err)
{
	fleet_window_spec w = *s;
	w.to = s->to > 0 ? s->to : al->end > 0 ? al->end : now;
	w.from = s->from > 0 ? s->from : s->since > 0 ? w.to - s->since : al->start;
	w.since = 0;
	double from, to, step;
	fleet_window_range(&w, now, &from, &to, &step);
	if (to < from)
		return gw_fail_set(err, GW_EXIT_USAGE, s->job, N_("give --from and --to"),
		                   "the job has no time range to read");
	/* a job that has just started: at least one step, read back from its start */
	from = floor(from / step) * step;
	to = to < from + step ? from + step : to;
	char gpus[256], match[4096], who[160];
	fw_alloc_gpus(al, gpus, sizeof gpus);
	snprintf(who, sizeof who, "job %s", s->job);
	if (!al->have_idx) {
		/* Slurm no longer says which GPUs (it does only while the job runs):
		 * dcgm-exporter's job label does, where it is set; else every GPU of the job's
		 * nodes is read */
		fw_job_matcher(s->job, match, sizeof match);
		bool found;
		int rc = any_series(c, match, from, to, step, &found, err);
		if (rc || found)
			return rc ? rc
			          : load_into(c, match, who, from, to, step, false, al, tl, err);
	}
	for (size_t i = 0; i < sizeof host_labels / sizeof *host_labels; i++) {
		fw_hosts_matcher(host_labels[i], al, gpus, match, sizeof match);
		bool found;
		int rc = any_series(c, match, from, to, step, &found, err);
		if (rc)
			return rc;
		if (found)
			return load_into(c, match, who, from, to, step, false, al, tl, err);
	}
	return no_series(err, who);
}

/* A job: from Slurm where it knows the job, else from its hpc_job label. */
static int load_job(const prom_conn *c, const fleet_window_spec *s, double from, double to,
                    double step, timeline **tl, gw_fail *err)
{
	queue_slurm_alloc *al = gw_xmalloc(sizeof *al);
	int rc;
	if (fw_slurm_lookup(s->job, al) && al->start > 0) {
		rc = load_job_slurm(c, s, al, (double)time(NULL), tl, err);
		if (rc == 0) {
			tl_meta_set(*tl, "job.from", "slurm");
			if (al->user[0])
				tl_meta_set(*tl, "user", al->user);
		}
	} else {
		rc = load_job_label(c, s, from, to, step, tl, err);
		if (rc == 0)
			tl_meta_set(*tl, "job.from", "hpc_job");
	}
	free(al);
	return rc;
}

int fleet_window_load(const prom_conn *c, const fleet_window_spec *s, timeline **tl,
                      diag_meta *meta, gw_fail *err)
{
	*tl = NULL;
	double from, to, step;
	fleet_window_range(s, (double)time(NULL), &from, &to, &step);
	if ((to - from) / step > 1e6)
		return gw_fail_set(err, GW_EXIT_USAGE, "--step",
		                   N_("a larger --step or a shorter range"),
		                   "more than 1,000,000 samples per GPU");
	int rc = s->node[0] ? load_node(c, s, from, to, step, tl, err)
	                    : load_job(c, s, from, to, step, tl, err);
	if (rc)
		return rc;
	if (s->job[0])
		tl_meta_set(*tl, "job", s->job);
	tl_meta_set(*tl, "source", "prometheus");
	diag_meta_from_timeline(meta, *tl);
	return 0;
}

int fleet_job_scope(const prom_conn *c, const char *job, double now, fleet_job_where *out,
                    gw_fail *err)
{
	*out = (fleet_job_where){0};
	queue_slurm_alloc *al = gw_xmalloc(sizeof *al);
	int rc = 0;
	if (fw_slurm_lookup(job, al) && al->start > 0) {
		out->slurm = true;
		out->from = al->start;
		out->to = al->end > 0 ? al->end : now;
		char gpus[256];
		fw_alloc_gpus(al, gpus, sizeof gpus);
		double step = fmax(60, ceil((out->to - out->from) / 1000));
		bool found = false;
		for (size_t i = 0; !found && i < sizeof host_labels / sizeof *host_labels; i++) {
			fw_hosts_matcher(host_labels[i], al, gpus, out->match, sizeof out->match);
			rc = any_series(c, out->match, out->from, out->to, step, &found, err);
			if (rc)
				break;
		}
		if (!rc && !found) {
			char who[160];
			snprintf(who, sizeof who, "job %s", job);
			rc = no_series(err, who);
		}
	} else {
		fw_job_matcher(job, out->match, sizeof out->match);
	}
	free(al);
	return rc;
}
