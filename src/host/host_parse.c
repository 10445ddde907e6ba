/*
 * host_parse.c - pure parsers of system-wide /proc files.
 *
 * Table-like files (stat, meminfo, vmstat, diskstats, net/dev, pressure) end
 * every line with '\n'; a final line without one was cut short (truncated
 * fixture, short read) and is ignored rather than trusted, because its last
 * number may have lost digits and would then look like a counter going
 * backwards.
 */
#include "host/host_parse.h"
#include "host/host_int.h"

#include <stdlib.h>
#include <string.h>

/* Length of buf up to and including its last '\n' (0 when there is none). */
static size_t complete_len(const char *buf, size_t len)
{
	while (len > 0 && buf[len - 1] != '\n')
		len--;
	return len;
}

/* ------------------------------------------------------------------ stat */

static bool parse_cpu_line(host_cur *c, host_cpu_ticks *t)
{
	/* c is just past "cpu": a digit means cpuN, a blank the aggregate line. */
	t->id = -1;
	if (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		uint64_t id;
		if (!host_cur_u64(c, &id) || id > 1u << 20)
			return false;
		t->id = (int)id;
	} else if (c->p >= c->end || (*c->p != ' ' && *c->p != '\t')) {
		return false;
	}
	t->nfields = 0;
	while (t->nfields < HOST_TICK_COUNT) {
		host_cur_skip_blanks(c);
		if (host_cur_eof(c) || *c->p == '\n')
			break;
		if (!host_cur_u64(c, &t->t[t->nfields]))
			break;
		t->nfields++;
	}
	/* user nice system idle: anything shorter is not a cpu line we understand */
	return t->nfields >= 4;
}

int host_parse_stat(const char *buf, size_t len, host_stat *out)
{
	out->has = 0;
	out->ncpu = 0;
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	bool any = false;
	while (!host_cur_eof(&c)) {
		const char *w;
		size_t wl;
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		if (host_cur_lit(&line, "cpu")) {
			host_cpu_ticks t;
			memset(&t, 0, sizeof(t));
			if (!parse_cpu_line(&line, &t))
				continue;
			any = true;
			if (t.id < 0) {
				out->all = t;
				out->has |= HOST_STAT_ALL;
				continue;
			}
			void *arr = out->cpu;
			if (host_grow(&arr, &out->cpu_cap, out->ncpu + 1, sizeof(*out->cpu)) != 0)
				return -1;
			out->cpu = arr;
			out->cpu[out->ncpu++] = t;
			continue;
		}
		if (!host_cur_word(&line, &w, &wl))
			continue;
		static const struct {
			const char *key;
			unsigned bit;
			size_t off;
		} keys[] = {
		    {"ctxt", HOST_STAT_CTXT, offsetof(host_stat, ctxt)},
		    {"intr", HOST_STAT_INTR, offsetof(host_stat, intr)},
		    {"processes", HOST_STAT_PROCESSES, offsetof(host_stat, processes)},
		    {"btime", HOST_STAT_BTIME, offsetof(host_stat, btime)},
		    {"procs_running", HOST_STAT_RUNNING, offsetof(host_stat, procs_running)},
		    {"procs_blocked", HOST_STAT_BLOCKED, offsetof(host_stat, procs_blocked)},
		};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			if (strlen(keys[k].key) != wl || memcmp(keys[k].key, w, wl) != 0)
				continue;
			uint64_t v;
			if (host_cur_u64(&line, &v)) {
				memcpy((char *)out + keys[k].off, &v, sizeof(v));
				out->has |= keys[k].bit;
				any = true;
			}
			break;
		}
	}
	return any ? 0 : -1;
}

void host_stat_free(host_stat *st)
{
	free(st->cpu);
	memset(st, 0, sizeof(*st));
}

/* ---------------------------------------------------- loadavg and uptime */

/* "123.45": a non-negative decimal with an optional fraction. */
static bool host_cur_udec(host_cur *c, double *out)
{
	uint64_t ip;
	if (!host_cur_u64(c, &ip))
		return false;
	double v = (double)ip;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		double scale = 0.1;
		while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
			v += (*c->p - '0') * scale;
			scale /= 10;
			c->p++;
		}
	}
	*out = v;
	return true;
}

