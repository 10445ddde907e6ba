/* feed.c - snapshots from the sampling thread to the UI thread (see feed.h). */
#include "top/feed.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"

/* Followed processes are roots of the feed's own process follower; this bounds them. */
#define FOLLOW_MAX 4096

typedef struct {
	int pid;
	long tick; /* when it was (last) followed */
	int tries; /* follows so far: a root that never binds (PID reused) is retried twice */
} followed;

struct top_feed {
	/* sampling thread only */
	host_ptree *pt;
	host_sample hs;
	snapshot work;
	followed *fol;
	int nfol;
	long tick;
	/* shared */
	pthread_mutex_t mu;
	snapshot q[TOP_FEED_QUEUE];
	int qhead, qn;
	long dropped;
	int pipe[2];
};

top_feed *top_feed_new(const char *proc_root)
{
	top_feed *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	host_config cfg;
	host_config_default(&cfg);
	if (proc_root)
		cfg.proc_root = proc_root;
	f->pt = host_ptree_new(&cfg);
	f->fol = calloc(FOLLOW_MAX, sizeof *f->fol);
	f->pipe[0] = f->pipe[1] = -1;
	if (!f->pt || !f->fol || pipe2(f->pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		top_feed_free(f);
		return NULL;
	}
	snapshot_init(&f->work, 0);
	for (int i = 0; i < TOP_FEED_QUEUE; i++)
		snapshot_init(&f->q[i], 0);
	pthread_mutex_init(&f->mu, NULL);
	return f;
}

void top_feed_free(top_feed *f)
{
	if (!f)
		return;
	if (f->pt) {
		host_ptree_free(f->pt);
		host_sample_free(&f->hs);
		snapshot_free(&f->work);
		for (int i = 0; i < TOP_FEED_QUEUE; i++)
			snapshot_free(&f->q[i]);
		pthread_mutex_destroy(&f->mu);
	}
	for (int i = 0; i < 2; i++)
		if (f->pipe[i] >= 0)
			close(f->pipe[i]);
	free(f->fol);
	free(f);
}

int top_feed_fd(const top_feed *f)
{
	return f->pipe[0];
}

static followed *find_followed(top_feed *f, int pid)
{
	for (int i = 0; i < f->nfol; i++)
		if (f->fol[i].pid == pid)
			return &f->fol[i];
	return NULL;
}

/* Follow pid (and its descendants) from the next scan on, once. */
static void follow(top_feed *f, int pid)
{
	if (pid <= 1 || find_followed(f, pid) || f->nfol >= FOLLOW_MAX)
		return;
	f->fol[f->nfol++] = (followed){pid, f->tick, 1};
	host_ptree_follow(f->pt, &pid, 1);
}

/*
 * A GPU process followed a while ago but absent from the scan holds a PID
 * that a earlier process had when it was first followed: follow it again
 * so the root binds to the process that has the PID now.
 */
static void refollow_missing(top_feed *f, int pid)
{
	followed *fo = find_followed(f, pid);
	if (!fo || f->tick - fo->tick < 3 || fo->tries >= 3 ||
	    host_sample_find_proc(&f->hs, pid) >= 0)
		return;
	fo->tick = f->tick;
	fo->tries++;
	host_ptree_follow(f->pt, &pid, 1);
}

static void from_host(tl_proc *p, const host_proc *hp)
{
	p->ppid = (unsigned)hp->ppid;
	if (hp->v[HOST_PROC_CPU].ok)
		p->cpu_pct = hp->v[HOST_PROC_CPU].v;
	if (hp->v[HOST_PROC_RSS].ok)
		p->rss_mib = hp->v[HOST_PROC_RSS].v / (1024.0 * 1024.0);
	if (!p->user[0] && hp->user[0])
		snprintf(p->user, sizeof p->user, "%.31s", hp->user);
	if (!p->cmd[0])
		snprintf(p->cmd, sizeof p->cmd, "%.127s",
		         hp->cmdline && hp->cmdline[0] ? hp->cmdline : hp->comm);
}

static bool is_gpu_pid(const snapshot *s, int ngpu_procs, unsigned pid)
{
	for (int i = 0; i < ngpu_procs; i++)
		if (s->procs[i].gpu >= 0 && s->procs[i].pid == pid)
			return true;
	return false;
}

/* Host data for the GPU processes, and the processes around them as records with gpu -1. */
static void enrich(top_feed *f, snapshot *w)
{
	int n = w->nproc;
	for (int i = 0; i < n; i++)
		if (w->procs[i].gpu >= 0 && w->procs[i].alive) {
			follow(f, (int)w->procs[i].pid);
			refollow_missing(f, (int)w->procs[i].pid);
		}
	host_ptree_update(f->pt, w->t_mono_ns, w->t_wall, &f->hs);
	for (int i = 0; i < n; i++) {
		tl_proc *p = &w->procs[i];
		if (p->gpu < 0)
			continue;
		int k = host_sample_find_proc(&f->hs, (int)p->pid);
		if (k < 0)
			continue;
		from_host(p, &f->hs.procs[k]);
		/* The parent brings the launcher and the sibling ranks into the tree. */
		follow(f, (int)p->ppid);
	}
	for (size_t k = 0; k < f->hs.nprocs; k++) {
		const host_proc *hp = &f->hs.procs[k];
		if (hp->state == 'Z' || is_gpu_pid(w, n, (unsigned)hp->pid))
			continue;
		tl_proc *p = snapshot_add_proc(w);
		p->pid = (unsigned)hp->pid;
		p->alive = true;
		from_host(p, hp);
	}
}

void top_feed_push(const snapshot *s, void *arg)
{
	top_feed *f = arg;
	f->tick++;
	top_snapshot_copy(&f->work, s);
	enrich(f, &f->work);
	pthread_mutex_lock(&f->mu);
	if (f->qn == TOP_FEED_QUEUE) {
		f->qhead = (f->qhead + 1) % TOP_FEED_QUEUE;
		f->qn--;
		f->dropped++;
	}
	/* The work snapshot's storage goes to the queue, the slot's comes back for the next tick.
	 */
	snapshot *slot = &f->q[(f->qhead + f->qn) % TOP_FEED_QUEUE], t = *slot;
	*slot = f->work;
	f->work = t;
	f->qn++;
	pthread_mutex_unlock(&f->mu);
	/* A full pipe already holds a wake-up: EAGAIN is fine. */
	ssize_t r = write(f->pipe[1], "s", 1);
	(void)r;
}

int top_feed_drain(top_feed *f, top_model *m, long *dropped)
{
	char buf[64];
	while (read(f->pipe[0], buf, sizeof buf) > 0)
		;
	int n = 0;
	pthread_mutex_lock(&f->mu);
	while (f->qn > 0) {
		top_model_ingest_take(m, &f->q[f->qhead]);
		f->qhead = (f->qhead + 1) % TOP_FEED_QUEUE;
		f->qn--;
		n++;
	}
	if (dropped)
		*dropped = f->dropped;
	pthread_mutex_unlock(&f->mu);
	return n;
}
