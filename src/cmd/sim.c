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
#include <getopt.h>
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
#include "train/train.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

static void sim_usage(FILE *out)
{
	fputs("usage: gpuwhy [--sim SCENARIO] sim COMMAND [OPTIONS]\n"
	      "\n"
	      "  list [-l]          the shipped scenarios (-l: with descriptions)\n"
	      "  check FILE...      validate scenario files (exit 1 when one is invalid)\n"
	      "  show [OPTIONS]     what the simulated NVML reports, one line per GPU\n"
	      "  reset [SCENARIO]   restart a scenario's clock (time 0 is now)\n"
	      "  train [OPTIONS]    a synthetic training job on the simulated GPU\n"
	      "  hog [OPTIONS]      busy processes loading the host's CPUs (no GPU needed)\n"
	      "  serve [OPTIONS]    a simulated inference server doing its work on the GPU\n"
	      "\n"
	      "`gpuwhy sim COMMAND --help` describes each. show, reset and train use the\n"
	      "scenario given with --sim (or GPUWHY_SIM_SCENARIO).\n",
	      out);
}

/* ---- the simulated NVML, loaded like any libnvidia-ml.so.1 ---- */

static const char *scenario_env(void)
{
	const char *s = getenv("GPUWHY_SIM_SCENARIO");
	return s && *s ? s : NULL;
}

/* The simulated GPU through the device layer. Returns 0 or a GW_EXIT_* code (message printed). */
static int sim_gpu_open(gpu_ctx **ctx, const char *who)
{
	if (!scenario_env())
		return gw_error(GW_EXIT_USAGE, who, "run it as gpuwhy --sim SCENARIO sim ...",
		                "needs the simulated GPU");
	const char *lib = getenv("GPUWHY_NVML");
	if (!lib || !*lib) {
		lib = gpu_sim_library(NULL);
		if (!lib)
			return gw_error(GW_EXIT_ENV, who,
			                "build it with make, or set GPUWHY_SIM_LIB",
			                "simulated libnvidia-ml.so.1 not found");
		setenv("GPUWHY_NVML", lib, 1);
	}
	gpu_open_opts go = {0};
	return gpu_open(&go, ctx);
}

/* ---- list ---- */

static int names_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sim_list(int argc, char **argv)
{
	bool lng = false;
	static const struct option opts[] = {
	    {"long", no_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "lh", opts, NULL)) != -1) {
		if (c == 'l')
			lng = true;
		else if (c == 'h') {
			puts("usage: gpuwhy sim list [-l|--long]\n\n"
			     "Lists the shipped scenarios; -l adds each one's description.");
			return GW_EXIT_OK;
		} else {
			return GW_EXIT_USAGE;
		}
	}
	const char *dir = gpu_scenario_dir();
	if (!dir)
		return gw_error(GW_EXIT_ENV, "scenarios", "set GPUWHY_SCENARIOS",
		                "no scenario directory found");
	DIR *d = opendir(dir);
	if (!d)
		return gw_error(GW_EXIT_ENV, dir, NULL, "cannot open scenario directory");
	char *names[256] = {NULL};
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t len = strlen(e->d_name);
		if (len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
		    (names[n] = strndup(e->d_name, len - 5)))
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, names_cmp);
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
				printf("%-22s (invalid: %s)\n", names[i], err);
			}
		}
		free(names[i]);
	}
	return GW_EXIT_OK;
}

/* ---- check ---- */

static int sim_check(int argc, char **argv)
{
	if (argc < 2)
		return gw_error(GW_EXIT_USAGE, "sim check", "gpuwhy sim check FILE...",
		                "no scenario file given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		puts("usage: gpuwhy sim check FILE...\n\n"
		     "Parses and validates scenario files. Errors are printed as\n"
		     "FILE:LINE:COLUMN: PATH: what; the exit code is 1 when a file is invalid,\n"
		     "3 when one cannot be read.");
		return GW_EXIT_OK;
	}
	int rc = GW_EXIT_OK;
	for (int i = 1; i < argc; i++) {
		char err[700];
		sim_scenario *s;
		if (sim_scenario_load(argv[i], &s, err, sizeof err) != 0) {
			FILE *f = fopen(argv[i], "r");
			bool readable = f != NULL;
			if (f)
				fclose(f);
			fprintf(stderr, "gpuwhy: %s\n", err);
			if (!readable)
				rc = GW_EXIT_ENV;
			else if (rc == GW_EXIT_OK)
				rc = GW_EXIT_PROBLEMS;
			continue;
		}
		printf("%s: ok, %d GPU%s (%s)\n", argv[i], s->n_gpus, s->n_gpus == 1 ? "" : "s",
		       s->gpus[0].name);
		sim_scenario_free(s);
	}
	return rc;
}

