/*
 * top.c - `gpuwhy top`: the live view. The options are parsed here; the
 * view itself, its loop, signals and stderr capture are top/app.c's.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "top/app.h"
#include "top/input.h"
#include "top/layout.h"
#include "top/model.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"

#define ONCE_INTERVAL_NS 250000000LL /* --once: the rates of its frame cover this */

static void keys_help(FILE *out)
{
	top_keys_print(out);
	fprintf(out, "\n%s\n", _("With --gpus LIST (a global option) only those GPUs are opened."));
}

static int set_sort(const opt_def *d, const char *v, void *ctx)
{
	top_opts *o = ctx;
	o->sort = top_sort_parse(v);
	if (o->sort < 0)
		return gw_error(GW_EXIT_USAGE, "--sort",
		                N_("gpu, pid, user, mem, sm, cpu, rss or cmd"),
		                "unknown sort key '%s'", v);
	return 0;
}

static int parse_opts(int argc, char **argv, top_opts *o)
{
	*o = (top_opts){.sort = TOP_SORT_GPU};
	const opt_def opts[] = {
	    OPT_DURATION('i', "interval", "DUR", &o->interval_ns, 0,
	                 "sampling interval, 100ms to 10s (default 1s)",
	                 .min = TOP_INTERVAL_MIN_NS / 1e9, .max = TOP_INTERVAL_MAX_NS / 1e9,
	                 .why = N_("invalid interval '%s' (100ms to 10s)"),
	                 .hint = N_("e.g. 1s, 500ms, 100ms")),
	    OPT_STRING('o', "output", "FILE", &o->output,
	               "also record what is shown into FILE (.gpuwhy); the interval is then "
	               "fixed"),
	    OPT_FLAG(0, "once", &o->once,
	             "print one frame as plain text and exit (no terminal needed; width from "
	             "$COLUMNS, else 120; its rates cover 250ms unless -i is given)"),
	    OPT_CALL('s', "sort", "KEY", set_sort,
	             "gpu (default), pid, user, mem, sm, cpu, rss or cmd"),
	    OPT_STRING('f', "filter", "TEXT", &o->filter,
	               "show processes whose PID, user or command contains TEXT"),
	    OPT_FLAG('t', "tree", &o->tree, "start with the process tree shown"),
	    OPT_FLAG(0, "ascii", &o->ascii, "ASCII only (automatic when the locale is not UTF-8)"),
	    OPT_FLAG(0, "no-color", &o->no_color, "no colour (also when NO_COLOR is set)"),
	    OPT_FLAG(0, "mouse", &o->mouse, "click to select a process or sort by a column"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "top",
	    .usage = "top [-i DUR] [-o FILE] [--once] [-s KEY] [-f TEXT] [-t]\n"
	             "           [--ascii] [--no-color] [--mouse]",
	    .about =
	        N_("The live view: every GPU's meters (utilization, SM active where the GPU has "
	           "it,\nmemory, power against the limit, temperature, clocks, PCIe link and "
	           "throughput)\nwith a utilization history; every host core as a small bar, "
	           "memory, swap, disk\nand network; the GPU processes (PID, user, GPU, GPU "
	           "memory, SM %, CPU %, RSS,\ncommand) and the tree around one; and on the "
	           "status line what the diagnosis\nrules find in the last minute. Sampling "
	           "runs on its own thread."),
	    .opts = opts,
	    .more = N_("Keys:"),
	    .more_fn = keys_help,
	    .ctx = o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc;
	o->interval_given = o->interval_ns != 0;
	if (!o->interval_given)
		o->interval_ns = 1000000000LL;
	if (o->filter && strlen(o->filter) >= TOP_PROMPT_MAX)
		return gw_error(GW_EXIT_USAGE, "--filter", NULL, "filter longer than %d characters",
		                TOP_PROMPT_MAX - 1);
	return 0;
}

/* ------------------------------------------------------------------ command */

int cmd_top(int argc, char **argv, const gw_global *g)
{
	top_opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	if (!o.once && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return gw_error(GW_EXIT_USAGE, "top", N_("use --once for one frame as text"),
		                "needs a terminal on stdin and stdout");
	if (o.once && !o.interval_given)
		o.interval_ns = ONCE_INTERVAL_NS;
	o.gpus = g->gpus;
	return top_app_run(&o);
}
