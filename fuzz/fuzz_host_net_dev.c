/* libFuzzer target: host_parse_net_dev on arbitrary /proc/net/dev text, twice (fuzz_host_pair.h).
 */
#include "fuzz_host_pair.h"

static bool parse(const char *buf, size_t n, host_sysraw *raw)
{
	raw->netdev_ok = host_parse_net_dev(buf, n, &raw->nets) == 0;
	return raw->netdev_ok;
}

static void release(host_sysraw *raw)
{
	host_netdevs_free(&raw->nets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_host_pair(data, size, parse, release);
}
