/* host_kmsg.c - Xid and AER lines from /dev/kmsg or a log file, without blocking. */
#include "host/host_kmsg.h"
#include "host/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ parser */

static const char *find(const char *s, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = s; p + n <= end; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

/* "prio,seq,usec,flags[,...];" of a /dev/kmsg record; advances *p past ';'. */
static bool kmsg_prefix(const char **p, const char *end, host_kmsg_event *out)
{
	host_cur c = {*p, end};
	uint64_t prio, seq, usec;
	if (!host_cur_u64(&c, &prio) || !host_cur_lit(&c, ",") || !host_cur_u64(&c, &seq) ||
	    !host_cur_lit(&c, ",") || !host_cur_u64(&c, &usec) || !host_cur_lit(&c, ","))
		return false;
	const char *semi = memchr(c.p, ';', (size_t)(end - c.p));
	if (!semi || memchr(c.p, ' ', (size_t)(semi - c.p)))
		return false;
	out->level = (int)(prio & 7);
	out->seq = seq;
	out->seq_ok = true;
	out->ts = (double)usec / 1e6;
	out->ts_ok = true;
	*p = semi + 1;
	return true;
}

/* "[ 5678.901234] " of dmesg; advances *p past it. */
static bool dmesg_prefix(const char **p, const char *end, host_kmsg_event *out)
{
	host_cur c = {*p, end};
	if (!host_cur_lit(&c, "["))
		return false;
	uint64_t sec, frac = 0;
	int digits = 0;
	if (!host_cur_u64(&c, &sec))
		return false;
	if (host_cur_lit(&c, ".")) {
		const char *f = c.p;
		if (!host_cur_u64(&c, &frac))
			return false;
		digits = (int)(c.p - f);
	}
	if (!host_cur_lit(&c, "]"))
		return false;
	double scale = 1;
	for (int i = 0; i < digits; i++)
		scale *= 10;
	out->ts = (double)sec + (double)frac / scale;
	out->ts_ok = true;
	host_cur_skip_blanks(&c);
	*p = c.p;
	return true;
}

static void copy_trim(char *dst, size_t size, const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	host_copy_name(dst, size, s, (size_t)(e - s));
}

/* NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus. */
static int parse_xid(const char *x, const char *end, host_kmsg_event *out)
{
	host_cur c = {x + strlen("NVRM: Xid"), end};
	host_cur_skip_blanks(&c);
	if (!host_cur_lit(&c, "("))
		return 0;
	const char *close = memchr(c.p, ')', (size_t)(end - c.p));
	if (!close)
		return 0;
	const char *bus = c.p;
	if ((size_t)(close - bus) >= 4 && memcmp(bus, "PCI:", 4) == 0)
		bus += 4;
	copy_trim(out->pci, sizeof(out->pci), bus, close);
	c.p = close + 1;
	if (!host_cur_lit(&c, ":"))
		return 0;
	uint64_t xid;
	if (!host_cur_u64(&c, &xid) || xid > INT32_MAX)
		return 0;
	out->kind = HOST_KMSG_XID;
	out->xid = (int)xid;
	out->xid_ok = true;
	host_cur_skip_blanks(&c);
	if (host_cur_lit(&c, ","))
		host_cur_skip_blanks(&c);
	/* optional "pid=N," and "name=S," fields, in that order */
	for (int round = 0; round < 2; round++) {
		bool is_pid = (size_t)(end - c.p) >= 4 && memcmp(c.p, "pid=", 4) == 0;
		bool is_name = (size_t)(end - c.p) >= 5 && memcmp(c.p, "name=", 5) == 0;
		if (!is_pid && !is_name)
			break;
		const char *val = c.p + (is_pid ? 4 : 5);
		const char *comma = memchr(val, ',', (size_t)(end - val));
		const char *ve = comma ? comma : end;
		if (is_pid) {
			host_cur v = {val, ve};
			uint64_t pid;
			if (host_cur_u64(&v, &pid) && pid <= INT32_MAX) {
				host_cur_skip_blanks(&v);
				if (host_cur_eof(&v)) {
					out->pid = (int)pid;
					out->pid_ok = true;
				}
			}
		} else if (!find(val, ve, "<unknown>")) {
			copy_trim(out->process, sizeof(out->process), val, ve);
		}
		c.p = comma ? comma + 1 : end;
		host_cur_skip_blanks(&c);
	}
	copy_trim(out->msg, sizeof(out->msg), c.p, end);
	return 1;
}

static bool is_bdf_char(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F') ||
	       ch == ':' || ch == '.';
}

/* A bus id "dddd:bb:dd.f" at p (or "bb:dd.f"); its length or 0. */
static size_t bdf_len(const char *p, const char *end)
{
	size_t n = 0;
	while (p + n < end && (is_bdf_char(p[n])))
		n++;
	return n >= 7 && memchr(p, ':', n) && memchr(p, '.', n) ? n : 0;
}

/* aer: "AER:" in the line, or "PCIe Bus Error:" where kernels before 4.x omit the tag */
static int parse_aer(const char *line, const char *aer, const char *end, host_kmsg_event *out)
{
	/* the device that printed: "<driver> <bdf>: AER:" */
	const char *dev_end = aer;
	while (dev_end > line && (dev_end[-1] == ' ' || dev_end[-1] == ':'))
		dev_end--;
	const char *dev = dev_end;
	while (dev > line && dev[-1] != ' ' && dev[-1] != ';' && dev[-1] != ']')
		dev--;
	if (bdf_len(dev, dev_end) == (size_t)(dev_end - dev))
		copy_trim(out->port, sizeof(out->port), dev, dev_end);

	host_cur c = {aer, end};
	host_cur_lit(&c, "AER:");
	host_cur_skip_blanks(&c);
	copy_trim(out->msg, sizeof(out->msg), c.p, end);
	const char *sev;
	if (host_cur_lit(&c, "PCIe Bus Error:")) {
		const char *s = find(c.p, end, "severity=");
		if (!s)
			return 0;
		out->detail = true;
		sev = s + strlen("severity=");
		/* the detail line names the erring device itself */
		memcpy(out->pci, out->port, sizeof(out->pci));
	} else {
		if (host_cur_lit(&c, "Multiple "))
			out->multiple = true;
		sev = c.p;
		const char *rcv = find(c.p, end, "error received");
		const char *msg = find(c.p, end, "error message received");
		if (!rcv && !msg)
			return 0;
		/* the source: "received: 0000:3b:00.0", "received from 0000:3b:00.0" or "id=0018"
		 */
		const char *src = find(c.p, end, "received");
		src += strlen("received");
		while (src < end && (*src == ':' || *src == ' '))
			src++;
		if ((size_t)(end - src) >= 5 && memcmp(src, "from ", 5) == 0)
			src += 5;
		size_t bl = bdf_len(src, end);
		if (bl) {
			copy_trim(out->pci, sizeof(out->pci), src, src + bl);
		} else if ((size_t)(end - src) > 3 && memcmp(src, "id=", 3) == 0) {
			/* requester id: bus << 8 | device << 3 | function, domain of the port */
			host_cur h = {src + 3, end};
			unsigned id = 0;
			int nd = 0;
			for (; !host_cur_eof(&h) && nd < 4; h.p++, nd++) {
				char ch = *h.p;
				int d = ch >= '0' && ch <= '9'   ? ch - '0'
				        : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
				        : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
				                                 : -1;
				if (d < 0)
					break;
				id = id << 4 | (unsigned)d;
			}
			if (nd == 4) {
				unsigned domain = 0;
				if (out->port[0] && strlen(out->port) > 5 && out->port[4] == ':')
					sscanf(out->port, "%4x", &domain);
				snprintf(out->pci, sizeof(out->pci), "%04x:%02x:%02x.%u",
				         domain & 0xffff, id >> 8, (id >> 3) & 0x1f, id & 7);
			}
		}
	}
	if ((size_t)(end - sev) >= 7 && memcmp(sev, "Correct", 7) == 0)
		out->kind = HOST_KMSG_AER_CORRECTED;
	else if ((size_t)(end - sev) >= 9 && memcmp(sev, "Uncorrect", 9) == 0) {
		const char *paren = memchr(sev, '(', (size_t)(end - sev));
		if (!paren)
			return 0;
		if ((size_t)(end - paren) >= 7 && memcmp(paren, "(Fatal)", 7) == 0)
			out->kind = HOST_KMSG_AER_FATAL;
		else if ((size_t)(end - paren) >= 11 && memcmp(paren, "(Non-Fatal)", 11) == 0)
			out->kind = HOST_KMSG_AER_NONFATAL;
		else
			return 0;
	} else {
		return 0;
	}
	return 1;
}

int host_kmsg_parse_line(const char *line, size_t len, host_kmsg_event *out)
{
	memset(out, 0, sizeof(*out));
	out->level = -1;
	const char *end = line + len;
	const char *nl = memchr(line, '\n', len); /* a kmsg record's dictionary follows */
	if (nl)
		end = nl;
	const char *p = line;
	if (!kmsg_prefix(&p, end, out))
		dmesg_prefix(&p, end, out);
	const char *x = find(p, end, "NVRM: Xid");
	if (x)
		return parse_xid(x, end, out);
	const char *aer = find(p, end, "AER:");
	if (!aer)
		aer = find(p, end, "PCIe Bus Error:");
	if (aer)
		return parse_aer(p, aer, end, out);
	return host_kmsg_parse_amdgpu(p, end, out);
}

/* ------------------------------------------------------------------ reader */

/* Records are at most 8 KiB (CONSOLE_EXT_LOG_MAX); a shorter buffer gets EINVAL. */
#define KMSG_RECORD_MAX 8192

struct host_kmsg {
	int fd;
	bool records; /* /dev/kmsg (one record per read) rather than a text file */
	uint64_t from_seq;
	uint64_t next_seq;
	uint64_t offset; /* text: byte offset of the next unread line */
	uint64_t lost;
	bool started; /* a record was read: later sequence gaps are losses */
	char *buf;
	size_t cap;
};

host_kmsg *host_kmsg_open(const char *path, uint64_t from)
{
	if (!path)
		path = HOST_KMSG_DEFAULT;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	struct stat sb;
	host_kmsg *k = calloc(1, sizeof(*k));
	if (!k || fstat(fd, &sb) != 0) {
		int e = k ? errno : ENOMEM;
		free(k);
		close(fd);
		errno = e;
		return NULL;
	}
	k->fd = fd;
	k->records = S_ISCHR(sb.st_mode);
	k->cap = KMSG_RECORD_MAX + 1;
	k->buf = malloc(k->cap);
	if (!k->buf) {
		host_kmsg_close(k);
		errno = ENOMEM;
		return NULL;
	}
	if (k->records) {
		k->from_seq = from == HOST_KMSG_END ? 0 : from;
		k->next_seq = k->from_seq;
		if (from == HOST_KMSG_END)
			lseek(fd, 0, SEEK_END);
	} else if (from == HOST_KMSG_END) {
		k->offset = (uint64_t)sb.st_size;
	} else {
		k->offset = from;
	}
	return k;
}

static int read_records(host_kmsg *k, host_kmsg_event *ev, size_t max)
{
	size_t n = 0;
	while (n < max) {
		ssize_t r = read(k->fd, k->buf, k->cap - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == EPIPE) /* overwritten before we read them: the */
				continue;   /* next record's sequence number tells how many */
			return n ? (int)n : -1;
		}
		if (r == 0)
			break;
		k->buf[r] = '\0';
		host_kmsg_event e;
		int got = host_kmsg_parse_line(k->buf, (size_t)r, &e);
		/* the sequence number is in every record, event or not */
		host_cur c = {k->buf, k->buf + r};
		uint64_t prio, seq;
		if (host_cur_u64(&c, &prio) && host_cur_lit(&c, ",") && host_cur_u64(&c, &seq)) {
			if (seq < k->from_seq)
				continue;
			if (k->started && seq > k->next_seq)
				k->lost += seq - k->next_seq;
			k->started = true;
			k->next_seq = seq + 1;
		}
		if (got)
			ev[n++] = e;
	}
	return (int)n;
}

