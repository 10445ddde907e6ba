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
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/sim_serve.h"
#include "gpu/loader.h"
#include "nvml_abi.h"
#include "sim_scenario.h"
#include "sim_state.h"
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

#define NVML_API_PTR(ret, name, params) ret(*name) params;
typedef struct {
	void *handle;
	NVML_ENTRY_POINTS(NVML_API_PTR)
} nvml_api;
#undef NVML_API_PTR

static const char *scenario_env(void)
{
	const char *s = getenv("GPUWHY_SIM_SCENARIO");
	return s && *s ? s : NULL;
}

/* Load and initialise the simulated NVML. Returns 0 or a GW_EXIT_* code (message printed). */
static int nvml_open(nvml_api *api, const char *who)
{
	memset(api, 0, sizeof *api);
	if (!scenario_env())
		return gw_error(GW_EXIT_USAGE, who, "run it as gpuwhy --sim SCENARIO sim ...",
		                "needs the simulated GPU");
	const char *lib = getenv("GPUWHY_NVML");
	if (!lib || !*lib)
		lib = gpu_sim_library(NULL);
	if (!lib)
		return gw_error(GW_EXIT_ENV, who, "build it with make, or set GPUWHY_SIM_LIB",
		                "simulated libnvidia-ml.so.1 not found");
	api->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!api->handle)
		return gw_error(GW_EXIT_ENV, lib, NULL, "cannot load: %s", dlerror());
#define NVML_API_LOAD(ret, name, params) api->name = (ret(*) params)dlsym(api->handle, #name);
	NVML_ENTRY_POINTS(NVML_API_LOAD)
#undef NVML_API_LOAD
	if (!api->nvmlInit_v2 || !api->nvmlDeviceGetCount_v2 ||
	    !api->nvmlDeviceGetHandleByIndex_v2 || !api->nvmlDeviceGetMemoryInfo_v2 ||
	    !api->nvmlErrorString) {
		dlclose(api->handle);
		return gw_error(GW_EXIT_ENV, lib, NULL, "not an NVML library");
	}
	nvmlReturn_t rc = api->nvmlInit_v2();
	if (rc != NVML_SUCCESS) {
		const char *why = api->nvmlErrorString(rc);
		dlclose(api->handle);
		return gw_error(GW_EXIT_ENV, who, "see the message above", "NVML init failed: %s",
		                why);
	}
	return 0;
}

static void nvml_close(nvml_api *api)
{
	if (!api->handle)
		return;
	api->nvmlShutdown();
	dlclose(api->handle);
	api->handle = NULL;
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

static void show_gpu(nvml_api *a, unsigned i)
{
	nvmlDevice_t d;
	if (a->nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS)
		return;
	nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
	nvmlReturn_t rc = a->nvmlDeviceGetMemoryInfo_v2(d, &mem);
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		printf("gpu=%u lost\n", i);
		return;
	}
	nvmlUtilization_t u = {0};
	unsigned power = 0, temp = 0, sm = 0, gen = 0, width = 0, replay = 0;
	unsigned long long reasons = 0;
	a->nvmlDeviceGetUtilizationRates(d, &u);
	a->nvmlDeviceGetPowerUsage(d, &power);
	a->nvmlDeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &temp);
	a->nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, &sm);
	a->nvmlDeviceGetCurrentClocksEventReasons(d, &reasons);
	a->nvmlDeviceGetCurrPcieLinkGeneration(d, &gen);
	a->nvmlDeviceGetCurrPcieLinkWidth(d, &width);
	a->nvmlDeviceGetPcieReplayCounter(d, &replay);
	printf("gpu=%u util=%u mem_util=%u mem_used_mib=%llu mem_total_mib=%llu power_w=%.2f "
	       "temp_c=%u sm_mhz=%u reasons=0x%llx pcie=gen%ux%u replay=%u procs=",
	       i, u.gpu, u.memory, mem.used >> 20, mem.total >> 20, power / 1000.0, temp, sm,
	       reasons, gen, width, replay);
	nvmlProcessInfo_t procs[64];
	unsigned n = 64;
	if (a->nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs) == NVML_SUCCESS && n) {
		for (unsigned k = 0; k < n; k++)
			printf("%s%u:%llu", k ? "," : "", procs[k].pid,
			       procs[k].usedGpuMemory >> 20);
	} else {
		printf("-");
	}
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
	nvml_api api;
	int rc = nvml_open(&api, "sim show");
	if (rc)
		return rc;
	unsigned n = 0;
	api.nvmlDeviceGetCount_v2(&n);
	if (gpu >= (long long)n) {
		nvml_close(&api);
		return gw_error(GW_EXIT_USAGE, "--gpu", NULL, "GPU %lld does not exist (%u GPUs)",
		                gpu, n);
	}
	int64_t next = gw_mono_ns();
	for (long long k = 0; k < count; k++) {
		if (k) {
			next += interval;
			gw_sleep_until_ns(next);
		}
		for (unsigned i = 0; i < n; i++)
			if (gpu < 0 || (unsigned)gpu == i)
				show_gpu(&api, i);
		fflush(stdout);
	}
	nvml_close(&api);
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