int host_parse_loadavg(const char *buf, size_t len, host_loadavg *out)
{
	memset(out, 0, sizeof(*out));
	host_cur c = {buf, buf + len};
	for (int i = 0; i < 3; i++)
		if (!host_cur_udec(&c, &out->load[i]))
			return -1;
	out->ok = true;
	uint64_t r, t;
	if (host_cur_u64(&c, &r) && c.p < c.end && *c.p == '/' && (c.p++, host_cur_u64(&c, &t))) {
		out->runnable = r;
		out->total = t;
		out->tasks_ok = true;
	}
	return 0;
}

int host_parse_uptime(const char *buf, size_t len, host_uptime *out)
{
	memset(out, 0, sizeof(*out));
	host_cur c = {buf, buf + len};
	if (!host_cur_udec(&c, &out->seconds))
		return -1;
	out->ok = true;
	return 0;
}

/* --------------------------------------------------- meminfo and vmstat */

static int key_index(const char *const *names, int n, const char *w, size_t wl)
{
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == wl && memcmp(names[i], w, wl) == 0)
			return i;
	return -1;
}

int host_parse_meminfo(const char *buf, size_t len, host_meminfo *out)
{
	static const char *const names[HOST_MI_COUNT] = {
	    [HOST_MI_TOTAL] = "MemTotal:",
	    [HOST_MI_FREE] = "MemFree:",
	    [HOST_MI_AVAILABLE] = "MemAvailable:",
	    [HOST_MI_BUFFERS] = "Buffers:",
	    [HOST_MI_CACHED] = "Cached:",
	    [HOST_MI_SRECLAIMABLE] = "SReclaimable:",
	    [HOST_MI_SHMEM] = "Shmem:",
	    [HOST_MI_DIRTY] = "Dirty:",
	    [HOST_MI_WRITEBACK] = "Writeback:",
	    [HOST_MI_SWAP_TOTAL] = "SwapTotal:",
	    [HOST_MI_SWAP_FREE] = "SwapFree:",
	};
	memset(out, 0, sizeof(*out));
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		const char *w;
		size_t wl;
		uint64_t v;
		if (!host_cur_word(&line, &w, &wl))
			continue;
		int k = key_index(names, HOST_MI_COUNT, w, wl);
		if (k < 0 || !host_cur_u64(&line, &v))
			continue;
		const char *unit;
		size_t ul;
		if (host_cur_word(&line, &unit, &ul)) {
			if (ul != 2 || memcmp(unit, "kB", 2) != 0)
				continue; /* a unit we do not know: better absent than wrong */
			if (v > UINT64_MAX / 1024)
				continue;
			v *= 1024;
		}
		out->v[k] = v;
		out->has |= 1u << k;
	}
	return out->has ? 0 : -1;
}

int host_parse_vmstat(const char *buf, size_t len, host_vmstat *out)
{
	static const char *const names[HOST_VM_COUNT] = {
	    [HOST_VM_PSWPIN] = "pswpin",
	    [HOST_VM_PSWPOUT] = "pswpout",
	    [HOST_VM_PGMAJFAULT] = "pgmajfault",
	    [HOST_VM_OOM_KILL] = "oom_kill",
	};
	memset(out, 0, sizeof(*out));
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		const char *w;
		size_t wl;
		uint64_t v;
		if (!host_cur_word(&line, &w, &wl))
			continue;
		int k = key_index(names, HOST_VM_COUNT, w, wl);
		if (k >= 0 && host_cur_u64(&line, &v)) {
			out->v[k] = v;
			out->has |= 1u << k;
		}
	}
	return out->has ? 0 : -1;
}

/* -------------------------------------------------------------- pressure */

int host_parse_psi(const char *buf, size_t len, host_psi *out)
{
	memset(out, 0, sizeof(*out));
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		bool some = host_cur_lit(&line, "some ");
		if (!some && !host_cur_lit(&line, "full "))
			continue;
		const char *w;
		size_t wl;
		while (host_cur_word(&line, &w, &wl)) {
			if (wl <= 6 || memcmp(w, "total=", 6) != 0)
				continue;
			host_cur num = {w + 6, w + wl};
			uint64_t v;
			if (host_cur_u64(&num, &v) && num.p == num.end) {
				if (some) {
					out->some_us = v;
					out->some_ok = true;
				} else {
					out->full_us = v;
					out->full_ok = true;
				}
			}
		}
	}
	return (out->some_ok || out->full_ok) ? 0 : -1;
}

/* ------------------------------------------------------------- diskstats */

