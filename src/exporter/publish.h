/*
 * publish.h - the exporter on the one sampler (sample/sampler.h): each snapshot joins a
 * short window, gets its labels, processes and findings, is rendered once and
 * published on the board (publish.c). A scrape never samples and never renders: it
 * takes a reference to the page published last, so a slow NVML call cannot delay it.
 */
#ifndef GPUWHY_EXPORTER_PUBLISH_H
#define GPUWHY_EXPORTER_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "exporter/exposition.h"
#include "exporter/findings.h"
#include "exporter/page.h"
#include "gpu/gpu.h"

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
