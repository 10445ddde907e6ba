/* check_cuda.c - CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, resolved the way CUDA does. */
#include <stdbool.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor/check_cuda.h"
#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/strbuf.h"

/*
 * CUDA's default order, FASTEST_FIRST, is a heuristic CUDA does not document.
 * We predict it from what decides it in practice: the newer compute
 * capability first, then the higher maximum SM clock; equal GPUs keep PCI
 * bus order. The map is labelled a prediction wherever the two can differ.
 */
static void cuda_order(const doctor_cvd_gpu *g, int n, bool pci, int *order)
{
	for (int i = 0; i < n; i++)
		order[i] = i;
	if (pci)
		return;
	/* insertion sort: stable, n <= 64 */
	for (int i = 1; i < n; i++) {
		int x = order[i], j = i;
		while (j > 0) {
			const doctor_cvd_gpu *a = &g[order[j - 1]], *b = &g[x];
			bool faster =
			    b->cc > a->cc || (b->cc == a->cc && b->max_sm_clock > a->max_sm_clock);
			if (!faster)
				break;
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
}

/* UUID prefix match, case-insensitive, "GPU-" optional on both sides. */
static int match_uuid(const doctor_cvd_gpu *g, int n, const char *want, size_t wl, int *matches)
{
	const char *w = want;
	if (wl >= 4 && !strncasecmp(w, "GPU-", 4)) {
		w += 4;
		wl -= 4;
	}
	int found = -1;
	*matches = 0;
	if (wl == 0)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *u = g[i].uuid ? g[i].uuid : "";
		if (!strncasecmp(u, "GPU-", 4))
			u += 4;
		if (!strncasecmp(u, w, wl)) {
			if (strlen(u) == wl) { /* an exact match wins over prefixes */
				*matches = 1;
				return i;
			}
			found = i;
			(*matches)++;
		}
	}
	return found;
}

static void stop(doctor_cvd_map *o, int entry, const char *tok, size_t len, const char *why)
{
	o->stopped_at = entry;
	snprintf(o->stop_entry, sizeof o->stop_entry, "%.*s", (int)(len < 90 ? len : 90), tok);
	snprintf(o->stop_why, sizeof o->stop_why, "%s", why);
}

/* One entry of the list: the GPU it names, or -1 with o->stop_* filled. */
static int resolve_entry(const char *t, size_t len, int entry, const doctor_cvd_gpu *g, int n,
                         const int *order, doctor_cvd_map *o, bool *mig)
{
	char why[160];
	int matches;
	*mig = false;
	if (len >= 4 && !strncasecmp(t, "MIG-", 4)) {
		*mig = true;
		/* Old form MIG-GPU-<uuid>/<gi>/<ci> names its parent; MIG-<uuid> does not. */
		if (len > 8 && !strncasecmp(t + 4, "GPU-", 4)) {
			const char *slash = memchr(t, '/', len);
			size_t ul = slash ? (size_t)(slash - (t + 4)) : len - 4;
			int k = match_uuid(g, n, t + 4, ul, &matches);
			if (matches == 1)
				return k;
			stop(o, entry, t, len, "names no MIG-enabled GPU here");
			return -1;
		}
		return -2; /* a MIG instance we cannot place on a parent */
	}
	if (len >= 4 && !strncasecmp(t, "GPU-", 4)) {
		int k = match_uuid(g, n, t, len, &matches);
		if (matches == 1)
			return k;
		if (matches == 0)
			stop(o, entry, t, len, "matches no GPU's UUID");
		else {
			snprintf(why, sizeof why,
			         DOCTOR_("matches %d GPUs: too short a UUID prefix"), matches);
			stop(o, entry, t, len, why);
		}
		return -1;
	}
	/* An index: like strtoul, leading digits count and the rest is ignored. */
	size_t d = 0;
	while (d < len && isdigit((unsigned char)t[d]))
		d++;
	if (d == 0) {
		stop(o, entry, t, len,
		     len && t[0] == '-' ? DOCTOR_("is negative")
		                        : DOCTOR_("is not an index or a UUID"));
		return -1;
	}
	long v = strtol(t, NULL, 10);
	if (v >= n) {
		snprintf(why, sizeof why,
		         DOCTOR_P("is not a GPU index (there is %d GPU)",
		                  "is not a GPU index (there are %d GPUs)", n),
		         n);
		stop(o, entry, t, len, why);
		return -1;
	}
	return order[v];
}

void doctor_cvd_resolve(const char *value, const doctor_cvd_gpu *g, int n, bool pci,
                        doctor_cvd_map *o)
{
	memset(o, 0, sizeof *o);
	o->stopped_at = -1;
	if (n > DOCTOR_CVD_MAX)
		n = DOCTOR_CVD_MAX;
	cuda_order(g, n, pci, o->order);
	o->order_is_pci = true;
	for (int i = 0; i < n; i++)
		o->order_is_pci &= o->order[i] == i;
	if (!value) {
		for (int i = 0; i < n; i++)
			o->phys[o->n++] = o->order[i];
		return;
	}
	o->set = true;
	const char *p = value;
	bool mig_taken = false;
	for (int entry = 0;; entry++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *t = p;
		while (len && isspace((unsigned char)*t)) {
			t++;
			len--;
		}
		while (len && isspace((unsigned char)t[len - 1]))
			len--;
		if (len == 0 && !comma && entry == 0)
			return; /* "" : nothing visible */
		bool mig;
		int k = resolve_entry(t, len, entry, g, n, o->order, o, &mig);
		if (k == -1)
			return;
		/* CUDA gives a process at most one MIG device: later ones are ignored. */
		if (!(mig && mig_taken)) {
			for (int j = 0; j < o->n && k >= 0; j++) {
				if (o->phys[j] == k && !o->mig_entry[j] && !mig) {
					/* A GPU listed twice makes CUDA see no device at all. */
					o->duplicate = true;
					o->n = 0;
					stop(o, entry, t, len, "lists a GPU a second time");
					return;
				}
			}
			if (o->n < DOCTOR_CVD_MAX) {
				o->phys[o->n] = k; /* -2: a MIG instance without a known parent */
				o->mig_entry[o->n] = mig;
				o->n++;
			}
			mig_taken |= mig;
		}
		if (!comma)
			return;
		p = comma + 1;
	}
}

/* ---- the checks ---- */

static int build_gpus(const doctor_machine *m, doctor_cvd_gpu *g)
{
	int n = m->n < DOCTOR_CVD_MAX ? m->n : DOCTOR_CVD_MAX;
	for (int i = 0; i < n; i++) {
		const doctor_gpu *x = &m->gpu[i];
		double v;
		memset(&g[i], 0, sizeof g[i]);
		g[i].uuid = x->st.uuid;
		g[i].name = x->st.name;
		g[i].pci = x->st.pci_bus_id;
		if (doctor_val(x, GM_COMPUTE_CAP, &v))
			g[i].cc = v;
		if (doctor_val(x, GM_CLK_MAX_SM, &v))
			g[i].max_sm_clock = v;
		g[i].mig = doctor_val(x, GM_MIG_CURRENT, &v) && v > 0;
	}
	return n;
}

static bool pci_order_env(doctor_ctx *c)
{
	const char *o = doctor_env(c, "CUDA_DEVICE_ORDER");
	return o && !strcmp(o, "PCI_BUS_ID");
}

/* "cuda:0->GPU 2 (NVIDIA H100, GPU-8f2a1c3e)" for each ordinal. */
static void map_text(const doctor_machine *m, const doctor_cvd_map *map, gw_strbuf *b)
{
	for (int k = 0; k < map->n; k++) {
		gw_sb_sep(b, ", ");
		int i = map->phys[k];
		if (i < 0) {
			gw_sb_printf(b, DOCTOR_("cuda:%d->a MIG instance"), k);
			continue;
		}
		const doctor_gpu *g = &m->gpu[i];
		gw_sb_printf(b, "cuda:%d->GPU %d (%s%s%.12s)%s", k, g->st.index, g->st.name,
		             g->st.name[0] ? ", " : "", g->st.uuid,
		             map->mig_entry[k] ? " MIG" : "");
	}
}

bool doctor_cvd_hides_all(const char *v)
{
	while (isspace((unsigned char)*v))
		v++;
	return *v == '\0' || *v == ',' || *v == '-' ||
	       !(isdigit((unsigned char)*v) || !strncasecmp(v, "GPU-", 4) ||
	         !strncasecmp(v, "MIG-", 4));
}

/* Compare the predicted map with the ordinals PyTorch reports (when it gives UUIDs). */
static void torch_agrees(doctor_ctx *c, const doctor_cvd_map *map, gw_strbuf *b, bool *differs)
{
	*differs = false;
	if (c->m->simulated)
		return;
	const doctor_python *py = doctor_ctx_python(c);
	const doctor_pypkg *t = &py->pkg[0];
	if (!py->ran || !t->probed || t->gpu_count < 0 || t->ndev == 0 || !t->dev_uuid[0][0])
		return;
	for (int k = 0; k < t->ndev && k < map->n; k++) {
		int i = map->phys[k];
		if (i < 0 || strcasecmp(c->m->gpu[i].st.uuid, t->dev_uuid[k])) {
			gw_sb_printf(b, DOCTOR_("; but PyTorch's cuda:%d is %s"), k,
			             t->dev_uuid[k]);
			*differs = true;
			return;
		}
	}
	gw_sb_printf(b, DOCTOR_(" (PyTorch agrees)"));
}

void doctor_check_cuda_visible_devices(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	const char *v = doctor_env(c, "CUDA_VISIBLE_DEVICES");
	if (m->nvml != DOCTOR_NVML_OK || m->n == 0) {
		if (v && doctor_cvd_hides_all(v)) {
			doctor_result *r =
			    doctor_addf(c->r, "cuda.visible_devices", DOCTOR_FAIL,
			                "CUDA_VISIBLE_DEVICES='%s' hides every GPU from CUDA", v);
			doctor_fixf(r, "unset CUDA_VISIBLE_DEVICES");
		} else {
			doctor_addf(c->r, "cuda.visible_devices", DOCTOR_SKIP,
			            "no GPUs to map (see driver.nvml); CUDA_VISIBLE_DEVICES %s%s%s",
			            v ? "='" : DOCTOR_("unset"), v ? v : "", v ? "'" : "");
		}
		return;
	}
	doctor_cvd_gpu g[DOCTOR_CVD_MAX];
	int n = build_gpus(m, g);
	doctor_cvd_map map;
	doctor_cvd_resolve(v, g, n, pci_order_env(c), &map);
	gw_strbuf b = {0};
	map_text(m, &map, &b);
	const char *pred =
	    map.order_is_pci ? "" : DOCTOR_(" (predicted: CUDA orders fastest first)");
	bool differs;
	if (!map.set) {
		gw_strbuf t = {0};
		gw_sb_printf(&t,
		             DOCTOR_P("unset: CUDA sees %d GPU: %s%s",
		                      "unset: CUDA sees all %d GPUs: %s%s", map.n),
		             map.n, gw_sb_str(&b), pred);
		torch_agrees(c, &map, &t, &differs);
		doctor_addf(c->r, "cuda.visible_devices", differs ? DOCTOR_WARN : DOCTOR_PASS, "%s",
		            gw_sb_str(&t));
		if (differs)
			doctor_fixf(&c->r->v[c->r->n - 1],
			            "export CUDA_DEVICE_ORDER=PCI_BUS_ID, or select "
			            "GPUs by UUID");
		gw_sb_free(&t);
		gw_sb_free(&b);
		return;
	}
	if (map.n == 0) {
		doctor_result *r;
		if (map.duplicate)
			r = doctor_addf(
			    c->r, "cuda.visible_devices", DOCTOR_FAIL,
			    "CUDA_VISIBLE_DEVICES='%s': entry '%s' lists a GPU a second time, "
			    "so CUDA sees no GPU (programs fall back to the CPU)",
			    v, map.stop_entry);
		else if (map.stopped_at == 0)
			r = doctor_addf(
			    c->r, "cuda.visible_devices", DOCTOR_FAIL,
			    "CUDA_VISIBLE_DEVICES='%s': the first entry '%s' %s, so CUDA sees "
			    "no GPU (programs fall back to the CPU)",
			    v, map.stop_entry, map.stop_why);
		else
			r = doctor_addf(
			    c->r, "cuda.visible_devices", DOCTOR_FAIL,
			    "CUDA_VISIBLE_DEVICES is empty: CUDA sees no GPU (programs fall back "
			    "to the CPU)");
		doctor_fixf(
		    r, "unset CUDA_VISIBLE_DEVICES, or list GPUs by index or UUID (nvidia-smi -L), "
		       "e.g. CUDA_VISIBLE_DEVICES=0");
		gw_sb_free(&b);
		return;
	}
	gw_strbuf t = {0};
	gw_sb_printf(&t, "CUDA_VISIBLE_DEVICES='%s': %s%s", v, gw_sb_str(&b), pred);
	torch_agrees(c, &map, &t, &differs);
	doctor_status st = differs ? DOCTOR_WARN : DOCTOR_PASS;
	gw_strbuf fix = {0};
	if (map.stopped_at > 0) {
		gw_sb_printf(&t,
		             DOCTOR_("; entry '%s' %s, so it and every entry after it are hidden"),
		             map.stop_entry, map.stop_why);
		gw_sb_printf(
		    &fix, DOCTOR_("correct or remove '%s' (nvidia-smi -L lists indices and UUIDs)"),
		    map.stop_entry);
		st = DOCTOR_WARN;
	}
	for (int k = 0; k < map.n; k++) {
		int i = map.phys[k];
		if (i >= 0 && !map.mig_entry[k] && g[i].mig) {
			gw_sb_printf(
			    &t, DOCTOR_("; GPU %d is in MIG mode: CUDA cannot use it by index"), i);
			gw_sb_sep(&fix, "; ");
			gw_sb_printf(
			    &fix,
			    DOCTOR_("name one of GPU %d's MIG instances by its MIG-... UUID "
			            "(nvidia-smi -L); a process gets one MIG device"),
			    i);
			st = DOCTOR_WARN;
			break;
		}
	}
	if (differs) {
		gw_sb_sep(&fix, "; ");
		gw_sb_printf(
		    &fix, DOCTOR_("export CUDA_DEVICE_ORDER=PCI_BUS_ID, or select GPUs by UUID"));
	}
	doctor_result *r = doctor_addf(c->r, "cuda.visible_devices", st, "%s", gw_sb_str(&t));
	if (fix.len)
		doctor_fixf(r, "%s", gw_sb_str(&fix));
	gw_sb_free(&fix);
	gw_sb_free(&t);
	gw_sb_free(&b);
}

void doctor_check_cuda_device_order(doctor_ctx *c)
{
	const doctor_machine *m = c->m;
	if (m->nvml != DOCTOR_NVML_OK || m->n < 2) {
		doctor_addf(
		    c->r, "cuda.device_order", DOCTOR_SKIP,
		    "fewer than two GPUs: CUDA and nvidia-smi cannot number them differently");
		return;
	}
	const char *o = doctor_env(c, "CUDA_DEVICE_ORDER");
	if (o && strcmp(o, "PCI_BUS_ID") && strcmp(o, "FASTEST_FIRST")) {
		doctor_result *r =
		    doctor_addf(c->r, "cuda.device_order", DOCTOR_WARN,
		                "CUDA_DEVICE_ORDER='%s' is not FASTEST_FIRST or PCI_BUS_ID: "
		                "CUDA ignores it and orders fastest first",
		                o);
		doctor_fixf(r, "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
		return;
	}
	if (o && !strcmp(o, "PCI_BUS_ID")) {
		doctor_addf(c->r, "cuda.device_order", DOCTOR_PASS,
		            "CUDA_DEVICE_ORDER=PCI_BUS_ID: CUDA numbers GPUs like nvidia-smi");
		return;
	}
	gw_strbuf models = {0};
	bool mixed = false;
	for (int i = 0; i < m->n; i++) {
		int same = 0;
		bool first = true;
		for (int j = 0; j < m->n; j++) {
			if (!strcmp(m->gpu[i].st.name, m->gpu[j].st.name)) {
				same++;
				first &= j >= i;
			}
		}
		if (!first)
			continue;
		if (same != m->n)
			mixed = true;
		gw_sb_sep(&models, ", ");
		gw_sb_printf(&models, "%dx %s", same,
		             m->gpu[i].st.name[0] ? m->gpu[i].st.name : "?");
	}
	if (!mixed) {
		doctor_addf(c->r, "cuda.device_order", DOCTOR_PASS,
		            "all %d GPUs are %s: CUDA's default order equals nvidia-smi's", m->n,
		            m->gpu[0].st.name[0] ? m->gpu[0].st.name : DOCTOR_("the same model"));
		gw_sb_free(&models);
		return;
	}
	doctor_cvd_gpu g[DOCTOR_CVD_MAX];
	int n = build_gpus(m, g);
	doctor_cvd_map map;
	doctor_cvd_resolve(NULL, g, n, false, &map);
	gw_strbuf b = {0};
	map_text(m, &map, &b);
	doctor_result *r =
	    doctor_addf(c->r, "cuda.device_order", DOCTOR_WARN,
	                "mixed models (%s) and CUDA_DEVICE_ORDER %s: CUDA numbers the "
	                "fastest first, %s, so cuda:N and indices in CUDA_VISIBLE_DEVICES "
	                "%s nvidia-smi's GPU N",
	                gw_sb_str(&models), o ? "=FASTEST_FIRST" : DOCTOR_("unset"),
	                map.order_is_pci ? DOCTOR_("probably in PCI order here") : gw_sb_str(&b),
	                map.order_is_pci ? DOCTOR_("can differ from") : DOCTOR_("differ from"));
	doctor_fixf(r, "export CUDA_DEVICE_ORDER=PCI_BUS_ID (or select GPUs by UUID)");
	gw_sb_free(&b);
	gw_sb_free(&models);
}
