/*
 * slurm.h - Slurm's text for the queue: sbatch, squeue, scontrol and sacct output, ExitCode a:b
 * (slurm.c).
 */
#ifndef GPUWHY_QUEUE_SLURM_H
#define GPUWHY_QUEUE_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	QSL_UNKNOWN,
	QSL_PENDING,
	QSL_RUNNING,
	QSL_COMPLETED,
	QSL_FAILED,
	QSL_CANCELLED,
	QSL_TIMEOUT,
	QSL_OUT_OF_MEMORY,
	QSL_NODE_FAIL
} queue_slurm_class;

/* Classify a JobState word ("RUNNING", "CANCELLED by 0", "NODE_FAIL", ...). */
queue_slurm_class queue_slurm_classify(const char *state);

/* "3:0" -> exit 3, signal 0. false when malformed. */
bool queue_slurm_exitcode(const char *s, int *exit_code, int *signal);

typedef struct {
	char job_id[32];
	char state[32]; /* JobState word */
	char reason[64];
	bool exit_ok;
	int exit_code, signal;
	double start, end;   /* 0 when unknown */
	char gres_idx[64];   /* "0-1" from GRES=gpu:2(IDX:0-1), "" when absent */
	char user[64];       /* scontrol's UserId=alice(1000), sacct's User: "alice"; "" unknown */
	char nodelist[1024]; /* NodeList as Slurm writes it ("node[01-03,07]"); "" none yet */
	int gpus;            /* sacct's AllocTRES gres/gpu=N; -1 unknown */
} queue_slurm_job;

/* `sbatch --parsable` output "123" or "123;cluster" -> job id; false when none. */
bool queue_slurm_parse_sbatch(const char *out, char *job, size_t joblen);
/* One `scontrol -o show job` line. */
bool queue_slurm_parse_scontrol(const char *line, queue_slurm_job *out);
/* One `sacct -X -P -n -o JobID,State,ExitCode,Start,End[,User,NodeList,AllocTRES]` line. */
bool queue_slurm_parse_sacct(const char *line, queue_slurm_job *out);

/* ---- a job's allocation: its nodes, their GPU indices, its time (slurm_alloc.c; pure) ---- */
#define QUEUE_SLURM_HOST 64
#define QUEUE_SLURM_MAX_NODES 256

/*
 * Expand a Slurm hostlist ("node[01-03,07],gpu-a1", "r[1-2]n[1-2]") into
 * out[max], zero padding kept. Returns the count, or -1 when malformed or
 * longer than max.
 */
int queue_slurm_hostlist(const char *list, char (*out)[QUEUE_SLURM_HOST], int max);

/* "0-1,3" -> bits 0, 1, 3 (indices below 64); false when malformed. */
bool queue_slurm_idx_mask(const char *idx, uint64_t *mask);

typedef struct {
	char host[QUEUE_SLURM_HOST];
	uint64_t gpus; /* bit i: GPU index i; 0: not known which (every GPU of the node) */
} queue_slurm_alloc_node;

typedef struct {
	char job_id[32], user[64], state[32];
	double start, end; /* wall seconds; 0: not started, or not ended */
	int gpus;          /* GPUs allocated (AllocTRES or the indices); -1 unknown */
	queue_slurm_alloc_node node[QUEUE_SLURM_MAX_NODES];
	int nnodes;
	bool have_idx; /* the GPU indices came from scontrol -d */
} queue_slurm_alloc;

/*
 * The allocation of job from `scontrol show job -d JOB` (multi-line or -o;
 * per node "Nodes=... GRES=gpu:2(IDX:0-1)") when it knows the job, else from
 * `sacct -X -n -P -j JOB -o JobID,State,ExitCode,Start,End,User,NodeList,AllocTRES`
 * (its last line for the job: a requeued job has several). Either text may
 * be NULL. False when neither names the job with a node list.
 */
bool queue_slurm_parse_alloc(const char *job, const char *scontrol, const char *sacct,
                             queue_slurm_alloc *out);
/* "2024-05-01T12:00:03" (local time) -> wall seconds; 0 when "Unknown"/"None"/bad. */
double queue_slurm_time(const char *s);
/* How many attempt headers with this token the log holds (> 1: Slurm ran it again). */
int queue_count_token_runs(const char *log, size_t len, const char *token);

#endif
