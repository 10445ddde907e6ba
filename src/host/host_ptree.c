/*
 * host_ptree.c - follow process trees through /proc.
 *
 * Each update lists /proc once and merges the listing (sorted by PID) with
 * the previous one, so starts and exits fall out of the merge. Only PID/stat
 * of new PIDs and of followed processes is read; a process known to be
 * outside the tree is skipped while the inode of its /proc entry is
 * unchanged. That is safe because procfs gives a reused PID a new inode (the
 * old dentry is invalidated when the task is released), and because a
 * process outside the tree never moves into it: re-parenting only goes up,
 * to a subreaper ancestor or to init.
 */
#include "host/host.h"
#include "host/host_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* status, cmdline and cgroup rarely change without an exec (which changes comm);
 * re-read them at least this often anyway. */
#define SLOW_REFRESH_NS (30LL * 1000000000LL)

enum { PT_UNKNOWN, PT_IN, PT_OUT };

struct pt_proc {
	host_pid_stat st; /* last read */
	bool have_st;     /* st holds a previous scan's values */
	int64_t st_mono;
	host_pid_io io;
	bool io_ok, io_denied;
	int64_t io_mono;
	char *cmdline;
	size_t cmdline_len;
	bool cmdline_ok;
	char *cgroup;
	size_t cgroup_len;
	enum host_runtime rt;
	char cid[65];
	bool uid_ok;
	uint32_t uid;
	char user[33];
	int nspid_n, nspid_inner;
	bool slow_done;
	int64_t slow_mono;
	char slow_comm[HOST_COMM_LEN];
	bool exit_reported;
	host_val v[HOST_PROC_COUNT];
	struct pt_proc *next_dead; /* graveyard link */
};

struct pt_entry {
	int pid, ppid;
	uint64_t ino;
	uint64_t start;
	uint8_t state;
	bool dead;  /* vanished during this scan */
	bool fresh; /* stat read this scan (scratch[] holds it) */
	bool kthread;
	bool is_root;
	struct pt_proc *p;
};

struct pt_listed {
	int pid;
	uint64_t ino;
};

enum { ROOT_PENDING, ROOT_LIVE, ROOT_GONE };
struct pt_root {
	int pid;
	int st;
	uint64_t start;
};

struct pt_event {
	enum host_proc_event_kind kind;
	bool already_running;
	int pid, ppid;
	char comm[HOST_COMM_LEN];
	const char *cmdline;
	size_t cmdline_len;
	host_val start_time, cpu_time;
};

struct pt_uid {
	uint32_t uid;
	char name[33];
};

struct host_ptree {
	char *proc_root;
	int proc_fd;
	DIR *dir;
	bool full_scan, all, roots_changed, have_prev;
	struct pt_root *roots;
	size_t nroots, roots_cap;
	struct pt_entry *e, *e2;
	size_t n, cap, cap2;
	host_pid_stat *scratch;
	size_t scratch_cap;
	struct pt_listed *list;
	size_t nlist, list_cap;
	struct pt_event *ev;
	size_t nev, ev_cap;
	struct pt_uid *uids;
	size_t nuids, uids_cap;
	struct pt_proc *graveyard;
	host_buf buf;
	char *fmt;
	size_t fmt_cap;
	long clk_tck, page_size;
	bool btime_ok;
	uint64_t btime;
	host_uptime prev_up;
	int64_t prev_mono;
	host_ptree_stats stats;
};

/* -------------------------------------------------------------- lifecycle */

