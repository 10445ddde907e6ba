/* amdgpu_pciids.c - GPU names from pci.ids (see amdgpu_pciids.h). */
#include "gpu/amdgpu_pciids.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Where the scan is: before the vendor, in its block, in the device's block, done. */
typedef enum { S_VENDOR, S_DEVICES, S_SUBSYS, S_DONE } scan_state;

typedef struct {
	amdgpu_pciids_query *q;
	scan_state st;
	bool found;
} scan;

/* N hex digits at s (exactly N, then a blank); false otherwise. */
static bool hex_at(const char *s, size_t len, size_t n, unsigned *v)
{
	if (len < n + 1)
		return false;
	unsigned x = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		x = x * 16 + (unsigned)(isdigit((unsigned char)s[i])
		                            ? s[i] - '0'
		                            : tolower((unsigned char)s[i]) - 'a' + 10);
	}
	if (s[n] != ' ')
		return false;
	*v = x;
	return true;
}

/* The name after the id: blanks skipped, trailing blanks and control characters dropped. */
static void copy_name(char *dst, size_t size, const char *s, size_t len)
{
	while (len > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < size; i++)
		dst[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	dst[o] = '\0';
}

/* One line (without its newline). */
static void scan_line(scan *sc, const char *s, size_t len)
{
	unsigned a, b;
	if (sc->st == S_DONE || len == 0 || s[0] == '#')
		return;
	if (s[0] != '\t') { /* a vendor line or the class list: the vendor's block ends */
		if (sc->st != S_VENDOR)
			sc->st = S_DONE;
		else if (hex_at(s, len, 4, &a) && a == sc->q->vendor)
			sc->st = S_DEVICES;
		return;
	}
	if (sc->st == S_VENDOR)
		return;
	if (len > 1 && s[1] == '\t') { /* a subsystem line */
		if (sc->st == S_SUBSYS && hex_at(s + 2, len - 2, 4, &a) &&
		    hex_at(s + 7, len > 7 ? len - 7 : 0, 4, &b) && a == sc->q->subsys_vendor &&
		    b == sc->q->subsys_device && !sc->q->subsystem_name[0])
			copy_name(sc->q->subsystem_name, sizeof sc->q->subsystem_name, s + 11,
			          len - 11);
		return;
	}
	if (sc->st == S_SUBSYS) { /* the next device: the one wanted is complete */
		sc->st = S_DONE;
		return;
	}
	if (hex_at(s + 1, len - 1, 4, &a) && a == sc->q->device) {
		copy_name(sc->q->device_name, sizeof sc->q->device_name, s + 5, len - 5);
		sc->found = true;
		sc->st = S_SUBSYS;
	}
}

static void scan_start(scan *sc, amdgpu_pciids_query *q)
{
	q->device_name[0] = q->subsystem_name[0] = '\0';
	sc->q = q;
	sc->st = S_VENDOR;
	sc->found = false;
}

bool amdgpu_pciids_find(const char *text, size_t len, amdgpu_pciids_query *q)
{
	scan sc;
	scan_start(&sc, q);
	const char *end = text + len;
	for (const char *p = text; p && p < end && sc.st != S_DONE;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t n = (size_t)(le - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		scan_line(&sc, p, n);
		p = nl ? nl + 1 : NULL;
	}
	return sc.found;
}

static bool lookup_file(const char *path, amdgpu_pciids_query *q)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	scan sc;
	scan_start(&sc, q);
	char line[512];
	while (sc.st != S_DONE && fgets(line, sizeof line, f)) {
		size_t n = strlen(line);
		bool whole = n > 0 && line[n - 1] == '\n';
		if (!whole && !feof(f)) { /* longer than any real line: skip the rest of it */
			int ch;
			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			continue;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			n--;
		scan_line(&sc, line, n);
	}
	fclose(f);
	return sc.found;
}

bool amdgpu_pciids_lookup(const char *root, amdgpu_pciids_query *q)
{
	static const char *const paths[] = {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"};
	q->device_name[0] = q->subsystem_name[0] = '\0';
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof path, "%s%s", root ? root : "", paths[i]) >=
		    sizeof path)
			continue;
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		fclose(f);
		return lookup_file(path, q); /* the first database that opens decides */
	}
	return false;
}

const char *amdgpu_pciids_name(const amdgpu_pciids_query *q)
{
	return q->subsystem_name[0] ? q->subsystem_name : q->device_name;
}