/* How the driver lists the job's processes (--hidden). */
enum { TRAIN_SHOWN, TRAIN_HIDDEN_PID, TRAIN_HIDDEN_NONE };

typedef struct {
	long long steps, workers, ranks, gpu, straggler, seed, oom_at, fail_at, fail_exit, prefetch;
	double cpu_ms, gpu_ms, kernel_us, straggler_ms, mem_mib, growth_mib, h2d_mib, allreduce_mib;
	int hidden;         /* TRAIN_* */
	double dram_pct;    /* memory-bound kernels' DRAM bandwidth, 0: from --kernel-us */
	bool buffered;      /* stdout block-buffered, as Python writes to a pipe */
	double io_ms;       /* I/O wait of preparing one batch (sleep, no CPU) */
	long long batch;    /* --batch: samples per step; 0 = not given */
	double per_item[3]; /* GPU ms, CPU ms, memory MiB per sample (see train_batch_*) */
} train_opts;

/* The per-sample knobs of --batch, in the order of train_opts.per_item. */
enum { TRAIN_ITEM_GPU_MS, TRAIN_ITEM_CPU_MS, TRAIN_ITEM_MEM_MIB };
static const double train_item_default[3] = {0.1, 0.05, 24};

/* Shared by the rank processes (anonymous shared mapping). */
typedef struct {
	uint32_t arrived;
	uint32_t generation; /* futex word of the barrier */
	uint32_t abort;      /* a rank failed: the others stop */
	double
	    link_bps[SIM_MAX_GPUS]; /* each rank's PCIe bandwidth now (all-reduce without NVLink) */
} train_shared;

static volatile sig_atomic_t train_stop;

static void on_stop(int sig)
{
	train_stop = sig;
}

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

/* Spend ms of this thread's CPU time on arithmetic. */
static void burn_cpu(double ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	volatile double x = 1.0;
	double spent;
	do {
		for (int i = 0; i < 4000; i++)
			x = x * 1.0000001 + 1e-9;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		spent =
		    (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
	} while (spent < ms && !train_stop);
}

typedef struct {
	pid_t pid;
	int data_rd;   /* batches ready */
	int credit_wr; /* permission to prepare one more */
} worker;

/* Waiting for storage: the worker sleeps, its core stays free. */
static void wait_io(double ms)
{
	if (ms <= 0)
		return;
	int64_t until = gw_mono_ns() + (int64_t)llround(ms * 1e6);
	while (gw_mono_ns() < until && !train_stop)
		gw_sleep_until_ns(until);
}

static void worker_main(int credit_rd, int data_wr, double cpu_ms, double io_ms)
{
	char ch;
	for (;;) {
		ssize_t n = read(credit_rd, &ch, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1)
			_exit(0);
		wait_io(io_ms);
		burn_cpu(cpu_ms);
		if (write(data_wr, &ch, 1) != 1)
			_exit(0);
	}
}

static int spawn_workers(const train_opts *o, worker *w)
{
	for (long long i = 0; i < o->workers; i++) {
		int data[2], credit[2];
		if (pipe2(data, O_CLOEXEC) != 0)
			return -1;
		if (pipe2(credit, O_CLOEXEC) != 0) {
			close(data[0]);
			close(data[1]);
			return -1;
		}
		pid_t pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(data[0]);
			close(credit[1]);
			for (long long k = 0; k < i; k++) {
				close(w[k].data_rd);
				close(w[k].credit_wr);
			}
			worker_main(credit[0], data[1], o->cpu_ms, o->io_ms);
		}
		close(data[1]);
		close(credit[0]);
		w[i] = (worker){.pid = pid, .data_rd = data[0], .credit_wr = credit[1]};
		char credits[64] = {0};
		if (write(w[i].credit_wr, credits, (size_t)o->prefetch) != (ssize_t)o->prefetch)
			return -1;
	}
	return 0;
}

