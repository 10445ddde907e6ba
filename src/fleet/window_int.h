/*
 * window_int.h - the pieces of fleet/window.c that tests reach: PromQL
 * matchers for a node or a job, and joining nodes into one timeline.
 */
#ifndef GPUWHY_FLEET_WINDOW_INT_H
#define GPUWHY_FLEET_WINDOW_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "prom/prom.h"

/* host_label="node" (instance: instance=~"node(:[0-9]+)?", regex-escaped), then
 * ,gpu=~"gpus" when gpus is not empty. */
void fw_node_matcher(const char *host_label, const char *node, const char *gpus, char *out,
                     size_t len);
/* hpc_job="job" */
void fw_job_matcher(const char *job, char *out, size_t len);
/* The nodes' samples [a, b] side by side as one timeline, times from sample a. */
timeline *fw_join(const prom_fleet *fl, int a, int b);
/* The first and last sample where any GPU has a utilization value; false when none. */
bool fw_present_span(const prom_fleet *fl, int *a, int *b);

#endif
