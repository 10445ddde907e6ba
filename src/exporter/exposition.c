/*
 * exposition.c - frame -> Prometheus text exposition (format 0.0.4). Pure.
 *
 * The DCGM families copy dcgm-exporter exactly: names, help texts, label set
 * and order (gpu, UUID, pci_bus_id, device, modelName, Hostname|hostname,
 * then the CSV's label fields sorted), ints printed as integers and doubles
 * with six decimals. A value that is absent produces no series; a family
 * that no GPU has produces nothing at all. gpuwhy's own families follow
 * Prometheus' naming rules (snake_case, base units, ratios 0..1).
 */
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/buf.h"
#include "exporter/collectors.h"
#include "exporter/exposition.h"
#include "exporter/frame.h"
#include "util/xalloc.h"
#include "util/strbuf.h"

static void family(exporter_buf *b, const char *name, const char *type, const char *help)
{
	exporter_buf_family(b, name, type, help);
}

static void label(exporter_buf *b, bool first, const char *name, const char *value)
{
	if (!first)
		gw_sb_puts(b, ",");
	gw_sb_puts(b, name);
	gw_sb_puts(b, "=\"");
	exporter_buf_label_value(b, value);
	gw_sb_puts(b, "\"");
}

static void label_int(exporter_buf *b, bool first, const char *name, long long v)
{
	if (!first)
		gw_sb_puts(b, ",");
	gw_sb_puts(b, name);
	gw_sb_puts(b, "=\"");
	exporter_buf_int(b, v);
	gw_sb_puts(b, "\"");
}

/* Integers as integers (the value is whole already; clamp what cannot be one). */
static void value_int(exporter_buf *b, double v)
{
	if (v >= 9.2e18)
		exporter_buf_int(b, 9200000000000000000LL);
	else if (v <= -9.2e18)
		exporter_buf_int(b, -9200000000000000000LL);
	else
		exporter_buf_int(b, (long long)v);
}

/* ------------------------------------------------------------ DCGM families */

/*
 * DCGM's FB_TOTAL/FB_USED/FB_FREE are bytes floored to MiB, where nvidia-smi
 * (and the device layer's values) round up: 9975.5 MiB is 9975 here.
 */
static double dcgm_mib(unsigned long long bytes)
{
	return (double)(bytes / 1048576ULL);
}

/* The value dcgm-exporter would export for metric id of g; false when absent. */
static bool dcgm_value(const exporter_gpu *g, int id, double *v, bool *is_int)
{
	const gpu_values *x = g->vals;
	/* A lost GPU keeps only its last Xid: the 79 that explains the loss is what
	 * alerting rules on DCGM_FI_DEV_XID_ERRORS look for. */
	if (x->lost && id != GM_XID_LAST)
		return false;
	gpu_metric_fmt f = gpu_metrics[id].fmt;
	*is_int = f == GMF_INT || f == GMF_YESNO || f == GMF_HEX || f == GMF_PSTATE;
	if (x->ok[id] && (id == GM_MEM_TOTAL || id == GM_MEM_USED || id == GM_MEM_FREE)) {
		*v = dcgm_mib(id == GM_MEM_TOTAL  ? x->mem_total_b
		              : id == GM_MEM_USED ? x->mem_used_b
		                                  : x->mem_free_b);
		return true;
	}
	if (x->ok[id]) {
		*v = gpu_metric_dcgm_value((gpu_metric_id)id, x->v[id]);
		return isfinite(*v);
	}
	/* Without GPM (before Hopper) PCIe bytes/s come from NVML's PCIe
	 * counters, in MiB/s in the table. */
	int alt = id == GM_GPM_PCIE_TX ? GM_PCIE_TX : id == GM_GPM_PCIE_RX ? GM_PCIE_RX : -1;
	if (alt >= 0 && x->ok[alt] && isfinite(x->v[alt]) && x->v[alt] >= 0) {
		*v = floor(x->v[alt] * 1048576.0);
		return true;
	}
	return false;
}

static const char *hostlabel_name(exporter_hostlabel h)
{
	return h == EXPORTER_HOSTLABEL_UPPER   ? "Hostname"
	       : h == EXPORTER_HOSTLABEL_LOWER ? "hostname"
	                                       : NULL;
}

