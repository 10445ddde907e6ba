/*
 * procscan.h - process trees' RSS and PID -> attempt attribution through /proc
 * (procscan.c).
 */
#ifndef GPUWHY_QUEUE_PROCSCAN_H
#define GPUWHY_QUEUE_PROCSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* /proc/PID/stat fields the queue uses. */
typedef struct {
	int pid, ppid, pgrp, session;
	char state;
	uint64_t starttime;
	int64_t rss_kib;
} queue_proc_stat;

/* Read /proc/PID/stat; false when the process is gone. */
bool queue_proc_read(int pid, queue_proc_stat *out);
/* Alive and the same process (start time matches); zombies count as gone. */
bool queue_proc_alive(int pid, uint64_t starttime);
/* For each session id, the RSS summed over its processes except the session
 * leader (the shim); one pass over /proc. out[i] = -1 when /proc is unreadable. */
void queue_sessions_rss_kib(const int *sids, int n, int64_t *out);
/* Whether /proc/PID/environ holds NAME=VALUE. */
bool queue_proc_has_env(int pid, const char *name, const char *value);
/* This boot's id ("" when unreadable). */
void queue_boot_id(char *out, size_t outlen);
/* A random token (16 hex digits). */
void queue_new_token(char *out, size_t outlen);

#endif
