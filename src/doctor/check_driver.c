/* check_driver.c - driver.*: NVML loads, versions, CUDA support, mismatch, /dev nodes, persistence.
 */
#include <stdbool.h>
#include <stdio.h>
#include <dirent.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/strbuf.h"

/* Minimum Linux driver of each CUDA toolkit (CUDA release notes, x86_64). */
static const struct {
	int cuda;
	const char *driver;
} cuda_drivers[] = {
    {11040, "470.42.01"}, {11050, "495.29.05"}, {11060, "510.39.01"}, {11070, "515.43.04"},
    {11080, "520.61.05"}, {12000, "525.60.13"}, {12010, "530.30.02"}, {12020, "535.54.03"},
    {12030, "545.23.06"}, {12040, "550.54.14"}, {12050, "555.42.02"}, {12060, "560.28.03"},
    {12080, "570.26"},    {12090, "575.51.03"},
};

/* The minimum driver for full support of CUDA cuda (12040 = 12.4), NULL when older than the table.
 */
const char *doctor_driver_for_cuda(int cuda)
{
	const char *best = NULL;
	for (size_t i = 0; i < sizeof cuda_drivers / sizeof *cuda_drivers; i++)
		if (cuda_drivers[i].cuda <= cuda)
			best = cuda_drivers[i].driver;
		else
			break;
	/* A version newer than the table needs at least the newest driver listed. */
	if (cuda_drivers[sizeof cuda_drivers / sizeof *cuda_drivers - 1].cuda < cuda)
		return cuda_drivers[sizeof cuda_drivers / sizeof *cuda_drivers - 1].driver;
	return best;
}

/* ---- driver.nvml ---- */

static void nvml_fix(doctor_ctx *c, doctor_result *res, bool module, int npci)
{
	const doctor_where *w = doctor_ctx_where(c);
	switch (c->m->nvml) {
	case DOCTOR_NVML_MISMATCH:
		doctor_fixf(res,
		            "reboot (the old kernel module still runs after a driver upgrade), or "
		            "reload it: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && "
		            "sudo modprobe nvidia");
		return;
	case DOCTOR_NVML_NO_PERMISSION:
		doctor_fixf(
		    res, "add your user to the group that owns /dev/nvidia* (ls -l /dev/nvidia*; "
		         "often video or render): sudo usermod -aG GROUP $USER, then log in again");
		return;
	case DOCTOR_NVML_NOT_LOADED:
		doctor_fixf(res,
		            "sudo modprobe nvidia; if that fails, dmesg | grep -i nvidia shows why "
		            "(Secure Boot blocking an unsigned module, a module not built for the "
		            "running kernel: reinstall the driver or its DKMS package)");
		return;
	case DOCTOR_NVML_OTHER:
		doctor_fixf(res,
		            "run nvidia-smi for the driver's own message, and dmesg | grep -i -e "
		            "nvrm -e xid for kernel errors");
		return;
	default:
		break;
	}
	if (w->wsl)
		doctor_fixf(res,
		            "install or update the NVIDIA driver on Windows (it provides "
		            "/usr/lib/wsl/lib/libnvidia-ml.so.1), never a Linux driver inside WSL; "
		            "then wsl --shutdown and reopen the distribution");
	else if (npci == 0)
		doctor_fixf(
		    res,
		    "%s shows no NVIDIA GPU on its PCI bus: run on a machine with one (or pass "
		    "the GPU through to this VM); to try gpuwhy without a GPU: gpuwhy --sim "
		    "h100x1 doctor",
		    w->container ? DOCTOR_("the host of this container") : DOCTOR_("this machine"));
	else if (w->container)
		doctor_fixf(res,
		            "start the container with GPU access: docker run --gpus all (NVIDIA "
		            "Container Toolkit on the host), --device nvidia.com/gpu=all (CDI), or "
		            "a nvidia.com/gpu resource request in Kubernetes");
	else if (module)
		doctor_fixf(res,
		            "the kernel module is loaded but its user-space libraries are missing: "
		            "install the driver's library package of the same version "
		            "(libnvidia-compute-XXX / nvidia-driver-libs)");
	else
		doctor_fixf(res, "install the NVIDIA driver (sudo ubuntu-drivers install, or your "
		                 "distribution's nvidia-driver package) and reboot");
}

