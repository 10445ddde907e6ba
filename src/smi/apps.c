/* apps.c - nvidia-smi's --query-compute-apps and --query-retired-pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi/smi.h"
#include "gpu/metrics.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

enum {
	AF_TIMESTAMP,
	AF_GPU_NAME,
	AF_GPU_BUS_ID,
	AF_GPU_SERIAL,
	AF_GPU_UUID,
	AF_PID,
	AF_PROCESS_NAME,
	AF_USED_MEMORY,
	PF_ADDRESS,
	PF_TIMESTAMP,
	PF_CAUSE,
};

static const struct {
	const char *name, *alias, *unit;
	int id;
	bool apps, pages;
} names[] = {
    {"timestamp", NULL, "", AF_TIMESTAMP, true, true},
    {"gpu_name", NULL, "", AF_GPU_NAME, true, true},
    {"gpu_bus_id", NULL, "", AF_GPU_BUS_ID, true, true},
    {"gpu_serial", NULL, "", AF_GPU_SERIAL, true, true},
    {"gpu_uuid", NULL, "", AF_GPU_UUID, true, true},
    {"pid", NULL, "", AF_PID, true, false},
    {"process_name", "name", "", AF_PROCESS_NAME, true, false},
    {"used_gpu_memory", "used_memory", "MiB", AF_USED_MEMORY, true, false},
    {"retired_pages.address", NULL, "", PF_ADDRESS, false, true},
    {"retired_pages.timestamp", NULL, "", PF_TIMESTAMP, false, true},
    {"retired_pages.cause", NULL, "", PF_CAUSE, false, true},
};
#define NNAMES (sizeof names / sizeof *names)

static int parse(const char *list, smi_fields *f, bool apps)
{
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return gw_error(GW_EXIT_ENV, "--query", NULL, "out of memory");
	f->n = 0;
	int rc = 0;
	for (char *t = smi_list_next(copy, &save); t && !rc; t = smi_list_next(NULL, &save)) {
		int found = -1;
		for (size_t k = 0; k < NNAMES && found < 0; k++)
			if ((apps ? names[k].apps : names[k].pages) &&
			    (!strcmp(names[k].name, t) ||
			     (names[k].alias && !strcmp(names[k].alias, t))))
				found = (int)k;
		if (found < 0)
			rc = smi_bad_field(
			    t, apps ? "fields: timestamp, gpu_name, gpu_bus_id, gpu_serial, "
			              "gpu_uuid, pid, process_name, used_gpu_memory"
			            : "fields: timestamp, gpu_name, gpu_bus_id, gpu_serial, "
			              "gpu_uuid, retired_pages.address, "
			              "retired_pages.timestamp, retired_pages.cause");
		else if (f->n >= (int)(sizeof f->fields / sizeof *f->fields))
			rc = gw_error(GW_EXIT_USAGE, "--query", NULL, "too many fields");
		else
			f->fields[f->n++] = found;
	}
	free(copy);
	if (!rc && f->n == 0)
		rc = gw_error(GW_EXIT_USAGE, "--query", N_("e.g. pid,process_name,used_gpu_memory"),
		              "no fields given");
	return rc;
}

int smi_apps_parse(const char *list, smi_fields *f)
{
	return parse(list, f, true);
}

int smi_pages_parse(const char *list, smi_fields *f)
{
	return parse(list, f, false);
}

static void header(const smi_fields *f)
{
	for (int k = 0; k < f->n; k++) {
		printf("%s%s", k ? ", " : "", names[f->fields[k]].name);
		if (names[f->fields[k]].unit[0])
			printf(" [%s]", names[f->fields[k]].unit);
	}
	putchar('\n');
}

static const char *or_na(const char *s)
{
	return s && *s ? s : "[N/A]";
}

/* The columns every row has: when and which GPU. */
static bool common_cell(int id, const gpu_static *st, const char *ts)
{
	switch (id) {
	case AF_TIMESTAMP:
		fputs(ts, stdout);
		return true;
	case AF_GPU_NAME:
		fputs(or_na(st->name), stdout);
		return true;
	case AF_GPU_BUS_ID:
		fputs(or_na(st->pci_bus_id), stdout);
		return true;
	case AF_GPU_SERIAL:
		fputs(or_na(st->serial), stdout);
		return true;
	case AF_GPU_UUID:
		fputs(or_na(st->uuid), stdout);
		return true;
	default:
		return false;
	}
}

void smi_apps_print(gpu_ctx *c, const smi_sel *s, const smi_fields *f, bool with_header, bool units)
{
	char ts[64];
	smi_timestamp(gw_wall_s(), ts, sizeof ts);
	if (with_header)
		header(f);
	gpu_proc procs[256];
	for (int k = 0; k < s->n; k++) {
		int i = s->idx[k];
		const gpu_static *st = gpu_static_info(c, i);
		int np = gpu_processes(c, i, procs, 256);
		for (int p = 0; p < np; p++) {
			/* Compute processes only, as nvidia-smi's query: graphics-only ones are not
			 * apps. */
			if (!(procs[p].type & GPU_PROC_COMPUTE))
				continue;
			for (int j = 0; j < f->n; j++) {
				int id = names[f->fields[j]].id;
				if (j)
					fputs(", ", stdout);
				if (common_cell(id, st, ts))
					continue;
				char name[256];
				switch (id) {
				case AF_PID:
					printf("%u", procs[p].pid);
					break;
				case AF_PROCESS_NAME:
					fputs(gpu_process_name(c, procs[p].pid, name, sizeof name)
					          ? name
					          : "[N/A]",
					      stdout);
					break;
				case AF_USED_MEMORY:
					if (!procs[p].mem_ok)
						fputs("[N/A]", stdout);
					else
						printf(units ? "%llu MiB" : "%llu",
						       (unsigned long long)(procs[p].mem_bytes /
						                            1048576ULL));
					break;
				default:
					break;
				}
			}
			putchar('\n');
		}
	}
}

#define PAGES_MAX 4096

/*
 * One row per retired page; a cause without pages (or a GPU that does not
 * retire pages) still gets one row with [N/A] address and time, as the
 * nvidia-smi 590 capture of an H100 shows. NVML's v1 call has no retirement
 * time, so retired_pages.timestamp is [N/A].
 */
void smi_pages_print(gpu_ctx *c, const smi_sel *s, const smi_fields *f, bool with_header)
{
	static const char *const causes[2] = {"Single Bit ECC", "Double Bit ECC"};
	char ts[64];
	smi_timestamp(gw_wall_s(), ts, sizeof ts);
	if (with_header)
		header(f);
	unsigned long long *addrs = calloc(PAGES_MAX, sizeof *addrs);
	if (!addrs)
		return;
	for (int k = 0; k < s->n; k++) {
		int i = s->idx[k];
		const gpu_static *st = gpu_static_info(c, i);
		for (int cause = 0; cause < 2; cause++) {
			int n = gpu_retired_pages(c, i, cause, addrs, PAGES_MAX);
			int rows = n > 0 ? (n < PAGES_MAX ? n : PAGES_MAX) : 1;
			for (int r = 0; r < rows; r++) {
				for (int j = 0; j < f->n; j++) {
					int id = names[f->fields[j]].id;
					if (j)
						fputs(", ", stdout);
					if (common_cell(id, st, ts))
						continue;
					if (id == PF_ADDRESS && n > 0)
						printf("0x%016llX", addrs[r]);
					else if (id == PF_CAUSE)
						fputs(causes[cause], stdout);
					else
						fputs("[N/A]", stdout);
				}
				putchar('\n');
			}
		}
	}
	free(addrs);
}
