/*
 * host_top.h - the busiest processes of the whole host by CPU, for telling a
 * job's own saturated data path from other processes loading the machine
 * (the noisy neighbour). Reads every /proc/PID/stat once per scan and
 * keeps the previous scan's CPU times to take the difference.
 *
 *   host_top *h = host_top_new("/proc");
 *   host_top_entry top[5];
 *   int n = host_top_scan(h, gw_mono_ns(), top, 5, 5.0);  // first call: 0 (no rate yet)
 *   host_top_free(h);
 */
#ifndef GPUWHY_HOST_TOP_H
#define GPUWHY_HOST_TOP_H

#include <stdint.h>

typedef struct host_top host_top;

typedef struct {
	unsigned pid, ppid;
	double cpu_pct; /* of one core, since the previous scan */
	char comm[32];  /* /proc/PID/stat's name; the caller reads the command line if it wants */
} host_top_entry;

host_top *host_top_new(const char *proc_root);
void host_top_free(host_top *h);
/*
 * Scan the host's processes at mono_ns and write the busiest (at least
 * min_pct of a core since the previous scan) into out, busiest first, at
 * most max. Returns how many; 0 on the first scan and when /proc is
 * unreadable.
 */
int host_top_scan(host_top *h, int64_t mono_ns, host_top_entry *out, int max, double min_pct);

#endif
