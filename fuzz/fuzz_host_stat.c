/* libFuzzer target: host_parse_stat on arbitrary /proc/stat text, twice (fuzz_host_pair.h). */
#include "fuzz_host_pair.h"

static bool parse(const char *buf, size_t n, host_sysraw *raw)
{
	raw->stat_ok = host_parse_stat(buf, n, &raw->stat) == 0;
	return raw->stat_ok;
}

static void release(host_sysraw *raw)
{
	host_stat_free(&raw->stat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_host_pair(data, size, parse, release);
}