static int open_root(host_ptree *t)
{
	if (t->dir)
		closedir(t->dir);
	if (t->proc_fd >= 0)
		close(t->proc_fd);
	t->dir = NULL;
	t->proc_fd = open(t->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->proc_fd < 0)
		return -1;
	int dfd = dup(t->proc_fd);
	if (dfd < 0 || !(t->dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	return 0;
}

host_ptree *host_ptree_new(const host_config *cfg)
{
	host_config def;
	if (!cfg) {
		host_config_default(&def);
		cfg = &def;
	}
	host_ptree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->proc_fd = -1;
	t->proc_root = strdup(cfg->proc_root ? cfg->proc_root : "/proc");
	if (!t->proc_root) {
		free(t);
		return NULL;
	}
	t->full_scan = cfg->proc_full_scan;
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (t->clk_tck <= 0)
		t->clk_tck = 100;
	t->page_size = sysconf(_SC_PAGESIZE);
	if (t->page_size <= 0)
		t->page_size = 4096;
	open_root(t); /* a missing root is reported by update() */
	return t;
}

static void proc_free(struct pt_proc *p)
{
	if (!p)
		return;
	free(p->cmdline);
	free(p->cgroup);
	free(p);
}

static void bury_all(host_ptree *t)
{
	while (t->graveyard) {
		struct pt_proc *p = t->graveyard;
		t->graveyard = p->next_dead;
		proc_free(p);
	}
}

void host_ptree_free(host_ptree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		proc_free(t->e[i].p);
	bury_all(t);
	if (t->dir)
		closedir(t->dir);
	if (t->proc_fd >= 0)
		close(t->proc_fd);
	free(t->proc_root);
	free(t->roots);
	free(t->e);
	free(t->e2);
	free(t->scratch);
	free(t->list);
	free(t->ev);
	free(t->uids);
	free(t->fmt);
	host_buf_free(&t->buf);
	free(t);
}

int host_ptree_set_root(host_ptree *t, const char *proc_root)
{
	char *r = strdup(proc_root);
	if (!r)
		return -1;
	free(t->proc_root);
	t->proc_root = r;
	t->btime_ok = false;
	return open_root(t);
}

int host_ptree_follow(host_ptree *t, const int *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (pids[i] <= 0)
			continue;
		void *r = t->roots;
		if (host_grow(&r, &t->roots_cap, t->nroots + 1, sizeof(*t->roots)) != 0)
			return -1;
		t->roots = r;
		t->roots[t->nroots++] = (struct pt_root){.pid = pids[i], .st = ROOT_PENDING};
	}
	t->roots_changed = true;
	return 0;
}

void host_ptree_follow_all(host_ptree *t)
{
	t->all = true;
	t->roots_changed = true;
}

bool host_ptree_active(const host_ptree *t)
{
	return t->all || t->nroots > 0;
}

host_ptree_stats host_ptree_last_stats(const host_ptree *t)
{
	return t->stats;
}

/* ------------------------------------------------------------------ helpers */

static int find_entry(const struct pt_entry *e, size_t n, int pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e[mid].pid < pid)
			lo = mid + 1;
		else if (e[mid].pid > pid)
			hi = mid;
		else
			return (int)mid;
	}
	return -1;
}

static int cmp_listed(const void *a, const void *b)
{
	int x = ((const struct pt_listed *)a)->pid, y = ((const struct pt_listed *)b)->pid;
	return (x > y) - (x < y);
}

/* Read PID/<name> into t->buf: 0, or -errno. */
static int read_pid_file(host_ptree *t, int pid, const char *name)
{
	char path[64];
	snprintf(path, sizeof(path), "%d/%s", pid, name);
	return host_buf_readat(&t->buf, t->proc_fd, path);
}

/* After ENOENT on an optional file: is the process itself gone? */
static bool pid_gone(host_ptree *t, int pid, int err)
{
	if (err == -ESRCH)
		return true;
	if (err != -ENOENT)
		return false;
	char path[32];
	snprintf(path, sizeof(path), "%d/stat", pid);
	return faccessat(t->proc_fd, path, F_OK, 0) != 0;
}