/*
 * Labels of one GPU's DCGM series, in dcgm-exporter's order, without braces;
 * a GPU instance's series (mig != NULL) add GPU_I_PROFILE and GPU_I_ID after
 * modelName and keep the GPU's UUID, as dcgm-exporter does.
 */
static void dcgm_labels(exporter_buf *b, const exporter_frame *s, const exporter_gpu *g,
                        const exporter_render_opts *o, unsigned labels, const gpu_mig *mig)
{
	char device[24] = "";
	/* /dev/nvidiaN; an AMD GPU has no such node, and its label stays empty */
	if (strcmp(g->vendor, "amd") != 0)
		snprintf(device, sizeof device, "nvidia%d", g->index);
	label_int(b, true, "gpu", g->index);
	label(b, false, "UUID", g->uuid);
	label(b, false, "pci_bus_id", g->pci_bus_id);
	label(b, false, "device", device);
	label(b, false, "modelName", g->name);
	if (mig) {
		label(b, false, "GPU_I_PROFILE", mig->profile);
		label_int(b, false, "GPU_I_ID", (long long)mig->gi);
	}
	const char *hl = hostlabel_name(o->host_label);
	if (hl)
		label(b, false, hl, o->hostname ? o->hostname : "");
	/* The CSV's label fields, sorted by field name; unknown text is left out. */
	if ((labels & EXPORTER_LABEL_DEV_SERIAL) && g->serial[0])
		label(b, false, "DCGM_FI_DEV_SERIAL", g->serial);
	if ((labels & EXPORTER_LABEL_DEV_VBIOS) && g->vbios[0])
		label(b, false, "DCGM_FI_DEV_VBIOS_VERSION", g->vbios);
	if ((labels & EXPORTER_LABEL_DRIVER) && s->driver[0])
		label(b, false, "DCGM_FI_DRIVER_VERSION", s->driver);
	if ((labels & EXPORTER_LABEL_NVML) && s->nvml[0])
		label(b, false, "DCGM_FI_NVML_VERSION", s->nvml);
	/* Kubernetes attributes last, sorted, as dcgm-exporter adds them */
	if (g->pod[0]) {
		label(b, false, "container", g->container);
		label(b, false, "namespace", g->namespace_);
		label(b, false, "pod", g->pod);
	}
}

/* Frame-buffer use of each GPU instance, the per-instance series dcgm-exporter has. */
static void mig_series(exporter_buf *b, const exporter_frame *s, const exporter_gpu *g,
                       const exporter_render_opts *o, unsigned labels, int id)
{
	if (id != GM_MEM_USED && id != GM_MEM_FREE)
		return;
	for (int k = 0; k < g->nmig; k++) {
		const gpu_mig *m = &g->mig[k];
		if (!m->mem_ok || !m->ids_ok)
			continue;
		gw_sb_puts(b, gpu_metrics[id].dcgm);
		gw_sb_puts(b, "{");
		dcgm_labels(b, s, g, o, labels, m);
		gw_sb_puts(b, "} ");
		value_int(b, dcgm_mib(id == GM_MEM_USED ? m->mem_used_b : m->mem_free_b));
		gw_sb_puts(b, "\n");
	}
}

static void render_dcgm(const exporter_frame *s, const exporter_render_opts *o,
                        const exporter_collectors *c, exporter_buf *b)
{
	exporter_buf *lab = gw_xcalloc((size_t)(s->ngpus > 0 ? s->ngpus : 1), sizeof *lab);
	for (int i = 0; i < s->ngpus; i++)
		dcgm_labels(&lab[i], s, &s->gpus[i], o, c->labels, NULL);
	for (int k = 0; k < c->n; k++) {
		int id = c->order[k];
		double v;
		bool is_int, any = false;
		for (int i = 0; i < s->ngpus && !any; i++)
			any = dcgm_value(&s->gpus[i], id, &v, &is_int);
		if (!any)
			continue;
		const char *name = gpu_metrics[id].dcgm;
		family(b, name,
		       c->type[id] == EXPORTER_COUNTER   ? "counter"
		       : c->type[id] == EXPORTER_UNTYPED ? "untyped"
		                                         : "gauge",
		       c->help[id] ? c->help[id] : gpu_metrics[id].help);
		for (int i = 0; i < s->ngpus; i++) {
			if (!dcgm_value(&s->gpus[i], id, &v, &is_int))
				continue;
			gw_sb_puts(b, name);
			gw_sb_puts(b, "{");
			if (lab[i].p)
				gw_sb_put(b, lab[i].p, lab[i].len);
			gw_sb_puts(b, "} ");
			if (is_int)
				value_int(b, v);
			else
				exporter_buf_fixed6(b, v);
			gw_sb_puts(b, "\n");
			mig_series(b, s, &s->gpus[i], o, c->labels, id);
		}
	}
	for (int i = 0; i < s->ngpus; i++)
		gw_sb_free(&lab[i]);
	free(lab);
}

