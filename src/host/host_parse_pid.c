/* host_parse_pid.c - pure parsers of /proc/PID/{stat,status,io,cmdline,cgroup}. */
#include "host/host_parse.h"
#include "host/host_int.h"

#include <string.h>

/* ------------------------------------------------------------- PID/stat */

/* Fields after the comm, numbered as in proc(5): 3 = state ... 39 = processor. */
enum { PS_FIRST = 3, PS_LAST = 39 };

int host_parse_pid_stat(const char *buf, size_t len, host_pid_stat *out)
{
	memset(out, 0, sizeof(*out));
	host_cur c = {buf, buf + len};
	uint64_t pid;
	if (!host_cur_u64(&c, &pid) || pid == 0 || pid > INT32_MAX)
		return -1;
	host_cur_skip_blanks(&c);
	if (host_cur_eof(&c) || *c.p != '(')
		return -1;
	/* comm may hold spaces and parentheses: it ends at the LAST ')'. */
	const char *open = c.p + 1;
	const char *close = NULL;
	for (const char *p = c.end; p > open;)
		if (*--p == ')') {
			close = p;
			break;
		}
	if (!close)
		return -1;
	out->pid = (int)pid;
	host_copy_name(out->comm, sizeof(out->comm), open, (size_t)(close - open));

	/* Split the rest into words once; fields are then picked by number. */
	struct {
		const char *p;
		size_t n;
	} f[PS_LAST + 1] = {{0}};
	host_cur r = {close + 1, c.end};
	int nf = PS_FIRST;
	while (nf <= PS_LAST) {
		/* a line break ends the record */
		while (r.p < r.end && (*r.p == ' ' || *r.p == '\t'))
			r.p++;
		if (r.p >= r.end || *r.p == '\n')
			break;
		host_cur_word(&r, &f[nf].p, &f[nf].n);
		nf++;
	}
	if (nf <= 4 || f[3].n != 1)
		return -1;
	out->state = f[3].p[0];
	host_cur w = {f[4].p, f[4].p + f[4].n};
	int64_t ppid;
	if (!host_cur_i64(&w, &ppid) || w.p != w.end || ppid < 0 || ppid > INT32_MAX)
		return -1;
	out->ppid = (int)ppid;

	static const struct {
		int field;
		unsigned bit;
		size_t off;
		bool is_signed;
	} pick[] = {
	    {5, HOST_PS_PGRP, offsetof(host_pid_stat, pgrp), true},
	    {6, HOST_PS_SESSION, offsetof(host_pid_stat, session), true},
	    {9, HOST_PS_FLAGS, offsetof(host_pid_stat, flags), false},
	    {10, HOST_PS_MINFLT, offsetof(host_pid_stat, minflt), false},
	    {12, HOST_PS_MAJFLT, offsetof(host_pid_stat, majflt), false},
	    {14, HOST_PS_UTIME, offsetof(host_pid_stat, utime), false},
	    {15, HOST_PS_STIME, offsetof(host_pid_stat, stime), false},
	    {19, HOST_PS_NICE, offsetof(host_pid_stat, nice), true},
	    {20, HOST_PS_THREADS, offsetof(host_pid_stat, threads), false},
	    {22, HOST_PS_STARTTIME, offsetof(host_pid_stat, starttime), false},
	    {23, HOST_PS_VSIZE, offsetof(host_pid_stat, vsize), false},
	    {24, HOST_PS_RSS, offsetof(host_pid_stat, rss_pages), true},
	    {39, HOST_PS_PROCESSOR, offsetof(host_pid_stat, processor), true},
	};
	for (size_t i = 0; i < sizeof(pick) / sizeof(pick[0]); i++) {
		int k = pick[i].field;
		if (k >= nf)
			break;
		host_cur v = {f[k].p, f[k].p + f[k].n};
		if (pick[i].is_signed) {
			int64_t x;
			if (!host_cur_i64(&v, &x) || v.p != v.end)
				continue;
			memcpy((char *)out + pick[i].off, &x, sizeof(x));
		} else {
			uint64_t x;
			if (!host_cur_u64(&v, &x) || v.p != v.end)
				continue;
			memcpy((char *)out + pick[i].off, &x, sizeof(x));
		}
		out->has |= pick[i].bit;
	}
	return 0;
}

