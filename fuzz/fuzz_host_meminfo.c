/* libFuzzer target: host_parse_meminfo on arbitrary /proc/meminfo text, then the memory metrics. */
#include "host/host.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	host_sysraw raw = {0};
	raw.meminfo_ok = host_parse_meminfo(buf, size, &raw.meminfo) == 0;
	host_sample s = {0};
	host_compute(NULL, &raw, 4096, &s);
	host_sample_free(&s);
	return 0;
}