void doctor_check_driver_nvml(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml == DOCTOR_NVML_OK) {
		doctor_addf(c->r, "driver.nvml", DOCTOR_PASS, "NVML %s loaded from %s%s",
		            m->nvml_version[0] ? m->nvml_version : DOCTOR_("(version unknown)"),
		            m->lib_path[0] ? m->lib_path : "libnvidia-ml.so.1",
		            m->simulated ? DOCTOR_(" (simulated GPU)") : "");
		return;
	}
	char mod[64];
	bool module = doctor_kernel_module_version(c->p, mod, sizeof mod);
	char bdf[GPU_MAX][16];
	int npci = doctor_pci_nvidia_gpus(c->p, bdf, GPU_MAX);
	gw_strbuf b = {0};
	gw_sb_printf(&b, "%s", m->error[0] ? m->error : DOCTOR_("NVML could not be loaded"));
	if (module)
		gw_sb_printf(&b, DOCTOR_("; nvidia kernel module %s loaded"), mod);
	else
		gw_sb_printf(&b, DOCTOR_("; no nvidia kernel module loaded"));
	if (npci > 0) {
		gw_sb_printf(&b, "%s",
		             DOCTOR_P("; NVIDIA GPU on the PCI bus:",
		                      "; NVIDIA GPUs on the PCI bus:", npci));
		for (int i = 0; i < npci; i++)
			gw_sb_printf(&b, " %s", bdf[i]);
	} else if (npci == 0) {
		gw_sb_printf(&b, DOCTOR_("; no NVIDIA GPU on the PCI bus"));
	}
	doctor_result *res = doctor_addf(c->r, "driver.nvml", DOCTOR_FAIL, "%s", gw_sb_str(&b));
	gw_sb_free(&b);
	nvml_fix(c, res, module, npci);
}

/* ---- driver.version ---- */

void doctor_check_driver_version(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	char mod[64];
	bool module = doctor_kernel_module_version(c->p, mod, sizeof mod);
	if (m->nvml == DOCTOR_NVML_OK) {
		if (!m->driver[0]) {
			doctor_result *r = doctor_addf(c->r, "driver.version", DOCTOR_WARN,
			                               "NVML did not report the driver version");
			doctor_fixf(
			    r, "update the NVIDIA driver; nvidia-smi shows the version it runs");
			return;
		}
		if (module && strcmp(mod, m->driver))
			doctor_addf(c->r, "driver.version", DOCTOR_PASS,
			            "driver %s (kernel module %s)", m->driver, mod);
		else
			doctor_addf(c->r, "driver.version", DOCTOR_PASS, "driver %s%s", m->driver,
			            module ? DOCTOR_(" (kernel module loaded)") : "");
		return;
	}
	if (module) {
		doctor_addf(c->r, "driver.version", DOCTOR_PASS,
		            "kernel module %s (its libraries are not usable: see driver.nvml)",
		            mod);
		return;
	}
	doctor_addf(c->r, "driver.version", DOCTOR_SKIP,
	            "no NVIDIA driver installed (see driver.nvml)");
}

/* ---- driver.cuda ---- */