static int read_text(host_kmsg *k, host_kmsg_event *ev, size_t max)
{
	size_t n = 0;
	while (n < max) {
		ssize_t r = pread(k->fd, k->buf, k->cap - 1, (off_t)k->offset);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return n ? (int)n : -1;
		}
		if (r == 0)
			break;
		const char *p = k->buf, *end = k->buf + r;
		const char *nl;
		while (n < max && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			host_kmsg_event e;
			if (host_kmsg_parse_line(p, (size_t)(nl - p), &e))
				ev[n++] = e;
			k->offset += (uint64_t)(nl + 1 - p);
			p = nl + 1;
		}
		if (p == k->buf) {
			/* no newline in a full buffer: an over-long line, skip it whole */
			if ((size_t)r == k->cap - 1)
				k->offset += (uint64_t)r;
			else
				break; /* an unfinished last line: wait for its newline */
		}
	}
	return (int)n;
}

int host_kmsg_read(host_kmsg *k, host_kmsg_event *ev, size_t max)
{
	return k->records ? read_records(k, ev, max) : read_text(k, ev, max);
}

uint64_t host_kmsg_position(const host_kmsg *k)
{
	return k->records ? k->next_seq : k->offset;
}

uint64_t host_kmsg_lost(const host_kmsg *k)
{
	return k->lost;
}

void host_kmsg_close(host_kmsg *k)
{
	if (!k)
		return;
	if (k->fd >= 0)
		close(k->fd);
	free(k->buf);
	free(k);
}
