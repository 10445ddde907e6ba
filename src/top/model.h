/*
 * model.h - what `top` shows, apart from how: the ring of recent snapshots
 * and the view state derived from it (sort order, filter, GPU selection,
 * pause, the selected process and its tree, the live findings).
 *
 * Only the UI thread touches a model; snapshots reach it through feed.h.
 * Nothing here draws or does I/O, so every behaviour is unit-tested with
 * hand-made snapshots.
 */
#ifndef GPUWHY_TOP_MODEL_H
#define GPUWHY_TOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"
#include "model/timeline.h"
#include "top/findings.h"

#define TOP_RING_CAP 600  /* samples kept: a minute at 100 ms, ten at 1 s */
#define TOP_WINDOW_S 60.0 /* findings look at this much of the past */
#define TOP_FINDINGS_MAX 8
#define TOP_FILTER_MAX 64
#define TOP_INTERVAL_MIN_NS 100000000LL   /* 100 ms */
#define TOP_INTERVAL_MAX_NS 10000000000LL /* 10 s */

typedef struct {
	int index; /* NVML index */
	char name[96];
	char uuid[96];
	char pci_bus_id[32];
	char vendor[8]; /* "nvidia" or "amd": how a lost GPU is worded */
	int nmig;       /* MIG devices when the view started, 0 when MIG is off */
	char mig[192];  /* "3g.40gb GI 2, 2g.20gb GI 3, ..." */
} top_gpu_info;

typedef enum {
	TOP_SORT_GPU,
	TOP_SORT_PID,
	TOP_SORT_USER,
	TOP_SORT_GPUMEM,
	TOP_SORT_SM,
	TOP_SORT_CPU,
	TOP_SORT_RSS,
	TOP_SORT_CMD,
	TOP_SORT__COUNT
} top_sort_key;

/* One line of the process list: a process on one GPU (a process on two GPUs has two). */
typedef struct {
	const tl_proc *p; /* into the shown snapshot */
} top_row;

/* One line of the process tree. */
typedef struct {
	const tl_proc *p; /* the host record, or the GPU record when that is all there is */
	int depth;        /* 0 for the topmost known ancestor */
	uint32_t open;    /* bit d: the ancestor at depth d has siblings below this line */
	bool last;        /* the last child of its parent */
	uint64_t gpus;    /* bit g: uses GPU position g */
	bool selected;
} top_tree_line;

typedef struct {
	int ngpu;
	top_gpu_info gpu[GPU_MAX];
	/* static facts for diagnosis, by position; -1 unknown (top_model_init sets them so) */
	int nvlinks[GPU_MAX][GPU_MAX]; /* active NVLinks between two GPUs */
	int topo[GPU_MAX][GPU_MAX];    /* nvmlGpuTopologyLevel_t */
	int xgmi[GPU_MAX][GPU_MAX];    /* AMD pairs: 1 one XGMI hive, 0 not, -1 unknown */
	/*
	 * ring of snapshots: the newest is at (total - 1) % TOP_RING_CAP. Only
	 * the findings window keeps whole snapshots; older ones keep their time,
	 * host summary and cores, and the graph's utilization in util.
	 */
	snapshot *ring;
	double *util; /* [TOP_RING_CAP][ngpu]: GPU utilization %, NAN when absent */
	int n;        /* filled slots */
	long total;   /* snapshots ever ingested */
	long trimmed; /* samples before this one no longer keep processes or GPU values */
	/* view state */
	top_sort_key sort;
	bool reverse; /* against the key's natural order (large first for amounts) */
	char filter[TOP_FILTER_MAX];
	bool shown_gpu[GPU_MAX]; /* by position */
	bool paused;
	long frozen; /* while paused: the absolute number of the sample shown */
	bool tree;
	unsigned sel_pid; /* the selection follows this process across refreshes */
	int sel_gpu;
	int sel;    /* row index of the selection, -1 when there are no rows */
	int scroll; /* first row on screen */
	/* derived by top_model_refresh() */
	top_row *rows;
	int nrows, rows_cap;
	int nprocs_all; /* GPU process rows before the filter */
	top_finding findings[TOP_FINDINGS_MAX];
	int nfindings;
	double window_s; /* span the findings looked at */
	/* the findings' window, kept between updates: samples win_first..win_last */
	timeline *win;
	long win_first, win_last, win_stride;
} top_model;

