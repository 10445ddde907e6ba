/* host_rates.c - pure: the system part of a sample from two raw reads. */
#include "host/host.h"
#include "host/host_int.h"

#include <string.h>

/* The first eight tick columns map one to one onto the per-CPU and system metrics. */
_Static_assert((int)HOST_CPU_USER == (int)HOST_TICK_USER &&
                   (int)HOST_CPU_STEAL == (int)HOST_TICK_STEAL &&
                   (int)HOST_CPU_GUEST == (int)HOST_TICK_GUEST,
               "cpu metric order follows /proc/stat");
_Static_assert(HOST_SYS_CPU_STEAL - HOST_SYS_CPU_USER == (int)HOST_TICK_STEAL &&
                   HOST_SYS_CPU_GUEST - HOST_SYS_CPU_USER == (int)HOST_TICK_GUEST &&
                   HOST_SYS_CPU_BUSY - HOST_SYS_CPU_USER == (int)HOST_CPU_BUSY,
               "system cpu metrics follow the per-cpu order");

static void set(host_val *v, double x)
{
	v->v = x;
	v->ok = true;
}

/* A counter's rate: absent when it went backwards (wrap, reset) or no time passed. */
static void rate(host_val *v, uint64_t prev, uint64_t cur, double dt, double scale)
{
	if (cur < prev || !(dt > 0)) {
		v->ok = false;
		return;
	}
	set(v, (double)(cur - prev) * scale / dt);
}

static double clamp_pct(double x)
{
	return x < 0 ? 0 : x > 100 ? 100 : x;
}

/*
 * Per-CPU percentages of the ticks accounted in the interval, so that the
 * columns sum to 100. A column that went backwards (iowait and idle do, on
 * some kernels, and the aggregate idle drops when a CPU goes offline)
 * contributes 0 rather than a negative share.
 */
static void cpu_pcts(const host_cpu_ticks *p, const host_cpu_ticks *c, host_val out[HOST_CPU_COUNT])
{
	for (int k = 0; k < HOST_CPU_COUNT; k++)
		out[k].ok = false;
	int n = p->nfields < c->nfields ? p->nfields : c->nfields;
	int nbase = n < HOST_TICK_GUEST ? n : HOST_TICK_GUEST;
	uint64_t d[HOST_TICK_COUNT] = {0};
	double total = 0;
	for (int k = 0; k < n; k++) {
		d[k] = c->t[k] > p->t[k] ? c->t[k] - p->t[k] : 0;
		if (k < HOST_TICK_GUEST)
			total += (double)d[k];
	}
	if (total <= 0)
		return; /* less than a tick passed: nothing to divide */
	for (int k = 0; k < nbase; k++)
		set(&out[k], 100.0 * (double)d[k] / total);
	if (n > HOST_TICK_GUEST) {
		double g = (double)d[HOST_TICK_GUEST] +
		           (n > HOST_TICK_GUEST_NICE ? (double)d[HOST_TICK_GUEST_NICE] : 0);
		set(&out[HOST_CPU_GUEST], clamp_pct(100.0 * g / total));
	}
	double idle =
	    (double)d[HOST_TICK_IDLE] + (n > HOST_TICK_IOWAIT ? (double)d[HOST_TICK_IOWAIT] : 0);
	set(&out[HOST_CPU_BUSY], clamp_pct(100.0 - 100.0 * idle / total));
}

static const host_cpu_ticks *find_cpu(const host_stat *st, int id, size_t hint)
{
	if (hint < st->ncpu && st->cpu[hint].id == id)
		return &st->cpu[hint];
	for (size_t i = 0; i < st->ncpu; i++)
		if (st->cpu[i].id == id)
			return &st->cpu[i];
	return NULL;
}

static int compute_cpus(const host_sysraw *prev, const host_sysraw *cur, host_sample *out)
{
	out->ncpus = 0;
	if (!cur->stat_ok)
		return 0;
	const host_stat *cs = &cur->stat;
	void *a = out->cpus;
	if (host_grow(&a, &out->cpus_cap, cs->ncpu ? cs->ncpu : 1, sizeof(*out->cpus)) != 0)
		return -1;
	out->cpus = a;
	bool have_prev = prev && prev->stat_ok;
	size_t hint = 0;
	for (size_t i = 0; i < cs->ncpu; i++) {
		host_cpu *o = &out->cpus[out->ncpus++];
		o->id = cs->cpu[i].id;
		for (int k = 0; k < HOST_CPU_COUNT; k++)
			o->v[k].ok = false;
		/* match by id, never by position: CPUs go offline and come back */
		const host_cpu_ticks *p = have_prev ? find_cpu(&prev->stat, o->id, hint) : NULL;
		if (p) {
			hint = (size_t)(p - prev->stat.cpu) + 1;
			cpu_pcts(p, &cs->cpu[i], o->v);
		}
	}
	set(&out->sys[HOST_SYS_CPUS_ONLINE], (double)cs->ncpu);
	if (have_prev && (cs->has & HOST_STAT_ALL) && (prev->stat.has & HOST_STAT_ALL)) {
		host_val v[HOST_CPU_COUNT];
		cpu_pcts(&prev->stat.all, &cs->all, v);
		for (int k = 0; k < HOST_CPU_COUNT; k++)
			out->sys[HOST_SYS_CPU_USER + k] = v[k];
	}
	return 0;
}

