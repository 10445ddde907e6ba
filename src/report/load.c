/*
 * load.c - the one place report and compare read their input: a recording
 * through the store's reader, or a log the user already has (nvidia-smi
 * --query-gpu CSV, dmon, gpuwhy export CSV) through the log reader. The
 * content decides which, never the file's name.
 */
#include <stdio.h>
#include <unistd.h>

#include "report/report.h"
#include "store/smilog.h"
#include "store/store.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/termsafe.h"

/* What the log reader had to tell, one line each on stderr (the report itself stays data). */
static void log_notes(const char *path, const smilog_info *in)
{
	char safe[512];
	gw_term_safe(path, safe, sizeof safe);
	fprintf(stderr,
	        _("gpuwhy: %s: read as %s: GPU counters only, no host, process or step data; "
	          "the checks that need them say \"not checked\"\n"),
	        safe, smilog_format_name(in->format));
	if (in->unknown[0]) {
		char u[512];
		gw_term_safe(in->unknown, u, sizeof u);
		fprintf(stderr, _("gpuwhy: %s: fields not in gpuwhy's metric table, ignored: %s\n"),
		        safe, u);
	}
	if (in->partial_line)
		fprintf(stderr,
		        _("gpuwhy: %s: line %ld is incomplete (cut off while written), ignored\n"),
		        safe, in->partial_line);
	if (in->no_gpu_id)
		fprintf(
		    stderr,
		    _("gpuwhy: %s: no index, pci.bus_id or uuid field: every row is taken as one "
		      "GPU (add index to the --query-gpu list when there are several)\n"),
		    safe);
	if (in->fields_given_unused)
		fprintf(stderr, _("gpuwhy: %s: --smi-fields ignored: the log has its own header\n"),
		        safe);
}

static int load_log(const char *path, const smilog_opts *src, timeline **tl, diag_meta *meta)
{
	gw_fail err;
	smilog_info info;
	if (smilog_read(path, src, tl, &info, &err) != 0)
		return gw_fail_print(&err);
	log_notes(path, &info);
	diag_meta_from_timeline(meta, *tl);
	return 0;
}

int report_load(const char *path, const smilog_opts *src, timeline **tl, diag_meta *meta)
{
	*tl = NULL;
	gw_fail err;
	/* A recording being written may have its first pages only in its -wal. */
	char wal[4096];
	snprintf(wal, sizeof wal, "%s-wal", path);
	FILE *f = fopen(path, "rb");
	if (f) {
		fclose(f);
		if (!smilog_is_sqlite(path) && access(wal, F_OK) != 0)
			return load_log(path, src, tl, meta);
	}
	if (store_read_timeline(path, tl, &err) != 0)
		return gw_fail_print(&err);
	store_meta *m = NULL;
	if (store_read_meta(path, &m, &err) != 0)
		gw_fail_print(&err);
	else if (m) {
		for (int i = 0; i < m->n; i++)
			diag_meta_set(meta, m->keys[i], m->values[i]);
		store_meta_free(m);
	}
	diag_meta_from_timeline(meta, *tl);
	return 0;
}
