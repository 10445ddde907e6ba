/* xid.c - the common Xid errors and what to do about them (facts from NVIDIA's Xid catalogue). */
#include "gpu/xid.h"

#include <stddef.h>

#define APP "Check the application (an illegal memory access or a bug in a kernel); restart it"
#define RESET "Drain the node and reset the GPU (nvidia-smi -r) or reboot; replace it if it recurs"
#define SUPPORT "Reset the GPU; if it recurs, collect nvidia-bug-report.sh and contact support"

static const gpu_xid_info table[] = {
    {8, false, "GPU stopped processing (channel idle timeout)", APP},
    {13, false,
     "graphics engine exception (usually the application: illegal instruction or "
     "out-of-range access)",
     APP},
    {31, false, "GPU memory page fault (usually the application: an illegal address)", APP},
    {32, false, "invalid or corrupted push buffer stream", SUPPORT},
    {38, true, "driver firmware error", SUPPORT},
    {43, false, "GPU stopped processing (the application's channel was reset after a fault)", APP},
    {45, false, "preemptive cleanup after earlier errors (the context was killed)",
     "Look for the Xid before it: that one is the cause"},
    {48, true, "double-bit ECC error (uncorrectable memory error)", RESET},
    {54, true, "auxiliary power not connected", "Check the GPU's power cables"},
    {61, true, "internal micro-controller breakpoint", SUPPORT},
    {62, true, "internal micro-controller halt", RESET},
    {63, false, "ECC page retirement or row remap recorded (applies after a reset)",
     "Reset the GPU when it is idle so the remap takes effect"},
    {64, true, "ECC page retirement or row remap recording failed", RESET},
    {68, false, "video decoder exception", APP},
    {69, false, "graphics engine class error", APP},
    {74, true, "NVLink error", RESET},
    {79, true, "GPU has fallen off the bus",
     "Drain the node; check power, cooling and the PCIe slot; reboot; replace the GPU if it "
     "recurs"},
    {92, false, "high single-bit ECC error rate", "Watch the ECC counters; reset when idle"},
    {94, false, "contained ECC error (the affected application was stopped)",
     "Restart the application; reset the GPU when idle"},
    {95, true, "uncontained ECC error", RESET},
    {109, false, "context switch timeout", APP},
    {119, true, "GSP RPC timeout", SUPPORT},
    {120, true, "GSP error", SUPPORT},
    {121, true, "C2C link error", RESET},
    {140, true, "unrecovered ECC error", RESET},
    {143, true, "GPU initialization failure", RESET},
    {154, true, "GPU recovery action changed (reset or reboot required)", RESET},
};

const gpu_xid_info *gpu_xid_lookup(long xid)
{
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (table[i].xid == xid)
			return &table[i];
	return NULL;
}

const char *gpu_xid_meaning(long xid)
{
	const gpu_xid_info *x = gpu_xid_lookup(xid);
	return x ? x->meaning : "not in gpuwhy's table of common Xids (see NVIDIA's Xid catalogue)";
}
