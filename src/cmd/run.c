/* run.c - `gpuwhy run -- CMD`: run a command, record GPUs + host + its process tree, summarise. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "util/opt.h"
#include "util/i18n.h"
#include "record/summary.h"
#include "gpu/gpu.h"
#include "record/recorder.h"
#include "record/steps.h"
#include "cmd/run_relay.h"
#include "model/timeline.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define RUN_LINE_MAX 65536

static volatile sig_atomic_t run_child_pid;
static volatile sig_atomic_t run_got_sigint;
/* Any INT, TERM or HUP: after CMD exited, it ends the wait for CMD's leftovers. */
static volatile sig_atomic_t run_signalled;

/*
 * Forward INT, TERM and HUP to the command. A Ctrl-C typed at the terminal
 * (si_code SI_KERNEL) already reached the command through its process group,
 * so only a signal sent by a process (kill -INT, a scheduler) is passed on:
 * the command sees each interrupt once.
 */
static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	run_signalled = 1;
	/* Before CMD exists, remember an interrupt and pass it on once it does. */
	if (sig == SIGINT && run_child_pid <= 0) {
		run_got_sigint = 1;
		return;
	}
	if (sig == SIGINT && si && si->si_code == SI_KERNEL)
		return;
	if (run_child_pid > 0)
		kill((pid_t)run_child_pid, sig);
}

typedef struct {
	char buf[RUN_LINE_MAX];
	size_t len;
} line_buf;

typedef struct {
	recorder *rec;
	steps_matcher *steps;
	steps_matcher *fd_steps;
	long oom_seen;
	long nsteps;
	long stop_steps;    /* stop the command after this many steps; 0: never */
	int64_t stop_at_ns; /* monotonic deadline; 0: none */
	pid_t pid;
	bool stop_sent; /* the command was stopped by a limit, not by itself */
} run_ctx;

/* A limit was reached: end the command the way Ctrl-C would, so it can clean up. */
static void run_stop(run_ctx *rc, const char *why)
{
	if (rc->stop_sent || rc->pid <= 0)
		return;
	rc->stop_sent = true;
	recorder_event(rc->rec, TL_EV_ANNOTATION, -1, 0, why);
	kill(rc->pid, SIGTERM);
}

static void on_line(run_ctx *rc, char *line, bool from_fd)
{
	long step;
	if (from_fd) {
		/* "step" or "step N" */
		if (!strncmp(line, "step", 4) && steps_match(rc->fd_steps, line, &step)) {
			recorder_step(rc->rec, step, line);
			rc->nsteps++;
		}
	} else if (steps_match(rc->steps, line, &step)) {
		recorder_step(rc->rec, step, line);
		rc->nsteps++;
	}
	if (rc->stop_steps > 0 && rc->nsteps >= rc->stop_steps)
		run_stop(rc, "stopped after the steps asked for (--stop-after-steps)");
	if (from_fd)
		return;
	if (steps_is_oom(line)) {
		rc->oom_seen++;
		recorder_event(rc->rec, TL_EV_OOM, -1, 0, line);
	}
}

/* Split a chunk into lines on \n and \r (progress bars), keeping partial lines. */
static void feed(run_ctx *rc, line_buf *lb, const char *data, size_t n, bool from_fd)
{
	for (size_t i = 0; i < n; i++) {
		char ch = data[i];
		if (ch == '\n' || ch == '\r') {
			lb->buf[lb->len] = '\0';
			if (lb->len)
				on_line(rc, lb->buf, from_fd);
			lb->len = 0;
		} else if (lb->len < RUN_LINE_MAX - 1) {
			lb->buf[lb->len++] = ch;
		}
	}
}

