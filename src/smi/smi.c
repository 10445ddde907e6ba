/* smi.c - GPU selection by index, UUID or PCI bus id, timestamps, errors and -L. */
#include "smi/smi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/err.h"
#include "util/i18n.h"

void smi_timestamp(double wall, char *out, size_t len)
{
	time_t t = (time_t)wall;
	struct tm tm;
	localtime_r(&t, &tm);
	char b[32];
	strftime(b, sizeof b, "%Y/%m/%d %H:%M:%S", &tm);
	int ms = (int)((wall - (double)t) * 1000);
	snprintf(out, len, "%s.%03d", b, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

int smi_bad_field(const char *name, const char *help)
{
	char what[160];
	snprintf(what, sizeof what, _("Field \"%.100s\" is not a valid field to query."), name);
	return gw_error(GW_EXIT_USAGE, "--query", help, "%s", what);
}

char *smi_list_next(char *list, char **save)
{
	for (char *t = strtok_r(list, ",", save); t; t = strtok_r(NULL, ",", save)) {
		while (*t == ' ')
			t++;
		char *end = t + strlen(t);
		while (end > t && end[-1] == ' ')
			*--end = '\0';
		if (*t)
			return t;
	}
	return NULL;
}

/* PCI bus ids name one device however many domain digits they carry: 0000:1b:00.0 = 1B:00.0. */
static bool bus_id_matches(const char *have, const char *want)
{
	unsigned hd, hb, hdev, hf, wd = 0, wb, wdev, wf;
	char tail;
	if (sscanf(have, "%x:%x:%x.%x", &hd, &hb, &hdev, &hf) != 4)
		return false;
	const char *c1 = strchr(want, ':');
	if (!c1 || !strchr(want, '.'))
		return false;
	if (strchr(c1 + 1, ':')) {
		if (sscanf(want, "%x:%x:%x.%x%c", &wd, &wb, &wdev, &wf, &tail) != 4)
			return false;
	} else if (sscanf(want, "%x:%x.%x%c", &wb, &wdev, &wf, &tail) != 3) {
		return false;
	}
	return hd == wd && hb == wb && hdev == wdev && hf == wf;
}

static bool uuid_prefix(const char *uuid, const char *want)
{
	if (!strncasecmp(uuid, "GPU-", 4))
		uuid += 4;
	if (!strncasecmp(want, "GPU-", 4))
		want += 4;
	size_t n = strlen(want);
	return n > 0 && !strncasecmp(uuid, want, n);
}

/* One -i entry: positions (into the opened list) it names, or -1 with a reason. */
static int match_one(gpu_ctx *c, const char *tok, char *why, size_t whylen)
{
	int n = gpu_count(c), found = -1, hits = 0;
	char *e;
	long v = strtol(tok, &e, 10);
	if (!*e && tok[0] >= '0' && tok[0] <= '9') {
		for (int k = 0; k < n; k++)
			if (gpu_static_info(c, k)->index == v)
				return k;
		snprintf(why, whylen, _("no GPU has index %ld"), v);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		const gpu_static *s = gpu_static_info(c, k);
		if (bus_id_matches(s->pci_bus_id, tok))
			return k;
		if (uuid_prefix(s->uuid, tok)) {
			found = k;
			hits++;
		}
	}
	if (hits == 1)
		return found;
	if (hits)
		snprintf(why, whylen, _("'%s' matches %d GPUs"), tok, hits);
	else
		snprintf(why, whylen, _("no GPU has the UUID or PCI bus id '%s'"), tok);
	return -1;
}

int smi_select(gpu_ctx *c, const char *list, smi_sel *out)
{
	memset(out, 0, sizeof *out);
	int n = gpu_count(c);
	if (!list) {
		for (int k = 0; k < n && k < GPU_MAX; k++)
			out->idx[out->n++] = k;
		return 0;
	}
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return gw_error(GW_EXIT_ENV, "-i", NULL, "out of memory");
	int rc = 0;
	for (char *t = smi_list_next(copy, &save); t && !rc; t = smi_list_next(NULL, &save)) {
		char why[160];
		int k = match_one(c, t, why, sizeof why);
		if (k < 0) {
			rc = gw_error(GW_EXIT_USAGE, "-i",
			              N_("gpuwhy query -L lists indices and UUIDs"), "%s", why);
			break;
		}
		bool dup = false;
		for (int j = 0; j < out->n; j++)
			dup |= out->idx[j] == k;
		if (!dup && out->n < GPU_MAX)
			out->idx[out->n++] = k;
	}
	free(copy);
	if (!rc && out->n == 0)
		rc = gw_error(GW_EXIT_USAGE, "-i", N_("e.g. -i 0 or -i 0,1"), "empty GPU list");
	return rc;
}

void smi_list(gpu_ctx *c, const smi_sel *s)
{
	for (int k = 0; k < s->n; k++) {
		const gpu_static *st = gpu_static_info(c, s->idx[k]);
		printf("GPU %d: %s (UUID: %s)\n", st->index, st->name[0] ? st->name : "N/A",
		       st->uuid[0] ? st->uuid : "N/A");
		gpu_mig m[GPU_MIG_MAX];
		int n = gpu_mig_devices(c, s->idx[k], m, GPU_MIG_MAX);
		for (int j = 0; j < n; j++)
			printf("  MIG %-11s Device %2d: (UUID: %s)\n",
			       m[j].profile[0] ? m[j].profile : "N/A", m[j].index,
			       m[j].uuid[0] ? m[j].uuid : "N/A");
	}
}
