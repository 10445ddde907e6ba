/* fuzz_exporter_collectors.c - the --collectors CSV parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exporter/buf.h"
#include "exporter/collectors.h"
#include "exporter/exposition.h"
#include "exporter/frame.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	exporter_collectors c;
	char unknown[256];
	if (exporter_collectors_parse((const char *)data, size, &c, unknown, sizeof unknown,
	                              NULL) == 0) {
		/* Whatever parsed must render: every listed id is a DCGM metric. */
		for (int k = 0; k < c.n; k++)
			if (!gpu_metrics[c.order[k]].dcgm)
				__builtin_trap();
		if (strlen(unknown) >= sizeof unknown)
			__builtin_trap();
		exporter_frame *f = exporter_frame_new(1);
		snapshot sn;
		snapshot_init(&sn, 1);
		if (f) {
			for (int i = 0; i < GM__COUNT; i++) {
				sn.gpu[0].ok[i] = 1;
				sn.gpu[0].v[i] = i;
			}
			f->snap = &sn;
			f->gpus[0].vals = &sn.gpu[0];
			exporter_render_opts o = {
			    .collectors = &c, .hostname = "h", .version = "v"};
			exporter_buf b = {0};
			exporter_render(f, &o, &b);
			gw_sb_free(&b);
			exporter_frame_free(f);
		}
		snapshot_free(&sn);
		exporter_collectors_free(&c);
	}
	return 0;
}
