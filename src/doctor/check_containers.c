/* check_containers.c - container.*: where we run, Docker's GPU runtime, CDI specs, injection. */
#include <stdbool.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/child.h"
#include "util/strbuf.h"

#define TOOL_OUT_CAP (256u << 10)

void doctor_check_container_detect(doctor_ctx *c)
{
	const doctor_where *w = doctor_ctx_where(c);
	if (w->container)
		doctor_addf(c->r, "container.detect", DOCTOR_PASS, "inside a %s container (%s)",
		            w->container_kind, w->container_why);
	else
		doctor_addf(c->r, "container.detect", DOCTOR_PASS,
		            "on the host (no /.dockerenv, /run/.containerenv or container cgroup)");
}

/* Any NVIDIA GPU here, usable or not? */
static bool gpu_host(doctor_ctx *c)
{
	char bdf[4][16];
	return (c->m->nvml == DOCTOR_NVML_OK && c->m->n > 0) ||
	       doctor_pci_nvidia_gpus(c->p, bdf, 4) > 0 || doctor_driver_present(c);
}

/* ---- CDI specs ---- */

typedef struct {
	char files[512]; /* spec files naming nvidia.com/gpu */
	int nfiles;
	int gpu_nodes;   /* distinct /dev/nvidiaN the specs mention */
	char driver[64]; /* driver version in the library paths of the spec */
} cdi_info;

static void scan_spec(const char *path, const char *shown, cdi_info *ci, bool *seen)
{
	char *s = doctor_slurp(path, 4u << 20);
	if (!s)
		return;
	if (!strstr(s, "nvidia.com/gpu")) {
		free(s);
		return;
	}
	size_t l = strlen(ci->files);
	snprintf(ci->files + l, sizeof ci->files - l, "%s%s", l ? ", " : "", shown);
	ci->nfiles++;
	for (const char *p = strstr(s, "/dev/nvidia"); p; p = strstr(p + 1, "/dev/nvidia")) {
		const char *d = p + 11;
		if (*d < '0' || *d > '9')
			continue;
		int minor = atoi(d);
		if (minor >= 0 && minor < GPU_MAX && !seen[minor]) {
			seen[minor] = true;
			ci->gpu_nodes++;
		}
	}
	/* nvidia-ctk writes host library paths: libnvidia-ml.so.550.54.14 names the driver
	 * (the first versioned one; libnvidia-ml.so.1 links are no version). */
	static const char *const libs[] = {"libnvidia-ml.so.", "libcuda.so."};
	for (size_t k = 0; k < 2 && !ci->driver[0]; k++) {
		for (const char *q = strstr(s, libs[k]); q && !ci->driver[0];
		     q = strstr(q + 1, libs[k])) {
			const char *v = q + strlen(libs[k]);
			size_t n = strspn(v, "0123456789.");
			while (n && v[n - 1] == '.')
				n--;
			if (n > 2 && memchr(v, '.', n))
				snprintf(ci->driver, sizeof ci->driver, "%.*s", (int)n, v);
		}
	}
	free(s);
}

static void scan_cdi(const doctor_probe *p, cdi_info *ci)
{
	static const char *const dirs[] = {"/etc/cdi", "/var/run/cdi", "/run/cdi"};
	bool seen[GPU_MAX] = {0};
	memset(ci, 0, sizeof *ci);
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		char dir[512];
		doctor_pathf(dir, sizeof dir, p->fs_root, "%s", dirs[i]);
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			const char *dot = strrchr(e->d_name, '.');
			if (!dot ||
			    (strcmp(dot, ".yaml") && strcmp(dot, ".yml") && strcmp(dot, ".json")))
				continue;
			char path[1024], shown[512];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			snprintf(shown, sizeof shown, "%s/%s", dirs[i], e->d_name);
			scan_spec(path, shown, ci, seen);
		}
		closedir(d);
	}
}

/* ---- container.docker ---- */

/* The words after "Runtimes:" in `docker info`. */
static bool runtimes(const char *out, char *rt, size_t len)
{
	const char *p = strstr(out, "Runtimes:");
	if (!p)
		return false;
	p += 9;
	while (*p == ' ')
		p++;
	snprintf(rt, len, "%.*s", (int)strcspn(p, "\n"), p);
	return true;
}

static bool has_word(const char *list, const char *w)
{
	size_t l = strlen(w);
	for (const char *p = strstr(list, w); p; p = strstr(p + 1, w))
		if ((p == list || p[-1] == ' ') && (p[l] == '\0' || p[l] == ' '))
			return true;
	return false;
}

