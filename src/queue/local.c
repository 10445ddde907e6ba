/*
 * local.c - the local back end: attempts run under shims on this machine.
 *
 * Each running attempt has a socket to its shim (SOCK_SEQPACKET); the
 * worker's loop waits on all of them, and EOF or the shim's "ended" message
 * says the attempt ended. Shims adopted from an earlier worker have no
 * socket: they are checked by PID and start time instead. An ended
 * attempt's slot is free at once: the next tasks start before the ended
 * ones are recorded (a shim keeps its status until then, or writes it to its
 * file should this worker die meanwhile). A shim whose end was recorded waits
 * for the next attempt (l->idle) instead of exiting.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

#define TOKEN_VAR "GPUWHY_ATTEMPT_TOKEN"

static void parse_gidx(const char *list, local_run *r)
{
	r->ngpu = 0;
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, ",", &save); t && r->ngpu < GPU_MAX;
	     t = strtok_r(NULL, ",", &save))
		r->gidx[r->ngpu++] = atoi(t);
}

/* A shim that ended without a status: a command still running without it must
 * not run beside a retry. */
static void kill_orphan(queue_attempt *a)
{
	int pg = a->task_pgid > 0 ? a->task_pgid : queue_token_pgid(a->token);
	if (pg > 0 && kill(-pg, 0) == 0 && queue_proc_has_env(pg, TOKEN_VAR, a->token)) {
		kill(-pg, SIGKILL);
		size_t l = strlen(a->error);
		snprintf(a->error + l, sizeof a->error - l,
		         "; its orphaned process group %d was killed", pg);
	}
}

/* How the attempt ended, from its shim's status. */
static void outcome_of(queue_attempt *a, const queue_status *s)
{
	if (s->not_started) {
		a->outcome = s->cancelled ? QO_CANCELLED : QO_NOT_STARTED;
		if (s->cancelled)
			snprintf(a->error, sizeof a->error, "cancelled before it started");
		return;
	}
	if (!s->complete) {
		a->outcome = QO_LOST;
		snprintf(a->error, sizeof a->error,
		         "its shim (pid %d) ended without recording how the command ended",
		         a->shim_pid);
		kill_orphan(a);
		return;
	}
	a->exit_ok = s->exit_ok;
	a->exit_code = s->exit_code;
	a->signal = s->signal;
	if (s->timed_out)
		a->outcome = QO_TIMEOUT;
	else if (s->cancelled)
		a->outcome = QO_CANCELLED;
	else if (s->exit_ok && s->exit_code == 0 && !s->signal)
		a->outcome = QO_DONE;
	else
		a->outcome = QO_FAILED;
	if (s->exec_errno)
		snprintf(a->error, sizeof a->error, "cannot run the command: %s",
		         strerror(s->exec_errno));
	if (s->maxrss_kib > a->peak_rss_kib)
		a->peak_rss_kib = s->maxrss_kib;
}

/* The shim ended: conclude the attempt from the status it handed over (given) or
 * from its status file. Returns 0 once recorded. */
static int finish_local(queue_local *l, queue_attempt *a, int task_pgid_hint,
                        const queue_status *given)
{
	char path[PATH_MAX];
	queue_status_path(l->env.dir, a->task_id, a->n, path, sizeof path);
	queue_status s;
	if (given)
		s = *given;
	else
		queue_status_read(path, &s);
	a->ended = s.ended > 0 ? s.ended : gw_wall_s();
	if (s.started > 0)
		a->started = s.started;
	a->task_pgid = s.task_pid ? s.task_pid : task_pgid_hint;
	outcome_of(a, &s);
	int next = queue_attempt_conclude(l->env.st, a, queue_gpus_largest(l->env.gpus));
	if (next < 0)
		return -1;
	char how[64];
	if (a->outcome == QO_DONE || a->outcome == QO_FAILED)
		snprintf(how, sizeof how, a->signal ? "signal %d" : "exit %d",
		         a->signal ? a->signal : a->exit_code);
	else
		snprintf(how, sizeof how, "%s", queue_outcome_name(a->outcome));
	queue_worker_log("task %lld attempt %d ended: %s -> %s", (long long)a->task_id, a->n, how,
	                 queue_state_name((queue_state)next));
	if (!given)
		unlink(path);
	return 0;
}

