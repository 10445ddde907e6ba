/*
 * klog.h - the kernel log as the checks read it, and its Xid and AER lines (klog.c).
 */
#ifndef GPUWHY_DOCTOR_KLOG_H
#define GPUWHY_DOCTOR_KLOG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
	bool readable;
	char source[64]; /* "/dev/kmsg", "dmesg", "journalctl -k" */
	char why[256];   /* when !readable */
	char **lines;    /* message text, timestamps and kmsg prefixes removed */
	size_t n;
} doctor_klog;

typedef struct {
	char bus[32]; /* as written: "0000:3b:00" */
	int xid;
	const char *text; /* the rest of the line, inside the caller's string */
} doctor_xid;
bool doctor_xid_parse(const char *line, doctor_xid *out);
/* Short meaning of an Xid and whether it points at hardware (FAIL) rather than an app. */
const char *doctor_xid_meaning(int xid, bool *hardware);

typedef struct {
	char device[16];   /* BDF the error is about ("0000:3b:00.0") */
	char reporter[16]; /* BDF of the reporting port, "" when none */
	bool uncorrected;  /* Uncorrected (Non-Fatal) or Fatal */
	bool fatal;
	bool summary; /* the port's "error received" line; the same event also has a
	                 "PCIe Bus Error" line from the device, so checks count only those */
} doctor_aer;
bool doctor_aer_parse(const char *line, doctor_aer *out);

#endif
