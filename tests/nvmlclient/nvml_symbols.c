/*
 * nvml_symbols.c - the simulated GPU as NVML clients find it: every symbol
 * nvidia-ml-py, pynvml, nvitop and nvtop bind (tests/fixtures/nvml-clients/)
 * is resolved with dlsym, and each one include/nvml_abi.h declares is called
 * with valid arguments on every GPU and MIG device handle, on every scenario
 * given, at pinned times before and after the lost GPU falls off the bus.
 *
 * usage: nvml_symbols LIBRARY LISTDIR SCENARIO.json...
 * Fails (exit 1) on a crash, on a symbol missing that NVML 13 exports, and on
 * an answer a real driver would not give valid arguments: UNINITIALIZED,
 * GPU_IS_LOST from a GPU on the bus, INVALID_ARGUMENT on a GPU handle or on
 * a MIG handle from a query NVML documents per MIG device.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nvml_abi.h"

#define PTR(ret, name, params) ret(*name) params;
static struct {
	NVML_ENTRY_POINTS(PTR)
	NVML_PEER_ENTRY_POINTS(PTR)
	NVML_CLIENT_ENTRY_POINTS(PTR)
	NVML_UNANSWERED_DEVICE_ENTRY_POINTS(PTR) NVML_UNANSWERED_ENTRY_POINTS(PTR)
} N;
#undef PTR

#define X_LEN 64
#define X_SLOTS 8
#define X_SLOT_BYTES 65536

struct call_ctx {
	nvmlDevice_t dev;
	unsigned index;
	char uuid[96], busid[32], serial[32];
	nvmlPciInfo_t pci;
	nvmlGpmSample_t sample;
	nvmlEventSet_t set;
	_Alignas(16) unsigned char buf[X_SLOTS][X_SLOT_BYTES];
};

/* A zeroed buffer for argument i, with what a caller sets first in versioned structs. */
static void *x_buf(struct call_ctx *x, int i, const char *type)
{
	unsigned char *b = x->buf[i % X_SLOTS];
	memset(b, 0, X_SLOT_BYTES);
	if (!strcmp(type, "unsignedint")) {
		*(unsigned *)(void *)b = X_LEN; /* counts: room for X_LEN entries */
	} else if (!strcmp(type, "nvmlMemory_v2_t")) {
		((nvmlMemory_v2_t *)(void *)b)->version = nvmlMemory_v2;
	} else if (!strcmp(type, "nvmlTemperature_t")) {
		((nvmlTemperature_t *)(void *)b)->version = nvmlTemperature_v1;
	} else if (!strcmp(type, "nvmlGpmSupport_t")) {
		((nvmlGpmSupport_t *)(void *)b)->version = NVML_GPM_SUPPORT_VERSION;
	} else if (!strcmp(type, "nvmlProcessDetailList_t")) {
		nvmlProcessDetailList_t *l = (void *)b;
		*l = (nvmlProcessDetailList_t){nvmlProcessDetailList_v1, NVML_PROCESS_MODE_COMPUTE,
		                               X_LEN, (nvmlProcessDetail_v1_t *)(void *)(b + 1024)};
	} else if (!strcmp(type, "nvmlProcessesUtilizationInfo_t")) {
		nvmlProcessesUtilizationInfo_t *u = (void *)b;
		*u = (nvmlProcessesUtilizationInfo_t){
		    nvmlProcessesUtilizationInfo_v1, X_LEN, 0,
		    (nvmlProcessUtilizationInfo_v1_t *)(void *)(b + 1024)};
	}
	return b;
}

static nvmlPciInfo_t *x_pci(struct call_ctx *x, int i)
{
	nvmlPciInfo_t *p = x_buf(x, i, "");
	*p = x->pci;
	return p;
}

struct call {
	const char *name;
	nvmlReturn_t (*fn)(struct call_ctx *);
};
#include "nvml_calls.inc"

/* Queries NVML documents on MIG device handles: INVALID_ARGUMENT there is a defect. */
static const char *const per_mig[] = {"nvmlDeviceGetName",
                                      "nvmlDeviceGetUUID",
                                      "nvmlDeviceGetMemoryInfo",
                                      "nvmlDeviceGetMemoryInfo_v2",
                                      "nvmlDeviceGetBAR1MemoryInfo",
                                      "nvmlDeviceGetComputeRunningProcesses",
                                      "nvmlDeviceGetComputeRunningProcesses_v2",
                                      "nvmlDeviceGetComputeRunningProcesses_v3",
                                      "nvmlDeviceGetGraphicsRunningProcesses",
                                      "nvmlDeviceGetGraphicsRunningProcesses_v2",
                                      "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                      "nvmlDeviceGetRunningProcessDetailList",
                                      "nvmlDeviceIsMigDeviceHandle",
                                      "nvmlDeviceGetGpuInstanceId",
                                      "nvmlDeviceGetComputeInstanceId",
                                      "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
                                      "nvmlDeviceGetAttributes_v2",
                                      NULL};

