/* queue_cmd.h - the subcommands of `gpuwhy queue` (queue*.c) and what they share. */
#ifndef GPUWHY_CMD_QUEUE_CMD_H
#define GPUWHY_CMD_QUEUE_CMD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "queue/db.h"

/* One subcommand: argv[0] is its name, dir the resolved queue directory. */
int qcmd_add(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_ls(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_show(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_log(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_wait(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_cancel(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_retry(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_clean(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_flags(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_gpus(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_config(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_worker(const char *dir, int argc, char **argv, const gw_global *g);
int qcmd_stop(const char *dir, int argc, char **argv, const gw_global *g);

/* Open the queue's database; its failures, then and on every later call, are printed. */
int qcmd_open(const char *dir, queue_db **st);

/* A stored error or wait reason (English) in the user's language, for text output
 * (queue_say.c): out, or text itself when it has no translation. */
const char *qcmd_say(const char *text, char *out, size_t len);

/* Human units for tables: "-" when unknown (negative). */
void qcmd_mib(int64_t mib, char *out, size_t len);
/* Print s and spaces to fill cols display columns (a CJK character takes two), then sep. */
void qcmd_cell(const char *s, int cols, const char *sep);
void qcmd_kib(int64_t kib, char *out, size_t len);
void qcmd_dur(double s, char *out, size_t len);
void qcmd_time(double t, char *out, size_t len);
/* Task ids: positive integers; qcmd_bad_id prints the error and returns 2. */
bool qcmd_parse_id(const char *s, int64_t *id);
int qcmd_bad_id(const char *s);
/* JSON values: absent is null, never 0. Times are Unix seconds with microseconds. */
json_t *qcmd_jint(bool ok, long long v);
json_t *qcmd_jtime(double t);
json_t *qcmd_jstr(const char *s);
/* Print v (and release it) on one line, or indented. */
void qcmd_print_json(json_t *v, bool pretty);

#endif
