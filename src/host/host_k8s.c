/* host_k8s.c - pod UID and container ID from a cgroup path, names from the kubelet's log links. */
#include "host/host_k8s.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

static bool is_hex_run(const char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (!isxdigit((unsigned char)s[k]))
			return false;
	return true;
}

/* "pod0f1e2d3c_4b5a_..." (systemd, '_' for '-') or "pod0f1e2d3c-4b5a-..." (cgroupfs). */
static bool pod_uid(const char *seg, size_t n, char *out, size_t outlen)
{
	const char *p = NULL;
	for (size_t k = 0; k + 3 < n; k++)
		if (!strncmp(seg + k, "pod", 3) && (k == 0 || seg[k - 1] == '-')) {
			p = seg + k + 3;
			break;
		}
	if (!p)
		return false;
	size_t len = 0;
	while (p + len < seg + n &&
	       (isxdigit((unsigned char)p[len]) || p[len] == '_' || p[len] == '-'))
		len++;
	/* a UUID: 32 hex digits and 4 separators */
	if (len != 36 || len >= outlen)
		return false;
	for (size_t k = 0; k < len; k++)
		out[k] = p[k] == '_' ? '-' : p[k];
	out[len] = '\0';
	return true;
}

/* "cri-containerd-<64 hex>.scope", "crio-<hex>.scope", "docker-<hex>.scope" or "<64 hex>". */
static bool container_id(const char *seg, size_t n, char *out, size_t outlen)
{
	const char *dash = NULL;
	for (size_t k = 0; k < n; k++)
		if (seg[k] == '-')
			dash = seg + k;
	const char *id = dash ? dash + 1 : seg;
	size_t len = (size_t)(seg + n - id);
	if (len > 6 && !strncmp(id + len - 6, ".scope", 6))
		len -= 6;
	if (len != 64 || !is_hex_run(id, len) || len >= outlen)
		return false;
	memcpy(out, id, len);
	out[len] = '\0';
	return true;
}

bool host_k8s_parse_cgroup(const char *path, host_k8s *out)
{
	memset(out, 0, sizeof *out);
	if (!strstr(path, "kubepods"))
		return false;
	const char *s = path;
	while (*s) {
		while (*s == '/')
			s++;
		size_t n = strcspn(s, "/");
		if (n == 0)
			break;
		if (!out->pod_uid[0])
			pod_uid(s, n, out->pod_uid, sizeof out->pod_uid);
		else
			container_id(s, n, out->container_id, sizeof out->container_id);
		s += n;
	}
	return out->pod_uid[0] != '\0';
}

/* /var/log/containers/<pod>_<namespace>_<container>-<id>.log */
static bool names_from_logs(const char *log_root, host_k8s *k)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/containers", log_root);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		const char *nm = e->d_name;
		size_t n = strlen(nm);
		/* "-" + 64 hex + ".log" */
		if (n < 70 || strcmp(nm + n - 4, ".log") || nm[n - 69] != '-' ||
		    strncmp(nm + n - 68, k->container_id, 64))
			continue;
		const char *u1 = strchr(nm, '_');
		const char *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
		const char *end = nm + n - 69;
		if (!u1 || !u2 || u2 >= end)
			continue;
		snprintf(k->pod, sizeof k->pod, "%.*s", (int)(u1 - nm), nm);
		snprintf(k->namespace_, sizeof k->namespace_, "%.*s", (int)(u2 - u1 - 1), u1 + 1);
		snprintf(k->container, sizeof k->container, "%.*s", (int)(end - u2 - 1), u2 + 1);
		found = k->pod[0] && k->namespace_[0] && k->container[0];
	}
	closedir(d);
	return found;
}

bool host_k8s_lookup(const char *proc_root, const char *log_root, unsigned pid, host_k8s *out)
{
	memset(out, 0, sizeof *out);
	char path[512], line[1024];
	snprintf(path, sizeof path, "%s/%u/cgroup", proc_root, pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool pod = false;
	while (!pod && fgets(line, sizeof line, f)) {
		/* "hierarchy-ID:controllers:path"; v2 has one line "0::/path" */
		char *p = strchr(line, ':');
		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		pod = host_k8s_parse_cgroup(p + 1, out) && out->container_id[0];
	}
	fclose(f);
	return pod && names_from_logs(log_root, out);
}
