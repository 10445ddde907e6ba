/*
 * libFuzzer target: the log reader (nvidia-smi --query-gpu CSV with or
 * without header, dmon with or without -o DT, gpuwhy export CSV) on arbitrary
 * bytes. The first byte picks what the user passed: --smi-fields, --interval.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "store/smilog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	smilog_opts o = {
	    .fields = data[0] & 1 ? "timestamp,index,utilization.gpu,memory.used,power.draw" : NULL,
	    .interval = data[0] & 2 ? 1.0 : 0};
	timeline *tl = NULL;
	smilog_info info;
	gw_fail err;
	int rc = smilog_parse((const char *)data + 1, size - 1, "fuzz", &o, &tl, &info, &err);
	if (rc == 0) {
		/* A timeline always has samples in time order and never a made-up host series. */
		if (!tl || tl->n <= 0 || tl->ncpu != 0)
			__builtin_trap();
		for (int s = 1; s < tl->n; s++)
			if (!(tl->t[s] >= tl->t[s - 1]))
				__builtin_trap();
		tl_free(tl);
	} else if (tl || !err.why[0])
		__builtin_trap();
	return 0;
}
