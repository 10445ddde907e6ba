/*
 * test_doctor_common.h - fixtures for the doctor's unit tests: a temporary
 * tree standing in for /proc, /sys, /dev and / (fs), a bin/ directory for
 * fake docker/nvidia-ctk/python/dmesg, an environment list, an access()
 * that can refuse paths, and a hand-built doctor_machine.
 */
#ifndef TEST_DOCTOR_COMMON_H
#define TEST_DOCTOR_COMMON_H

#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/check_cuda.h"
#include "doctor/checks.h"
#include "doctor/machine.h"
#include "doctor/probe.h"
#include "doctor/report.h"

#define FX_DOCTOR FIXTURES_DIR "/doctor"

typedef struct {
	char root[128];
	char proc[160], sys[160], dev[160], fs[160], bin[160];
	char kmsg[160];
	char *env[64];
	int nenv;
	doctor_probe p;
	doctor_opts o;
	doctor_machine m;
	doctor_report r;
	doctor_ctx c;
	bool ctx_live;
} fx_t;

/* Paths access() refuses (suffix match), as if this user lacked permission. */
static const char *fx_denied[8] __attribute__((unused));

static inline int fx_access(const char *path, int mode)
{
	(void)mode;
	size_t l = strlen(path);
	for (int i = 0; i < 8 && fx_denied[i]; i++) {
		size_t d = strlen(fx_denied[i]);
		if (l >= d && !strcmp(path + l - d, fx_denied[i])) {
			errno = EACCES;
			return -1;
		}
	}
	return access(path, F_OK);
}

static inline void fx_mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(tmp, 0755);
			*p = '/';
		}
	}
	mkdir(tmp, 0755);
}

/* root-relative path into out */
static inline const char *fx_path(fx_t *f, const char *rel, char *out)
{
	snprintf(out, PATH_MAX, "%s/%s", f->root, rel);
	return out;
}

