/*
 * spawn.c - starting a local attempt: the attempt row, the header line in
 * the task's log, the command's environment, and its shim (a waiting one, or
 * a new fork).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "util/xalloc.h"
#include "queue/local.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/procscan.h"
#include "queue/shim.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/timeutil.h"

extern char **environ;

void local_run_add(queue_local *l, local_run *r)
{
	if (l->nrun == l->caprun) {
		l->caprun = l->caprun ? l->caprun * 2 : 16;
		l->run = gw_xrealloc(l->run, (size_t)l->caprun * sizeof *l->run);
	}
	l->run[l->nrun++] = r;
}

/*
 * The variables the queue sets for every attempt: they win over the task's own.
 * HIP_VISIBLE_DEVICES is set only on a machine with AMD GPUs; the task's
 * ROCR_VISIBLE_DEVICES is always dropped, as ROCr applies it before HIP and
 * would renumber the GPUs that HIP_VISIBLE_DEVICES names.
 */
static const char *const set_by_queue[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",    "GPUWHY_TASK_ID",
    "GPUWHY_ATTEMPT",       "GPUWHY_ATTEMPT_TOKEN", "GPUWHY_QUEUE",
    "GPUWHY_TASK_GPUS",     "HIP_VISIBLE_DEVICES",  "ROCR_VISIBLE_DEVICES"};
#define NSET (sizeof set_by_queue / sizeof *set_by_queue)

/* What names the picked GPUs to each vendor's runtime. */
typedef struct {
	char cuda[GPU_MAX * 100]; /* CUDA_VISIBLE_DEVICES */
	char hip[GPU_MAX * 8];    /* HIP_VISIBLE_DEVICES; "" when the machine has no AMD GPU */
} visible_set;

static bool set_by_us(const char *k, size_t klen)
{
	for (size_t i = 0; i < NSET; i++)
		if (strlen(set_by_queue[i]) == klen && !strncmp(set_by_queue[i], k, klen))
			return true;
	return false;
}

/* The task's captured environment as KEY=VALUE strings, without what the queue sets
 * (NULL-terminated; *n strings); NULL when it is not a JSON object. */
static char **parse_env(const char *env_json, int *n)
{
	json_t *obj = json_loads(env_json, 0, NULL);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return NULL;
	}
	char **env = gw_xrealloc(NULL, (json_object_size(obj) + 1) * sizeof *env);
	*n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v)
	{
		size_t kl = strlen(k);
		if (!json_is_string(v) || set_by_us(k, kl))
			continue;
		size_t len = kl + 1 + strlen(json_string_value(v)) + 1;
		env[*n] = gw_xrealloc(NULL, len);
		snprintf(env[(*n)++], len, "%s=%s", k, json_string_value(v));
	}
	json_decref(obj);
	env[*n] = NULL;
	return env;
}

/* The task's own environment (ours when it has none), parsed once for all tasks that
 * share it: tasks added from one shell carry the same one, and parsing it was a
 * fifth of the worker's work per task. */
static char *const *base_env(queue_local *l, const char *env_json, int *n)
{
	if (env_json && (!l->env_key || strcmp(l->env_key, env_json))) {
		char **parsed = parse_env(env_json, &l->env_nbase);
		queue_env_free(l->env_base);
		free(l->env_key);
		l->env_base = parsed;
		l->env_key = parsed ? gw_xstrdup(env_json) : NULL;
	}
	if (env_json && l->env_base) {
		*n = l->env_nbase;
		return l->env_base;
	}
	*n = 0;
	while (environ[*n])
		(*n)++;
	return environ;
}

/* The attempt's environment: copies of the NSET strings of extra that are not NULL
 * (first, *nextra of them), then base less what the queue sets. base's strings are
 * not copied: free it with attempt_env_free. */
static char **build_env(char *const *base, int nbase, char *const *extra, size_t *nextra)
{
	char **env = gw_xrealloc(NULL, ((size_t)nbase + NSET + 1) * sizeof *env);
	size_t n = 0;
	for (size_t i = 0; i < NSET; i++)
		if (extra[i])
			env[n++] = gw_xstrdup(extra[i]);
	*nextra = n;
	for (int i = 0; i < nbase; i++) {
		const char *eq = strchr(base[i], '=');
		if (eq && !set_by_us(base[i], (size_t)(eq - base[i])))
			env[n++] = base[i];
	}
	env[n] = NULL;
	return env;
}