/* ---- show ---- */

/* A reading as sim show prints it: the integer the driver gave, "n/a" when absent. */
static void show_val(const gpu_values *v, gpu_metric_id id, const char *key, const char *fmt)
{
	printf("%s=", key);
	if (v->ok[id])
		printf(fmt, v->v[id]);
	else
		fputs("n/a", stdout);
	putchar(' ');
}

static void show_gpu(gpu_ctx *ctx, int i)
{
	gpu_values v;
	gpu_sample(ctx, i, &v);
	if (v.lost) {
		printf("gpu=%d lost\n", i);
		return;
	}
	printf("gpu=%d ", i);
	show_val(&v, GM_UTIL_GPU, "util", "%.0f");
	show_val(&v, GM_UTIL_MEM, "mem_util", "%.0f");
	show_val(&v, GM_MEM_USED, "mem_used_mib", "%.0f");
	show_val(&v, GM_MEM_TOTAL, "mem_total_mib", "%.0f");
	show_val(&v, GM_POWER_DRAW, "power_w", "%.2f");
	show_val(&v, GM_TEMP_GPU, "temp_c", "%.0f");
	show_val(&v, GM_CLK_SM, "sm_mhz", "%.0f");
	if (v.ok[GM_CLK_REASONS])
		printf("reasons=0x%llx ", (unsigned long long)v.v[GM_CLK_REASONS]);
	else
		fputs("reasons=n/a ", stdout);
	if (v.ok[GM_PCIE_GEN_CUR] && v.ok[GM_PCIE_WIDTH_CUR])
		printf("pcie=gen%.0fx%.0f ", v.v[GM_PCIE_GEN_CUR], v.v[GM_PCIE_WIDTH_CUR]);
	else
		fputs("pcie=n/a ", stdout);
	show_val(&v, GM_PCIE_REPLAY, "replay", "%.0f");
	fputs("procs=", stdout);
	gpu_proc procs[64];
	int n = gpu_processes(ctx, i, procs, 64), shown = 0;
	for (int k = 0; k < n; k++) {
		if (!(procs[k].type & GPU_PROC_COMPUTE))
			continue;
		printf("%s%u:%llu", shown++ ? "," : "", procs[k].pid,
		       procs[k].mem_ok ? (unsigned long long)(procs[k].mem_bytes >> 20) : 0ULL);
	}
	if (!shown)
		putchar('-');
	putchar('\n');
}

static int sim_show(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"gpu", required_argument, NULL, 'g'},      {"count", required_argument, NULL, 'c'},
	    {"interval", required_argument, NULL, 'i'}, {"at", required_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
	long long gpu = -1, count = 1;
	int64_t interval = 1000000000LL;
	int c;
	while ((c = getopt_long(argc, argv, "g:c:i:a:h", opts, NULL)) != -1) {
		double at;
		switch (c) {
		case 'g':
			if (!gw_parse_int(optarg, 0, SIM_MAX_GPUS - 1, &gpu))
				return gw_error(GW_EXIT_USAGE, "--gpu", "an index like 0",
				                "bad value '%s'", optarg);
			break;
		case 'c':
			if (!gw_parse_int(optarg, 1, 1000000, &count))
				return gw_error(GW_EXIT_USAGE, "--count", "a number from 1",
				                "bad value '%s'", optarg);
			break;
		case 'i':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &interval))
				return gw_error(GW_EXIT_USAGE, "--interval",
				                "a duration like 250ms", "bad value '%s'", optarg);
			break;
		case 'a':
			if (!gw_parse_double(optarg, &at) || at < 0 || at > 1e9)
				return gw_error(GW_EXIT_USAGE, "--at",
				                "seconds of scenario time, like 30",
				                "bad value '%s'", optarg);
			setenv("GPUWHY_SIM_TIME", optarg, 1);
			break;
		case 'h':
			puts("usage: gpuwhy --sim SCENARIO sim show [--gpu I] [--count N] "
			     "[--interval DUR] "
			     "[--at SECONDS]\n\n"
			     "Prints what the simulated NVML reports, one line of key=value per "
			     "GPU:\n"
			     "util, mem_util (%), mem_used_mib, mem_total_mib, power_w, temp_c, "
			     "sm_mhz,\n"
			     "reasons (clock event bits), pcie (current link), replay (PCIe "
			     "replays),\n"
			     "procs (pid:MiB of compute processes). A GPU off the bus prints "
			     "'lost'.\n"
			     "  --gpu I          only GPU I\n"
			     "  --count N        N readings (default 1) ...\n"
			     "  --interval DUR   ... this far apart (default 1s)\n"
			     "  --at SECONDS     at this scenario time (pins the clock, "
			     "GPUWHY_SIM_TIME)");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy sim show --help",
		                "unexpected argument");
	gpu_ctx *ctx;
	int rc = sim_gpu_open(&ctx, "sim show");
	if (rc)
		return rc;
	int n = gpu_count(ctx);
	if (gpu >= (long long)n) {
		gpu_close(ctx);
		return gw_error(GW_EXIT_USAGE, "--gpu", NULL, "GPU %lld does not exist (%d GPUs)",
		                gpu, n);
	}
	int64_t next = gw_mono_ns();
	for (long long k = 0; k < count; k++) {
		if (k) {
			next += interval;
			gw_sleep_until_ns(next);
		}
		for (int i = 0; i < n; i++)
			if (gpu < 0 || gpu == i)
				show_gpu(ctx, i);
		fflush(stdout);
	}
	gpu_close(ctx);
	return GW_EXIT_OK;
}

