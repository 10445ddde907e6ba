/*
 * shim.h - the queue's per-attempt supervisor process: timeout, status file (shim.c).
 */
#ifndef GPUWHY_QUEUE_SHIM_H
#define GPUWHY_QUEUE_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The shim's status file, as the worker reads it back. */
typedef struct {
	bool present;     /* the file exists */
	bool complete;    /* the task ended and the shim recorded how */
	bool not_started; /* the hand-off never came: the command did not run */
	int task_pid;
	double started, ended;
	bool exit_ok;
	int exit_code, signal;
	bool timed_out, cancelled;
	int exec_errno;
	int64_t maxrss_kib;
} queue_status;

int queue_status_read(const char *path, queue_status *out);

typedef struct {
	int sock; /* the worker's end sends the go-ahead; closed when the shim exits */
	const char *status, *log, *cwd;
	int log_fd; /* the log, open for appending; -1: open log */
	int64_t timeout_ns, grace_ns;
	char **argv; /* the command; run with environ */
} queue_shim_opts;

/*
 * Messages on the shim's socket (SOCK_SEQPACKET, one per send). Worker to shim:
 * 'g' run, 'x' cancelled before the start, 'n' do not run; QUEUE_SHIM_RECORDED
 * once the final status is in the database. Shim to worker: QUEUE_SHIM_PID and
 * the command's PID after its start; QUEUE_SHIM_ENDED and the status text when
 * it ended. A shim that gets no QUEUE_SHIM_RECORDED (the worker died) writes the
 * status file instead, for the next worker.
 */
#define QUEUE_SHIM_PID 'p'
#define QUEUE_SHIM_ENDED 'e'
#define QUEUE_SHIM_RECORDED 'k'
/*
 * A shim that waits for work (forked blank, or done with an attempt the worker
 * recorded): the worker sends QUEUE_SHIM_ASSIGN and the attempt (the task's log
 * passed along as a descriptor), records the attempt, then sends 'g' run or
 * QUEUE_SHIM_FORGET (nothing was recorded: wait for the next one). A shim whose
 * worker goes before the 'g' writes a not-started status for the next worker.
 */
#define QUEUE_SHIM_ASSIGN 'a'
#define QUEUE_SHIM_FORGET 'f'
#define QUEUE_SHIM_MSG_MAX (96 * 1024) /* larger attempts get a shim forked for them */
/* Parse status text (the status file's key=value lines). */
void queue_status_parse(const char *text, queue_status *out);

/* Supervise one attempt in this process (a fresh one: it becomes a session leader);
 * returns the process's exit code. */
int queue_shim_run(const queue_shim_opts *o);
/* The assignment message for attempt o, run with envp (malloc'd; *len bytes). */
char *queue_shim_pack(const queue_shim_opts *o, char *const *envp, size_t *len);
/* Send a packed assignment and o's log descriptor to a waiting shim; 0 or -1 (errno). */
int queue_shim_assign(int sock, const char *msg, size_t len, int log_fd);
/* A blank shim (a fresh session leader): run the attempts sent on sock until the
 * worker closes it or one is not recorded; returns the exit code. */
int queue_shim_serve(int sock);

#endif
