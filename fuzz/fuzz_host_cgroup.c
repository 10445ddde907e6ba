/* libFuzzer target: host_parse_cgroup on arbitrary /proc/PID/cgroup text. */
#include "host/host_parse.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	host_cgroup cg;
	if (host_parse_cgroup(buf, size, &cg) == 0 &&
	    strnlen(cg.path, sizeof(cg.path)) == sizeof(cg.path))
		__builtin_trap();
	return 0;
}
