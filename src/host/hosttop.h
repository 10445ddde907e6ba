/*
 * hosttop.h - the busiest processes of the whole host by CPU, for telling a
 * job's own saturated data path from other processes loading the machine
 * (the noisy neighbour). Reads every /proc/PID/stat once per scan and
 * keeps the previous scan's CPU times to take the difference.
 *
 *   hosttop *h = hosttop_new("/proc");
 *   hosttop_entry top[5];
 *   int n = hosttop_scan(h, gw_mono_ns(), top, 5, 5.0);  // first call: 0 (no rate yet)
 *   hosttop_free(h);
 */
#ifndef GPUWHY_HOST_HOSTTOP_H
#define GPUWHY_HOST_HOSTTOP_H

#include <stdint.h>

typedef struct hosttop hosttop;

typedef struct {
	unsigned pid, ppid;
	double cpu_pct; /* of one core, since the previous scan */
	char comm[32];  /* /proc/PID/stat's name; the caller reads the command line if it wants */
} hosttop_entry;

hosttop *hosttop_new(const char *proc_root);
void hosttop_free(hosttop *h);
/*
 * Scan the host's processes at mono_ns and write the busiest (at least
 * min_pct of a core since the previous scan) into out, busiest first, at
 * most max. Returns how many; 0 on the first scan and when /proc is
 * unreadable.
 */
int hosttop_scan(hosttop *h, int64_t mono_ns, hosttop_entry *out, int max, double min_pct);

#endif
