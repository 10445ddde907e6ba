/*
 * check_rocm_faults.c - rocm.faults: the amdgpu driver's ring timeouts and
 * GPU resets in the kernel log, per GPU, the AMD counterpart of gpus.xid.
 * The lines are recognised by the host layer's parser (host/host_kmsg.h), the
 * one the recorder uses, so doctor and recordings agree on what a fault is.
 */
#include <stdio.h>
#include <string.h>

#include "doctor/check_rocm.h"
#include "doctor/doctor_int.h"
#include "host/host_kmsg.h"
#include "util/strbuf.h"

#define FAULT_GPUS 16

typedef struct {
	char pci[32]; /* "" for lines that name no device (kernels before 6.x) */
	int timeouts, resets, failed;
	char ring[32]; /* the first ring that timed out */
} gpu_faults;

static gpu_faults *slot(gpu_faults *g, int *n, const char *pci)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(g[i].pci, pci))
			return &g[i];
	if (*n == FAULT_GPUS)
		return NULL;
	gpu_faults *s = &g[(*n)++];
	memset(s, 0, sizeof *s);
	snprintf(s->pci, sizeof s->pci, "%s", pci);
	return s;
}

static int count_faults(const doctor_klog *k, gpu_faults *g)
{
	int n = 0;
	for (size_t i = 0; i < k->n; i++) {
		host_kmsg_event e;
		if (!host_kmsg_parse_line(k->lines[i], strlen(k->lines[i]), &e) ||
		    e.kind < HOST_KMSG_AMDGPU_RING_TIMEOUT)
			continue;
		gpu_faults *s = slot(g, &n, e.pci);
		if (!s)
			continue;
		if (e.kind == HOST_KMSG_AMDGPU_RING_TIMEOUT) {
			if (!s->timeouts++)
				snprintf(s->ring, sizeof s->ring, "%s", e.ring);
		} else if (e.kind == HOST_KMSG_AMDGPU_RESET) {
			s->resets++;
		} else if (e.kind == HOST_KMSG_AMDGPU_RESET_FAILED) {
			s->failed++;
		}
	}
	return n;
}

/* AMD GPUs in sysfs, or those the device layer saw (a simulated machine's, whose log this is). */
static bool any_amd(const doctor_ctx *c)
{
	for (int i = 0; c->m && i < c->m->n; i++)
		if (!strcmp(c->m->gpu[i].st.vendor, "amd"))
			return true;
	return doctor_rocm_gpu_count(c) > 0;
}

void doctor_check_rocm_faults(doctor_ctx *c)
{
	if (!any_amd(c)) {
		doctor_addf(c->r, "rocm.faults", DOCTOR_SKIP,
		            "no AMD GPU (amdgpu driver) on this machine");
		return;
	}
	const doctor_klog *k = doctor_ctx_klog(c);
	if (!k->readable) {
		doctor_result *r = doctor_addf(c->r, "rocm.faults", DOCTOR_SKIP, "%s", k->why);
		doctor_fixf(r, "sudo gpuwhy doctor, or sudo sysctl kernel.dmesg_restrict=0");
		return;
	}
	gpu_faults g[FAULT_GPUS];
	int n = count_faults(k, g);
	if (n == 0) {
		doctor_addf(c->r, "rocm.faults", DOCTOR_PASS,
		            "no amdgpu ring timeouts or GPU resets in the kernel log (%s)",
		            k->source);
		return;
	}
	gw_strbuf b = {0};
	bool failed = false;
	for (int i = 0; i < n; i++) {
		gw_sb_sep(&b, "; ");
		gw_sb_printf(
		    &b, "%s: ", g[i].pci[0] ? g[i].pci : DOCTOR_("a GPU the line does not name"));
		/* TRANSLATORS: counts of amdgpu faults on one GPU; the ring is "gfx_0.0.0" */
		gw_sb_printf(
		    &b, DOCTOR_("%d ring timeout(s) (first: %s), %d GPU reset(s), %d failed"),
		    g[i].timeouts, g[i].ring[0] ? g[i].ring : "-", g[i].resets, g[i].failed);
		failed |= g[i].failed > 0;
	}
	doctor_result *r = doctor_addf(c->r, "rocm.faults", failed ? DOCTOR_FAIL : DOCTOR_WARN,
	                               "%s", gw_sb_str(&b));
	gw_sb_free(&b);
	if (failed)
		doctor_fixf(
		    r, "a failed reset leaves the GPU unusable: reboot; if it recurs check power, "
		       "cooling and the GPU firmware (linux-firmware) and kernel versions");
	else
		doctor_fixf(
		    r, "a ring timeout is work the GPU did not finish, and the reset that follows "
		       "loses every job's work on that GPU: the process is named on the line after "
		       "the timeout (dmesg); repeated timeouts under load point at power, cooling "
		       "or a driver and firmware update");
}