void doctor_check_driver_cuda(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml != DOCTOR_NVML_OK) {
		doctor_addf(c->r, "driver.cuda", DOCTOR_SKIP,
		            "needs a working NVML (see driver.nvml)");
		return;
	}
	int v = doctor_cuda_version_int(m->cuda);
	if (v < 0) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.cuda", DOCTOR_WARN,
		                "the driver did not report the CUDA version it supports");
		doctor_fixf(r,
		            "update the NVIDIA driver (NVML reports it since CUDA 10.1 drivers)");
		return;
	}
	if (v < 11080) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.cuda", DOCTOR_WARN,
		                "driver %s supports CUDA up to %s: current PyTorch, JAX and "
		                "TensorFlow GPU builds need CUDA 11.8 or 12.x",
		                m->driver, m->cuda);
		doctor_fixf(r, "upgrade the driver: >= %s for CUDA 11.8, >= %s for CUDA 12.x",
		            doctor_driver_for_cuda(11080), doctor_driver_for_cuda(12000));
		return;
	}
	doctor_addf(
	    c->r, "driver.cuda", DOCTOR_PASS,
	    "driver %s supports CUDA up to %s (frameworks built for CUDA <= %s run; newer %d.x "
	    "builds only through minor-version compatibility)",
	    m->driver, m->cuda, m->cuda, v / 1000);
}

/* ---- driver.mismatch ---- */

void doctor_check_driver_mismatch(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	char mod[64];
	bool module = doctor_kernel_module_version(c->p, mod, sizeof mod);
	doctor_libfile libs[16];
	int n = doctor_find_libs(c->p, "libnvidia-ml.so", libs, 16);
	char loaded[64] = "";
	if (m->nvml == DOCTOR_NVML_OK && !m->simulated)
		doctor_lib_version(m->lib_path, "libnvidia-ml.so", loaded, sizeof loaded);
	gw_strbuf libs_txt = {0};
	for (int i = 0; i < n; i++) {
		gw_sb_sep(&libs_txt, ", ");
		gw_sb_printf(&libs_txt, "%s (%s)",
		             libs[i].version[0] ? libs[i].version : DOCTOR_("unversioned"),
		             libs[i].dir);
	}
	if (m->nvml == DOCTOR_NVML_MISMATCH) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.mismatch", DOCTOR_FAIL,
		                "NVML: driver/library version mismatch; kernel module %s, "
		                "libnvidia-ml %s",
		                module ? mod : DOCTOR_("unknown"),
		                libs_txt.len ? gw_sb_str(&libs_txt) : DOCTOR_("not found"));
		doctor_fixf(r,
		            "reboot after the driver upgrade, or reload the module: sudo rmmod "
		            "nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia");
		gw_sb_free(&libs_txt);
		return;
	}
	if (!module) {
		const doctor_where *w = doctor_ctx_where(c);
		doctor_addf(c->r, "driver.mismatch", DOCTOR_SKIP, "%s",
		            w->wsl ? DOCTOR_("WSL: the kernel side of the driver lives in Windows")
		            : m->simulated
		                ? DOCTOR_("simulated GPU: no kernel module to compare with")
		                : DOCTOR_("no nvidia kernel module loaded: nothing to compare"));
		gw_sb_free(&libs_txt);
		return;
	}
	if (loaded[0] && strcmp(loaded, mod)) {
		doctor_result *r = doctor_addf(c->r, "driver.mismatch", DOCTOR_FAIL,
		                               "loaded %s is version %s, the kernel module is %s",
		                               m->lib_path, loaded, mod);
		doctor_fixf(r, "reboot after the driver upgrade, or remove the stale library");
		gw_sb_free(&libs_txt);
		return;
	}
	gw_strbuf stale = {0};
	for (int i = 0; i < n; i++) {
		if (libs[i].version[0] && strcmp(libs[i].version, mod)) {
			gw_sb_sep(&stale, ", ");
			gw_sb_printf(&stale, DOCTOR_("%s in %s"), libs[i].version, libs[i].dir);
		}
	}
	if (stale.len) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.mismatch", DOCTOR_WARN,
		                "kernel module %s, but libnvidia-ml %s differs: a program whose "
		                "library path finds it first fails with \"Driver/library "
		                "version mismatch\"",
		                mod, gw_sb_str(&stale));
		doctor_fixf(r,
		            "remove the stale copy (left by an older driver or a .run installer; "
		            "dpkg -S or rpm -qf names its package), drop it from LD_LIBRARY_PATH, "
		            "then sudo ldconfig");
	} else if (n == 0) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.mismatch", DOCTOR_WARN,
		                "kernel module %s loaded, but no libnvidia-ml.so.1 in the library "
		                "directories",
		                mod);
		doctor_fixf(r, "install the driver's user-space libraries of version %s", mod);
	} else {
		doctor_addf(c->r, "driver.mismatch", DOCTOR_PASS,
		            "kernel module %s matches libnvidia-ml %s", mod, gw_sb_str(&libs_txt));
	}
	gw_sb_free(&stale);
	gw_sb_free(&libs_txt);
}

