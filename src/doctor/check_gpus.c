/* check_gpus.c - gpus.*: inventory and the bad states a GPU can be in. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/strbuf.h"

/* Every per-GPU check starts here: false (and a SKIP) when there is nothing to look at. */
static bool have_gpus(doctor_ctx *c, const char *check)
{
	if (c->m->nvml != DOCTOR_NVML_OK) {
		doctor_addf(c->r, check, DOCTOR_SKIP, "needs a working NVML (see driver.nvml)");
		return false;
	}
	if (c->m->n == 0) {
		doctor_addf(c->r, check, DOCTOR_SKIP, "no GPUs (see gpus.inventory)");
		return false;
	}
	return true;
}

static bool usable(const doctor_machine *m, int i)
{
	return doctor_gpu_selected(m, i) && !m->gpu[i].lost;
}

/* ---- gpus.inventory ---- */

void doctor_check_gpus_inventory(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml != DOCTOR_NVML_OK) {
		doctor_addf(c->r, "gpus.inventory", DOCTOR_SKIP,
		            "needs a working NVML (see driver.nvml)");
		return;
	}
	char bdf[GPU_MAX][16];
	int npci = doctor_pci_nvidia_gpus(c->p, bdf, GPU_MAX);
	const doctor_where *w = doctor_ctx_where(c);
	if (m->n == 0) {
		doctor_result *r =
		    doctor_addf(c->r, "gpus.inventory", DOCTOR_FAIL,
		                "the driver loaded but enumerates no GPU%s",
		                npci > 0 ? DOCTOR_(" although the PCI bus shows NVIDIA GPUs") : "");
		if (w->container)
			doctor_fixf(r, "start the container with GPUs (--gpus all, or "
			               "NVIDIA_VISIBLE_DEVICES=all with the nvidia runtime)");
		else
			doctor_fixf(
			    r, "dmesg | grep -i nvrm shows why the driver skipped the GPU "
			       "(RmInitAdapter failed, a GPU too new for this driver, disabled in "
			       "BIOS)");
		return;
	}
	gw_strbuf b = {0};
	char mem[32];
	int listed = 0;
	for (int i = 0; i < m->n; i++) {
		const doctor_gpu *g = &m->gpu[i];
		if (!doctor_gpu_selected(m, i))
			continue;
		gw_sb_sep(&b, "; ");
		gw_sb_printf(&b, "%d %s %s", g->st.index,
		             g->st.name[0] ? g->st.name : DOCTOR_("(no name)"),
		             g->st.uuid[0] ? g->st.uuid : DOCTOR_("(no UUID)"));
		double t;
		if (doctor_val(g, GM_MEM_TOTAL, &t))
			gw_sb_printf(&b, " %s",
			             doctor_bytes((uint64_t)t * 1048576ULL, mem, sizeof mem));
		if (g->lost)
			gw_sb_printf(&b, DOCTOR_(" (lost)"));
		listed++;
	}
	/* A GPU on the bus that NVML does not list was not initialised by the driver. In a
	 * container sysfs shows the host's whole bus, so only a host can tell. */
	gw_strbuf missing = {0};
	if (!w->container && !m->simulated && !m->has_selection) {
		for (int k = 0; k < npci; k++) {
			bool seen = false;
			for (int i = 0; i < m->n; i++)
				seen |= doctor_same_pci(bdf[k], m->gpu[i].st.pci_bus_id);
			if (!seen) {
				gw_sb_sep(&missing, " ");
				gw_sb_printf(&missing, "%s", bdf[k]);
			}
		}
	}
	if (missing.len) {
		doctor_result *r = doctor_addf(
		    c->r, "gpus.inventory", DOCTOR_WARN,
		    DOCTOR_P("NVML sees %d GPU but the PCI bus has %d: %s not initialised "
		             "by the driver; seen: %s",
		             "NVML sees %d GPUs but the PCI bus has %d: %s not initialised "
		             "by the driver; seen: %s",
		             m->n),
		    m->n, npci, gw_sb_str(&missing), gw_sb_str(&b));
		doctor_fixf(
		    r, "dmesg | grep -i -e nvrm -e xid for those bus ids (RmInitAdapter failed, "
		       "fallen off the bus); check power cables and seating; a driver too old "
		       "for that GPU model also skips it");
	} else {
		doctor_addf(c->r, "gpus.inventory", DOCTOR_PASS,
		            DOCTOR_P("%d GPU: %s", "%d GPUs: %s", listed), listed, gw_sb_str(&b));
	}
	gw_sb_free(&missing);
	gw_sb_free(&b);
}

