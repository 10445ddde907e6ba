/*
 * worker.c - `gpuwhy queue worker`: the scheduler of one queue directory.
 *
 * One worker per directory (an flock on DIR/worker.lock). Its loop sleeps
 * in poll() on: the wake FIFO (`add`, `cancel`, `config` write a byte), the
 * submission socket (`add` hands it a task: submit.c), the GPU watch's pipe
 * (a new sample), and what the back ends wait on (one socket per running
 * shim). It never calls NVML: the GPU watch does, on
 * threads of its own. The loop wakes at least once a second.
 *
 * Tasks run through back ends (backend.h): the loop hands each of them the
 * settings, every new GPU sample and what woke it, and calls nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"
#include "host/host_pidbrief.h"
#include "queue/backend.h"
#include "queue/state.h"
#include "queue/place.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/procscan.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/timeutil.h"
#include "util/i18n.h"

#define NBACKENDS 2

typedef struct {
	const queue_backend_ops *ops;
	void *be;
	int fd0, nfd; /* its descriptors in the loop's poll set */
} wk_backend;

typedef struct {
	queue_db *st;
	char dir[PATH_MAX];
	char gpus_opt[256];
	int fifo, lock, devnull;
	int submit;           /* the submission socket, -1 when none */
	int wake_rd, wake_wr; /* GPU watch -> loop */
	char boot_id[48];
	bool pidns_nested;
	queue_wconfig cfg;
	queue_gpus *gpus; /* the loop's copy of the latest sample */
	queue_gpuwatch *watch;
	wk_backend b[NBACKENDS];
	struct pollfd *fds;
	int nfds, capfds;
} worker;

static volatile sig_atomic_t wk_stop;

static void on_stop(int sig)
{
	(void)sig;
	wk_stop = 1;
}

void queue_wconfig_load(queue_db *st, queue_wconfig *c)
{
	char v[256];
	c->per_gpu_default = (int)queue_db_config_int(st, "per-gpu");
	if (c->per_gpu_default < 1)
		c->per_gpu_default = 1;
	c->max_running = (int)queue_db_config_int(st, "max-running");
	c->cpu_slots = (int)queue_db_config_int(st, "cpu-slots");
	if (c->cpu_slots <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		c->cpu_slots = n > 0 ? (int)n : 1;
	}
	queue_db_config_get(st, "foreign", v, sizeof v);
	c->foreign_allow = !strcmp(v, "allow");
	queue_db_config_get(st, "place", v, sizeof v);
	c->mode = !strcmp(v, "pack") ? QP_PACK : QP_SPREAD;
	queue_db_config_get(st, "visible", v, sizeof v);
	c->visible_index = !strcmp(v, "index");
	c->paused = queue_db_config_int(st, "paused") != 0;
	c->draining = queue_db_config_int(st, "draining") != 0;
	c->grace_ns = queue_db_config_int(st, "kill-grace");
	c->slurm_poll_ns = queue_db_config_int(st, "slurm-poll");
	c->sample_ns = queue_db_config_int(st, "sample-interval");
	queue_db_config_get(st, "gpus", c->order, sizeof c->order);
	queue_db_config_get(st, "drained-gpus", c->drained, sizeof c->drained);
}

static void load_config(worker *w)
{
	queue_wconfig_load(w->st, &w->cfg);
	if (w->watch)
		queue_gpuwatch_set_interval(w->watch, w->cfg.sample_ns);
}

/* ---- lock, FIFO ---- */

static int take_lock(worker *w)
{
	char path[PATH_MAX];
	queue_path(w->dir, "worker.lock", path, sizeof path);
	w->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (w->lock < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, _("cannot open: %s"), strerror(errno));
	if (flock(w->lock, LOCK_EX | LOCK_NB) != 0) {
		int pid = queue_worker_pid(w->dir);
		return gw_error(GW_EXIT_ENV, "queue worker", _("gpuwhy queue stop ends it"),
		                _("one already runs for %s (pid %d)"), w->dir, pid);
	}
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)getpid());
	if (ftruncate(w->lock, 0) != 0 || pwrite(w->lock, buf, (size_t)n, 0) != n)
		return gw_error(GW_EXIT_ENV, path, NULL, _("cannot write: %s"), strerror(errno));
	return 0;
}

static int open_fifo(worker *w)
{
	char path[PATH_MAX];
	queue_path(w->dir, "wake", path, sizeof path);
	if (mkfifo(path, 0600) != 0 && errno != EEXIST)
		return gw_error(GW_EXIT_ENV, path, NULL, _("cannot create: %s"), strerror(errno));
	/* O_RDWR: the FIFO never reports EOF when the last writer closes. */
	w->fifo = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (w->fifo < 0)
		return gw_error(GW_EXIT_ENV, path, NULL, _("cannot open: %s"), strerror(errno));
	return 0;
}

