/*
 * host.h - host metrics: CPU, memory, disks, network and followed processes,
 * read from /proc and /sys.
 *
 * Typical use (a recorder or exporter loop):
 *
 *     host_config cfg;
 *     host_config_default(&cfg);
 *     host_sampler *hs = host_sampler_new(&cfg);
 *     host_sampler_follow(hs, &child_pid, 1);    // optional: a process tree
 *     host_sample s = {0};                       // reused every tick
 *     for (;;) {
 *             host_sampler_sample(hs, &s);
 *             if (s.sys[HOST_SYS_CPU_BUSY].ok) ... s.sys[HOST_SYS_CPU_BUSY].v ...
 *             for (size_t i = 0; i < s.nevents; i++) ... s.events[i] ...
 *             sleep until the next tick;
 *     }
 *     host_sample_free(&s);
 *     host_sampler_free(hs);
 *
 * Every value is a host_val: `ok` false means ABSENT (unreadable, unsupported,
 * or a rate without a usable previous sample), and `v` must then be ignored.
 * Rates compare two consecutive samples of the same sampler: they are absent in
 * the first sample, for a CPU/disk/interface/process first seen in this sample,
 * and for a counter that went backwards (wrap, reset, device re-created).
 *
 * Metric names, units, source files and help texts are in host_metrics.def;
 * host_metric_info() gives them at run time for the faces.
 *
 * A sampler is not thread-safe: use one per thread. Samples are plain data
 * owned by the caller; copy one with host_sample_copy().
 */
#ifndef GPUWHY_HOST_H
#define GPUWHY_HOST_H

#include "host/host_parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ config */

typedef struct host_config {
	const char *proc_root; /* "/proc" */
	const char *sys_root;  /* "/sys"; only /sys/block is read */
	const char *fs_root;   /* "/": where host_env looks for /.dockerenv, /run/.containerenv */
	bool net_lo;           /* include the loopback interface "lo" (default false) */
	bool disk_all;         /* include partitions, ram, zram, loop and fd devices (false) */
	bool proc_full_scan;   /* re-read every /proc/PID/stat each scan instead of trusting
	                        * that a process seen outside the followed tree stays outside
	                        * while its /proc entry is unchanged (false) */
} host_config;

void host_config_default(host_config *cfg);

/* ------------------------------------------------------------------ values */

typedef struct host_val {
	double v;
	bool ok; /* false: absent; v is meaningless */
} host_val;

/* Metric ids, one enum per table of host_metrics.def. */
#define HOST_X_ENUM(prefix, id) prefix##id,
enum host_sys_metric {
#define HOST_SYS_METRIC(id, name, unit, src, help) HOST_X_ENUM(HOST_SYS_, id)
#include "host/host_metrics.def"
#undef HOST_SYS_METRIC
	HOST_SYS_COUNT
};
enum host_cpu_metric {
#define HOST_CPU_METRIC(id, name, unit, src, help) HOST_X_ENUM(HOST_CPU_, id)
#include "host/host_metrics.def"
#undef HOST_CPU_METRIC
	HOST_CPU_COUNT
};
enum host_disk_metric {
#define HOST_DISK_METRIC(id, name, unit, src, help) HOST_X_ENUM(HOST_DISK_, id)
#include "host/host_metrics.def"
#undef HOST_DISK_METRIC
	HOST_DISK_COUNT
};
enum host_net_metric {
#define HOST_NET_METRIC(id, name, unit, src, help) HOST_X_ENUM(HOST_NET_, id)
#include "host/host_metrics.def"
#undef HOST_NET_METRIC
	HOST_NET_COUNT
};
enum host_proc_metric {
#define HOST_PROC_METRIC(id, name, unit, src, help) HOST_X_ENUM(HOST_PROC_, id)
#include "host/host_metrics.def"
#undef HOST_PROC_METRIC
	HOST_PROC_COUNT
};
#undef HOST_X_ENUM

enum host_table {
	HOST_TABLE_SYS,
	HOST_TABLE_CPU,
	HOST_TABLE_DISK,
	HOST_TABLE_NET,
	HOST_TABLE_PROC
};

typedef struct host_metric_info {
	const char *name, *unit, *source, *help;
} host_metric_info;