static void user_name(host_ptree *t, uint32_t uid, char out[33])
{
	for (size_t i = 0; i < t->nuids; i++)
		if (t->uids[i].uid == uid) {
			memcpy(out, t->uids[i].name, 33);
			return;
		}
	struct passwd pw, *res = NULL;
	char pwbuf[1024];
	if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res && res->pw_name)
		host_copy_name(out, 33, res->pw_name, strlen(res->pw_name));
	else
		snprintf(out, 33, "%u", uid);
	void *u = t->uids;
	if (host_grow(&u, &t->uids_cap, t->nuids + 1, sizeof(*t->uids)) == 0) {
		t->uids = u;
		t->uids[t->nuids].uid = uid;
		memcpy(t->uids[t->nuids].name, out, 33);
		t->nuids++;
	}
}

static int add_event(host_ptree *t, enum host_proc_event_kind kind, bool already,
                     const struct pt_entry *e, const host_pid_stat *st, const struct pt_proc *p)
{
	void *a = t->ev;
	if (host_grow(&a, &t->ev_cap, t->nev + 1, sizeof(*t->ev)) != 0)
		return -1;
	t->ev = a;
	struct pt_event *ev = &t->ev[t->nev++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->already_running = already;
	ev->pid = e->pid;
	ev->ppid = st->ppid;
	memcpy(ev->comm, st->comm, sizeof(ev->comm));
	if (p && p->cmdline_ok) {
		ev->cmdline = p->cmdline;
		ev->cmdline_len = p->cmdline_len;
	}
	if (p) {
		ev->start_time = p->v[HOST_PROC_START_TIME];
		ev->cpu_time = p->v[HOST_PROC_CPU_TIME];
	}
	return 0;
}

/* An exit: the entry's process disappeared, became a zombie, or its PID was reused. */
static int note_exit(host_ptree *t, struct pt_entry *e)
{
	struct pt_proc *p = e->p;
	if (!p)
		return 0;
	int rc = 0;
	if (!p->exit_reported)
		rc = add_event(t, HOST_PROC_EXIT, false, e, &p->st, p);
	p->exit_reported = true;
	p->next_dead = t->graveyard; /* freed after the events are copied out */
	t->graveyard = p;
	e->p = NULL;
	return rc;
}

/* --------------------------------------------------------------- the scan */

static int list_proc(host_ptree *t)
{
	t->nlist = 0;
	rewinddir(t->dir);
	bool sorted = true;
	struct dirent *d;
	while ((d = readdir(t->dir)) != NULL) {
		const char *s = d->d_name;
		if (*s < '1' || *s > '9')
			continue;
		long v = 0;
		for (; *s >= '0' && *s <= '9' && v <= INT32_MAX; s++)
			v = v * 10 + (*s - '0');
		if (*s || v > INT32_MAX)
			continue;
		void *a = t->list;
		if (host_grow(&a, &t->list_cap, t->nlist + 1, sizeof(*t->list)) != 0)
			return -1;
		t->list = a;
		if (t->nlist && t->list[t->nlist - 1].pid > v)
			sorted = false;
		t->list[t->nlist++] = (struct pt_listed){(int)v, (uint64_t)d->d_ino};
	}
	if (!sorted) /* procfs lists in PID order; fixture trees on disk do not */
		qsort(t->list, t->nlist, sizeof(*t->list), cmp_listed);
	return 0;
}

/* Merge the old table with the listing into e2; exits of vanished PIDs noted. */
static int merge_listing(host_ptree *t)
{
	void *a = t->e2;
	if (host_grow(&a, &t->cap2, t->nlist + 1, sizeof(*t->e2)) != 0)
		return -1;
	t->e2 = a;
	size_t i = 0, j = 0, k = 0;
	while (i < t->n || j < t->nlist) {
		if (j == t->nlist || (i < t->n && t->e[i].pid < t->list[j].pid)) {
			if (t->e[i].state == PT_IN && note_exit(t, &t->e[i]) != 0)
				return -1;
			i++;
			continue;
		}
		struct pt_entry *ne = &t->e2[k++];
		if (i < t->n && t->e[i].pid == t->list[j].pid) {
			*ne = t->e[i++];
			ne->fresh =
			    ne->state != PT_OUT || ne->ino != t->list[j].ino || t->full_scan;
		} else {
			memset(ne, 0, sizeof(*ne));
			ne->pid = t->list[j].pid;
			ne->state = PT_UNKNOWN;
			ne->fresh = true;
		}
		ne->ino = t->list[j].ino;
		ne->dead = false;
		ne->is_root = false;
		j++;
	}
	/* the old table's procs now live in e2 */
	struct pt_entry *tmp = t->e;
	size_t tcap = t->cap;
	t->e = t->e2;
	t->cap = t->cap2;
	t->e2 = tmp;
	t->cap2 = tcap;
	t->n = k;
	return 0;
}

/* Read PID/stat of every entry marked fresh into scratch[]. */
static int read_stats(host_ptree *t)
{
	void *a = t->scratch;
	if (host_grow(&a, &t->scratch_cap, t->n + 1, sizeof(*t->scratch)) != 0)
		return -1;
	t->scratch = a;
	for (size_t i = 0; i < t->n; i++) {
		struct pt_entry *e = &t->e[i];
		if (!e->fresh)
			continue;
		t->stats.stat_reads++;
		host_pid_stat *st = &t->scratch[i];
		if (read_pid_file(t, e->pid, "stat") != 0 ||
		    host_parse_pid_stat(t->buf.p, t->buf.len, st) != 0 || st->pid != e->pid) {
			/* gone between listing and reading (or unreadable): skip it */
			e->dead = true;
			e->fresh = false;
			if (e->state == PT_IN && note_exit(t, e) != 0)
				return -1;
			continue;
		}
		uint64_t start = (st->has & HOST_PS_STARTTIME) ? st->starttime : 0;
		if (e->state != PT_UNKNOWN && e->start != start) {
			/* the PID was reused: the old process exited */
			if (e->state == PT_IN && note_exit(t, e) != 0)
				return -1;
			e->state = PT_UNKNOWN;
		}
		e->start = start;
		e->ppid = st->ppid;
		e->kthread = (st->has & HOST_PS_FLAGS) ? (st->flags & HOST_PF_KTHREAD) != 0
		                                       : (e->pid == 2 || st->ppid == 2);
	}
	return 0;
}

static void bind_roots(host_ptree *t)
{
	for (size_t r = 0; r < t->nroots; r++) {
		struct pt_root *root = &t->roots[r];
		if (root->st == ROOT_GONE)
			continue;
		int i = find_entry(t->e, t->n, root->pid);
		bool alive = i >= 0 && !t->e[i].dead;
		if (root->st == ROOT_PENDING) {
			if (!alive)
				continue;
			root->start = t->e[i].start;
			root->st = ROOT_LIVE;
		} else if (!alive || t->e[i].start != root->start) {
			root->st = ROOT_GONE;
			continue;
		}
		t->e[i].is_root = true;
		t->e[i].state = PT_IN;
	}
}

/* Decide PT_IN/PT_OUT for every PT_UNKNOWN entry by walking up its parents. */
static void resolve(host_ptree *t)
{
	if (t->roots_changed) /* new roots: what was outside may now be inside */
		for (size_t i = 0; i < t->n; i++)
			if (t->e[i].state == PT_OUT)
				t->e[i].state = PT_UNKNOWN;
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].state != PT_UNKNOWN)
			continue;
		if (t->all) {
			t->e[i].state = t->e[i].kthread ? PT_OUT : PT_IN;
			continue;
		}
		/* walk up until a decided ancestor; the chain inherits its answer */
		size_t cur = i, steps = 0;
		uint8_t answer = PT_OUT;
		for (;;) {
			struct pt_entry *e = &t->e[cur];
			if (e->state != PT_UNKNOWN) {
				answer = e->state;
				break;
			}
			int par = e->ppid > 0 ? find_entry(t->e, t->n, e->ppid) : -1;
			if (par < 0 || (size_t)par == cur || ++steps > t->n ||
			    (t->e[par].dead && t->e[par].state == PT_UNKNOWN))
				break;
			cur = (size_t)par;
		}
		for (cur = i, steps = 0; t->e[cur].state == PT_UNKNOWN && steps <= t->n; steps++) {
			t->e[cur].state = answer;
			int par = t->e[cur].ppid > 0 ? find_entry(t->e, t->n, t->e[cur].ppid) : -1;
			if (par < 0)
				break;
			cur = (size_t)par;
		}
	}
}

