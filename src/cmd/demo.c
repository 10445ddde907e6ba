/*
 * demo.c - `gpuwhy demo`: the whole loop on the simulated GPU in under a
 * minute: record a data-starved job, diagnose it, apply the fix sized to
 * this machine's free cores, compare, and check the claim against what the
 * recordings measured (saying plainly when the machine did not let it hold).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "diagnose/diag.h"
#include "report/report.h"
#include "gpu/loader.h"
#include "model/timeline.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/selfexe.h"
#include "util/timeutil.h"

/* The job: each batch costs DEMO_CPU_MS of one core, each step DEMO_GPU_MS of GPU. */
#define DEMO_CPU_MS 60
#define DEMO_GPU_MS 20
#define DEMO_STEPS "40"
#define DEMO_MAX_WORKERS 4

static char demo_exe[PATH_MAX];

/* Run our own binary with args (stdout to `out` when given); returns its exit status. */
static int self(const char *const *args, const char *out)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const char *argv[32];
		int k = 0;
		argv[k++] = demo_exe;
		for (int i = 0; args[i] && k < 31; i++)
			argv[k++] = args[i];
		argv[k] = NULL;
		if (out) {
			int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (fd >= 0)
				dup2(fd, STDOUT_FILENO);
		}
		execv(demo_exe, (char *const *)argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void banner(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void banner(const char *fmt, ...)
{
	bool tty = isatty(STDOUT_FILENO);
	va_list ap;
	va_start(ap, fmt);
	fputs(tty ? "\n\033[1m== " : "\n== ", stdout);
	vprintf(_(fmt), ap);
	fputs(tty ? "\033[0m\n\n" : "\n\n", stdout);
	va_end(ap);
}

/* ---- the machine ---- */

typedef struct {
	long ncpu;
	double free; /* cores idle over the last half second */
} demo_cpus;

/* Busy and total jiffies of all CPUs from /proc/stat's first line. */
static int cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	unsigned long long v[8] = {0};
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
	               &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return -1;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4]; /* idle and iowait are free for a worker */
	return 0;
}

static void measure_cpus(demo_cpus *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	c->ncpu = n > 0 ? n : 1;
	c->free = (double)c->ncpu;
	unsigned long long b0, t0, b1, t1;
	if (cpu_jiffies(&b0, &t0) != 0)
		return;
	gw_sleep_until_ns(gw_mono_ns() + 500000000LL);
	if (cpu_jiffies(&b1, &t1) != 0 || t1 <= t0)
		return;
	double busy = (double)(b1 - b0) / (double)(t1 - t0);
	c->free = (1.0 - busy) * (double)c->ncpu;
}

/* Workers for the fix: what the free cores can run at once, at least one more than before. */
static int choose_workers(const demo_cpus *c)
{
	int w = (int)floor(c->free + 0.25);
	return w < 2 ? 2 : w > DEMO_MAX_WORKERS ? DEMO_MAX_WORKERS : w;
}

/* The best the fix can do: batches come W times as fast until the GPU phase bounds the step. */
static double ideal_speedup(int workers)
{
	return DEMO_CPU_MS / fmax(DEMO_GPU_MS, (double)DEMO_CPU_MS / workers);
}

/* ---- the runs ---- */

static int record_job(const char *rec, const char *log, int workers)
{
	char w[16], cpu[16], gpu[16];
	snprintf(w, sizeof w, "%d", workers);
	snprintf(cpu, sizeof cpu, "%d", DEMO_CPU_MS);
	snprintf(gpu, sizeof gpu, "%d", DEMO_GPU_MS);
	const char *a[] = {"run",    "-o",       rec,     "-i",        "200ms",    "--",
	                   demo_exe, "sim",      "train", "--workers", w,          "--cpu-ms",
	                   cpu,      "--gpu-ms", gpu,     "--steps",   DEMO_STEPS, NULL};
	printf(_("(the job's step lines go to %s)\n"), log);
	return self(a, log);
}

/* Where a recording's CPUs went: the job's process tree, and everything else. */
static void cpu_split(const timeline *tl, const demo_cpus *c, double *job, double *others)
{
	double tree = tl_wmean(tl, tl->h[HM_TREE_CPU], 0, tl->n) / 100.0;
	double all = tl_wmean(tl, tl->h[HM_CPU_BUSY_AVG], 0, tl->n) / 100.0 * (double)c->ncpu;
	*job = tree;
	*others = isnan(all) || isnan(tree) ? NAN : fmax(0, all - tree);
}

