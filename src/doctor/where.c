/* where.c - what kind of place we run in: host, container (which), WSL1/2, nested PID namespace. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor/doctor_int.h"
#include "host/host_pidbrief.h"

static const char *penv(const doctor_probe *p, const char *name)
{
	return p->getenv ? p->getenv(p->env_arg, name) : NULL;
}

static void set_container(doctor_where *w, const char *kind, const char *why)
{
	if (w->container)
		return;
	w->container = true;
	snprintf(w->container_kind, sizeof w->container_kind, "%s", kind);
	snprintf(w->container_why, sizeof w->container_why, "%s", why);
}

/* The cgroup path of PID 1 names the runtime that started it. */
static void container_from_cgroup(const doctor_probe *p, doctor_where *w)
{
	char path[512];
	doctor_pathf(path, sizeof path, p->proc_root, "/1/cgroup");
	char *s = doctor_slurp(path, 65536);
	if (!s)
		return;
	static const struct {
		const char *needle, *kind;
	} t[] = {
	    {"kubepods", "Kubernetes"},   {"libpod", "Podman"}, {"docker", "Docker"},
	    {"containerd", "containerd"}, {"/lxc", "LXC"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		if (strstr(s, t[i].needle)) {
			char why[160];
			snprintf(why, sizeof why, DOCTOR_("%s/1/cgroup mentions %s"), p->proc_root,
			         t[i].needle);
			set_container(w, t[i].kind, why);
			break;
		}
	}
	free(s);
}

static void detect_container(const doctor_probe *p, doctor_where *w)
{
	char path[512];
	doctor_pathf(path, sizeof path, p->fs_root, "/.dockerenv");
	if (doctor_exists(path))
		set_container(w, "Docker", DOCTOR_("/.dockerenv exists"));
	doctor_pathf(path, sizeof path, p->fs_root, "/run/.containerenv");
	if (doctor_exists(path))
		set_container(w, "Podman", DOCTOR_("/run/.containerenv exists"));
	if (penv(p, "KUBERNETES_SERVICE_HOST"))
		set_container(w, "Kubernetes", DOCTOR_("KUBERNETES_SERVICE_HOST is set"));
	const char *ce = penv(p, "container");
	if (ce && *ce) {
		char why[160];
		snprintf(why, sizeof why, DOCTOR_("container=%s is set"), ce);
		set_container(w, ce, why);
	}
	container_from_cgroup(p, w);
}

static void detect_wsl(const doctor_probe *p, doctor_where *w)
{
	char path[512];
	doctor_pathf(path, sizeof path, p->proc_root, "/sys/kernel/osrelease");
	char *s = doctor_slurp(path, 256);
	if (s) {
		s[strcspn(s, "\r\n")] = '\0';
		snprintf(w->kernel_release, sizeof w->kernel_release, "%s", s);
		free(s);
	}
	const char *r = w->kernel_release;
	if (strcasestr(r, "microsoft"))
		/* WSL2 kernels: "5.15.153.1-microsoft-standard-WSL2"; WSL1: "4.4.0-19041-Microsoft"
		 */
		w->wsl = (strstr(r, "WSL2") || strstr(r, "microsoft-standard")) ? 2 : 1;
	else if (penv(p, "WSL_DISTRO_NAME") && penv(p, "WSL_INTEROP"))
		w->wsl = 2; /* a custom kernel inside WSL2 */
}

static void detect_pidns(const doctor_probe *p, doctor_where *w)
{
	char path[512];
	doctor_pathf(path, sizeof path, p->proc_root, "/self/status");
	char *s = doctor_slurp(path, 16384);
	w->pidns_known = s && strstr(s, "NSpid:");
	free(s);
	if (w->pidns_known)
		w->pidns_nested = host_pidns_nested(p->proc_root);
}

void doctor_where_detect(const doctor_probe *p, doctor_where *w)
{
	memset(w, 0, sizeof *w);
	detect_container(p, w);
	detect_wsl(p, w);
	detect_pidns(p, w);
}
