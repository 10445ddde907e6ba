/* libFuzzer target: host_parse_pid_status on arbitrary /proc/PID/status text. */
#include "host/host_parse.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	host_pid_status st;
	if (host_parse_pid_status(buf, size, &st) == 0 &&
	    (st.nspid_n < 0 || st.nspid_n > HOST_NSPID_MAX))
		__builtin_trap();
	return 0;
}
