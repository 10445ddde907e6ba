/*
 * serve.h - `gpuwhy sim serve`'s simulated inference server: requests take
 * the simulated GPU for a time that grows with their inputs, published to
 * it through its state files (sim/sim_state.h) as `sim train` does.
 */
#ifndef GPUWHY_TRAIN_SERVE_H
#define GPUWHY_TRAIN_SERVE_H

#include <stdbool.h>

typedef struct {
	double batch_ms, item_ms, mem_mib, model_mib, item_mib;
	int max_batch, dim, gpu;
	bool item_usage; /* each item says its own usage, besides the total */
	char listen[128];
} train_serve_opts;

/* Serve on o->listen until SIGTERM or SIGINT (needs --sim). Returns a
 * GW_EXIT_* code; errors are printed. */
int train_serve_run(const train_serve_opts *o);

#endif
