/*
 * exporter.h - `gpuwhy exporter`: Prometheus /metrics with dcgm-exporter's
 * series plus gpuwhy's own (host, processes, throttle reasons, findings).
 *
 * Pieces, from pure to threaded:
 *   exporter_buf         a growable text buffer with locale-free number printing
 *   exporter_collectors  which DCGM families to export (a dcgm-exporter counters CSV)
 *   exporter_frame       a snapshot of the one sampler plus the exporter's labels
 *   exporter_render()    frame -> exposition text (pure: unit-tested on hand-built data)
 *   exporter_findings_fn the hook that turns a window of snapshots into findings;
 *                   exporter_diag_findings(): the instant checks plus the diagnosis rules
 *   exporter_page        one rendered exposition, shared read-only by every scrape
 *   exporter_server      HTTP on libmicrohttpd: serves the latest page, nothing else
 *   exporter_publisher     the sampler's callback: window, findings, render, publish
 *
 * A scrape never samples and never renders: it takes a reference to the page
 * the sampler published last, so a slow NVML call cannot delay it.
 */
#ifndef GPUWHY_EXPORTER_EXPORTER_H
#define GPUWHY_EXPORTER_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"
#include "model/timeline.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------------ buffer */

/*
 * The exposition text: a util string buffer (gw_sb_put, gw_sb_puts, ...)
 * whose bytes the HTTP side takes without a copy, plus the number and
 * escape writers of the text format below.
 */
typedef gw_strbuf exporter_buf;

void exporter_buf_int(exporter_buf *b, long long v);
/* Fixed six decimals like printf("%f") in the C locale, whatever the user's locale. */
void exporter_buf_fixed6(exporter_buf *b, double v);
/* Label value with the exposition format's escapes (\\, \", \n). */
void exporter_buf_label_value(exporter_buf *b, const char *s);
/* HELP text with its escapes (\\, \n). */
void exporter_buf_help_text(exporter_buf *b, const char *s);
/* A family's "# HELP" and "# TYPE" lines. */
void exporter_buf_family(exporter_buf *b, const char *name, const char *type, const char *help);
/* A histogram's series: cumulative buckets at the upper bounds le (n of
 * them, +Inf implied), _sum and _count; labels are "k=\"v\",..." or "". */
void exporter_buf_histogram(exporter_buf *b, const char *name, const char *labels, const double *le,
                            const uint64_t *count, int n, uint64_t total, double sum);

/* -------------------------------------------------------------- collectors */

/* String-valued DCGM fields that become labels (dcgm-exporter's `label` rows). */
enum {
	EXPORTER_LABEL_DEV_SERIAL = 1u << 0, /* DCGM_FI_DEV_SERIAL */
	EXPORTER_LABEL_DEV_VBIOS = 1u << 1,  /* DCGM_FI_DEV_VBIOS_VERSION */
	EXPORTER_LABEL_DRIVER = 1u << 2,     /* DCGM_FI_DRIVER_VERSION */
	EXPORTER_LABEL_NVML = 1u << 3,       /* DCGM_FI_NVML_VERSION */
};

/* The TYPE line of a family. */
typedef enum { EXPORTER_GAUGE, EXPORTER_COUNTER, EXPORTER_UNTYPED } exporter_prom_type;

typedef struct {
	int order[GM__COUNT]; /* metric ids in output order */
	int n;
	exporter_prom_type type[GM__COUNT];
	char *help[GM__COUNT]; /* help text per id; NULL = the table's */
	unsigned labels;       /* EXPORTER_LABEL_* */
} exporter_collectors;

/* Every metric of the table that has a DCGM name, in table order, with the
 * table's help texts, plus the driver version label. Gauges are typed gauge;
 * the table's counters untyped (see collectors.c). */
void exporter_collectors_default(exporter_collectors *c);
/* Type every exported counter metric (energy, replays, NVLink, remapped rows, ECC) as t. */
void exporter_collectors_counter_type(exporter_collectors *c, exporter_prom_type t);
void exporter_collectors_free(exporter_collectors *c);

/*
 * Parse a dcgm-exporter counters CSV ("FIELD, prom_type, help"; '#' starts a
 * comment; blank lines ignored). Fields the table does not know are skipped
 * and listed, comma-separated, in unknown (truncated with "..." when long).
 * Returns 0, or -1 with a message naming the line in err (malformed row,
 * prom_type other than gauge/counter/label, a numeric field given as label).
 */
int exporter_collectors_parse(const char *text, size_t len, exporter_collectors *out, char *unknown,
                              size_t unknownlen, char *err, size_t errlen);

/* ------------------------------------------------------------------- frame */

#define EXPORTER_PROC_MAX 32 /* upper bound of --processes */

