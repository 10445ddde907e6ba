/* fuzz_exporter_collectors.c - the --collectors CSV parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exporter/exporter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	exp_collectors c;
	char unknown[256], err[256];
	if (exp_collectors_parse((const char *)data, size, &c, unknown, sizeof unknown, err,
	                         sizeof err) == 0) {
		/* Whatever parsed must render: every listed id is a DCGM metric. */
		for (int k = 0; k < c.n; k++)
			if (!gpu_metrics[c.order[k]].dcgm)
				__builtin_trap();
		if (strlen(unknown) >= sizeof unknown)
			__builtin_trap();
		exp_snapshot *s = exp_snapshot_new(1);
		if (s) {
			for (int i = 0; i < GM__COUNT; i++) {
				s->gpus[0].vals.ok[i] = 1;
				s->gpus[0].vals.v[i] = i;
			}
			exp_render_opts o = {.collectors = &c, .hostname = "h", .version = "v"};
			exp_buf b = {0};
			exp_render(s, &o, &b);
			exp_buf_free(&b);
			exp_snapshot_free(s);
		}
		exp_collectors_free(&c);
	}
	return 0;
}
