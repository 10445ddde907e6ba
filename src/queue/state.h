/*
 * state.h - the queue's states of a task and of an attempt, and which state an event leads to
 * (state.c).
 */
#ifndef GPUWHY_QUEUE_STATE_H
#define GPUWHY_QUEUE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	QS_QUEUED,    /* waiting to be placed (cooldown, dependency, memory, pause) */
	QS_SUBMITTED, /* handed to Slurm, not running there yet */
	QS_RUNNING,   /* an attempt is running */
	QS_DONE,      /* an attempt exited 0 */
	QS_FAILED,    /* the last attempt failed and no retry is left */
	QS_TIMEOUT,   /* the last attempt ran past --timeout */
	QS_CANCELLED, /* cancelled by the user (or by Slurm) */
	QS_LOST, /* its process vanished without a status (worker or node died), no retry left */
	QS__COUNT
} queue_state;

const char *queue_state_name(queue_state s);
/* The state in the user's language (util/i18n.h), for text tables; never stored. */
const char *queue_state_text(queue_state s);
int queue_state_parse(const char *s); /* -1 when unknown */
bool queue_state_final(queue_state s);

/* Events that move a task between states. */
typedef enum {
	QE_START,       /* local attempt starts: queued -> running */
	QE_SUBMIT,      /* Slurm accepted the job: queued -> submitted */
	QE_BEGAN,       /* Slurm job started running: submitted -> running */
	QE_CANCEL,      /* user cancel: queued -> cancelled; active stays (request recorded) */
	QE_END_RETRY,   /* attempt ended, policy retries: active -> queued */
	QE_END_DONE,    /* active -> done */
	QE_END_FAILED,  /* active -> failed */
	QE_END_TIMEOUT, /* active -> timeout */
	QE_END_CANCEL,  /* active -> cancelled */
	QE_END_LOST,    /* active -> lost */
	QE_NOT_STARTED, /* the attempt never ran its command: active -> queued */
	QE_RETRY,       /* `queue retry`: any final state -> queued */
	QE_DEP_FAILED,  /* the task it waits for ended badly: queued -> failed */
	QE__COUNT
} queue_event;

/* The state after ev, or -1 when ev is not allowed in from. */
int queue_transition(queue_state from, queue_event ev);

typedef enum { QB_LOCAL, QB_SLURM } queue_backend;
const char *queue_backend_name(queue_backend b);

/* How one attempt ended. */
typedef enum {
	QO_NONE,        /* still running */
	QO_DONE,        /* exit 0 */
	QO_FAILED,      /* non-zero exit or a signal */
	QO_TIMEOUT,     /* killed for running past its limit */
	QO_CANCELLED,   /* killed on request */
	QO_LOST,        /* its process vanished without a status */
	QO_NOT_STARTED, /* never ran the command (worker died before the hand-off) */
	QO__COUNT
} queue_outcome;
const char *queue_outcome_name(queue_outcome o);
/* The outcome in the user's language, for text tables ("" for QO_NONE). */
const char *queue_outcome_text(queue_outcome o);
int queue_outcome_parse(const char *s);

#endif
