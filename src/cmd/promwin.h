/*
 * promwin.h - the options report and compare share to read a window of a
 * cluster's Prometheus instead of a recording (fleet/window.h): the
 * connection, report's window (--node, --gpu, --job, --from, --to, --since,
 * --step) and compare's sides (--job ID twice, or window specs).
 */
#ifndef GPUWHY_CMD_PROMWIN_H
#define GPUWHY_CMD_PROMWIN_H

#include <stdbool.h>
#include <stdint.h>

#include "fleet/window.h"
#include "util/opt.h"

typedef struct {
	const char *url, *bearer, *cacert, *node, *job, *from, *to;
	opt_list jobs; /* compare: --job, repeated */
	int64_t timeout_ms, since_ms, step_ms;
	int gpu, retries;
} cmd_promwin;

/* The most rows cmd_promwin_rows appends. */
#define CMD_PROMWIN_ROWS 14

void cmd_promwin_init(cmd_promwin *a);
/* Append the option rows to rows[n..] (report: the window options; compare:
 * --job); returns the new count. */
int cmd_promwin_rows(cmd_promwin *a, bool report, opt_def *rows, int n);
/* Whether an option that needs --prometheus was given (its name, else NULL). */
const char *cmd_promwin_needs_url(const cmd_promwin *a);
/* report's window from its options; prints the usage error and returns 2. */
int cmd_promwin_spec(const cmd_promwin *a, fleet_window_spec *s);
/* compare's side: one argument "node=...,from=..." or "job=..."; prints the error. */
int cmd_promwin_parse_side(const char *arg, fleet_window_spec *s);
/* Load the window, with what it is in source; prints the error line, returns its code. */
int cmd_promwin_load(const cmd_promwin *a, const fleet_window_spec *s, timeline **tl,
                     diag_meta *meta, char *source, size_t len);
void cmd_promwin_free(cmd_promwin *a);

#endif
