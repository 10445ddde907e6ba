/* demo.c - `gpuwhy demo`: the whole loop on the simulated GPU in under a minute. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gpu/loader.h"
#include "util/err.h"

static void usage(FILE *out)
{
	fputs("usage: gpuwhy demo [--dir DIR]\n"
	      "\n"
	      "Records a one-worker synthetic training run, diagnoses it (data-starved: the\n"
	      "GPU waits for the CPU), records the same job with four workers, and compares\n"
	      "the two. Uses the simulated GPU (scenario h100x1) unless --sim or --nvml is\n"
	      "given. Recordings are kept in DIR (default: a new directory under /tmp).\n",
	      out);
}

static char demo_exe[PATH_MAX];

/* Run our own binary with args; returns its exit status. */
static int self(const char *const *args)
{
	const char *exe = demo_exe;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *argv[32];
		int k = 0;
		argv[k++] = exe;
		for (int i = 0; args[i] && k < 31; i++)
			argv[k++] = args[i];
		argv[k] = NULL;
		execv(exe, (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void banner(const char *text)
{
	printf("\n\033[1m== %s\033[0m\n\n", text);
}

int cmd_demo(int argc, char **argv, const gw_global *g)
{
	static const struct option opts[] = {{"dir", required_argument, NULL, 'd'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *dir = NULL;
	int ch;
	while ((ch = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'd': dir = optarg; break;
		case 'h': usage(stdout); return GW_EXIT_OK;
		default: usage(stderr); return GW_EXIT_USAGE;
		}
	}
	if (!g->sim && !g->nvml && !getenv("GPUWHY_NVML")) {
		int rc = gpu_loader_configure("h100x1", NULL, g->argv0);
		if (rc)
			return rc;
	}
	char tmp[] = "/tmp/gpuwhy-demo-XXXXXX";
	if (!dir) {
		dir = mkdtemp(tmp);
		if (!dir)
			return gw_error(GW_EXIT_ENV, "/tmp", NULL, "cannot create a directory: %s",
					strerror(errno));
	} else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		return gw_error(GW_EXIT_ENV, dir, NULL, "cannot create: %s", strerror(errno));
	}
	char base[PATH_MAX], cand[PATH_MAX], html[PATH_MAX];
	snprintf(base, sizeof base, "%s/one-worker.gpuwhy", dir);
	snprintf(cand, sizeof cand, "%s/four-workers.gpuwhy", dir);
	snprintf(html, sizeof html, "%s/one-worker.html", dir);
	/* A private state directory so the demo's GPU is busy only with the demo's job. */
	char state[PATH_MAX];
	snprintf(state, sizeof state, "%s/simstate", dir);
	setenv("GPUWHY_SIM_STATE", state, 1);

	banner("1/4  A training job with one data-loading worker (CPU 60 ms per batch, GPU 20 ms)");
	ssize_t n = readlink("/proc/self/exe", demo_exe, sizeof demo_exe - 1);
	if (n <= 0)
		return gw_error(GW_EXIT_ENV, "/proc/self/exe", NULL, "cannot find the gpuwhy binary");
	demo_exe[n] = '\0';
	const char *exe = demo_exe;
	const char *a1[] = {"run",     "-o",	    base,      "-i",	  "200ms", "--",
			    exe,       "sim",	    "train",   "--workers", "1",     "--cpu-ms",
			    "60",      "--gpu-ms", "20",      "--steps", "40",    NULL};
	int rc = self(a1);
	if (rc != 0)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "the first run failed (exit %d)", rc);

	banner("2/4  What is wrong with it?  gpuwhy report");
	const char *a2[] = {"report", base, NULL};
	rc = self(a2);
	if (rc > 1)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "report failed (exit %d)", rc);
	const char *a2h[] = {"report", base, "--format", "html", "-o", html, NULL};
	self(a2h);

	banner("3/4  The fix the diagnosis suggests: four data-loading workers");
	const char *a3[] = {"run",     "-o",	    cand,      "-i",	  "200ms", "--",
			    exe,       "sim",	    "train",   "--workers", "4",     "--cpu-ms",
			    "60",      "--gpu-ms", "20",      "--steps", "40",    NULL};
	rc = self(a3);
	if (rc != 0)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "the second run failed (exit %d)", rc);

	banner("4/4  Did it help?  gpuwhy compare");
	const char *a4[] = {"compare", base, cand, NULL};
	rc = self(a4);
	printf("\nRecordings and an HTML report are in %s\n", dir);
	return rc > 1 ? GW_EXIT_ENV : GW_EXIT_OK;
}
