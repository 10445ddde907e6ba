/*
 * libFuzzer target: host_parse_net_dev on arbitrary /proc/net/dev text. The input is split at
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
	a.netdev_ok = host_parse_net_dev(buf, n0, &a.nets) == 0;
	b.netdev_ok = nul && host_parse_net_dev(nul + 1, size - n0 - 1, &b.nets) == 0;
	host_sample s = {0};
	host_compute(&a, b.netdev_ok ? &b : &a, 4096, &s);
	host_sample_free(&s);
	host_netdevs_free(&a.nets);
	host_netdevs_free(&b.nets);
	return 0;
}
