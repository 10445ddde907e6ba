/*
 * host_k8s.h - which Kubernetes pod and container a process runs in, for the
 * exporter's pod/namespace/container labels.
 *
 * The pod UID and container ID come from the process's cgroup path
 * (/proc/PID/cgroup: kubepods.../pod<UID>/<runtime>-<ID>, systemd or
 * cgroupfs driver, cgroup v1 or v2). The names come from the kubelet's
 * log links on the node, /var/log/containers/<pod>_<namespace>_<container>-<ID>.log,
 * which the exporter's DaemonSet mounts read-only; without them only the
 * pod UID is known and no labels are added.
 */
#ifndef GPUWHY_HOST_K8S_H
#define GPUWHY_HOST_K8S_H

#include <stdbool.h>

typedef struct {
	char pod_uid[64];      /* "0f1e2d3c-...", "" when not in a pod */
	char container_id[80]; /* 64 hex digits of the runtime's ID, "" when unknown */
	char pod[254], namespace_[64], container[64]; /* "" when the names are unknown */
} host_k8s;

/*
 * Fill *out for pid from proc_root ("/proc") and log_root ("/var/log").
 * Returns true when the process is in a pod and its names were found.
 */
bool host_k8s_lookup(const char *proc_root, const char *log_root, unsigned pid, host_k8s *out);

/* Parse one cgroup path; exposed for tests. True when it names a pod. */
bool host_k8s_parse_cgroup(const char *path, host_k8s *out);

#endif
