/* cmd.h - the command table: one file per command in src/cmd/. */
#ifndef GPUWHY_CMD_H
#define GPUWHY_CMD_H

/* Global options, parsed by main.c before the command name. */
typedef struct {
	const char *sim;   /* --sim SCENARIO (already applied to the environment) */
	const char *nvml;  /* --nvml PATH */
	const char *gpus;  /* --gpus LIST: indices, full or short UUIDs */
	const char *lang;  /* --lang LANG (already in force: util/i18n.h) */
	int verbose;       /* -v, repeatable */
	const char *argv0; /* how gpuwhy was invoked (for re-exec of itself) */
} gw_global;

typedef int (*gw_cmd_fn)(int argc, char **argv, const gw_global *g);

/* X(name, function, one-line summary). Keep in the order `gpuwhy --help` shows. */
#define GW_COMMANDS(X)                                                                             \
	X("status", cmd_status, N_("one screen of every GPU and its processes (like nvidia-smi)")) \
	X("query", cmd_query,                                                                      \
	  N_("selected fields as CSV/JSON, once or in a loop (like nvidia-smi --query-gpu)"))      \
	X("dmon", cmd_dmon,                                                                        \
	  N_("nvidia-smi dmon: one line per GPU per interval (-s pucvmet, -d, -c, -o DT)"))        \
	X("pmon", cmd_pmon,                                                                        \
	  N_("nvidia-smi pmon: per-process SM/memory/codec utilization per interval"))             \
	X("top", cmd_top,                                                                          \
	  N_("live view: GPU meters and history, host cores, processes, findings as they happen")) \
	X("topo", cmd_topo, N_("GPU interconnect matrix, CPU/NUMA affinity, NVLink states"))       \
	X("record", cmd_record,                                                                    \
	  N_("sample GPUs, host and processes into a .gpuwhy file until stopped"))                 \
	X("run", cmd_run,                                                                          \
	  N_("run a command, record it and its process tree, summarise and diagnose"))             \
	X("sweep", cmd_sweep,                                                                      \
	  N_("run a command once per setting (workers, batch, ...): which feeds the GPU, and "     \
	     "why"))                                                                               \
	X("report", cmd_report,                                                                    \
	  N_("diagnose a recording: findings, evidence, advice (text, JSON, HTML)"))               \
	X("compare", cmd_compare,                                                                  \
	  N_("is the second recording faster, and what changed between them"))                     \
	X("trace", cmd_trace,                                                                      \
	  N_("analyse profiler timelines (Kineto JSON, nsys SQLite) like HTA"))                    \
	X("export", cmd_export, N_("a recording's tables as CSV or JSON Lines"))                   \
	X("doctor", cmd_doctor,                                                                    \
	  N_("environment checks: driver, GPU health, CUDA_VISIBLE_DEVICES, Python, containers, "  \
	     "WSL, load"))                                                                         \
	X("exporter", cmd_exporter,                                                                \
	  N_("Prometheus /metrics: dcgm-exporter's series without DCGM, plus findings"))           \
	X("fleet", cmd_fleet,                                                                      \
	  N_("why every GPU of a cluster idles, from the Prometheus it already runs"))             \
	X("demo", cmd_demo,                                                                        \
	  N_("the whole loop on the simulated GPU: record, diagnose, fix, compare"))               \
	X("queue", cmd_queue,                                                                      \
	  N_("GPU-aware batch queue: memory-aware placement, retries, records, Slurm"))            \
	X("gate", cmd_gate,                                                                        \
	  N_("reverse proxy for inference servers: limits, fair queue, batching, GPU-aware"))      \
	X("sim", cmd_sim, N_("simulated GPU: list scenarios, run a synthetic training job"))

#define GW_DECLARE_CMD(name, fn, summary) int fn(int argc, char **argv, const gw_global *g);
GW_COMMANDS(GW_DECLARE_CMD)
#undef GW_DECLARE_CMD

/* Option callbacks of report and compare (report.c): --goal, and --set NAME=VALUE
 * (hint from the table's row); ctx is their diag_opts. */
struct opt_def;
int report_opt_goal(const struct opt_def *d, const char *v, void *ctx);
int report_opt_set(const struct opt_def *d, const char *v, void *ctx);

/* `gpuwhy sim hog` (sim_hog.c), dispatched by cmd_sim; argv[0] is "hog". */
int cmd_sim_hog(int argc, char **argv);
/* `gpuwhy sim fleet` (sim_fleet.c): a simulated cluster's series as OpenMetrics. */
int cmd_sim_fleet(int argc, char **argv);

#endif
