/* host.c - the sampler: read the system-wide files, compute, follow processes. */
#include "host/host.h"
#include "host/host_int.h"

#include "util/timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ config */

void host_config_default(host_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->proc_root = "/proc";
	cfg->sys_root = "/sys";
	cfg->fs_root = "/";
}

/* ------------------------------------------------------------ metric info */

#define HOST_X_INFO(id, name, unit, src, help) {name, unit, src, help},
static const host_metric_info sys_info[] = {
#define HOST_SYS_METRIC HOST_X_INFO
#include "host/host_metrics.def"
#undef HOST_SYS_METRIC
};
static const host_metric_info cpu_info[] = {
#define HOST_CPU_METRIC HOST_X_INFO
#include "host/host_metrics.def"
#undef HOST_CPU_METRIC
};
static const host_metric_info disk_info[] = {
#define HOST_DISK_METRIC HOST_X_INFO
#include "host/host_metrics.def"
#undef HOST_DISK_METRIC
};
static const host_metric_info net_info[] = {
#define HOST_NET_METRIC HOST_X_INFO
#include "host/host_metrics.def"
#undef HOST_NET_METRIC
};
static const host_metric_info proc_info[] = {
#define HOST_PROC_METRIC HOST_X_INFO
#include "host/host_metrics.def"
#undef HOST_PROC_METRIC
};
#undef HOST_X_INFO

int host_table_size(enum host_table table)
{
	switch (table) {
	case HOST_TABLE_SYS:
		return HOST_SYS_COUNT;
	case HOST_TABLE_CPU:
		return HOST_CPU_COUNT;
	case HOST_TABLE_DISK:
		return HOST_DISK_COUNT;
	case HOST_TABLE_NET:
		return HOST_NET_COUNT;
	case HOST_TABLE_PROC:
		return HOST_PROC_COUNT;
	}
	return 0;
}

const host_metric_info *host_metric_info_get(enum host_table table, int id)
{
	static const host_metric_info *const tables[] = {sys_info, cpu_info, disk_info, net_info,
	                                                 proc_info};
	if ((unsigned)table >= sizeof(tables) / sizeof(tables[0]) || id < 0 ||
	    id >= host_table_size(table))
		return NULL;
	return &tables[table][id];
}

/* ------------------------------------------------------------------ sample */

void host_sample_free(host_sample *s)
{
	free(s->cpus);
	free(s->disks);
	free(s->nets);
	free(s->procs);
	free(s->events);
	free(s->arena);
	memset(s, 0, sizeof(*s));
}

static int dup_array(void **dst, size_t *cap, const void *src, size_t n, size_t elem)
{
	if (n == 0)
		return 0;
	if (host_grow(dst, cap, n, elem) != 0)
		return -1;
	memcpy(*dst, src, n * elem);
	return 0;
}

/* A pointer into src's arena, moved to the same offset in dst's. */
static const char *rebase(const char *p, const host_sample *src, const host_sample *dst)
{
	return p ? dst->arena + (p - src->arena) : NULL;
}

int host_sample_copy(host_sample *dst, const host_sample *src)
{
	if (dst == src)
		return 0;
	host_sample keep = *dst; /* reuse dst's storage */
	*dst = *src;
	dst->cpus = keep.cpus;
	dst->cpus_cap = keep.cpus_cap;
	dst->disks = keep.disks;
	dst->disks_cap = keep.disks_cap;
	dst->nets = keep.nets;
	dst->nets_cap = keep.nets_cap;
	dst->procs = keep.procs;
	dst->procs_cap = keep.procs_cap;
	dst->events = keep.events;
	dst->events_cap = keep.events_cap;
	dst->arena = keep.arena;
	dst->arena_cap = keep.arena_cap;
	void *a;
#define DUP(field, capf, n)                                                                        \
	a = dst->field;                                                                            \
	if (dup_array(&a, &dst->capf, src->field, src->n, sizeof(*src->field)) != 0)               \
		goto fail;                                                                         \
	dst->field = a;
	DUP(cpus, cpus_cap, ncpus)
	DUP(disks, disks_cap, ndisks)
	DUP(nets, nets_cap, nnets)
	DUP(procs, procs_cap, nprocs)
	DUP(events, events_cap, nevents)
	DUP(arena, arena_cap, arena_len)
#undef DUP
	for (size_t i = 0; i < dst->nprocs; i++) {
		dst->procs[i].cmdline = rebase(src->procs[i].cmdline, src, dst);
		dst->procs[i].cgroup = rebase(src->procs[i].cgroup, src, dst);
	}
	for (size_t i = 0; i < dst->nevents; i++)
		dst->events[i].cmdline = rebase(src->events[i].cmdline, src, dst);
	return 0;
fail:
	dst->ncpus = dst->ndisks = dst->nnets = dst->nprocs = dst->nevents = 0;
	dst->arena_len = 0;
	return -1;
}