/* Read all that is there; true when a byte other than QUEUE_POKE_ADD came. */
static bool drain_fd(int fd)
{
	char buf[256];
	bool other = false;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < n; i++)
			other |= buf[i] != QUEUE_POKE_ADD;
	return other;
}

/* ---- the loop ---- */

static int active(const worker *w)
{
	int n = 0;
	for (int i = 0; i < NBACKENDS; i++)
		n += w->b[i].ops->active(w->b[i].be);
	return n;
}

static bool idle(worker *w)
{
	if (active(w) > 0)
		return false;
	return queue_db_count_state(w->st, QS_QUEUED) == 0 &&
	       queue_db_count_state(w->st, QS_SUBMITTED) == 0 &&
	       queue_db_count_state(w->st, QS_RUNNING) == 0;
}

/* The poll set: the FIFO, the GPU watch's pipe, the submission socket, then each back
 * end's. Returns the wait's timeout (ms). */
static int gather_fds(worker *w, int64_t now)
{
	int need = 3;
	for (int i = 0; i < NBACKENDS; i++)
		need += w->b[i].ops->active(w->b[i].be);
	if (need > w->capfds) {
		w->capfds = need * 2;
		w->fds = gw_xrealloc(w->fds, (size_t)w->capfds * sizeof *w->fds);
	}
	w->nfds = 0;
	w->fds[w->nfds++] = (struct pollfd){.fd = w->fifo, .events = POLLIN};
	w->fds[w->nfds++] = (struct pollfd){.fd = w->wake_rd, .events = POLLIN};
	w->fds[w->nfds++] = (struct pollfd){.fd = w->submit, .events = POLLIN};
	int64_t timeout = 1000;
	for (int i = 0; i < NBACKENDS; i++) {
		wk_backend *b = &w->b[i];
		b->fd0 = w->nfds;
		b->nfd = b->ops->fds(b->be, w->fds + w->nfds, w->capfds - w->nfds);
		w->nfds += b->nfd;
		int64_t left = b->ops->wait_ms(b->be, now);
		if (left >= 0 && left < timeout)
			timeout = left;
	}
	return (int)timeout;
}

static void follow_all(worker *w, const queue_pass *p)
{
	for (int i = 0; i < NBACKENDS; i++) {
		wk_backend *b = &w->b[i];
		b->ops->follow(b->be, p, b->nfd ? w->fds + b->fd0 : NULL, b->nfd);
		b->nfd = 0; /* revents are used once */
	}
}

/* Stop now? (drained, or idle for long enough) */
static bool should_stop(worker *w, int64_t now, int64_t idle_exit_ns, int64_t *idle_since)
{
	if (w->cfg.draining && active(w) == 0) {
		queue_worker_log(
		    "drained: nothing runs; the worker stops (gpuwhy queue resume to go on)");
		return true;
	}
	if (idle_exit_ns <= 0)
		return false;
	if (!idle(w))
		*idle_since = 0;
	else if (!*idle_since)
		*idle_since = now;
	else if (now - *idle_since >= idle_exit_ns) {
		queue_worker_log("idle; the worker stops");
		return true;
	}
	return false;
}

static void log_err(const gw_fail *e);

static void loop(worker *w, int64_t idle_exit_ns)
{
	int64_t last_cfg = 0, idle_since = 0, last_full = 0;
	queue_pass p = {.poked = true};
	while (!wk_stop) {
		int64_t now = gw_mono_ns();
		p.now = now;
		follow_all(w, &p);
		if (p.poked || now - last_cfg >= 1000000000LL) {
			load_config(w);
			for (int i = 0; i < NBACKENDS; i++)
				w->b[i].ops->cancel(w->b[i].be);
			last_cfg = now;
		}
		bool fresh = queue_gpuwatch_take(w->watch, w->gpus);
		for (int i = 0; fresh && i < NBACKENDS; i++)
			w->b[i].ops->observe(w->b[i].be);
		p.quick = p.added && !p.poked && !fresh && now - last_full < 1000000000LL;
		if (!p.quick)
			last_full = now;
		for (int i = 0; i < NBACKENDS; i++)
			w->b[i].ops->start(w->b[i].be, &p);
		p.poked = p.added = false;
		if (should_stop(w, now, idle_exit_ns, &idle_since))
			break;
		int timeout = gather_fds(w, now); /* may move w->fds */
		int rc = poll(w->fds, (nfds_t)w->nfds, timeout);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && (w->fds[0].revents & POLLIN)) {
			/* New tasks only need a pass; anything else may have changed settings or
			 * asked for a cancel. */
			p.poked = drain_fd(w->fifo);
			p.added = true;
		}
		if (rc > 0 && (w->fds[1].revents & POLLIN))
			drain_fd(w->wake_rd);
		if (rc > 0 && (w->fds[2].revents & POLLIN) &&
		    queue_submit_serve(w->st, w->submit, log_err))
			p.added = true;
	}
	/* What ended during the last wait is recorded before the worker goes. */
	p.stopping = true;
	follow_all(w, &p);
}