/*
 * Queries of MIG devices: on a GPU handle (not a MIG device's) or an index with
 * no MIG device behind it, INVALID_ARGUMENT is NVML's documented answer.
 */
static const char *const mig_only[] = {
    "nvmlDeviceGetGpuInstanceId", "nvmlDeviceGetComputeInstanceId",
    "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", "nvmlDeviceGetMigDeviceHandleByIndex", NULL};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

static volatile const char *current; /* for the crash message */
static int failures;

static void on_crash(int sig)
{
	const char *c = (const char *)current;
	char msg[256];
	int n = snprintf(msg, sizeof msg, "FAIL: signal %d in %s\n", sig, c ? c : "(setup)");
	if (write(2, msg, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

/* Call every entry point the clients bind on one handle. */
static void call_all(struct call_ctx *x, bool mig, bool lost, const char *where, char **want,
                     int n_want)
{
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		const struct call *c = &calls[i];
		bool wanted = false;
		for (int k = 0; k < n_want && !wanted; k++)
			wanted = !strcmp(want[k], c->name);
		if (!wanted)
			continue;
		current = c->name;
		nvmlReturn_t rc = c->fn(x);
		current = NULL;
		bool bad = rc == NVML_ERROR_UNINITIALIZED || rc == NVML_ERROR_UNKNOWN ||
		           (rc == NVML_ERROR_GPU_IS_LOST && !lost) ||
		           (rc == NVML_ERROR_INVALID_ARGUMENT &&
		            (mig ? in_list(per_mig, c->name) : !in_list(mig_only, c->name)));
		if (bad) {
			fprintf(stderr, "FAIL: %s: %s returned %d (%s)\n", where, c->name, rc,
			        N.nvmlErrorString(rc));
			failures++;
		}
	}
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Names from every *.txt of dir (one a line), exports apart; NULL-terminated arrays. */
static int read_list(const char *path, char ***out, int n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(2);
	}
	char line[256];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!*line)
			continue;
		*out = realloc(*out, (size_t)(n + 1) * sizeof **out);
		if (!*out)
			abort();
		(*out)[n++] = strdup(line);
	}
	fclose(f);
	return n;
}

/* A scenario of AMD GPUs alone: NVML rightly counts none (they are sysfs's, sim_amdfs.h). */
static bool amd_only_scenario(void)
{
	const char *path = getenv("GPUWHY_SIM_SCENARIO");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return false;
	static char buf[1 << 20];
	size_t len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = '\0';
	return strstr(buf, "\"vendor\": \"amd\"") != NULL;
}

static void open_devices(void *lib, const char *where, char **want, int n_want)
{
	unsigned n = 0;
	if (N.nvmlDeviceGetCount_v2(&n) == NVML_SUCCESS && n == 0 && amd_only_scenario())
		return;
	if (N.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS || n == 0) {
		fprintf(stderr, "FAIL: %s: no GPUs\n", where);
		failures++;
		return;
	}
	(void)lib;
	struct call_ctx *x = calloc(1, sizeof *x);
	if (!x)
		abort();
	N.nvmlEventSetCreate(&x->set);
	N.nvmlGpmSampleAlloc(&x->sample);
	for (unsigned i = 0; i < n; i++) {
		nvmlDevice_t d;
		if (N.nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS) {
			fprintf(stderr, "FAIL: %s: no handle for GPU %u\n", where, i);
			failures++;
			continue;
		}
		x->dev = d;
		x->index = i;
		char name[96];
		bool lost = N.nvmlDeviceGetName(d, name, sizeof name) == NVML_ERROR_GPU_IS_LOST;
		N.nvmlDeviceGetUUID(d, x->uuid, sizeof x->uuid);
		N.nvmlDeviceGetSerial(d, x->serial, sizeof x->serial);
		N.nvmlDeviceGetPciInfo_v3(d, &x->pci);
		memcpy(x->busid, x->pci.busId, sizeof x->busid);
		call_all(x, false, lost, where, want, n_want);
		unsigned max = 0;
		if (N.nvmlDeviceGetMaxMigDeviceCount(d, &max) != NVML_SUCCESS)
			continue;
		for (unsigned m = 0; m < max; m++) {
			if (N.nvmlDeviceGetMigDeviceHandleByIndex(d, m, &x->dev) != NVML_SUCCESS)
				continue;
			N.nvmlDeviceGetUUID(x->dev, x->uuid, sizeof x->uuid);
			call_all(x, true, lost, where, want, n_want);
		}
	}
	N.nvmlGpmSampleFree(x->sample);
	N.nvmlEventSetFree(x->set);
	free(x);
}

