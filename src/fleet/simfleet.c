/*
 * simfleet.c - `gpuwhy sim fleet`: what a cluster's dcgm-exporters would
 * have given Prometheus, as OpenMetrics text for `promtool tsdb
 * create-blocks-from openmetrics`, with problems planted on named nodes,
 * GPUs and jobs at given times (a JSON plant file, docs/fleet.md).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "gpu/gpu_reasons.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/xalloc.h"

#define SF_MAX_PLANTS 256
#define SF_MEM_TOTAL 81559.0 /* MiB of an H100 80GB HBM3 */

typedef enum {
	SK_BUSY,
	SK_IDLE,
	SK_DATA_STARVED,
	SK_THERMAL,
	SK_POWER_CAP,
	SK_LOST,
	SK_IDLE_MEMORY,
	SK_STRAGGLER,
	SK_IDLE_NODE,
	SK__COUNT
} sf_kind;

static const char *const sf_kinds[SK__COUNT] = {
    "busy",         "idle",     "data-starved",        "thermal",
    "power-capped", "gpu-lost", "idle-holding-memory", "straggler",
    "reserved-idle"};

typedef struct {
	sf_kind kind;
	char node[128];
	uint64_t gpus;   /* bit per GPU index; all when not given */
	double from, to; /* seconds from the start */
	int rank;        /* straggler: the slow GPU */
	bool io;         /* data-starved: storage, not a core, is what the input waits on */
	bool host;       /* its node has a node_exporter (always with a data-starved plant) */
	char job[128], pod[128], ns[64];
} sf_plant;

typedef struct {
	sf_plant p[SF_MAX_PLANTS];
	int n;
} sf_plants;

static uint64_t parse_gpus(const char *s)
{
	uint64_t m = 0;
	while (s && *s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (end == s)
			return 0;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i >= 0 && i < 64; i++)
			m |= 1ull << i;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return 0;
	}
	return m;
}

static const char *jstr(json_t *o, const char *k, const char *def)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : def;
}

static int parse_plant(json_t *o, size_t i, const simfleet_opts *so, sf_plant *p, gw_fail *err)
{
	const char *kind = jstr(o, "kind", "");
	int k;
	for (k = 0; k < SK__COUNT && strcmp(sf_kinds[k], kind); k++)
		;
	char what[64];
	snprintf(what, sizeof what, "plants[%zu]", i);
	if (k == SK__COUNT)
		return gw_fail_set(err, GW_EXIT_USAGE, what, N_("see docs/fleet.md for the kinds"),
		                   "unknown kind '%s'", kind);
	*p = (sf_plant){.kind = (sf_kind)k, .to = so->hours * 3600};
	snprintf(p->node, sizeof p->node, "%s", jstr(o, "node", ""));
	p->gpus =
	    json_is_string(json_object_get(o, "gpus")) ? parse_gpus(jstr(o, "gpus", "")) : ~0ull;
	json_t *f = json_object_get(o, "from_h"), *t = json_object_get(o, "to_h"),
	       *at = json_object_get(o, "at_h");
	if (json_is_number(f))
		p->from = json_number_value(f) * 3600;
	if (json_is_number(t))
		p->to = json_number_value(t) * 3600;
	if (json_is_number(at))
		p->from = json_number_value(at) * 3600;
	p->rank = (int)json_integer_value(json_object_get(o, "rank"));
	const char *cause = jstr(o, "cause", "cpu");
	p->io = !strcmp(cause, "io");
	p->host = json_is_true(json_object_get(o, "node_exporter"));
	if (k == SK_DATA_STARVED && !p->io && strcmp(cause, "cpu"))
		return gw_fail_set(err, GW_EXIT_USAGE, what, N_("see docs/fleet.md"),
		                   "cause '%s' is neither cpu nor io", cause);
	snprintf(p->job, sizeof p->job, "%s", jstr(o, "job", ""));
	snprintf(p->pod, sizeof p->pod, "%s", jstr(o, "pod", ""));
	snprintf(p->ns, sizeof p->ns, "%s", jstr(o, "namespace", ""));
	if (!p->node[0] || !p->gpus || p->to <= p->from)
		return gw_fail_set(err, GW_EXIT_USAGE, what, N_("see docs/fleet.md"),
		                   "needs a node, valid gpus and from_h before to_h");
	return 0;
}

