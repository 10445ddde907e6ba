/*
 * gate.h - `gpuwhy gate`: a reverse proxy that protects and feeds a GPU
 * inference server. The running gate (lifecycle.c): the parts started in
 * order, reloads, drains, stops.
 *
 * Its seams, one header each: config.h (the settings and their files),
 * config_args.h (the settings from the command line), fairq.h (per-user
 * queues), batch.h (merging and splitting batches), target.h (what is
 * forwarded, and where), and, inside the running gate, one private header
 * per seam (srv.h, loop.h, request.h, xfer.h, dispatch.h, ...), ordered
 * lowest first in seams.txt.
 *
 * One mutex (gate.mu) guards the queue, the users, the upstream state and
 * the metrics; a request's streaming buffer has its own.
 */
#ifndef GPUWHY_GATE_GATE_H
#define GPUWHY_GATE_GATE_H

#include "gate/config.h"

/* Builds the settings anew (SIGHUP): 0, or an exit code with the reason printed. */
typedef int (*gate_reload_fn)(void *ctx, gate_config *out);

/*
 * Serves with the settings c (taken over, freed at the end) until SIGTERM or
 * SIGINT, then drains the requests in flight. On SIGHUP, reload builds new
 * settings: limits, keys and batching change at once; listen addresses and
 * upstreams stay as started. Returns an exit code (GW_EXIT_*).
 */
int gate_run(gate_config *c, gate_reload_fn reload, void *ctx);

#endif
