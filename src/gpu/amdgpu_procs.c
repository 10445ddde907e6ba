/*
 * amdgpu_procs.c - per-process VRAM and engine time of AMD GPUs, from the
 * fdinfo of every open DRM file (/proc/PID/fdinfo/N), the kernel's own
 * per-client accounting: no vendor library is asked.
 */
#include "gpu/amdgpu.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

static int by_client(const void *a, const void *b)
{
	const amdgpu_client *x = *(const amdgpu_client *const *)a;
	const amdgpu_client *y = *(const amdgpu_client *const *)b;
	int c = strcmp(x->info.pdev, y->info.pdev);
	if (c)
		return c;
	if (x->info.client_id != y->info.client_id)
		return x->info.client_id < y->info.client_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_pid(const void *a, const void *b)
{
	const amdgpu_proc *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->pdev, y->pdev);
}

/* Add one client's numbers to its process's entry (made when new). */
static int add_client(const amdgpu_client *c, amdgpu_proc *out, int n, int max)
{
	int k;
	for (k = 0; k < n; k++)
		if (out[k].pid == c->pid && !strcmp(out[k].pdev, c->info.pdev))
			break;
	if (k == n) {
		if (n == max)
			return n;
		memset(&out[n], 0, sizeof out[n]);
		out[n].pid = c->pid;
		snprintf(out[n].pdev, sizeof out[n].pdev, "%s", c->info.pdev);
		n++;
	}
	amdgpu_proc *p = &out[k];
	const amdgpu_fdinfo *f = &c->info;
	p->clients++;
	p->vram_ok |= f->vram_ok;
	p->vram_bytes += f->vram_ok ? f->vram_bytes : 0;
	p->gtt_ok |= f->gtt_ok;
	p->gtt_bytes += f->gtt_ok ? f->gtt_bytes : 0;
	p->gfx_ok |= f->gfx_ok;
	p->gfx_ns += f->gfx_ok ? f->gfx_ns : 0;
	p->compute_ok |= f->compute_ok;
	p->compute_ns += f->compute_ok ? f->compute_ns : 0;
	return n;
}

int amdgpu_fold_clients(const amdgpu_client *in, int n, amdgpu_proc *out, int max)
{
	if (n <= 0 || max <= 0)
		return 0;
	const amdgpu_client **v = gw_xcalloc((size_t)n, sizeof *v);
	int m = 0;
	for (int i = 0; i < n; i++)
		if (in[i].info.is_amdgpu && in[i].info.client_ok && in[i].info.pdev[0])
			v[m++] = &in[i];
	if (m > 1)
		qsort(v, (size_t)m, sizeof *v, by_client);
	int np = 0;
	for (int i = 0; i < m; i++) {
		/* sorted by (GPU, client, PID): the first of a run is the lowest PID */
		if (i > 0 && !strcmp(v[i]->info.pdev, v[i - 1]->info.pdev) &&
		    v[i]->info.client_id == v[i - 1]->info.client_id)
			continue;
		np = add_client(v[i], out, np, max);
	}
	free(v);
	if (np > 1)
		qsort(out, (size_t)np, sizeof *out, by_pid);
	return np;
}

/* Append the amdgpu clients of one PID's fdinfo directory to *v. */
static void scan_pid(const char *proc_root, unsigned pid, amdgpu_client **v, int *n, int *cap)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/%u/fdinfo", proc_root, pid);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!amdgpu_is_number(e->d_name))
			continue;
		char path[sizeof dir + 256], buf[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* most descriptors are no DRM file: a cheap test before parsing */
		if (!strstr(buf, "drm-driver:"))
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 16;
			*v = gw_xreallocarray(*v, (size_t)*cap, sizeof **v);
		}
		(*v)[*n].pid = pid;
		if (amdgpu_parse_fdinfo(buf, len, &(*v)[*n].info))
			(*n)++;
	}
	closedir(d);
}

int amdgpu_procs_read(const char *proc_root, amdgpu_proc *out, int max)
{
	DIR *d = opendir(proc_root);
	if (!d)
		return 0;
	amdgpu_client *v = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!amdgpu_is_number(e->d_name))
			continue;
		unsigned long pid = strtoul(e->d_name, NULL, 10);
		if (pid > 0 && pid <= UINT_MAX)
			scan_pid(proc_root, (unsigned)pid, &v, &n, &cap);
	}
	closedir(d);
	int np = amdgpu_fold_clients(v, n, out, max);
	free(v);
	return np;
}