static int load_plants(const simfleet_opts *so, sf_plants *ps, gw_fail *err)
{
	ps->n = 0;
	if (!so->plant)
		return 0;
	json_error_t je;
	json_t *root = json_load_file(so->plant, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return gw_fail_set(err, GW_EXIT_USAGE, so->plant, NULL, "line %d: %s", je.line,
		                   je.text);
	json_t *arr = json_object_get(root, "plants");
	int rc = json_is_array(arr) ? 0
	                            : gw_fail_set(err, GW_EXIT_USAGE, so->plant,
	                                          N_("see docs/fleet.md"), "no \"plants\" array");
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o)
	{
		if (rc || ps->n == SF_MAX_PLANTS)
			break;
		rc = parse_plant(o, i, so, &ps->p[ps->n++], err);
	}
	json_decref(root);
	return rc;
}

/* A small deterministic noise in [0, 1) from the node, GPU and sample. */
static double noise(int node, int gpu, long s, int salt)
{
	uint64_t x = (uint64_t)node * 0x9E3779B97F4A7C15ull ^
	             (uint64_t)gpu * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)s * 0x165667B19E3779F9ull ^
	             (uint64_t)salt;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (double)(x >> 11) / 9007199254740992.0;
}

/* One GPU's readings at one sample. */
typedef struct {
	bool present;
	double util, used, power, temp, clock, reasons, xid, sm, limit;
	const sf_plant *job; /* the plant whose job labels apply, NULL none */
} sf_reading;

/* The plant that holds at time t on this GPU (the last listed wins), NULL: busy and healthy. */
static const sf_plant *plant_at(const sf_plants *ps, const char *node, int gpu, double t)
{
	const sf_plant *hit = NULL;
	for (int i = 0; i < ps->n; i++) {
		const sf_plant *p = &ps->p[i];
		if (strcmp(p->node, node) || !(p->gpus >> gpu & 1))
			continue;
		if (p->kind == SK_LOST ? t >= p->from : (t >= p->from && t < p->to))
			hit = p;
	}
	return hit;
}

static void reading(const sf_plants *ps, const char *node, int ni, int gpu, long s, double t,
                    sf_reading *r)
{
	double e = noise(ni, gpu, s, 1);
	const sf_plant *p = plant_at(ps, node, gpu, t);
	sf_kind k = p ? p->kind : SK_BUSY;
	*r = (sf_reading){.present = true,
	                  .util = 93 + 6 * e,
	                  .used = 62000 + 500 * e,
	                  .power = 560 + 80 * e,
	                  .temp = 64 + 4 * e,
	                  .clock = 1980,
	                  .sm = 0.72 + 0.1 * e,
	                  .limit = 700, /* an H100 SXM's default */
	                  .job = p && (p->job[0] || p->pod[0]) ? p : NULL};
	switch (k) {
	case SK_BUSY:
		break;
	case SK_IDLE:
		*r = (sf_reading){.present = true,
		                  .util = 0,
		                  .used = 0,
		                  .power = 62 + 5 * e,
		                  .temp = 31,
		                  .clock = 345,
		                  .reasons = 1,
		                  .sm = 0,
		                  .job = r->job};
		break;
	case SK_IDLE_NODE:
		*r = (sf_reading){.present = true,
		                  .util = 0,
		                  .used = 420,
		                  .power = 68 + 5 * e,
		                  .temp = 33,
		                  .clock = 345,
		                  .reasons = 1,
		                  .sm = 0,
		                  .job = r->job};
		break;
	case SK_IDLE_MEMORY:
		*r = (sf_reading){.present = true,
		                  .util = 0,
		                  .used = 77800,
		                  .power = 74 + 5 * e,
		                  .temp = 35,
		                  .clock = 345,
		                  .reasons = 1,
		                  .sm = 0,
		                  .job = r->job};
		break;
	case SK_DATA_STARVED: /* a sawtooth: bursts of work, then waits on the loaders */
		r->util = s % 6 < 2 ? 88 + 10 * e : 3 * e;
		r->sm = r->util / 140;
		r->power = 150 + 3 * r->util;
		r->used = 38000 + 300 * e;
		break;
	case SK_THERMAL:
		r->temp = 90 + 3 * e;
		r->clock = 1150 + 50 * e;
		r->reasons = (double)(gpu_reason_bit(GPU_REASON_SW_THERMAL) |
		                      gpu_reason_bit(GPU_REASON_HW_THERMAL));
		r->power = 420 + 20 * e;
		break;
	case SK_POWER_CAP:
		r->power = 348 + 4 * e;
		r->limit = 350; /* someone lowered it (nvidia-smi -pl 350) */
		r->clock = 1410 + 30 * e;
		r->reasons = (double)gpu_reason_bit(GPU_REASON_SW_POWER_CAP);
		break;
	case SK_LOST: /* Xid 79 for two minutes, then no series at all */
		r->present = t < p->from + 120;
		r->xid = 79;
		r->util = 0;
		r->sm = 0;
		break;
	case SK_STRAGGLER: /* the others wait at every all-reduce for the slow rank */
		if (gpu != p->rank) {
			r->util = 45 + 8 * e;
			r->sm = 0.3;
			r->power = 300 + 20 * e;
		}
		break;
	default:
		break;
	}
}