static void compute_stat_counters(const host_sysraw *prev, const host_sysraw *cur, double dt,
                                  host_sample *out)
{
	const host_stat *c = &cur->stat;
	if (!cur->stat_ok)
		return;
	if (c->has & HOST_STAT_RUNNING)
		set(&out->sys[HOST_SYS_PROCS_RUNNING], (double)c->procs_running);
	if (c->has & HOST_STAT_BLOCKED)
		set(&out->sys[HOST_SYS_PROCS_BLOCKED], (double)c->procs_blocked);
	if (!prev || !prev->stat_ok)
		return;
	const host_stat *p = &prev->stat;
	unsigned both = p->has & c->has;
	if (both & HOST_STAT_CTXT)
		rate(&out->sys[HOST_SYS_CTXT_RATE], p->ctxt, c->ctxt, dt, 1);
	if (both & HOST_STAT_INTR)
		rate(&out->sys[HOST_SYS_INTR_RATE], p->intr, c->intr, dt, 1);
	if (both & HOST_STAT_PROCESSES)
		rate(&out->sys[HOST_SYS_FORK_RATE], p->processes, c->processes, dt, 1);
}

static void compute_memory(const host_sysraw *prev, const host_sysraw *cur, double dt,
                           long page_size, host_sample *out)
{
	if (cur->meminfo_ok) {
		const host_meminfo *m = &cur->meminfo;
#define HAS(k) ((m->has >> (k)) & 1u)
		static const struct {
			int metric, field;
		} direct[] = {
		    {HOST_SYS_MEM_TOTAL, HOST_MI_TOTAL},
		    {HOST_SYS_MEM_AVAILABLE, HOST_MI_AVAILABLE},
		    {HOST_SYS_MEM_FREE, HOST_MI_FREE},
		    {HOST_SYS_MEM_BUFFERS, HOST_MI_BUFFERS},
		    {HOST_SYS_MEM_SHMEM, HOST_MI_SHMEM},
		    {HOST_SYS_MEM_DIRTY, HOST_MI_DIRTY},
		    {HOST_SYS_MEM_WRITEBACK, HOST_MI_WRITEBACK},
		    {HOST_SYS_SWAP_TOTAL, HOST_MI_SWAP_TOTAL},
		};
		for (size_t i = 0; i < sizeof(direct) / sizeof(direct[0]); i++)
			if (HAS(direct[i].field))
				set(&out->sys[direct[i].metric], (double)m->v[direct[i].field]);
		double cached = 0;
		if (HAS(HOST_MI_CACHED)) {
			cached =
			    (double)m->v[HOST_MI_CACHED] +
			    (HAS(HOST_MI_SRECLAIMABLE) ? (double)m->v[HOST_MI_SRECLAIMABLE] : 0);
			set(&out->sys[HOST_SYS_MEM_CACHED], cached);
		}
		double total = (double)m->v[HOST_MI_TOTAL];
		if (HAS(HOST_MI_TOTAL) && HAS(HOST_MI_AVAILABLE)) {
			double used = total - (double)m->v[HOST_MI_AVAILABLE];
			set(&out->sys[HOST_SYS_MEM_USED], used < 0 ? 0 : used);
		} else if (HAS(HOST_MI_TOTAL) && HAS(HOST_MI_FREE) && HAS(HOST_MI_BUFFERS) &&
		           HAS(HOST_MI_CACHED)) {
			/* kernels before 3.14 have no MemAvailable: free(1)'s old formula */
			double used = total - (double)m->v[HOST_MI_FREE] -
			              (double)m->v[HOST_MI_BUFFERS] - cached;
			set(&out->sys[HOST_SYS_MEM_USED], used < 0 ? 0 : used);
		}
		if (HAS(HOST_MI_SWAP_TOTAL) && HAS(HOST_MI_SWAP_FREE)) {
			double used =
			    (double)m->v[HOST_MI_SWAP_TOTAL] - (double)m->v[HOST_MI_SWAP_FREE];
			set(&out->sys[HOST_SYS_SWAP_USED], used < 0 ? 0 : used);
		}
#undef HAS
	}
	if (!cur->vmstat_ok)
		return;
	const host_vmstat *c = &cur->vmstat;
	if (c->has & (1u << HOST_VM_OOM_KILL))
		set(&out->sys[HOST_SYS_OOM_KILLS], (double)c->v[HOST_VM_OOM_KILL]);
	if (!prev || !prev->vmstat_ok)
		return;
	const host_vmstat *p = &prev->vmstat;
	unsigned both = p->has & c->has;
	if (both & (1u << HOST_VM_PSWPIN))
		rate(&out->sys[HOST_SYS_SWAP_IN_RATE], p->v[HOST_VM_PSWPIN], c->v[HOST_VM_PSWPIN],
		     dt, (double)page_size);
	if (both & (1u << HOST_VM_PSWPOUT))
		rate(&out->sys[HOST_SYS_SWAP_OUT_RATE], p->v[HOST_VM_PSWPOUT],
		     c->v[HOST_VM_PSWPOUT], dt, (double)page_size);
	if (both & (1u << HOST_VM_PGMAJFAULT))
		rate(&out->sys[HOST_SYS_MAJFLT_RATE], p->v[HOST_VM_PGMAJFAULT],
		     c->v[HOST_VM_PGMAJFAULT], dt, 1);
}