/* The slowly changing files: status (uid, NSpid), cmdline, cgroup. */
static int read_slow(host_ptree *t, struct pt_entry *e, struct pt_proc *p, int64_t mono)
{
	int rc;
	t->stats.other_reads += 3;
	if ((rc = read_pid_file(t, e->pid, "status")) == 0) {
		host_pid_status ps;
		if (host_parse_pid_status(t->buf.p, t->buf.len, &ps) == 0) {
			if (ps.has & HOST_PST_UID) {
				p->uid = ps.uid[0];
				p->uid_ok = true;
				user_name(t, p->uid, p->user);
			}
			if (ps.has & HOST_PST_NSPID) {
				p->nspid_n = ps.nspid_n;
				p->nspid_inner = ps.nspid[ps.nspid_n - 1];
			}
		}
	} else if (pid_gone(t, e->pid, rc)) {
		return 1;
	}
	if ((rc = read_pid_file(t, e->pid, "cmdline")) == 0) {
		size_t need = host_format_cmdline(t->buf.p, t->buf.len, NULL, 0);
		char *s = realloc(p->cmdline, need + 1);
		if (!s)
			return -1;
		host_format_cmdline(t->buf.p, t->buf.len, s, need + 1);
		p->cmdline = s;
		p->cmdline_len = need;
		p->cmdline_ok = true;
	} else if (pid_gone(t, e->pid, rc)) {
		return 1;
	}
	if ((rc = read_pid_file(t, e->pid, "cgroup")) == 0) {
		host_cgroup cg;
		if (host_parse_cgroup(t->buf.p, t->buf.len, &cg) == 0) {
			size_t n = strlen(cg.path);
			char *s = realloc(p->cgroup, n + 1);
			if (!s)
				return -1;
			memcpy(s, cg.path, n + 1);
			p->cgroup = s;
			p->cgroup_len = n;
			p->rt = cg.runtime;
			memcpy(p->cid, cg.id, sizeof(p->cid));
		}
	} else if (pid_gone(t, e->pid, rc)) {
		return 1;
	}
	p->slow_done = true;
	p->slow_mono = mono;
	memcpy(p->slow_comm, p->st.comm, sizeof(p->slow_comm));
	return 0;
}

