/* host_pcitopo.c - NICs and the PCIe distance between two devices, read from sysfs. */
#include "host/host_pcitopo.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pcitopo_sysfs_bdf(const char *bus_id, char *out, int outlen)
{
	unsigned dom, bus, dev, fn;
	char tail;
	if (!bus_id || bus_id[strspn(bus_id, "0123456789abcdefABCDEF:.")] != '\0' ||
	    sscanf(bus_id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 || bus > 0xff ||
	    dev > 0x1f || fn > 7 || dom > 0xffff)
		return 0;
	snprintf(out, (size_t)outlen, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 1;
}

/* The PCI function a sysfs class entry's "device" link ends at, or 0. */
static int class_bdf(const char *root, const char *cls, const char *name, char *bdf, int len)
{
	char link[PATH_MAX], real[PATH_MAX];
	snprintf(link, sizeof link, "%s/sys/class/%s/%s/device", root, cls, name);
	if (!realpath(link, real))
		return 0;
	const char *base = strrchr(real, '/');
	return pcitopo_sysfs_bdf(base ? base + 1 : real, bdf, len);
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok;
}

static int numa_of(const char *root, const char *bdf)
{
	char p[PATH_MAX];
	int v;
	snprintf(p, sizeof p, "%s/sys/bus/pci/devices/%s/numa_node", root, bdf);
	return read_int(p, &v) && v >= 0 ? v : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const pcitopo_nic *)a)->name, ((const pcitopo_nic *)b)->name);
}

static int scan_class(const char *root, const char *cls, int rdma, pcitopo_nic *out, int n, int max)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/sys/class/%s", root, cls);
	DIR *d = opendir(dir);
	if (!d)
		return n;
	int first = n;
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		char bdf[16];
		if (!class_bdf(root, cls, e->d_name, bdf, sizeof bdf))
			continue; /* virtual: no PCI device behind it */
		int dup = 0;
		for (int k = 0; k < first && !dup; k++)
			dup = !strcmp(out[k].bdf, bdf);
		if (dup)
			continue;
		snprintf(out[n].name, sizeof out[n].name, "%.63s", e->d_name);
		snprintf(out[n].bdf, sizeof out[n].bdf, "%s", bdf);
		out[n].numa_node = numa_of(root, bdf);
		out[n].rdma = rdma;
		n++;
	}
	closedir(d);
	qsort(out + first, (size_t)(n - first), sizeof *out, by_name);
	return n;
}

int pcitopo_nics(const char *root, pcitopo_nic *out, int max)
{
	int n = scan_class(root, "infiniband", 1, out, 0, max);
	return scan_class(root, "net", 0, out, n, max);
}

/* The chain of PCI functions from the host bridge down to bdf: "pci0000:17", bridges..., bdf. */
static int chain(const char *root, const char *bdf, char parts[][32], int max)
{
	char link[PATH_MAX], real[PATH_MAX];
	snprintf(link, sizeof link, "%s/sys/bus/pci/devices/%s", root, bdf);
	if (!realpath(link, real))
		return -1;
	char *p = strstr(real, "/pci");
	if (!p)
		return -1;
	int n = 0;
	for (char *save = NULL, *t = strtok_r(p, "/", &save); t && n < max;
	     t = strtok_r(NULL, "/", &save))
		snprintf(parts[n++], sizeof parts[0], "%s", t);
	return n;
}

int pcitopo_level(const char *root, const char *bdf_a, const char *bdf_b)
{
	char a[16], b[16];
	if (!pcitopo_sysfs_bdf(bdf_a, a, sizeof a) || !pcitopo_sysfs_bdf(bdf_b, b, sizeof b))
		return -1;
	if (!strcmp(a, b))
		return 0;
	char pa[32][32], pb[32][32];
	int na = chain(root, a, pa, 32), nb = chain(root, b, pb, 32);
	if (na < 2 || nb < 2)
		return -1;
	if (strcmp(pa[0], pb[0])) {
		int x = numa_of(root, a), y = numa_of(root, b);
		return x >= 0 && x == y ? 40 : 50;
	}
	int common = 0;
	while (common < na && common < nb && !strcmp(pa[common], pb[common]))
		common++;
	if (common <= 1)
		return 30; /* only the host bridge */
	/* bridges from the common ancestor down to each device, the device excluded */
	int ha = na - common - 1, hb = nb - common - 1;
	return ha <= 1 && hb <= 1 ? 10 : 20;
}
