/* check_wsl.c - wsl.*: WSL2 detection, /dev/dxg, the Windows driver's libraries, no Linux driver.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/strbuf.h"

#define WSL_LIB "/usr/lib/wsl/lib"

static bool not_wsl(doctor_ctx *c, const char *check)
{
	const doctor_where *w = doctor_ctx_where(c);
	if (w->wsl == 2)
		return false;
	doctor_addf(c->r, check, DOCTOR_SKIP,
	            w->wsl == 1 ? DOCTOR_("WSL1 has no GPU support (see wsl.detect)")
	                        : DOCTOR_("not WSL"));
	return true;
}

void doctor_check_wsl_detect(doctor_ctx *c)
{
	const doctor_where *w = doctor_ctx_where(c);
	const char *distro = doctor_env(c, "WSL_DISTRO_NAME");
	if (w->wsl == 0) {
		doctor_addf(c->r, "wsl.detect", DOCTOR_SKIP, "not WSL (kernel %s)",
		            w->kernel_release[0] ? w->kernel_release : DOCTOR_("unknown"));
	} else if (w->wsl == 1) {
		doctor_result *r =
		    doctor_addf(c->r, "wsl.detect", DOCTOR_FAIL,
		                "WSL1 (kernel %s): WSL1 has no GPU support", w->kernel_release);
		doctor_fixf(
		    r,
		    "convert the distribution in Windows PowerShell: wsl --set-version %s 2 "
		    "(wsl -l -v lists them)",
		    distro ? distro : "<distro>");
	} else {
		doctor_addf(c->r, "wsl.detect", DOCTOR_PASS, "WSL2 (kernel %s%s%s)",
		            w->kernel_release, distro ? DOCTOR_(", distribution ") : "",
		            distro ? distro : "");
	}
}

void doctor_check_wsl_dxg(doctor_ctx *c)
{
	if (not_wsl(c, "wsl.dxg"))
		return;
	char path[512];
	doctor_pathf(path, sizeof path, c->p->dev_root, "/dxg");
	struct stat st;
	if (stat(path, &st) != 0) {
		doctor_result *r =
		    doctor_addf(c->r, "wsl.dxg", DOCTOR_FAIL,
		                "no %s: this WSL2 kernel offers no GPU paravirtualization", path);
		doctor_fixf(
		    r, "update WSL in Windows PowerShell (wsl --update; needs Windows 10 21H2 or "
		       "Windows 11), then wsl --shutdown");
		return;
	}
	if (c->p->access(path, R_OK | W_OK) != 0) {
		doctor_result *r = doctor_addf(c->r, "wsl.dxg", DOCTOR_FAIL,
		                               "%s not read/writable by uid %u (mode %03o)", path,
		                               (unsigned)getuid(), (unsigned)(st.st_mode & 0777));
		doctor_fixf(r,
		            "add the user to the group of %s (ls -l %s); a service user such as "
		            "ollama needs it too",
		            path, path);
		return;
	}
	doctor_addf(c->r, "wsl.dxg", DOCTOR_PASS, "%s present and read/writable", path);
}

void doctor_check_wsl_libraries(doctor_ctx *c)
{
	if (not_wsl(c, "wsl.libraries"))
		return;
	static const char *const libs[] = {"libnvidia-ml.so.1", "libcuda.so.1", "nvidia-smi"};
	gw_strbuf have = {0}, missing = {0};
	for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
		char path[512];
		doctor_pathf(path, sizeof path, c->p->fs_root, WSL_LIB "/%s", libs[i]);
		gw_strbuf *b = doctor_exists(path) ? &have : &missing;
		gw_sb_sep(b, ", ");
		gw_sb_printf(b, "%s", libs[i]);
	}
	const doctor_machine *m = c->m;
	if (strstr(gw_sb_str(&missing), "libnvidia-ml")) {
		doctor_result *r =
		    doctor_addf(c->r, "wsl.libraries", DOCTOR_FAIL,
		                "no %s/libnvidia-ml.so.1 (missing: %s): the Windows NVIDIA "
		                "driver is missing or too old for WSL",
		                WSL_LIB, gw_sb_str(&missing));
		doctor_fixf(
		    r, "install the current NVIDIA driver on Windows (not inside Linux), then wsl "
		       "--shutdown");
	} else if (m->nvml == DOCTOR_NVML_OK && !m->simulated && m->lib_path[0] &&
	           strncmp(m->lib_path, WSL_LIB "/", strlen(WSL_LIB) + 1)) {
		doctor_result *r =
		    doctor_addf(c->r, "wsl.libraries", DOCTOR_WARN,
		                "NVML was loaded from %s, not from %s", m->lib_path, WSL_LIB);
		doctor_fixf(r,
		            "remove the Linux copy (see wsl.linux_driver) and run sudo ldconfig");
	} else if (missing.len) {
		doctor_result *r =
		    doctor_addf(c->r, "wsl.libraries", DOCTOR_WARN, "%s has %s but lacks %s",
		                WSL_LIB, gw_sb_str(&have), gw_sb_str(&missing));
		doctor_fixf(r, "update the NVIDIA driver on Windows, then wsl --shutdown");
	} else {
		doctor_addf(c->r, "wsl.libraries", DOCTOR_PASS,
		            "%s has %s (from the Windows driver)", WSL_LIB, gw_sb_str(&have));
	}
	gw_sb_free(&have);
	gw_sb_free(&missing);
}

void doctor_check_wsl_linux_driver(doctor_ctx *c)
{
	if (not_wsl(c, "wsl.linux_driver"))
		return;
	gw_strbuf b = {0};
	static const char *const sonames[] = {"libnvidia-ml.so", "libcuda.so"};
	for (size_t s = 0; s < sizeof sonames / sizeof *sonames; s++) {
		doctor_libfile libs[16];
		int n = doctor_find_libs(c->p, sonames[s], libs, 16);
		for (int i = 0; i < n; i++) {
			/* The WSL copies and links into them are the Windows driver's. */
			if (!strcmp(libs[i].dir, WSL_LIB) || strstr(libs[i].real, WSL_LIB "/"))
				continue;
			gw_sb_sep(&b, ", ");
			if (libs[i].version[0])
				gw_sb_printf(&b, DOCTOR_("%s.1 in %s (version %s)"), sonames[s],
				             libs[i].dir, libs[i].version);
			else
				gw_sb_printf(&b, DOCTOR_("%s.1 in %s"), sonames[s], libs[i].dir);
		}
	}
	char mod[64];
	if (doctor_kernel_module_version(c->p, mod, sizeof mod)) {
		gw_sb_sep(&b, ", ");
		gw_sb_printf(&b, DOCTOR_("nvidia kernel module %s"), mod);
	}
	if (b.len) {
		doctor_result *r = doctor_addf(
		    c->r, "wsl.linux_driver", DOCTOR_FAIL,
		    "a Linux NVIDIA driver is installed inside WSL (%s): it shadows the "
		    "Windows driver's libraries",
		    gw_sb_str(&b));
		doctor_fixf(
		    r, "remove it (sudo apt-get remove --purge 'nvidia-driver-*' "
		       "'libnvidia-compute-*', or the .run uninstaller), keep only the CUDA "
		       "toolkit for WSL-Ubuntu (cuda-toolkit-12-x, never the cuda or cuda-drivers "
		       "meta-packages), then sudo ldconfig");
	} else {
		doctor_addf(c->r, "wsl.linux_driver", DOCTOR_PASS,
		            "no Linux NVIDIA driver inside WSL: the Windows driver is used "
		            "through %s",
		            WSL_LIB);
	}
	gw_sb_free(&b);
}
