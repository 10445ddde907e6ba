/*
 * smilog_dmon.c - the table `nvidia-smi dmon` prints: a header line of column
 * names after '#' ("# gpu pwr gtemp ..." or, with -o DT, "#Date Time gpu ..."),
 * a line of units, then one line per GPU per interval, '-' for a value it
 * could not read. The header lines come again every so often; older drivers
 * name the GPU temperature "temp".
 */
#include <string.h>

#include "gpu/metrics.h"
#include "store/smilog_int.h"
#include "util/err.h"
#include "util/i18n.h"

static const struct {
	const char *name;
	sl_role role;
	int metric;
} dmon_names[] = {
    {"Date", SLC_DATE, -1},
    {"Time", SLC_TOD, -1},
    {"gpu", SLC_INDEX, -1},
    {"pwr", SLC_METRIC, GM_POWER_DRAW},
    {"gtemp", SLC_METRIC, GM_TEMP_GPU},
    {"temp", SLC_METRIC, GM_TEMP_GPU},
    {"mtemp", SLC_METRIC, GM_TEMP_MEM},
    {"sm", SLC_METRIC, GM_UTIL_GPU},
    {"mem", SLC_METRIC, GM_UTIL_MEM},
    {"enc", SLC_METRIC, GM_UTIL_ENC},
    {"dec", SLC_METRIC, GM_UTIL_DEC},
    {"jpg", SLC_METRIC, GM_UTIL_JPG},
    {"ofa", SLC_METRIC, GM_UTIL_OFA},
    {"mclk", SLC_METRIC, GM_CLK_MEM},
    {"pclk", SLC_METRIC, GM_CLK_SM},
    {"fb", SLC_METRIC, GM_MEM_USED}, /* dmon's "MB" are MiB */
    {"bar1", SLC_METRIC, GM_BAR1_USED},
    {"ccpm", SLC_METRIC, GM_PROT_MEM_USED},
    {"sbecc", SLC_METRIC, GM_ECC_CORR_VOL},
    {"dbecc", SLC_METRIC, GM_ECC_UNCORR_VOL},
    {"pci", SLC_METRIC, GM_PCIE_REPLAY},
    {"rxpci", SLC_METRIC, GM_PCIE_RX},
    {"txpci", SLC_METRIC, GM_PCIE_TX},
    {"smact", SLC_METRIC, GM_GPM_SM_ACTIVE},
    {"smocc", SLC_METRIC, GM_GPM_SM_OCCUPANCY},
    {"tensor", SLC_METRIC, GM_GPM_TENSOR_ACTIVE},
    {"dram", SLC_METRIC, GM_GPM_DRAM_ACTIVE},
};

/* Columns from the first header line; false when it is not dmon's. */
static int dmon_header(sl_build *b, char *head)
{
	char *f[SL_MAX_FIELDS];
	int n = sl_split(head + 1, ' ', f, SL_MAX_FIELDS);
	bool gpu = false;
	int metrics = 0;
	for (int c = 0; c < n; c++) {
		b->cols[c] = (sl_col){SLC_SKIP, -1};
		for (size_t k = 0; k < sizeof dmon_names / sizeof *dmon_names; k++)
			if (!strcmp(f[c], dmon_names[k].name))
				b->cols[c] = (sl_col){dmon_names[k].role, dmon_names[k].metric};
		if (b->cols[c].role == SLC_SKIP)
			sl_note_unknown(b, f[c]);
		gpu |= b->cols[c].role == SLC_INDEX;
		metrics += b->cols[c].role == SLC_METRIC;
		if (b->cols[c].role == SLC_DATE || b->cols[c].role == SLC_TOD)
			b->has_time = true;
	}
	b->ncols = n;
	if (n <= 0 || !gpu || metrics == 0)
		return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
		                   N_("a dmon log starts with \"# gpu pwr gtemp ...\""),
		                   "a '#' line but no dmon header with a gpu column and metrics");
	return 0;
}

int sl_read_dmon(sl_build *b, sl_lines *it)
{
	b->info->format = SMILOG_DMON;
	b->info->header = true;
	char *f[SL_MAX_FIELDS], buf[8192];
	const char *line;
	size_t len;
	bool nl, have_header = false;
	int rc = 0;
	while (rc == 0 && sl_next_line(it, &line, &len, &nl)) {
		if (sl_blank(line, len))
			continue;
		if (len >= sizeof buf)
			return gw_fail_set(b->err, GW_EXIT_ENV, b->name, NULL,
			                   "line %ld is too long for dmon", it->no);
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (buf[0] == '#') { /* the header, its units, and their repetitions */
			if (!have_header)
				rc = dmon_header(b, buf);
			have_header = true;
			continue;
		}
		if (!have_header)
			return gw_fail_set(b->err, GW_EXIT_ENV, b->name,
			                   N_("a dmon log starts with \"# gpu pwr gtemp ...\""),
			                   "line %ld comes before the header", it->no);
		if (!nl) {
			b->info->partial_line = it->no;
			break;
		}
		int n = sl_split(buf, ' ', f, SL_MAX_FIELDS);
		rc = n == b->ncols ? sl_add_fields(b, f, n, it->no) : sl_bad_count(b, nl, it, n);
	}
	return rc;
}
