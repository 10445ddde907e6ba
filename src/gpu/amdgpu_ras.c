/* amdgpu_ras.c - RAS error counts from sysfs (see amdgpu_ras.h). */
#include "gpu/amdgpu_ras.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "KEY: N" at the start of line p; false when the line is another's or N is no number. */
static bool line_count(const char *p, const char *end, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	if ((size_t)(end - p) < k + 1 || memcmp(p, key, k) != 0 || p[k] != ':')
		return false;
	p += k + 1;
	while (p < end && *p == ' ')
		p++;
	if (p == end || !isdigit((unsigned char)*p))
		return false;
	uint64_t n = 0;
	for (; p < end && isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	if (p < end && *p != '\n' && !isspace((unsigned char)*p))
		return false;
	*v = n;
	return true;
}

bool amdgpu_ras_parse(const char *text, size_t len, uint64_t *ue, uint64_t *ce)
{
	bool got_ue = false, got_ce = false;
	const char *end = text + len;
	for (const char *p = text; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (!got_ue && line_count(p, le, "ue", ue))
			got_ue = true;
		else if (!got_ce && line_count(p, le, "ce", ce))
			got_ce = true;
		p = nl ? nl + 1 : NULL;
	}
	return got_ue && got_ce;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const amdgpu_ras_block *)a)->name, ((const amdgpu_ras_block *)b)->name);
}

/* Read DIR/NAME, which ends in "_err_count", into a block. */
static bool read_block(const char *dir, const char *name, amdgpu_ras_block *b)
{
	size_t n = strlen(name), sfx = strlen("_err_count");
	if (n <= sfx || strcmp(name + n - sfx, "_err_count") != 0 || n - sfx >= sizeof b->name)
		return false;
	char path[PATH_MAX], buf[256];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return false;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t got = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	if (!amdgpu_ras_parse(buf, got, &b->ue, &b->ce))
		return false; /* "Query currently inaccessible" while the GPU resets */
	memcpy(b->name, name, n - sfx);
	b->name[n - sfx] = '\0';
	return true;
}

bool amdgpu_ras_read(const char *dev_path, amdgpu_ras *o)
{
	memset(o, 0, sizeof *o);
	char dir[PATH_MAX];
	if (!dev_path || !*dev_path ||
	    (size_t)snprintf(dir, sizeof dir, "%s/ras", dev_path) >= sizeof dir)
		return false;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *e;
	while ((e = readdir(d)) && o->nblocks < AMDGPU_RAS_MAX_BLOCKS) {
		amdgpu_ras_block *b = &o->blocks[o->nblocks];
		if (!read_block(dir, e->d_name, b))
			continue;
		/* saturate: a damaged count must not wrap the sum to a small one */
		o->ue = o->ue > UINT64_MAX - b->ue ? UINT64_MAX : o->ue + b->ue;
		o->ce = o->ce > UINT64_MAX - b->ce ? UINT64_MAX : o->ce + b->ce;
		o->nblocks++;
	}
	closedir(d);
	if (o->nblocks > 1)
		qsort(o->blocks, (size_t)o->nblocks, sizeof *o->blocks, by_name);
	return o->nblocks > 0;
}
