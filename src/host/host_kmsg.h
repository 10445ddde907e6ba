/*
 * host_kmsg.h - GPU Xid and PCIe AER events from the kernel log.
 *
 * The parser takes one line in any of the forms the kernel log is seen in:
 *   /dev/kmsg records  "4,1234,5678901234,-;NVRM: Xid (PCI:0000:3b:00): 79, ..."
 *   dmesg               "[ 5678.901234] NVRM: Xid (PCI:0000:3b:00): 79, ..."
 *   plain / journal     "... kernel: NVRM: Xid (PCI:0000:3b:00): 79, ..."
 * and recognises
 *   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
 *   pcieport 0000:00:03.0: AER: Corrected error received: 0000:3b:00.0          (4.x-5.x)
 *   pcieport 0000:00:03.0: AER: Corrected error message received from 0000:3b:00.0 (6.x)
 *   pcieport 0000:00:01.0: AER: Multiple Uncorrected (Non-Fatal) error received: ...
 *   pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: id=0018    (3.x)
 *   nvidia 0000:3b:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, ...
 * and amdgpu's faults (host_kmsg_amdgpu.c), with or without the device:
 *   amdgpu 0000:08:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=13, emitted seq=15
 *   [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=...
 *   amdgpu 0000:08:00.0: amdgpu: GPU reset begin!
 *   amdgpu 0000:08:00.0: amdgpu: GPU reset(2) succeeded!   (or "GPU reset(2) failed")
 * The AER detail form is the per-device detail the kernel prints after the summary
 * line of the same error: it is reported with detail = true so that counting
 * only !detail events counts each error once.
 *
 * The reader never blocks: it returns what is available now.
 */
#ifndef GPUWHY_HOST_KMSG_H
#define GPUWHY_HOST_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum host_kmsg_kind {
	HOST_KMSG_XID,
	HOST_KMSG_AER_CORRECTED,
	HOST_KMSG_AER_NONFATAL,        /* Uncorrected (Non-Fatal) */
	HOST_KMSG_AER_FATAL,           /* Uncorrected (Fatal) */
	HOST_KMSG_AMDGPU_RING_TIMEOUT, /* a command ring stopped progressing: ring names it */
	HOST_KMSG_AMDGPU_RESET,        /* "GPU reset begin!" */
	HOST_KMSG_AMDGPU_RESET_OK,     /* "GPU reset(N) succeeded!": xid holds N */
	HOST_KMSG_AMDGPU_RESET_FAILED, /* "GPU reset(N) failed": xid holds N */
};

typedef struct host_kmsg_event {
	enum host_kmsg_kind kind;
	bool seq_ok;
	uint64_t seq; /* /dev/kmsg sequence number */
	bool ts_ok;
	double ts;     /* seconds since boot (kmsg and dmesg forms) */
	int level;     /* syslog level 0-7 (kmsg form), -1 unknown */
	char pci[32];  /* Xid: the GPU's bus id as printed ("0000:3b:00"); amdgpu: "0000:08:00.0"
	                * in lower case, "" when the line names no device;
	                * AER: the device the error came from ("0000:3b:00.0"), "" if not printed */
	char port[32]; /* AER: the device that printed the line (often the root port) */
	bool xid_ok;
	int xid;       /* Xid number; amdgpu reset lines: the driver's reset count */
	char ring[32]; /* amdgpu ring timeout: the ring ("gfx_0.0.0", "comp_1.1.0", "sdma0") */
	bool pid_ok;
	int pid;          /* Xid: pid=..., when known */
	char process[64]; /* Xid: name=..., "" when absent or <unknown> */
	bool detail;      /* AER "PCIe Bus Error" detail line */
	bool multiple;    /* AER "Multiple ..." */
	char msg[256]; /* Xid: the text after the number, pid and name; AER: the text after "AER: "
	                */
} host_kmsg_event;

/* 1 and *out filled when line is an Xid, AER or amdgpu fault line; 0 when it is not. */
int host_kmsg_parse_line(const char *line, size_t len, host_kmsg_event *out);

/* The message part of a line (after the kmsg or dmesg prefix) as an amdgpu fault; 0 when none. */
int host_kmsg_parse_amdgpu(const char *msg, const char *end, host_kmsg_event *out);

/* ------------------------------------------------------------------ reader */

#define HOST_KMSG_DEFAULT "/dev/kmsg"
#define HOST_KMSG_END UINT64_MAX /* start at the end: only messages from now on */

typedef struct host_kmsg host_kmsg;

/*
 * Open the kernel log (path NULL: /dev/kmsg) or a text file of log lines
 * (fixtures, saved dmesg output). from is where to start: for /dev/kmsg the
 * first sequence number wanted (0: the oldest record still in the ring), for a
 * file a byte offset; HOST_KMSG_END for the end. NULL with errno set on
 * failure (EACCES/EPERM: reading /dev/kmsg needs CAP_SYSLOG when
 * kernel.dmesg_restrict is 1).
 */
host_kmsg *host_kmsg_open(const char *path, uint64_t from);

/*
 * Up to max events available now; never blocks. Returns the count, or -1 with
 * errno on a read error. Lines that are not Xid/AER are consumed silently. A
 * file's last line is consumed only once it ends with a newline.
 */
int host_kmsg_read(host_kmsg *k, host_kmsg_event *ev, size_t max);

/* Where to resume later (pass to host_kmsg_open): next sequence number or byte offset. */
uint64_t host_kmsg_position(const host_kmsg *k);
/* Records the kernel overwrote before we read them (/dev/kmsg only). */
uint64_t host_kmsg_lost(const host_kmsg *k);
void host_kmsg_close(host_kmsg *k);

#endif
