/* host_env.c - identity, container, WSL and PID-namespace probes. */
#include "host/host_env.h"
#include "host/host_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Read root/rel into b; false when unreadable. */
static bool read_under(host_buf *b, const char *root, const char *rel)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return false;
	return host_buf_readat(b, AT_FDCWD, path) == 0;
}

static bool exists_under(const char *root, const char *rel)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return false;
	return access(path, F_OK) == 0;
}

/* First line of a file, without its newline. */
static void first_line(host_buf *b, const char *root, const char *rel, char *out, size_t size)
{
	out[0] = '\0';
	if (!read_under(b, root, rel))
		return;
	const char *nl = memchr(b->p, '\n', b->len);
	host_copy_name(out, size, b->p, nl ? (size_t)(nl - b->p) : b->len);
}

int host_cpulist_count(const char *buf, size_t len)
{
	host_cur c = {buf, buf + len};
	long count = 0;
	bool any = false;
	while (!host_cur_eof(&c) && *c.p != '\n') {
		uint64_t a, b;
		if (!host_cur_u64(&c, &a) || a > 1u << 22)
			return -1;
		b = a;
		if (!host_cur_eof(&c) && *c.p == '-') {
			c.p++;
			if (!host_cur_u64(&c, &b) || b < a || b > 1u << 22)
				return -1;
		}
		count += (long)(b - a + 1);
		if (count > 1L << 22)
			return -1;
		any = true;
		if (!host_cur_eof(&c) && *c.p == ',')
			c.p++;
		else if (!host_cur_eof(&c) && *c.p != '\n')
			return -1;
	}
	return any ? (int)count : -1;
}

bool host_version_is_wsl(const char *buf, size_t len)
{
	/* "... 5.15.90.1-microsoft-standard-WSL2 ..." or "Microsoft" on WSL1 */
	static const char *const marks[] = {"microsoft", "wsl"};
	for (size_t m = 0; m < 2; m++) {
		size_t ml = strlen(marks[m]);
		for (size_t i = 0; i + ml <= len; i++)
			if (strncasecmp(buf + i, marks[m], ml) == 0)
				return true;
	}
	return false;
}

void host_identity_read(const host_config *cfg, host_identity *out)
{
	host_config def;
	host_config_default(&def);
	if (!cfg)
		cfg = &def;
	const char *proc = cfg->proc_root ? cfg->proc_root : def.proc_root;
	const char *sys = cfg->sys_root ? cfg->sys_root : def.sys_root;
	memset(out, 0, sizeof(*out));
	host_buf b = {0};
	first_line(&b, proc, "sys/kernel/hostname", out->hostname, sizeof(out->hostname));
	first_line(&b, proc, "sys/kernel/osrelease", out->kernel_release,
	           sizeof(out->kernel_release));
	if (read_under(&b, sys, "devices/system/cpu/online")) {
		int n = host_cpulist_count(b.p, b.len);
		if (n > 0) {
			out->cpus_online = n;
			out->cpus_online_ok = true;
		}
	}
	if (read_under(&b, proc, "stat")) {
		host_stat st = {0};
		if (host_parse_stat(b.p, b.len, &st) == 0) {
			if (!out->cpus_online_ok && st.ncpu > 0) {
				out->cpus_online = (int)st.ncpu;
				out->cpus_online_ok = true;
			}
			if (st.has & HOST_STAT_BTIME) {
				out->boot_time = st.btime;
				out->boot_time_ok = true;
			}
		}
		host_stat_free(&st);
	}
	if (read_under(&b, proc, "meminfo")) {
		host_meminfo mi;
		if (host_parse_meminfo(b.p, b.len, &mi) == 0 && (mi.has & (1u << HOST_MI_TOTAL))) {
			out->mem_total = mi.v[HOST_MI_TOTAL];
			out->mem_total_ok = true;
		}
	}
	host_buf_free(&b);
}

void host_env_probe(const host_config *cfg, host_env *out)
{
	host_config def;
	host_config_default(&def);
	if (!cfg)
		cfg = &def;
	const char *proc = cfg->proc_root ? cfg->proc_root : def.proc_root;
	const char *fs = cfg->fs_root ? cfg->fs_root : def.fs_root;
	memset(out, 0, sizeof(*out));
	host_buf b = {0};

	if (exists_under(fs, ".dockerenv")) {
		out->container_how |= HOST_CT_DOCKERENV;
		out->runtime = HOST_RT_DOCKER;
	}
	if (exists_under(fs, "run/.containerenv")) {
		out->container_how |= HOST_CT_CONTAINERENV;
		out->runtime = HOST_RT_PODMAN;
	}
	static const char *const cgroups[] = {"self/cgroup", "1/cgroup"};
	for (size_t i = 0; i < 2; i++) {
		host_cgroup cg;
		if (read_under(&b, proc, cgroups[i]) && host_parse_cgroup(b.p, b.len, &cg) == 0 &&
		    cg.runtime != HOST_RT_NONE) {
			out->container_how |= HOST_CT_CGROUP;
			out->runtime = cg.runtime;
			memcpy(out->container_id, cg.id, sizeof(out->container_id));
			break;
		}
	}
	out->in_container = out->container_how != 0;

	const char *distro = getenv("WSL_DISTRO_NAME");
	out->in_wsl = (distro && *distro) ||
	              (read_under(&b, proc, "version") && host_version_is_wsl(b.p, b.len));

	host_pid_status ps;
	if (read_under(&b, proc, "self/status") && host_parse_pid_status(b.p, b.len, &ps) == 0 &&
	    (ps.has & HOST_PST_NSPID)) {
		out->pid_ns_ok = true;
		out->pid_ns_depth = ps.nspid_n;
	}
	host_pid_stat st;
	out->kthreadd_seen = read_under(&b, proc, "2/stat") &&
	                     host_parse_pid_stat(b.p, b.len, &st) == 0 && st.ppid == 0 &&
	                     strcmp(st.comm, "kthreadd") == 0;
	/* hidepid can hide pid 2 from us; only trust its absence when pid 1 is visible */
	bool init_visible = exists_under(proc, "1/stat");
	out->pid_ns_nested = out->pid_ns_depth > 1 || (init_visible && !out->kthreadd_seen);
	host_buf_free(&b);
}