static void compute_psi(const host_sysraw *prev, const host_sysraw *cur, double dt,
                        host_sample *out)
{
	if (!prev)
		return;
	static const struct {
		int file;
		bool full;
		int metric;
	} map[] = {
	    {0, false, HOST_SYS_PSI_CPU_SOME}, {1, false, HOST_SYS_PSI_MEM_SOME},
	    {1, true, HOST_SYS_PSI_MEM_FULL},  {2, false, HOST_SYS_PSI_IO_SOME},
	    {2, true, HOST_SYS_PSI_IO_FULL},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		int f = map[i].file;
		if (!prev->psi_ok[f] || !cur->psi_ok[f])
			continue;
		const host_psi *p = &prev->psi[f], *c = &cur->psi[f];
		bool ok = map[i].full ? p->full_ok && c->full_ok : p->some_ok && c->some_ok;
		if (!ok)
			continue;
		host_val *v = &out->sys[map[i].metric];
		/* stall microseconds per interval microsecond, as a percentage */
		rate(v, map[i].full ? p->full_us : p->some_us,
		     map[i].full ? c->full_us : c->some_us, dt, 100.0 / 1e6);
		if (v->ok)
			v->v = clamp_pct(v->v);
	}
}

static const host_diskstat *find_disk(const host_diskstats *ds, const host_diskstat *d, size_t i)
{
	if (i < ds->n && strcmp(ds->d[i].name, d->name) == 0)
		return &ds->d[i];
	for (size_t k = 0; k < ds->n; k++)
		if (strcmp(ds->d[k].name, d->name) == 0)
			return &ds->d[k];
	return NULL;
}

static int compute_disks(const host_sysraw *prev, const host_sysraw *cur, double dt,
                         host_sample *out)
{
	out->ndisks = 0;
	if (!cur->diskstats_ok)
		return 0;
	const host_diskstats *cd = &cur->disks;
	void *a = out->disks;
	if (host_grow(&a, &out->disks_cap, cd->n ? cd->n : 1, sizeof(*out->disks)) != 0)
		return -1;
	out->disks = a;
	for (size_t i = 0; i < cd->n; i++) {
		const host_diskstat *c = &cd->d[i];
		host_disk *o = &out->disks[out->ndisks++];
		memcpy(o->name, c->name, sizeof(o->name));
		o->major = c->major;
		o->minor = c->minor;
		for (int k = 0; k < HOST_DISK_COUNT; k++)
			o->v[k].ok = false;
		set(&o->v[HOST_DISK_IN_FLIGHT], (double)c->v[HOST_DS_IN_FLIGHT]);
		const host_diskstat *p =
		    prev && prev->diskstats_ok ? find_disk(&prev->disks, c, i) : NULL;
		if (!p || p->major != c->major || p->minor != c->minor)
			continue; /* new, or a different device under the same name */
		const uint64_t *pv = p->v, *cv = c->v;
		rate(&o->v[HOST_DISK_READ_RATE], pv[HOST_DS_SECTORS_READ], cv[HOST_DS_SECTORS_READ],
		     dt, 512);
		rate(&o->v[HOST_DISK_WRITE_RATE], pv[HOST_DS_SECTORS_WRITTEN],
		     cv[HOST_DS_SECTORS_WRITTEN], dt, 512);
		rate(&o->v[HOST_DISK_READS_RATE], pv[HOST_DS_READS], cv[HOST_DS_READS], dt, 1);
		rate(&o->v[HOST_DISK_WRITES_RATE], pv[HOST_DS_WRITES], cv[HOST_DS_WRITES], dt, 1);
		rate(&o->v[HOST_DISK_BUSY], pv[HOST_DS_IO_TICKS], cv[HOST_DS_IO_TICKS], dt,
		     100.0 / 1000);
		if (o->v[HOST_DISK_BUSY].ok)
			o->v[HOST_DISK_BUSY].v = clamp_pct(o->v[HOST_DISK_BUSY].v);
		rate(&o->v[HOST_DISK_QUEUE], pv[HOST_DS_TIME_IN_QUEUE], cv[HOST_DS_TIME_IN_QUEUE],
		     dt, 1.0 / 1000);
		/* latency per completed request; absent when none completed */
		if (cv[HOST_DS_READS] > pv[HOST_DS_READS] &&
		    cv[HOST_DS_MS_READING] >= pv[HOST_DS_MS_READING])
			set(&o->v[HOST_DISK_READ_AWAIT],
			    (double)(cv[HOST_DS_MS_READING] - pv[HOST_DS_MS_READING]) /
			        (double)(cv[HOST_DS_READS] - pv[HOST_DS_READS]));
		if (cv[HOST_DS_WRITES] > pv[HOST_DS_WRITES] &&
		    cv[HOST_DS_MS_WRITING] >= pv[HOST_DS_MS_WRITING])
			set(&o->v[HOST_DISK_WRITE_AWAIT],
			    (double)(cv[HOST_DS_MS_WRITING] - pv[HOST_DS_MS_WRITING]) /
			        (double)(cv[HOST_DS_WRITES] - pv[HOST_DS_WRITES]));
	}
	return 0;
}