/* ---- driver.devices ---- */

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Minor numbers of /dev/nvidiaN, sorted. */
static int gpu_nodes(const char *dev_root, int *minor, int max)
{
	DIR *d = opendir(dev_root);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		const char *s = e->d_name;
		if (strncmp(s, "nvidia", 6) || !s[6] ||
		    strspn(s + 6, "0123456789") != strlen(s + 6))
			continue;
		minor[n++] = atoi(s + 6);
	}
	closedir(d);
	qsort(minor, (size_t)n, sizeof *minor, cmp_int);
	return n;
}

/* "" when path is there and read/writable; else why not, and the owning group. */
static bool node_usable(const doctor_probe *p, const char *path, char *why, size_t len, char *group,
                        size_t glen)
{
	struct stat st;
	group[0] = '\0';
	if (stat(path, &st) != 0) {
		snprintf(why, len, DOCTOR_("%s missing"), path);
		return false;
	}
	if (p->access(path, R_OK | W_OK) == 0)
		return true;
	struct group gr, *res = NULL;
	char buf[1024];
	if (getgrgid_r(st.st_gid, &gr, buf, sizeof buf, &res) == 0 && res)
		snprintf(group, glen, "%s", gr.gr_name);
	else
		snprintf(group, glen, "%u", (unsigned)st.st_gid);
	snprintf(why, len, DOCTOR_("%s not read/writable by uid %u (group %s, mode %03o)"), path,
	         (unsigned)getuid(), group, (unsigned)(st.st_mode & 0777));
	return false;
}

