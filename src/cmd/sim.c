/*
 * sim.c - `gpuwhy sim`: the simulated GPU's own commands.
 *
 *   list    shipped scenarios           check   validate scenario files
 *   show    what the simulated NVML reports now (or at a pinned time)
 *   reset   restart a scenario's clock  train   a synthetic training job
 *
 * `train` is a real workload on the host (worker processes burning CPU,
 * ranks meeting at a barrier) whose GPU phases are published to the
 * simulated GPU through its state files (sim/sim_state.h), so the GPU is
 * busy exactly when the workload says so.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/sim_serve.h"
#include "gpu/loader.h"
#include "gpu/gpu.h"
#include "sim_scenario.h"
#include "sim_state.h"
#include "train/simgpu.h"
#include "train/train.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/opt.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/timeutil.h"

/* ---- list ---- */

static int sim_list(int argc, char **argv)
{
	bool lng = false;
	const opt_def opts[] = {OPT_FLAG('l', "long", &lng, "with each one's description"),
	                        OPT_END};
	const opt_cmd oc = {.name = "sim list",
	                    .usage = "sim list [-l|--long]",
	                    .about =
	                        N_("Lists the shipped scenarios; -l adds each one's description."),
	                    .opts = opts};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	const char *dir = gpu_scenario_dir();
	if (!dir)
		return gw_error(GW_EXIT_ENV, "scenarios", N_("set GPUWHY_SCENARIOS"),
		                "no scenario directory found");
	DIR *d = opendir(dir);
	if (!d)
		return gw_error(GW_EXIT_ENV, dir, NULL, "cannot open scenario directory");
	char *names[256] = {NULL};
	size_t n = train_sim_scenario_names(d, names, 256);
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		if (!lng) {
			puts(names[i]);
		} else {
			char path[PATH_MAX], err[600];
			sim_scenario *s;
			snprintf(path, sizeof path, "%s/%s.json", dir, names[i]);
			if (sim_scenario_load(path, &s, err, sizeof err) == 0) {
				printf("%-22s %s\n", names[i], s->description);
				sim_scenario_free(s);
			} else {
				printf("%-22s ", names[i]);
				printf(_("(invalid: %s)"), err);
				putchar('\n');
			}
		}
		free(names[i]);
	}
	return GW_EXIT_OK;
}

/* ---- check ---- */

/* Check one file: 0 valid, 1 invalid, 3 unreadable (message printed). */
static int check_file(const char *path)
{
	char err[700];
	sim_scenario *s;
	if (sim_scenario_load(path, &s, err, sizeof err) != 0) {
		FILE *f = fopen(path, "r");
		bool readable = f != NULL;
		if (f)
			fclose(f);
		fprintf(stderr, "gpuwhy: %s\n", err);
		return readable ? GW_EXIT_PROBLEMS : GW_EXIT_ENV;
	}
	printf("%s: ", path);
	printf(P_("ok, %d GPU (%s)", "ok, %d GPUs (%s)", s->n_gpus), s->n_gpus, s->gpus[0].name);
	putchar('\n');
	sim_scenario_free(s);
	return GW_EXIT_OK;
}

static int sim_check(int argc, char **argv)
{
	const opt_def opts[] = {OPT_END};
	const opt_cmd oc = {.name = "sim check",
	                    .usage = "sim check FILE...",
	                    .about =
	                        N_("Parses and validates scenario files. Errors are printed as\n"
	                           "FILE:LINE:COLUMN: PATH: what."),
	                    .opts = opts,
	                    .exit1 = N_("a file is invalid"),
	                    .max_args = -1};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (first >= argc)
		return gw_error(GW_EXIT_USAGE, "sim check", N_("gpuwhy sim check FILE..."),
		                "no scenario file given");
	for (int i = first; i < argc; i++) {
		int one = check_file(argv[i]);
		/* An unreadable file outweighs an invalid one. */
		if (one == GW_EXIT_ENV || (one && rc == GW_EXIT_OK))
			rc = one;
	}
	return rc;
}

/* ---- show ---- */

/* --at SECONDS pins the scenario clock for the simulated library (GPUWHY_SIM_TIME). */
static int show_set_at(const opt_def *o, const char *v, void *ctx)
{
	(void)o, (void)ctx;
	double at;
	if (!gw_parse_double(v, &at) || !isfinite(at) || at < 0 || at > 1e9)
		return gw_error(GW_EXIT_USAGE, "--at", N_("seconds of scenario time, like 30"),
		                "bad value '%s'", v);
	setenv("GPUWHY_SIM_TIME", v, 1);
	return 0;
}