/* ---- gpus.lost ---- */

void doctor_check_gpus_lost(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.lost"))
		return;
	const doctor_machine *m = c->m;
	gw_strbuf b = {0};
	int n = 0;
	for (int i = 0; i < m->n; i++) {
		if (!doctor_gpu_selected(m, i))
			continue;
		n++;
		if (!m->gpu[i].lost)
			continue;
		gw_sb_sep(&b, ", ");
		gw_sb_printf(&b, "GPU %d%s%s%s", m->gpu[i].st.index,
		             m->gpu[i].st.pci_bus_id[0] ? " (" : "", m->gpu[i].st.pci_bus_id,
		             m->gpu[i].st.pci_bus_id[0] ? ")" : "");
	}
	if (b.len) {
		doctor_result *r =
		    doctor_addf(c->r, "gpus.lost", DOCTOR_FAIL,
		                "%s lost: fell off the bus or stopped answering", gw_sb_str(&b));
		doctor_fixf(
		    r, "look for Xid 79 in the kernel log (gpus.xid); drain the node and reboot "
		       "(a reset rarely brings a lost GPU back); if it recurs check power cables, "
		       "seating and temperatures");
	} else {
		doctor_addf(c->r, "gpus.lost", DOCTOR_PASS,
		            DOCTOR_P("the GPU answers", "all %d GPUs answer", n), n);
	}
	gw_sb_free(&b);
}

/* ---- gpus.memory_errors ---- */

