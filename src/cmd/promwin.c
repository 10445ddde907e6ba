/* promwin.c - report's and compare's options for a window of Prometheus (see promwin.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/promwin.h"
#include "util/err.h"
#include "util/i18n.h"

void cmd_promwin_init(cmd_promwin *a)
{
	*a = (cmd_promwin){.gpu = -1, .retries = 2};
}

static int conn_rows(cmd_promwin *a, opt_def *r, int n)
{
	r[n++] = (opt_def)OPT_GROUP(N_("A window of a cluster's Prometheus instead of a recording "
	                               "(docs/fleet.md):"));
	r[n++] = (opt_def)OPT_STRING(0, "prometheus", "URL", &a->url,
	                             "the Prometheus (or Thanos, Mimir, VictoriaMetrics) base URL "
	                             "holding dcgm-exporter's series");
	r[n++] = (opt_def)OPT_DURATION(0, "timeout", "DURATION", &a->timeout_ms, 1000000,
	                               "per Prometheus request (default 30s)", .min = 0.1,
	                               .max = 3600, .why = N_("invalid timeout '%s'"),
	                               .hint = N_("e.g. --timeout 30s"));
	r[n++] = (opt_def)OPT_INT(0, "retries", "N", &a->retries, 0, 10,
	                          "tries again after a connection failure, timeout or 5xx "
	                          "(default 2)",
	                          .why = N_("bad value '%s'"), .hint = N_("a number from 0 to 10"));
	r[n++] = (opt_def)OPT_STRING(0, "bearer-token-file", "FILE", &a->bearer,
	                             "send the token in FILE as Authorization: Bearer");
	r[n++] = (opt_def)OPT_STRING(0, "cacert", "FILE", &a->cacert,
	                             "CA bundle to verify an https Prometheus");
	return n;
}

int cmd_promwin_rows(cmd_promwin *a, bool report, opt_def *r, int n)
{
	n = conn_rows(a, r, n);
	if (!report) {
		r[n++] = (opt_def)OPT_LIST(0, "job", "ID", &a->jobs,
		                           "a job's window, given twice: base then candidate "
		                           "(the same as the sides job=ID job=ID)");
		return n;
	}
	r[n++] = (opt_def)OPT_STRING(0, "node", "NODE", &a->node,
	                             "the node (its Hostname, hostname or instance label)");
	r[n++] = (opt_def)OPT_INT(0, "gpu", "I", &a->gpu, 0, 999999,
	                          "only this GPU of the node (its gpu label; default all)",
	                          .why = N_("bad GPU index '%s'"), .hint = N_("e.g. --gpu 2"));
	r[n++] = (opt_def)OPT_STRING(0, "job", "ID", &a->job,
	                             "the job's GPUs and time: Slurm's (sacct, scontrol), else "
	                             "dcgm-exporter's hpc_job label");
	r[n++] = (opt_def)OPT_STRING(0, "from", "TIME", &a->from,
	                             "start: epoch seconds or 2026-01-02T03:04:05Z");
	r[n++] =
	    (opt_def)OPT_STRING(0, "to", "TIME", &a->to, "end (default now, or the job's end)");
	r[n++] = (opt_def)OPT_DURATION(0, "since", "DURATION", &a->since_ms, 1000000,
	                               "the last DURATION before --to", .min = 1, .max = 3.2e7,
	                               .why = N_("invalid duration '%s'"),
	                               .hint = N_("e.g. --since 6h"));
	r[n++] = (opt_def)OPT_DURATION(0, "step", "DURATION", &a->step_ms, 1000000,
	                               "resolution (default: about 2,000 samples, at least 15s)",
	                               .min = 1, .max = 86400, .why = N_("invalid step '%s'"),
	                               .hint = N_("from 1s to 1d, e.g. --step 15s"));
	return n;
}

const char *cmd_promwin_needs_url(const cmd_promwin *a)
{
	if (a->url)
		return NULL;
	return a->node       ? "--node"
	       : a->gpu >= 0 ? "--gpu"
	       : a->job      ? "--job"
	       : a->jobs.n   ? "--job"
	       : a->from     ? "--from"
	       : a->to       ? "--to"
	       : a->since_ms ? "--since"
	       : a->step_ms  ? "--step"
	                     : NULL;
}

static int bad_time(const char *opt, const char *v)
{
	return gw_error(GW_EXIT_USAGE, opt, N_("epoch seconds or 2026-01-02T03:04:05Z"),
	                "invalid time '%s'", v);
}

int cmd_promwin_spec(const cmd_promwin *a, fleet_window_spec *s)
{
	fleet_window_spec_init(s);
	if (a->node)
		snprintf(s->node, sizeof s->node, "%s", a->node);
	if (a->job)
		snprintf(s->job, sizeof s->job, "%s", a->job);
	s->gpu = a->gpu;
	if (a->from && !fleet_parse_time(a->from, &s->from))
		return bad_time("--from", a->from);
	if (a->to && !fleet_parse_time(a->to, &s->to))
		return bad_time("--to", a->to);
	s->since = (double)a->since_ms / 1000.0;
	s->step = (double)a->step_ms / 1000.0;
	const char *why;
	if (!fleet_window_check(s, &why))
		return gw_error(
		    GW_EXIT_USAGE, "report",
		    N_("--node N [--gpu I] or --job ID, with --since D or --from T --to T"), "%s",
		    _(why));
	return 0;
}

int cmd_promwin_parse_side(const char *arg, fleet_window_spec *s)
{
	char what[300];
	const char *why;
	if (!fleet_window_spec_parse(arg, s, what, sizeof what, &why) ||
	    !fleet_window_check(s, &why))
		return gw_error(
		    GW_EXIT_USAGE, what,
		    N_("a window is job=ID, or node=N[,gpu=I] with from=T,to=T or since=D"), "%s",
		    _(why));
	return 0;
}

int cmd_promwin_load(const cmd_promwin *a, const fleet_window_spec *s, timeline **tl,
                     diag_meta *meta, char *source, size_t len)
{
	prom_conn c = {.url = a->url,
	               .bearer_file = a->bearer,
	               .cacert = a->cacert,
	               .timeout_s = a->timeout_ms ? (double)a->timeout_ms / 1000.0 : 30,
	               .retries = a->retries};
	gw_fail err = {0};
	if (fleet_window_load(&c, s, tl, meta, &err))
		return gw_fail_print(&err);
	fleet_window_describe(s, *tl, a->url, source, len);
	return 0;
}

void cmd_promwin_free(cmd_promwin *a)
{
	opt_list_free(&a->jobs);
}