static char *join_argv(char **argv)
{
	size_t len = 1;
	for (char **a = argv; *a; a++)
		len += strlen(*a) + 3;
	char *s = malloc(len);
	s[0] = '\0';
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

/* fork + exec with pipes; exec failure comes back through a CLOEXEC pipe. */
static pid_t spawn(char **argv, int out_fd[2], int err_fd[2], int step_fd[2], int *exec_errno)
{
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(ep[0]);
		close(ep[1]);
		return -1;
	}
	if (pid == 0) {
		close(ep[0]);
		dup2(out_fd[1], 1);
		dup2(err_fd[1], 2);
		close(out_fd[0]);
		close(out_fd[1]);
		close(err_fd[0]);
		close(err_fd[1]);
		close(step_fd[0]);
		char fdv[16];
		snprintf(fdv, sizeof fdv, "%d", step_fd[1]);
		setenv("GPUWHY_STEP_FD", fdv, 1);
		/* Pipes make Python block-buffer stdout; step times need every line now. */
		setenv("PYTHONUNBUFFERED", "1", 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		execvp(argv[0], argv);
		int e = errno;
		ssize_t w = write(ep[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(ep[1]);
	int e = 0;
	ssize_t r;
	do
		r = read(ep[0], &e, sizeof e);
	while (r < 0 && errno == EINTR);
	close(ep[0]);
	*exec_errno = r == (ssize_t)sizeof e ? e : 0;
	return pid;
}

static int wait_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* One read from pipe i: relayed (stdout, stderr) and looked at for steps. 0 at its end. */
static int pump_read(run_ctx *rc, int *fd, line_buf *lb, int i)
{
	char chunk[8192];
	ssize_t r = read(*fd, chunk, sizeof chunk);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	/* Our stdout gone: recording goes on all the same. */
	if (i < 2)
		run_write_all(i + 1, chunk, (size_t)r);
	feed(rc, lb, chunk, (size_t)r, i == 2);
	return 1;
}

/*
 * CMD exited: all it wrote is in the pipes now, so what they hold is read
 * without waiting (and recorded); what comes later is its leftovers', and
 * only relayed (run_relay_rest).
 */
static void pump_drain(run_ctx *rc, int fds[3], line_buf *lbs)
{
	for (int i = 0; i < 3; i++) {
		if (fds[i] < 0)
			continue;
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
		while (fds[i] >= 0 && pump_read(rc, &fds[i], &lbs[i], i))
			;
		if (lbs[i].len) {
			lbs[i].buf[lbs[i].len] = '\0';
			on_line(rc, lbs[i].buf, i == 2);
			lbs[i].len = 0;
		}
	}
}

/* Pump output until CMD has exited, then read what it left in the pipes. */
static int pump(run_ctx *rc, pid_t pid, int fds[3])
{
	line_buf *lbs = calloc(3, sizeof *lbs);
	int status = 0;
	for (;;) {
		struct pollfd pf[3];
		for (int i = 0; i < 3; i++)
			pf[i] = (struct pollfd){fds[i], POLLIN, 0};
		int n = poll(pf, 3, 100);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 3 && n > 0; i++)
			if (fds[i] >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				pump_read(rc, &fds[i], &lbs[i], i);
		if (rc->stop_at_ns && gw_mono_ns() >= rc->stop_at_ns)
			run_stop(rc, "stopped at the time asked for (--stop-after)");
		if (waitpid(pid, &status, WNOHANG) == pid) {
			run_child_pid = 0;
			break;
		}
	}
	pump_drain(rc, fds, lbs);
	free(lbs);
	int st = wait_status(status);
	/* Ended by our SIGTERM (or exiting on it): the run did what was asked. */
	if (rc->stop_sent && (st == 0 || st == 128 + SIGTERM))
		return 0;
	return st;
}

typedef struct {
	const char *out;
	int64_t interval_ns;
	const char *step_re;
	bool summary;
	int64_t stop_steps;
	int64_t stop_ns;
	int first; /* argv index of CMD */
} run_opts;

static int parse_opts(int argc, char **argv, run_opts *o)
{
	bool no_summary = false;
	const opt_def opts[] = {
	    OPT_STRING(
	        'o', "output", "FILE", &o->out,
	        "recording to write (default run.gpuwhy; an existing recording is replaced)"),
	    OPT_DURATION('i', "interval", "DUR", &o->interval_ns, 0,
	                 "sampling interval: 1s (default), 100ms, ... (10ms..1h)", .min = 0.01,
	                 .max = 3600, .why = N_("invalid interval '%s' (10ms to 1h)"),
	                 .hint = N_("e.g. 1s, 500ms, 100ms")),
	    OPT_STRING(0, "step-regex", "RE", &o->step_re,
	               "POSIX extended regex marking a step line; its first group, if any, is the "
	               "step number (default: step N, iter N, [N/M], Epoch E ... N/M, tqdm bars)"),
	    OPT_FLAG(0, "no-summary", &no_summary, "do not print the summary at the end"),
	    OPT_INT64(0, "stop-after-steps", "N", &o->stop_steps, 1, 100000000,
	              "stop CMD (SIGTERM to it) once N step lines were seen",
	              .why = N_("'%s' is not a whole number from 1"), .hint = N_("e.g. 50")),
	    OPT_DURATION(0, "stop-after", "DUR", &o->stop_ns, 0,
	                 "stop CMD once it ran this long (30s, 2m, ...). A CMD stopped this way "
	                 "counts as done: exit 0, recorded 0",
	                 .min = 1e-9, .max = 1e9, .why = N_("invalid duration '%s'"),
	                 .hint = N_("e.g. 60s, 5m")),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "run",
	    .usage = "run [-o FILE] [--interval DUR] [--step-regex RE] [--no-summary]\n"
	             "           [--stop-after-steps N] [--stop-after DUR] -- CMD [ARGS...]",
	    .about =
	        N_("Runs CMD with its stdin, stdout and stderr passed through, records GPUs, the "
	           "host\nand CMD's whole process tree into FILE (default run.gpuwhy) while it "
	           "runs,\ntimestamps step lines in its output, and ends with a summary and the "
	           "diagnosis."),
	    .opts = opts,
	    .more = N_("Step markers without output parsing: the program may write a line \"step\" "
	               "or\n\"step N\" to the file descriptor named by $GPUWHY_STEP_FD.\n\n"
	               "The recording ends when CMD exits. What the processes it left running "
	               "write\nto its output afterwards is passed on, as tee would, until they "
	               "close it:\nby gpuwhy for up to 5 s (then comes the summary), after that "
	               "by a process\nnamed gpuwhy-relay until the last of them is gone, so none "
	               "writes into a\nclosed pipe. A signal to gpuwhy ends its wait at once."),
	    .exits = N_("CMD's exit status (128+N when killed by signal N; 127 when CMD cannot be "
	                "started), 2 usage error, 3 environment or I/O error"),
	    .max_args = -1,
	    .stop_at_arg = true};
	int rc = opt_parse(&oc, argc, argv, &o->first);
	if (rc)
		return rc;
	o->summary = !no_summary;
	if (o->first >= argc)
		return gw_error(GW_EXIT_USAGE, "run", N_("gpuwhy run -- python train.py"),
		                "no command given");
	return 0;
}

int cmd_run(int argc, char **argv, const gw_global *g)
{
	run_opts o = {.out = "run.gpuwhy", .interval_ns = 1000000000LL, .summary = true};
	int rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? GW_EXIT_OK : rc;
	char **cmd = argv + o.first;
	char err[256];
	run_ctx rx = {0};
	rx.steps = steps_matcher_new(o.step_re, err, sizeof err);
	if (!rx.steps)
		return gw_error(GW_EXIT_USAGE, "--step-regex",
		                N_("a POSIX extended regular expression"), "%s", err);
	rx.fd_steps = steps_matcher_new("^step[[:space:]]*([0-9]*)", err, sizeof err);
	gpu_ctx *gc = NULL;
	gw_fail gf;
	gpu_open_opts go = {.gpus = g->gpus, .failure = &gf};
	if (gpu_open(&go, &gc) != 0) {
		gc = NULL;
		gw_fail_print(&gf);
		fprintf(stderr, "gpuwhy: run: %s\n", _("recording the host side only"));
	}
	char *cmdline = join_argv(cmd);
	recorder_opts ro = {
	    .path = o.out, .interval_ns = o.interval_ns, .gpu = gc, .command = cmdline};
	if ((rc = recorder_open(&ro, &rx.rec)) != 0) {
		free(cmdline);
		steps_matcher_free(rx.steps);
		steps_matcher_free(rx.fd_steps);
		gpu_close(gc);
		return rc;
	}
	int out_p[2], err_p[2], step_p[2];
	if (pipe2(out_p, O_CLOEXEC) || pipe2(err_p, O_CLOEXEC) || pipe(step_p)) {
		gw_error(GW_EXIT_ENV, "run", NULL, "cannot create pipes: %s", strerror(errno));
		recorder_finish(rx.rec, -1);
		return GW_EXIT_ENV;
	}
	fcntl(step_p[0], F_SETFD, FD_CLOEXEC);
	struct sigaction sa = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int exec_errno = 0;
	pid_t pid = spawn(cmd, out_p, err_p, step_p, &exec_errno);
	close(out_p[1]);
	close(err_p[1]);
	close(step_p[1]);
	int status;
	if (pid < 0 || exec_errno) {
		gw_error(GW_EXIT_ENV, cmd[0], N_("check the command name and PATH"),
		         "cannot execute: %s", strerror(exec_errno ? exec_errno : errno));
		if (pid > 0)
			waitpid(pid, NULL, 0);
		close(out_p[0]);
		close(err_p[0]);
		close(step_p[0]);
		recorder_finish(rx.rec, 127);
		status = 127;
	} else {
		run_child_pid = pid;
		/* A Ctrl-C that came while CMD was being started did not reach it. */
		if (run_got_sigint)
			kill(pid, SIGINT);
		rx.pid = pid;
		rx.stop_steps = o.stop_steps;
		rx.stop_at_ns = o.stop_ns ? gw_mono_ns() + o.stop_ns : 0;
		recorder_follow(rx.rec, pid);
		recorder_start(rx.rec);
		int fds[3] = {out_p[0], err_p[0], step_p[0]};
		status = pump(&rx, pid, fds);
		recorder_event(rx.rec, TL_EV_PROC_EXIT, -1, status, cmdline);
		if (recorder_finish(rx.rec, status) != 0)
			fprintf(stderr, "gpuwhy: %s: %s\n", o.out,
			        _("the recording is incomplete (see the error above)"));
		/* The recording ended with CMD; its leftovers' output still reaches the
		 * terminal, and the summary comes after it. */
		run_relay_rest(fds, RUN_RELAY_WAIT_NS, &run_signalled);
		if (o.summary)
			summary_print_file(o.out, stderr);
	}
	free(cmdline);
	steps_matcher_free(rx.steps);
	steps_matcher_free(rx.fd_steps);
	gpu_close(gc);
	return status;
}