void doctor_check_gpus_memory_errors(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.memory_errors"))
		return;
	const doctor_machine *m = c->m;
	doctor_status st = DOCTOR_SKIP;
	gw_strbuf b = {0}, notes = {0}, fail_gpus = {0}, warn_gpus = {0};
	static const gpu_metric_id counters[] = {
	    GM_ECC_UNCORR_VOL, GM_ECC_UNCORR_AGG, GM_RETIRED_PENDING, GM_RETIRED_DBE,
	    GM_REMAP_PENDING,  GM_REMAP_FAILURE,  GM_REMAP_UNCORR};
	for (int i = 0; i < m->n; i++) {
		if (!usable(m, i))
			continue;
		const doctor_gpu *g = &m->gpu[i];
		bool any = false;
		for (size_t k = 0; k < sizeof counters / sizeof *counters; k++)
			any |= g->v.ok[counters[k]] != 0;
		if (!any)
			continue;
		st = doctor_worse(st, DOCTOR_PASS);
		double v;
		int idx = g->st.index;
		bool f = false, w = false;
		if (doctor_val(g, GM_ECC_UNCORR_VOL, &v) && v > 0) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(
			    &b,
			    DOCTOR_P("GPU %d: %.0f uncorrected ECC error since the driver loaded",
			             "GPU %d: %.0f uncorrected ECC errors since the driver loaded",
			             (unsigned long)v),
			    idx, v);
			f = true;
		}
		if (doctor_val(g, GM_REMAP_FAILURE, &v) && v > 0) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d: row remapping failed"), idx);
			f = true;
		}
		if (doctor_val(g, GM_RETIRED_PENDING, &v) && v > 0) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d: pages waiting to be retired"), idx);
			w = true;
		}
		if (doctor_val(g, GM_REMAP_PENDING, &v) && v > 0) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d: row remap pending"), idx);
			w = true;
		}
		if (doctor_val(g, GM_RETIRED_DBE, &v) && v > 0) {
			gw_sb_sep(&notes, "; ");
			gw_sb_printf(&notes,
			             DOCTOR_P("GPU %d: %.0f page retired for double-bit errors",
			                      "GPU %d: %.0f pages retired for double-bit errors",
			                      (unsigned long)v),
			             idx, v);
		}
		if (doctor_val(g, GM_REMAP_UNCORR, &v) && v > 0) {
			gw_sb_sep(&notes, "; ");
			gw_sb_printf(&notes,
			             DOCTOR_P("GPU %d: %.0f row remapped for uncorrectable errors",
			                      "GPU %d: %.0f rows remapped for uncorrectable errors",
			                      (unsigned long)v),
			             idx, v);
		}
		if (f) {
			st = DOCTOR_FAIL;
			gw_sb_sep(&fail_gpus, ",");
			gw_sb_printf(&fail_gpus, "%d", idx);
		} else if (w) {
			st = doctor_worse(st, DOCTOR_WARN);
			gw_sb_sep(&warn_gpus, ",");
			gw_sb_printf(&warn_gpus, "%d", idx);
		}
	}
	if (st == DOCTOR_SKIP) {
		doctor_addf(
		    c->r, "gpus.memory_errors", DOCTOR_SKIP,
		    "no GPU reports ECC or row-remap counters (consumer GPUs, or ECC disabled)");
	} else if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "gpus.memory_errors", DOCTOR_PASS,
		            "no uncorrected ECC errors, nothing pending%s%s",
		            notes.len ? DOCTOR_("; history: ") : "", gw_sb_str(&notes));
	} else {
		if (notes.len) {
			gw_sb_printf(&b, DOCTOR_("; history: %s"), gw_sb_str(&notes));
		}
		doctor_result *r = doctor_addf(c->r, "gpus.memory_errors", st, "%s", gw_sb_str(&b));
		if (st == DOCTOR_FAIL)
			doctor_fixf(
			    r,
			    "drain GPU %s, then reset it when idle (sudo nvidia-smi -r -i N) or "
			    "reboot; uncorrected errors that come back, or a remap failure, mean "
			    "the board needs replacing",
			    gw_sb_str(&fail_gpus));
		else
			doctor_fixf(
			    r,
			    "reset GPU %s when it is idle (sudo nvidia-smi -r -i N) or reboot, so "
			    "the pending retirement or remap takes effect",
			    gw_sb_str(&warn_gpus));
	}
	gw_sb_free(&b);
	gw_sb_free(&notes);
	gw_sb_free(&fail_gpus);
	gw_sb_free(&warn_gpus);
}

/* ---- gpus.xid ---- */

/* The GPU index at PCI bus bus, -1 when none. */
static int gpu_at(const doctor_machine *m, const char *bus)
{
	for (int i = 0; i < m->n; i++)
		if (m->gpu[i].st.pci_bus_id[0] && doctor_same_pci(bus, m->gpu[i].st.pci_bus_id))
			return i;
	return -1;
}

typedef struct {
	char bus[32];
	int gpu;
	int xid;
	int count;
	bool hw;
	const char *meaning;
} xid_count;