/* ----------------------------------------------------------- PID/status */

static bool parse_id4(host_cur *c, uint32_t id[4])
{
	for (int i = 0; i < 4; i++) {
		uint64_t v;
		if (!host_cur_u64(c, &v) || v > UINT32_MAX)
			return false;
		id[i] = (uint32_t)v;
	}
	return true;
}

static bool parse_kb(host_cur *c, uint64_t *out)
{
	uint64_t v;
	const char *u;
	size_t ul;
	if (!host_cur_u64(c, &v) || !host_cur_word(c, &u, &ul) || ul != 2 ||
	    memcmp(u, "kB", 2) != 0 || v > UINT64_MAX / 1024)
		return false;
	*out = v * 1024;
	return true;
}

static bool parse_int(host_cur *c, int *out)
{
	uint64_t v;
	if (!host_cur_u64(c, &v) || v > INT32_MAX)
		return false;
	*out = (int)v;
	return true;
}

int host_parse_pid_status(const char *buf, size_t len, host_pid_status *out)
{
	memset(out, 0, sizeof(*out));
	while (len > 0 && buf[len - 1] != '\n') /* drop a cut-off last line */
		len--;
	host_cur c = {buf, buf + len};
	unsigned ctxt = 0;
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		if (line.end > line.p && line.end[-1] == '\n')
			line.end--;
		const char *colon = memchr(line.p, ':', (size_t)(line.end - line.p));
		if (!colon)
			continue;
		const char *key = line.p;
		size_t kl = (size_t)(colon - key);
		line.p = colon + 1;
#define KEY(s) (kl == sizeof(s) - 1 && memcmp(key, s, kl) == 0)
		if (KEY("Name")) {
			host_cur_skip_blanks(&line);
			host_copy_name(out->name, sizeof(out->name), line.p,
			               (size_t)(line.end - line.p));
			out->has |= HOST_PST_NAME;
		} else if (KEY("Uid")) {
			if (parse_id4(&line, out->uid))
				out->has |= HOST_PST_UID;
		} else if (KEY("Gid")) {
			if (parse_id4(&line, out->gid))
				out->has |= HOST_PST_GID;
		} else if (KEY("Tgid")) {
			if (parse_int(&line, &out->tgid))
				out->has |= HOST_PST_TGID;
		} else if (KEY("PPid")) {
			if (parse_int(&line, &out->ppid))
				out->has |= HOST_PST_PPID;
		} else if (KEY("Threads")) {
			if (host_cur_u64(&line, &out->threads))
				out->has |= HOST_PST_THREADS;
		} else if (KEY("NSpid")) {
			int n = 0, v;
			while (n < HOST_NSPID_MAX && parse_int(&line, &v))
				out->nspid[n++] = v;
			host_cur_skip_blanks(&line);
			if (n > 0 && host_cur_eof(&line)) {
				out->nspid_n = n;
				out->has |= HOST_PST_NSPID;
			}
		} else if (KEY("VmRSS")) {
			if (parse_kb(&line, &out->vm_rss))
				out->has |= HOST_PST_VMRSS;
		} else if (KEY("VmSwap")) {
			if (parse_kb(&line, &out->vm_swap))
				out->has |= HOST_PST_VMSWAP;
		} else if (KEY("VmHWM")) {
			if (parse_kb(&line, &out->vm_hwm))
				out->has |= HOST_PST_VMHWM;
		} else if (KEY("voluntary_ctxt_switches")) {
			if (host_cur_u64(&line, &out->vol_ctxt))
				ctxt |= 1;
		} else if (KEY("nonvoluntary_ctxt_switches")) {
			if (host_cur_u64(&line, &out->nonvol_ctxt))
				ctxt |= 2;
		}
#undef KEY
	}
	if (ctxt == 3)
		out->has |= HOST_PST_CTXT;
	return out->has ? 0 : -1;
}