static void attempt_env_free(char **env, size_t nextra)
{
	for (size_t i = 0; i < nextra; i++)
		free(env[i]);
	free(env);
}

void queue_env_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* A shim starts with the signals the worker handles or blocks back at their defaults. */
static void shim_signals_default(void)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGCHLD};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * The shim, in a child of this process. fork without exec: starting the program
 * again (loading its libraries, relocating them) cost more than the rest of a
 * task's start together. Only this thread exists in the child, and it takes no
 * lock another thread of ours could have held (glibc resets malloc and stdio for
 * the child); it keeps exactly stdin from /dev/null, the socket as fd 3 and our
 * stdout/stderr, and nothing of the worker's state but what o names.
 */
static void shim_child(int devnull, int sock, queue_shim_opts *o, char **envp)
{
	shim_signals_default();
	/* Out of the way first, so that no dup2 below overwrites the other. */
	int hs = fcntl(sock, F_DUPFD, 100),
	    hl = o->log_fd >= 0 ? fcntl(o->log_fd, F_DUPFD, 100) : -1;
	if (hs < 0 || dup2(devnull, 0) < 0 || dup2(hs, 3) < 0 || (hl >= 0 && dup2(hl, 4) < 0))
		_exit(127);
	close_range(hl >= 0 ? 5 : 4, ~0U, 0);
	o->sock = 3;
	o->log_fd = hl >= 0 ? 4 : -1;
	prctl(PR_SET_NAME, "gpuwhy-shim");
	environ = envp;
	_exit(queue_shim_run(o));
}

/* Fork with a socket pair between the two sides: *sock is the caller's end in
 * the parent (returns the PID) and the child's end in the child (returns 0; the
 * child closes what it does not keep); -1 with errno set when neither happened. */
static pid_t fork_paired(int *sock)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		*sock = sv[1];
		return 0;
	}
	int err = errno;
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		errno = err;
		return -1;
	}
	*sock = sv[0];
	return pid;
}

/* A blank shim: it waits on its socket (fd 3) for attempts (queue_shim_serve). */
static void blank_child(int devnull, int sock)
{
	shim_signals_default();
	int hs = fcntl(sock, F_DUPFD, 100);
	if (hs < 0 || dup2(devnull, 0) < 0 || dup2(hs, 3) < 0)
		_exit(127);
	close_range(4, ~0U, 0);
	fcntl(3, F_SETFD, FD_CLOEXEC);
	prctl(PR_SET_NAME, "gpuwhy-shim");
	_exit(queue_shim_serve(3));
}

/* A shim that waits for an attempt: one kept from an earlier attempt that is still
 * there, else a new one. -1 (errno set) when none could be started. */
static int take_shim(queue_local *l, local_shim *sh)
{
	while (l->nidle > 0) {
		*sh = l->idle[--l->nidle];
		/* A waiting shim says nothing: anything on its socket means it is gone. */
		struct pollfd p = {.fd = sh->sock, .events = POLLIN};
		if (poll(&p, 1, 0) == 0)
			return 0;
		close(sh->sock);
		local_reap_later(l, sh->pid);
	}
	int sock;
	pid_t pid = fork_paired(&sock);
	if (pid == 0)
		blank_child(l->env.devnull, sock);
	if (pid < 0)
		return -1;
	queue_proc_stat ps;
	*sh = (local_shim){pid, queue_proc_read(pid, &ps) ? ps.starttime : 0, sock};
	return 0;
}

/* Start the shim; returns its PID and our end of the socket, or -1 (errno set). */
static int spawn_shim(int devnull, queue_shim_opts *o, char **envp, int *sock_out)
{
	pid_t pid = fork_paired(sock_out);
	if (pid == 0)
		shim_child(devnull, *sock_out, o, envp);
	return pid;
}

/* Append ",item" (or "item" first) to dst at *at, never past len. */
static void list_add(char *dst, size_t len, size_t *at, const char *item)
{
	*at += (size_t)snprintf(dst + *at, *at < len ? len - *at : 0, "%s%s", *at ? "," : "", item);
}

