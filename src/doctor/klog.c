/* klog.c - the kernel log: read once (kmsg, else dmesg, else journalctl), parse Xid and AER. */
#include <stdbool.h>
#include <stdio.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor/doctor_int.h"
#include "gpu/xid.h"
#include "util/child.h"

#define KLOG_CAP (16u << 20) /* bytes read from a file or a tool */
#define KLOG_MAX_LINES 200000u

/* Only these lines matter to the checks; the rest of the log is not kept. */
static bool interesting(const char *s)
{
	return strstr(s, "Xid") || strstr(s, "AER") || strstr(s, "PCIe Bus Error") ||
	       strstr(s, "NVRM") || strstr(s, "nvidia") || strstr(s, "amdgpu");
}

static void keep(doctor_klog *k, const char *s, size_t len)
{
	if (k->n >= KLOG_MAX_LINES)
		return;
	char *line = strndup(s, len);
	if (!line || !interesting(line)) {
		free(line);
		return;
	}
	char **v = realloc(k->lines, (k->n + 1) * sizeof *v);
	if (!v) {
		free(line);
		return;
	}
	k->lines = v;
	k->lines[k->n++] = line;
}

/* Strip what precedes the message: "6,1234,5678,-;", "[  12.345678] ", "Mon DD hh:mm:ss host
 * kernel: ". */
static const char *message_start(const char *s)
{
	const char *p = s;
	const char *semi = strchr(p, ';');
	if (isdigit((unsigned char)*p) && semi) {
		/* "prio,seq,usec,flags[,more];": no blanks, at least three commas */
		int commas = 0;
		const char *q = p;
		for (; q < semi && *q != ' ' && *q != '\t'; q++)
			commas += *q == ',';
		if (q == semi && commas >= 3)
			return semi + 1;
	}
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (close) {
			p = close + 1;
			while (*p == ' ')
				p++;
			return p;
		}
	}
	const char *kern = strstr(s, " kernel: ");
	if (kern && kern - s < 64)
		return kern + 9;
	return s;
}

static void split_lines(doctor_klog *k, const char *buf)
{
	const char *p = buf;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* kmsg dictionary lines (" SUBSYSTEM=pci") continue a record. */
		if (len && *p != ' ') {
			const char *m = message_start(p);
			size_t skip = (size_t)(m - p);
			if (skip <= len)
				keep(k, m, len - skip);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* /dev/kmsg hands out one record per read() and EAGAIN at the end (non-blocking). */
static bool read_kmsg_device(int fd, doctor_klog *k)
{
	char rec[16384];
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof rec - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten while reading: go on with the next */
		if (n <= 0)
			break;
		rec[n] = '\0';
		total += (size_t)n;
		const char *m = message_start(rec);
		keep(k, m, strcspn(m, "\n"));
		if (total > KLOG_CAP)
			break;
	}
	return true;
}

static bool read_file_or_device(const char *path, doctor_klog *k, int *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return false;
	}
	struct stat st;
	bool ok;
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode)) {
		ok = read_kmsg_device(fd, k);
	} else {
		char *buf = malloc(KLOG_CAP + 1);
		size_t len = 0;
		while (buf && len < KLOG_CAP) {
			ssize_t n = read(fd, buf + len, KLOG_CAP - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		if (buf) {
			buf[len] = '\0';
			split_lines(k, buf);
		}
		free(buf);
		ok = buf != NULL;
	}
	close(fd);
	return ok;
}

static bool read_tool(const doctor_probe *p, const char *name, char *const argv[], doctor_klog *k)
{
	char *exe = gw_which(name, p->path);
	if (!exe)
		return false;
	gw_child_spec spec = {.path = exe, .argv = argv};
	gw_child_result res;
	gw_child_run(&spec, p->tool_timeout_ns, KLOG_CAP, &res);
	bool ok = gw_child_ok(&res) && res.out_len > 0;
	if (ok)
		split_lines(k, res.out);
	gw_child_free(&res);
	free(exe);
	return ok;
}

void doctor_klog_read(const doctor_probe *p, doctor_klog *k)
{
	memset(k, 0, sizeof *k);
	int err = 0;
	if (p->klog_text) {
		split_lines(k, p->klog_text);
		k->readable = true;
		snprintf(k->source, sizeof k->source, "simulated");
		return;
	}
	if (p->kmsg_path && read_file_or_device(p->kmsg_path, k, &err)) {
		k->readable = true;
		snprintf(k->source, sizeof k->source, "%s", p->kmsg_path);
		return;
	}
	if (p->klog_tools) {
		char *dmesg[] = {"dmesg", NULL};
		if (read_tool(p, "dmesg", dmesg, k)) {
			k->readable = true;
			snprintf(k->source, sizeof k->source, "dmesg");
			return;
		}
		char *jctl[] = {"journalctl", "-k", "-b", "-q", "--no-pager", "-o", "cat", NULL};
		if (read_tool(p, "journalctl", jctl, k)) {
			k->readable = true;
			snprintf(k->source, sizeof k->source, "journalctl -k");
			return;
		}
	}
	snprintf(
	    k->why, sizeof k->why,
	    DOCTOR_("kernel log not readable (%s: %s; run as root or set kernel.dmesg_restrict=0)"),
	    p->kmsg_path ? p->kmsg_path : "kmsg", strerror(err ? err : ENOENT));
}

void doctor_klog_free(doctor_klog *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->lines[i]);
	free(k->lines);
	memset(k, 0, sizeof *k);
}