/* --------------------------------------------------------------- PID/io */

int host_parse_pid_io(const char *buf, size_t len, host_pid_io *out)
{
	static const char *const names[HOST_IO_COUNT] = {
	    [HOST_IO_RCHAR] = "rchar:",
	    [HOST_IO_WCHAR] = "wchar:",
	    [HOST_IO_SYSCR] = "syscr:",
	    [HOST_IO_SYSCW] = "syscw:",
	    [HOST_IO_READ_BYTES] = "read_bytes:",
	    [HOST_IO_WRITE_BYTES] = "write_bytes:",
	    [HOST_IO_CANCELLED_WRITE_BYTES] = "cancelled_write_bytes:",
	};
	memset(out, 0, sizeof(*out));
	while (len > 0 && buf[len - 1] != '\n')
		len--;
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		const char *w;
		size_t wl;
		if (!host_cur_word(&line, &w, &wl))
			continue;
		for (int k = 0; k < HOST_IO_COUNT; k++) {
			if (strlen(names[k]) != wl || memcmp(names[k], w, wl) != 0)
				continue;
			if (host_cur_u64(&line, &out->v[k]))
				out->has |= 1u << k;
			break;
		}
	}
	return out->has ? 0 : -1;
}

/* ---------------------------------------------------------- PID/cmdline */

size_t host_format_cmdline(const char *buf, size_t len, char *out, size_t outsize)
{
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	size_t need = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)buf[i];
		char o = ch == '\0' ? ' ' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
		if (need + 1 < outsize)
			out[need] = o;
		need++;
	}
	if (outsize > 0)
		out[need < outsize ? need : outsize - 1] = '\0';
	return need;
}

/* ----------------------------------------------------------- PID/cgroup */

const char *host_runtime_name(enum host_runtime rt)
{
	static const char *const names[HOST_RT_COUNT] = {
	    [HOST_RT_NONE] = "",
	    [HOST_RT_DOCKER] = "docker",
	    [HOST_RT_CONTAINERD] = "containerd",
	    [HOST_RT_CRIO] = "cri-o",
	    [HOST_RT_PODMAN] = "podman",
	    [HOST_RT_KUBEPODS] = "kubernetes",
	    [HOST_RT_LXC] = "lxc",
	};
	return (unsigned)rt < HOST_RT_COUNT ? names[rt] : "";
}

static bool is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

/* The id that follows prefix in path, up to '/', '.' or the end. Container ids
 * are long hex strings; require at least 12 digits to avoid matching words. */
static bool id_after(const char *path, const char *prefix, bool hex, char *id, size_t idsize)
{
	const char *hit = NULL;
	for (const char *p = strstr(path, prefix); p; p = strstr(p + 1, prefix))
		hit = p; /* the innermost (last) occurrence */
	if (!hit)
		return false;
	const char *s = hit + strlen(prefix);
	size_t n = 0;
	while (s[n] && s[n] != '/' && s[n] != '.') {
		if (hex && !is_hex(s[n]))
			return false;
		n++;
	}
	if (n == 0 || (hex && n < 12))
		return false;
	host_copy_name(id, idsize, s, n);
	return true;
}

/* A bare 64-hex component (cgroupfs driver layouts: /docker/<id>, /kubepods/.../<id>). */
static bool last_hex64(const char *path, char *id, size_t idsize)
{
	const char *comp = strrchr(path, '/');
	comp = comp ? comp + 1 : path;
	size_t n = strlen(comp);
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_hex(comp[i]))
			return false;
	host_copy_name(id, idsize, comp, n);
	return true;
}

