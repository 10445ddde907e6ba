/*
 * runner.c - one run of a configuration is `gpuwhy run -o FILE ... -- CMD`,
 * the same recorder, step detection and out-of-memory recognition as a run
 * by hand, started here (output to a log) or submitted as a queue task so a
 * machine with several GPUs runs configurations side by side.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sweep/runner.h"
#include "sweep/subst.h"
#include "util/child.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/xalloc.h"

extern char **environ;

typedef struct {
	char **v;
	int n, cap;
} strv;

static void sv_add(strv *s, const char *a)
{
	if (s->n + 2 > s->cap) {
		s->cap = s->cap ? s->cap * 2 : 32;
		s->v = gw_xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
	}
	s->v[s->n] = gw_xstrdup(a);
	s->v[++s->n] = NULL;
}

char **sweep_run_argv(const sweep_runner *rn, const char *file, char **cmd)
{
	strv s = {0};
	char b[64];
	sv_add(&s, rn->self);
	if (rn->gpus) {
		sv_add(&s, "--gpus");
		sv_add(&s, rn->gpus);
	}
	sv_add(&s, "run");
	sv_add(&s, "-o");
	sv_add(&s, file);
	sv_add(&s, "--no-summary");
	snprintf(b, sizeof b, "%lldms", (long long)(rn->interval_ns / 1000000));
	sv_add(&s, "--interval");
	sv_add(&s, b);
	if (rn->stop_steps > 0) {
		snprintf(b, sizeof b, "%lld", rn->stop_steps);
		sv_add(&s, "--stop-after-steps");
		sv_add(&s, b);
	}
	if (rn->stop_ns > 0) {
		snprintf(b, sizeof b, "%lldms", (long long)(rn->stop_ns / 1000000));
		sv_add(&s, "--stop-after");
		sv_add(&s, b);
	}
	if (rn->step_re) {
		sv_add(&s, "--step-regex");
		sv_add(&s, rn->step_re);
	}
	sv_add(&s, "--");
	for (char **a = cmd; *a; a++)
		sv_add(&s, *a);
	return s.v;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

int sweep_run_local(const sweep_runner *rn, char **argv, char **env, const char *log,
                    volatile int *interrupted)
{
	(void)rn;
	int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return gw_error(GW_EXIT_ENV, log, NULL, "cannot write: %s", strerror(errno)), -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fd);
		return gw_error(GW_EXIT_ENV, "sweep", NULL, "fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		/* A process group of its own: the sweep decides when the run is interrupted. */
		setpgid(0, 0);
		/* A sweep killed outright must not leave its run going on into a resumed one. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		for (char **e = env; e && *e; e++)
			putenv(*e);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(argv[0], argv);
		dprintf(2, "gpuwhy: %s: cannot execute: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	setpgid(pid, pid);
	int st = 0, sent = 0;
	long waited = 0;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		/* Interrupted: Ctrl-C to the run, which stops the command and closes its file. */
		if (*interrupted) {
			if (sent == 0) {
				kill(-pid, SIGINT);
				sent = 1;
			} else if (sent == 1 && waited >= 15000) {
				kill(-pid, SIGKILL);
				sent = 2;
			}
			waited += 50;
		}
		sleep_ms(50);
	}
	return status_of(st);
}

/* Environment for a queue task: ours with the configuration's --env on top. */
static char **task_env(char **env)
{
	strv s = {0};
	for (char **e = environ; *e; e++) {
		bool over = false;
		for (char **o = env; o && *o && !over; o++) {
			const char *eq = strchr(*o, '=');
			size_t n = eq ? (size_t)(eq - *o) + 1 : strlen(*o);
			over = !strncmp(*e, *o, n);
		}
		if (!over)
			sv_add(&s, *e);
	}
	for (char **o = env; o && *o; o++)
		sv_add(&s, *o);
	if (!s.v)
		sv_add(&s, "GPUWHY_SWEEP=1");
	return s.v;
}

static void queue_prefix(const sweep_runner *rn, strv *s)
{
	sv_add(s, rn->self);
	sv_add(s, "queue");
	if (rn->queue_dir && *rn->queue_dir) {
		sv_add(s, "--queue");
		sv_add(s, rn->queue_dir);
	}
}

long long sweep_queue_submit(const sweep_runner *rn, char **argv, char **env, const char *name)
{
	strv s = {0};
	queue_prefix(rn, &s);
	sv_add(&s, "add");
	sv_add(&s, "--name");
	sv_add(&s, name);
	if (rn->queue_mem) {
		sv_add(&s, "--mem");
		sv_add(&s, rn->queue_mem);
	}
	sv_add(&s, "--");
	for (char **a = argv; *a; a++)
		sv_add(&s, *a);
	char **envp = task_env(env);
	gw_child_spec spec = {.path = rn->self, .argv = s.v, .envp = envp};
	gw_child_result res;
	gw_child_run(&spec, 60000000000LL, 4096, &res);
	long long id = -1;
	if (res.exited && res.status == 0)
		id = strtoll(res.out, NULL, 10);
	if (id <= 0) {
		fprintf(stderr, _("gpuwhy: sweep: queue add failed: %s"), res.err ? res.err : "\n");
		id = -1;
	}
	gw_child_free(&res);
	sweep_strv_free(envp);
	sweep_strv_free(s.v);
	return id;
}

/* The task's state and exit code from `queue show ID --json`; false when it cannot be read. */
static bool task_state(const sweep_runner *rn, long long id, char *state, size_t len, int *code)
{
	strv s = {0};
	char b[32];
	snprintf(b, sizeof b, "%lld", id);
	queue_prefix(rn, &s);
	sv_add(&s, "show");
	sv_add(&s, b);
	sv_add(&s, "--json");
	sv_add(&s, "--lines");
	sv_add(&s, "0");
	gw_child_spec spec = {.path = rn->self, .argv = s.v};
	gw_child_result res;
	gw_child_run(&spec, 60000000000LL, 1 << 20, &res);
	bool ok = false;
	json_t *root = res.exited && res.status == 0 ? json_loads(res.out, 0, NULL) : NULL;
	json_t *task = json_object_get(root, "task");
	const char *st = json_string_value(json_object_get(task, "state"));
	if (st) {
		snprintf(state, len, "%s", st);
		json_t *ec = json_object_get(task, "exit_code");
		*code = json_is_integer(ec) ? (int)json_integer_value(ec) : -1;
		ok = true;
	}
	json_decref(root);
	gw_child_free(&res);
	sweep_strv_free(s.v);
	return ok;
}

int sweep_queue_wait(const sweep_runner *rn, long long id, volatile int *interrupted)
{
	char state[32];
	int code = -1, misses = 0;
	while (!*interrupted) {
		if (!task_state(rn, id, state, sizeof state, &code)) {
			if (++misses > 30)
				return -1;
		} else if (strcmp(state, "queued") && strcmp(state, "running") &&
		           strcmp(state, "submitted")) {
			return code;
		}
		sleep_ms(500);
	}
	return -2;
}

void sweep_queue_cancel(const sweep_runner *rn, long long id)
{
	strv s = {0};
	char b[32];
	snprintf(b, sizeof b, "%lld", id);
	queue_prefix(rn, &s);
	sv_add(&s, "cancel");
	sv_add(&s, b);
	gw_child_spec spec = {.path = rn->self, .argv = s.v};
	gw_child_result res;
	gw_child_run(&spec, 30000000000LL, 4096, &res);
	gw_child_free(&res);
	sweep_strv_free(s.v);
}