int top_model_init(top_model *m, int ngpu, const top_gpu_info *gpus);
void top_model_free(top_model *m);

/*
 * Keep a copy of s (deep) as the newest sample. Samples older than the
 * findings window before the shown one drop their process lists and GPU
 * values (the graph reads only their utilization, top_model_util), so
 * memory stays bounded by the window, not by the ring.
 */
void top_model_ingest(top_model *m, const snapshot *s);
/*
 * The same without the copy: the ring takes s's contents and leaves in s the
 * storage of the sample it overwrote (a snapshot to copy into or free).
 */
void top_model_ingest_take(top_model *m, snapshot *s);
/* The sample on screen: the newest, or the frozen one while paused; NULL before the first. */
const snapshot *top_model_shown(const top_model *m);
/* The sample `back` before the shown one (0 = shown); NULL when no longer kept. */
const snapshot *top_model_back(const top_model *m, int back);
/*
 * GPU position g's utilization `back` samples before the shown one, NAN
 * when that sample had none; false when the sample is no longer kept.
 */
bool top_model_util(const top_model *m, int back, int g, double *util);

/* Pause freezes the screen on the current sample; sampling and recording go on. */
void top_model_pause(top_model *m, bool paused);

/* Rebuild rows (filter, GPU selection, sort) and keep the selection on its process. */
void top_model_refresh(top_model *m);
/* Move the selection by delta rows (clamped); scroll so it stays within `visible` rows. */
void top_model_move(top_model *m, int delta, int visible);
void top_model_select_row(top_model *m, int row, int visible);
void top_model_set_sort(top_model *m, top_sort_key key);
void top_model_next_sort(top_model *m);
const char *top_sort_name(top_sort_key key);
/* Parse a sort name ("gpu", "pid", "user", "mem", "sm", "cpu", "rss", "cmd"); -1 if unknown. */
int top_sort_parse(const char *name);
void top_model_set_filter(top_model *m, const char *text);
/*
 * Show only these GPUs: the --gpus syntax (indices, full or short UUIDs,
 * comma-separated); "" or "all" shows every GPU. Returns false with a
 * reason in err (and the selection unchanged) when an entry matches none.
 */
bool top_model_set_gpus(top_model *m, const char *list, char *err, int errlen);
int top_model_gpus_shown(const top_model *m);

/* The tree around the selected process: its topmost known ancestor and everything below. */
int top_model_tree(const top_model *m, top_tree_line *out, int max);

/*
 * The last `seconds` up to the shown sample as a timeline (what diagnosis
 * reads). At most max_samples samples: longer windows are thinned evenly.
 * NULL when fewer than two samples are kept. Free with tl_free().
 */
timeline *top_model_window(const top_model *m, double seconds, int max_samples);
/*
 * The same window, owned by the model and brought up to date from the one
 * the last call returned (valid until the next call or top_model_free).
 */
const timeline *top_model_window_kept(top_model *m, double seconds, int max_samples);
/* Recompute the findings over the window ending at the shown sample. */
void top_model_update_findings(top_model *m);

/* The next sampling interval up (dir > 0) or down from cur, within 100 ms .. 10 s. */
int64_t top_interval_step(int64_t cur, int dir);
int64_t top_interval_clamp(int64_t ns);

/* Deep copy of a snapshot (dst initialised with snapshot_init or zeroed). */
void top_snapshot_copy(snapshot *dst, const snapshot *src);

#endif
