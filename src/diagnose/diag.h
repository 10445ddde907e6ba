/*
 * diag.h - diagnosis: pure functions from a timeline (plus static facts) to
 * findings. No I/O happens here; the same call serves `report`, `compare`,
 * the live view's status line and the exporter's finding series.
 *
 *   diag_opts o;
 *   diag_opts_default(&o);            // goal, thresholds (thresholds.def)
 *   diag_result r;
 *   diag_run(tl, &o, &r);             // findings, per-GPU quadrant, seven-step chain
 *   const diag_finding *top = diag_top_finding(&r);
 *   int rc = diag_exit_code(&r);      // 1 when any finding is an error
 *   diag_result_free(&r);
 *
 * Every finding carries an id (stable, kebab-case), a severity, a confidence,
 * the GPUs and time ranges it covers, its evidence as numbers (metric, value,
 * threshold) and advice (what to change, how to verify). The rules and their
 * ids live in rules.def, advice texts in advice.c, thresholds in thresholds.def.
 */
#ifndef GPUWHY_DIAGNOSE_DIAG_H
#define GPUWHY_DIAGNOSE_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/timeline.h"

/* ---- thresholds (defaults and meanings in thresholds.def) ---- */
typedef struct {
#define X(name, def, unit, help) double name;
#include "diagnose/thresholds.def"
#undef X
} diag_thresholds;

typedef struct {
	const char *name, *unit, *help;
	double def;
} diag_threshold_desc;
extern const diag_threshold_desc diag_threshold_table[];
extern const int diag_threshold_count;

/* The field of th that diag_threshold_table[i] describes (NULL when i is out of range). */
double *diag_threshold_field(diag_thresholds *th, int i);

/* "name=value" into th; false (and th untouched) on an unknown name or bad number. */
bool diag_threshold_set(diag_thresholds *th, const char *assignment);

/* Step-time comparison: bootstrap resamples and the fixed seed (documented in docs/compare.md). */
#define DIAG_BOOTSTRAP_RESAMPLES 2000
#define DIAG_BOOTSTRAP_SEED 0x6770757768793031ULL /* "gpuwhy01" */
/* Drop the first step interval (warm-up: compilation, cache fill) when at least this many. */
#define DIAG_STEP_WARMUP_MIN 10

/* ---- recording meta: key/value pairs (command, env.NAME, driver, hostname, gpus, ...) ---- */
typedef struct {
	tl_kv *kv;
	int n, cap;
} diag_meta;

void diag_meta_set(diag_meta *m, const char *key, const char *value);
const char *diag_meta_get(const diag_meta *m, const char *key);
void diag_meta_free(diag_meta *m);
/* Fill m from a timeline: its meta table, then the facts it carries (command, driver, ...). */
void diag_meta_from_timeline(diag_meta *m, const timeline *tl);

/* ---- options ---- */
typedef enum { DIAG_GOAL_THROUGHPUT, DIAG_GOAL_LATENCY } diag_goal;

typedef struct {
	diag_goal goal;
	/* A short live window (top's status line, the exporter): no warm-up
	 * trimming, and titles say "the last N s" instead of "the run". */
	bool live;
	const diag_meta *meta; /* may be NULL: env of the job, for advice (CUDA_VISIBLE_DEVICES) */
	/* Texts (titles, notes, advice, the chain's answers, evidence statistics)
	 * in the language in force (util/i18n.h), the default; false keeps them
	 * English for what machines read (JSON), whatever the language. */
	bool localize;
	diag_thresholds th;
} diag_opts;

void diag_opts_default(diag_opts *o);
/* "throughput" / "latency"; false on anything else. */
bool diag_goal_parse(const char *s, diag_goal *out);
const char *diag_goal_name(diag_goal g);

/* ---- rules (rules.def): one table of ids, in the order they run ---- */
typedef enum {
#define RULE(sym, id, fn, summary) DIAG_R_##sym,
#define RULE_ID(sym, id, summary) DIAG_R_##sym,
#include "diagnose/rules.def"
#undef RULE
#undef RULE_ID
	DIAG_R__COUNT
} diag_rule;

/* The printed id ("data-starved"); NULL when r is out of range. */
const char *diag_rule_id(diag_rule r);
/* One line: what a finding of rule r means (English: _() it to print). */
const char *diag_rule_summary(diag_rule r);
/* The rule with this id, -1 when none. */
int diag_rule_lookup(const char *id);
/* The id as a label value, snake_case like metric names: "data-starved" -> "data_starved". */
void diag_rule_label(diag_rule r, char *out, size_t len);

