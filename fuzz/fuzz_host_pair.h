/*
 * The rates fuzzers of /proc files that host_compute reads twice (stat,
 * diskstats, net/dev): the input is split at its first NUL into two
 * snapshots, each parsed by the target's own parser, and the rates between
 * them are computed, so matching by name/id and counters going backwards are
 * exercised too.
 */
#ifndef GPUWHY_FUZZ_HOST_PAIR_H
#define GPUWHY_FUZZ_HOST_PAIR_H

#include "host/host.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Parse n bytes of buf into raw's field of the target; true when it parsed. */
typedef bool (*fuzz_host_parse)(const char *buf, size_t n, host_sysraw *raw);
/* Free what the parser kept in raw. */
typedef void (*fuzz_host_free)(host_sysraw *raw);

static inline int fuzz_host_pair(const uint8_t *data, size_t size, fuzz_host_parse parse,
                                 fuzz_host_free release)
{
	const char *buf = (const char *)data;
	const char *nul = memchr(buf, '\0', size);
	size_t n0 = nul ? (size_t)(nul - buf) : size;
	host_sysraw a = {0}, b = {0};
	a.mono_ns = 1000000000;
	b.mono_ns = 2000000000;
	parse(buf, n0, &a);
	bool second = nul && parse(nul + 1, size - n0 - 1, &b);
	host_sample s = {0};
	host_compute(&a, second ? &b : &a, 4096, &s);
	host_sample_free(&s);
	release(&a);
	release(&b);
	return 0;
}

#endif