static void set(host_val *v, double x)
{
	v->v = x;
	v->ok = true;
}

static void rate(host_val *v, uint64_t prev, uint64_t cur, double dt, double scale)
{
	if (cur < prev || dt <= 0) {
		v->ok = false;
		return;
	}
	set(v, (double)(cur - prev) * scale / dt);
}

/* Values of one followed process from its previous and current stat and io. */
static void proc_values(host_ptree *t, struct pt_proc *p, const host_pid_stat *st, bool had_prev,
                        const host_pid_io *io, bool io_ok, int64_t mono, bool started_in_interval)
{
	host_val *v = p->v;
	for (int k = 0; k < HOST_PROC_COUNT; k++)
		v[k].ok = false;
	double tck = (double)t->clk_tck;
	bool times = (st->has & HOST_PS_UTIME) && (st->has & HOST_PS_STIME);
	if (times)
		set(&v[HOST_PROC_CPU_TIME], (double)(st->utime + st->stime) / tck);
	const host_pid_stat *ps = &p->st;
	if (had_prev && times && (ps->has & HOST_PS_UTIME) && (ps->has & HOST_PS_STIME)) {
		double dt = (double)(mono - p->st_mono) / 1e9;
		rate(&v[HOST_PROC_CPU_USER], ps->utime, st->utime, dt, 100.0 / tck);
		rate(&v[HOST_PROC_CPU_SYSTEM], ps->stime, st->stime, dt, 100.0 / tck);
		rate(&v[HOST_PROC_CPU], ps->utime + ps->stime, st->utime + st->stime, dt,
		     100.0 / tck);
	} else if (!had_prev && times && started_in_interval && t->have_prev) {
		/* born after the previous scan: all its CPU time is in this interval */
		double dt = (double)(mono - t->prev_mono) / 1e9;
		rate(&v[HOST_PROC_CPU_USER], 0, st->utime, dt, 100.0 / tck);
		rate(&v[HOST_PROC_CPU_SYSTEM], 0, st->stime, dt, 100.0 / tck);
		rate(&v[HOST_PROC_CPU], 0, st->utime + st->stime, dt, 100.0 / tck);
	}
	if (had_prev && (st->has & HOST_PS_MAJFLT) && (ps->has & HOST_PS_MAJFLT))
		rate(&v[HOST_PROC_MAJFLT_RATE], ps->majflt, st->majflt,
		     (double)(mono - p->st_mono) / 1e9, 1);
	if ((st->has & HOST_PS_RSS) && st->rss_pages >= 0)
		set(&v[HOST_PROC_RSS], (double)st->rss_pages * (double)t->page_size);
	if (st->has & HOST_PS_VSIZE)
		set(&v[HOST_PROC_VSIZE], (double)st->vsize);
	if (st->has & HOST_PS_THREADS)
		set(&v[HOST_PROC_THREADS], (double)st->threads);
	if ((st->has & HOST_PS_STARTTIME) && t->btime_ok)
		set(&v[HOST_PROC_START_TIME], (double)t->btime + (double)st->starttime / tck);
	if (io_ok) {
		static const struct {
			int metric, field;
		} rates[] = {
		    {HOST_PROC_READ_RATE, HOST_IO_READ_BYTES},
		    {HOST_PROC_WRITE_RATE, HOST_IO_WRITE_BYTES},
		    {HOST_PROC_RCHAR_RATE, HOST_IO_RCHAR},
		    {HOST_PROC_WCHAR_RATE, HOST_IO_WCHAR},
		};
		double dt = (double)(mono - p->io_mono) / 1e9;
		for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
			unsigned bit = 1u << rates[k].field;
			if (p->io_ok && (io->has & bit) && (p->io.has & bit))
				rate(&v[rates[k].metric], p->io.v[rates[k].field],
				     io->v[rates[k].field], dt, 1);
		}
		if (io->has & (1u << HOST_IO_READ_BYTES))
			set(&v[HOST_PROC_READ_BYTES], (double)io->v[HOST_IO_READ_BYTES]);
		if (io->has & (1u << HOST_IO_WRITE_BYTES))
			set(&v[HOST_PROC_WRITE_BYTES], (double)io->v[HOST_IO_WRITE_BYTES]);
	}
}