/* ---- findings ---- */
typedef enum { DIAG_INFO = 0, DIAG_WARN = 1, DIAG_ERROR = 2 } diag_severity;
const char *diag_severity_name(diag_severity s); /* "info", "warn", "error" */

#define DIAG_MAX_EVIDENCE 10
#define DIAG_MAX_RANGES 16

/* One number behind a finding: metric, statistic, value, and the threshold it was held against. */
typedef struct {
	char metric[40]; /* "utilization.gpu", "cpu.busy.max", ... (metric table keys where one
	                    exists) */
	char stat[64];   /* "mean", "peak", "share of samples", ... */
	double value;
	char cmp[3];      /* ">=", "<=", ">", "<", "" when context only */
	double threshold; /* NAN when context only */
	char unit[12];
	int gpu; /* position in tl->gpu, -1 for host or job-wide */
} diag_evidence;

/* 1 when the value meets its threshold, 0 when not, -1 for context without a threshold. */
int diag_evidence_met(const diag_evidence *e);

typedef struct {
	double t0, t1; /* seconds since the start of the timeline */
} diag_range;

typedef struct {
	diag_rule rule;
	const char *id; /* diag_rule_id(rule): "data-starved", ... (static) */
	diag_severity severity;
	double confidence; /* 0..1 */
	char title[240];   /* one line with the numbers that matter */
	uint64_t gpus;     /* bit p: position p of tl->gpu is concerned */
	int nranges;
	diag_range ranges[DIAG_MAX_RANGES];
	int nev;
	diag_evidence ev[DIAG_MAX_EVIDENCE];
	const char *advice; /* what to change (static text, goal- and case-specific) */
	const char *verify; /* how to verify that the change helped */
	char note[480];     /* case detail: the PIDs, the env var, the straggler ... ("" if none) */
} diag_finding;

/* ---- per-GPU summary and the utilization x memory quadrant ---- */
typedef enum {
	DIAG_Q_UNKNOWN,    /* not enough data */
	DIAG_Q_BUSY_FULL,  /* high util, high memory: compute-bound */
	DIAG_Q_BUSY_ROOMY, /* high util, memory to spare: a larger batch may help */
	DIAG_Q_IDLE_FULL,  /* low util, high memory: memory held, little computed */
	DIAG_Q_IDLE_EMPTY  /* low util, low memory: the bottleneck is before the GPU */
} diag_quadrant;
const char *diag_quadrant_name(diag_quadrant q);    /* "busy-full", ... */
const char *diag_quadrant_meaning(diag_quadrant q); /* one sentence (English: _() it to print) */

typedef struct {
	int pos, index; /* position in tl->gpu, NVML index */
	bool job;       /* the watched job used it (or every GPU when no job was watched) */
	double util_mean, util_p10, util_p90;
	double idle_pct; /* share of the window the GPU idled, 0..100 */
	double sm_active_mean, dram_active_mean;
	double mem_peak_mib, mem_total_mib, mem_peak_pct;
	double power_mean, power_limit, temp_max;
	diag_quadrant quadrant;
} diag_gpu_summary;

/* ---- the seven-step troubleshooting chain ---- */
typedef enum { DIAG_STEP_OK, DIAG_STEP_PROBLEM, DIAG_STEP_NA } diag_step_status;
#define DIAG_CHAIN_STEPS 7

typedef struct {
	int no;               /* 1..7 */
	const char *question; /* static */
	diag_step_status status;
	char answer[720];
	const char *findings[6]; /* ids of findings that answer this step */
	int nfindings;
} diag_chain_step;

/* ---- step times ---- */
typedef struct {
	int n; /* intervals used */
	double mean, p50, p90, p99;
	double per_s; /* steps per second */
	/* The step lines arrive in bursts (buffered output): the intervals
	 * measure the flushes, not the steps; mean and per_s still hold over
	 * the whole run, the percentiles do not. */
	bool bursty;
	double burst_share; /* share of intervals under step_burst_gap_ms, 0..1 */
	double resolution;  /* step timestamps' resolution in seconds (their quantum) */
} diag_step_stats;

/* Step intervals the statistics use (warm-up dropped, see DIAG_STEP_WARMUP_MIN); *out malloc'd. */
int diag_step_times(const timeline *tl, double **out);
void diag_step_stats_of(const double *d, int n, diag_step_stats *out);
/* Burst detection and timestamp resolution of tl's steps into st (after diag_step_stats_of). */
void diag_step_quality(const timeline *tl, const diag_thresholds *th, diag_step_stats *st);