void doctor_check_gpus_xid(doctor_ctx *c)
{
	const doctor_klog *k = doctor_ctx_klog(c);
	if (!k->readable) {
		doctor_result *r = doctor_addf(c->r, "gpus.xid", DOCTOR_SKIP, "%s", k->why);
		doctor_fixf(r, "sudo gpuwhy doctor, or sudo sysctl kernel.dmesg_restrict=0");
		return;
	}
	xid_count seen[64];
	int ns = 0;
	for (size_t i = 0; i < k->n; i++) {
		doctor_xid x;
		if (!doctor_xid_parse(k->lines[i], &x))
			continue;
		int g = gpu_at(c->m, x.bus);
		if (g >= 0 && !doctor_gpu_selected(c->m, g))
			continue;
		int j = 0;
		while (j < ns && !(seen[j].xid == x.xid && doctor_same_pci(seen[j].bus, x.bus)))
			j++;
		if (j == ns) {
			if (ns == 64)
				continue;
			memset(&seen[j], 0, sizeof seen[j]);
			snprintf(seen[j].bus, sizeof seen[j].bus, "%s", x.bus);
			seen[j].gpu = g;
			seen[j].xid = x.xid;
			seen[j].meaning = doctor_xid_meaning(x.xid, &seen[j].hw);
			ns++;
		}
		seen[j].count++;
	}
	if (ns == 0) {
		doctor_addf(c->r, "gpus.xid", DOCTOR_PASS, "no Xid errors in the kernel log (%s)",
		            k->source);
		return;
	}
	gw_strbuf b = {0};
	bool hw = false;
	for (int j = 0; j < ns; j++) {
		gw_sb_sep(&b, "; ");
		if (seen[j].gpu >= 0)
			gw_sb_printf(&b, "GPU %d", c->m->gpu[seen[j].gpu].st.index);
		else
			gw_sb_printf(&b, "PCI %s", seen[j].bus);
		/* TRANSLATORS: "GPU 0: Xid 79 x2 (GPU has fallen off the bus)": Xid, its
		 * number, how many times, what it means. */
		gw_sb_printf(&b, DOCTOR_(": Xid %d x%d (%s)"), seen[j].xid, seen[j].count,
		             DOCTOR_(seen[j].meaning));
		hw |= seen[j].hw;
	}
	doctor_result *r =
	    doctor_addf(c->r, "gpus.xid", hw ? DOCTOR_FAIL : DOCTOR_WARN, "%s", gw_sb_str(&b));
	if (hw)
		doctor_fixf(
		    r, "hardware or driver errors: drain the GPU, reset it (sudo nvidia-smi -r -i "
		       "N) or reboot; if they recur check power, cooling and cabling, and send "
		       "nvidia-bug-report.sh output to the vendor");
	else
		doctor_fixf(
		    r, "application faults: check the program that ran at that time (bad memory "
		       "access, a killed kernel); compute-sanitizer finds the faulting kernel");
	gw_sb_free(&b);
}

/* ---- gpus.pcie_errors ---- */

/* Cumulative PCIe replays worth a warning: a handful over weeks of uptime is normal. */
#define REPLAY_WARN 100

