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
	double start, end; /* 0 when unknown */
	char gres_idx[64]; /* "0-1" from GRES=gpu:2(IDX:0-1), "" when absent */
} queue_slurm_job;

/* `sbatch --parsable` output "123" or "123;cluster" -> job id; false when none. */
bool queue_slurm_parse_sbatch(const char *out, char *job, size_t joblen);
/* One `scontrol -o show job` line. */
bool queue_slurm_parse_scontrol(const char *line, queue_slurm_job *out);
/* One `sacct -X -P -n -o JobID,State,ExitCode,Start,End` line. */
bool queue_slurm_parse_sacct(const char *line, queue_slurm_job *out);
/* "2024-05-01T12:00:03" (local time) -> wall seconds; 0 when "Unknown"/"None"/bad. */
double queue_slurm_time(const char *s);
/* How many attempt headers with this token the log holds (> 1: Slurm ran it again). */
int queue_count_token_runs(const char *log, size_t len, const char *token);

#endif