/* ---- result ---- */
typedef struct {
	diag_goal goal;
	int from, to;        /* analysed window: samples [from, to) */
	double t_from, t_to; /* its times */
	int njob;            /* GPUs of the job */
	diag_finding *f;
	int n, cap;
	int ngpu;
	diag_gpu_summary *gpu;
	diag_chain_step chain[DIAG_CHAIN_STEPS];
	diag_step_stats steps;
} diag_result;

/* Run every rule. Returns 0; res is always initialised (free it with diag_result_free). */
int diag_run(const timeline *tl, const diag_opts *o, diag_result *res);
void diag_result_free(diag_result *res);

/* The most severe finding (then most confident, then first); NULL when there is none. */
const diag_finding *diag_top_finding(const diag_result *res);
/* The first finding with this id, NULL if none. */
const diag_finding *diag_find(const diag_result *res, const char *id);
/* The first finding of rule r, NULL if none. */
const diag_finding *diag_find_rule(const diag_result *res, diag_rule r);
/* 1 (GW_EXIT_PROBLEMS) when any finding is an error, else 0. */
int diag_exit_code(const diag_result *res);
/* Whether f is a not-checked finding about some GPUs' own signals (no clock-event reasons,
 * an AMD GPU): it names its GPUs, so a fleet keeps it per node. */
bool diag_not_checked_gpus(const diag_finding *f);

/*
 * For the live faces: diagnose a short window and write one line about the
 * top problem, e.g. "GPU 0 idle 45 % of the last 30 s while core 3 is at
 * 100 %: data-starved?". Returns the severity of that finding, or -1 (and
 * out = "") when nothing is wrong or the window is too short.
 */
int diag_live_summary(const timeline *tl, const diag_opts *o, char *out, size_t len);

/* ---- the one comparison of step times (stepnoise.c, stepcmp.c; docs/compare.md) ---- */

/* How uncertain one run's mean step time is, from its own steps in order. */
typedef struct {
	int n;
	double mean;     /* s */
	int block;       /* circular block length, steps (1: independent steps) */
	int period;      /* the steps' dominant period in steps; 0 none */
	double nblocks;  /* n / block */
	double var_mean; /* variance of the mean: the circular block bootstrap's, exact; s^2 */
	double
	    undisturbed;  /* p10 of the steps (of period means when periodic): least disturbed, s */
	double drift_pct; /* second half's mean minus the first's, % of the mean; NAN */
	double drift_se_pct; /* the standard error of drift_pct; NAN */
} diag_run_noise;

void diag_run_noise_of(const double *steps, int n, diag_run_noise *out);
/* Student's t distribution function and its quantile (df may be INFINITY: the normal). */
double diag_t_cdf(double t, double df);
double diag_t_quantile(double p, double df);

/* One run's step times, in order. */
typedef struct {
	const double *t; /* s */
	int n;
	double resolution; /* the step timestamps' quantum, s; NAN unknown */
} diag_run_steps;

/* Runs per side that one comparison takes (more are left out). */
#define DIAG_CMP_MAX_RUNS 16

typedef enum {
	DIAG_CMP_NONE,   /* a side has no step times */
	DIAG_CMP_WITHIN, /* one run on a side: the noise within the runs */
	DIAG_CMP_RUNS,   /* two runs or more on each side: Welch's t on the run means */
} diag_cmp_method;

typedef struct {
	diag_cmp_method method;
	int nruns[2];                             /* timed runs: base, candidate */
	diag_run_noise run[2][DIAG_CMP_MAX_RUNS]; /* each timed run's mean and noise */
	double mean[2];                           /* each side's mean step time, s */
	double diff, lo, hi;                      /* cand - base and its 95 % interval, s */
	double diff_pct, lo_pct, hi_pct;          /* the same in % of the base's mean */
	double se;                                /* standard error of diff, s */
	double df;           /* degrees of freedom of the t interval; INFINITY: the normal */
	double quantum;      /* added to each end for the step timer's resolution, s */
	bool significant;    /* the interval excludes 0 */
	double min_diff_pct; /* the practical threshold a claim needs (compare_min_diff_pct) */
	bool below_min_diff; /* significant, but smaller than min_diff_pct */
	/* The whole interval within +-min_diff_pct: no meaningful change either way (an
	 * equivalence test). An interval that holds 0 but reaches past the threshold is
	 * inconclusive, never "no change": more runs could still find a real one. */
	bool equivalent;
	int verdict; /* -1 faster, 0 no claim, +1 slower; load is judged by the caller */
	/* The run with the largest drift that is significant and meaningful; -1 none. */
	int drift_side, drift_run;
	/* A run far from its side's others (three runs or more on the side); -1 none. */
	int outlier_side, outlier_run;
} diag_step_cmp;

