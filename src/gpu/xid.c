/* xid.c - the common Xid errors and what to do about them (facts from NVIDIA's Xid catalogue). */
#include "gpu/xid.h"

#include <stddef.h>

#include "util/i18n.h"

#define APP N_("Check the application (an illegal memory access or a bug in a kernel); restart it")
#define RESET                                                                                      \
	N_("Drain the node and reset the GPU (nvidia-smi -r) or reboot; replace it if it recurs")
#define SUPPORT N_("Reset the GPU; if it recurs, collect nvidia-bug-report.sh and contact support")

static const gpu_xid_info table[] = {
    {8, false, N_("GPU stopped processing (channel idle timeout)"), APP},
    {13, false,
     N_("graphics engine exception (usually the application: illegal instruction or "
        "out-of-range access)"),
     APP},
    {31, false, N_("GPU memory page fault (usually the application: an illegal address)"), APP},
    {32, false, N_("invalid or corrupted push buffer stream"), SUPPORT},
    {38, true, N_("driver firmware error"), SUPPORT},
    {43, false, N_("GPU stopped processing (the application's channel was reset after a fault)"),
     APP},
    {45, false, N_("preemptive cleanup after earlier errors (the context was killed)"),
     N_("Look for the Xid before it: that one is the cause")},
    {48, true, N_("double-bit ECC error (uncorrectable memory error)"), RESET},
    {54, true, N_("auxiliary power not connected"), N_("Check the GPU's power cables")},
    {61, true, N_("internal micro-controller breakpoint"), SUPPORT},
    {62, true, N_("internal micro-controller halt"), RESET},
    {63, false, N_("ECC page retirement or row remap recorded (applies after a reset)"),
     N_("Reset the GPU when it is idle so the remap takes effect")},
    {64, true, N_("ECC page retirement or row remap recording failed"), RESET},
    {68, false, N_("video decoder exception"), APP},
    {69, false, N_("graphics engine class error"), APP},
    {74, true, N_("NVLink error"), RESET},
    {79, true, N_("GPU has fallen off the bus"),
     N_("Drain the node; check power, cooling and the PCIe slot; reboot; replace the GPU if it "
        "recurs")},
    {92, false, N_("high single-bit ECC error rate"),
     N_("Watch the ECC counters; reset when idle")},
    {94, false, N_("contained ECC error (the affected application was stopped)"),
     N_("Restart the application; reset the GPU when idle")},
    {95, true, N_("uncontained ECC error"), RESET},
    {109, false, N_("context switch timeout"), APP},
    {119, true, N_("GSP RPC timeout"), SUPPORT},
    {120, true, N_("GSP error"), SUPPORT},
    {121, true, N_("C2C link error"), RESET},
    {140, true, N_("unrecovered ECC error"), RESET},
    {143, true, N_("GPU initialization failure"), RESET},
    {154, true, N_("GPU recovery action changed (reset or reboot required)"), RESET},
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
	return x ? x->meaning
	         : N_("not in gpuwhy's table of common Xids (see NVIDIA's Xid catalogue)");
}