typedef struct {
	unsigned pid;
	char command[64]; /* short name of the executable; "" when unknown */
	bool mem_ok;
	uint64_t mem_bytes;
	bool sm_ok;
	double sm_ratio; /* 0..1 */
	/* Kubernetes pod of the process, "" when not in one or not looked up */
	char pod[254], namespace_[64], container[64];
} exporter_proc;

/* What the exporter shows of one GPU beside its values: labels, top processes, MIG. */
typedef struct {
	int index; /* NVML index: dcgm-exporter's gpu label */
	char uuid[96], pci_bus_id[32], name[96], serial[32], vbios[32];
	char vendor[8];         /* "nvidia", "amd"; "" when unknown */
	const gpu_values *vals; /* this GPU's values in the frame's snapshot */
	int nprocs_total;       /* processes on the GPU; -1 when unknown */
	int nprocs;             /* kept in procs: the top ones by memory */
	exporter_proc procs[EXPORTER_PROC_MAX];
	/* the one Kubernetes container whose processes use the GPU, "" when none or several */
	char pod[254], namespace_[64], container[64];
	int nmig; /* MIG devices (GPU instances), 0 when MIG is off */
	gpu_mig mig[GPU_MIG_MAX];
} exporter_gpu;

typedef enum { EXPORTER_SEV_INFO, EXPORTER_SEV_WARN, EXPORTER_SEV_ERROR } exporter_severity;

typedef struct {
	int gpu; /* GPU index (the gpu label); -1 for a host-wide finding */
	char rule[48];
	exporter_severity severity;
} exporter_finding;

#define EXPORTER_FINDINGS_MAX 256

/*
 * One published sample: the sampler's snapshot (every value: the GPUs by
 * position, the host summary, the cores) and what only the exporter shows
 * beside it.
 */
typedef struct {
	const snapshot *snap;
	bool host;              /* export the host families */
	double sample_seconds;  /* how long taking the sample took */
	uint64_t samples_total; /* samples taken since start, this one included */
	char driver[96], nvml[96];
	int ngpus;
	exporter_gpu *gpus; /* [ngpus], positions as in snap->gpu */
	int nfindings;
	exporter_finding findings[EXPORTER_FINDINGS_MAX];
} exporter_frame;

/* Allocate a frame with room for ngpus GPUs; NULL on ENOMEM. */
exporter_frame *exporter_frame_new(int ngpus);
void exporter_frame_free(exporter_frame *f);

const char *exporter_severity_name(exporter_severity s);

/* ---------------------------------------------------------------- findings */

/*
 * The newest len snapshots, oldest first; snaps[len-1] is the one being
 * published. gpus[0..ngpus) name the GPUs by position (index, UUID, name).
 * tl points at the owner's slot for the timeline form (NULL until asked
 * for, freed by the owner after the hook).
 */
typedef struct {
	const snapshot *const *snaps;
	int len;
	const exporter_gpu *gpus;
	int ngpus;
	const char *driver; /* NULL when unknown */
	timeline **tl;
} exporter_window;

/*
 * The window as a timeline (the type diagnosis rules read), through the
 * conversion `top` uses too (model/window.h): every present GPU and host
 * series, the cores, the processes and events the sampler saw. Built once
 * per window; NULL when the window is empty.
 */
const timeline *exporter_window_timeline(const exporter_window *w);

/*
 * The findings hook: fill out[0..max) with the findings that hold for the
 * latest window, return how many. Pure: no I/O, no clock. The diagnosis
 * module plugs in here (reading exporter_window_timeline(w)); exporter_live_findings
 * is the built-in source.
 */
typedef int (*exporter_findings_fn)(void *user, const exporter_window *w, exporter_finding *out,
                                    int max);

/*
 * Built-in checks on the latest sample:
 *   throttled      a clock-event reason other than gpu_idle is active
 *                  (error: hardware slowdown, thermal or power brake; warn:
 *                  software thermal; info: power cap, sync boost, app clocks)
 *   pcie_degraded  link width below the maximum, or link generation below the
 *                  maximum while the GPU is busy (idle GPUs lower it on purpose)
 *   gpu_lost       the GPU fell off the bus (error)
 */
int exporter_live_findings(void *user, const exporter_window *w, exporter_finding *out, int max);

/*
 * exporter_live_findings plus every diagnosis rule (src/diagnose, live mode) over
 * the window; rule ids become label values with '_' for '-' (data_starved).
 * What `gpuwhy exporter` uses.
 */
int exporter_diag_findings(void *user, const exporter_window *w, exporter_finding *out, int max);

/* ------------------------------------------------------------------ render */

typedef enum {
	EXPORTER_HOSTLABEL_UPPER, /* Hostname: released dcgm-exporters up to 4.5.3-4.8.2 */
	EXPORTER_HOSTLABEL_LOWER, /* hostname: dcgm-exporter after PR #655 */
	EXPORTER_HOSTLABEL_NONE,  /* like dcgm-exporter -n */
} exporter_hostlabel;

