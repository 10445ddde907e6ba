/*
 * host_parse.h - pure parsers for /proc files: a buffer in, a struct out.
 *
 * Nothing here touches a file, a clock or global state, so every function can
 * be unit-tested on strings and fuzzed. The I/O layer (host.h) reads the
 * files and calls these.
 *
 * Common rules:
 * - buf need not be NUL-terminated; len bytes are read, never more.
 * - Numbers are unsigned decimal unless said otherwise. A number that does not
 *   fit in 64 bits, or is missing or malformed, leaves its field ABSENT (its
 *   bit in `has` clear); it is never wrapped or replaced by 0.
 * - A parser returns 0 when it recognised the file (possibly with absent
 *   fields) and -1 when it found nothing usable (empty, garbage). Outputs are
 *   always left in a consistent state, even on -1.
 * - Structs with a dynamic array (host_stat, host_diskstats, host_netdevs)
 *   keep and reuse it across calls; zero-initialise them once, release them
 *   with the matching _free().
 */
#ifndef GPUWHY_HOST_PARSE_H
#define GPUWHY_HOST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- /proc/stat */

/* The columns of a "cpu" line, in the kernel's order, in USER_HZ ticks. */
enum host_tick {
	HOST_TICK_USER,
	HOST_TICK_NICE,
	HOST_TICK_SYSTEM,
	HOST_TICK_IDLE,
	HOST_TICK_IOWAIT,
	HOST_TICK_IRQ,
	HOST_TICK_SOFTIRQ,
	HOST_TICK_STEAL,
	HOST_TICK_GUEST,      /* already counted in USER */
	HOST_TICK_GUEST_NICE, /* already counted in NICE */
	HOST_TICK_COUNT
};

typedef struct host_cpu_ticks {
	int id;      /* N of "cpuN"; -1 for the aggregate "cpu" line */
	int nfields; /* columns present: t[0..nfields-1] are valid (4..10) */
	uint64_t t[HOST_TICK_COUNT];
} host_cpu_ticks;

enum {
	HOST_STAT_ALL = 1u << 0, /* aggregate "cpu" line */
	HOST_STAT_CTXT = 1u << 1,
	HOST_STAT_INTR = 1u << 2,
	HOST_STAT_PROCESSES = 1u << 3,
	HOST_STAT_BTIME = 1u << 4,
	HOST_STAT_RUNNING = 1u << 5,
	HOST_STAT_BLOCKED = 1u << 6,
};

typedef struct host_stat {
	unsigned has; /* HOST_STAT_* */
	host_cpu_ticks all;
	host_cpu_ticks *cpu; /* online CPUs in file order (ascending id), ncpu of them */
	size_t ncpu, cpu_cap;
	uint64_t ctxt, intr, processes, btime, procs_running, procs_blocked;
} host_stat;

int host_parse_stat(const char *buf, size_t len, host_stat *out);
void host_stat_free(host_stat *st);

/* ------------------------------------------------------------- /proc/loadavg */

typedef struct host_loadavg {
	bool ok; /* the three averages */
	double load[3];
	bool tasks_ok;
	uint64_t runnable, total; /* "2/345" */
} host_loadavg;

int host_parse_loadavg(const char *buf, size_t len, host_loadavg *out);

/* -------------------------------------------------------------- /proc/uptime */

typedef struct host_uptime {
	bool ok;
	double seconds; /* since boot (CLOCK_BOOTTIME) */
} host_uptime;

int host_parse_uptime(const char *buf, size_t len, host_uptime *out);

/* ------------------------------------------------------------- /proc/meminfo */

enum host_mi {
	HOST_MI_TOTAL,
	HOST_MI_FREE,
	HOST_MI_AVAILABLE,
	HOST_MI_BUFFERS,
	HOST_MI_CACHED,
	HOST_MI_SRECLAIMABLE,
	HOST_MI_SHMEM,
	HOST_MI_DIRTY,
	HOST_MI_WRITEBACK,
	HOST_MI_SWAP_TOTAL,
	HOST_MI_SWAP_FREE,
	HOST_MI_COUNT
};

typedef struct host_meminfo {
	unsigned has;              /* bit (1u << HOST_MI_x) */
	uint64_t v[HOST_MI_COUNT]; /* bytes (the file's kB times 1024) */
} host_meminfo;

int host_parse_meminfo(const char *buf, size_t len, host_meminfo *out);

/* -------------------------------------------------------------- /proc/vmstat */

enum host_vm {
	HOST_VM_PSWPIN,
	HOST_VM_PSWPOUT,
	HOST_VM_PGMAJFAULT,
	HOST_VM_OOM_KILL,
	HOST_VM_COUNT
};

typedef struct host_vmstat {
	unsigned has; /* bit (1u << HOST_VM_x) */
	uint64_t v[HOST_VM_COUNT];
} host_vmstat;