static int sim_show(int argc, char **argv)
{
	int gpu = -1, count = 1;
	int64_t interval = 1000000000LL;
	const opt_def opts[] = {
	    OPT_INT('g', "gpu", "I", &gpu, 0, SIM_MAX_GPUS - 1, "only GPU I",
	            .why = N_("bad value '%s'"), .hint = N_("an index like 0")),
	    OPT_INT('c', "count", "N", &count, 1, 1000000, "N readings (default 1) ...",
	            .why = N_("bad value '%s'"), .hint = N_("a number from 1")),
	    OPT_DURATION('i', "interval", "DUR", &interval, 0, "... this far apart (default 1s)",
	                 .why = N_("bad value '%s'"), .hint = N_("a duration like 250ms")),
	    OPT_CALL('a', "at", "SECONDS", show_set_at,
	             "at this scenario time (pins the clock, GPUWHY_SIM_TIME)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sim show",
	    .usage = "--sim SCENARIO sim show [--gpu I] [--count N] [--interval DUR] "
	             "[--at SECONDS]",
	    .about =
	        N_("Prints what the simulated NVML reports, one line of key=value per GPU:\n"
	           "util, mem_util (%), mem_used_mib, mem_total_mib, power_w, temp_c, sm_mhz,\n"
	           "reasons (clock event bits), pcie (current link), replay (PCIe replays),\n"
	           "procs (pid:MiB of compute processes). A GPU off the bus prints 'lost'."),
	    .opts = opts};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	gpu_ctx *ctx;
	if ((rc = train_sim_open(&ctx, "sim show")))
		return rc;
	int n = gpu_count(ctx);
	if (gpu >= n) {
		gpu_close(ctx);
		return gw_error(GW_EXIT_USAGE, "--gpu", NULL, "GPU %d does not exist (%d GPUs)",
		                gpu, n);
	}
	int64_t next = gw_mono_ns();
	for (int k = 0; k < count; k++) {
		if (k) {
			next += interval;
			gw_sleep_until_ns(next);
		}
		for (int i = 0; i < n; i++)
			if (gpu < 0 || gpu == i)
				train_sim_show_gpu(stdout, ctx, i);
		fflush(stdout);
	}
	gpu_close(ctx);
	return GW_EXIT_OK;
}

/* ---- reset ---- */

static int sim_reset(int argc, char **argv)
{
	const opt_def opts[] = {OPT_END};
	const opt_cmd oc = {
	    .name = "sim reset",
	    .usage = "sim reset [SCENARIO]",
	    .about =
	        N_("Restarts the scenario's clock: its time 0 becomes now for every process\n"
	           "that uses it (a lost GPU is back, episodes start over). Without SCENARIO,\n"
	           "the one given with --sim."),
	    .opts = opts,
	    .max_args = 1};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	char path[PATH_MAX];
	const char *name = first < argc ? argv[first] : NULL;
	if (name) {
		if (gpu_scenario_resolve(name, path, sizeof path) != 0)
			return gw_error(GW_EXIT_USAGE, name,
			                N_("gpuwhy sim list shows the shipped ones"),
			                "no such scenario");
	} else if (train_sim_scenario()) {
		snprintf(path, sizeof path, "%s", train_sim_scenario());
	} else {
		return gw_error(GW_EXIT_USAGE, "sim reset", N_("name one, or use --sim SCENARIO"),
		                "which scenario?");
	}
	char dir[PATH_MAX], err[600];
	if (sim_state_dir(path, dir, sizeof dir, err, sizeof err) != 0 ||
	    sim_clock_reset(dir, err, sizeof err) != 0)
		return gw_error(GW_EXIT_ENV, "sim reset", NULL, "%s", err);
	printf("%s: ", path);
	printf(_("clock restarted (state in %s)"), dir);
	putchar('\n');
	return GW_EXIT_OK;
}

/* ---- train ---- */

static const double train_item_default[3] = {0.1, 0.05, 24};

static int parse_hidden(const char *mode)
{
	if (!strcmp(mode, "pid"))
		return TRAIN_HIDDEN_PID;
	if (!strcmp(mode, "none"))
		return TRAIN_HIDDEN_NONE;
	if (!strcmp(mode, "0") || !strcmp(mode, "no"))
		return TRAIN_SHOWN;
	return -1;
}

/*
 * --batch B: a step's GPU time, its batch's preparation and the memory held
 * grow linearly with B (fixed part + B x per sample), as in a real model,
 * so a batch-size sweep sees throughput rise and memory run out.
 */
static void train_apply_batch(train_opts *o)
{
	if (o->batch <= 0)
		return;
	double b = (double)o->batch;
	o->gpu_ms += b * o->per_item[TRAIN_ITEM_GPU_MS];
	o->cpu_ms += b * o->per_item[TRAIN_ITEM_CPU_MS];
	o->mem_mib += b * o->per_item[TRAIN_ITEM_MEM_MIB];
}

#define TRAIN_SEE N_("see gpuwhy sim train --help")

/* A whole-number option into a long long of train_opts, in the row's [min, max]. */
static int train_set_int(const opt_def *d, const char *v, void *ctx)
{
	(void)ctx;
	long long lo = (long long)d->min, hi = (long long)d->max;
	if (!gw_parse_int(v, lo, hi, d->target)) {
		char what[80];
		snprintf(what, sizeof what, "--%s", d->name);
		return gw_error(GW_EXIT_USAGE, what, TRAIN_SEE,
		                "'%s' is not a whole number from %lld to %lld", v, lo, hi);
	}
	return 0;
}

static int train_set_hidden(const opt_def *d, const char *v, void *ctx)
{
	(void)d;
	train_opts *o = ctx;
	if ((o->hidden = parse_hidden(v ? v : "pid")) < 0)
		return gw_error(GW_EXIT_USAGE, "--hidden", N_("--hidden=pid or --hidden=none"),
		                "unknown mode '%s'", v);
	return 0;
}

#define TRAIN_INT(l, a, t, lo, hi, h)                                                              \
	OPT_CALL(0, l, a, train_set_int, h, .target = (t), .min = (lo), .max = (hi))
#define TRAIN_NUM(l, a, t, hi, h) OPT_DOUBLE(0, l, a, t, 0, hi, h, .hint = TRAIN_SEE)

/* The options that depend on each other, and the defaults that depend on others. */
static int train_check(train_opts *o)
{
	if (o->kernel_us < 1)
		return gw_error(GW_EXIT_USAGE, "--kernel-us", NULL, "must be at least 1");
	if (o->dram_pct > 0 && o->dram_pct < 1)
		return gw_error(GW_EXIT_USAGE, "--dram-pct", N_("a percentage from 1 to 100"),
		                "'%g' is too small", o->dram_pct);
	if (o->straggler >= o->ranks)
		return gw_error(GW_EXIT_USAGE, "--straggler", NULL,
		                "rank %lld does not exist (%lld ranks)", o->straggler, o->ranks);
	if (o->oom_at > o->steps || o->fail_at > o->steps)
		return gw_error(GW_EXIT_USAGE, o->oom_at > o->steps ? "--oom-at" : "--fail-at",
		                NULL, "is past the last step (%lld)", o->steps);
	if (o->allreduce_mib < 0)
		o->allreduce_mib = o->ranks > 1 ? 256 : 0;
	train_apply_batch(o);
	if (o->fail_exit && o->fail_at < 0)
		o->fail_at = o->steps;
	if (o->fail_at > 0 && !o->fail_exit)
		o->fail_exit = 1;
	if (o->hidden < 0) {
		const char *env = getenv("GPUWHY_SIM_HIDDEN");
		o->hidden = env && *env ? parse_hidden(env) : TRAIN_SHOWN;
		if (o->hidden < 0)
			return gw_error(GW_EXIT_USAGE, "GPUWHY_SIM_HIDDEN",
			                N_("pid, none or empty"), "unknown mode '%s'", env);
	}
	return 0;
}

/* 0, OPT_HELP after --help, or a usage exit code (message printed). */
static int parse_train(int argc, char **argv, train_opts *o)
{
	*o = (train_opts){
	    .steps = 50,
	    .workers = 1,
	    .ranks = 1,
	    .straggler = -1,
	    .oom_at = -1,
	    .fail_at = -1,
	    .prefetch = 2,
	    .cpu_ms = 20,
	    .gpu_ms = 30,
	    .kernel_us = 200,
	    .mem_mib = 1024,
	    .h2d_mib = 16,
	    .allreduce_mib = -1,
	    .hidden = -1,
	    .per_item = {train_item_default[0], train_item_default[1], train_item_default[2]}};
	const opt_def opts[] = {
	    TRAIN_INT("steps", "S", &o->steps, 1, 10000000, "steps to run (default 50)"),
	    TRAIN_INT("workers", "N", &o->workers, 0, 256,
	              "data-loader worker processes (default 1; 0: the rank prepares data "
	              "itself)"),
	    TRAIN_INT("prefetch", "P", &o->prefetch, 1, 64,
	              "batches each worker prepares ahead (default 2)"),
	    TRAIN_NUM("cpu-ms", "X", &o->cpu_ms, 600000,
	              "CPU time to prepare one batch (default 20)"),
	    TRAIN_NUM("gpu-ms", "Y", &o->gpu_ms, 600000, "GPU time of one step (default 30)"),
	    TRAIN_NUM("kernel-us", "Z", &o->kernel_us, 10000000,
	              "typical kernel length; short kernels keep the GPU busy with few SMs "
	              "active (default 200)"),
	    TRAIN_INT("ranks", "R", &o->ranks, 1, SIM_MAX_GPUS,
	              "rank processes, rank r on GPU I+r (default 1)"),
	    TRAIN_INT("gpu", "I", &o->gpu, 0, SIM_MAX_GPUS - 1,
	              "GPU of rank 0 (default 0), counted among the GPUs CUDA_VISIBLE_DEVICES "
	              "shows (indices or UUIDs)"),
	    TRAIN_INT("straggler", "K", &o->straggler, 0, SIM_MAX_GPUS - 1,
	              "rank whose GPU phase is longer ..."),
	    TRAIN_NUM("straggler-ms", "M", &o->straggler_ms, 600000, "... by M ms (default 0)"),
	    TRAIN_NUM("allreduce-mib", "A", &o->allreduce_mib, 1048576,
	              "all-reduce volume per step (default 256 with 2+ ranks)"),
	    TRAIN_NUM("h2d-mib", "B", &o->h2d_mib, 1048576,
	              "host-to-GPU copy per step (default 16)"),
	    TRAIN_NUM("mem-mib", "M", &o->mem_mib, 1 << 30,
	              "GPU memory held while running (default 1024)"),
	    TRAIN_NUM("mem-growth-mib", "G", &o->growth_mib, 1 << 30,
	              "more memory each step; past the free memory the step fails with "
	              "torch.OutOfMemoryError and exit 1"),
	    TRAIN_INT("oom-at", "STEP", &o->oom_at, 1, 10000000,
	              "fail with an out-of-memory error at this step"),
	    TRAIN_INT("fail-at", "STEP", &o->fail_at, 1, 10000000,
	              "fail at this step (default: after the last one when --fail-exit is "
	              "given) ..."),
	    TRAIN_INT("fail-exit", "CODE", &o->fail_exit, 1, 255,
	              "... with this exit code (default 1)"),
	    TRAIN_INT("seed", "N", &o->seed, 0, 9007199254740992.0,
	              "seed of the loss curve (default 0)"),
	    TRAIN_NUM("dram-pct", "P", &o->dram_pct, 100,
	              "memory-bound kernels: they keep DRAM bandwidth at P % while the compute "
	              "pipes wait (default: from --kernel-us)"),
	    OPT_FLAG(0, "buffered", &o->buffered,
	             "block-buffer the step lines as Python does when writing to a pipe (they "
	             "arrive in bursts), unless PYTHONUNBUFFERED is set (as gpuwhy run sets it)"),
	    OPT_CALL(0, "hidden", "MODE", train_set_hidden,
	             "run as if in another PID namespace (a container): the GPU lists the job "
	             "under a PID this host cannot see (MODE pid, the default) or not at all "
	             "(MODE none); also GPUWHY_SIM_HIDDEN=pid|none",
	             .optional = true),
	    TRAIN_NUM("io-ms", "X", &o->io_ms, 600000,
	              "I/O wait of preparing one batch, without CPU (default 0)"),
	    TRAIN_INT("batch", "B", &o->batch, 1, 100000000,
	              "samples per step: GPU time, data preparation and memory grow as fixed + "
	              "B x per sample:"),
	    TRAIN_NUM("gpu-ms-per-item", "X", &o->per_item[TRAIN_ITEM_GPU_MS], 1 << 20,
	              "... GPU ms per sample (default 0.1, added to --gpu-ms)"),
	    TRAIN_NUM("cpu-ms-per-item", "X", &o->per_item[TRAIN_ITEM_CPU_MS], 1 << 20,
	              "... CPU ms per sample (default 0.05, added to --cpu-ms)"),
	    TRAIN_NUM("mem-mib-per-item", "X", &o->per_item[TRAIN_ITEM_MEM_MIB], 1 << 20,
	              "... MiB per sample (default 24, added to --mem-mib)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sim train",
	    .usage = "--sim SCENARIO sim train [OPTIONS]",
	    .about =
	        N_("A synthetic training loop. Worker processes prepare each batch by burning\n"
	           "host CPU; each step then runs a GPU phase on the simulated GPU; ranks meet\n"
	           "at an all-reduce barrier. Rank 0 prints `step N/S loss L time T`."),
	    .opts = opts,
	    .more =
	        N_("GPU phases follow the GPU: clocks held down by throttling lengthen them,\n"
	           "other work on the same GPU shares it, and the host-to-device copy takes as\n"
	           "long as the current PCIe link needs. A GPU that falls off the bus fails the\n"
	           "job at its next GPU call with a CUDA error."),
	    .exits = N_("0 done, 1 training failed (out of memory, GPU lost), CODE from "
	                "--fail-exit, 2 bad option, 3 no simulated GPU, 128+N on signal N"),
	    .ctx = o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	return rc ? rc : train_check(o);
}

static int sim_train(int argc, char **argv)
{
	train_opts o;
	int rc = parse_train(argc, argv, &o);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	return train_run(&o);
}

/* ---- dispatch ---- */

static const opt_def sim_opts[] = {OPT_END};

static opt_cmd sim_cmd = {
    .name = "sim",
    .usage = "[--sim SCENARIO] sim COMMAND [OPTIONS]",
    .about = N_("The simulated GPU's own commands.\n"
                "\n"
                "  list [-l]          the shipped scenarios (-l: with descriptions)\n"
                "  check FILE...      validate scenario files (exit 1 when one is invalid)\n"
                "  show [OPTIONS]     what the simulated NVML reports, one line per GPU\n"
                "  reset [SCENARIO]   restart a scenario's clock (time 0 is now)\n"
                "  train [OPTIONS]    a synthetic training job on the simulated GPU\n"
                "  hog [OPTIONS]      busy processes loading the host's CPUs (no GPU needed)\n"
                "  serve [OPTIONS]    a simulated inference server doing its work on the GPU\n"
                "  fleet [OPTIONS]    a simulated cluster's dcgm-exporter series (OpenMetrics)"),
    .opts = sim_opts,
    .more = N_("`gpuwhy sim COMMAND --help` describes each. show, reset and train use the\n"
               "scenario given with --sim (or GPUWHY_SIM_SCENARIO)."),
    .exits = N_("0 ok, 1 a scenario file is invalid (check) or training failed (train), CODE "
                "of train --fail-exit, 2 usage error, 3 environment or I/O error (no "
                "simulated GPU, an unreadable file), 128+N on signal N")};

typedef struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} sim_sub;

static const sim_sub sim_subs[] = {
    {"list", sim_list},   {"check", sim_check}, {"show", sim_show},   {"reset", sim_reset},
    {"train", sim_train}, {"hog", cmd_sim_hog}, {"serve", sim_serve}, {"fleet", cmd_sim_fleet},
};
#define SIM_NSUBS (sizeof sim_subs / sizeof *sim_subs)

int cmd_sim(int argc, char **argv, const gw_global *g)
{
	(void)g;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		/* The subcommands by name for the tables' dump, from the one list. */
		static const char *names[SIM_NSUBS + 1];
		for (size_t i = 0; i < SIM_NSUBS; i++)
			names[i] = sim_subs[i].name;
		sim_cmd.subs = names;
		opt_help(&sim_cmd, argc < 2 ? stderr : stdout);
		return argc < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
	}
	/* Each subcommand parses its own options with argv[0] = the subcommand. */
	const char *sub = argv[1];
	const char *names[SIM_NSUBS];
	for (size_t i = 0; i < SIM_NSUBS; i++) {
		if (!strcmp(sim_subs[i].name, sub))
			return sim_subs[i].fn(argc - 1, argv + 1);
		names[i] = sim_subs[i].name;
	}
	const char *s = opt_suggest(sub, names, SIM_NSUBS);
	char hint[96];
	snprintf(hint, sizeof hint, _("did you mean 'gpuwhy sim %s'?"), s ? s : "");
	return gw_error(GW_EXIT_USAGE, sub, s ? hint : N_("see gpuwhy sim --help"),
	                "unknown sim subcommand");
}
