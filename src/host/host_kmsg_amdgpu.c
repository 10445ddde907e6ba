/*
 * host_kmsg_amdgpu.c - the amdgpu driver's fault lines in the kernel log: a
 * ring (command queue) that timed out and the GPU resets that follow, the
 * AMD counterpart of an Xid (see host_kmsg.h for the forms recognised).
 */
#include "host/host_int.h"
#include "host/host_kmsg.h"

#include <ctype.h>
#include <string.h>

static const char *find_in(const char *s, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = s; p + n <= end; p++)
		if (memcmp(p, needle, n) == 0)
			return p;
	return NULL;
}

/* "amdgpu 0000:08:00.0:" before msg: the GPU's address; "" when the line has none. */
static void device_of(const char *s, const char *end, char *pci, size_t size)
{
	const char *a = find_in(s, end, "amdgpu ");
	if (!a)
		return;
	const char *p = a + strlen("amdgpu ");
	static const char pat[] = "xxxx:xx:xx.x:";
	for (size_t i = 0; i < sizeof pat - 1; i++) {
		if (p + i >= end)
			return;
		if (pat[i] == 'x' ? !isxdigit((unsigned char)p[i]) : p[i] != pat[i])
			return;
	}
	char bdf[16];
	for (size_t i = 0; i < 12; i++)
		bdf[i] = (char)tolower((unsigned char)p[i]);
	host_copy_name(pci, size, bdf, 12);
}

static void set_msg(host_kmsg_event *out, const char *s, const char *end)
{
	while (end > s && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t'))
		end--;
	host_copy_name(out->msg, sizeof out->msg, s, (size_t)(end - s));
}

/* "ring gfx_0.0.0 timeout, signaled seq=57638, emitted seq=57641" */
static int ring_timeout(const char *r, const char *end, host_kmsg_event *out)
{
	const char *name = r + strlen("ring ");
	const char *sp = memchr(name, ' ', (size_t)(end - name));
	if (!sp || sp == name || (size_t)(end - sp) < strlen(" timeout") ||
	    memcmp(sp, " timeout", strlen(" timeout")) != 0)
		return 0;
	for (const char *q = name; q < sp; q++)
		if (!isalnum((unsigned char)*q) && *q != '_' && *q != '.')
			return 0;
	out->kind = HOST_KMSG_AMDGPU_RING_TIMEOUT;
	host_copy_name(out->ring, sizeof out->ring, name, (size_t)(sp - name));
	set_msg(out, r, end);
	return 1;
}

/* "GPU reset begin!", "GPU reset(2) succeeded!", "GPU reset(3) failed" */
static int gpu_reset(const char *g, const char *end, host_kmsg_event *out)
{
	const char *p = g + strlen("GPU reset");
	host_cur c = {p, end};
	if (host_cur_lit(&c, " begin!")) {
		out->kind = HOST_KMSG_AMDGPU_RESET;
	} else if (host_cur_lit(&c, "(")) {
		uint64_t n;
		if (!host_cur_u64(&c, &n) || !host_cur_lit(&c, ")") || n > INT32_MAX)
			return 0;
		out->xid = (int)n; /* the driver's count of resets of this GPU */
		out->xid_ok = true;
		if (host_cur_lit(&c, " succeeded!"))
			out->kind = HOST_KMSG_AMDGPU_RESET_OK;
		else if (host_cur_lit(&c, " failed"))
			out->kind = HOST_KMSG_AMDGPU_RESET_FAILED;
		else
			return 0;
	} else {
		return 0; /* "GPU reset succeeded, trying to resume" is the middle of one reset */
	}
	set_msg(out, g, end);
	return 1;
}

int host_kmsg_parse_amdgpu(const char *s, const char *end, host_kmsg_event *out)
{
	if (!find_in(s, end, "amdgpu"))
		return 0;
	char pci[32] = "";
	device_of(s, end, pci, sizeof pci);
	const char *r = find_in(s, end, "ring ");
	const char *g = find_in(s, end, "GPU reset");
	int got = 0;
	if (r && (r == s || r[-1] == ' ') && find_in(r, end, " timeout"))
		got = ring_timeout(r, end, out);
	else if (g && (g == s || g[-1] == ' '))
		got = gpu_reset(g, end, out);
	if (got)
		memcpy(out->pci, pci, sizeof out->pci);
	return got;
}