void doctor_check_driver_devices(doctor_ctx *c)
{
	const doctor_where *w = doctor_ctx_where(c);
	if (w->wsl) {
		doctor_addf(c->r, "driver.devices", DOCTOR_SKIP,
		            "WSL uses /dev/dxg instead of /dev/nvidia* (see wsl.dxg)");
		return;
	}
	if (c->m->simulated) {
		doctor_addf(c->r, "driver.devices", DOCTOR_SKIP,
		            "simulated GPU: no device nodes are used");
		return;
	}
	if (!doctor_driver_present(c)) {
		doctor_addf(c->r, "driver.devices", DOCTOR_SKIP,
		            "no NVIDIA driver, so no /dev/nvidia* expected (see driver.nvml)");
		return;
	}
	const char *dev = c->p->dev_root;
	char path[512], why[512], group[64], bad_group[64] = "";
	gw_strbuf fails = {0};
	int minors[GPU_MAX];
	int nn = gpu_nodes(dev, minors, GPU_MAX);
	doctor_pathf(path, sizeof path, dev, "/nvidiactl");
	if (!node_usable(c->p, path, why, sizeof why, group, sizeof group)) {
		gw_sb_printf(&fails, "%s", why);
		if (group[0])
			snprintf(bad_group, sizeof bad_group, "%s", group);
	}
	if (nn == 0) {
		gw_sb_sep(&fails, "; ");
		gw_sb_printf(&fails, DOCTOR_("no %s/nvidia0..N nodes"), dev);
	}
	for (int i = 0; i < nn; i++) {
		doctor_pathf(path, sizeof path, dev, "/nvidia%d", minors[i]);
		if (!node_usable(c->p, path, why, sizeof why, group, sizeof group)) {
			gw_sb_sep(&fails, "; ");
			gw_sb_printf(&fails, "%s", why);
			if (group[0])
				snprintf(bad_group, sizeof bad_group, "%s", group);
		}
	}
	if (fails.len) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.devices", DOCTOR_FAIL, "%s", gw_sb_str(&fails));
		if (bad_group[0])
			doctor_fixf(r,
			            "sudo usermod -aG %s $USER, then log in again (or fix the udev "
			            "rule that sets the mode)",
			            bad_group);
		else if (w->container)
			doctor_fixf(r, "start the container with --gpus all (or CDI --device "
			               "nvidia.com/gpu=all) so the device nodes are injected");
		else
			doctor_fixf(
			    r, "create them: sudo nvidia-modprobe -c 0 -u (or reload the driver: "
			       "sudo modprobe nvidia)");
		gw_sb_free(&fails);
		return;
	}
	gw_sb_free(&fails);
	gw_strbuf ok = {0};
	gw_sb_printf(&ok, "%s/nvidiactl, ", dev);
	for (int i = 0; i < nn; i++)
		gw_sb_printf(&ok, "%snvidia%d", i ? "," : "", minors[i]);
	doctor_pathf(path, sizeof path, dev, "/nvidia-uvm");
	bool uvm = node_usable(c->p, path, why, sizeof why, group, sizeof group);
	int want = c->m->nvml == DOCTOR_NVML_OK ? c->m->n : 0;
	if (!uvm) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.devices", DOCTOR_WARN,
		                "%s usable, but %s: CUDA needs it (on a host it appears on the "
		                "first CUDA call, through nvidia-modprobe)",
		                gw_sb_str(&ok), why);
		if (w->container)
			doctor_fixf(
			    r, "start the container with --gpus all (it injects nvidia-uvm too)");
		else
			doctor_fixf(r,
			            "sudo nvidia-modprobe -u -c 0 (or sudo modprobe nvidia-uvm)");
	} else if (nn < want) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.devices", DOCTOR_WARN,
		                DOCTOR_P("%d /dev/nvidiaN node for %d GPUs (%s)",
		                         "%d /dev/nvidiaN nodes for %d GPUs (%s)", nn),
		                nn, want, gw_sb_str(&ok));
		doctor_fixf(
		    r, "sudo nvidia-modprobe -c N for each missing minor number, or reload the "
		       "driver");
	} else {
		doctor_addf(c->r, "driver.devices", DOCTOR_PASS,
		            "%s, nvidia-uvm present and read/writable", gw_sb_str(&ok));
	}
	gw_sb_free(&ok);
}

/* ---- driver.persistence ---- */

void doctor_check_driver_persistence(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml != DOCTOR_NVML_OK || m->n == 0) {
		doctor_addf(c->r, "driver.persistence", DOCTOR_SKIP,
		            "no GPUs to ask (see driver.nvml)");
		return;
	}
	gw_strbuf off = {0};
	int known = 0, on = 0;
	for (int i = 0; i < m->n; i++) {
		double v;
		if (!doctor_gpu_selected(m, i) || !doctor_val(&m->gpu[i], GM_PERSISTENCE, &v))
			continue;
		known++;
		if (v >= 1) {
			on++;
		} else {
			gw_sb_sep(&off, ", ");
			gw_sb_printf(&off, "%d", m->gpu[i].st.index);
		}
	}
	if (!known) {
		doctor_addf(c->r, "driver.persistence", DOCTOR_SKIP,
		            "persistence mode not reported (Windows and WSL drivers have none)");
	} else if (off.len) {
		doctor_result *r =
		    doctor_addf(c->r, "driver.persistence", DOCTOR_WARN,
		                "persistence mode off on GPU %s: every NVML or CUDA client "
		                "re-initialises the GPU (seconds of first-call latency, slow "
		                "nvidia-smi and monitors)",
		                gw_sb_str(&off));
		doctor_fixf(
		    r, "sudo systemctl enable --now nvidia-persistenced (or sudo nvidia-smi -pm 1, "
		       "which lasts until reboot)");
	} else {
		doctor_addf(c->r, "driver.persistence", DOCTOR_PASS,
		            DOCTOR_P("persistence mode on for the GPU",
		                     "persistence mode on for all %d GPUs", on),
		            on);
	}
	gw_sb_free(&off);
}
