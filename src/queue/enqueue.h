/*
 * enqueue.h - tasks made ready for the queue (enqueue.c): the environment they run with,
 * the tasks of a file or of one command line over a template, and their way in, handed to
 * the running worker or added to the database. The command prints the ids.
 */
#ifndef GPUWHY_QUEUE_ENQUEUE_H
#define GPUWHY_QUEUE_ENQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/db.h"
#include "queue/spec.h"
#include "util/fail.h"

/* This process's environment as one JSON object (a task's env_json). A variable whose
 * name or value is not UTF-8 is left out and named to skipped (name, length of name). */
char *queue_env_json(void (*skipped)(const char *name, int len));

/* The whole of a task file (- is stdin), NUL-terminated, at most 64 MiB: NULL with errno
 * when it cannot be read. */
char *queue_task_file_read(const char *path, size_t *len);

/* The tasks of the file from (its text of len bytes: lines, or JSON by its name or its
 * first character) over tmpl, or, from NULL, the one command cmd. 0 and *specs, *n; or
 * the exit code with *e (*n 0). */
int queue_specs_make(const char *from, const char *text, size_t len, const queue_spec *tmpl,
                     char **cmd, int ncmd, queue_spec **specs, int *n, gw_fail *e);

/* Add the tasks in one transaction (under token: see submit.c): 0 and their ids in ids
 * (n of them), or an exit code. */
int queue_specs_store(queue_db *st, queue_spec *specs, int n, const char *token, int64_t *ids);

/* Hand one command over tmpl to the queue's running worker (submit.c), which adds it in its
 * own connection. True when the worker took it: *id, *draining. False: the caller adds it
 * to the database, under token when a submission was sent and not answered (token[0] is 0
 * otherwise). by_config: the task takes the queue's `config backend`. */
bool queue_submit_one(const char *dir, const queue_spec *tmpl, bool by_config, char **cmd, int ncmd,
                      char *token, size_t toklen, int64_t *id, bool *draining);

#endif