/* --------------------------------------------------------- gpuwhy GPU series */

static void gpu_series_start(exporter_buf *b, const char *name, const exporter_gpu *g)
{
	gw_sb_puts(b, name);
	gw_sb_puts(b, "{");
	label_int(b, true, "gpu", g->index);
}

/* A per-GPU gauge straight from the table: absent values are left out. */
static void table_family(exporter_buf *b, const exporter_frame *s, const char *name,
                         const char *help, gpu_metric_id id)
{
	bool any = false;
	for (int i = 0; i < s->ngpus; i++) {
		const gpu_values *x = s->gpus[i].vals;
		if (x->lost || !x->ok[id] || !isfinite(x->v[id]))
			continue;
		if (!any)
			family(b, name, "gauge", help);
		any = true;
		gpu_series_start(b, name, &s->gpus[i]);
		gw_sb_puts(b, "} ");
		value_int(b, x->v[id]);
		gw_sb_puts(b, "\n");
	}
}

static void render_gpu_info(const exporter_frame *s, exporter_buf *b)
{
	if (s->ngpus <= 0)
		return;
	family(b, "gpuwhy_gpu_info", "gauge",
	       "Identity of each GPU; always 1. Join on gpu with the DCGM series.");
	for (int i = 0; i < s->ngpus; i++) {
		const exporter_gpu *g = &s->gpus[i];
		gpu_series_start(b, "gpuwhy_gpu_info", g);
		label(b, false, "uuid", g->uuid);
		label(b, false, "pci_bus_id", g->pci_bus_id);
		label(b, false, "model_name", g->name);
		label(b, false, "driver_version", s->driver);
		/* NVIDIA's and AMD's GPUs side by side: join on gpu to tell them apart */
		if (g->vendor[0])
			label(b, false, "vendor", g->vendor);
		gw_sb_puts(b, "} 1\n");
	}
	family(b, "gpuwhy_gpu_lost", "gauge",
	       "1 when the GPU fell off the bus (NVML reports it lost), else 0.");
	for (int i = 0; i < s->ngpus; i++) {
		gpu_series_start(b, "gpuwhy_gpu_lost", &s->gpus[i]);
		gw_sb_puts(b, s->gpus[i].vals->lost ? "} 1\n" : "} 0\n");
	}
}

static void render_throttle(const exporter_frame *s, exporter_buf *b)
{
	bool any = false;
	for (int i = 0; i < s->ngpus; i++) {
		const gpu_values *x = s->gpus[i].vals;
		if (x->lost || !x->ok[GM_CLK_REASONS])
			continue;
		if (!any)
			family(b, "gpuwhy_gpu_throttle_reason", "gauge",
			       "1 while this clock-event (throttle) reason holds the GPU's clocks "
			       "down, else 0.");
		any = true;
		uint64_t mask = (uint64_t)x->v[GM_CLK_REASONS];
		for (unsigned bit = 0; bit < 64; bit++) {
			const char *reason = gpu_reason_name(1ULL << bit);
			if (!reason)
				continue;
			gpu_series_start(b, "gpuwhy_gpu_throttle_reason", &s->gpus[i]);
			label(b, false, "reason", reason);
			gw_sb_puts(b, (mask >> bit) & 1 ? "} 1\n" : "} 0\n");
		}
	}
}