/*
 * Each runtime counts only its own vendor's GPUs from 0 (docs/amd.md): an NVIDIA
 * GPU goes to CUDA_VISIBLE_DEVICES (its UUID, or CUDA's index), an AMD GPU to
 * HIP_VISIBLE_DEVICES by HIP's index. On a mixed machine a task on AMD GPUs
 * alone gets CUDA_VISIBLE_DEVICES="" (no NVIDIA GPU) and one on NVIDIA GPUs
 * alone HIP_VISIBLE_DEVICES=-1 (an invalid index: HIP, like CUDA, shows none
 * from there on, where an empty value may read as unset). On an AMD-only
 * machine CUDA_VISIBLE_DEVICES repeats HIP's list, which HIP also honours.
 */
static void visible_lists(const queue_local *l, const int *pick, int n, visible_set *v)
{
	const queue_gpus *all = l->env.gpus;
	bool amd = false, nvidia = false;
	/* An AMD GPU numbered past HIP's index has NVIDIA GPUs before it, watched or not. */
	for (int k = 0; k < all->n; k++) {
		*(all->g[k].amd ? &amd : &nvidia) = true;
		nvidia |= all->g[k].amd && all->g[k].index != all->g[k].vendor_index;
	}
	size_t c = 0, h = 0;
	v->cuda[0] = v->hip[0] = '\0';
	for (int k = 0; k < n; k++) {
		const queue_gpu_seen *g = &all->g[pick[k]];
		char num[16];
		snprintf(num, sizeof num, "%d", g->vendor_index);
		if (g->amd)
			list_add(v->hip, sizeof v->hip, &h, num);
		else
			list_add(v->cuda, sizeof v->cuda, &c,
			         l->env.cfg->visible_index || !g->uuid[0] ? num : g->uuid);
	}
	if (amd && !h)
		snprintf(v->hip, sizeof v->hip, "-1");
	if (amd && !nvidia)
		snprintf(v->cuda, sizeof v->cuda, "%s", h ? v->hip : "");
}

/* GPU indices, UUIDs and what names them to CUDA and HIP for the picked positions. */
static void join_gpus(const queue_local *l, const int *pick, int n, queue_attempt *a,
                      visible_set *v)
{
	char *idx = a->gpu_idx, *uuids = a->gpu_uuids;
	size_t idxlen = sizeof a->gpu_idx, uulen = sizeof a->gpu_uuids;
	size_t i = 0, u = 0;
	idx[0] = uuids[0] = '\0';
	for (int k = 0; k < n; k++) {
		const queue_gpu_seen *g = &l->env.gpus->g[pick[k]];
		const char *sep = k ? "," : "";
		i += (size_t)snprintf(idx + i, i < idxlen ? idxlen - i : 0, "%s%d", sep, g->index);
		u += (size_t)snprintf(uuids + u, u < uulen ? uulen - u : 0, "%s%s", sep, g->uuid);
	}
	visible_lists(l, pick, n, v);
}

static void log_header(int logfd, const queue_attempt *a, int ngpu, const visible_set *v)
{
	char ts[32], head[1024];
	time_t now = (time_t)a->started;
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
	int hl = snprintf(head, sizeof head,
	                  "=== gpuwhy task %lld attempt %d token %s start %s GPUs %s"
	                  " CUDA_VISIBLE_DEVICES=%s%s%s ===\n",
	                  (long long)a->task_id, a->n, a->token, ts, ngpu ? a->gpu_idx : "none",
	                  v->cuda, v->hip[0] ? " HIP_VISIBLE_DEVICES=" : "", v->hip);
	if (write(logfd, head, (size_t)hl < sizeof head ? (size_t)hl : sizeof head - 1) < 0)
		queue_worker_log("task %lld: cannot write its log: %s", (long long)a->task_id,
		                 strerror(errno));
}

