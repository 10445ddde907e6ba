/* load.c - the one place report and compare read a recording: through the store's reader. */
#include "report/report.h"
#include "store/store.h"
#include "util/fail.h"

int report_load(const char *path, timeline **tl, diag_meta *meta)
{
	*tl = NULL;
	gw_fail err;
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
