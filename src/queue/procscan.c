/*
 * procscan.c - what the queue needs from /proc: is a recorded process still
 * the same one, how much host memory a task's processes hold, and which
 * task a GPU process belongs to.
 *
 * A task runs in the session its shim created (setsid), so "session id ==
 * shim PID" finds every process of the task, also those that made process
 * groups of their own.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "host/host_parse.h"
#include "queue/procscan.h"
#include "util/xalloc.h"

static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool queue_proc_read(int pid, queue_proc_stat *out)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	ssize_t n = pid > 0 ? read_small(path, buf, sizeof buf) : -1;
	host_pid_stat ps;
	const unsigned need = HOST_PS_PGRP | HOST_PS_SESSION | HOST_PS_STARTTIME | HOST_PS_RSS;
	if (n <= 0 || host_parse_pid_stat(buf, (size_t)n, &ps) != 0 || (ps.has & need) != need)
		return false;
	memset(out, 0, sizeof *out);
	out->pid = pid;
	out->ppid = ps.ppid;
	out->pgrp = (int)ps.pgrp;
	out->session = (int)ps.session;
	out->state = ps.state;
	out->starttime = ps.starttime;
	out->rss_kib = ps.rss_pages * (sysconf(_SC_PAGESIZE) / 1024);
	return true;
}

bool queue_proc_alive(int pid, uint64_t starttime)
{
	queue_proc_stat ps;
	if (!queue_proc_read(pid, &ps))
		return false;
	if (ps.state == 'Z' || ps.state == 'X')
		return false;
	return starttime == 0 || ps.starttime == starttime;
}

void queue_sessions_rss_kib(const int *sids, int n, int64_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = 0;
	DIR *d = opendir("/proc");
	if (!d) {
		for (int i = 0; i < n; i++)
			out[i] = -1;
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		int pid = atoi(e->d_name);
		queue_proc_stat ps;
		if (!queue_proc_read(pid, &ps))
			continue;
		for (int i = 0; i < n; i++)
			if (ps.session == sids[i] && pid != sids[i])
				out[i] += ps.rss_kib;
	}
	closedir(d);
}

bool queue_proc_has_env(int pid, const char *name, const char *value)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	ssize_t n;
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 >= cap) {
			if (cap >= (1u << 22))
				break;
			cap *= 2;
			buf = gw_xrealloc(buf, cap);
		}
	}
	close(fd);
	buf[len] = '\0';
	size_t nl = strlen(name), vl = strlen(value);
	bool found = false;
	for (size_t i = 0; i < len && !found;) {
		const char *ent = buf + i;
		size_t el = strnlen(ent, len - i);
		found = el == nl + 1 + vl && !strncmp(ent, name, nl) && ent[nl] == '=' &&
		        !memcmp(ent + nl + 1, value, vl);
		i += el + 1;
	}
	free(buf);
	return found;
}

void queue_boot_id(char *out, size_t outlen)
{
	char buf[64];
	out[0] = '\0';
	if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof buf) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(out, outlen, "%s", buf);
	}
}

void queue_new_token(char *out, size_t outlen)
{
	unsigned char r[8];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		/* No entropy source: time and PID still make a token unique enough per host. */
		unsigned long long v = (unsigned long long)getpid() * 0x9E3779B97F4A7C15ULL ^
		                       (unsigned long long)clock();
		memcpy(r, &v, sizeof r);
	}
	snprintf(out, outlen, "%02x%02x%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
	         r[5], r[6], r[7]);
}
