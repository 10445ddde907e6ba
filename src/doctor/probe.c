/* probe.c - where the doctor reads the outside world, and helpers over it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/doctor_int.h"

static const char *real_getenv(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

void doctor_probe_default(doctor_probe *p)
{
	memset(p, 0, sizeof *p);
	p->proc_root = "/proc";
	p->sys_root = "/sys";
	p->dev_root = "/dev";
	p->fs_root = "";
	p->kmsg_path = "/dev/kmsg";
	p->path = getenv("PATH");
	if (!p->path)
		p->path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	p->getenv = real_getenv;
	p->access = access;
	p->python_timeout_ns = 10LL * 1000000000LL;
	p->tool_timeout_ns = 5LL * 1000000000LL;
	p->klog_tools = true;
}

const char *doctor_env_from_list(void *arg, const char *name)
{
	char **list = arg;
	size_t l = strlen(name);
	for (; list && *list; list++)
		if (!strncmp(*list, name, l) && (*list)[l] == '=')
			return *list + l + 1;
	return NULL;
}

const char *doctor_env(const doctor_ctx *c, const char *name)
{
	return c->p->getenv ? c->p->getenv(c->p->env_arg, name) : NULL;
}

void doctor_pathf(char *out, size_t len, const char *root, const char *fmt, ...)
{
	int n = snprintf(out, len, "%s", root ? root : "");
	if (n < 0 || (size_t)n >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

char *doctor_slurp(const char *path, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	char *buf = malloc(cap + 1);
	size_t len = 0;
	while (buf && len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

bool doctor_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

const char *doctor_bytes(uint64_t b, char *out, size_t len)
{
	const double gib = 1024.0 * 1024 * 1024;
	if ((double)b >= gib)
		snprintf(out, len, "%.1f GiB", (double)b / gib);
	else
		snprintf(out, len, "%.0f MiB", (double)b / (1024.0 * 1024));
	return out;
}

int doctor_cuda_version_int(const char *s)
{
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	char *e;
	long maj = strtol(s, &e, 10), min = 0;
	if (*e == '.')
		min = strtol(e + 1, &e, 10);
	if (maj <= 0 || maj > 99 || min < 0 || min > 99)
		return -1;
	return (int)(maj * 1000 + min * 10);
}

static bool read_hex(const char *path, unsigned long *v)
{
	char *s = doctor_slurp(path, 64);
	if (!s)
		return false;
	char *e;
	*v = strtoul(s, &e, 16);
	bool ok = e != s;
	free(s);
	return ok;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

int doctor_pci_nvidia_gpus(const doctor_probe *p, char (*bdf)[16], int max)
{
	char dir[512];
	doctor_pathf(dir, sizeof dir, p->sys_root, "/bus/pci/devices");
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		char path[1024];
		unsigned long vendor, cls;
		snprintf(path, sizeof path, "%s/%s/vendor", dir, e->d_name);
		if (!read_hex(path, &vendor) || vendor != 0x10de)
			continue;
		snprintf(path, sizeof path, "%s/%s/class", dir, e->d_name);
		/* 0x03xxxx: display controllers (VGA 0x0300, 3D 0x0302); not NVSwitch or audio. */
		if (!read_hex(path, &cls) || (cls >> 16) != 0x03)
			continue;
		snprintf(bdf[n++], 16, "%.15s", e->d_name);
	}
	closedir(d);
	qsort(bdf, (size_t)n, sizeof *bdf, cmp_str);
	return n;
}

