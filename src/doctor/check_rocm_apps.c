/*
 * check_rocm_apps.c - rocm.apps: ComfyUI and Ollama running on a machine
 * with AMD GPUs but without the GPU. A process that uses an AMD GPU through
 * ROCm holds /dev/kfd open; one that does not runs on the CPU, whatever its
 * settings say. The usual causes differ: ComfyUI's PyTorch is a CUDA or CPU
 * build (on AMD a slow ComfyUI is a software-stack problem before it is a
 * memory one), Ollama misses its ROCm libraries, access to /dev/kfd, or the
 * gfx override of a consumer card.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "doctor/check_rocm.h"
#include "doctor/doctor_int.h"

#define APPS_MAX 8

typedef enum { APP_COMFYUI, APP_OLLAMA } app_kind;

typedef struct {
	app_kind kind;
	unsigned pid;
	int kfd; /* 1 holds /dev/kfd open, 0 does not, -1 cannot tell (another user's) */
} app;

/* Which app argv (NUL-separated, n bytes) is, if any. */
static int app_of(const char *argv, size_t n)
{
	const char *a0 = argv, *base = strrchr(a0, '/');
	base = base ? base + 1 : a0;
	if (!strcmp(base, "ollama"))
		return APP_OLLAMA;
	for (size_t i = 0; i < n; i += strlen(argv + i) + 1)
		if (strcasestr(argv + i, "comfyui"))
			return APP_COMFYUI;
	return -1;
}

/* Whether PID holds /dev/kfd among its open files; -1 when they cannot be read. */
static int holds_kfd(const doctor_ctx *c, unsigned pid)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/%u/fd", c->p->proc_root, pid);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		char path[800], target[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n > 0) {
			target[n] = '\0';
			found = !strcmp(target, "/dev/kfd");
		}
	}
	closedir(d);
	return found;
}

static int scan_apps(const doctor_ctx *c, app *out, int max)
{
	DIR *d = opendir(c->p->proc_root);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		char *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);
		if (!isdigit((unsigned char)e->d_name[0]) || *end)
			continue;
		char path[512], argv[4096];
		snprintf(path, sizeof path, "%s/%lu/cmdline", c->p->proc_root, pid);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t len = fread(argv, 1, sizeof argv - 1, f);
		fclose(f);
		if (len == 0)
			continue;
		argv[len] = '\0';
		int k = app_of(argv, len);
		if (k < 0)
			continue;
		out[n].kind = (app_kind)k;
		out[n].pid = (unsigned)pid;
		out[n].kfd = holds_kfd(c, (unsigned)pid);
		n++;
	}
	closedir(d);
	return n;
}

static const char *app_name(app_kind k)
{
	return k == APP_OLLAMA ? "Ollama" : "ComfyUI";
}

static void app_on_cpu(doctor_ctx *c, const app *a)
{
	doctor_result *r =
	    doctor_addf(c->r, "rocm.apps", DOCTOR_WARN,
	                "%s (PID %u) has no /dev/kfd open: it runs on the CPU, not the AMD "
	                "GPU",
	                app_name(a->kind), a->pid);
	if (a->kind == APP_COMFYUI)
		doctor_fixf(r, "on AMD a slow or out-of-memory ComfyUI is first a software-stack "
		               "question: install a ROCm build of PyTorch in ComfyUI's environment "
		               "(rocm.torch) before tuning memory options");
	else
		doctor_fixf(r, "check that Ollama's ROCm libraries are installed (the ROCm archive "
		               "beside ollama), that its user is in the render and video groups "
		               "(rocm.devices), and HSA_OVERRIDE_GFX_VERSION for consumer cards "
		               "(rocm.gfx_override); journalctl -u ollama names the GPU it found");
}

void doctor_check_rocm_apps(doctor_ctx *c)
{
	if (doctor_rocm_gpu_count(c) == 0) {
		doctor_addf(c->r, "rocm.apps", DOCTOR_SKIP,
		            "no AMD GPU (amdgpu driver) on this machine");
		return;
	}
	app apps[APPS_MAX];
	int n = scan_apps(c, apps, APPS_MAX);
	if (n == 0) {
		doctor_addf(c->r, "rocm.apps", DOCTOR_SKIP,
		            "neither ComfyUI nor Ollama is running");
		return;
	}
	for (int i = 0; i < n; i++)
		if (apps[i].kfd == 0) {
			app_on_cpu(c, &apps[i]);
			return;
		}
	int use = -1;
	for (int i = 0; i < n && use < 0; i++)
		if (apps[i].kfd > 0)
			use = i;
	if (use < 0) {
		doctor_addf(
		    c->r, "rocm.apps", DOCTOR_SKIP,
		    "%s (PID %u) is another user's: its open files cannot be read (run as root)",
		    app_name(apps[0].kind), apps[0].pid);
		return;
	}
	bool unknown = false;
	for (int i = 0; i < n; i++)
		unknown |= apps[i].kfd < 0;
	doctor_addf(c->r, "rocm.apps", DOCTOR_PASS,
	            "%s (PID %u) uses the AMD GPU (/dev/kfd open)%s", app_name(apps[use].kind),
	            apps[use].pid,
	            unknown ? DOCTOR_("; another user's could not be looked into") : "");
}