static double reading_value(const sf_reading *r, prom_fleet_metric m)
{
	switch (m) {
	case PF_UTIL:
		return round(r->util);
	case PF_FB_USED:
		return round(r->used);
	case PF_FB_FREE:
		return round(SF_MEM_TOTAL - r->used);
	case PF_POWER:
		return r->power;
	case PF_TEMP:
		return round(r->temp);
	case PF_SM_CLOCK:
		return round(r->clock);
	case PF_REASONS:
		return r->reasons;
	case PF_XID:
		return r->xid;
	case PF_SM_ACTIVE:
		return r->sm;
	case PF_POWER_LIMIT:
		return r->limit;
	default:
		return 0;
	}
}

/* dcgm-exporter's labels for GPU gpu of node ni, plus the job's where one runs, braces included,
 * into buf. */
static void labels(char *buf, size_t len, const char *node, int ni, int gpu, const sf_plant *job)
{
	int at = snprintf(
	    buf, len,
	    "{gpu=\"%d\",UUID=\"GPU-%08x-%04x-%04x-%04x-%012llx\",pci_bus_id=\"00000000:%02X:"
	    "00.0\","
	    "device=\"nvidia%d\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"%s\","
	    "DCGM_FI_DRIVER_VERSION=\"550.54.15\",instance=\"%s:9400\",job=\"dcgm-exporter\"",
	    gpu, (unsigned)(0x5a000000u + (unsigned)ni), (unsigned)gpu, 0x4000u, 0x8000u,
	    (unsigned long long)(ni * 64 + gpu), 0x18 + 0x10 * gpu, gpu, node, node);
	if (job && job->job[0] && at >= 0 && (size_t)at < len)
		at += snprintf(buf + at, len - (size_t)at, ",hpc_job=\"%s\"", job->job);
	if (job && job->pod[0] && at >= 0 && (size_t)at < len)
		at += snprintf(buf + at, len - (size_t)at, ",pod=\"%s\",namespace=\"%s\"", job->pod,
		               job->ns[0] ? job->ns : "default");
	if (at >= 0 && (size_t)at + 1 < len)
		snprintf(buf + at, len - (size_t)at, "}");
}

/* A value as the text writes it: whole numbers without decimals, others with three. */
static void value_text(double v, char *buf, size_t len)
{
	snprintf(buf, len, v == floor(v) ? "%.0f" : "%.3f", v);
}

static void write_family(const simfleet_opts *o, const sf_plants *ps, prom_fleet_metric m,
                         long nsamples, FILE *out)
{
	gpu_metric_id id = prom_fleet_metric_id(m);
	const char *name = gpu_metrics[id].dcgm;
	fprintf(out, "# TYPE %s gauge\n# HELP %s %s\n", name, name, gpu_metrics[id].help);
	for (int ni = 0; ni < o->nodes; ni++) {
		char node[32];
		snprintf(node, sizeof node, "node%02d", ni + 1);
		for (int g = 0; g < o->gpus_per_node; g++)
			for (long s = 0; s < nsamples; s++) {
				double t = s * o->step;
				sf_reading r;
				reading(ps, node, ni, g, s, t, &r);
				if (!r.present)
					continue;
				char lb[1024], val[64];
				labels(lb, sizeof lb, node, ni, g, r.job);
				value_text(reading_value(&r, m), val, sizeof val);
				fprintf(out, "%s%s %s %.3f\n", name, lb, val, o->start + t);
			}
	}
}