bool doctor_kernel_module_version(const doctor_probe *p, char *out, size_t len)
{
	char path[512];
	out[0] = '\0';
	doctor_pathf(path, sizeof path, p->proc_root, "/driver/nvidia/version");
	char *s = doctor_slurp(path, 4096);
	if (s) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb ..." or
		 * "... Open Kernel Module for x86_64  550.54.14  Release Build ...":
		 * the version is the first word made of digits and dots. */
		char *line_end = strchr(s, '\n');
		if (line_end)
			*line_end = '\0';
		char *save = NULL;
		for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
			size_t k = strspn(t, "0123456789.");
			if (k == strlen(t) && strchr(t, '.') && isdigit((unsigned char)t[0])) {
				snprintf(out, len, "%s", t);
				break;
			}
		}
		free(s);
		if (out[0])
			return true;
	}
	doctor_pathf(path, sizeof path, p->sys_root, "/module/nvidia/version");
	s = doctor_slurp(path, 128);
	if (s) {
		s[strcspn(s, " \t\r\n")] = '\0';
		snprintf(out, len, "%s", s);
		free(s);
	}
	return out[0] != '\0';
}

bool doctor_driver_present(doctor_ctx *c)
{
	char v[64];
	return c->m->nvml == DOCTOR_NVML_OK || doctor_kernel_module_version(c->p, v, sizeof v);
}

typedef struct {
	unsigned long dom, bus, dev, fn;
	bool has_fn;
} bdf_t;

static bool parse_bdf(const char *s, bdf_t *b)
{
	/* Up to four hex fields: [domain:]bus:device[.function] */
	unsigned long f[3];
	int nf = 0;
	const char *p = s;
	memset(b, 0, sizeof *b);
	while (nf < 3) {
		char *e;
		f[nf++] = strtoul(p, &e, 16);
		if (e == p)
			return false;
		p = e;
		if (*p != ':')
			break;
		p++;
	}
	if (nf < 2)
		return false;
	if (nf == 3) {
		b->dom = f[0];
		b->bus = f[1];
		b->dev = f[2];
	} else {
		b->bus = f[0];
		b->dev = f[1];
	}
	if (*p == '.') {
		char *e;
		b->fn = strtoul(p + 1, &e, 16);
		b->has_fn = e != p + 1;
	}
	return true;
}

bool doctor_same_pci(const char *a, const char *b)
{
	bdf_t x, y;
	if (!a || !b || !parse_bdf(a, &x) || !parse_bdf(b, &y))
		return false;
	if (x.dom != y.dom || x.bus != y.bus || x.dev != y.dev)
		return false;
	return !x.has_fn || !y.has_fn || x.fn == y.fn;
}

const char *doctor_gpu_label(const doctor_gpu *g, char *out, size_t len)
{
	if (g->st.name[0])
		snprintf(out, len, "GPU %d (%s)", g->st.index, g->st.name);
	else
		snprintf(out, len, "GPU %d", g->st.index);
	return out;
}

void doctor_ctx_init(doctor_ctx *c, const doctor_probe *p, const doctor_opts *o,
                     const doctor_machine *m, doctor_report *r)
{
	memset(c, 0, sizeof *c);
	c->p = p;
	c->o = o;
	c->m = m;
	c->r = r;
}

void doctor_ctx_free(doctor_ctx *c)
{
	if (c->klog_done)
		doctor_klog_free(&c->klog);
	if (c->py_done)
		doctor_python_free(&c->py);
	c->klog_done = c->py_done = c->where_done = false;
}

const doctor_klog *doctor_ctx_klog(doctor_ctx *c)
{
	if (!c->klog_done) {
		doctor_klog_read(c->p, &c->klog);
		c->klog_done = true;
	}
	return &c->klog;
}

const doctor_where *doctor_ctx_where(doctor_ctx *c)
{
	if (!c->where_done) {
		doctor_where_detect(c->p, &c->where);
		c->where_done = true;
	}
	return &c->where;
}

const doctor_python *doctor_ctx_python(doctor_ctx *c)
{
	if (!c->py_done) {
		doctor_python_run(c->p, c->o, &c->py);
		c->py_done = true;
	}
	return &c->py;
}