/* Description of metric `id` of `table`, or NULL when id is out of range. */
const host_metric_info *host_metric_info_get(enum host_table table, int id);
int host_table_size(enum host_table table);

/* ------------------------------------------------------------------ sample */

typedef struct host_cpu {
	int id; /* N of cpuN */
	host_val v[HOST_CPU_COUNT];
} host_cpu;

typedef struct host_disk {
	char name[HOST_NAME_MAX_LEN];
	unsigned major, minor;
	host_val v[HOST_DISK_COUNT];
} host_disk;

typedef struct host_netif {
	char name[HOST_NAME_MAX_LEN];
	host_val v[HOST_NET_COUNT];
} host_netif;

typedef struct host_proc {
	int pid, ppid;
	char state;               /* from PID/stat: R S D Z T I ...; Z = exited, not reaped */
	char comm[HOST_COMM_LEN]; /* kernel's short name */
	bool is_root;             /* one of the followed roots (not a descendant) */
	bool kthread;             /* kernel thread: no command line */
	bool uid_ok;
	uint32_t uid;  /* real uid */
	char user[33]; /* user name, or the uid in decimal when it has no name; "" if !uid_ok */
	const char
	    *cmdline;       /* arguments joined by spaces; "" for kernel threads; NULL if unknown */
	const char *cgroup; /* cgroup path (unified one when present); NULL if unknown */
	enum host_runtime runtime; /* container runtime seen in the cgroup path */
	char container_id[65];     /* "" if none */
	int nspid_n;               /* PID namespace depth (NSpid entries); 0 if unknown */
	int nspid_inner;           /* PID inside its innermost namespace (== pid when depth 1) */
	uint64_t start_ticks;      /* starttime (ticks after boot): (pid, start_ticks) is unique */
	host_val v[HOST_PROC_COUNT];
	/* Tree links, indices into host_sample.procs; -1 for none. */
	int parent, first_child, next_sibling, nchildren;
} host_proc;

enum host_proc_event_kind {
	HOST_PROC_START, /* appeared in the tree (or was there when following began) */
	HOST_PROC_EXIT,  /* disappeared from /proc or became a zombie */
};

typedef struct host_proc_event {
	enum host_proc_event_kind kind;
	bool already_running; /* START only: present when following began, not seen starting */
	int pid, ppid;
	char comm[HOST_COMM_LEN];
	const char *cmdline; /* last known; NULL if never read */
	host_val start_time; /* seconds since the epoch */
	host_val cpu_time;   /* utime+stime seconds at the last sighting */
	double wall_s;       /* when it was noticed (this sample's time) */
} host_proc_event;

typedef struct host_sample {
	int64_t mono_ns;     /* CLOCK_MONOTONIC when taken */
	double wall_s;       /* CLOCK_REALTIME, seconds since the epoch */
	host_val interval_s; /* time since the previous sample of the same sampler */
	host_val sys[HOST_SYS_COUNT];
	host_cpu *cpus; /* online CPUs, ascending id */
	size_t ncpus;
	host_disk *disks; /* whole disks in /proc/diskstats order */
	size_t ndisks;
	host_netif *nets; /* interfaces in /proc/net/dev order */
	size_t nnets;
	host_proc *procs; /* followed processes, ascending pid */
	size_t nprocs;
	host_proc_event *events; /* process starts and exits noticed by this sample */
	size_t nevents;
	/* Storage, private: capacities and the string arena behind the char pointers. */
	size_t cpus_cap, disks_cap, nets_cap, procs_cap, events_cap;
	char *arena;
	size_t arena_len, arena_cap;
} host_sample;

/* Free what a sample holds; leaves it zeroed and reusable. */
void host_sample_free(host_sample *s);
/* Deep copy src into dst (dst is reused or zeroed first). Returns 0, -1 on ENOMEM. */
int host_sample_copy(host_sample *dst, const host_sample *src);
/* Index of pid in s->procs, or -1. */
int host_sample_find_proc(const host_sample *s, int pid);

/* ----------------------------------------------------------------- sampler */

typedef struct host_sampler host_sampler;

/* NULL cfg means host_config_default(). Strings are copied. NULL on ENOMEM. */
host_sampler *host_sampler_new(const host_config *cfg);
void host_sampler_free(host_sampler *hs);