int host_sample_find_proc(const host_sample *s, int pid)
{
	size_t lo = 0, hi = s->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else if (s->procs[mid].pid > pid)
			hi = mid;
		else
			return (int)mid;
	}
	return -1;
}

void host_sysraw_free(host_sysraw *r)
{
	host_stat_free(&r->stat);
	host_diskstats_free(&r->disks);
	host_netdevs_free(&r->nets);
	memset(r, 0, sizeof(*r));
}

/* ----------------------------------------------------------------- sampler */

struct disk_class {
	char name[HOST_NAME_MAX_LEN];
	unsigned major, minor;
	bool keep;
};

struct host_sampler {
	host_config cfg;
	char *proc_root, *sys_root, *fs_root;
	int proc_fd;
	int block_fd; /* sys_root/block, or -1: name heuristics then */
	host_buf buf;
	host_sysraw raw[2];
	int cur;
	bool have_prev;
	struct disk_class *dc; /* whole-disk decisions, one lookup per new device */
	size_t ndc, dc_cap;
	host_ptree *pt;
	long page_size;
};

static void close_roots(host_sampler *hs)
{
	if (hs->proc_fd >= 0)
		close(hs->proc_fd);
	if (hs->block_fd >= 0)
		close(hs->block_fd);
	hs->proc_fd = hs->block_fd = -1;
}