/* How node's input fares at t: 0 fed, 1 starved by a saturated core, 2 by storage; *any: the
 * node has a data-starved plant at all (and so a node_exporter). */
static int starved_at(const sf_plants *ps, const char *node, double t, bool *any)
{
	int hit = 0;
	for (int i = 0; i < ps->n; i++)
		if ((ps->p[i].kind == SK_DATA_STARVED || ps->p[i].host) &&
		    !strcmp(ps->p[i].node, node)) {
			*any = true;
			if (ps->p[i].kind == SK_DATA_STARVED && t >= ps->p[i].from &&
			    t < ps->p[i].to)
				hit = ps->p[i].io ? 2 : 1;
		}
	return hit;
}

/* One node_exporter counter series: rate[state] per second (state of the step before each
 * sample: fed, cpu-starved, io-starved), accumulated from 0. */
static void write_counter(const simfleet_opts *o, const sf_plants *ps, const char *node,
                          long nsamples, const char *name, const char *labels, const double rate[3],
                          FILE *out)
{
	bool any = false;
	double acc = 0;
	for (long s = 0; s < nsamples; s++) {
		double t = s * o->step;
		if (s)
			acc += o->step * rate[starved_at(ps, node, t, &any)];
		fprintf(out, "%s{%sinstance=\"%s:9100\",job=\"node\"} %.1f %.3f\n", name, labels,
		        node, acc, o->start + t);
	}
}

/* The nodes with a data-starved plant or one marked node_exporter have one; others none. */
static bool has_node_exporter(const sf_plants *ps, int ni, char *node, size_t len)
{
	bool any = false;
	snprintf(node, len, "node%02d", ni + 1);
	starved_at(ps, node, 0, &any);
	return any;
}

/*
 * node_exporter's CPU counters (4 CPUs): core 0 saturated by the data loader while
 * cpu-starved, iowait on every core while io-starved, every core a quarter busy otherwise.
 */
static void write_node_cpu(const simfleet_opts *o, const sf_plants *ps, long nsamples, FILE *out)
{
	static const char *const modes[] = {"idle", "iowait", "user", "system"};
	/* idle, iowait, user, system shares: fed, the hot core cpu-starved, io-starved */
	static const double share[3][4] = {
	    {0.74, 0.01, 0.2, 0.05}, {0.01, 0.0, 0.96, 0.03}, {0.45, 0.35, 0.15, 0.05}};
	fputs("# TYPE node_cpu_seconds counter\n# HELP node_cpu_seconds Seconds the CPUs spent in "
	      "each mode.\n",
	      out);
	for (int ni = 0; ni < o->nodes; ni++) {
		char node[32], labels[64];
		if (!has_node_exporter(ps, ni, node, sizeof node))
			continue;
		for (int cpu = 0; cpu < 4; cpu++)
			for (int m = 0; m < 4; m++) {
				/* only core 0 runs the loader; the others stay fed */
				double rate[3] = {share[0][m], share[cpu == 0][m], share[2][m]};
				snprintf(labels, sizeof labels, "cpu=\"%d\",mode=\"%s\",", cpu,
				         modes[m]);
				write_counter(o, ps, node, nsamples, "node_cpu_seconds_total",
				              labels, rate, out);
			}
	}
}

/*
 * node_exporter's disk and pressure counters. The disk nvme0n1 (its partition nvme0n1p1 and
 * the device-mapper volume dm-0 on it read the same) is busy while io-starved; loop0, a busy
 * loop device, is saturated on the cpu-starved node and must not be taken for its disk.
 * Pressure: I/O stalls while io-starved, CPU waits while a core is saturated.
 */