/* ---- Xid ---- */

bool doctor_xid_parse(const char *line, doctor_xid *out)
{
	/* "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the
	 * bus." */
	const char *x = strstr(line, "Xid (");
	if (!x)
		return false;
	x += 5;
	const char *close = strchr(x, ')');
	if (!close)
		return false;
	if (!strncmp(x, "PCI:", 4))
		x += 4;
	memset(out, 0, sizeof *out);
	snprintf(out->bus, sizeof out->bus, "%.*s", (int)(close - x), x);
	const char *p = close + 1;
	while (*p == ':' || *p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	char *e;
	long v = strtol(p, &e, 10);
	if (v <= 0 || v > 100000)
		return false;
	out->xid = (int)v;
	while (*e == ',' || *e == ' ')
		e++;
	out->text = e;
	return true;
}

const char *doctor_xid_meaning(int xid, bool *hardware)
{
	/* One table of Xid meanings for every face: the device layer's. */
	const gpu_xid_info *x = gpu_xid_lookup(xid);
	*hardware = x && x->hardware;
	return gpu_xid_meaning(xid);
}

/* ---- PCIe AER ---- */

/* A BDF "dddd:bb:dd.f" starting at s; copies it into out. */
static bool bdf_at(const char *s, char out[16])
{
	static const char pat[] = "xxxx:xx:xx.x";
	for (size_t i = 0; i < sizeof pat - 1; i++) {
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	}
	snprintf(out, 16, "%.12s", s);
	return true;
}

static bool first_bdf(const char *s, const char *end, char out[16])
{
	for (const char *p = s; *p && (!end || p < end); p++)
		if ((p == s || !isxdigit((unsigned char)p[-1])) && bdf_at(p, out))
			return true;
	return false;
}

bool doctor_aer_parse(const char *line, doctor_aer *out)
{
	memset(out, 0, sizeof *out);
	const char *bus_err = strstr(line, "PCIe Bus Error");
	const char *aer = strstr(line, "AER:");
	const char *recv = strstr(line, "received");
	if (!bus_err && !(aer && recv && strstr(line, "rror")))
		return false;
	if (strstr(line, "Uncorrect") || strstr(line, "Fatal")) {
		out->uncorrected = true;
		out->fatal = strstr(line, "(Fatal)") || strstr(line, "severity=Fatal") ||
		             strstr(line, "Uncorrected (Fatal");
	} else if (!strstr(line, "Correct")) {
		return false;
	}
	const char *marker = bus_err ? bus_err : aer;
	if (!bus_err && recv) {
		/* "... error received: 0000:3b:00.0" / "... error message received from
		 * 0000:3b:00.0" */
		if (!first_bdf(recv, NULL, out->device))
			return false;
		first_bdf(line, marker, out->reporter);
		out->summary = true;
		return true;
	}
	return first_bdf(line, marker, out->device);
}