int host_parse_diskstats(const char *buf, size_t len, host_diskstats *out)
{
	out->n = 0;
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		host_diskstat d;
		memset(&d, 0, sizeof(d));
		uint64_t ma, mi;
		const char *w;
		size_t wl;
		if (!host_cur_u64(&line, &ma) || !host_cur_u64(&line, &mi) || ma > UINT32_MAX ||
		    mi > UINT32_MAX || !host_cur_word(&line, &w, &wl) || wl >= HOST_NAME_MAX_LEN)
			continue;
		d.major = (unsigned)ma;
		d.minor = (unsigned)mi;
		host_copy_name(d.name, sizeof(d.name), w, wl);
		while (d.nfields < HOST_DS_COUNT && host_cur_u64(&line, &d.v[d.nfields]))
			d.nfields++;
		/* Kernels before 2.6.25 wrote 4 different columns for partitions;
		 * fewer than 11 columns cannot be told apart from damage. */
		if (d.nfields < 11)
			continue;
		void *arr = out->d;
		if (host_grow(&arr, &out->cap, out->n + 1, sizeof(*out->d)) != 0)
			return -1;
		out->d = arr;
		out->d[out->n++] = d;
	}
	return out->n ? 0 : -1;
}

void host_diskstats_free(host_diskstats *ds)
{
	free(ds->d);
	memset(ds, 0, sizeof(*ds));
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* name is <prefix><letters><digits> with a non-empty letter run. */
static bool letters_then_digits(const char *s)
{
	const char *p = s;
	while (*p >= 'a' && *p <= 'z')
		p++;
	return p > s && all_digits(p);
}

/* <prefix><digits><sep><digits><part><digits>, e.g. nvme0n1p2 or mmcblk0p1. */
static bool numbered_partition(const char *s, const char *prefix, char sep, bool need_sep)
{
	size_t pl = strlen(prefix);
	if (strncmp(s, prefix, pl) != 0)
		return false;
	const char *p = s + pl;
	const char *d = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == d)
		return false;
	if (need_sep) {
		if (*p != sep)
			return false;
		p++;
		d = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return false;
	}
	return *p == 'p' && all_digits(p + 1);
}

bool host_disk_name_is_partition(const char *name)
{
	static const char *const lettered[] = {"sd", "hd", "vd", "xvd"};
	for (size_t i = 0; i < sizeof(lettered) / sizeof(lettered[0]); i++) {
		size_t pl = strlen(lettered[i]);
		if (strncmp(name, lettered[i], pl) == 0 && letters_then_digits(name + pl))
			return true;
	}
	return numbered_partition(name, "nvme", 'n', true) ||
	       numbered_partition(name, "mmcblk", 0, false) ||
	       numbered_partition(name, "nbd", 0, false) ||
	       numbered_partition(name, "loop", 0, false);
}

bool host_disk_name_is_virtual(const char *name)
{
	static const char *const prefixes[] = {"ram", "zram", "loop", "fd"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], pl) == 0 && all_digits(name + pl))
			return true;
	}
	return false;
}

/* --------------------------------------------------------------- net/dev */

int host_parse_net_dev(const char *buf, size_t len, host_netdevs *out)
{
	out->n = 0;
	len = complete_len(buf, len);
	host_cur c = {buf, buf + len};
	while (!host_cur_eof(&c)) {
		host_cur line = c;
		host_cur_next_line(&c);
		line.end = c.p;
		const char *colon = memchr(line.p, ':', (size_t)(line.end - line.p));
		if (!colon || memchr(line.p, '|', (size_t)(line.end - line.p)))
			continue; /* the two header lines have '|' and no "name:" */
		host_cur_skip_blanks(&line);
		size_t nl = (size_t)(colon - line.p);
		if (nl == 0 || nl >= HOST_NAME_MAX_LEN || memchr(line.p, ' ', nl))
			continue;
		host_netdev d;
		memset(&d, 0, sizeof(d));
		host_copy_name(d.name, sizeof(d.name), line.p, nl);
		line.p = colon + 1;
		while (d.nfields < HOST_ND_COUNT && host_cur_u64(&line, &d.v[d.nfields]))
			d.nfields++;
		if (d.nfields < HOST_ND_COUNT)
			continue;
		void *arr = out->d;
		if (host_grow(&arr, &out->cap, out->n + 1, sizeof(*out->d)) != 0)
			return -1;
		out->d = arr;
		out->d[out->n++] = d;
	}
	return out->n ? 0 : -1;
}

void host_netdevs_free(host_netdevs *nd)
{
	free(nd->d);
	memset(nd, 0, sizeof(*nd));
}