/* One scenario at one pinned time, in a child so that a crash is seen and named. */
static int run_one(const char *lib_path, const char *scenario, const char *t, char **want,
                   int n_want)
{
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		signal(SIGSEGV, on_crash);
		signal(SIGBUS, on_crash);
		signal(SIGABRT, on_crash);
		signal(SIGFPE, on_crash);
		setenv("GPUWHY_SIM_SCENARIO", scenario, 1);
		setenv("GPUWHY_SIM_TIME", t, 1);
		void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
		if (!lib) {
			fprintf(stderr, "FAIL: %s\n", dlerror());
			_exit(1);
		}
#define LOAD(ret, name, params) *(void **)&N.name = dlsym(lib, #name);
		NVML_ENTRY_POINTS(LOAD)
		NVML_PEER_ENTRY_POINTS(LOAD)
		NVML_CLIENT_ENTRY_POINTS(LOAD)
		NVML_UNANSWERED_DEVICE_ENTRY_POINTS(LOAD)
		NVML_UNANSWERED_ENTRY_POINTS(LOAD)
#undef LOAD
		char where[512];
		snprintf(where, sizeof where, "%s at t=%s", strrchr(scenario, '/') + 1, t);
		if (!N.nvmlInit_v2 || N.nvmlInit_v2() != NVML_SUCCESS) {
			fprintf(stderr, "FAIL: %s: nvmlInit_v2\n", where);
			_exit(1);
		}
		open_devices(lib, where, want, n_want);
		N.nvmlShutdown();
		_exit(failures ? 1 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/*
 * A client symbol the ABI header declares has a call in nvml_calls.inc, or is
 * one it leaves out on purpose: a header changed without the table being
 * generated again (scripts/gen-nvml-calls) fails here.
 */
#define NAME(ret, name, params) #name,
static const char *const declared[] = {
    NVML_ENTRY_POINTS(NAME) NVML_PEER_ENTRY_POINTS(NAME) NVML_CLIENT_ENTRY_POINTS(NAME)
        NVML_UNANSWERED_DEVICE_ENTRY_POINTS(NAME) NVML_UNANSWERED_ENTRY_POINTS(NAME) NULL};
#undef NAME

static void check_table(char **want, int n_want)
{
	for (int i = 0; i < n_want; i++) {
		if (!in_list(declared, want[i]) || in_list(uncalled, want[i]))
			continue;
		bool called = false;
		for (size_t k = 0; k < sizeof calls / sizeof calls[0] && !called; k++)
			called = !strcmp(calls[k].name, want[i]);
		if (!called) {
			fprintf(
			    stderr,
			    "FAIL: %s is declared but has no call (run scripts/gen-nvml-calls)\n",
			    want[i]);
			failures++;
		}
	}
}

/* Every client's symbols: resolved, or absent from NVML 13 as well. Returns those resolved. */
static int resolve_lists(const char *lib_path, const char *dir, char ***want)
{
	char path[4096];
	char **exports = NULL, **names = NULL;
	snprintf(path, sizeof path, "%s/nvml-13.3.29-exports.txt", dir);
	int n_exp = read_list(path, &exports, 0), n = 0;
	DIR *dp = opendir(dir);
	if (!dp) {
		perror(dir);
		exit(2);
	}
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 4, ".txt") ||
		    !strcmp(e->d_name, "nvml-13.3.29-exports.txt"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		n = read_list(path, &names, n);
	}
	closedir(dp);
	void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nvml_symbols: %s\n", dlerror());
		exit(3);
	}
	int n_want = 0;
	for (int i = 0; i < n; i++) {
		bool dup = false;
		for (int k = 0; k < i && !dup; k++)
			dup = !strcmp(names[k], names[i]);
		if (dup)
			continue;
		if (dlsym(lib, names[i])) {
			*want = realloc(*want, (size_t)(n_want + 1) * sizeof **want);
			if (!*want)
				abort();
			(*want)[n_want++] = strdup(names[i]);
			continue;
		}
		for (int k = 0; k < n_exp; k++)
			if (!strcmp(exports[k], names[i])) {
				fprintf(stderr, "FAIL: missing symbol %s (NVML 13 exports it)\n",
				        names[i]);
				failures++;
				break;
			}
	}
	dlclose(lib);
	free_list(names, n);
	free_list(exports, n_exp);
	return n_want;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: nvml_symbols LIBRARY LISTDIR SCENARIO.json...\n");
		return 2;
	}
	char **want = NULL;
	int n_want = resolve_lists(argv[1], argv[2], &want);
	check_table(want, n_want);
	char state[] = "/tmp/nvml_symbols.XXXXXX";
	if (!mkdtemp(state))
		return 3;
	setenv("GPUWHY_SIM_STATE", state, 1);
	setenv("GPUWHY_SIM_QUIET", "1", 1);
	/* Before the lost GPU falls off (30 s), after, and once the MIG processes run. */
	static const char *const times[] = {"2", "40", "300"};
	for (int s = 3; s < argc; s++)
		for (int t = 0; t < 3; t++)
			failures += run_one(argv[1], argv[s], times[t], want, n_want);
	char cmd[sizeof state + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
	if (system(cmd) != 0)
		fprintf(stderr, "nvml_symbols: could not remove %s\n", state);
	printf("%d symbols resolved and called on %d scenarios: %s\n", n_want, argc - 3,
	       failures ? "FAILED" : "ok");
	free_list(want, n_want);
	return failures ? 1 : 0;
}