void doctor_check_container_docker(doctor_ctx *c)
{
	if (doctor_ctx_where(c)->container) {
		doctor_addf(c->r, "container.docker", DOCTOR_SKIP,
		            "inside a container: Docker's GPU setup is the host's (see "
		            "container.injection)");
		return;
	}
	char *docker = gw_which("docker", c->p->path);
	if (!docker) {
		doctor_addf(c->r, "container.docker", DOCTOR_SKIP, "docker not installed");
		return;
	}
	char *argv[] = {"docker", "info", NULL};
	gw_child_spec spec = {.path = docker, .argv = argv};
	gw_child_result res;
	gw_child_run(&spec, c->p->tool_timeout_ns, TOOL_OUT_CAP, &res);
	free(docker);
	char rt[256] = "";
	bool have_rt = res.out && runtimes(res.out, rt, sizeof rt);
	if (!have_rt) {
		const char *why =
		    res.timed_out ? DOCTOR_("did not answer in time")
		    : strstr(res.err, "permission denied") || strstr(res.out, "permission denied")
		        ? DOCTOR_("permission denied on the Docker socket")
		    : strstr(res.err, "Cannot connect") || strstr(res.out, "Cannot connect")
		        ? DOCTOR_("cannot connect to the Docker daemon")
		        : DOCTOR_("gave no runtime list");
		doctor_result *r =
		    doctor_addf(c->r, "container.docker", DOCTOR_WARN, "docker info %s", why);
		if (strstr(why, "permission"))
			doctor_fixf(
			    r, "sudo usermod -aG docker $USER (log in again), or run gpuwhy doctor "
			       "with sudo");
		else
			doctor_fixf(r,
			            "start the daemon (sudo systemctl start docker) and check sudo "
			            "systemctl status docker");
		gw_child_free(&res);
		return;
	}
	bool cdi_dirs = strstr(res.out, "CDI spec directories") != NULL;
	gw_child_free(&res);
	cdi_info ci;
	scan_cdi(c->p, &ci);
	if (has_word(rt, "nvidia")) {
		doctor_addf(
		    c->r, "container.docker", DOCTOR_PASS,
		    "docker has the nvidia runtime (runtimes: %s): docker run --gpus all works",
		    rt);
	} else if (ci.nfiles && cdi_dirs) {
		doctor_addf(c->r, "container.docker", DOCTOR_PASS,
		            "docker has no nvidia runtime but reads CDI specs (%s): use docker run "
		            "--device "
		            "nvidia.com/gpu=all",
		            ci.files);
	} else if (!gpu_host(c)) {
		doctor_addf(
		    c->r, "container.docker", DOCTOR_SKIP,
		    "docker has no nvidia runtime (runtimes: %s), and there is no NVIDIA GPU "
		    "here to "
		    "give it",
		    rt);
	} else {
		doctor_result *r =
		    doctor_addf(c->r, "container.docker", DOCTOR_FAIL,
		                "docker has no nvidia runtime (runtimes: %s) and no CDI spec for "
		                "nvidia.com/gpu: docker run --gpus all fails (\"could not select "
		                "device driver\" or \"failed to discover gpu vendor from cdi\")",
		                rt);
		doctor_fixf(
		    r, "install the NVIDIA Container Toolkit, then sudo nvidia-ctk runtime "
		       "configure --runtime=docker && sudo systemctl restart docker; check with "
		       "docker info | grep -i runtime");
	}
}

/* ---- container.cdi ---- */

