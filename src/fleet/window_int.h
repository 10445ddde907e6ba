/*
 * window_int.h - the pieces of fleet/window.c that tests reach: PromQL
 * matchers for a node or a job, and joining nodes into one timeline.
 */
#ifndef GPUWHY_FLEET_WINDOW_INT_H
#define GPUWHY_FLEET_WINDOW_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "prom/prom.h"
#include "queue/slurm.h"

/* host_label="node" (instance: instance=~"node(:[0-9]+)?", regex-escaped), then
 * ,gpu=~"gpus" when gpus is not empty. */
void fw_node_matcher(const char *host_label, const char *node, const char *gpus, char *out,
                     size_t len);
/* host_label=~"a|b" (instance: with its port), regex-escaped, then ,gpu=~"gpus" when not empty. */
void fw_hosts_matcher(const char *host_label, const queue_slurm_alloc *al, const char *gpus,
                      char *out, size_t len);
/* The GPU indices any node of al has, as a regex "0|2|3"; "" when a node's are not known. */
void fw_alloc_gpus(const queue_slurm_alloc *al, char *out, size_t len);
/* hpc_job="job" */
void fw_job_matcher(const char *job, char *out, size_t len);
/* The nodes' samples [a, b] side by side as one timeline, times from sample a; with keep, only
 * its nodes and, where it knows them, their GPUs. */
timeline *fw_join(const prom_fleet *fl, int a, int b, const queue_slurm_alloc *keep);
/* The first and last sample where any GPU has a utilization value; false when none. */
bool fw_present_span(const prom_fleet *fl, int *a, int *b);

/* Whether id looks like a Slurm job id (123, 123_4, 123+1): only those are asked of Slurm. */
bool fw_slurm_id(const char *id);
/* The job's allocation from scontrol and sacct; false when Slurm is absent or does not know it. */
bool fw_slurm_lookup(const char *job, queue_slurm_alloc *out);
/* users[i] (malloc'd) for each jobs[i] Slurm knows (sacct, else scontrol); others left NULL. */
void fw_slurm_users(char *const *jobs, int n, char **users);

#endif