static const host_netdev *find_net(const host_netdevs *nd, const host_netdev *d, size_t i)
{
	if (i < nd->n && strcmp(nd->d[i].name, d->name) == 0)
		return &nd->d[i];
	for (size_t k = 0; k < nd->n; k++)
		if (strcmp(nd->d[k].name, d->name) == 0)
			return &nd->d[k];
	return NULL;
}

static int compute_nets(const host_sysraw *prev, const host_sysraw *cur, double dt,
                        host_sample *out)
{
	out->nnets = 0;
	if (!cur->netdev_ok)
		return 0;
	const host_netdevs *cn = &cur->nets;
	void *a = out->nets;
	if (host_grow(&a, &out->nets_cap, cn->n ? cn->n : 1, sizeof(*out->nets)) != 0)
		return -1;
	out->nets = a;
	static const struct {
		int metric, field;
	} map[] = {
	    {HOST_NET_RX_RATE, HOST_ND_RX_BYTES},      {HOST_NET_TX_RATE, HOST_ND_TX_BYTES},
	    {HOST_NET_RX_PACKETS, HOST_ND_RX_PACKETS}, {HOST_NET_TX_PACKETS, HOST_ND_TX_PACKETS},
	    {HOST_NET_RX_DROPS, HOST_ND_RX_DROP},      {HOST_NET_TX_DROPS, HOST_ND_TX_DROP},
	    {HOST_NET_RX_ERRORS, HOST_ND_RX_ERRS},     {HOST_NET_TX_ERRORS, HOST_ND_TX_ERRS},
	};
	for (size_t i = 0; i < cn->n; i++) {
		const host_netdev *c = &cn->d[i];
		host_netif *o = &out->nets[out->nnets++];
		memcpy(o->name, c->name, sizeof(o->name));
		for (int k = 0; k < HOST_NET_COUNT; k++)
			o->v[k].ok = false;
		const host_netdev *p = prev && prev->netdev_ok ? find_net(&prev->nets, c, i) : NULL;
		if (!p)
			continue;
		for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
			rate(&o->v[map[k].metric], p->v[map[k].field], c->v[map[k].field], dt, 1);
	}
	return 0;
}

int host_compute(const host_sysraw *prev, const host_sysraw *cur, long page_size, host_sample *out)
{
	for (int k = 0; k < HOST_SYS_COUNT; k++)
		out->sys[k].ok = false;
	out->interval_s.ok = false;
	double dt = 0;
	if (prev) {
		dt = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
		if (dt > 0)
			set(&out->interval_s, dt);
		else
			prev = NULL; /* same or earlier time: no rate can be trusted */
	}
	if (cur->loadavg_ok)
		for (int k = 0; k < 3; k++)
			set(&out->sys[HOST_SYS_LOAD1 + k], cur->loadavg.load[k]);
	if (cur->uptime_ok)
		set(&out->sys[HOST_SYS_UPTIME], cur->uptime.seconds);
	compute_stat_counters(prev, cur, dt, out);
	compute_memory(prev, cur, dt, page_size, out);
	compute_psi(prev, cur, dt, out);
	if (compute_cpus(prev, cur, out) != 0 || compute_disks(prev, cur, dt, out) != 0 ||
	    compute_nets(prev, cur, dt, out) != 0)
		return -1;
	return 0;
}