static void render_pcie(const exporter_frame *s, exporter_buf *b)
{
	table_family(b, s, "gpuwhy_gpu_pcie_link_gen_current",
	             "Current PCIe link generation (GPUs lower it when idle to save power).",
	             GM_PCIE_GEN_CUR);
	table_family(b, s, "gpuwhy_gpu_pcie_link_gen_max",
	             "Maximum PCIe link generation of the GPU and the system together.",
	             GM_PCIE_GEN_MAX);
	table_family(b, s, "gpuwhy_gpu_pcie_link_width_current", "Current PCIe link width (lanes).",
	             GM_PCIE_WIDTH_CUR);
	table_family(b, s, "gpuwhy_gpu_pcie_link_width_max", "Maximum PCIe link width (lanes).",
	             GM_PCIE_WIDTH_MAX);
}

static void proc_series_start(exporter_buf *b, const char *name, const exporter_gpu *g,
                              const exporter_proc *p)
{
	gpu_series_start(b, name, g);
	label_int(b, false, "pid", p->pid);
	label(b, false, "command", p->command);
	if (p->pod[0]) {
		label(b, false, "container", p->container);
		label(b, false, "namespace", p->namespace_);
		label(b, false, "pod", p->pod);
	}
	gw_sb_puts(b, "} ");
}

static void render_processes(const exporter_frame *s, int top, exporter_buf *b)
{
	bool any = false;
	for (int i = 0; i < s->ngpus; i++) {
		const exporter_gpu *g = &s->gpus[i];
		if (g->vals->lost || g->nprocs_total < 0)
			continue;
		if (!any)
			family(b, "gpuwhy_gpu_processes", "gauge",
			       "Processes using the GPU (compute and graphics).");
		any = true;
		gpu_series_start(b, "gpuwhy_gpu_processes", g);
		gw_sb_puts(b, "} ");
		exporter_buf_int(b, g->nprocs_total);
		gw_sb_puts(b, "\n");
	}
	if (top <= 0)
		return;
	any = false;
	for (int i = 0; i < s->ngpus; i++) {
		const exporter_gpu *g = &s->gpus[i];
		for (int k = 0; k < g->nprocs && k < top; k++) {
			if (g->vals->lost || !g->procs[k].mem_ok)
				continue;
			if (!any)
				family(b, "gpuwhy_process_gpu_memory_bytes", "gauge",
				       "GPU memory used by the process (top processes by memory "
				       "per GPU).");
			any = true;
			proc_series_start(b, "gpuwhy_process_gpu_memory_bytes", g, &g->procs[k]);
			exporter_buf_int(b, (long long)g->procs[k].mem_bytes);
			gw_sb_puts(b, "\n");
		}
	}
	any = false;
	for (int i = 0; i < s->ngpus; i++) {
		const exporter_gpu *g = &s->gpus[i];
		for (int k = 0; k < g->nprocs && k < top; k++) {
			if (g->vals->lost || !g->procs[k].sm_ok)
				continue;
			if (!any)
				family(b, "gpuwhy_process_sm_utilization_ratio", "gauge",
				       "Share of the last sampling period in which a kernel of "
				       "the process ran on the GPU (0..1).");
			any = true;
			proc_series_start(b, "gpuwhy_process_sm_utilization_ratio", g,
			                  &g->procs[k]);
			exporter_buf_fixed6(b, g->procs[k].sm_ratio);
			gw_sb_puts(b, "\n");
		}
	}
}

static void render_findings(const exporter_frame *s, exporter_buf *b)
{
	if (s->nfindings <= 0)
		return;
	family(b, "gpuwhy_finding", "gauge",
	       "1 while a diagnosis rule holds for the GPU (gpu absent: the whole host); "
	       "the series disappears when it no longer holds.");
	for (int k = 0; k < s->nfindings; k++) {
		const exporter_finding *f = &s->findings[k];
		gw_sb_puts(b, "gpuwhy_finding{");
		bool first = true;
		if (f->gpu >= 0) {
			label_int(b, true, "gpu", f->gpu);
			first = false;
		}
		label(b, first, "rule", f->rule);
		label(b, false, "severity", exporter_severity_name(f->severity));
		gw_sb_puts(b, "} 1\n");
	}
}

/* ---------------------------------------------------------------- host */