/* Directories the dynamic linker searches for the driver's libraries, plus LD_LIBRARY_PATH. */
static const char *const lib_dirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",       "/usr/lib",
    "/lib/x86_64-linux-gnu",     "/lib/aarch64-linux-gnu",     "/lib64",           "/usr/local/lib",
    "/usr/local/nvidia/lib64",   "/usr/local/nvidia/lib",      "/usr/lib/wsl/lib",
};

static bool version_suffix(const char *file, const char *soname, char *out, size_t len)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	size_t l = strlen(soname);
	if (strncmp(base, soname, l) || base[l] != '.')
		return false;
	const char *v = base + l + 1;
	/* "550.54.14" yes, "1" (the soname link itself) no */
	if (!isdigit((unsigned char)*v) || !strchr(v, '.') || strspn(v, "0123456789.") != strlen(v))
		return false;
	snprintf(out, len, "%s", v);
	return true;
}

static void add_lib(const char *dir, const char *soname, const char *fs_root, doctor_libfile *out,
                    int *n, int max)
{
	char path[1024];
	snprintf(path, sizeof path, "%s%s/%s.1", fs_root, dir, soname);
	if (*n >= max || !doctor_exists(path))
		return;
	char *real = realpath(path, NULL);
	const char *r = real ? real : path;
	for (int k = 0; k < *n; k++) {
		if (!strcmp(out[k].real, r)) {
			free(real);
			return;
		}
	}
	doctor_libfile *f = &out[(*n)++];
	memset(f, 0, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "%s", dir);
	snprintf(f->real, sizeof f->real, "%.511s", r);
	version_suffix(r, soname, f->version, sizeof f->version);
	free(real);
}

int doctor_find_libs(const doctor_probe *p, const char *soname, doctor_libfile *out, int max)
{
	int n = 0;
	const char *root = p->fs_root ? p->fs_root : "";
	const char *ld = p->getenv ? p->getenv(p->env_arg, "LD_LIBRARY_PATH") : NULL;
	if (ld) {
		char *copy = strdup(ld), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			if (*d == '/')
				add_lib(d, soname, root, out, &n, max);
		free(copy);
	}
	for (size_t i = 0; i < sizeof lib_dirs / sizeof *lib_dirs; i++)
		add_lib(lib_dirs[i], soname, root, out, &n, max);
	return n;
}

bool doctor_lib_version(const char *path, const char *soname, char *out, size_t len)
{
	out[0] = '\0';
	return path && version_suffix(path, soname, out, len);
}

bool doctor_sysfs_bdf(const char *bus, char out[16])
{
	bdf_t b;
	if (!bus || !parse_bdf(bus, &b))
		return false;
	snprintf(out, 16, "%04lx:%02lx:%02lx.%lx", b.dom & 0xffff, b.bus & 0xff, b.dev & 0x1f,
	         b.has_fn ? b.fn & 7 : 0);
	return true;
}

int doctor_pci_chain(const doctor_probe *p, const char *bus, char (*out)[16], int max)
{
	char bdf[16], path[512];
	if (!doctor_sysfs_bdf(bus, bdf) || max < 1)
		return 0;
	doctor_pathf(path, sizeof path, p->sys_root, "/bus/pci/devices/%s", bdf);
	char *real = realpath(path, NULL);
	int n = 0;
	if (real) {
		/* /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0 */
		char *save = NULL;
		for (char *t = strtok_r(real, "/", &save); t && n < max;
		     t = strtok_r(NULL, "/", &save)) {
			bdf_t b;
			if (strlen(t) == 12 && t[4] == ':' && t[7] == ':' && t[10] == '.' &&
			    parse_bdf(t, &b))
				snprintf(out[n++], 16, "%s", t);
		}
		free(real);
	}
	if (n == 0)
		snprintf(out[n++], 16, "%s", bdf);
	return n;
}

const char *doctor_short(const char *s, size_t max, char *buf, size_t len)
{
	size_t l = strlen(s);
	if (l <= max || max < 4)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "%.*s...", (int)(max - 3), s);
	return buf;
}
