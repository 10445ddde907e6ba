/*
 * xid.h - what an Xid number means: a table of the common Xid errors the
 * NVIDIA driver reports (kernel log "NVRM: Xid" lines, NVML
 * nvmlEventTypeXidCriticalError events), from NVIDIA's Xid catalogue.
 *
 *   const gpu_xid_info *x = gpu_xid_lookup(48);   // "double-bit ECC error", hardware
 *   const char *m = gpu_xid_meaning(48);         // never NULL
 * The texts are English msgids (util/i18n.h): recordings and JSON keep them so,
 * faces people read print _(x->meaning) and _(x->action).
 */
#ifndef GPUWHY_GPU_XID_H
#define GPUWHY_GPU_XID_H

#include <stdbool.h>

typedef struct {
	int xid;
	bool hardware;       /* the GPU, its memory or its link rather than the application */
	const char *meaning; /* short, lower case: "double-bit ECC error" */
	const char *action;  /* what to do first, one sentence */
} gpu_xid_info;

/* The entry for xid, NULL when it is not in the table. */
const gpu_xid_info *gpu_xid_lookup(long xid);
/* Its meaning, or "not in gpuwhy's table of common Xids (see NVIDIA's Xid catalogue)". */
const char *gpu_xid_meaning(long xid);

#endif
