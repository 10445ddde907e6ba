/*
 * app.h - `gpuwhy top`'s application (app.c): what the command parsed,
 * and the one call that runs the live view (or prints one frame).
 */
#ifndef GPUWHY_TOP_APP_H
#define GPUWHY_TOP_APP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
	int64_t interval_ns;
	bool interval_given;
	const char *output; /* -o FILE: also record what is shown */
	bool once, tree, ascii, no_color, mouse;
	int sort; /* a top_sort_key */
	const char *filter;
	const char *gpus; /* --gpus, the global option */
} top_opts;

/* Run the live view until the user quits, or print one frame with
 * o->once. Returns the command's exit code; errors are printed. */
int top_app_run(const top_opts *o);

#endif
