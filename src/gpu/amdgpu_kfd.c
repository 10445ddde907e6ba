/*
 * amdgpu_kfd.c - per-process VRAM from the ROCm kernel driver's own
 * accounting: /sys/class/kfd/kfd/proc/PID/vram_GPUID, bytes. Unlike DRM
 * fdinfo these files are readable by every user, so the compute processes
 * of other users are seen too (rocm-smi's and amd-smi's process lists read
 * the same files). A GPU id is a node of the KFD topology, whose
 * `properties` give its PCI address (`domain`, `location_id`).
 */
#include "gpu/amdgpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KFD_DIR "/sys/class/kfd/kfd"

/* A decimal number, then at most a newline; false for anything else. */
static bool parse_u64(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE || (*end && strcmp(end, "\n") != 0))
		return false;
	*out = v;
	return true;
}

bool amdgpu_parse_kfd_props(const char *text, amdgpu_kfd_node *out)
{
	uint64_t domain = 0, loc = 0;
	bool have_loc = false;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		char line[128];
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n < sizeof line) {
			memcpy(line, p, n);
			line[n] = '\0';
			char *sp = strchr(line, ' ');
			if (sp) {
				*sp = '\0';
				uint64_t v;
				if (parse_u64(sp + 1, &v)) {
					if (!strcmp(line, "location_id")) {
						loc = v;
						have_loc = true;
					} else if (!strcmp(line, "domain")) {
						domain = v; /* absent before 5.9: domain 0 */
					}
				}
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!have_loc || domain > 0xffff)
		return false;
	/* bits 28-31 of location_id number a partition of the same device */
	snprintf(out->pdev, sizeof out->pdev, "%04x:%02x:%02x.%x", (unsigned)domain,
	         (unsigned)(loc >> 8) & 0xff, (unsigned)(loc >> 3) & 0x1f, (unsigned)loc & 7);
	return true;
}

int amdgpu_kfd_nodes(const char *root, amdgpu_kfd_node *out, int max)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s" KFD_DIR "/topology/nodes", root ? root : "");
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while (n < max && (e = readdir(d))) {
		if (!amdgpu_is_number(e->d_name))
			continue;
		char node[PATH_MAX + 300], path[PATH_MAX + 320], props[8192];
		unsigned long long id;
		snprintf(node, sizeof node, "%s/%s", dir, e->d_name);
		if (!amdgpu_read_num(node, "gpu_id", false, &id) || id == 0 || id > UINT32_MAX)
			continue; /* a CPU node has gpu_id 0 */
		snprintf(path, sizeof path, "%s/properties", node);
		if (!amdgpu_read_text(path, props, sizeof props) ||
		    !amdgpu_parse_kfd_props(props, &out[n]))
			continue;
		out[n++].gpu_id = (uint32_t)id;
	}
	closedir(d);
	return n;
}

static const char *pdev_of(const amdgpu_kfd_node *nodes, int n, uint64_t id)
{
	for (int k = 0; k < n; k++)
		if (nodes[k].gpu_id == id)
			return nodes[k].pdev;
	return NULL;
}

/* Add one vram_GPUID file's bytes to PID's entry on that GPU (made when new). */
static int add_vram(unsigned pid, const char *pdev, uint64_t bytes, amdgpu_proc *out, int n,
                    int max)
{
	int k;
	for (k = 0; k < n; k++)
		if (out[k].pid == pid && !strcmp(out[k].pdev, pdev))
			break;
	if (k == n) {
		if (n == max)
			return n;
		memset(&out[n], 0, sizeof out[n]);
		out[n].pid = pid;
		snprintf(out[n].pdev, sizeof out[n].pdev, "%s", pdev);
		n++;
	}
	out[k].vram_ok = true;
	out[k].vram_bytes += bytes;
	return n;
}

/* The vram_GPUID files of one PID's directory. */
static int scan_pid(const char *dir, unsigned pid, const amdgpu_kfd_node *nodes, int nn,
                    amdgpu_proc *out, int n, int max)
{
	DIR *d = opendir(dir);
	if (!d)
		return n;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "vram_", 5) != 0 || !amdgpu_is_number(e->d_name + 5))
			continue;
		const char *pdev = pdev_of(nodes, nn, strtoull(e->d_name + 5, NULL, 10));
		unsigned long long bytes;
		if (pdev && amdgpu_read_num(dir, e->d_name, false, &bytes))
			n = add_vram(pid, pdev, bytes, out, n, max);
	}
	closedir(d);
	return n;
}

static int by_pid(const void *a, const void *b)
{
	const amdgpu_proc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->pdev, y->pdev);
}

int amdgpu_kfd_procs_read(const char *root, const amdgpu_kfd_node *nodes, int nn, amdgpu_proc *out,
                          int max)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s" KFD_DIR "/proc", root ? root : "");
	DIR *d = nn > 0 && max > 0 ? opendir(dir) : NULL;
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		unsigned long pid = strtoul(e->d_name, NULL, 10);
		if (!amdgpu_is_number(e->d_name) || pid == 0 || pid > UINT_MAX)
			continue;
		char sub[PATH_MAX + 300];
		snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
		n = scan_pid(sub, (unsigned)pid, nodes, nn, out, n, max);
	}
	closedir(d);
	if (n > 1)
		qsort(out, (size_t)n, sizeof *out, by_pid);
	return n;
}