static void stop_workers(const train_opts *o, worker *w)
{
	for (long long i = 0; i < o->workers; i++) {
		close(w[i].credit_wr);
		close(w[i].data_rd);
	}
	for (long long i = 0; i < o->workers; i++) {
		kill(w[i].pid, SIGTERM);
		while (waitpid(w[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/* Wait for the next batch: from worker `which`, or prepared here. */
static int next_batch(const train_opts *o, worker *w, long long which)
{
	if (o->workers == 0) {
		wait_io(o->io_ms);
		burn_cpu(o->cpu_ms);
		return train_stop ? -1 : 0;
	}
	worker *k = &w[which % o->workers];
	char ch;
	for (;;) {
		ssize_t n = read(k->data_rd, &ch, 1);
		if (n == 1)
			break;
		if (n < 0 && errno == EINTR && !train_stop)
			continue;
		return -1;
	}
	return write(k->credit_wr, &ch, 1) == 1 ? 0 : -1;
}

static int sleep_until(int64_t t)
{
	while (gw_mono_ns() < t)
		if (gw_sleep_until_ns(t) && train_stop)
			return -1;
	return 0;
}

static void futex_wait(uint32_t *addr, uint32_t val, long ns)
{
	struct timespec ts = {0, ns};
	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * The all-reduce barrier. While a rank waits, its GPU shows busy with few
 * SMs active (a collective spinning): the lease on the published interval
 * is extended second by second until everyone has arrived.
 */
static int barrier(train_shared *sh, long long ranks, sim_wl *wl, int64_t *lease)
{
	uint32_t gen = __atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)ranks) {
		__atomic_store_n(&sh->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->generation, 1, __ATOMIC_RELEASE);
		futex_wake(&sh->generation);
		return 0;
	}
	while (__atomic_load_n(&sh->generation, __ATOMIC_ACQUIRE) == gen) {
		if (__atomic_load_n(&sh->abort, __ATOMIC_ACQUIRE) || train_stop)
			return -1;
		futex_wait(&sh->generation, gen, 5000000);
		int64_t now = gw_mono_ns();
		if (now > *lease - 200000000LL) {
			*lease = now + 1000000000LL;
			sim_wl_set_end(wl, *lease);
		}
	}
	return 0;
}

static void fmt_size(double bytes, char *out, size_t len)
{
	if (bytes >= 1073741824.0)
		snprintf(out, len, "%.2f GiB", bytes / 1073741824.0);
	else
		snprintf(out, len, "%.2f MiB", bytes / 1048576.0);
}

/* What PyTorch prints when the caching allocator cannot get memory. */
static void print_oom(unsigned gpu, double want, const nvmlMemory_v2_t *m, double held)
{
	char a[32], t[32], f[32], h[32];
	fmt_size(want, a, sizeof a);
	fmt_size((double)m->total, t, sizeof t);
	fmt_size((double)m->free, f, sizeof f);
	fmt_size(held, h, sizeof h);
	fprintf(
	    stderr,
	    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %u has a total "
	    "capacity of %s of which %s is free. Including non-PyTorch memory, this process has "
	    "%s memory in use. Of the allocated memory %s is allocated by PyTorch, and 0 bytes is "
	    "reserved by PyTorch but unallocated.\n",
	    a, gpu, t, f, h, h);
}

static double train_loss(const train_opts *o, long long step)
{
	double noise =
	    (double)(sim_hash((uint64_t)o->seed, 7, (uint64_t)step, 0) >> 11) / 9007199254740992.0 -
	    0.5;
	return 0.35 + 2.2 * exp(-3.0 * (double)step / (double)o->steps) + 0.04 * noise;
}

typedef struct {
	const train_opts *o;
	nvml_api *api;
	train_shared *sh;
	long long rank;
	unsigned gpu;
	nvmlDevice_t dev;
	sim_wl *wl;
	double held; /* bytes */
	/* gpuwhySimWorkRate of the simulated library (NULL: the GPU runs at full speed) */
	nvmlReturn_t (*work_rate)(nvmlDevice_t, unsigned, double *, double *, double *);
	bool nvlink;    /* collectives over NVLink (else PCIe) */
	double speed;   /* the GPU's speed for this job at the last look (1: full) */
	double h2d_bps; /* what its PCIe link carried then */
} rank_ctx;

/* Memory check before an allocation of `want` bytes. 0: fits; 1: out of memory; -1: GPU gone. */
static int try_alloc(rank_ctx *r, double want, bool forced)
{
	nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
	nvmlReturn_t rc = r->api->nvmlDeviceGetMemoryInfo_v2(r->dev, &m);
	if (rc != NVML_SUCCESS) {
		fprintf(stderr, "RuntimeError: CUDA error: %s\n",
		        rc == NVML_ERROR_GPU_IS_LOST
		            ? "unspecified launch failure (the GPU is lost)"
		            : r->api->nvmlErrorString(rc));
		return -1;
	}
	if (forced || want > (double)m.free) {
		print_oom(r->gpu, want, &m, r->held);
		return 1;
	}
	r->held += want;
	sim_wl_set_mem(r->wl, (uint64_t)r->held);
	return 0;
}

/* ---- the GPU as the job meets it: speed, link, loss ---- */

/* What PyTorch prints when a kernel fails because the GPU has fallen off the bus. */
static void print_gpu_lost(const rank_ctx *r)
{
	fprintf(stderr,
	        "RuntimeError: CUDA error: unspecified launch failure (GPU %u is lost)\n"
	        "CUDA kernel errors might be asynchronously reported at some other API call, so "
	        "the stacktrace below might be incorrect.\n",
	        r->gpu);
}

/*
 * The GPU's speed for this job now: 1 is the GPU alone at its unthrottled
 * clock. Returns 0, or 1 when the GPU is lost (error printed).
 */
static int gpu_speed(rank_ctx *r, double *speed, double *h2d_bps)
{
	double clock = 1, share = 1, bps = 25e9;
	nvmlReturn_t rc = r->work_rate
	                      ? r->work_rate(r->dev, (unsigned)getpid(), &clock, &share, &bps)
	                      : NVML_SUCCESS;
	if (rc == NVML_ERROR_GPU_IS_LOST) {
		print_gpu_lost(r);
		return 1;
	}
	if (rc != NVML_SUCCESS)
		clock = share = 1, bps = 25e9;
	*speed = clock * share > 0.001 ? clock * share : 0.001;
	if (h2d_bps)
		*h2d_bps = bps > 1e6 ? bps : 1e6;
	return 0;
}

/*
 * One step on the GPU: the host-to-device copy at what the current PCIe link
 * carries (a copy engine's work, not slowed by SM clocks), then `work_ms` of
 * full-speed GPU work, both published at once. The GPU is asked for its
 * speed again every slice, so a throttle or a neighbour that starts
 * mid-phase stretches the rest of it. 0 done, -1 stopped, 1 GPU lost.
 */
static int gpu_step(rank_ctx *r, double h2d_bytes, double work_ms, unsigned kernel_us)
{
	const int64_t slice = 50000000LL;
	/* Published at once with the last speed known, then corrected: no idle gap here. */
	double speed = r->speed, bps = r->h2d_bps;
	int64_t t = gw_mono_ns(), copy_end = t;
	if (h2d_bytes > 0) {
		copy_end += (int64_t)llround(h2d_bytes / bps * 1e9);
		sim_wl_push(r->wl, t, copy_end, 0, SIM_WL_COPY, (uint64_t)h2d_bytes, 0);
	}
	double left_ns = work_ms * 1e6;
	int64_t end = copy_end + (int64_t)llround(left_ns / speed);
	sim_wl_push(r->wl, copy_end, end, kernel_us, SIM_WL_COMPUTE, 0, 0);
	bool first = true;
	for (;;) {
		if (gpu_speed(r, &speed, first ? &bps : NULL)) {
			sim_wl_set_end(r->wl, gw_mono_ns());
			return 1;
		}
		if (first && bps != r->h2d_bps && h2d_bytes > 0) {
			/* The link changed since the last step: the copy takes what it takes now.
			 */
			int64_t c = t + (int64_t)llround(h2d_bytes / bps * 1e9);
			end += c - copy_end;
			copy_end = c;
		}
		first = false;
		r->speed = speed;
		r->h2d_bps = bps;
		int64_t now = gw_mono_ns(), base = now > copy_end ? now : copy_end;
		int64_t want = left_ns > 0 ? base + (int64_t)llround(left_ns / speed) : now;
		if (want != end) {
			end = want;
			sim_wl_set_end(r->wl, end);
		}
		if (now >= end)
			return 0;
		int64_t until = end - now > slice ? now + slice : end;
		if (sleep_until(until) != 0) {
			sim_wl_set_end(r->wl, gw_mono_ns());
			return -1;
		}
		int64_t after = gw_mono_ns(), from = now > copy_end ? now : copy_end;
		if (after > from)
			left_ns -= (double)(after - from) * speed;
		if (left_ns <= 0 && after >= end)
			return 0;
	}
}

/* Whether the GPU has an active NVLink (collectives go over it, else over PCIe). */
static bool has_nvlink(rank_ctx *r)
{
	if (!r->api->nvmlDeviceGetNvLinkState)
		return false;
	for (unsigned l = 0; l < SIM_MAX_LINKS; l++) {
		nvmlEnableState_t st;
		if (r->api->nvmlDeviceGetNvLinkState(r->dev, l, &st) != NVML_SUCCESS)
			return false;
		if (st == NVML_FEATURE_ENABLED)
			return true;
	}
	return false;
}

/* Tell the other ranks what this rank's PCIe link carries now. */
static void publish_link(rank_ctx *r)
{
	double speed, bps;
	if (gpu_speed(r, &speed, &bps) == 0)
		__atomic_store(&r->sh->link_bps[r->rank], &bps, __ATOMIC_RELAXED);
}

/*
 * How long moving an all-reduce of `bytes` takes once every rank is there:
 * about 100 GiB/s over NVLink; over PCIe a ring sends 2 (R - 1) / R of it
 * through every link, so the slowest rank's link sets the pace.
 */
static int64_t allreduce_ns(rank_ctx *r, double bytes)
{
	if (r->nvlink)
		return (int64_t)(bytes / (102.4 * 1048576.0) * 1e6);
	double slowest = 0;
	for (long long k = 0; k < r->o->ranks; k++) {
		double b;
		__atomic_load(&r->sh->link_bps[k], &b, __ATOMIC_RELAXED);
		if (b > 0 && (slowest == 0 || b < slowest))
			slowest = b;
	}
	if (slowest <= 0)
		slowest = 25e9;
	double n = (double)r->o->ranks;
	return (int64_t)(2 * (n - 1) / n * bytes / slowest * 1e9);
}

static int run_steps(rank_ctx *r, worker *w)
{
	const train_opts *o = r->o;
	const double mib = 1048576.0;
	int64_t prev = gw_mono_ns(), t_start = prev;
	for (long long step = 1; step <= o->steps; step++) {
		if (train_stop || __atomic_load_n(&r->sh->abort, __ATOMIC_ACQUIRE))
			return -1;
		if (next_batch(o, w, step - 1) != 0)
			return -1;
		if (step == o->oom_at || o->growth_mib > 0) {
			double want = o->growth_mib > 0 ? o->growth_mib * mib : 20 * mib;
			int rc = try_alloc(r, want, step == o->oom_at);
			if (rc != 0)
				return 1;
		}
		if (step == o->fail_at) {
			fprintf(stderr,
			        "RuntimeError: synthetic failure at step %lld (--fail-exit %lld)\n",
			        step, o->fail_exit);
			return (int)o->fail_exit;
		}
		double gpu_ms = o->gpu_ms + (r->rank == o->straggler ? o->straggler_ms : 0);
		int g = gpu_step(r, o->h2d_mib * mib, gpu_ms, (unsigned)o->kernel_us);
		if (g != 0)
			return g < 0 ? -1 : 1;
		if (o->ranks > 1) {
			publish_link(r);
			int64_t a0 = gw_mono_ns(), lease = a0 + 1000000000LL;
			sim_wl_push(r->wl, a0, lease, 0, SIM_WL_COMM, 0,
			            (uint64_t)(o->allreduce_mib * mib));
			if (barrier(r->sh, o->ranks, r->wl, &lease) != 0) {
				sim_wl_set_end(r->wl, gw_mono_ns());
				return -1;
			}
			int64_t a1 = gw_mono_ns() + allreduce_ns(r, o->allreduce_mib * mib);
			sim_wl_set_end(r->wl, a1);
			if (sleep_until(a1) != 0)
				return -1;
		}
		int64_t now = gw_mono_ns();
		if (r->rank == 0) {
			printf("step %lld/%lld loss %.4f time %.3fs\n", step, o->steps,
			       train_loss(o, step), (double)(now - prev) / 1e9);
			if (!o->buffered)
				fflush(stdout);
		}
		prev = now;
	}
	if (r->rank == 0) {
		printf("training finished: %lld steps in %.3fs\n", o->steps,
		       (double)(gw_mono_ns() - t_start) / 1e9);
		fflush(stdout);
	}
	return 0;
}

/*
 * The GPUs a CUDA program would see, as NVML indices in CUDA's order:
 * CUDA_VISIBLE_DEVICES (indices or UUID prefixes, up to the first entry
 * that names no GPU, as CUDA reads it; "" hides them all), else all GPUs.
 */
static unsigned visible_gpus(nvml_api *api, unsigned count, unsigned *vis)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	unsigned n = 0;
	if (!env) {
		for (unsigned i = 0; i < count && i < SIM_MAX_GPUS; i++)
			vis[n++] = i;
		return n;
	}
	char list[1024], *save = NULL;
	snprintf(list, sizeof list, "%s", env);
	for (char *t = strtok_r(list, ",", &save); t && n < SIM_MAX_GPUS;
	     t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		long long idx;
		int found = -1;
		if (gw_parse_int(t, 0, (long long)count - 1, &idx)) {
			found = (int)idx;
		} else {
			for (unsigned i = 0; i < count && found < 0; i++) {
				nvmlDevice_t d;
				char uuid[96];
				if (api->nvmlDeviceGetUUID &&
				    api->nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS &&
				    api->nvmlDeviceGetUUID(d, uuid, sizeof uuid) == NVML_SUCCESS &&
				    *t && !strncmp(uuid, t, strlen(t)))
					found = (int)i;
			}
		}
		if (found < 0)
			break;
		vis[n++] = (unsigned)found;
	}
	return n;
}

/*
 * A PID that no process of this host has, as the driver reports a job in
 * another PID namespace (NVML knows only the host's PIDs): near the top of
 * pid_max, different per rank, probed until free.
 */
static uint32_t foreign_pid(void)
{
	long max = 4194304;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1 || max < 1024)
			max = 32768;
		fclose(f);
	}
	uint64_t h = sim_hash(0x6e73, (uint64_t)getpid(), 0, 0);
	long span = max / 4;
	for (long k = 0; k < 4096; k++) {
		long pid = max - 1 - (long)((h + (uint64_t)k) % (uint64_t)span);
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
			return (uint32_t)pid;
	}
	return (uint32_t)(max - 1);
}

/* How the simulated driver lists this rank (--hidden). */
static void apply_hidden(const train_opts *o, sim_wl *wl)
{
	if (o->hidden == TRAIN_HIDDEN_NONE)
		sim_wl_set_shown_pid(wl, 0);
	else if (o->hidden == TRAIN_HIDDEN_PID)
		sim_wl_set_shown_pid(wl, foreign_pid());
}

static int run_rank(const train_opts *o, nvml_api *api, train_shared *sh, long long rank,
                    unsigned gpu)
{
	rank_ctx r = {.o = o, .api = api, .sh = sh, .rank = rank, .gpu = gpu};
	char dir[PATH_MAX], err[600];
	if (api->nvmlDeviceGetHandleByIndex_v2(r.gpu, &r.dev) != NVML_SUCCESS ||
	    sim_state_dir(scenario_env(), dir, sizeof dir, err, sizeof err) != 0 ||
	    sim_wl_create(dir, r.gpu, &r.wl, err, sizeof err) != 0) {
		gw_error(GW_EXIT_ENV, "sim train", NULL, "rank %lld: %s", rank, err);
		return GW_EXIT_ENV;
	}
	apply_hidden(o, r.wl);
	sim_wl_set_dram(r.wl, (unsigned)llround(o->dram_pct));
	*(void **)&r.work_rate = dlsym(api->handle, "gpuwhySimWorkRate");
	r.nvlink = has_nvlink(&r);
	r.speed = 1;
	r.h2d_bps = 25e9;
	worker *w = calloc((size_t)(o->workers ? o->workers : 1), sizeof *w);
	int rc;
	if (!w || spawn_workers(o, w) != 0) {
		gw_error(GW_EXIT_ENV, "sim train", NULL, "cannot start workers: %s",
		         strerror(errno));
		rc = GW_EXIT_ENV;
	} else {
		int a = try_alloc(&r, o->mem_mib * 1048576.0, false);
		rc = a != 0 ? 1 : run_steps(&r, w);
		if (rc < 0)
			rc = train_stop ? 128 + train_stop : 1;
		stop_workers(o, w);
	}
	if (rc != 0)
		__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
	futex_wake(&sh->generation);
	free(w);
	sim_wl_close(r.wl);
	return rc;
}

/*
 * --buffered: what Python does with print() into a pipe: an 8 KiB block
 * buffer, flushed when full or at exit, unless PYTHONUNBUFFERED is set to
 * something (a terminal is line-buffered either way).
 */
static void apply_buffering(train_opts *o)
{
	const char *unbuf = getenv("PYTHONUNBUFFERED");
	if (o->buffered && ((unbuf && *unbuf) || isatty(STDOUT_FILENO)))
		o->buffered = false;
	if (o->buffered)
		setvbuf(stdout, NULL, _IOFBF, 8192);
}

static int sim_train(int argc, char **argv)
{
	train_opts o;
	int rc = parse_train(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	apply_buffering(&o);
	nvml_api api;
	if ((rc = nvml_open(&api, "sim train")))
		return rc;
	unsigned count = 0, vis[SIM_MAX_GPUS];
	api.nvmlDeviceGetCount_v2(&count);
	/* --gpu and ranks count in the GPUs CUDA_VISIBLE_DEVICES shows, like a CUDA program. */
	unsigned nvis = visible_gpus(&api, count, vis);
	if (o.gpu + o.ranks > (long long)nvis) {
		nvml_close(&api);
		return gw_error(
		    GW_EXIT_USAGE, o.ranks > 1 ? "--ranks" : "--gpu",
		    "rank r runs on GPU --gpu + r", "needs GPUs %lld to %lld, %u %s visible", o.gpu,
		    o.gpu + o.ranks - 1, nvis,
		    getenv("CUDA_VISIBLE_DEVICES") ? "CUDA_VISIBLE_DEVICES makes" : "are");
	}
	train_shared *sh =
	    mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		nvml_close(&api);
		return gw_error(GW_EXIT_ENV, "sim train", NULL, "mmap: %s", strerror(errno));
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fflush(stdout);
	pid_t kids[SIM_MAX_GPUS] = {0};
	for (long long r = 1; r < o.ranks; r++) {
		pid_t pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			int code = run_rank(&o, &api, sh, r, vis[o.gpu + r]);
			fflush(stdout);
			_exit(code);
		}
		if (pid < 0) {
			__atomic_store_n(&sh->abort, 1, __ATOMIC_RELEASE);
			gw_error(GW_EXIT_ENV, "sim train", NULL, "fork: %s", strerror(errno));
			break;
		}
		kids[r] = pid;
	}
	rc = run_rank(&o, &api, sh, 0, vis[o.gpu]);
	/* The first rank to fail decides the exit code; the others were only stopped. */
	for (long long r = 1; r < o.ranks; r++) {
		if (!kids[r])
			continue;
		if (train_stop)
			kill(kids[r], SIGTERM);
		int st;
		while (waitpid(kids[r], &st, 0) < 0 && errno == EINTR)
			kill(kids[r], SIGTERM);
		int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (rc == 0 || (rc == 1 && code != 1 && code != 0))
			rc = code;
	}
	munmap(sh, sizeof *sh);
	nvml_close(&api);
	return rc;
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
