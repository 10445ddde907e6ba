/* gpu_procs.c - the processes on a GPU, their utilization and names; retired pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_int.h"
#include "host/host_pidbrief.h"

/* NVML returns PIDs; the kernel's pid_max can be at most 2^22. */
#define GPU_PID_MAX 4194304U

static bool plausible_proc(unsigned pid, unsigned long long mem, unsigned long long total)
{
	if (pid == 0 || pid > GPU_PID_MAX)
		return false;
	return mem == NVML_VALUE_NOT_AVAILABLE || total == 0 || mem <= total;
}

static int merge_proc(gpu_proc *out, int n, int max, unsigned pid, unsigned long long mem,
                      unsigned type)
{
	for (int k = 0; k < n; k++) {
		if (out[k].pid == pid) {
			out[k].type |= type;
			return n;
		}
	}
	if (n >= max)
		return n;
	memset(&out[n], 0, sizeof out[n]);
	out[n].pid = pid;
	out[n].type = type;
	if (mem != NVML_VALUE_NOT_AVAILABLE) {
		out[n].mem_ok = true;
		out[n].mem_bytes = mem;
	}
	return n + 1;
}

/*
 * One process list call. _v3 has written a 32-byte layout on drivers
 * 535.43-535.8x; the buffer is sized for either and the answer is checked
 * for plausible PIDs and memory before it is believed.
 */
typedef nvmlReturn_t (*proc_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

static int list_procs(gpu_ctx *c, gpu_dev *d, proc_fn fn, unsigned type, gpu_proc *out, int n,
                      int max, unsigned long long total)
{
	unsigned cnt = 0;
	nvmlReturn_t rc = fn(d->h, &cnt, NULL);
	if (rc == NVML_SUCCESS && cnt == 0)
		return n;
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		gpu_ok(d, rc);
		return rc == NVML_SUCCESS ? n : -1;
	}
	cnt += 8; /* processes may start between the two calls */
	unsigned char *buf = calloc(cnt, sizeof(nvmlProcessInfo_535_t));
	if (!buf)
		return -1;
	unsigned got = cnt;
	rc = fn(d->h, &got, (nvmlProcessInfo_t *)buf);
	if (!gpu_ok(d, rc)) {
		free(buf);
		return -1;
	}
	const nvmlProcessInfo_t *p24 = (const nvmlProcessInfo_t *)buf;
	const nvmlProcessInfo_535_t *p32 = (const nvmlProcessInfo_535_t *)buf;
	bool ok24 = true, ok32 = true;
	for (unsigned k = 0; k < got; k++) {
		ok24 &= plausible_proc(p24[k].pid, p24[k].usedGpuMemory, total);
		ok32 &= plausible_proc(p32[k].pid, p32[k].usedGpuMemory, total);
	}
	if (d->proc_layout == 0 && got > 0)
		d->proc_layout = ok24 ? 24 : ok32 ? 32 : 0;
	for (unsigned k = 0; k < got; k++) {
		if (d->proc_layout == 32)
			n = merge_proc(out, n, max, p32[k].pid, p32[k].usedGpuMemory, type);
		else if (plausible_proc(p24[k].pid, p24[k].usedGpuMemory, total))
			n = merge_proc(out, n, max, p24[k].pid, p24[k].usedGpuMemory, type);
	}
	free(buf);
	return n;
}

static int list_procs_v1(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int n, int max,
                         unsigned long long total)
{
	unsigned cnt = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetComputeRunningProcesses(d->h, &cnt, NULL);
	if (rc == NVML_SUCCESS && cnt == 0)
		return n;
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
		return gpu_ok(d, rc) ? n : -1;
	cnt += 8;
	nvmlProcessInfo_v1_t *p = calloc(cnt, sizeof *p);
	if (!p)
		return -1;
	if (gpu_ok(d, c->api.nvmlDeviceGetComputeRunningProcesses(d->h, &cnt, p)))
		for (unsigned k = 0; k < cnt; k++)
			if (plausible_proc(p[k].pid, p[k].usedGpuMemory, total))
				n = merge_proc(out, n, max, p[k].pid, p[k].usedGpuMemory,
				               GPU_PROC_COMPUTE);
	free(p);
	return n;
}