/* ---- reset ---- */

static int sim_reset(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: gpuwhy sim reset [SCENARIO]\n\n"
		     "Restarts the scenario's clock: its time 0 becomes now for every process\n"
		     "that uses it (a lost GPU is back, episodes start over). Without SCENARIO,\n"
		     "the one given with --sim.");
		return GW_EXIT_OK;
	}
	char path[PATH_MAX];
	if (argc > 2)
		return gw_error(GW_EXIT_USAGE, argv[2], "gpuwhy sim reset [SCENARIO]",
		                "unexpected argument");
	if (argc == 2) {
		if (gpu_scenario_resolve(argv[1], path, sizeof path) != 0)
			return gw_error(GW_EXIT_USAGE, argv[1],
			                "gpuwhy sim list shows the shipped ones",
			                "no such scenario");
	} else if (scenario_env()) {
		snprintf(path, sizeof path, "%s", scenario_env());
	} else {
		return gw_error(GW_EXIT_USAGE, "sim reset", "name one, or use --sim SCENARIO",
		                "which scenario?");
	}
	char dir[PATH_MAX], err[600];
	if (sim_state_dir(path, dir, sizeof dir, err, sizeof err) != 0 ||
	    sim_clock_reset(dir, err, sizeof err) != 0)
		return gw_error(GW_EXIT_ENV, "sim reset", NULL, "%s", err);
	printf("%s: clock restarted (state in %s)\n", path, dir);
	return GW_EXIT_OK;
}

/* ---- train ---- */

static const double train_item_default[3] = {0.1, 0.05, 24};

