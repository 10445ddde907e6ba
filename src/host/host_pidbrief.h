/* host_pidbrief.h - the little a GPU process list needs to know about a host PID. */
#ifndef GPUWHY_HOST_PIDBRIEF_H
#define GPUWHY_HOST_PIDBRIEF_H

#include <stdbool.h>

typedef struct host_pid_brief_s {
	bool exists;   /* /proc/PID is there */
	char user[64]; /* "" when unknown */
	char cmd[512]; /* command line, arguments joined by spaces; "" when unknown */
} host_pid_brief;

/* proc_root is "/proc" normally. Never fails: unknown parts stay empty. */
void host_pid_brief_read(const char *proc_root, unsigned pid, host_pid_brief *out);

/* True when this process lives in a PID namespace nested below another
 * (a container without --pid=host): NVML's PIDs are then not ours. */
bool host_pidns_nested(const char *proc_root);

#endif