static void proc_utilization(gpu_ctx *c, gpu_dev *d, gpu_proc *out, int n)
{
	if (!c->api.nvmlDeviceGetProcessUtilization || n == 0)
		return;
	unsigned cnt = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetProcessUtilization(d->h, NULL, &cnt, d->proc_last_ts);
	if (rc == NVML_ERROR_NOT_FOUND) {
		/* No samples newer than the last one seen: nothing ran, 0 %. */
		for (int k = 0; k < n; k++)
			out[k].util_ok = true;
		return;
	}
	if (rc != NVML_ERROR_INSUFFICIENT_SIZE && rc != NVML_SUCCESS) {
		gpu_ok(d, rc);
		return;
	}
	if (cnt == 0 || cnt > 100000)
		return;
	nvmlProcessUtilizationSample_t *s = calloc(cnt, sizeof *s);
	if (!s)
		return;
	rc = c->api.nvmlDeviceGetProcessUtilization(d->h, s, &cnt, d->proc_last_ts);
	if (rc == NVML_SUCCESS) {
		unsigned long long newest = d->proc_last_ts;
		for (int k = 0; k < n; k++) {
			double sm = 0, mem = 0, enc = 0, dec = 0;
			unsigned m = 0;
			for (unsigned j = 0; j < cnt; j++) {
				if (s[j].pid != out[k].pid)
					continue;
				sm += s[j].smUtil;
				mem += s[j].memUtil;
				enc += s[j].encUtil;
				dec += s[j].decUtil;
				m++;
			}
			out[k].util_ok = true;
			out[k].util_sampled = m > 0;
			if (m) {
				out[k].sm_pct = (unsigned)(sm / m + 0.5);
				out[k].mem_pct = (unsigned)(mem / m + 0.5);
				out[k].enc_pct = (unsigned)(enc / m + 0.5);
				out[k].dec_pct = (unsigned)(dec / m + 0.5);
			}
		}
		for (unsigned j = 0; j < cnt; j++)
			if (s[j].timeStamp > newest)
				newest = s[j].timeStamp;
		d->proc_last_ts = newest;
	} else {
		gpu_ok(d, rc);
	}
	free(s);
}

int gpu_processes(gpu_ctx *c, int i, gpu_proc *out, int max)
{
	gpu_dev *d = &c->dev[i];
	if (gpu_is_amd(d))
		return gpu_amd_processes(c, d, out, max);
	if (gpu_lost(d))
		return -1;
	unsigned long long total = 0;
	pthread_mutex_lock(&d->mu);
	if (d->cache_ok[GM_MEM_TOTAL])
		total = (unsigned long long)d->cache_v[GM_MEM_TOTAL] * 1024ULL * 1024ULL;
	pthread_mutex_unlock(&d->mu);
	int n = 0;
	if (c->api.nvmlDeviceGetComputeRunningProcesses_v3)
		n = list_procs(c, d, c->api.nvmlDeviceGetComputeRunningProcesses_v3,
		               GPU_PROC_COMPUTE, out, n, max, total);
	else if (c->api.nvmlDeviceGetComputeRunningProcesses_v2)
		n = list_procs(c, d, c->api.nvmlDeviceGetComputeRunningProcesses_v2,
		               GPU_PROC_COMPUTE, out, n, max, total);
	else if (c->api.nvmlDeviceGetComputeRunningProcesses)
		n = list_procs_v1(c, d, out, n, max, total);
	if (n < 0)
		return gpu_lost(d) ? -1 : 0;
	if (c->api.nvmlDeviceGetGraphicsRunningProcesses_v3) {
		int m = list_procs(c, d, c->api.nvmlDeviceGetGraphicsRunningProcesses_v3,
		                   GPU_PROC_GRAPHICS, out, n, max, total);
		if (m >= 0)
			n = m;
	}
	proc_utilization(c, d, out, n);
	for (int k = 0; c->sim_proc_info && k < n; k++)
		out[k].sim =
		    c->sim_proc_info(out[k].pid, out[k].sim_name, sizeof out[k].sim_name,
		                     out[k].sim_user, sizeof out[k].sim_user) == NVML_SUCCESS;
	return gpu_lost(d) ? -1 : n;
}

bool gpu_process_name(gpu_ctx *c, unsigned pid, char *out, int len)
{
	if (len <= 0)
		return false;
	out[0] = '\0';
	if (!c->api.nvmlSystemGetProcessName ||
	    c->api.nvmlSystemGetProcessName(pid, out, (unsigned)len) != NVML_SUCCESS) {
		out[0] = '\0';
		return false;
	}
	out[len - 1] = '\0';
	return out[0] != '\0';
}

int gpu_retired_pages(gpu_ctx *c, int i, int cause, unsigned long long *addrs, int max)
{
	gpu_dev *d = &c->dev[i];
	if (gpu_lost(d) || gpu_is_amd(d) || !c->api.nvmlDeviceGetRetiredPages || max < 0)
		return -1;
	unsigned n = 0;
	nvmlReturn_t rc = c->api.nvmlDeviceGetRetiredPages(d->h, cause, &n, NULL);
	if (rc != NVML_SUCCESS && rc != NVML_ERROR_INSUFFICIENT_SIZE) {
		gpu_ok(d, rc);
		return -1;
	}
	if (n == 0 || max == 0)
		return (int)n;
	unsigned want = n < (unsigned)max ? n : (unsigned)max;
	unsigned long long *buf = calloc(n, sizeof *buf);
	if (!buf)
		return -1;
	unsigned got = n;
	rc = c->api.nvmlDeviceGetRetiredPages(d->h, cause, &got, buf);
	if (!gpu_ok(d, rc)) {
		free(buf);
		return -1;
	}
	if (got < want)
		want = got;
	memcpy(addrs, buf, want * sizeof *buf);
	free(buf);
	return (int)got;
}

void gpu_proc_brief(const gpu_proc *p, const char *proc_root, host_pid_brief *out)
{
	host_pid_brief_read(proc_root, p->pid, out);
	/* The scenario says whether its PID is gone by giving one that does not exist here. */
	if (!p->sim || !out->exists)
		return;
	snprintf(out->user, sizeof out->user, "%s", p->sim_user);
	snprintf(out->cmd, sizeof out->cmd, "%s", p->sim_name);
}