typedef struct {
	exporter_hostlabel host_label;
	const char *hostname;                  /* value of the hostname label */
	const exporter_collectors *collectors; /* DCGM families to export; NULL = default */
	int processes;                         /* top N processes per GPU to export (0: none) */
	const char *version;                   /* gpuwhy version for the build_info series */
} exporter_render_opts;

/* Append the whole exposition (text format 0.0.4) for f to b. */
void exporter_render(const exporter_frame *f, const exporter_render_opts *o, exporter_buf *b);

/* -------------------------------------------------------------------- page */

/* One rendered exposition. Immutable once published, freed by its last reader. */
typedef struct exporter_page exporter_page;

/* Takes ownership of text (malloc'd). NULL on ENOMEM (text is freed). */
exporter_page *exporter_page_new(char *text, size_t len, double t_wall, int64_t t_mono_ns);
void exporter_page_ref(exporter_page *p);
void exporter_page_unref(exporter_page *p);
const char *exporter_page_text(const exporter_page *p, size_t *len);
/* gzip of the text, compressed on first use and kept; NULL when compression failed. */
const char *exporter_page_gzip(exporter_page *p, size_t *len);
int64_t exporter_page_mono_ns(const exporter_page *p);

/* The latest page, swapped by the sampler and read by the server. */
typedef struct exporter_board exporter_board;
exporter_board *exporter_board_new(void);
void exporter_board_free(exporter_board *b);
/* Publish p (the board takes the caller's reference). */
void exporter_board_publish(exporter_board *b, exporter_page *p);
/* A new reference to the latest page, or NULL before the first publish. */
exporter_page *exporter_board_get(exporter_board *b);

/* ------------------------------------------------------------------ server */

typedef struct {
	char host[64]; /* numeric IPv4 or IPv6 address */
	int port;      /* 0: any free port */
	bool ipv6;
} exporter_listen_addr;

/*
 * "127.0.0.1:9400", "[::1]:9400", "localhost:9400", "0.0.0.0:9400". The host
 * part is required (no ":9400", so that exposing all interfaces is always
 * explicit). Returns 0, or -1 with a reason in err.
 */
int exporter_parse_listen(const char *s, exporter_listen_addr *out, char *err, size_t errlen);

/* Whether an Accept-Encoding header value accepts gzip (q-values honoured). */
bool exporter_accepts_gzip(const char *accept_encoding);

typedef enum {
	EXPORTER_ROUTE_INDEX,
	EXPORTER_ROUTE_METRICS,
	EXPORTER_ROUTE_HEALTH,
	EXPORTER_ROUTE_NOT_FOUND,
	EXPORTER_ROUTE_BAD_METHOD,
} exporter_route;

/* Routing is an exact match on the path; nothing ever reaches the file system. */
exporter_route exporter_route_request(const char *method, const char *url);

typedef struct {
	exporter_listen_addr addr;
	unsigned max_connections; /* connection cap */
	unsigned timeout_s;       /* a connection must complete each request within this */
	size_t memory_limit;      /* per connection: bounds request line + headers */
	int64_t stale_ns;         /* /health answers 503 when the page is older than this */
	const char *version;
} exporter_server_opts;

void exporter_server_opts_default(exporter_server_opts *o);

typedef struct exporter_server exporter_server;

/* Bind and start serving board. Returns 0, or a GW_EXIT_* code with the message printed. */
int exporter_server_start(const exporter_server_opts *o, exporter_board *board,
                          exporter_server **out);
/* The port actually bound (useful with port 0). */
int exporter_server_port(const exporter_server *s);
void exporter_server_stop(exporter_server *s);

/* ----------------------------------------------------------------- sampler */

typedef struct {
	int64_t interval_ns;
	int processes; /* top N processes per GPU (0..EXPORTER_PROC_MAX) */
	exporter_render_opts render;
	exporter_findings_fn findings;
	void *findings_user;
	const char *proc_root; /* "/proc" */
	bool host;             /* also sample the host (CPU, memory, swap, disks, network) */
	/* pod/namespace/container labels: NULL off, else the root holding proc/ and var/log/ */
	const char *kubernetes_root;
} exporter_publisher_opts;

/*
 * The exporter's side of the one sampler (sample/sampler.h): each snapshot
 * it takes joins a short window, gets its labels, processes and findings,
 * is rendered once and published on the board.
 */
typedef struct exporter_publisher exporter_publisher;

/*
 * Take and publish the first sample before returning (so /metrics is never
 * empty), then keep sampling on the sampler's thread at a fixed cadence. gpu
 * may be used by that thread only from now on.
 */
int exporter_publisher_start(gpu_ctx *gpu, exporter_board *board, const exporter_publisher_opts *o,
                             exporter_publisher **out);
void exporter_publisher_stop(exporter_publisher *s);

#endif