void doctor_check_gpus_pcie_errors(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	const doctor_klog *k = doctor_ctx_klog(c);
	bool gpus = m->nvml == DOCTOR_NVML_OK && m->n > 0;
	gw_strbuf b = {0}, fix_gpus = {0};
	doctor_status st = DOCTOR_SKIP;
	int other = 0, replay_known = 0;
	if (k->readable) {
		st = DOCTOR_PASS;
		/* Per GPU: the PCI path from its root port down (sysfs), and error counts. */
		int n = gpus ? m->n : 0;
		char(*chain)[16][16] = calloc(n ? (size_t)n : 1, sizeof *chain);
		int *nc = calloc(n ? (size_t)n : 1, sizeof *nc);
		int *corr = calloc(n ? (size_t)n : 1, sizeof *corr);
		int *uncorr = calloc(n ? (size_t)n : 1, sizeof *uncorr);
		for (int i = 0; i < n; i++)
			if (doctor_gpu_selected(m, i) && m->gpu[i].st.pci_bus_id[0])
				nc[i] =
				    doctor_pci_chain(c->p, m->gpu[i].st.pci_bus_id, chain[i], 16);
		for (size_t l = 0; l < k->n; l++) {
			doctor_aer a;
			if (!doctor_aer_parse(k->lines[l], &a) || a.summary)
				continue;
			bool mine = false;
			for (int i = 0; i < n; i++) {
				bool on_path = false;
				for (int j = 0; j < nc[i]; j++)
					on_path |= doctor_same_pci(a.device, chain[i][j]);
				if (!on_path)
					continue;
				mine = true;
				if (a.uncorrected)
					uncorr[i]++;
				else
					corr[i]++;
			}
			other += !mine;
		}
		for (int i = 0; i < n; i++) {
			if (!corr[i] && !uncorr[i])
				continue;
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, "GPU %d (%s): ", m->gpu[i].st.index,
			             m->gpu[i].st.pci_bus_id);
			if (uncorr[i])
				gw_sb_printf(&b, DOCTOR_("%d uncorrected"), uncorr[i]);
			if (corr[i])
				gw_sb_printf(&b, DOCTOR_("%s%d corrected"), uncorr[i] ? ", " : "",
				             corr[i]);
			gw_sb_printf(&b, "%s",
			             DOCTOR_P(" AER error", " AER errors", corr[i] + uncorr[i]));
			st = doctor_worse(st, uncorr[i] ? DOCTOR_FAIL : DOCTOR_WARN);
			gw_sb_sep(&fix_gpus, ",");
			gw_sb_printf(&fix_gpus, "%d", m->gpu[i].st.index);
		}
		free(chain);
		free(nc);
		free(corr);
		free(uncorr);
	}
	for (int i = 0; gpus && i < m->n; i++) {
		double v;
		if (!usable(m, i) || !doctor_val(&m->gpu[i], GM_PCIE_REPLAY, &v))
			continue;
		replay_known++;
		if (st == DOCTOR_SKIP)
			st = DOCTOR_PASS;
		if (v >= REPLAY_WARN) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b,
			             DOCTOR_("GPU %d: %.0f PCIe replays (link retransmissions)"),
			             m->gpu[i].st.index, v);
			st = doctor_worse(st, DOCTOR_WARN);
			gw_sb_sep(&fix_gpus, ",");
			gw_sb_printf(&fix_gpus, "%d", m->gpu[i].st.index);
		}
	}
	if (st == DOCTOR_SKIP) {
		doctor_result *r = doctor_addf(c->r, "gpus.pcie_errors", DOCTOR_SKIP,
		                               "%s; no replay counters", k->why);
		doctor_fixf(r, "sudo gpuwhy doctor, or sudo sysctl kernel.dmesg_restrict=0");
	} else if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "gpus.pcie_errors", DOCTOR_PASS,
		            "no AER errors on GPU links%s%s%s",
		            k->readable ? "" : DOCTOR_(" (kernel log not readable)"),
		            replay_known ? DOCTOR_(", replay counters low") : "",
		            other ? DOCTOR_(" (other PCI devices have AER messages)") : "");
	} else {
		doctor_result *r = doctor_addf(c->r, "gpus.pcie_errors", st, "%s", gw_sb_str(&b));
		doctor_fixf(r,
		            "check power, seating and risers/cables of GPU %s; watch whether the "
		            "counters keep rising (nvidia-smi -q, its PCI section's Replays Since "
		            "Reset; lspci -vv -s BUS for the AER status); to confirm signal "
		            "integrity try that slot one PCIe generation lower in the BIOS",
		            gw_sb_str(&fix_gpus));
	}
	gw_sb_free(&b);
	gw_sb_free(&fix_gpus);
}

/* ---- gpus.pcie_link ---- */

