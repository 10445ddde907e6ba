/*
 * smilog_csv.c - the CSV of nvidia-smi --query-gpu (header or noheader, units
 * or nounits, any field order) and the gpu table of gpuwhy export.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "gpu/metrics.h"
#include "store/smilog_int.h"
#include "util/err.h"
#include "util/i18n.h"

/* The role of a --query-gpu field name (its " [unit]" already cut). */
static sl_col query_col(const char *name)
{
	if (!strcasecmp(name, "timestamp"))
		return (sl_col){SLC_STAMP, -1};
	int m = gpu_metric_lookup(name);
	if (m < 0)
		return (sl_col){SLC_SKIP, -1};
	switch (m) {
	case GM_INDEX:
		return (sl_col){SLC_INDEX, m};
	case GM_UUID:
		return (sl_col){SLC_UUID, m};
	case GM_PCI_BUS_ID:
		return (sl_col){SLC_BUS, m};
	case GM_NAME:
		return (sl_col){SLC_NAME, m};
	case GM_DRIVER:
		return (sl_col){SLC_DRIVER, m};
	}
	/* Texts (serial, vbios, ...) are facts, not series. */
	if (gpu_metrics[m].fmt == GMF_STR || gpu_metrics[m].fmt == GMF_DEPRECATED)
		return (sl_col){SLC_SKIP, m};
	return (sl_col){SLC_METRIC, m};
}

/* A header field: a query name, maybe with its unit in brackets ("memory.used [MiB]"). */
static bool header_field(const char *f)
{
	if (!isalpha((unsigned char)*f))
		return false;
	const char *p = f;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
		p++;
	if (!*p)
		return true;
	return p[0] == ' ' && p[1] == '[' && strchr(p, ']') && strchr(p, ']')[1] == '\0';
}

/* Set the columns from a header's (or --smi-fields') names. Returns the metrics found. */
static int set_columns(sl_build *b, char **f, int n)
{
	int metrics = 0;
	b->ncols = n;
	for (int c = 0; c < n; c++) {
		char *br = strstr(f[c], " [");
		if (br)
			*br = '\0';
		b->cols[c] = query_col(sl_trim(f[c]));
		if (b->cols[c].role == SLC_STAMP)
			b->has_time = true;
		if (b->cols[c].role == SLC_METRIC)
			metrics++;
		if (b->cols[c].role == SLC_SKIP && b->cols[c].metric < 0)
			sl_note_unknown(b, f[c]);
	}
	return metrics;
}

/* The header, or --smi-fields for a log without one. Returns 0 or an error code. */
static int query_header(sl_build *b, sl_lines *it, char *line, bool *first_is_data)
{
	char *f[SL_MAX_FIELDS];
	char copy[8192];
	snprintf(copy, sizeof copy, "%s", line);
	int n = sl_split(copy, ',', f, SL_MAX_FIELDS);
	bool header = n > 0;
	for (int c = 0; c < n && header; c++)
		header = header_field(f[c]);
	*first_is_data = !header;
	b->info->header = header;
	/* Data of nvidia-smi has numbers or its [N/A]: a line of words is some other file. */
	bool data = false;
	for (int c = 0; c < n && !header && !data; c++)
		data = isdigit((unsigned char)f[c][0]) || f[c][0] == '[';
	if (!header && !data)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
		                   N_("give a .gpuwhy recording, an nvidia-smi --query-gpu CSV or "
		                      "dmon log, or a gpuwhy export CSV"),
		                   "neither a recording nor a log gpuwhy reads");
	if (header) {
		b->info->fields_given_unused = b->o && b->o->fields;
	} else {
		if (!b->o || !b->o->fields)
			return gw_fail_set(
			    b->err, GW_EXIT_USAGE, b->name,
			    N_("pass the --query-gpu list it was written with: --smi-fields "
			       "timestamp,index,utilization.gpu,memory.used,..."),
			    "the log has no header line (--format=csv,noheader)");
		snprintf(copy, sizeof copy, "%s", b->o->fields);
		n = sl_split(copy, ',', f, SL_MAX_FIELDS);
	}
	if (n < 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name, NULL, "more than %d fields",
		                   SL_MAX_FIELDS);
	if (set_columns(b, f, n) == 0)
		return gw_fail_set(b->err, header ? GW_EXIT_ENV : GW_EXIT_USAGE,
		                   header ? b->name : "--smi-fields",
		                   N_("fields such as utilization.gpu, memory.used, power.draw"),
		                   "no GPU metric gpuwhy knows among the fields");
	(void)it;
	return 0;
}

