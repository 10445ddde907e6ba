/*
 * run_relay.h - `gpuwhy run`'s output pipes after CMD exited.
 *
 * CMD's stdout and stderr reach the terminal through pipes gpuwhy reads (it
 * looks for step lines in them). A process CMD left behind may still hold
 * them and write later. gpuwhy relays that output as `tee` would, until every
 * writer has closed the pipes, for at most RUN_RELAY_WAIT_NS; then a small
 * process of its own (`gpuwhy-relay` in ps) takes the pipes over and relays
 * until the last writer is gone, so gpuwhy returns and no writer ever meets a
 * closed pipe (EPIPE, or death by SIGPIPE).
 */
#ifndef GPUWHY_CMD_RUN_RELAY_H
#define GPUWHY_CMD_RUN_RELAY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long gpuwhy itself waits for the writers CMD left behind (docs/run.md, run --help). */
#define RUN_RELAY_WAIT_NS 5000000000LL

/* Write all of p to fd; false once fd is gone (its reader closed it). */
bool run_write_all(int fd, const char *p, size_t n);

/*
 * fds: the read ends of CMD's stdout (relayed to 1), stderr (relayed to 2) and
 * step pipe (read and dropped), -1 where closed. Relays until all are closed,
 * wait_ns has passed or *stop is set (a signal to gpuwhy), then hands what is
 * still open to the relay process. Closes every fd.
 */
void run_relay_rest(int fds[3], int64_t wait_ns, volatile sig_atomic_t *stop);

#endif