/* The command's environment: the task's own plus what tells it where it runs. */
static char **attempt_env(queue_local *l, const queue_task *t, const queue_attempt *a,
                          const visible_set *v, size_t *nextra)
{
	char e_vis[GPU_MAX * 100 + 32], e_hip[GPU_MAX * 8 + 32], e_id[64], e_att[64], e_tok[80],
	    e_q[PATH_MAX + 16], e_gpus[300];
	snprintf(e_vis, sizeof e_vis, "CUDA_VISIBLE_DEVICES=%s", v->cuda);
	snprintf(e_hip, sizeof e_hip, "HIP_VISIBLE_DEVICES=%s", v->hip);
	snprintf(e_id, sizeof e_id, "GPUWHY_TASK_ID=%lld", (long long)t->id);
	snprintf(e_att, sizeof e_att, "GPUWHY_ATTEMPT=%d", a->n);
	snprintf(e_tok, sizeof e_tok, "GPUWHY_ATTEMPT_TOKEN=%s", a->token);
	snprintf(e_q, sizeof e_q, "GPUWHY_QUEUE=%s", l->env.dir);
	snprintf(e_gpus, sizeof e_gpus, "GPUWHY_TASK_GPUS=%s", a->gpu_idx);
	char *extra[] = {e_vis,  "CUDA_DEVICE_ORDER=PCI_BUS_ID", e_id, e_att, e_tok, e_q,
	                 e_gpus, v->hip[0] ? e_hip : NULL,       NULL};
	_Static_assert(sizeof extra / sizeof *extra == NSET, "one string per variable set");
	int nbase;
	char *const *base = base_env(l, t->spec.env_json, &nbase);
	return build_env(base, nbase, extra, nextra);
}

/* The shim is up: record it running and let it go (or not). */
static void hand_over(queue_local *l, queue_attempt *a, int pid, int sock)
{
	queue_proc_stat ps;
	a->shim_pid = pid;
	a->shim_start = queue_proc_read(pid, &ps) ? ps.starttime : 0;
	bool cancel = false;
	char go = 'g';
	if (queue_db_attempt_running(l->env.st, a, &cancel) != 0)
		go = 'n'; /* unrecorded: it must not run (queued again once the shim is gone) */
	else if (cancel)
		go = 'x';
	if (send(sock, &go, 1, MSG_NOSIGNAL) != 1)
		queue_worker_log("task %lld: its shim did not take the go-ahead",
		                 (long long)a->task_id);
}

local_run *local_run_new(const queue_attempt *a, int sock)
{
	local_run *r = gw_xrealloc(NULL, sizeof *r);
	memset(r, 0, sizeof *r);
	r->task_id = a->task_id;
	r->n = a->n;
	snprintf(r->token, sizeof r->token, "%s", a->token);
	r->shim_pid = a->shim_pid;
	r->shim_start = a->shim_start;
	r->sock = sock;
	r->reserved_mib = a->reserved_mib;
	r->started = a->started;
	r->log_offset = a->log_offset;
	return r;
}

static local_run *run_of(const queue_local *l, const queue_attempt *a, int sock, const int *pick,
                         int n)
{
	local_run *r = local_run_new(a, sock);
	r->ngpu = n;
	for (int k = 0; k < n; k++)
		r->gidx[k] = l->env.gpus->g[pick[k]].index;
	r->per_gpu = a->per_gpu;
	r->started_mono = gw_mono_ns();
	r->peak_gpu = r->peak_rss = -1;
	return r;
}

/* The shim could not be started: the attempt failed without running. */
static void spawn_failed(queue_local *l, queue_attempt *a, int err)
{
	queue_worker_log("task %lld: cannot start its shim: %s", (long long)a->task_id,
	                 strerror(err));
	a->outcome = QO_FAILED;
	a->ended = gw_wall_s();
	snprintf(a->error, sizeof a->error, "cannot start: %s", strerror(err));
	a->peak_gpu_mib = a->peak_rss_kib = -1;
	queue_attempt_conclude(l->env.st, a, queue_gpus_largest(l->env.gpus));
}

/* A shim forked for this attempt alone (one too large to send): two commits, the
 * attempt first, its shim once forked, then the go-ahead. */
static void start_forked(queue_local *l, queue_attempt *a, queue_shim_opts *so, char **envp,
                         const int *pick, int n)
{
	if (queue_db_begin_attempt(l->env.st, a, QS_RUNNING) != 0)
		return;
	int sock = -1;
	int pid = spawn_shim(l->env.devnull, so, envp, &sock);
	if (pid < 0) {
		spawn_failed(l, a, errno);
		return;
	}
	hand_over(l, a, pid, sock);
	local_run_add(l, run_of(l, a, sock, pick, n));
}