/* Read the data lines; the first one is already in line when first_is_data. */
static int read_rows(sl_build *b, sl_lines *it, char sep, const char *line, size_t len, bool had_nl,
                     bool first_is_data)
{
	char *f[SL_MAX_FIELDS];
	char *copy = NULL;
	size_t cap = 0;
	int rc = 0;
	bool have = first_is_data;
	while (rc == 0 && (have || sl_next_line(it, &line, &len, &had_nl))) {
		have = false;
		if (sl_blank(line, len))
			continue;
		if (!had_nl) { /* cut short by a writer that was stopped: not a sample */
			b->info->partial_line = it->no;
			break;
		}
		if (len + 1 > cap) {
			cap = len + 1;
			copy = realloc(copy, cap);
			if (!copy)
				return gw_fail_set(b->err, GW_EXIT_ENV, "memory", NULL,
				                   "out of memory");
		}
		memcpy(copy, line, len);
		copy[len] = '\0';
		int n = sl_split(copy, sep, f, SL_MAX_FIELDS);
		if (n != b->ncols)
			rc = sl_bad_count(b, had_nl, it, n);
		else
			rc = sl_add_fields(b, f, n, it->no);
	}
	free(copy);
	return rc;
}

/* The first line that is not blank, as a string; false at the end. */
static bool first_line(sl_lines *it, char *out, size_t outlen, const char **line, size_t *n,
                       bool *nl)
{
	while (sl_next_line(it, line, n, nl))
		if (!sl_blank(*line, *n)) {
			size_t k = *n < outlen - 1 ? *n : outlen - 1;
			memcpy(out, *line, k);
			out[k] = '\0';
			return true;
		}
	return false;
}

int sl_read_query_csv(sl_build *b, sl_lines *it)
{
	b->info->format = SMILOG_QUERY_CSV;
	char head[8192];
	const char *line;
	size_t n;
	bool nl, data;
	if (!first_line(it, head, sizeof head, &line, &n, &nl))
		return 0;
	int rc = query_header(b, it, head, &data);
	if (rc)
		return rc;
	return read_rows(b, it, ',', line, n, nl, data);
}

int sl_read_export_csv(sl_build *b, sl_lines *it)
{
	char *f[SL_MAX_FIELDS];
	b->info->format = SMILOG_EXPORT_CSV;
	b->info->header = true;
	char head[16384];
	const char *line;
	size_t n;
	bool nl;
	if (!first_line(it, head, sizeof head, &line, &n, &nl))
		return 0;
	int k = sl_split(head, ',', f, SL_MAX_FIELDS);
	if (k < 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name, NULL, "more than %d fields",
		                   SL_MAX_FIELDS);
	b->ncols = k;
	b->has_time = true;
	for (int c = 0; c < k; c++) {
		b->cols[c] = (sl_col){SLC_SKIP, -1};
		if (c < 3) {
			b->cols[c].role = c == 0 ? SLC_EPOCH : c == 1 ? SLC_INDEX : SLC_LOST;
			continue;
		}
		char col[128];
		for (int m = 0; m < GM__COUNT; m++) {
			gpu_metric_column((gpu_metric_id)m, col, sizeof col);
			if (!strcmp(col, f[c]) && gpu_metrics[m].fmt != GMF_STR)
				b->cols[c] = (sl_col){SLC_METRIC, m};
		}
		if (b->cols[c].role == SLC_SKIP)
			sl_note_unknown(b, f[c]);
	}
	return read_rows(b, it, ',', line, n, nl, false);
}