/* Bring one followed process up to date. 1: it vanished; 0: ok; -1: ENOMEM. */
static int refresh_proc(host_ptree *t, struct pt_entry *e, const host_pid_stat *st, int64_t mono)
{
	struct pt_proc *p = e->p;
	bool had_prev = p->have_st;
	bool zombie = st->state == 'Z' || st->state == 'X';
	bool started_in_interval = false;
	if (!had_prev && t->prev_up.ok && (st->has & HOST_PS_STARTTIME))
		started_in_interval =
		    (double)st->starttime / (double)t->clk_tck > t->prev_up.seconds;

	host_pid_io io = {0};
	bool io_ok = false;
	if (!zombie && (!p->io_denied || mono - p->slow_mono >= SLOW_REFRESH_NS)) {
		t->stats.other_reads++;
		int rc = read_pid_file(t, e->pid, "io");
		if (rc == 0)
			io_ok = host_parse_pid_io(t->buf.p, t->buf.len, &io) == 0;
		else if (pid_gone(t, e->pid, rc))
			return 1;
		p->io_denied = rc == -EACCES || rc == -EPERM;
	}
	/* comm changes on exec; the command line and cgroup usually with it */
	if (!zombie && (!p->slow_done || strcmp(p->slow_comm, st->comm) != 0 ||
	                mono - p->slow_mono >= SLOW_REFRESH_NS)) {
		memcpy(p->st.comm, st->comm, sizeof(p->st.comm));
		int rc = read_slow(t, e, p, mono);
		if (rc != 0)
			return rc;
	}
	if (zombie && !p->cmdline_ok) {
		p->cmdline_ok = true; /* nothing left to read: an exited process has no arguments */
		p->cmdline_len = 0;
	}
	proc_values(t, p, st, had_prev, &io, io_ok, mono, started_in_interval);
	p->st = *st;
	p->have_st = true;
	p->st_mono = mono;
	if (io_ok) {
		p->io = io;
		p->io_mono = mono;
	}
	p->io_ok = io_ok;
	return 0;
}