static void write_node_io(const simfleet_opts *o, const sf_plants *ps, long nsamples, FILE *out)
{
	static const struct {
		const char *family, *labels;
		double rate[3];
	} ser[] = {
	    {"node_disk_io_time_seconds", "device=\"nvme0n1\",", {0.05, 0.05, 0.97}},
	    {"node_disk_io_time_seconds", "device=\"nvme0n1p1\",", {0.05, 0.05, 0.97}},
	    {"node_disk_io_time_seconds", "device=\"dm-0\",", {0.05, 1.0, 0.99}},
	    {"node_disk_io_time_seconds", "device=\"loop0\",", {0.0, 1.0, 0.0}},
	    {"node_disk_read_bytes", "device=\"nvme0n1\",", {5e7, 5e7, 1.5e9}},
	    {"node_disk_read_bytes", "device=\"dm-0\",", {5e7, 5e7, 1.5e9}},
	    {"node_disk_read_bytes", "device=\"loop0\",", {0, 2e8, 0}},
	    {"node_pressure_cpu_waiting_seconds", "", {0.02, 0.3, 0.02}},
	    {"node_pressure_io_waiting_seconds", "", {0.01, 0.01, 0.62}},
	    {"node_pressure_io_stalled_seconds", "", {0.0, 0.0, 0.38}},
	    {"node_pressure_memory_waiting_seconds", "", {0.0, 0.0, 0.0}},
	    {"node_pressure_memory_stalled_seconds", "", {0.0, 0.0, 0.0}},
	};
	for (size_t i = 0; i < sizeof ser / sizeof *ser; i++) {
		char name[64];
		snprintf(name, sizeof name, "%s_total", ser[i].family);
		if (!i || strcmp(ser[i].family, ser[i - 1].family))
			fprintf(out, "# TYPE %s counter\n", ser[i].family);
		for (int ni = 0; ni < o->nodes; ni++) {
			char node[32];
			if (has_node_exporter(ps, ni, node, sizeof node))
				write_counter(o, ps, node, nsamples, name, ser[i].labels,
				              ser[i].rate, out);
		}
	}
}

int simfleet_write(const simfleet_opts *o, FILE *out, gw_fail *err)
{
	sf_plants *ps = gw_xcalloc(1, sizeof *ps);
	int rc = load_plants(o, ps, err);
	if (rc == 0) {
		long nsamples = (long)floor(o->hours * 3600 / o->step + 1e-9) + 1;
		for (int m = 0; m < PF__COUNT; m++)
			write_family(o, ps, (prom_fleet_metric)m, nsamples, out);
		write_node_cpu(o, ps, nsamples, out);
		write_node_io(o, ps, nsamples, out);
		fputs("# EOF\n", out);
		if (fflush(out) || ferror(out))
			rc = gw_fail_set(err, GW_EXIT_ENV, "output", NULL, "cannot write");
	}
	free(ps);
	return rc;
}

/* The fleet answered point by point: the plants read once, the nodes named. */
struct simfleet {
	simfleet_opts o;
	sf_plants ps;
	long nsamples;
	char (*node)[32];
	bool node_cpu;
};

simfleet *simfleet_open(const simfleet_opts *o, gw_fail *err)
{
	simfleet *sf = gw_xcalloc(1, sizeof *sf);
	sf->o = *o;
	if (load_plants(o, &sf->ps, err)) {
		free(sf);
		return NULL;
	}
	sf->nsamples = (long)floor(o->hours * 3600 / o->step + 1e-9) + 1;
	sf->node = gw_xcalloc((size_t)(o->nodes > 0 ? o->nodes : 1), sizeof *sf->node);
	for (int ni = 0; ni < o->nodes; ni++) {
		snprintf(sf->node[ni], sizeof sf->node[ni], "node%02d", ni + 1);
		starved_at(&sf->ps, sf->node[ni], 0, &sf->node_cpu);
	}
	return sf;
}

void simfleet_close(simfleet *sf)
{
	if (sf)
		free(sf->node);
	free(sf);
}

long simfleet_samples(const simfleet *sf)
{
	return sf->nsamples;
}

bool simfleet_node_cpu(const simfleet *sf)
{
	return sf->node_cpu;
}

bool simfleet_point(const simfleet *sf, int ni, int g, long s, prom_fleet_metric m, char *val,
                    size_t len, const void **job)
{
	sf_reading r;
	reading(&sf->ps, sf->node[ni], ni, g, s, s * sf->o.step, &r);
	if (!r.present)
		return false;
	value_text(reading_value(&r, m), val, len);
	*job = r.job;
	return true;
}

void simfleet_labels(const simfleet *sf, int ni, int g, const void *job, char *buf, size_t len)
{
	labels(buf, len, sf->node[ni], ni, g, job);
}
