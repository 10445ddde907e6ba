/* host_top.c - CPU of every host process between two scans of /proc, the busiest kept. */
#include "host/host_top.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	unsigned pid, ppid;
	unsigned long long start; /* starttime: tells a reused PID from the same process */
	unsigned long long ticks; /* utime + stime */
	char comm[32];
} pstat;

struct host_top {
	char root[256];
	long clk_tck;
	pstat *prev, *cur;
	int nprev, ncur, cap_prev, cap_cur;
	int64_t prev_ns;
};

host_top *host_top_new(const char *proc_root)
{
	host_top *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	snprintf(h->root, sizeof h->root, "%s", proc_root ? proc_root : "/proc");
	h->clk_tck = sysconf(_SC_CLK_TCK);
	if (h->clk_tck <= 0)
		h->clk_tck = 100;
	return h;
}

void host_top_free(host_top *h)
{
	if (!h)
		return;
	free(h->prev);
	free(h->cur);
	free(h);
}

/* Parse /proc/PID/stat: "pid (comm) state ppid ... utime(14) stime(15) ... starttime(22)". */
static int read_stat(const char *root, unsigned pid, pstat *out)
{
	char path[300], buf[1024];
	snprintf(path, sizeof path, "%s/%u/stat", root, pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *lp = strchr(buf, '('), *rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp)
		return -1;
	size_t cl = (size_t)(rp - lp - 1);
	if (cl >= sizeof out->comm)
		cl = sizeof out->comm - 1;
	memcpy(out->comm, lp + 1, cl);
	out->comm[cl] = 0;
	/* Fields after ")": state(3) ppid(4) ... utime(14) stime(15) ... starttime(22). */
	unsigned long long f[23] = {0};
	int k = 3;
	char *p = rp + 2, *end;
	if (*p)
		p++; /* the state letter */
	while (k < 22 && *p) {
		k++;
		f[k] = strtoull(p, &end, 10);
		if (end == p)
			return -1;
		p = end;
	}
	if (k < 22)
		return -1;
	out->pid = pid;
	out->ppid = (unsigned)f[4];
	out->ticks = f[14] + f[15];
	out->start = f[22];
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	unsigned x = ((const pstat *)a)->pid, y = ((const pstat *)b)->pid;
	return (x > y) - (x < y);
}

static int cmp_cpu_desc(const void *a, const void *b)
{
	double x = ((const host_top_entry *)a)->cpu_pct, y = ((const host_top_entry *)b)->cpu_pct;
	return (x < y) - (x > y);
}

/* Read every numeric entry of /proc into h->cur, sorted by PID. */
static int scan_all(host_top *h)
{
	DIR *d = opendir(h->root);
	if (!d)
		return -1;
	h->ncur = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		unsigned pid = (unsigned)strtoul(e->d_name, NULL, 10);
		if (h->ncur == h->cap_cur) {
			int cap = h->cap_cur ? 2 * h->cap_cur : 512;
			pstat *np = realloc(h->cur, (size_t)cap * sizeof *np);
			if (!np)
				break;
			h->cur = np;
			h->cap_cur = cap;
		}
		/* A process gone between the listing and the read is simply skipped. */
		if (read_stat(h->root, pid, &h->cur[h->ncur]) == 0)
			h->ncur++;
	}
	closedir(d);
	qsort(h->cur, (size_t)h->ncur, sizeof *h->cur, cmp_pid);
	return 0;
}

int host_top_scan(host_top *h, int64_t mono_ns, host_top_entry *out, int max, double min_pct)
{
	if (scan_all(h) != 0)
		return 0;
	int n = 0;
	double dt = h->prev_ns ? (double)(mono_ns - h->prev_ns) / 1e9 : 0;
	host_top_entry *all = NULL;
	if (dt > 0 && max > 0)
		all = malloc((size_t)(h->ncur ? h->ncur : 1) * sizeof *all);
	for (int i = 0; all && i < h->ncur; i++) {
		const pstat *c = &h->cur[i];
		const pstat *p = bsearch(c, h->prev, (size_t)h->nprev, sizeof *c, cmp_pid);
		if (!p || p->start != c->start || c->ticks < p->ticks)
			continue; /* new since the last scan: no rate yet */
		double pct = 100.0 * (double)(c->ticks - p->ticks) / (double)h->clk_tck / dt;
		if (pct < min_pct)
			continue;
		host_top_entry *x = &all[n++];
		x->pid = c->pid;
		x->ppid = c->ppid;
		x->cpu_pct = pct;
		snprintf(x->comm, sizeof x->comm, "%s", c->comm);
	}
	if (all) {
		qsort(all, (size_t)n, sizeof *all, cmp_cpu_desc);
		if (n > max)
			n = max;
		memcpy(out, all, (size_t)n * sizeof *out);
		free(all);
	}
	/* This scan becomes the previous one. */
	pstat *t = h->prev;
	int tc = h->cap_prev;
	h->prev = h->cur;
	h->nprev = h->ncur;
	h->cap_prev = h->cap_cur;
	h->cur = t;
	h->cap_cur = tc;
	h->ncur = 0;
	h->prev_ns = mono_ns;
	return n;
}
