/*
 * listing.h - what `queue ls`, `queue show` and `queue gpus` print: the tasks, one task
 * with its attempts and the tail of its log, and the worker's view of the GPUs, as JSON
 * (listing.c) or as text for people (listing_render.c). The commands read the database
 * and hand the rows here; nothing here opens the queue.
 */
#ifndef GPUWHY_QUEUE_LISTING_H
#define GPUWHY_QUEUE_LISTING_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "queue/db.h"
#include "queue/submit.h"

/* ---- JSON (listing.c): absent is null, never 0; times are Unix seconds with
 * microseconds. ---- */
json_t *queue_jint(bool ok, long long v);
json_t *queue_jtime(double t);
json_t *queue_jstr(const char *s);
/* One task as `queue ls --json` lists it and `queue show --json` holds it. */
json_t *queue_task_json(const queue_task *t);
/* `queue ls --json`: the tasks as an array. */
json_t *queue_ls_json(const queue_task *t, int n);
/* `queue show --json`: the task, its attempts, the log's path and the tail shown. */
json_t *queue_show_json(const queue_task *t, const queue_attempt *at, int na, const char *logp,
                        const char *tail);
/* `queue gpus --json`: the worker's pid (<= 0: none), the view's time and its rows. */
json_t *queue_gpus_json(const queue_gpu_row *rows, int n, double t, int wpid);
/* Print v to out (and release it) on one line, or indented. */
void queue_json_print(FILE *out, json_t *v, bool pretty);

/* ---- text (listing_render.c) ---- */
/* `queue ls`'s table of the tasks; now is the time the running ones are measured to. */
void queue_ls_render(FILE *out, const queue_task *t, int n, double now);
/* The last n lines of text (a pointer into it). */
const char *queue_last_lines(const char *text, size_t len, int n);
/* `queue show`: the task's fields, its attempts, then the log's tail (lines > 0). */
void queue_show_render(FILE *out, const queue_task *t, const queue_attempt *at, int na,
                       const char *logp, const char *tail, int lines);
/* `queue gpus`: the view as the worker (wpid > 0) or the last one saw it at t, and the
 * drained GPUs' list. */
void queue_gpus_render(FILE *out, const queue_gpu_row *rows, int n, double t, int wpid,
                       const char *drained);

#endif