/*
 * The one comparison of mean step times: base runs against candidate runs
 * (each DIAG_CMP_MAX_RUNS at most; runs with fewer than two steps are left
 * out), a claim only when the 95 % interval excludes 0 and the change is at
 * least min_diff_pct of the base's mean.
 */
void diag_step_compare(const diag_run_steps *base, int nbase, const diag_run_steps *cand, int ncand,
                       double min_diff_pct, diag_step_cmp *out);

/* ---- compare recordings ---- */
typedef struct {
	double base, cand; /* the statistic on each side */
	double diff;       /* cand - base */
	double lo, hi;     /* 95 % confidence interval of diff; NAN when not computable */
} diag_diff;

/*
 * Percentile ps[k] (at most 8; DIAG_STAT_MEAN for the mean) of the pooled
 * candidate steps minus the base's, each with a 95 % interval from
 * `resamples` circular block bootstrap resamples (each run rebuilt from
 * blocks of its own length, stepnoise.c) drawn with a fixed-seed generator.
 */
#define DIAG_STAT_MEAN (-1.0)
void diag_bootstrap_diffs(const diag_run_steps *a, int na, const diag_run_steps *b, int nb,
                          const double *ps, int np, int resamples, uint64_t seed, diag_diff *out);
/* The same for one percentile of two single runs. */
void diag_bootstrap_diff(const double *a, int na, const double *b, int nb, double p, int resamples,
                         uint64_t seed, diag_diff *out);

typedef struct {
	char what[64]; /* "argument --batch-size", "env CUDA_VISIBLE_DEVICES", "GPU set", ... */
	char base[256], cand[256];
} diag_change;

typedef struct {
	double duration;
	double t_from, t_to; /* the analysed window (diag_result's), seconds */
	diag_step_stats steps;
	double util_mean, sm_active_mean, mem_peak_mib,
	    power_mean; /* over the job's GPUs, NAN if absent */
	int njob;
} diag_run_summary;

/* A busy process outside the job, during a compared run. */
typedef struct {
	unsigned pid;
	double cpu;    /* mean % of one core over the window's process scans */
	char cmd[128]; /* as the recorder kept it */
} diag_host_hog;

#define DIAG_MAX_HOGS 3

/*
 * What loaded the host during one compared run, over its analysed window.
 * Loaded: processes outside the job's tree (named, as the recorder saw them)
 * took at least compare_host_load_pct of a core and the host had less than
 * one core to spare; then the run's mean step time above its undisturbed
 * step time (diag_run_noise's) is what that load can explain.
 */
typedef struct {
	double others_cpu;  /* named processes outside the job, summed mean, % of one core; NAN */
	double host_busy;   /* mean busy share of all the host's CPUs, %; NAN */
	double spare_cores; /* cores idle on average, NAN */
	double excess_pct;  /* (mean - undisturbed) / undisturbed step time, %; NAN */
	bool loaded;
	int nhogs;
	diag_host_hog hog[DIAG_MAX_HOGS]; /* the busiest, busiest first */
} diag_host_load;

/* The host load of tl over [t_from, t_to] against th, with the run's step times. */
void diag_host_load_of(const timeline *tl, double t_from, double t_to, const double *steps,
                       int nsteps, double load_pct, diag_host_load *out);

/* ---- windows without step times: how busy their GPUs were (busycmp.c) ---- */
#define DIAG_BUSY_RULES 16
typedef enum {
	DIAG_BUSY_NONE,   /* not compared (step times decide, or too few samples) */
	DIAG_BUSY_MORE,   /* the candidate's GPUs were busier */
	DIAG_BUSY_LESS,   /* less busy */
	DIAG_BUSY_SAME,   /* the whole interval within +-compare_busy_pp */
	DIAG_BUSY_UNSURE, /* neither: the interval reaches past the threshold and covers 0 */
} diag_busy_verdict;

/* "busier", "less-busy", "same-busy-share", "inconclusive", "not-compared". */
const char *diag_busy_verdict_id(diag_busy_verdict v);