int host_parse_vmstat(const char *buf, size_t len, host_vmstat *out);

/* ------------------------------------------------- /proc/pressure/{cpu,memory,io} */

typedef struct host_psi {
	bool some_ok, full_ok;
	uint64_t some_us, full_us; /* total= stall time, microseconds */
} host_psi;

int host_parse_psi(const char *buf, size_t len, host_psi *out);

/* ----------------------------------------------------------- /proc/diskstats */

enum host_ds {
	HOST_DS_READS,
	HOST_DS_READS_MERGED,
	HOST_DS_SECTORS_READ,
	HOST_DS_MS_READING,
	HOST_DS_WRITES,
	HOST_DS_WRITES_MERGED,
	HOST_DS_SECTORS_WRITTEN,
	HOST_DS_MS_WRITING,
	HOST_DS_IN_FLIGHT,
	HOST_DS_IO_TICKS,      /* ms with at least one request in flight */
	HOST_DS_TIME_IN_QUEUE, /* weighted ms */
	HOST_DS_DISCARDS,
	HOST_DS_DISCARDS_MERGED,
	HOST_DS_SECTORS_DISCARDED,
	HOST_DS_MS_DISCARDING,
	HOST_DS_FLUSHES,
	HOST_DS_MS_FLUSHING,
	HOST_DS_COUNT
};

#define HOST_NAME_MAX_LEN 32 /* disk and interface names (kernel: 32 and 16) */

typedef struct host_diskstat {
	unsigned major, minor;
	char name[HOST_NAME_MAX_LEN];
	int nfields; /* v[0..nfields-1] valid */
	uint64_t v[HOST_DS_COUNT];
} host_diskstat;

typedef struct host_diskstats {
	host_diskstat *d;
	size_t n, cap;
} host_diskstats;

/* Every line (partitions included); lines with a malformed head are skipped. */
int host_parse_diskstats(const char *buf, size_t len, host_diskstats *out);
void host_diskstats_free(host_diskstats *ds);

/* Name heuristics used when /sys/block cannot be read: sda1, nvme0n1p2,
 * mmcblk0p1, vdb3, xvda1, hdc2 are partitions. */
bool host_disk_name_is_partition(const char *name);
/* ram*, zram*, loop*, fd*: skipped unless host_config.disk_all. */
bool host_disk_name_is_virtual(const char *name);

/* ------------------------------------------------------------ /proc/net/dev */

enum host_nd {
	HOST_ND_RX_BYTES,
	HOST_ND_RX_PACKETS,
	HOST_ND_RX_ERRS,
	HOST_ND_RX_DROP,
	HOST_ND_RX_FIFO,
	HOST_ND_RX_FRAME,
	HOST_ND_RX_COMPRESSED,
	HOST_ND_RX_MULTICAST,
	HOST_ND_TX_BYTES,
	HOST_ND_TX_PACKETS,
	HOST_ND_TX_ERRS,
	HOST_ND_TX_DROP,
	HOST_ND_TX_FIFO,
	HOST_ND_TX_COLLS,
	HOST_ND_TX_CARRIER,
	HOST_ND_TX_COMPRESSED,
	HOST_ND_COUNT
};

typedef struct host_netdev {
	char name[HOST_NAME_MAX_LEN];
	int nfields;
	uint64_t v[HOST_ND_COUNT];
} host_netdev;

typedef struct host_netdevs {
	host_netdev *d;
	size_t n, cap;
} host_netdevs;

/* The two header lines are skipped; "name: n n n ..." lines are kept. */
int host_parse_net_dev(const char *buf, size_t len, host_netdevs *out);
void host_netdevs_free(host_netdevs *nd);

/* ----------------------------------------------------------- /proc/PID/stat */

enum {
	HOST_PS_FLAGS = 1u << 0,
	HOST_PS_MINFLT = 1u << 1,
	HOST_PS_MAJFLT = 1u << 2,
	HOST_PS_UTIME = 1u << 3,
	HOST_PS_STIME = 1u << 4,
	HOST_PS_NICE = 1u << 5,
	HOST_PS_THREADS = 1u << 6,
	HOST_PS_STARTTIME = 1u << 7,
	HOST_PS_VSIZE = 1u << 8,
	HOST_PS_RSS = 1u << 9,
	HOST_PS_PROCESSOR = 1u << 10,
	HOST_PS_PGRP = 1u << 11,
	HOST_PS_SESSION = 1u << 12,
};

#define HOST_COMM_LEN 64            /* kernel threads may show names longer than TASK_COMM_LEN */
#define HOST_PF_KTHREAD 0x00200000u /* flags bit of kernel threads */