void host_cgroup_classify(const char *path, host_cgroup *out)
{
	out->runtime = HOST_RT_NONE;
	out->id[0] = '\0';
	out->pod_uid[0] = '\0';
	static const struct {
		const char *prefix;
		enum host_runtime rt;
		bool hex;
	} scopes[] = {
	    /* conmon processes run beside a container, not in it */
	    {"cri-containerd-", HOST_RT_CONTAINERD, true},
	    {"nerdctl-", HOST_RT_CONTAINERD, true},
	    {"crio-", HOST_RT_CRIO, true},
	    {"docker-", HOST_RT_DOCKER, true},
	    {"libpod-", HOST_RT_PODMAN, true},
	    {"/docker/", HOST_RT_DOCKER, true},
	    {"/lxc/", HOST_RT_LXC, false},
	    {"lxc.payload.", HOST_RT_LXC, false},
	};
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		if (id_after(path, scopes[i].prefix, scopes[i].hex, out->id, sizeof(out->id))) {
			out->runtime = scopes[i].rt;
			break;
		}
	}
	const char *kp = strstr(path, "kubepods");
	if (kp) {
		if (out->runtime == HOST_RT_NONE) {
			out->runtime = HOST_RT_KUBEPODS;
			last_hex64(path, out->id, sizeof(out->id));
		}
		/* pod<uid>: 36 characters, '-' written as '_' by the systemd driver */
		const char *pod = strstr(kp, "pod");
		while (pod) {
			const char *u = pod + 3;
			size_t n = 0;
			while (n < 36 && (is_hex(u[n]) || u[n] == '-' || u[n] == '_'))
				n++;
			if (n == 36) {
				for (size_t i = 0; i < n; i++)
					out->pod_uid[i] = u[i] == '_' ? '-' : u[i];
				out->pod_uid[n] = '\0';
				break;
			}
			pod = strstr(pod + 3, "pod");
		}
	}
}

int host_parse_cgroup(const char *buf, size_t len, host_cgroup *out)
{
	memset(out, 0, sizeof(*out));
	host_cur c = {buf, buf + len};
	int best = 0; /* 3 unified, 2 cpu controller, 1 any v1 line */
	char alt[HOST_CGROUP_PATH_MAX];
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		if (line.end > line.p && line.end[-1] == '\n')
			line.end--;
		/* hierarchy-id:controller-list:path; the path may itself hold ':' */
		const char *c1 = memchr(line.p, ':', (size_t)(line.end - line.p));
		if (!c1)
			continue;
		const char *c2 = memchr(c1 + 1, ':', (size_t)(line.end - c1 - 1));
		if (!c2 || c2 + 1 >= line.end || c2[1] != '/')
			continue;
		const char *ctl = c1 + 1;
		size_t ctl_len = (size_t)(c2 - ctl);
		int rank = 1;
		if (ctl_len == 0 && c1 - line.p == 1 && line.p[0] == '0')
			rank = 3;
		else
			for (host_cur t = {ctl, c2}; !host_cur_eof(&t);) {
				const char *comma = memchr(t.p, ',', (size_t)(t.end - t.p));
				const char *e = comma ? comma : t.end;
				if (e - t.p == 3 && memcmp(t.p, "cpu", 3) == 0)
					rank = 2;
				t.p = comma ? comma + 1 : t.end;
			}
		host_copy_name(alt, sizeof(alt), c2 + 1, (size_t)(line.end - c2 - 1));
		/* container ids can sit in any hierarchy: remember the first seen */
		if (out->runtime == HOST_RT_NONE) {
			host_cgroup tmp;
			host_cgroup_classify(alt, &tmp);
			if (tmp.runtime != HOST_RT_NONE) {
				out->runtime = tmp.runtime;
				memcpy(out->id, tmp.id, sizeof(out->id));
				memcpy(out->pod_uid, tmp.pod_uid, sizeof(out->pod_uid));
			}
		}
		if (rank > best) {
			best = rank;
			memcpy(out->path, alt, strlen(alt) + 1);
			out->path_ok = true;
			out->v2 = rank == 3;
		}
	}
	return out->path_ok ? 0 : -1;
}