static void worker_free(worker *w)
{
	queue_gpuwatch_stop(w->watch);
	for (int i = 0; i < NBACKENDS; i++)
		if (w->b[i].be)
			w->b[i].ops->close(w->b[i].be);
	free(w->fds);
	free(w->gpus);
	if (w->fifo >= 0)
		close(w->fifo);
	if (w->wake_rd >= 0)
		close(w->wake_rd);
	if (w->wake_wr >= 0)
		close(w->wake_wr);
	if (w->devnull >= 0)
		close(w->devnull);
	queue_submit_close(w->dir, w->submit);
	if (w->st)
		queue_db_checkpoint(w->st);
	if (w->lock >= 0)
		close(w->lock);
	queue_db_close(w->st);
}

/* A database failure during the loop: one line in the worker's log, the why in the worker's
 * language as it is on the terminal, the hint as written. */
static void log_err(const gw_fail *e)
{
	queue_worker_log("%s: %s%s%s%s", e->what, e->why_text, e->hint[0] ? " (" : "", e->hint,
	                 e->hint[0] ? ")" : "");
}

/* The store, the lock, the FIFO and the GPU watch's pipe. */
static int worker_open(worker *w, const queue_worker_opts *o)
{
	gw_fail e = {0};
	int rc = queue_db_open(o->dir, &w->st, &e);
	if (rc)
		return gw_fail_print(&e);
	queue_db_on_error(w->st, log_err);
	if ((rc = take_lock(w)) || (rc = open_fifo(w)))
		return rc;
	w->submit = queue_submit_listen(w->dir);
	int wp[2];
	if (pipe2(wp, O_CLOEXEC | O_NONBLOCK) != 0)
		return gw_error(GW_EXIT_ENV, "pipe", NULL, "%s", strerror(errno));
	w->wake_rd = wp[0];
	w->wake_wr = wp[1];
	w->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	queue_boot_id(w->boot_id, sizeof w->boot_id);
	w->pidns_nested = host_pidns_nested("/proc");
	return 0;
}

static void backends_open(worker *w)
{
	queue_backend_env env = {.st = w->st,
	                         .dir = w->dir,
	                         .boot_id = w->boot_id,
	                         .pidns_nested = w->pidns_nested,
	                         .devnull = w->devnull,
	                         .cfg = &w->cfg,
	                         .gpus = w->gpus};
	const queue_backend_ops *ops[NBACKENDS] = {&queue_backend_local, &queue_backend_slurm};
	for (int i = 0; i < NBACKENDS; i++) {
		w->b[i].ops = ops[i];
		w->b[i].be = ops[i]->open(&env);
	}
}

int queue_worker_run(const queue_worker_opts *o)
{
	worker w;
	memset(&w, 0, sizeof w);
	w.fifo = w.lock = w.devnull = w.wake_rd = w.wake_wr = w.submit = -1;
	snprintf(w.dir, sizeof w.dir, "%s", o->dir);
	snprintf(w.gpus_opt, sizeof w.gpus_opt, "%s", o->gpus ? o->gpus : "");
	w.gpus = gw_xrealloc(NULL, sizeof *w.gpus);
	memset(w.gpus, 0, sizeof *w.gpus);
	int rc = worker_open(&w, o);
	if (rc) {
		worker_free(&w);
		return rc;
	}
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	load_config(&w);
	queue_worker_log("worker %d started for %s", (int)getpid(), w.dir);
	if (w.pidns_nested)
		queue_worker_log(
		    "this process runs in a nested PID namespace: GPU processes cannot be "
		    "matched to tasks, so per-task GPU memory is not recorded");
	backends_open(&w);
	for (int i = 0; i < NBACKENDS; i++)
		w.b[i].ops->recover(w.b[i].be);
	if (o->ready_fd >= 0) {
		char b = 1;
		if (write(o->ready_fd, &b, 1) < 0) {
			/* The starter gave up waiting; carry on anyway. */
		}
		close(o->ready_fd);
	}
	w.watch = queue_gpuwatch_start(w.gpus_opt, w.dir, w.wake_wr, w.cfg.sample_ns);
	if (!w.watch) {
		worker_free(&w);
		return gw_error(GW_EXIT_ENV, "queue worker", NULL,
		                _("cannot start the sampler thread"));
	}
	loop(&w, o->idle_exit_ns);
	int left = active(&w);
	queue_worker_log("worker %d stops (%d attempt%s left running under their shims)",
	                 (int)getpid(), left, left == 1 ? "" : "s");
	worker_free(&w);
	return GW_EXIT_OK;
}
