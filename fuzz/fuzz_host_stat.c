/*
 * libFuzzer target: host_parse_stat on arbitrary /proc/stat text. The input is split at
 * its first NUL into two snapshots, and the rates between them are computed,
 * so matching by name/id and counters going backwards are exercised too.
 */
#include "host/host.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const char *nul = memchr(buf, '\0', size);
	size_t n0 = nul ? (size_t)(nul - buf) : size;
	host_sysraw a = {0}, b = {0};
	a.mono_ns = 1000000000;
	b.mono_ns = 2000000000;
	a.stat_ok = host_parse_stat(buf, n0, &a.stat) == 0;
	b.stat_ok = nul && host_parse_stat(nul + 1, size - n0 - 1, &b.stat) == 0;
	host_sample s = {0};
	host_compute(&a, b.stat_ok ? &b : &a, 4096, &s);
	host_sample_free(&s);
	host_stat_free(&a.stat);
	host_stat_free(&b.stat);
	return 0;
}
