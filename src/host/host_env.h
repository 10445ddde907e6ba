/*
 * host_env.h - small probes of the machine gpuwhy runs on: identity,
 * container, WSL, PID namespace. Each reads a few files once; call them at
 * start-up (doctor, the recording's meta table), not every sample.
 *
 * Paths go through host_config (proc_root, sys_root, fs_root) so fixture
 * trees can stand in for the machine. Unknown values are absent (ok flags,
 * empty strings), never guessed.
 */
#ifndef GPUWHY_HOST_ENV_H
#define GPUWHY_HOST_ENV_H

#include "host/host.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct host_identity {
	char hostname[256];       /* proc/sys/kernel/hostname; "" if unreadable */
	char kernel_release[128]; /* proc/sys/kernel/osrelease; "" if unreadable */
	bool cpus_online_ok;
	int cpus_online; /* sys/devices/system/cpu/online ("0-3,6"), else cpuN lines of proc/stat */
	bool mem_total_ok;
	uint64_t mem_total; /* bytes, proc/meminfo MemTotal */
	bool boot_time_ok;
	uint64_t boot_time; /* seconds since the epoch, proc/stat btime */
} host_identity;

void host_identity_read(const host_config *cfg, host_identity *out);

/* How the container was recognised (bits of host_env.container_how). */
enum {
	HOST_CT_DOCKERENV = 1u << 0,    /* fs_root/.dockerenv exists */
	HOST_CT_CONTAINERENV = 1u << 1, /* fs_root/run/.containerenv exists (podman) */
	HOST_CT_CGROUP = 1u << 2,       /* proc/self/cgroup or proc/1/cgroup names a runtime */
};

typedef struct host_env {
	bool in_container;
	unsigned container_how;    /* HOST_CT_* */
	enum host_runtime runtime; /* from the cgroup path, or docker/podman from the marker file */
	char container_id[65];     /* where the cgroup path shows it; "" otherwise */
	bool in_wsl;        /* proc/version mentions Microsoft/WSL, or WSL_DISTRO_NAME is set */
	bool pid_ns_ok;     /* proc/self/status had an NSpid line */
	int pid_ns_depth;   /* its number of entries: > 1 when proc_root belongs to an
	                     * ancestor namespace of ours */
	bool kthreadd_seen; /* proc/2 is kthreadd (ppid 0): only the init namespace shows it */
	bool pid_ns_nested; /* pid_ns_depth > 1, or no kthreadd: PIDs that NVML reports
	                     * (host PIDs) will not match the PIDs under proc_root */
} host_env;

void host_env_probe(const host_config *cfg, host_env *out);

/* Pure helpers, exported for tests and fuzzing. */
/* Count the CPUs in a sysfs list such as "0-3,8,10-11\n"; -1 when malformed. */
int host_cpulist_count(const char *buf, size_t len);
/* True when a /proc/version text names Microsoft or WSL. */
bool host_version_is_wsl(const char *buf, size_t len);

#endif