void doctor_check_gpus_pcie_link(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.pcie_link"))
		return;
	const doctor_machine *m = c->m;
	gw_strbuf bad = {0}, ok = {0}, fix_gpus = {0};
	int known = 0;
	for (int i = 0; i < m->n; i++) {
		if (!usable(m, i))
			continue;
		const doctor_gpu *g = &m->gpu[i];
		double gc = 0, gm = 0, wc = 0, wm = 0, util = 0;
		bool have_gen =
		    doctor_val(g, GM_PCIE_GEN_CUR, &gc) && doctor_val(g, GM_PCIE_GEN_MAX, &gm);
		bool have_w =
		    doctor_val(g, GM_PCIE_WIDTH_CUR, &wc) && doctor_val(g, GM_PCIE_WIDTH_MAX, &wm);
		if (!have_gen && !have_w)
			continue;
		known++;
		bool busy = doctor_val(g, GM_UTIL_GPU, &util) && util >= 10;
		bool narrow = have_w && wc < wm;
		bool slow = have_gen && gc < gm && busy;
		char desc[96];
		snprintf(desc, sizeof desc, DOCTOR_("GPU %d: "), g->st.index);
		if (have_gen)
			snprintf(desc + strlen(desc), sizeof desc - strlen(desc),
			         DOCTOR_("gen %.0f of %.0f"), gc, gm);
		if (have_w)
			/* TRANSLATORS: between the PCIe generation and the link width. */
			snprintf(desc + strlen(desc), sizeof desc - strlen(desc),
			         DOCTOR_("%sx%.0f of x%.0f"), have_gen ? DOCTOR_(", ") : "", wc,
			         wm);
		if (narrow || slow) {
			gw_sb_sep(&bad, "; ");
			gw_sb_printf(&bad, "%s%s", desc,
			             slow && !narrow ? DOCTOR_(" under load") : "");
			gw_sb_sep(&fix_gpus, ",");
			gw_sb_printf(&fix_gpus, "%d", g->st.index);
		} else {
			gw_sb_sep(&ok, "; ");
			gw_sb_printf(&ok, "%s%s", desc,
			             have_gen && gc < gm
			                 ? DOCTOR_(" (idle: the link slows down to save power)")
			                 : "");
		}
	}
	if (!known) {
		doctor_addf(c->r, "gpus.pcie_link", DOCTOR_SKIP, "PCIe link state not reported");
	} else if (bad.len) {
		doctor_result *r =
		    doctor_addf(c->r, "gpus.pcie_link", DOCTOR_WARN,
		                "link trained below its maximum: %s (host<->GPU copies slow down "
		                "in proportion)",
		                gw_sb_str(&bad));
		doctor_fixf(r,
		            "reseat GPU %s in a slot that is electrically x16 (motherboard manual; "
		            "lspci -vv -s BUS shows LnkSta vs LnkCap), check risers and BIOS PCIe "
		            "settings, then compare under load with nvidia-smi "
		            "--query-gpu=pcie.link.gen.current,pcie.link.width.current,"
		            "pcie.link.gen.max,pcie.link.width.max --format=csv",
		            gw_sb_str(&fix_gpus));
	} else {
		doctor_addf(c->r, "gpus.pcie_link", DOCTOR_PASS, "%s", gw_sb_str(&ok));
	}
	gw_sb_free(&bad);
	gw_sb_free(&ok);
	gw_sb_free(&fix_gpus);
}

/* ---- gpus.thermal ---- */

/* Within this many degrees of the slowdown threshold is a warning. */
#define THERMAL_MARGIN_C 5

void doctor_check_gpus_thermal(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.thermal"))
		return;
	const doctor_machine *m = c->m;
	doctor_status st = DOCTOR_SKIP;
	gw_strbuf b = {0}, fix_gpus = {0};
	int hottest = -1, measured = 0;
	double hot_t = -1, hot_s = 0;
	for (int i = 0; i < m->n; i++) {
		if (!usable(m, i))
			continue;
		double t, s;
		const doctor_gpu *g = &m->gpu[i];
		if (!doctor_val(g, GM_TEMP_GPU, &t) || !doctor_val(g, GM_TEMP_SLOWDOWN, &s) ||
		    s <= 0)
			continue;
		st = doctor_worse(st, DOCTOR_PASS);
		measured++;
		if (t > hot_t) {
			hot_t = t;
			hot_s = s;
			hottest = g->st.index;
		}
		if (t >= s || s - t <= THERMAL_MARGIN_C) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d at %.0f C, slowdown at %.0f C"),
			             g->st.index, t, s);
			st = doctor_worse(st, t >= s ? DOCTOR_FAIL : DOCTOR_WARN);
			gw_sb_sep(&fix_gpus, ",");
			gw_sb_printf(&fix_gpus, "%d", g->st.index);
		}
	}
	if (st == DOCTOR_SKIP) {
		doctor_addf(c->r, "gpus.thermal", DOCTOR_SKIP,
		            "temperature or slowdown threshold not reported");
	} else if (st == DOCTOR_PASS && measured == 1) {
		/* "hottest" compares GPUs: with one there is nothing to compare */
		doctor_addf(c->r, "gpus.thermal", DOCTOR_PASS,
		            "GPU %d at %.0f C (slowdown at %.0f C)", hottest, hot_t, hot_s);
	} else if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "gpus.thermal", DOCTOR_PASS,
		            "hottest GPU %d at %.0f C (slowdown at %.0f C)", hottest, hot_t, hot_s);
	} else {
		doctor_result *r =
		    doctor_addf(c->r, "gpus.thermal", st, "%s%s", gw_sb_str(&b),
		                st == DOCTOR_FAIL ? DOCTOR_(": clocks are being cut") : "");
		doctor_fixf(
		    r,
		    "cool GPU %s: fans (nvidia-smi -q -d TEMPERATURE,PERFORMANCE), airflow, "
		    "dust, room temperature; a lower power limit (sudo nvidia-smi -pl W) "
		    "trades a little speed for steady clocks",
		    gw_sb_str(&fix_gpus));
	}
	gw_sb_free(&b);
	gw_sb_free(&fix_gpus);
}