static void open_roots(host_sampler *hs)
{
	close_roots(hs);
	hs->proc_fd = open(hs->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/block", hs->sys_root) < sizeof(path))
		hs->block_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	hs->ndc = 0;
}

host_sampler *host_sampler_new(const host_config *cfg)
{
	host_config def;
	host_config_default(&def);
	if (!cfg)
		cfg = &def;
	host_sampler *hs = calloc(1, sizeof(*hs));
	if (!hs)
		return NULL;
	hs->proc_fd = hs->block_fd = -1;
	hs->cfg = *cfg;
	hs->proc_root = strdup(cfg->proc_root ? cfg->proc_root : def.proc_root);
	hs->sys_root = strdup(cfg->sys_root ? cfg->sys_root : def.sys_root);
	hs->fs_root = strdup(cfg->fs_root ? cfg->fs_root : def.fs_root);
	hs->cfg.proc_root = hs->proc_root;
	hs->cfg.sys_root = hs->sys_root;
	hs->cfg.fs_root = hs->fs_root;
	hs->page_size = sysconf(_SC_PAGESIZE);
	if (hs->page_size <= 0)
		hs->page_size = 4096;
	if (!hs->proc_root || !hs->sys_root || !hs->fs_root ||
	    !(hs->pt = host_ptree_new(&hs->cfg))) {
		host_sampler_free(hs);
		return NULL;
	}
	open_roots(hs);
	return hs;
}

void host_sampler_free(host_sampler *hs)
{
	if (!hs)
		return;
	close_roots(hs);
	host_sysraw_free(&hs->raw[0]);
	host_sysraw_free(&hs->raw[1]);
	host_buf_free(&hs->buf);
	host_ptree_free(hs->pt);
	free(hs->dc);
	free(hs->proc_root);
	free(hs->sys_root);
	free(hs->fs_root);
	free(hs);
}

int host_sampler_follow(host_sampler *hs, const int *pids, size_t n)
{
	return host_ptree_follow(hs->pt, pids, n);
}

void host_sampler_follow_all(host_sampler *hs)
{
	host_ptree_follow_all(hs->pt);
}

host_ptree_stats host_sampler_ptree_stats(const host_sampler *hs)
{
	return host_ptree_last_stats(hs->pt);
}

int host_sampler_set_roots(host_sampler *hs, const char *proc_root, const char *sys_root)
{
	char *p = strdup(proc_root), *s = strdup(sys_root);
	if (!p || !s) {
		free(p);
		free(s);
		return -1;
	}
	free(hs->proc_root);
	free(hs->sys_root);
	hs->cfg.proc_root = hs->proc_root = p;
	hs->cfg.sys_root = hs->sys_root = s;
	open_roots(hs);
	if (hs->proc_fd < 0)
		return -1;
	return host_ptree_set_root(hs->pt, proc_root);
}

/* Whole disk or not, asked of /sys/block once per device name. */
static bool disk_wanted(host_sampler *hs, const host_diskstat *d)
{
	if (hs->cfg.disk_all)
		return true;
	for (size_t i = 0; i < hs->ndc; i++)
		if (hs->dc[i].major == d->major && hs->dc[i].minor == d->minor &&
		    strcmp(hs->dc[i].name, d->name) == 0)
			return hs->dc[i].keep;
	bool keep = !host_disk_name_is_virtual(d->name);
	if (keep) {
		if (hs->block_fd >= 0) {
			/* sysfs writes '/' in device names (cciss/c0d0) as '!' */
			char name[HOST_NAME_MAX_LEN];
			memcpy(name, d->name, sizeof(name));
			for (char *p = name; *p; p++)
				if (*p == '/')
					*p = '!';
			keep = faccessat(hs->block_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		} else {
			keep = !host_disk_name_is_partition(d->name);
		}
	}
	if (hs->ndc > 4096)
		hs->ndc = 0; /* a churn of device names: start over rather than grow */
	void *a = hs->dc;
	if (host_grow(&a, &hs->dc_cap, hs->ndc + 1, sizeof(*hs->dc)) == 0) {
		hs->dc = a;
		struct disk_class *c = &hs->dc[hs->ndc++];
		memcpy(c->name, d->name, sizeof(c->name));
		c->major = d->major;
		c->minor = d->minor;
		c->keep = keep;
	}
	return keep;
}

static bool read_file(host_sampler *hs, const char *rel)
{
	return host_buf_readat(&hs->buf, hs->proc_fd, rel) == 0;
}

static void read_sysraw(host_sampler *hs, host_sysraw *r)
{
	const char *b;
	size_t n;
#define READ(rel) (read_file(hs, rel) ? (b = hs->buf.p, n = hs->buf.len, true) : false)
	r->stat_ok = READ("stat") && host_parse_stat(b, n, &r->stat) == 0;
	r->loadavg_ok = READ("loadavg") && host_parse_loadavg(b, n, &r->loadavg) == 0;
	r->meminfo_ok = READ("meminfo") && host_parse_meminfo(b, n, &r->meminfo) == 0;
	r->vmstat_ok = READ("vmstat") && host_parse_vmstat(b, n, &r->vmstat) == 0;
	r->uptime_ok = READ("uptime") && host_parse_uptime(b, n, &r->uptime) == 0;
	static const char *const psi[3] = {"pressure/cpu", "pressure/memory", "pressure/io"};
	for (int i = 0; i < 3; i++)
		r->psi_ok[i] = READ(psi[i]) && host_parse_psi(b, n, &r->psi[i]) == 0;
	r->diskstats_ok = READ("diskstats") && host_parse_diskstats(b, n, &r->disks) == 0;
	r->netdev_ok = READ("net/dev") && host_parse_net_dev(b, n, &r->nets) == 0;
#undef READ
	if (r->diskstats_ok) {
		size_t k = 0;
		for (size_t i = 0; i < r->disks.n; i++)
			if (disk_wanted(hs, &r->disks.d[i]))
				r->disks.d[k++] = r->disks.d[i];
		r->disks.n = k;
	}
	if (r->netdev_ok && !hs->cfg.net_lo) {
		size_t k = 0;
		for (size_t i = 0; i < r->nets.n; i++)
			if (strcmp(r->nets.d[i].name, "lo") != 0)
				r->nets.d[k++] = r->nets.d[i];
		r->nets.n = k;
	}
}

int host_sampler_sample_at(host_sampler *hs, int64_t mono_ns, double wall_s, host_sample *out)
{
	if (hs->proc_fd < 0) {
		open_roots(hs);
		if (hs->proc_fd < 0)
			return -1;
	}
	host_sysraw *cur = &hs->raw[hs->cur];
	host_sysraw *prev = hs->have_prev ? &hs->raw[!hs->cur] : NULL;
	cur->mono_ns = mono_ns;
	read_sysraw(hs, cur);
	out->mono_ns = mono_ns;
	out->wall_s = wall_s;
	if (host_compute(prev, cur, hs->page_size, out) != 0) {
		errno = ENOMEM;
		return -1;
	}
	if (host_ptree_update(hs->pt, mono_ns, wall_s, out) != 0) {
		if (errno == 0)
			errno = ENOMEM;
		return -1;
	}
	hs->cur = !hs->cur;
	hs->have_prev = true;
	return 0;
}

int host_sampler_sample(host_sampler *hs, host_sample *out)
{
	return host_sampler_sample_at(hs, gw_mono_ns(), gw_wall_s(), out);
}
