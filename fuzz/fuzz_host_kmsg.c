/* libFuzzer target: host_kmsg_parse_line on an arbitrary kernel log line (any of its forms). */
#include "host/host_kmsg.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	host_kmsg_event ev;
	if (host_kmsg_parse_line(buf, size, &ev) == 1 &&
	    (ev.msg[sizeof(ev.msg) - 1] != 0 || ev.pci[sizeof(ev.pci) - 1] != 0))
		__builtin_trap();
	return 0;
}