/* ---- gpus.clocks ---- */

void doctor_check_gpus_clocks(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.clocks"))
		return;
	const doctor_machine *m = c->m;
	doctor_status st = DOCTOR_SKIP;
	gw_strbuf b = {0};
	bool power = false, hw = false, thermal = false, app = false;
	for (int i = 0; i < m->n; i++) {
		if (!usable(m, i))
			continue;
		const doctor_gpu *g = &m->gpu[i];
		double v;
		if (!g->v.ok[GM_CLK_REASONS])
			continue;
		st = doctor_worse(st, DOCTOR_PASS);
		gw_strbuf why = {0};
		doctor_status gs = DOCTOR_PASS;
		if (doctor_val(g, GM_CLK_R_HW_SLOW, &v) && v > 0) {
			gw_sb_sep(&why, ", ");
			gw_sb_printf(&why, DOCTOR_("hardware slowdown"));
			gs = DOCTOR_FAIL;
			hw = true;
		}
		if (doctor_val(g, GM_CLK_R_HW_THERMAL, &v) && v > 0) {
			gw_sb_sep(&why, ", ");
			gw_sb_printf(&why, DOCTOR_("hardware thermal slowdown"));
			gs = DOCTOR_FAIL;
			thermal = true;
		}
		if (doctor_val(g, GM_CLK_R_HW_POWER_BRAKE, &v) && v > 0) {
			gw_sb_sep(&why, ", ");
			gw_sb_printf(&why, DOCTOR_("power brake (external signal)"));
			gs = DOCTOR_FAIL;
			hw = true;
		}
		if (doctor_val(g, GM_CLK_R_SW_POWER, &v) && v > 0) {
			double d, l;
			gw_sb_sep(&why, ", ");
			if (doctor_val(g, GM_POWER_DRAW, &d) &&
			    doctor_val(g, GM_POWER_ENFORCED_LIMIT, &l))
				gw_sb_printf(&why, DOCTOR_("power cap (%.0f W of %.0f W)"), d, l);
			else
				gw_sb_printf(&why, DOCTOR_("power cap"));
			gs = doctor_worse(gs, DOCTOR_WARN);
			power = true;
		}
		if (doctor_val(g, GM_CLK_R_SW_THERMAL, &v) && v > 0) {
			gw_sb_sep(&why, ", ");
			gw_sb_printf(&why, DOCTOR_("software thermal slowdown"));
			gs = doctor_worse(gs, DOCTOR_WARN);
			thermal = true;
		}
		double ag, mg;
		/* Applications clocks only matter when someone set them below the maximum. */
		if (doctor_val(g, GM_CLK_R_APP, &v) && v > 0 && doctor_val(g, GM_CLK_APP_GR, &ag) &&
		    doctor_val(g, GM_CLK_MAX_GR, &mg) && ag < mg) {
			gw_sb_sep(&why, ", ");
			gw_sb_printf(&why, DOCTOR_("applications clocks set to %.0f of %.0f MHz"),
			             ag, mg);
			gs = doctor_worse(gs, DOCTOR_WARN);
			app = true;
		}
		if (gs != DOCTOR_PASS) {
			gw_sb_sep(&b, "; ");
			double sm;
			gw_sb_printf(&b, "GPU %d: %s", g->st.index, gw_sb_str(&why));
			if (doctor_val(g, GM_CLK_SM, &sm) && doctor_val(g, GM_CLK_MAX_SM, &mg))
				gw_sb_printf(&b, DOCTOR_(" (SM %.0f of %.0f MHz)"), sm, mg);
			st = doctor_worse(st, gs);
		}
		gw_sb_free(&why);
	}
	if (st == DOCTOR_SKIP) {
		doctor_addf(c->r, "gpus.clocks", DOCTOR_SKIP, "clock event reasons not reported");
	} else if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "gpus.clocks", DOCTOR_PASS,
		            "no clocks held down (other than idle or sync boost)");
	} else {
		doctor_result *r =
		    doctor_addf(c->r, "gpus.clocks", st, "clocks held down: %s", gw_sb_str(&b));
		gw_strbuf fix = {0};
		if (hw)
			gw_sb_printf(
			    &fix,
			    DOCTOR_(
			        "hardware slowdown on a cool GPU points at power delivery: check "
			        "the PSU and the GPU power cables (nvidia-smi -q -d PERFORMANCE "
			        "names the reason)"));
		if (thermal) {
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(&fix, DOCTOR_("improve cooling (see gpus.thermal)"));
		}
		if (power) {
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(
			    &fix,
			    DOCTOR_(
			        "the job is power bound: expected for heavy kernels at the "
			        "default limit; if the limit was lowered, restore it (see "
			        "gpus.power_limit), else a higher limit up to the board's maximum "
			        "(sudo nvidia-smi -pl W) helps if cooling allows"));
		}
		if (app) {
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(&fix,
			             DOCTOR_("reset applications clocks: sudo nvidia-smi -rac"));
		}
		doctor_fixf(r, "%s", gw_sb_str(&fix));
		gw_sb_free(&fix);
	}
	gw_sb_free(&b);
}