static int update_followed(host_ptree *t, int64_t mono)
{
	bool already = t->roots_changed;
	for (size_t i = 0; i < t->n; i++) {
		struct pt_entry *e = &t->e[i];
		if (e->dead || e->state != PT_IN)
			continue;
		if (!e->fresh) {
			/* a followed process is always read; a stale entry means its
			 * state just changed to IN through new roots: read it now */
			t->stats.stat_reads++;
			if (read_pid_file(t, e->pid, "stat") != 0 ||
			    host_parse_pid_stat(t->buf.p, t->buf.len, &t->scratch[i]) != 0) {
				e->dead = true;
				if (note_exit(t, e) != 0)
					return -1;
				continue;
			}
			e->fresh = true;
		}
		const host_pid_stat *st = &t->scratch[i];
		bool is_new = e->p == NULL;
		if (is_new) {
			e->p = calloc(1, sizeof(*e->p));
			if (!e->p)
				return -1;
			e->p->st = *st;
		}
		int rc = refresh_proc(t, e, st, mono);
		if (rc < 0)
			return -1;
		if (rc == 1) { /* vanished mid-read */
			e->dead = true;
			if (is_new) {
				proc_free(e->p);
				e->p = NULL;
			} else if (note_exit(t, e) != 0) {
				return -1;
			}
			continue;
		}
		if (is_new && add_event(t, HOST_PROC_START, already, e, st, e->p) != 0)
			return -1;
		bool zombie = st->state == 'Z' || st->state == 'X';
		if (zombie && !e->p->exit_reported) {
			if (add_event(t, HOST_PROC_EXIT, false, e, st, e->p) != 0)
				return -1;
			e->p->exit_reported = true;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- the output */

static int grow_out(void **arr, size_t *cap, size_t need, size_t elem)
{
	return host_grow(arr, cap, need ? need : 1, elem);
}

static int emit(host_ptree *t, double wall_s, host_sample *out)
{
	size_t nproc = 0, strings = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct pt_entry *e = &t->e[i];
		if (e->dead || e->state != PT_IN || !e->p)
			continue;
		nproc++;
		strings += e->p->cmdline_len + 1 + e->p->cgroup_len + 1;
	}
	for (size_t i = 0; i < t->nev; i++)
		strings += t->ev[i].cmdline_len + 1;
	void *a = out->procs;
	if (grow_out(&a, &out->procs_cap, nproc, sizeof(*out->procs)) != 0)
		return -1;
	out->procs = a;
	a = out->events;
	if (grow_out(&a, &out->events_cap, t->nev, sizeof(*out->events)) != 0)
		return -1;
	out->events = a;
	if (host_arena_reserve(out, strings + 1) != 0)
		return -1;

	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct pt_entry *e = &t->e[i];
		if (e->dead || e->state != PT_IN || !e->p)
			continue;
		const struct pt_proc *p = e->p;
		host_proc *o = &out->procs[k++];
		memset(o, 0, sizeof(*o));
		o->pid = e->pid;
		o->ppid = p->st.ppid;
		o->state = p->st.state;
		memcpy(o->comm, p->st.comm, sizeof(o->comm));
		o->is_root = e->is_root;
		o->kthread = e->kthread;
		o->uid_ok = p->uid_ok;
		o->uid = p->uid;
		if (p->uid_ok)
			memcpy(o->user, p->user, sizeof(o->user));
		if (e->kthread)
			o->cmdline = host_arena_put(out, "", 0);
		else if (p->cmdline_ok)
			o->cmdline =
			    host_arena_put(out, p->cmdline ? p->cmdline : "", p->cmdline_len);
		if (p->cgroup)
			o->cgroup = host_arena_put(out, p->cgroup, p->cgroup_len);
		o->runtime = p->rt;
		memcpy(o->container_id, p->cid, sizeof(o->container_id));
		o->nspid_n = p->nspid_n;
		o->nspid_inner = p->nspid_inner;
		o->start_ticks = e->start;
		memcpy(o->v, p->v, sizeof(o->v));
		o->parent = o->first_child = o->next_sibling = -1;
	}
	out->nprocs = k;
	/* tree links; children listed in ascending PID order */
	for (size_t i = k; i-- > 0;) {
		host_proc *o = &out->procs[i];
		int par = host_sample_find_proc(out, o->ppid);
		if (par < 0 || (size_t)par == i)
			continue;
		o->parent = par;
		o->next_sibling = out->procs[par].first_child;
		out->procs[par].first_child = (int)i;
		out->procs[par].nchildren++;
	}
	for (size_t i = 0; i < t->nev; i++) {
		const struct pt_event *ev = &t->ev[i];
		host_proc_event *o = &out->events[i];
		memset(o, 0, sizeof(*o));
		o->kind = ev->kind;
		o->already_running = ev->already_running;
		o->pid = ev->pid;
		o->ppid = ev->ppid;
		memcpy(o->comm, ev->comm, sizeof(o->comm));
		if (ev->cmdline)
			o->cmdline = host_arena_put(out, ev->cmdline, ev->cmdline_len);
		o->start_time = ev->start_time;
		o->cpu_time = ev->cpu_time;
		o->wall_s = wall_s;
	}
	out->nevents = t->nev;
	return 0;
}

static void read_clock_refs(host_ptree *t, host_uptime *up)
{
	up->ok = false;
	if (host_buf_readat(&t->buf, t->proc_fd, "uptime") == 0)
		host_parse_uptime(t->buf.p, t->buf.len, up);
	if (!t->btime_ok && host_buf_readat(&t->buf, t->proc_fd, "stat") == 0) {
		/* only btime is wanted; a throw-away parse of /proc/stat once */
		host_stat st = {0};
		if (host_parse_stat(t->buf.p, t->buf.len, &st) == 0 && (st.has & HOST_STAT_BTIME)) {
			t->btime = st.btime;
			t->btime_ok = true;
		}
		host_stat_free(&st);
	}
}

int host_ptree_update(host_ptree *t, int64_t mono_ns, double wall_s, host_sample *out)
{
	out->nprocs = 0;
	out->nevents = 0;
	t->nev = 0;
	memset(&t->stats, 0, sizeof(t->stats));
	if (!host_ptree_active(t))
		return 0;
	if (!t->dir && open_root(t) != 0)
		return -1;
	host_uptime up;
	read_clock_refs(t, &up);
	int rc = -1;
	if (list_proc(t) != 0 || merge_listing(t) != 0 || read_stats(t) != 0)
		goto done;
	bind_roots(t);
	resolve(t);
	if (update_followed(t, mono_ns) != 0 || emit(t, wall_s, out) != 0)
		goto done;
	rc = 0;
done:;
	/* drop the entries that vanished during the scan */
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].dead) {
			proc_free(t->e[i].p);
			continue;
		}
		t->e[k++] = t->e[i];
	}
	t->n = k;
	bury_all(t);
	t->stats.listed = t->nlist;
	t->stats.followed = out->nprocs;
	t->roots_changed = false;
	t->prev_up = up;
	t->prev_mono = mono_ns;
	t->have_prev = true;
	return rc;
}