void doctor_check_container_cdi(doctor_ctx *c)
{
	if (doctor_ctx_where(c)->container) {
		doctor_addf(c->r, "container.cdi", DOCTOR_SKIP,
		            "inside a container: CDI specs live on the host");
		return;
	}
	cdi_info ci;
	scan_cdi(c->p, &ci);
	char *ctk = gw_which("nvidia-ctk", c->p->path);
	gw_strbuf names = {0};
	if (ctk) {
		char *argv[] = {"nvidia-ctk", "cdi", "list", NULL};
		gw_child_spec spec = {.path = ctk, .argv = argv};
		gw_child_result res;
		gw_child_run(&spec, c->p->tool_timeout_ns, TOOL_OUT_CAP, &res);
		free(ctk);
		if (!gw_child_ok(&res)) {
			char why[256];
			const char *e = res.err_len ? res.err : res.out;
			snprintf(why, sizeof why, "%.*s", (int)strcspn(e, "\n"), e);
			doctor_result *r = doctor_addf(
			    c->r, "container.cdi", DOCTOR_FAIL, "nvidia-ctk cdi list %s%s%s",
			    res.timed_out ? DOCTOR_("did not answer in time") : DOCTOR_("failed"),
			    why[0] ? ": " : "", why);
			doctor_fixf(r, "regenerate the spec: sudo nvidia-ctk cdi generate "
			               "--output=/etc/cdi/nvidia.yaml");
			gw_child_free(&res);
			return;
		}
		/* stdout: one "nvidia.com/gpu=0" per line (the "Found N CDI devices" note is on
		 * stderr) */
		for (const char *p = strstr(res.out, "nvidia.com/gpu="); p;
		     p = strstr(p + 1, "nvidia.com/gpu=")) {
			gw_sb_sep(&names, ",");
			gw_sb_printf(&names, "%.*s", (int)strcspn(p + 15, " \t\r\n"), p + 15);
		}
		gw_child_free(&res);
	}
	if (!ci.nfiles && !names.len) {
		if (!gpu_host(c)) {
			doctor_addf(c->r, "container.cdi", DOCTOR_SKIP,
			            "no CDI spec, and no NVIDIA GPU here");
		} else {
			doctor_result *r = doctor_addf(
			    c->r, "container.cdi", DOCTOR_WARN,
			    "no CDI spec for nvidia.com/gpu in /etc/cdi or /var/run/cdi: "
			    "Podman, containerd/CRI-O with CDI and docker run --device "
			    "nvidia.com/gpu=all cannot inject GPUs, and Docker with CDI "
			    "enabled reports \"failed to discover gpu vendor from cdi\"");
			doctor_fixf(
			    r,
			    "%ssudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml, then "
			    "nvidia-ctk cdi list",
			    ctk ? "" : DOCTOR_("install the NVIDIA Container Toolkit, then "));
		}
		gw_sb_free(&names);
		return;
	}
	const doctor_machine *m = c->m;
	char mod[64] = "";
	const char *drv = m->nvml == DOCTOR_NVML_OK && !m->simulated && m->driver[0] ? m->driver
	                  : doctor_kernel_module_version(c->p, mod, sizeof mod)      ? mod
	                                                                             : "";
	gw_strbuf found = {0};
	gw_sb_printf(&found, DOCTOR_("CDI spec %s"),
	             ci.nfiles ? ci.files : DOCTOR_("(from nvidia-ctk)"));
	if (names.len)
		gw_sb_printf(&found, ": nvidia.com/gpu=%s", gw_sb_str(&names));
	if (ci.driver[0])
		gw_sb_printf(&found, DOCTOR_(" (generated for driver %s)"), ci.driver);
	doctor_status st = DOCTOR_PASS;
	if (ci.driver[0] && drv[0] && strcmp(ci.driver, drv)) {
		gw_sb_printf(&found,
		             DOCTOR_("; the driver is now %s: containers get stale library paths"),
		             drv);
		st = DOCTOR_WARN;
	}
	if (ci.nfiles && m->nvml == DOCTOR_NVML_OK && !m->simulated && ci.gpu_nodes != m->n) {
		gw_sb_printf(&found, DOCTOR_("; the spec names %d /dev/nvidiaN, NVML sees %d GPUs"),
		             ci.gpu_nodes, m->n);
		st = DOCTOR_WARN;
	}
	doctor_result *r = doctor_addf(c->r, "container.cdi", st, "%s", gw_sb_str(&found));
	if (st != DOCTOR_PASS)
		doctor_fixf(
		    r, "regenerate it: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml "
		       "(toolkit >= 1.17 also has the nvidia-cdi-refresh service for driver "
		       "upgrades)");
	gw_sb_free(&found);
	gw_sb_free(&names);
}

/* ---- container.injection ---- */

static int count_gpu_nodes(const char *dev_root)
{
	DIR *d = opendir(dev_root);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *s = e->d_name;
		n += !strncmp(s, "nvidia", 6) && s[6] &&
		     strspn(s + 6, "0123456789") == strlen(s + 6);
	}
	closedir(d);
	return n;
}

