/* queue_cmd.h - the subcommands of `gpuwhy queue` (queue*.c) and what they share. */
#ifndef GPUWHY_CMD_QUEUE_CMD_H
#define GPUWHY_CMD_QUEUE_CMD_H

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

/* Task ids: positive integers; qcmd_bad_id prints the error and returns 2. */
bool qcmd_parse_id(const char *s, int64_t *id);
int qcmd_bad_id(const char *s);

#endif