static inline void fx_write(fx_t *f, const char *rel, const char *content)
{
	char path[PATH_MAX], dir[PATH_MAX];
	fx_path(f, rel, path);
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	fx_mkdirs(dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
}

/* Write bytes that may contain NULs (cmdline files). */
static inline void fx_write_n(fx_t *f, const char *rel, const char *content, size_t n)
{
	char path[PATH_MAX], dir[PATH_MAX];
	fx_path(f, rel, path);
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	fx_mkdirs(dir);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fwrite(content, 1, n, fp);
	fclose(fp);
}

static inline void fx_copy(fx_t *f, const char *rel, const char *fixture)
{
	FILE *in = fopen(fixture, "r");
	assert_non_null(in);
	char *buf = malloc(1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, in);
	buf[n] = '\0';
	fclose(in);
	fx_write(f, rel, buf);
	free(buf);
}

static inline void fx_symlink(fx_t *f, const char *rel, const char *target)
{
	char path[PATH_MAX], dir[PATH_MAX];
	fx_path(f, rel, path);
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	fx_mkdirs(dir);
	unlink(path);
	assert_int_equal(symlink(target, path), 0);
}

/* An executable shell script in bin/ (or anywhere under root). */
static inline void fx_exec(fx_t *f, const char *rel, const char *script)
{
	char path[PATH_MAX];
	fx_write(f, rel, script);
	chmod(fx_path(f, rel, path), 0755);
}

static inline void fx_env(fx_t *f, const char *kv)
{
	assert_true(f->nenv < 63);
	f->env[f->nenv++] = strdup(kv);
	f->env[f->nenv] = NULL;
}

static inline int fx_rm(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static inline fx_t *fx_new(void)
{
	fx_t *f = calloc(1, sizeof *f);
	snprintf(f->root, sizeof f->root, "/tmp/gpuwhy-doctor-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->proc, sizeof f->proc, "%s/proc", f->root);
	snprintf(f->sys, sizeof f->sys, "%s/sys", f->root);
	snprintf(f->dev, sizeof f->dev, "%s/dev", f->root);
	snprintf(f->fs, sizeof f->fs, "%s/fs", f->root);
	snprintf(f->bin, sizeof f->bin, "%s/bin", f->root);
	snprintf(f->kmsg, sizeof f->kmsg, "%s/kmsg", f->root);
	fx_mkdirs(f->proc);
	fx_mkdirs(f->sys);
	fx_mkdirs(f->dev);
	fx_mkdirs(f->fs);
	fx_mkdirs(f->bin);
	/* a plain host: our own PID namespace, a kernel release, no container */
	fx_write(f, "proc/self/status", "Name:\tgpuwhy\nNSpid:\t100\n");
	fx_write(f, "proc/sys/kernel/osrelease", "6.8.0-45-generic\n");
	fx_write(f, "proc/1/cgroup", "0::/init.scope\n");
	f->p.proc_root = f->proc;
	f->p.sys_root = f->sys;
	f->p.dev_root = f->dev;
	f->p.fs_root = f->fs;
	f->p.kmsg_path = f->kmsg;
	f->p.path = f->bin;
	f->p.getenv = doctor_env_from_list;
	f->p.env_arg = f->env;
	f->p.access = fx_access;
	f->p.python_timeout_ns = 20LL * 1000000000LL;
	f->p.tool_timeout_ns = 5LL * 1000000000LL;
	f->p.klog_tools = false;
	memset(fx_denied, 0, sizeof fx_denied);
	return f;
}

static inline void fx_free(fx_t *f)
{
	if (f->ctx_live)
		doctor_ctx_free(&f->c);
	doctor_report_free(&f->r);
	doctor_machine_free(&f->m);
	for (int i = 0; i < f->nenv; i++)
		free(f->env[i]);
	nftw(f->root, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
}

/* A working NVML with driver 550.54.14 / CUDA 12.4 and no GPUs yet. */
static inline void fx_nvml_ok(fx_t *f)
{
	f->m.nvml = DOCTOR_NVML_OK;
	snprintf(f->m.driver, sizeof f->m.driver, "550.54.14");
	snprintf(f->m.cuda, sizeof f->m.cuda, "12.4");
	snprintf(f->m.nvml_version, sizeof f->m.nvml_version, "12.550.54.14");
	snprintf(f->m.lib_path, sizeof f->m.lib_path,
	         "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14");
}

static inline void fx_set(doctor_gpu *g, gpu_metric_id id, double v)
{
	g->v.v[id] = v;
	g->v.ok[id] = 1;
}

/* A GPU with identity, memory and a healthy idle state. */
static inline doctor_gpu *fx_gpu(fx_t *f, const char *name, const char *uuid, const char *bus)
{
	doctor_gpu *g = doctor_machine_add_gpu(&f->m);
	snprintf(g->st.name, sizeof g->st.name, "%s", name);
	snprintf(g->st.uuid, sizeof g->st.uuid, "%s", uuid);
	snprintf(g->st.pci_bus_id, sizeof g->st.pci_bus_id, "%s", bus);
	fx_set(g, GM_MEM_TOTAL, 81559);
	fx_set(g, GM_MEM_USED, 0);
	fx_set(g, GM_MEM_FREE, 81559);
	g->procs_ok = true;
	return g;
}

/* Run one check on a fresh context; returns its (only) result. */
static inline const doctor_result *fx_run(fx_t *f, doctor_check_fn fn)
{
	if (!f->ctx_live) {
		doctor_ctx_init(&f->c, &f->p, &f->o, &f->m, &f->r);
		f->ctx_live = true;
	}
	size_t before = f->r.n;
	fn(&f->c);
	assert_int_equal(f->r.n, before + 1);
	return &f->r.v[f->r.n - 1];
}

/* Status, a substring of found, and a substring of fix (NULL: no fix expected). */
static inline void fx_expect(const doctor_result *r, doctor_status st, const char *found,
                             const char *fix)
{
	if (r->status != st || (found && !strstr(r->found, found)) ||
	    (fix && (!r->fix || !strstr(r->fix, fix))) || (!fix && st == DOCTOR_PASS && r->fix))
		print_error("%s: got %s '%s' fix '%s'; want %s '%s' fix '%s'\n", r->check,
		            doctor_status_name(r->status), r->found, r->fix ? r->fix : "(none)",
		            doctor_status_name(st), found ? found : "", fix ? fix : "(none)");
	assert_int_equal(r->status, st);
	if (found)
		assert_non_null(strstr(r->found, found));
	if (fix) {
		assert_non_null(r->fix);
		assert_non_null(strstr(r->fix, fix));
	}
	if (st == DOCTOR_PASS)
		assert_null(r->fix);
}

#endif