/* Why the comparison made no "faster" claim, from its own figures. */
static void no_gain_reason(const diag_comparison *cmp)
{
	if (cmp->verdict > 0)
		printf(_("Steps got slower (%+.1f %%, 95 %% interval %+.1f to %+.1f %%).\n"),
		       cmp->diff_pct, cmp->steps.lo_pct, cmp->steps.hi_pct);
	else if (cmp->withheld_by_load) {
		const diag_host_load *l = cmp->load_base.loaded ? &cmp->load_base : &cmp->load_cand;
		printf(_("Other processes loaded this machine during a run (%.0f %% of a core"),
		       l->others_cpu);
		for (int i = 0; i < l->nhogs; i++)
			printf(_("%sPID %u %s"), i ? ", " : ": ", l->hog[i].pid, l->hog[i].cmd);
		printf(_("), and the change (%+.1f %%) is within what that load explains (%.1f "
		         "%%).\n"),
		       cmp->diff_pct, cmp->interference_pct);
	} else if (cmp->equivalent)
		printf(_("The change (%+.1f %%) is smaller than the %.1f %% that counts as one.\n"),
		       cmp->diff_pct, cmp->min_diff_pct);
	else
		printf(_("The change (%+.1f %%) is within the runs' noise (95 %% interval %+.1f to "
		         "%+.1f %%).\n"),
		       cmp->diff_pct, cmp->steps.lo_pct, cmp->steps.hi_pct);
}

/*
 * Say whether the fix held: the verdict is the comparison's, the same that
 * `gpuwhy compare` printed, and the speed-up printed is the same two means,
 * so the two lines cannot disagree. The demo fails only when its own
 * measurement shows no gain, and then says why.
 */
static int judge(const diag_comparison *cmp, const timeline *cand, int workers, const demo_cpus *c)
{
	double a = cmp->mean.base * 1000, b = cmp->mean.cand * 1000;
	double speedup = a / b, ideal = ideal_speedup(workers), job, others;
	cpu_split(cand, c, &job, &others);
	printf(_("Mean step: %.0f ms with 1 worker, %.0f ms with %d: %.2fx as fast "
	         "(at best %.1fx: the GPU phase takes %d ms).\n"),
	       a, b, workers, speedup, ideal, DEMO_GPU_MS);
	if (cmp->verdict < 0) {
		fputs(_("The fix worked: the GPU waits less for data."), stdout);
		if (speedup < 0.7 * ideal)
			printf(
			    _(" Less than the best case: the job used %.1f of the %ld cores, other "
			      "processes %.1f."),
			    job, c->ncpu, others);
		putchar('\n');
		return GW_EXIT_OK;
	}
	fputs(_("The fix did not help on this machine. "), stdout);
	no_gain_reason(cmp);
	if (!isnan(job) && job < 0.7 * workers)
		printf(
		    _("The job used %.1f cores for %d workers (other processes %.1f of %ld): with "
		      "%d free cores the same change makes steps up to %.1fx as fast.\n"),
		    job, workers, others, c->ncpu, workers, ideal);
	return GW_EXIT_PROBLEMS;
}

/* Check the claim "more workers make steps faster" against the two recordings. */
static int verdict(const char *base, const char *cand, int workers, const demo_cpus *c)
{
	timeline *ta = NULL, *tb = NULL;
	diag_meta ma = {0}, mb = {0};
	if (report_load(base, NULL, &ta, &ma) != 0)
		return GW_EXIT_ENV;
	if (report_load(cand, NULL, &tb, &mb) != 0) {
		tl_free(ta);
		diag_meta_free(&ma);
		return GW_EXIT_ENV;
	}
	diag_opts o;
	diag_opts_default(&o);
	diag_comparison cmp;
	diag_compare(ta, &ma, tb, &mb, &o, &cmp);
	int rc = cmp.by_steps ? judge(&cmp, tb, workers, c)
	                      : gw_error(GW_EXIT_ENV, "demo", NULL, "the runs have no step times");
	diag_comparison_free(&cmp);
	tl_free(ta);
	tl_free(tb);
	diag_meta_free(&ma);
	diag_meta_free(&mb);
	return rc;
}

static int demo_dir(const char **dir, char *tmp)
{
	if (!*dir) {
		*dir = mkdtemp(tmp);
		if (!*dir)
			return gw_error(GW_EXIT_ENV, "/tmp", NULL, "cannot create a directory: %s",
			                strerror(errno));
	} else if (mkdir(*dir, 0755) != 0 && errno != EEXIST) {
		return gw_error(GW_EXIT_ENV, *dir, NULL, "cannot create: %s", strerror(errno));
	}
	return 0;
}