/* It said it ended: it may still be exiting; reaped later then. */
void local_reap_later(queue_local *l, int pid)
{
	int st;
	pid_t got;
	while ((got = waitpid(pid, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (got != 0)
		return;
	if (l->nreap == l->capreap) {
		l->capreap = l->capreap ? l->capreap * 2 : 8;
		l->reap = gw_xrealloc(l->reap, (size_t)l->capreap * sizeof *l->reap);
	}
	l->reap[l->nreap++] = pid;
}

void local_idle_put(queue_local *l, const local_shim *sh)
{
	if (l->nidle < LOCAL_IDLE_MAX) {
		l->idle[l->nidle++] = *sh;
		return;
	}
	close(sh->sock); /* it sees the end of its socket and exits */
	local_reap_later(l, sh->pid);
}

/* Conclude an ended attempt that is no longer in l->run; frees r. A shim that handed
 * its end over and got the "recorded" waits for its next attempt. */
static void finish_run(queue_local *l, local_run *r)
{
	/* Everything the record needs is in memory: no read before the write. */
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = r->task_id;
	a.n = r->n;
	snprintf(a.token, sizeof a.token, "%s", r->token);
	a.backend = QB_LOCAL;
	a.astate = QA_RUNNING;
	a.shim_pid = r->shim_pid;
	a.shim_start = r->shim_start;
	size_t used = 0;
	for (int k = 0; k < r->ngpu; k++)
		used += (size_t)snprintf(a.gpu_idx + used, sizeof a.gpu_idx - used, "%s%d",
		                         k ? "," : "", r->gidx[k]);
	a.reserved_mib = r->reserved_mib;
	a.per_gpu = r->per_gpu;
	a.started = r->started;
	a.peak_gpu_mib = r->peak_gpu;
	a.peak_rss_kib = r->peak_rss;
	a.log_offset = r->log_offset;
	if (finish_local(l, &a, r->task_pgid, r->have_status ? &r->status : NULL) == 0 &&
	    r->have_status) {
		char k = QUEUE_SHIM_RECORDED;
		if (send(r->sock, &k, 1, MSG_NOSIGNAL) == 1) {
			local_idle_put(l, &(local_shim){r->shim_pid, r->shim_start, r->sock});
			free(r);
			return;
		}
		/* It went meanwhile: its status file, if any, is then left over. */
	}
	if (r->sock >= 0) {
		close(r->sock);
		local_reap_later(l, r->shim_pid);
	}
	free(r);
}

/* Read what a shim sent; true when its attempt ended (its status handed over, or the
 * socket closed: the shim is gone and its status, if any, is in the file). */
static bool shim_message(local_run *r)
{
	char msg[1200];
	for (;;) {
		ssize_t got = recv(r->sock, msg, sizeof msg - 1, MSG_DONTWAIT);
		if (got < 0)
			return errno != EAGAIN && errno != EINTR;
		if (got == 0)
			return true;
		msg[got] = '\0';
		if (msg[0] == QUEUE_SHIM_PID) {
			r->task_pgid = atoi(msg + 1);
		} else if (msg[0] == QUEUE_SHIM_ENDED) {
			queue_status_parse(msg + 1, &r->status);
			r->have_status = true;
			return true;
		}
	}
}

/* Status files of attempts no longer running: a shim whose worker died right after
 * recording its end writes one nobody reads. */
static void drop_stale_status(queue_local *l)
{
	char dir[PATH_MAX + 8], path[2 * PATH_MAX];
	snprintf(dir, sizeof dir, "%s/run", l->env.dir);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		long long id;
		int n;
		if (e->d_name[0] == '.' || sscanf(e->d_name, "%lld.%d.", &id, &n) != 2)
			continue;
		bool live = false;
		for (int r = 0; r < l->nrun && !live; r++)
			live = l->run[r]->task_id == id && l->run[r]->n == n;
		if (!live) {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	closedir(d);
}

/* A shim of an earlier worker that still runs: follow it by PID. */
static void adopt(queue_local *l, const queue_attempt *a)
{
	local_run *r = local_run_new(a, -1);
	parse_gidx(a->gpu_idx, r);
	r->per_gpu = a->per_gpu > 0 ? a->per_gpu : 1;
	r->started_mono = gw_mono_ns() - (int64_t)((gw_wall_s() - a->started) * 1e9);
	r->peak_gpu = a->peak_gpu_mib;
	r->peak_rss = a->peak_rss_kib;
	local_run_add(l, r);
	queue_worker_log("task %lld attempt %d: re-adopted its running shim (pid %d)",
	                 (long long)a->task_id, a->n, a->shim_pid);
}

/* ---- the back-end table ---- */

static void *local_open(const queue_backend_env *env)
{
	queue_local *l = gw_xrealloc(NULL, sizeof *l);
	memset(l, 0, sizeof *l);
	l->env = *env;
	return l;
}

static void local_close(void *be)
{
	queue_local *l = be;
	local_flush_peaks(l);
	for (int i = 0; i < l->nrun; i++) {
		if (l->run[i]->sock >= 0)
			close(l->run[i]->sock);
		free(l->run[i]);
	}
	free(l->run);
	for (int i = 0; i < l->nidle; i++)
		close(l->idle[i].sock);
	free(l->reap);
	free(l->env_key);
	queue_env_free(l->env_base);
	free(l);
}

/* Pick up where an earlier worker left off: adopt live shims, conclude the rest. */
static void local_recover(void *be)
{
	queue_local *l = be;
	queue_attempt *act;
	int n;
	if (queue_db_active(l->env.st, QB_LOCAL, &act, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		queue_attempt *a = &act[i];
		if (a->astate == QA_STARTING) {
			/* The shim never got its go-ahead: the command did not run. */
			a->outcome = QO_NOT_STARTED;
			a->ended = gw_wall_s();
			queue_attempt_conclude(l->env.st, a, -1);
			queue_worker_log("task %lld attempt %d had not started; queued again",
			                 (long long)a->task_id, a->n);
			continue;
		}
		bool same_boot = !a->boot_id[0] || !strcmp(a->boot_id, l->env.boot_id);
		if (same_boot && queue_proc_alive(a->shim_pid, a->shim_start))
			adopt(l, a);
		else
			finish_local(l, a, 0, NULL);
	}
	free(act);
	drop_stale_status(l);
}

/* A new sample: who uses which GPU, peaks, the view for `queue gpus`. */
static void local_observe(void *be)
{
	queue_local *l = be;
	local_attribute(l);
	local_sample_rss(l);
	local_flush_peaks(l);
	local_publish_view(l);
}

static void local_cancel(void *be)
{
	queue_local *l = be;
	int64_t ids[64];
	int n = queue_db_cancel_list(l->env.st, ids, 64);
	for (int i = 0; i < n; i++)
		for (int r = 0; r < l->nrun; r++) {
			local_run *run = l->run[r];
			if (run->task_id != ids[i] || run->cancel_sent)
				continue;
			if (queue_proc_alive(run->shim_pid, run->shim_start))
				kill(run->shim_pid, SIGUSR1);
			run->cancel_sent = true;
			queue_worker_log("task %lld: cancel sent to shim %d",
			                 (long long)run->task_id, run->shim_pid);
		}
}

static void local_start(void *be, const queue_pass *p)
{
	queue_local *l = be;
	if (!p->quick)
		l->next_due = 0; /* recomputed by the full pass */
	local_schedule(l, p->quick);
}

static int local_fds(void *be, struct pollfd *out, int max)
{
	queue_local *l = be;
	int n = 0;
	for (int r = 0; r < l->nrun && n < max; r++)
		if (l->run[r]->sock >= 0)
			out[n++] = (struct pollfd){.fd = l->run[r]->sock, .events = POLLIN};
	return n;
}

static int64_t local_wait_ms(void *be, int64_t now)
{
	queue_local *l = be;
	(void)now;
	if (l->next_due <= 0)
		return -1;
	double left = (l->next_due - gw_wall_s()) * 1000.0 + 1;
	return left < 0 ? 0 : (int64_t)left;
}

static bool run_ended(local_run *run, const struct pollfd *fds, int n)
{
	if (run->sock < 0)
		return !queue_proc_alive(run->shim_pid, run->shim_start);
	for (int k = 0; k < n; k++)
		if (fds[k].fd == run->sock)
			return (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && shim_message(run);
	return false;
}

static void local_follow(void *be, const queue_pass *p, const struct pollfd *fds, int n)
{
	queue_local *l = be;
	for (int i = l->nreap - 1; i >= 0; i--)
		if (waitpid(l->reap[i], NULL, WNOHANG) != 0)
			l->reap[i] = l->reap[--l->nreap];
	local_run **ended = NULL;
	int nended = 0;
	for (int r = l->nrun - 1; r >= 0; r--) {
		local_run *run = l->run[r];
		if (!run_ended(run, fds, n))
			continue;
		ended = gw_xrealloc(ended, (size_t)(nended + 1) * sizeof *ended);
		ended[nended++] = run;
		l->run[r] = l->run[--l->nrun];
	}
	if (nended > 0 && !p->stopping) {
		l->next_due = 0;
		local_schedule(l, false);
	}
	for (int e = 0; e < nended; e++)
		finish_run(l, ended[e]);
	free(ended);
}

static int local_active(const void *be)
{
	return ((const queue_local *)be)->nrun;
}

const queue_backend_ops queue_backend_local = {
    .kind = QB_LOCAL,
    .open = local_open,
    .close = local_close,
    .recover = local_recover,
    .observe = local_observe,
    .cancel = local_cancel,
    .start = local_start,
    .fds = local_fds,
    .wait_ms = local_wait_ms,
    .follow = local_follow,
    .active = local_active,
};