/* ---- gpus.power_limit ---- */

void doctor_check_gpus_power_limit(doctor_ctx *c)
{
	if (!have_gpus(c, "gpus.power_limit"))
		return;
	const doctor_machine *m = c->m;
	doctor_status st = DOCTOR_SKIP;
	gw_strbuf b = {0}, fix = {0};
	for (int i = 0; i < m->n; i++) {
		if (!usable(m, i))
			continue;
		const doctor_gpu *g = &m->gpu[i];
		double lim, def, enf;
		bool have_lim = doctor_val(g, GM_POWER_LIMIT, &lim);
		bool have_def = doctor_val(g, GM_POWER_DEFAULT_LIMIT, &def);
		bool have_enf = doctor_val(g, GM_POWER_ENFORCED_LIMIT, &enf);
		if (!have_def || (!have_lim && !have_enf))
			continue;
		st = doctor_worse(st, DOCTOR_PASS);
		double set = have_lim ? lim : enf;
		if (set < def - 1) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(&b, DOCTOR_("GPU %d limited to %.0f W, default %.0f W"),
			             g->st.index, set, def);
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(&fix, DOCTOR_("sudo nvidia-smi -i %d -pl %.0f"), g->st.index,
			             def);
			st = DOCTOR_WARN;
		} else if (have_enf && enf < set - 1) {
			gw_sb_sep(&b, "; ");
			gw_sb_printf(
			    &b,
			    DOCTOR_("GPU %d enforces %.0f W, below its set %.0f W (a board or "
			            "system-wide limit)"),
			    g->st.index, enf, set);
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(&fix, DOCTOR_("check the chassis/BMC power policy for GPU %d"),
			             g->st.index);
			st = DOCTOR_WARN;
		}
	}
	if (st == DOCTOR_SKIP) {
		doctor_addf(c->r, "gpus.power_limit", DOCTOR_SKIP, "power limits not reported");
	} else if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "gpus.power_limit", DOCTOR_PASS,
		            "power limits at their defaults");
	} else {
		doctor_result *r = doctor_addf(c->r, "gpus.power_limit", DOCTOR_WARN,
		                               "%s: clocks drop earlier under load", gw_sb_str(&b));
		doctor_fixf(
		    r,
		    "%s (keep a lower limit only if it was set on purpose for cooling or the "
		    "power budget)",
		    gw_sb_str(&fix));
	}
	gw_sb_free(&b);
	gw_sb_free(&fix);
}