int cmd_demo(int argc, char **argv, const gw_global *g)
{
	const char *dir = NULL;
	const opt_def opts[] = {
	    OPT_STRING('d', "dir", "DIR", &dir,
	               "keep the recordings, the jobs' output and an HTML report in DIR (default: "
	               "a new directory under /tmp)"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "demo",
	    .usage = "demo [--dir DIR]",
	    .about =
	        N_("Records a one-worker synthetic training run, diagnoses it (data-starved: the\n"
	           "GPU waits for the CPU), records the same job with as many workers as this\n"
	           "machine has free cores (2 to 4), compares the two and checks that the fix\n"
	           "made steps faster, on the simulated GPU (scenario h100x1, or the one given\n"
	           "with --sim)."),
	    .opts = opts,
	    .exits = N_("0 the fix worked, 1 it did not on this machine (the reason is printed), 2 "
	                "usage error, 3 a step of the demo could not run")};
	int first, orc = opt_parse(&oc, argc, argv, &first);
	if (orc)
		return orc == OPT_HELP ? GW_EXIT_OK : orc;
	/* The synthetic job can only load a simulated GPU: use one unless told which. */
	if (!g->sim) {
		gw_fail lf;
		if (gpu_loader_setup("h100x1", NULL, g->argv0, &lf) != 0)
			return gw_fail_print(&lf);
	}
	char tmp[] = "/tmp/gpuwhy-demo-XXXXXX";
	int rc = demo_dir(&dir, tmp);
	if (rc)
		return rc;
	const char *exe = gw_self_exe();
	if (!exe)
		return gw_error(GW_EXIT_ENV, "/proc/self/exe", NULL,
		                "cannot find the gpuwhy binary");
	snprintf(demo_exe, sizeof demo_exe, "%s", exe);
	char base[PATH_MAX], cand[PATH_MAX], html[PATH_MAX], log1[PATH_MAX], log2[PATH_MAX];
	snprintf(base, sizeof base, "%s/one-worker.gpuwhy", dir);
	snprintf(cand, sizeof cand, "%s/more-workers.gpuwhy", dir);
	snprintf(html, sizeof html, "%s/one-worker.html", dir);
	snprintf(log1, sizeof log1, "%s/one-worker.log", dir);
	snprintf(log2, sizeof log2, "%s/more-workers.log", dir);
	/* A private state directory so the demo's GPU is busy only with the demo's job. */
	char state[PATH_MAX];
	snprintf(state, sizeof state, "%s/simstate", dir);
	setenv("GPUWHY_SIM_STATE", state, 1);

	banner("1/4  A training job with one data-loading worker (CPU %d ms per batch, GPU %d "
	       "ms per step)",
	       DEMO_CPU_MS, DEMO_GPU_MS);
	if ((rc = record_job(base, log1, 1)) != 0)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "the first run failed (exit %d)", rc);

	banner("2/4  What is wrong with it?  gpuwhy report");
	const char *a2[] = {"report", base, NULL};
	if ((rc = self(a2, NULL)) > 1)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "report failed (exit %d)", rc);
	const char *a2h[] = {"report", base, "--format", "html", "-o", html, NULL};
	self(a2h, NULL);

	demo_cpus cpus;
	measure_cpus(&cpus);
	int workers = choose_workers(&cpus);
	banner("3/4  The fix the diagnosis suggests: more data-loading workers (%d)", workers);
	if (cpus.free >= workers - 0.25)
		printf(_("This machine has %ld cores, %.1f of them free just now: %d workers can "
		         "prepare batches side by side.\n"),
		       cpus.ncpu, cpus.free, workers);
	else
		printf(
		    P_("This machine has %ld core, only %.1f free just now (other processes use "
		       "the rest): trying %d workers; the end of the demo says whether that "
		       "helped.\n",
		       "This machine has %ld cores, only %.1f free just now (other processes use "
		       "the rest): trying %d workers; the end of the demo says whether that "
		       "helped.\n",
		       cpus.ncpu),
		    cpus.ncpu, cpus.free, workers);
	if ((rc = record_job(cand, log2, workers)) != 0)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "the second run failed (exit %d)", rc);

	banner("4/4  Did it help?  gpuwhy compare");
	const char *a4[] = {"compare", base, cand, NULL};
	if ((rc = self(a4, NULL)) > 1)
		return gw_error(GW_EXIT_ENV, "demo", NULL, "compare failed (exit %d)", rc);
	putchar('\n');
	rc = verdict(base, cand, workers, &cpus);
	putchar('\n');
	printf(_("Recordings, the jobs' output and an HTML report are in %s\n"), dir);
	return rc;
}