static void host_per_cpu(exporter_buf *b, const snapshot *sn, const char *name, const char *help,
                         bool iowait)
{
	bool any = false;
	for (int i = 0; i < sn->ncpu; i++) {
		double v = iowait ? sn->cpu_iowait[i] : sn->cpu_busy[i];
		if (!isfinite(v))
			continue;
		if (!any)
			family(b, name, "gauge", help);
		any = true;
		gw_sb_puts(b, name);
		gw_sb_puts(b, "{");
		label_int(b, true, "cpu", sn->cpu_id[i]);
		gw_sb_puts(b, "} ");
		exporter_buf_fixed6(b, v / 100.0);
		gw_sb_puts(b, "\n");
	}
}

/* One gauge per summary metric the host table names a family for, in base units. */
static void host_summary_family(exporter_buf *b, const snapshot *sn, host_metric_id id)
{
	const host_metric_desc *d = &host_metrics[id];
	if (!d->family[0] || !isfinite(sn->h[id]))
		return;
	double scale = host_metric_base_scale(id);
	family(b, d->family, "gauge", d->help);
	gw_sb_puts(b, d->family);
	gw_sb_puts(b, " ");
	if (scale > 1) /* bytes: whole numbers */
		value_int(b, sn->h[id] * scale);
	else
		exporter_buf_fixed6(b, sn->h[id] * scale);
	gw_sb_puts(b, "\n");
}

static void render_host(const exporter_frame *f, exporter_buf *b)
{
	if (!f->host || !f->snap)
		return;
	const snapshot *sn = f->snap;
	/* The per-CPU families follow the machine-wide CPU ones. */
	for (int id = 0; id < HM__COUNT; id++) {
		host_summary_family(b, sn, (host_metric_id)id);
		bool last_cpu =
		    !strncmp(host_metrics[id].key, "cpu.", 4) &&
		    (id + 1 == HM__COUNT || strncmp(host_metrics[id + 1].key, "cpu.", 4));
		if (!last_cpu)
			continue;
		host_per_cpu(b, sn, "gpuwhy_host_core_busy_ratio",
		             "Share of the last interval this CPU was busy (not idle, not iowait).",
		             false);
		host_per_cpu(b, sn, "gpuwhy_host_core_iowait_ratio",
		             "Share of the last interval this CPU was idle with I/O outstanding.",
		             true);
	}
}

static void render_self(const exporter_frame *s, const exporter_render_opts *o, exporter_buf *b)
{
	family(b, "gpuwhy_exporter_build_info", "gauge", "gpuwhy version; always 1.");
	gw_sb_puts(b, "gpuwhy_exporter_build_info{");
	label(b, true, "version", o->version ? o->version : "");
	gw_sb_puts(b, "} 1\n");
	family(b, "gpuwhy_exporter_samples_total", "counter",
	       "Samples taken since the exporter started.");
	gw_sb_puts(b, "gpuwhy_exporter_samples_total ");
	exporter_buf_int(b, (long long)s->samples_total);
	gw_sb_puts(b, "\n");
	family(b, "gpuwhy_exporter_sample_duration_seconds", "gauge",
	       "Time the last sample took (every GPU and the host).");
	gw_sb_puts(b, "gpuwhy_exporter_sample_duration_seconds ");
	exporter_buf_fixed6(b, s->sample_seconds);
	gw_sb_puts(b, "\n");
	family(b, "gpuwhy_exporter_last_sample_timestamp_seconds", "gauge",
	       "When the served sample was taken, seconds since the epoch.");
	gw_sb_puts(b, "gpuwhy_exporter_last_sample_timestamp_seconds ");
	exporter_buf_fixed6(b, s->snap->t_wall);
	gw_sb_puts(b, "\n");
}

void exporter_render(const exporter_frame *s, const exporter_render_opts *o, exporter_buf *b)
{
	exporter_collectors def;
	const exporter_collectors *c = o->collectors;
	if (!c) {
		exporter_collectors_default(&def);
		c = &def;
	}
	render_dcgm(s, o, c, b);
	render_gpu_info(s, b);
	render_throttle(s, b);
	render_pcie(s, b);
	render_processes(s, o->processes, b);
	render_findings(s, b);
	render_host(s, b);
	render_self(s, o, b);
}
