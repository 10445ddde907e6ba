/* libFuzzer target: host_parse_diskstats on arbitrary /proc/diskstats text, twice
 * (fuzz_host_pair.h). */
#include "fuzz_host_pair.h"

static bool parse(const char *buf, size_t n, host_sysraw *raw)
{
	raw->diskstats_ok = host_parse_diskstats(buf, n, &raw->disks) == 0;
	return raw->diskstats_ok;
}

static void release(host_sysraw *raw)
{
	host_diskstats_free(&raw->disks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_host_pair(data, size, parse, release);
}