void doctor_check_container_injection(doctor_ctx *c)
{
	const doctor_where *w = doctor_ctx_where(c);
	if (!w->container) {
		doctor_addf(c->r, "container.injection", DOCTOR_SKIP, "not in a container");
		return;
	}
	const doctor_machine *m = c->m;
	if (m->simulated) {
		doctor_addf(c->r, "container.injection", DOCTOR_PASS,
		            "simulated GPU: NVML comes from the simulator, no device nodes needed");
		return;
	}
	char path[512];
	doctor_pathf(path, sizeof path, c->p->dev_root, "/nvidiactl");
	int nodes = doctor_exists(path) ? count_gpu_nodes(c->p->dev_root) : 0;
	bool libs = m->nvml != DOCTOR_NVML_NO_LIBRARY;
	const char *nvd = doctor_env(c, "NVIDIA_VISIBLE_DEVICES");
	const char *caps = doctor_env(c, "NVIDIA_DRIVER_CAPABILITIES");
	char env[256];
	snprintf(env, sizeof env, "NVIDIA_VISIBLE_DEVICES=%s, NVIDIA_DRIVER_CAPABILITIES=%s",
	         nvd ? nvd : DOCTOR_("(unset)"), caps ? caps : DOCTOR_("(unset)"));
	char bdf[4][16];
	if (!nodes && !libs && doctor_pci_nvidia_gpus(c->p, bdf, 4) == 0) {
		/* sysfs is not namespaced: an empty bus here is the host's bus */
		doctor_addf(
		    c->r, "container.injection", DOCTOR_SKIP,
		    "nothing injected, and the host shows no NVIDIA GPU on its PCI bus (%s)", env);
		return;
	}
	if (!nodes && !libs) {
		doctor_result *r =
		    doctor_addf(c->r, "container.injection", DOCTOR_FAIL,
		                "no NVIDIA device nodes and no driver libraries were injected into "
		                "this %s container (%s)",
		                w->container_kind, env);
		doctor_fixf(
		    r, "start it with GPUs: docker run --gpus all (host needs the NVIDIA Container "
		       "Toolkit), podman run --device nvidia.com/gpu=all, or a nvidia.com/gpu "
		       "resource request in Kubernetes");
		return;
	}
	if (nodes && !libs) {
		doctor_result *r = doctor_addf(
		    c->r, "container.injection", DOCTOR_FAIL,
		    DOCTOR_P("%d GPU device node but no libnvidia-ml.so.1 (%s)",
		             "%d GPU device nodes but no libnvidia-ml.so.1 (%s)", nodes),
		    nodes, env);
		doctor_fixf(r, "add the utility and compute capabilities: -e "
		               "NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all)");
		return;
	}
	if (!nodes && libs) {
		doctor_result *r =
		    doctor_addf(c->r, "container.injection", DOCTOR_FAIL,
		                "driver libraries present but no /dev/nvidia* nodes (%s)", env);
		doctor_fixf(
		    r, "do not install an NVIDIA driver into the image; start the container with "
		       "--gpus all so nodes and libraries come from the host");
		return;
	}
	if (caps && !strstr(caps, "compute") && !strstr(caps, "all")) {
		doctor_result *r = doctor_addf(
		    c->r, "container.injection", DOCTOR_WARN,
		    DOCTOR_P("%d GPU device node and NVML injected, but %s lacks compute: "
		             "libcuda.so is not injected, so CUDA programs find no GPU",
		             "%d GPU device nodes and NVML injected, but %s lacks compute: "
		             "libcuda.so is not injected, so CUDA programs find no GPU",
		             nodes),
		    nodes, env);
		doctor_fixf(r, "-e NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all)");
		return;
	}
	doctor_addf(c->r, "container.injection", DOCTOR_PASS,
	            DOCTOR_P("%d GPU device node and driver libraries injected (%s)",
	                     "%d GPU device nodes and driver libraries injected (%s)", nodes),
	            nodes, env);
}

/* ---- container.pid_namespace ---- */

void doctor_check_container_pid_namespace(doctor_ctx *c)
{
	const doctor_where *w = doctor_ctx_where(c);
	if (!w->pidns_known) {
		doctor_addf(
		    c->r, "container.pid_namespace", DOCTOR_SKIP,
		    "%s/self/status has no NSpid line (kernel before 4.1, or /proc not mounted)",
		    c->p->proc_root);
		return;
	}
	if (w->pidns_nested) {
		doctor_result *r =
		    doctor_addf(c->r, "container.pid_namespace", DOCTOR_WARN,
		                "nested PID namespace: NVML reports host PIDs, so GPU processes "
		                "cannot be matched to /proc here (owners and commands show as "
		                "unknown; gone and hidden processes look alike)");
		doctor_fixf(
		    r, "docker run --pid=host (Kubernetes: hostPID: true) for per-process views, "
		       "or run gpuwhy on the host");
		return;
	}
	doctor_addf(c->r, "container.pid_namespace", DOCTOR_PASS,
	            "the host's PID namespace: GPU process IDs match /proc");
}
