/*
 * sim_hog.c - `gpuwhy sim hog`: other processes loading the host's CPUs,
 * the noisy neighbour a job meets on a shared machine. N processes each
 * keep one core busy (or busy for a share of every 100 ms) for a while,
 * so that host contention can be recorded and diagnosed on purpose.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/opt.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define HOG_MAX 1024
#define HOG_PERIOD_NS 100000000LL

typedef struct {
	int cores;
	double seconds; /* 0: until stopped */
	int duty;       /* percent of each period spent computing */
} hog_opts;

static volatile sig_atomic_t hog_stop;

static void hog_on_signal(int sig)
{
	hog_stop = sig;
}

static int hog_parse(int argc, char **argv, hog_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	*o = (hog_opts){.cores = ncpu > 0 ? (int)ncpu : 1, .seconds = 0, .duty = 100};
	const opt_def opts[] = {
	    OPT_INT(0, "cores", "N", &o->cores, 1, HOG_MAX,
	            "busy processes (default: one per online CPU)", .why = N_("bad value '%s'"),
	            .hint = N_("a number from 1 to 1024")),
	    OPT_DOUBLE(0, "seconds", "S", &o->seconds, 0, 1e7,
	               "how long (default 0: until SIGINT or SIGTERM)", .why = N_("bad value '%s'"),
	               .hint = N_("seconds, like 30 or 0.5")),
	    OPT_INT(0, "duty", "PCT", &o->duty, 1, 100,
	            "busy share of every 100 ms, 1-100 (default 100)", .why = N_("bad value '%s'"),
	            .hint = N_("a percentage from 1 to 100")),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "sim hog",
	    .usage = "sim hog [--cores N] [--seconds S] [--duty PCT]",
	    .about = N_("Loads the host's CPUs like another user's job: N busy processes (named\n"
	                "gpuwhy-hog), each computing on one core. Prints their PIDs, runs until S\n"
	                "seconds have passed or it is interrupted, then stops them. Needs no GPU."),
	    .opts = opts,
	    .exits = N_("0 done, 2 bad option, 3 cannot start processes, 128+N on signal N")};
	int first;
	return opt_parse(&oc, argc, argv, &first);
}

static int64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* One busy process: duty % of every period on arithmetic, until the deadline (0: never). */
static void hog_child(const hog_opts *o, int64_t deadline)
{
	prctl(PR_SET_NAME, "gpuwhy-hog");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	volatile double x = 1.0;
	int64_t period = gw_mono_ns();
	while (!deadline || gw_mono_ns() < deadline) {
		int64_t c0 = thread_cpu_ns(), want = HOG_PERIOD_NS * o->duty / 100;
		while (thread_cpu_ns() - c0 < want && (!deadline || gw_mono_ns() < deadline))
			for (int i = 0; i < 20000; i++)
				x = x * 1.0000001 + 1e-9;
		period += HOG_PERIOD_NS;
		if (o->duty < 100)
			gw_sleep_until_ns(deadline && period > deadline ? deadline : period);
	}
	_exit(0);
}

/* Stop the children still running and reap them all. */
static void hog_reap(const pid_t *kids, long long n)
{
	for (long long i = 0; i < n; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	for (long long i = 0; i < n; i++)
		if (kids[i] > 0)
			while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
				;
}

int cmd_sim_hog(int argc, char **argv)
{
	hog_opts o;
	int rc = hog_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	struct sigaction sa = {.sa_handler = hog_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int64_t deadline = o.seconds > 0 ? gw_mono_ns() + (int64_t)(o.seconds * 1e9) : 0;
	pid_t *kids = calloc((size_t)o.cores, sizeof *kids);
	if (!kids)
		return gw_error(GW_EXIT_ENV, "sim hog", NULL, "out of memory");
	fflush(stdout);
	for (long long i = 0; i < o.cores; i++) {
		pid_t pid = fork();
		if (pid == 0)
			hog_child(&o, deadline);
		if (pid < 0) {
			int e = errno;
			hog_reap(kids, i);
			free(kids);
			return gw_error(GW_EXIT_ENV, "sim hog", N_("ask for fewer --cores"),
			                "cannot start a busy process: %s", strerror(e));
		}
		kids[i] = pid;
	}
	char span[64];
	snprintf(span, sizeof span, "%s", _("until stopped"));
	if (o.seconds > 0)
		snprintf(span, sizeof span, _("for %g s"), o.seconds);
	/* "PIDs" and the numbers after it end the line in every language: scripts read them. */
	printf(P_("sim hog: %d busy process at %d %% %s, PIDs",
	          "sim hog: %d busy processes at %d %% %s, PIDs", o.cores),
	       o.cores, o.duty, span);
	for (long long i = 0; i < o.cores; i++)
		printf(" %d", (int)kids[i]);
	putchar('\n');
	fflush(stdout);
	/* Wait for the children to finish on their own, or for a signal. */
	long long left = o.cores;
	while (left > 0 && !hog_stop) {
		pid_t w = waitpid(-1, NULL, 0);
		if (w < 0 && errno != EINTR)
			break;
		for (long long i = 0; w > 0 && i < o.cores; i++)
			if (kids[i] == w) {
				kids[i] = 0;
				left--;
			}
	}
	hog_reap(kids, o.cores);
	free(kids);
	return hog_stop ? 128 + hog_stop : GW_EXIT_OK;
}