/*
 * Follow these PIDs and all their descendants (found through the ppid of
 * every /proc/PID/stat). A process once seen in the tree stays followed
 * until it exits, even when it is re-parented outside (daemonised). A root
 * is bound to the process that holds the PID when first seen; a later reuse
 * of the PID is not followed. Returns 0, -1 on ENOMEM.
 */
int host_sampler_follow(host_sampler *hs, const int *pids, size_t n);
/* Follow every user process (kernel threads excluded). */
void host_sampler_follow_all(host_sampler *hs);

/*
 * Read everything now and fill out (reused; its arrays grow as needed).
 * Returns 0; -1 with errno set only when the proc root itself cannot be
 * read. Files that cannot be read leave their values absent.
 */
int host_sampler_sample(host_sampler *hs, host_sample *out);
/* Same with the caller's timestamps (one clock for GPU and host, or tests). */
int host_sampler_sample_at(host_sampler *hs, int64_t mono_ns, double wall_s, host_sample *out);

/* Point the sampler at other roots (fixture replay in tests); keeps history. */
int host_sampler_set_roots(host_sampler *hs, const char *proc_root, const char *sys_root);

/* ------------------------------------------------------ process follower */

/*
 * The process part of a sampler, usable alone: host_ptree_update() scans
 * /proc and fills only out->procs and out->events (the rest of out is left
 * as it is). The scan lists /proc once, reads PID/stat of new PIDs and of
 * followed processes, and skips processes already known to be outside the
 * tree while their /proc entry is unchanged (see host_config.proc_full_scan).
 * Followed processes also have PID/io read every scan; PID/status,
 * PID/cmdline and PID/cgroup are read when the process is first seen, when
 * its comm changes (exec), and at least every 30 s.
 * A process that vanishes while it is being read (ENOENT/ESRCH) is dropped
 * silently from that scan (with an EXIT event when it had been reported).
 */
typedef struct host_ptree host_ptree;

host_ptree *host_ptree_new(const host_config *cfg);
void host_ptree_free(host_ptree *t);
int host_ptree_follow(host_ptree *t, const int *pids, size_t n);
void host_ptree_follow_all(host_ptree *t);
/* True when something is followed (else update() does not scan at all). */
bool host_ptree_active(const host_ptree *t);
int host_ptree_update(host_ptree *t, int64_t mono_ns, double wall_s, host_sample *out);
int host_ptree_set_root(host_ptree *t, const char *proc_root);

/* What the last update did (tests and the benchmark look at the cost). */
typedef struct host_ptree_stats {
	size_t listed;      /* PIDs in the /proc listing */
	size_t stat_reads;  /* PID/stat files read */
	size_t other_reads; /* PID/io, status, cmdline, cgroup files read */
	size_t followed;    /* processes in the tree */
} host_ptree_stats;
host_ptree_stats host_ptree_last_stats(const host_ptree *t);
/* The same for the follower inside a sampler. */
host_ptree_stats host_sampler_ptree_stats(const host_sampler *hs);

/* ---------------------------------------------------- raw layer (advanced) */

/* Everything system-wide that one sample reads, as the kernel counted it. */
typedef struct host_sysraw {
	int64_t mono_ns;
	bool stat_ok, loadavg_ok, meminfo_ok, vmstat_ok, uptime_ok, diskstats_ok, netdev_ok;
	bool psi_ok[3]; /* cpu, memory, io */
	host_stat stat;
	host_loadavg loadavg;
	host_meminfo meminfo;
	host_vmstat vmstat;
	host_uptime uptime;
	host_psi psi[3];
	host_diskstats disks; /* already filtered (whole disks unless disk_all) */
	host_netdevs nets;    /* already filtered (no "lo" unless net_lo) */
} host_sysraw;

void host_sysraw_free(host_sysraw *r);

/*
 * Pure: the system part of a sample (sys[], cpus, disks, nets, interval_s)
 * from two raw reads. prev may be NULL (first sample: rates absent).
 * page_size converts vmstat pages to bytes. Returns 0, -1 on ENOMEM.
 */
int host_compute(const host_sysraw *prev, const host_sysraw *cur, long page_size, host_sample *out);

#endif