typedef struct {
	double mean;        /* the GPUs' mean utilization over the samples, % */
	double var;         /* variance of the mean (circular block bootstrap, exact), %^2 */
	double df;          /* blocks less one, summed over the side's runs */
	int samples, block; /* samples with a utilization; the longest block, samples */
	double gpu_hours, not_busy_h; /* GPU-hours covered; those not busy (1 - mean) */
} diag_busy_side;

typedef struct {
	diag_busy_side side[2]; /* base, candidate */
	double diff, lo, hi;    /* candidate - base, percentage points, and its 95 % interval */
	double df;              /* Welch's; INFINITY: the normal */
	double min_pp;          /* compare_busy_pp */
	diag_busy_verdict verdict;
	/* Per rule with a warning or error on either side: the GPU-hours its findings cover
	 * (their time ranges times their GPUs), base and candidate; largest change first. */
	struct {
		const char *id;
		double h[2];
	} rule[DIAG_BUSY_RULES];
	int nrules;
} diag_busy_cmp;

/* Compare the GPUs' busy share of two sides' timelines (each side's runs independent). */
void diag_busy_compare(const timeline *const *base, int nbase, const timeline *const *cand,
                       int ncand, double min_pp, diag_busy_cmp *out);
/* The GPU-hours each rule's findings cover on each side, into out->rule. */
void diag_busy_findings(const diag_result *base, int nbase, const diag_result *cand, int ncand,
                        diag_busy_cmp *out);

typedef struct {
	diag_run_summary base, cand; /* each side's runs: their means (steps.n: all intervals) */
	int nbase, ncand;            /* recordings per side */
	diag_step_cmp steps;         /* the one comparison of mean step times */
	diag_diff mean;              /* mean step time, s: steps' interval */
	diag_diff p50, p90, p99;     /* step time, s, block bootstrap; NAN diff without steps */
	/* -1 candidate faster, 0 no claim (or withheld), +1 slower: steps.verdict, unless a
	 * loaded run can explain the change (withheld_by_load), or by run time without steps. */
	int verdict;
	int p50_verdict;     /* the median alone (differs when the tail moved) */
	bool by_steps;       /* verdict from step times (else from run duration, no interval) */
	bool steps_bursty;   /* a side's step lines came in bursts: not compared as timed */
	bool untimed;        /* no steps, and a side is a log or a Prometheus window (meta
	                        "source"): its length is the one asked for, no run time */
	double min_diff_pct; /* the practical threshold: compare_min_diff_pct, nothing added */
	double diff_pct;     /* the mean's change in % of the base's, NAN when unknown */
	bool below_min_diff; /* significant but smaller than min_diff_pct */
	bool equivalent;     /* by steps: the whole interval within +-min_diff_pct */
	/* Host load by processes outside the job (the most loaded run of each side).
	 * Load only slows a run: a loaded base can fake a faster candidate, a
	 * loaded candidate a slower one. interference_pct is what it explains in
	 * the observed direction, in % of the base's mean. */
	diag_host_load load_base, load_cand;
	bool confounded;
	double interference_pct;   /* NAN when not confounded or unknown */
	bool withheld_by_load;     /* a claim that the load can explain: not made */
	bool interference_against; /* only the other side was loaded: it cannot explain this change
	                            */
	/* Without step times on a log or a window (untimed): how busy the GPUs were. */
	diag_busy_cmp busy;
	diag_change *changes;
	int nchanges;
	const char *fixed[24],
	    *appeared[24]; /* finding ids (warn/error) gone / new in the candidate */
	int nfixed, nappeared;
} diag_comparison;

/* Compare two recordings. Metas may be NULL (then only the timelines' facts are compared). */
void diag_compare(const timeline *base, const diag_meta *mbase, const timeline *cand,
                  const diag_meta *mcand, const diag_opts *o, diag_comparison *out);
/*
 * Compare nbase recordings of the base with ncand of the candidate (each at
 * least 1, at most DIAG_CMP_MAX_RUNS); metas are arrays of the same length,
 * or NULL. What changed is read between the first of each side, and within
 * each side between its first run and the others.
 */
void diag_compare_runs(const timeline *const *base, const diag_meta *mbase, int nbase,
                       const timeline *const *cand, const diag_meta *mcand, int ncand,
                       const diag_opts *o, diag_comparison *out);
void diag_comparison_free(diag_comparison *c);

/* Summary numbers of one run (used by compare, and by report headers). */
void diag_summarize(const timeline *tl, const diag_result *res, diag_run_summary *out);

#endif
