/* libFuzzer target: host_parse_pid_stat on arbitrary /proc/PID/stat text. */
#include "host/host_parse.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	host_pid_stat st;
	if (host_parse_pid_stat(buf, size, &st) == 0 &&
	    (st.ppid < 0 || st.comm[HOST_COMM_LEN - 1] != 0))
		__builtin_trap();
	return 0;
}