static void train_usage(FILE *out)
{
	fputs("usage: gpuwhy --sim SCENARIO sim train [OPTIONS]\n"
	      "\n"
	      "A synthetic training loop. Worker processes prepare each batch by burning\n"
	      "host CPU; each step then runs a GPU phase on the simulated GPU; ranks meet\n"
	      "at an all-reduce barrier. Rank 0 prints `step N/S loss L time T`.\n"
	      "\n"
	      "  --steps S           steps to run (default 50)\n"
	      "  --workers N         data-loader worker processes (default 1; 0: the rank\n"
	      "                      prepares data itself)\n"
	      "  --prefetch P        batches each worker prepares ahead (default 2)\n"
	      "  --cpu-ms X          CPU time to prepare one batch (default 20)\n"
	      "  --gpu-ms Y          GPU time of one step (default 30)\n"
	      "  --kernel-us Z       typical kernel length; short kernels keep the GPU busy\n"
	      "                      with few SMs active (default 200)\n"
	      "  --ranks R           rank processes, rank r on GPU I+r (default 1)\n"
	      "  --gpu I             GPU of rank 0 (default 0), counted among the GPUs\n"
	      "                      CUDA_VISIBLE_DEVICES shows (indices or UUIDs)\n"
	      "  --straggler K       rank whose GPU phase is longer ...\n"
	      "  --straggler-ms M    ... by M ms (default 0)\n"
	      "  --allreduce-mib A   all-reduce volume per step (default 256 with 2+ ranks)\n"
	      "  --h2d-mib B         host-to-GPU copy per step (default 16)\n"
	      "  --mem-mib M         GPU memory held while running (default 1024)\n"
	      "  --mem-growth-mib G  more memory each step; past the free memory the step\n"
	      "                      fails with torch.OutOfMemoryError and exit 1\n"
	      "  --oom-at STEP       fail with an out-of-memory error at this step\n"
	      "  --fail-at STEP      fail at this step (default: after the last one when\n"
	      "                      --fail-exit is given) ...\n"
	      "  --fail-exit CODE    ... with this exit code (default 1)\n"
	      "  --seed N            seed of the loss curve (default 0)\n"
	      "  --dram-pct P        memory-bound kernels: they keep DRAM bandwidth at P %\n"
	      "                      while the compute pipes wait (default: from --kernel-us)\n"
	      "  --buffered          block-buffer the step lines as Python does when writing\n"
	      "                      to a pipe (they arrive in bursts), unless\n"
	      "                      PYTHONUNBUFFERED is set (as gpuwhy run sets it)\n"
	      "  --hidden[=MODE]     run as if in another PID namespace (a container): the\n"
	      "                      GPU lists the job under a PID this host cannot see\n"
	      "                      (MODE pid, the default) or not at all (MODE none);\n"
	      "                      also GPUWHY_SIM_HIDDEN=pid|none\n"
	      "  --io-ms X           I/O wait of preparing one batch, without CPU (default 0)\n"
	      "  --batch B           samples per step: GPU time, data preparation and memory\n"
	      "                      grow as fixed + B x per sample:\n"
	      "  --gpu-ms-per-item   ... GPU ms per sample (default 0.1, added to --gpu-ms)\n"
	      "  --cpu-ms-per-item   ... CPU ms per sample (default 0.05, added to --cpu-ms)\n"
	      "  --mem-mib-per-item  ... MiB per sample (default 24, added to --mem-mib)\n"
	      "\n"
	      "GPU phases follow the GPU: clocks held down by throttling lengthen them,\n"
	      "other work on the same GPU shares it, and the host-to-device copy takes as\n"
	      "long as the current PCIe link needs. A GPU that falls off the bus fails the\n"
	      "job at its next GPU call with a CUDA error.\n"
	      "\n"
	      "Exit codes: 0 done, 1 training failed (out of memory, GPU lost), CODE from\n"
	      "--fail-exit, 2 bad option, 3 no simulated GPU, 128+N on signal N.\n",
	      out);
}

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
	static const struct option opts[] = {{"steps", required_argument, NULL, 's'},
	                                     {"workers", required_argument, NULL, 'w'},
	                                     {"prefetch", required_argument, NULL, 'p'},
	                                     {"cpu-ms", required_argument, NULL, 'C'},
	                                     {"gpu-ms", required_argument, NULL, 'G'},
	                                     {"kernel-us", required_argument, NULL, 'k'},
	                                     {"ranks", required_argument, NULL, 'r'},
	                                     {"gpu", required_argument, NULL, 'g'},
	                                     {"straggler", required_argument, NULL, 'K'},
	                                     {"straggler-ms", required_argument, NULL, 'M'},
	                                     {"allreduce-mib", required_argument, NULL, 'A'},
	                                     {"h2d-mib", required_argument, NULL, 'B'},
	                                     {"mem-mib", required_argument, NULL, 'm'},
	                                     {"mem-growth-mib", required_argument, NULL, 'R'},
	                                     {"oom-at", required_argument, NULL, 'O'},
	                                     {"fail-at", required_argument, NULL, 'F'},
	                                     {"fail-exit", required_argument, NULL, 'E'},
	                                     {"seed", required_argument, NULL, 'S'},
	                                     {"hidden", optional_argument, NULL, 'H'},
	                                     {"dram-pct", required_argument, NULL, 'D'},
	                                     {"buffered", no_argument, NULL, 'U'},
	                                     {"io-ms", required_argument, NULL, 1000},
	                                     {"batch", required_argument, NULL, 1001},
	                                     {"gpu-ms-per-item", required_argument, NULL, 1002},
	                                     {"cpu-ms-per-item", required_argument, NULL, 1003},
	                                     {"mem-mib-per-item", required_argument, NULL, 1004},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	int c, idx;
	while ((c = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		long long *iv = NULL, lo = 0, hi = 0;
		double *dv = NULL, dhi = 1e7;
		switch (c) {
		case 's':
			iv = &o->steps, lo = 1, hi = 10000000;
			break;
		case 'w':
			iv = &o->workers, lo = 0, hi = 256;
			break;
		case 'p':
			iv = &o->prefetch, lo = 1, hi = 64;
			break;
		case 'r':
			iv = &o->ranks, lo = 1, hi = SIM_MAX_GPUS;
			break;
		case 'g':
			iv = &o->gpu, lo = 0, hi = SIM_MAX_GPUS - 1;
			break;
		case 'K':
			iv = &o->straggler, lo = 0, hi = SIM_MAX_GPUS - 1;
			break;
		case 'O':
			iv = &o->oom_at, lo = 1, hi = 10000000;
			break;
		case 'F':
			iv = &o->fail_at, lo = 1, hi = 10000000;
			break;
		case 'E':
			iv = &o->fail_exit, lo = 1, hi = 255;
			break;
		case 'S':
			iv = &o->seed, lo = 0, hi = (1LL << 53);
			break;
		case 'C':
			dv = &o->cpu_ms, dhi = 600000;
			break;
		case 'G':
			dv = &o->gpu_ms, dhi = 600000;
			break;
		case 'k':
			dv = &o->kernel_us, dhi = 10000000;
			break;
		case 'M':
			dv = &o->straggler_ms, dhi = 600000;
			break;
		case 'A':
			dv = &o->allreduce_mib, dhi = 1048576;
			break;
		case 'B':
			dv = &o->h2d_mib, dhi = 1048576;
			break;
		case 'm':
			dv = &o->mem_mib, dhi = 1 << 30;
			break;
		case 'R':
			dv = &o->growth_mib, dhi = 1 << 30;
			break;
		case 'D':
			dv = &o->dram_pct, dhi = 100;
			break;
		case 'U':
			o->buffered = true;
			break;
		case 'H':
			if ((o->hidden = parse_hidden(optarg ? optarg : "pid")) < 0)
				return gw_error(GW_EXIT_USAGE, "--hidden",
				                "--hidden=pid or --hidden=none",
				                "unknown mode '%s'", optarg);
			break;
		case 1000:
			dv = &o->io_ms, dhi = 600000;
			break;
		case 1001:
			iv = &o->batch, lo = 1, hi = 100000000;
			break;
		case 1002:
		case 1003:
		case 1004:
			dv = &o->per_item[c - 1002], dhi = 1 << 20;
			break;
		case 'h':
			train_usage(stdout);
			return -1;
		default:
			train_usage(stderr);
			return GW_EXIT_USAGE;
		}
		if (iv && !gw_parse_int(optarg, lo, hi, iv))
			return gw_error(
			    GW_EXIT_USAGE, argv[optind - 1], "see gpuwhy sim train --help",
			    "'%s' is not a whole number from %lld to %lld", optarg, lo, hi);
		if (dv && (!gw_parse_double(optarg, dv) || *dv < 0 || *dv > dhi))
			return gw_error(GW_EXIT_USAGE, argv[optind - 1],
			                "see gpuwhy sim train --help",
			                "'%s' is not a number from 0 to %g", optarg, dhi);
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], "see gpuwhy sim train --help",
		                "unexpected argument");
	if (o->kernel_us < 1)
		return gw_error(GW_EXIT_USAGE, "--kernel-us", NULL, "must be at least 1");
	if (o->dram_pct > 0 && o->dram_pct < 1)
		return gw_error(GW_EXIT_USAGE, "--dram-pct", "a percentage from 1 to 100",
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
			return gw_error(GW_EXIT_USAGE, "GPUWHY_SIM_HIDDEN", "pid, none or empty",
			                "unknown mode '%s'", env);
	}
	return 0;
}

static int sim_train(int argc, char **argv)
{
	train_opts o;
	int rc = parse_train(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	return train_run(&o);
}

int cmd_sim(int argc, char **argv, const gw_global *g)
{
	(void)g;
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		sim_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
	}
	/* Each subcommand parses its own options with argv[0] = the subcommand. */
	const char *sub = argv[1];
	int sargc = argc - 1;
	char **sargv = argv + 1;
	optind = 0;
	if (!strcmp(sub, "list"))
		return sim_list(sargc, sargv);
	if (!strcmp(sub, "check"))
		return sim_check(sargc, sargv);
	if (!strcmp(sub, "show"))
		return sim_show(sargc, sargv);
	if (!strcmp(sub, "reset"))
		return sim_reset(sargc, sargv);
	if (!strcmp(sub, "train"))
		return sim_train(sargc, sargv);
	if (!strcmp(sub, "hog"))
		return cmd_sim_hog(sargc, sargv);
	if (!strcmp(sub, "serve"))
		return sim_serve(sargc, sargv);
	gw_error(GW_EXIT_USAGE, sub, "see gpuwhy sim --help", "unknown sim subcommand");
	return GW_EXIT_USAGE;
}