/*
 * A waiting shim gets the attempt first, then the attempt is recorded running under
 * it (one commit), then the go-ahead: the command never runs unrecorded, and a
 * worker that dies before the go-ahead leaves a shim that says "not started".
 */
static void start_assigned(queue_local *l, queue_attempt *a, const char *msg, size_t len, int logfd,
                           const int *pick, int n)
{
	local_shim sh;
	if (take_shim(l, &sh) != 0) {
		int err = errno;
		if (queue_db_begin_attempt(l->env.st, a, QS_RUNNING) == 0)
			spawn_failed(l, a, err);
		return;
	}
	if (queue_shim_assign(sh.sock, msg, len, logfd) != 0) {
		/* Gone since: it ran nothing and nothing is recorded; the task stays queued for
		 * the next pass. */
		queue_worker_log("task %lld: shim %d did not take the attempt: %s",
		                 (long long)a->task_id, sh.pid, strerror(errno));
		close(sh.sock);
		local_reap_later(l, sh.pid);
		return;
	}
	a->astate = QA_RUNNING;
	a->shim_pid = sh.pid;
	a->shim_start = sh.start;
	char go = 'g';
	bool recorded = queue_db_begin_attempt(l->env.st, a, QS_RUNNING) == 0;
	if (!recorded)
		go = QUEUE_SHIM_FORGET;
	if (send(sh.sock, &go, 1, MSG_NOSIGNAL) != 1 && recorded)
		queue_worker_log("task %lld: its shim did not take the go-ahead",
		                 (long long)a->task_id);
	if (!recorded) {
		local_idle_put(l, &sh);
		return;
	}
	local_run_add(l, run_of(l, a, sh.sock, pick, n));
}

void local_start_task(queue_local *l, const queue_candidate *c, int per_gpu, const int *pick, int n)
{
	queue_task t;
	if (queue_db_get(l->env.st, c->id, &t) != 0)
		return;
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = c->id;
	a.backend = QB_LOCAL;
	/* Numbered now: the shim's status file and environment name it before the commit. */
	a.n = queue_db_next_attempt(l->env.st, c->id);
	if (a.n <= 0) {
		queue_task_free(&t);
		return;
	}
	queue_new_token(a.token, sizeof a.token);
	snprintf(a.boot_id, sizeof a.boot_id, "%s", l->env.boot_id);
	visible_set vis;
	join_gpus(l, pick, n, &a, &vis);
	a.reserved_mib = c->mem_mib;
	a.per_gpu = per_gpu;
	a.started = gw_wall_s();
	char logp[PATH_MAX], statp[PATH_MAX];
	queue_log_path(l->env.dir, c->id, logp, sizeof logp);
	int logfd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	struct stat stt;
	a.log_offset = logfd >= 0 && fstat(logfd, &stt) == 0 ? stt.st_size : 0;
	/* Attempt numbers are never reused, so no status file of an earlier run is there. */
	queue_status_path(l->env.dir, c->id, a.n, statp, sizeof statp);
	/* The header before the go-ahead: an attempt that is not recorded leaves one line. */
	if (logfd >= 0)
		log_header(logfd, &a, n, &vis);
	size_t nextra;
	char **envp = attempt_env(l, &t, &a, &vis, &nextra);
	queue_shim_opts so = {.status = statp,
	                      .log = logp,
	                      .log_fd = logfd,
	                      .cwd = t.spec.cwd ? t.spec.cwd : "/",
	                      .timeout_ns = t.spec.timeout_ms * 1000000,
	                      .grace_ns = l->env.cfg->grace_ns,
	                      .argv = t.spec.argv};
	size_t len = 0;
	char *msg = queue_shim_pack(&so, envp, &len);
	int before = l->nrun;
	if (msg && len <= QUEUE_SHIM_MSG_MAX)
		start_assigned(l, &a, msg, len, logfd, pick, n);
	else
		start_forked(l, &a, &so, envp, pick, n);
	free(msg);
	if (logfd >= 0)
		close(logfd);
	attempt_env_free(envp, nextra);
	queue_task_free(&t);
	if (l->nrun != before)
		queue_worker_log("task %lld attempt %d started on GPU %s (shim pid %d)",
		                 (long long)c->id, a.n, n ? a.gpu_idx : "none", a.shim_pid);
}