typedef struct host_pid_stat {
	unsigned has; /* HOST_PS_*; pid, comm, state and ppid are always set on success */
	int pid;
	char comm[HOST_COMM_LEN]; /* between the first '(' and the LAST ')', truncated */
	char state;               /* R S D Z T t X I ... */
	int ppid;
	int64_t pgrp, session;                        /* process group and session ids */
	uint64_t flags, minflt, majflt, utime, stime; /* ticks for utime/stime */
	int64_t nice;
	uint64_t threads, starttime, vsize; /* starttime: ticks after boot; vsize: bytes */
	int64_t rss_pages;
	int64_t processor;
} host_pid_stat;

int host_parse_pid_stat(const char *buf, size_t len, host_pid_stat *out);

/* --------------------------------------------------------- /proc/PID/status */

enum {
	HOST_PST_NAME = 1u << 0,
	HOST_PST_UID = 1u << 1,
	HOST_PST_GID = 1u << 2,
	HOST_PST_PPID = 1u << 3,
	HOST_PST_THREADS = 1u << 4,
	HOST_PST_NSPID = 1u << 5,
	HOST_PST_VMRSS = 1u << 6,
	HOST_PST_VMSWAP = 1u << 7,
	HOST_PST_VMHWM = 1u << 8,
	HOST_PST_CTXT = 1u << 9, /* both context-switch counters */
	HOST_PST_TGID = 1u << 10,
};

#define HOST_NSPID_MAX 33 /* the kernel nests at most 32 PID namespaces */

typedef struct host_pid_status {
	unsigned has; /* HOST_PST_* */
	char name[HOST_COMM_LEN];
	uint32_t uid[4], gid[4]; /* real, effective, saved, filesystem */
	int tgid, ppid;
	uint64_t threads;
	uint64_t vm_rss, vm_swap, vm_hwm; /* bytes */
	uint64_t vol_ctxt, nonvol_ctxt;   /* of the main thread only */
	int nspid[HOST_NSPID_MAX];        /* outermost (the reader's namespace) first */
	int nspid_n;                      /* > 1: the process lives in a nested PID namespace */
} host_pid_status;

int host_parse_pid_status(const char *buf, size_t len, host_pid_status *out);

/* ------------------------------------------------------------- /proc/PID/io */

enum host_io {
	HOST_IO_RCHAR,
	HOST_IO_WCHAR,
	HOST_IO_SYSCR,
	HOST_IO_SYSCW,
	HOST_IO_READ_BYTES,
	HOST_IO_WRITE_BYTES,
	HOST_IO_CANCELLED_WRITE_BYTES,
	HOST_IO_COUNT
};

typedef struct host_pid_io {
	unsigned has; /* bit (1u << HOST_IO_x) */
	uint64_t v[HOST_IO_COUNT];
} host_pid_io;

int host_parse_pid_io(const char *buf, size_t len, host_pid_io *out);

/* -------------------------------------------------------- /proc/PID/cmdline */

/*
 * Join NUL-separated arguments with single spaces into out (always
 * NUL-terminated when outsize > 0). Trailing NULs are dropped, control bytes
 * become '?'. Returns the length the full string needs (like snprintf), so
 * out was truncated when the result >= outsize. Empty input (kernel threads,
 * zombies) gives "".
 */
size_t host_format_cmdline(const char *buf, size_t len, char *out, size_t outsize);

/* --------------------------------------------------------- /proc/PID/cgroup */

enum host_runtime {
	HOST_RT_NONE,       /* no container seen in the cgroup path */
	HOST_RT_DOCKER,     /* /docker/<id>, docker-<id>.scope */
	HOST_RT_CONTAINERD, /* cri-containerd-<id>.scope, /containerd/... */
	HOST_RT_CRIO,       /* crio-<id>.scope */
	HOST_RT_PODMAN,     /* libpod-<id>.scope, libpod_parent */
	HOST_RT_KUBEPODS,   /* a kubepods path whose runtime is not named */
	HOST_RT_LXC,        /* /lxc/<name>, lxc.payload.<name> */
	HOST_RT_COUNT
};

#define HOST_CGROUP_PATH_MAX 512

typedef struct host_cgroup {
	bool path_ok;
	bool v2;                         /* path from the unified ("0::") line */
	char path[HOST_CGROUP_PATH_MAX]; /* unified path, else the cpu (or first) v1 path */
	enum host_runtime runtime;
	char id[65];      /* container id (64 hex, or as written); "" if none */
	char pod_uid[40]; /* Kubernetes pod UID (dashes restored); "" if none */
} host_cgroup;

int host_parse_cgroup(const char *buf, size_t len, host_cgroup *out);
/* Find runtime, container id and pod uid in one cgroup path. */
void host_cgroup_classify(const char *path, host_cgroup *out);
const char *host_runtime_name(enum host_runtime rt); /* "docker", ..., "" for NONE */

#endif
