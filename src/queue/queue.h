/*
 * queue.h - `gpuwhy queue`: a GPU-aware batch runner.
 *
 * Pieces, from pure to impure:
 *   state/transitions  (state.c)  which state an event leads to
 *   placement          (place.c)  which GPUs a task goes on, given a view of them
 *   retry policy       (retry.c)  what happens after an attempt ends
 *   OOM recognition    (oom.c)    CUDA / framework out-of-memory messages in a log tail
 *   Slurm parsing      (slurm.c)  sbatch/squeue/scontrol/sacct output, ExitCode a:b
 *   task files         (spec.c)   `add --from` text, JSON Lines and the batch config shape
 *   store              (store.c)  the SQLite state (WAL, busy timeout)
 *   shim               (shim.c)   the per-attempt supervisor process (timeout, status file)
 *   proc scan          (procscan.c) process tree RSS and PID -> task attribution via /proc
 *   worker             (worker.c) the loop: lock, wake FIFO, settings, the back ends
 *   worker control     (wctl.c)   find, start and wake a queue's worker
 *   GPU watch          (gpuwatch.c) the project's sampler, feeding the worker's GPU view
 *   back ends          (backend.h) one interface; local.c (with sched.c, spawn.c,
 *                                 attrib.c) runs shims here, slurmrun.c submits to Slurm
 *   conclusion         (conclude.c) OOM scan, retry policy and record of an ended attempt
 *
 * Memory sizes are MiB (int64_t, -1 = unknown or not declared); times are
 * wall-clock seconds (double, 0 = not set) unless a name says _ms / _ns.
 */
#ifndef GPUWHY_QUEUE_QUEUE_H
#define GPUWHY_QUEUE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/gpu.h"

/* ---------------------------------------------------------------- states */

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

/* ------------------------------------------------------------- placement */

/* One GPU as the scheduler sees it, in preference order. */
typedef struct {
	int index;    /* NVML index, for messages */
	bool usable;  /* present and not lost */
	bool drained; /* `queue drain --gpu`: no new tasks */
	bool total_ok;
	int64_t total_mib;
	bool free_ok;
	int64_t free_mib;     /* as last measured */
	int64_t pending_mib;  /* reservations of our tasks on it not yet allocated */
	int64_t reserved_mib; /* full reservations of our tasks on it */
	int ntasks;           /* queue tasks placed on it */
	int cap;              /* smallest per-GPU cap of those tasks (0 when none) */
	int foreign;          /* processes on it that are not ours */
} queue_gpu_view;

typedef enum { QP_SPREAD, QP_PACK } queue_place_mode;

typedef struct {
	int gpus;           /* number of GPUs wanted (>= 1) */
	int64_t mem_mib;    /* per GPU; -1 = not declared */
	int per_gpu;        /* at most this many queue tasks on each chosen GPU (>= 1) */
	bool allow_foreign; /* may share a GPU with processes that are not ours */
	queue_place_mode mode;
} queue_place_req;

typedef enum { QP_OK, QP_WAIT, QP_NEVER } queue_place_verdict;

typedef struct {
	queue_place_verdict verdict;
	int n;
	int pick[GPU_MAX]; /* positions in the view array */
	char reason[200];  /* why not (QP_WAIT / QP_NEVER) */
} queue_place_result;

/*
 * Memory available to a new task on v: measured free memory minus what
 * placed tasks have reserved but not yet allocated. When free memory is
 * unknown, total minus all reservations. -1 when neither is known.
 */
int64_t queue_gpu_available(const queue_gpu_view *v);

/* Choose GPUs for r. Pure: no I/O. Returns out->verdict. */
queue_place_verdict queue_place(const queue_gpu_view *v, int n, const queue_place_req *r,
                                queue_place_result *out);

/* ----------------------------------------------------------------- OOM */

typedef enum { QOOM_NONE, QOOM_GPU, QOOM_HOST } queue_oom_kind;

typedef struct {
	queue_oom_kind kind;
	const char *source; /* "pytorch", "tensorflow", "jax", "cuda", "nccl", "host", NULL */
	char line[256];     /* the matching line, trimmed */
	int64_t tried_mib;  /* size of the failed allocation when the message says it, else -1 */
} queue_oom_info;

/* Look for out-of-memory messages in a log tail. Pure. */
void queue_oom_scan(const char *text, size_t len, queue_oom_info *out);

/* --------------------------------------------------------------- retry */

typedef struct {
	queue_outcome outcome;
	bool exit_ok; /* exit_code is meaningful */
	int exit_code;
	int signal; /* 0 when none */
	queue_oom_kind oom;
	int64_t tried_mib;       /* from the OOM message, -1 unknown */
	int attempts_used;       /* attempts counted against the budget, this one included */
	int retries;             /* --retries */
	int64_t retry_delay_ms;  /* --retry-delay */
	int64_t mem_mib;         /* reservation this attempt had, -1 none */
	int64_t peak_gpu_mib;    /* this attempt's peak on one GPU, -1 unknown */
	int64_t largest_gpu_mib; /* largest GPU in the queue's view, -1 unknown */
	int per_gpu;             /* cap this attempt had */
} queue_retry_in;

typedef struct {
	queue_state next;     /* QS_QUEUED to retry, else a final state */
	int64_t delay_ms;     /* cooldown before the retry */
	int64_t mem_hint_mib; /* reservation for the next attempt, -1 = unchanged */
	int per_gpu_hint;     /* cap for the next attempt, 0 = unchanged */
	char why[512];        /* one line for the record */
} queue_retry_out;

void queue_retry_decide(const queue_retry_in *in, queue_retry_out *out);

/*
 * A delay or time limit in seconds as the queue writes it, without the unit:
 * "0.1", "1.5", "30", "3600" (a long one in whole seconds, never "3.6e+03").
 * Returns buf.
 */
const char *queue_seconds_text(double s, char *buf, size_t len);

/* ------------------------------------------------------------- Slurm text */

typedef enum {
	QSL_UNKNOWN,
	QSL_PENDING,
	QSL_RUNNING,
	QSL_COMPLETED,
	QSL_FAILED,
	QSL_CANCELLED,
	QSL_TIMEOUT,
	QSL_OUT_OF_MEMORY,
	QSL_NODE_FAIL
} queue_slurm_class;

/* Classify a JobState word ("RUNNING", "CANCELLED by 0", "NODE_FAIL", ...). */
queue_slurm_class queue_slurm_classify(const char *state);

/* "3:0" -> exit 3, signal 0. false when malformed. */
bool queue_slurm_exitcode(const char *s, int *exit_code, int *signal);

typedef struct {
	char job_id[32];
	char state[32]; /* JobState word */
	char reason[64];
	bool exit_ok;
	int exit_code, signal;
	double start, end;   /* 0 when unknown */
	char gres_idx[64];   /* "0-1" from GRES=gpu:2(IDX:0-1), "" when absent */
	char user[64];       /* scontrol's UserId=alice(1000), sacct's User: "alice"; "" unknown */
	char nodelist[1024]; /* NodeList as Slurm writes it ("node[01-03,07]"); "" none yet */
	int gpus;            /* sacct's AllocTRES gres/gpu=N; -1 unknown */
} queue_slurm_job;

/* `sbatch --parsable` output "123" or "123;cluster" -> job id; false when none. */
bool queue_slurm_parse_sbatch(const char *out, char *job, size_t joblen);
/* One `scontrol -o show job` line. */
bool queue_slurm_parse_scontrol(const char *line, queue_slurm_job *out);
/* One `sacct -X -P -n -o JobID,State,ExitCode,Start,End[,User,NodeList,AllocTRES]` line. */
bool queue_slurm_parse_sacct(const char *line, queue_slurm_job *out);

/* ---- a job's allocation: its nodes, their GPU indices, its time (slurm_alloc.c; pure) ---- */
#define QUEUE_SLURM_HOST 64
#define QUEUE_SLURM_MAX_NODES 256

/*
 * Expand a Slurm hostlist ("node[01-03,07],gpu-a1", "r[1-2]n[1-2]") into
 * out[max], zero padding kept. Returns the count, or -1 when malformed or
 * longer than max.
 */
int queue_slurm_hostlist(const char *list, char (*out)[QUEUE_SLURM_HOST], int max);

/* "0-1,3" -> bits 0, 1, 3 (indices below 64); false when malformed. */
bool queue_slurm_idx_mask(const char *idx, uint64_t *mask);

typedef struct {
	char host[QUEUE_SLURM_HOST];
	uint64_t gpus; /* bit i: GPU index i; 0: not known which (every GPU of the node) */
} queue_slurm_alloc_node;

typedef struct {
	char job_id[32], user[64], state[32];
	double start, end; /* wall seconds; 0: not started, or not ended */
	int gpus;          /* GPUs allocated (AllocTRES or the indices); -1 unknown */
	queue_slurm_alloc_node node[QUEUE_SLURM_MAX_NODES];
	int nnodes;
	bool have_idx; /* the GPU indices came from scontrol -d */
} queue_slurm_alloc;

/*
 * The allocation of job from `scontrol show job -d JOB` (multi-line or -o;
 * per node "Nodes=... GRES=gpu:2(IDX:0-1)") when it knows the job, else from
 * `sacct -X -n -P -j JOB -o JobID,State,ExitCode,Start,End,User,NodeList,AllocTRES`
 * (its last line for the job: a requeued job has several). Either text may
 * be NULL. False when neither names the job with a node list.
 */
bool queue_slurm_parse_alloc(const char *job, const char *scontrol, const char *sacct,
                             queue_slurm_alloc *out);
/* "2024-05-01T12:00:03" (local time) -> wall seconds; 0 when "Unknown"/"None"/bad. */
double queue_slurm_time(const char *s);
/* How many attempt headers with this token the log holds (> 1: Slurm ran it again). */
int queue_count_token_runs(const char *log, size_t len, const char *token);

/* ------------------------------------------------------------ task spec */

#define QUEUE_NAME_MAX 128

/* What `add` stores: the command and its policy. */
typedef struct {
	char name[QUEUE_NAME_MAX];
	char **argv; /* NULL-terminated, owned */
	int argc;
	char *cwd;       /* owned */
	char *env_json;  /* captured environment, JSON object, owned (NULL: the worker's) */
	int gpus;        /* 0 = CPU-only task */
	int64_t mem_mib; /* per GPU, -1 = not declared */
	int per_gpu;     /* 0 = queue default */
	int retries;
	int64_t retry_delay_ms;
	int64_t timeout_ms; /* 0 = none */
	int64_t after_id;   /* 0 = none */
	bool allow_foreign;
	queue_backend backend;
	int64_t host_mem_mib; /* Slurm --mem, -1 none */
	char *slurm_args;     /* JSON array of extra sbatch arguments, owned, NULL none */
	char *input, *output; /* free text kept in the record (batch shards), owned */
	char *record_file;    /* JSON Lines file a final record is appended to, owned */
} queue_spec;

void queue_spec_init(queue_spec *s);
void queue_spec_free(queue_spec *s);
/* Deep copy (for files that make many tasks from one template). */
void queue_spec_copy(queue_spec *dst, const queue_spec *src);
/* Replace argv with a copy of the given vector. */
void queue_spec_set_argv(queue_spec *s, char *const *argv, int argc);

/*
 * The checks every task passes, whether from the command line or a file
 * (0, or -1 with err saying why): a name under QUEUE_NAME_MAX bytes; a
 * working directory that exists (set_cwd resolves it against s->cwd when
 * relative); a command; counts in range. That `after` names an existing
 * task is checked by queue_store_add, in the transaction that adds it.
 */
int queue_spec_set_name(queue_spec *s, const char *name, char *err, size_t errlen);
int queue_spec_set_cwd(queue_spec *s, const char *dir, char *err, size_t errlen);
int queue_spec_validate(const queue_spec *s, char *err, size_t errlen);

/*
 * Parse a task file: text (one shell command a line, # comments), JSON Lines,
 * a JSON array, or one JSON object (the batch config shape: cmd with {input}
 * and {output}, input_dir, output_dir, max_retries, retry_interval_seconds,
 * log_file). Each task starts as a copy of tmpl (the command line's
 * options); a value in the file overrides it. Relative paths in the file
 * are taken from tmpl->cwd. Returns the number of specs (*out owned: free
 * each and the array) or -1 with a message in err naming the line.
 */
int queue_spec_parse_file(const char *text, size_t len, bool text_mode, const queue_spec *tmpl,
                          queue_spec **out, char *err, size_t errlen);

/* Shell-quote one word into out ('...' with '\'' for quotes). Returns bytes needed. */
size_t queue_shell_quote(const char *word, char *out, size_t outlen);
/* argv joined as one shell-safe command line; malloc'd. */
char *queue_argv_to_shell(char *const *argv, int argc);

/* ------------------------------------------------------------------ store */

typedef struct queue_store queue_store;

/* A task as stored: the spec plus its progress. */
typedef struct {
	int64_t id;
	queue_spec spec;
	queue_state state;
	int attempts;    /* attempts that ran the command */
	int budget_from; /* attempts before the last manual retry */
	int oom_count;
	int64_t mem_hint_mib;
	int per_gpu_hint;
	double not_before; /* cooldown end */
	bool cancel_requested;
	double submitted, started, ended;
	bool exit_ok;
	int exit_code, signal;
	char error[512];
	int64_t peak_gpu_mib, peak_rss_kib;
	char wait_reason[200];
	char gpus_used[256]; /* indices of the last attempt, "" none */
} queue_task;

void queue_task_free(queue_task *t);

typedef enum { QA_STARTING, QA_RUNNING, QA_ENDED } queue_astate;

typedef struct {
	int64_t task_id;
	int n;
	char token[40];
	queue_astate astate;
	queue_backend backend;
	char slurm_job[32];
	char slurm_state[48];
	int shim_pid;
	uint64_t shim_start; /* /proc/PID/stat starttime, guards against PID reuse */
	int task_pgid;
	char boot_id[48];
	char gpu_uuids[GPU_MAX * 16];
	char gpu_idx[256];
	int64_t reserved_mib;
	int per_gpu;
	double started, ended;
	bool exit_ok;
	int exit_code, signal;
	queue_outcome outcome;
	queue_oom_kind oom;
	char error[512];
	int64_t peak_gpu_mib, peak_rss_kib;
	int64_t log_offset;
	int runs; /* executions seen (Slurm may run a job twice) */
} queue_attempt;

/* Config keys (stored in the queue's database; `gpuwhy queue config`). */
typedef struct {
	const char *key, *def, *help;
} queue_config_key;
extern const queue_config_key queue_config_keys[];
const queue_config_key *queue_config_find(const char *key);
/* Validate a value for key; false with err filled. */
bool queue_config_check(const char *key, const char *value, char *err, size_t errlen);

/*
 * A failure as data: the queue's sources fill it in and print nothing; the
 * faces print it as one line (`gpuwhy: WHAT: WHY (HINT)`). code is a
 * GW_EXIT_* value, 0 while nothing failed; hint may be "".
 */
typedef struct {
	int code;
	char what[4200];
	char why[640];
	char hint[160];
} queue_err;

/* Fill e (when not NULL); returns code. */
int queue_err_set(queue_err *e, int code, const char *what, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Resolve the queue directory: opt, else $GPUWHY_QUEUE, else XDG state. */
int queue_dir_resolve(const char *opt, char *out, size_t outlen, queue_err *e);

/*
 * Create DIR (0700), its subdirectories and queue.db (0600) as needed, and
 * refuse them (GW_EXIT_ENV, e filled) when they are not owned by this user
 * or root, or are writable by group or others. check only looks.
 */
int queue_dir_prepare(const char *dir, queue_err *e);
int queue_dir_check(const char *dir, queue_err *e);

/* Open (and create) DIR/queue.db. On failure fills e and returns a GW_EXIT code. */
int queue_store_open(const char *dir, queue_store **out, queue_err *e);
void queue_store_close(queue_store *st);
const char *queue_store_dir(const queue_store *st);
/* The last failure of a call on st (code 0: none). Every failure is also handed to the
 * function set with queue_store_on_error (the face's printer, the worker's log). */
const queue_err *queue_store_error(const queue_store *st);
/* Fold the WAL into the database and empty it, when nobody else uses it at the moment: the
 * first connection after it (a lone `add` or `ls`) then has no WAL to read back. */
void queue_store_checkpoint(queue_store *st);
void queue_store_on_error(queue_store *st, void (*fn)(const queue_err *e));

/* Insert tasks atomically; ids filled. Returns 0, -1 (a database error) or GW_EXIT_USAGE
 * (an `after` that names no task: nothing added); a message is printed. */
int queue_store_add(queue_store *st, queue_spec *specs, int n, int64_t *ids);
/* The same under a submission token (at most QUEUE_TOKEN_MAX bytes, NULL: none): a
 * submission whose token is stored already is not added again, and its ids are filled. */
#define QUEUE_TOKEN_MAX 64
int queue_store_add_token(queue_store *st, queue_spec *specs, int n, const char *token,
                          int64_t *ids);
/* The ids of the tasks stored under token, first n of them into ids; how many (-1 error). */
int queue_store_token_ids(queue_store *st, const char *token, int n, int64_t *ids);

/* ------------------------------------------------- submission (submit.c) */

/* A new submission's token (random, hex) into out (at least 33 bytes). */
void queue_submit_token(char *out, size_t len);

enum {
	QUEUE_SUBMIT_ADDED,      /* the worker added them: ids and *draining filled */
	QUEUE_SUBMIT_NOT_SENT,   /* no worker takes submissions here: add them to the database */
	QUEUE_SUBMIT_UNANSWERED, /* sent, no answer: add them under the same token */
};
/* Hand n tasks (at most 64) to the worker of dir, under token; backend_default: each
 * takes the queue's `config backend`. One of QUEUE_SUBMIT_*. */
int queue_submit_send(const char *dir, const queue_spec *specs, int n, bool backend_default,
                      const char *token, int64_t *ids, bool *draining);
/* The worker's side: the listening socket (-1 when it cannot have one: the client then
 * uses the database), its requests served (true when tasks were added; failures are not
 * reported to on_error: the client meets them again), and its removal. */
int queue_submit_listen(const char *dir);
bool queue_submit_serve(queue_store *st, int lfd, void (*on_error)(const queue_err *e));
void queue_submit_close(const char *dir, int fd);

int queue_store_get(queue_store *st, int64_t id, queue_task *out); /* 0, 1 not found, -1 */
/* All tasks (or those in state, when state >= 0), ordered by id. */
int queue_store_list(queue_store *st, int state, queue_task **out, int *n);
void queue_tasks_free(queue_task *t, int n);
int queue_store_attempts(queue_store *st, int64_t id, queue_attempt **out, int *n);
int queue_store_attempt_get(queue_store *st, int64_t id, int n, queue_attempt *out);

/* Config: value into out (default when unset); set writes it. */
void queue_store_config_get(queue_store *st, const char *key, char *out, size_t outlen);
int64_t queue_store_config_int(queue_store *st, const char *key);
int queue_store_config_set(queue_store *st, const char *key, const char *value);

/*
 * User actions. Each returns 0 and sets *result to what happened:
 * cancel: 0 cancelled while queued, 1 cancel requested for an active attempt, 2 already final.
 * retry:  0 queued again, 1 not final (nothing done).
 */
int queue_store_cancel(queue_store *st, int64_t id, int *result, queue_attempt *active);
int queue_store_retry(queue_store *st, int64_t id, int *result);

/* Worker side. */
typedef struct {
	int64_t id;
	int gpus;
	int64_t mem_mib;  /* effective: max(declared, hint) */
	int per_gpu;      /* declared, 0 = queue default */
	int per_gpu_hint; /* lowered after an OOM, 0 = none */
	bool allow_foreign;
	queue_backend backend;
	int64_t after_id;
	double not_before;
} queue_candidate;
/* Queued tasks with an id above after_id, in id order (at most max). */
int queue_store_candidates(queue_store *st, queue_backend b, int64_t after_id, queue_candidate *out,
                           int max);
/* State of another task (for --after); -1 when it does not exist. */
int queue_store_state_of(queue_store *st, int64_t id);
int queue_store_dep_failed(queue_store *st, int64_t id, int64_t dep, queue_state dep_state);
/* queued -> running/submitted with a new attempt row: number a->n (the next one when
 * a->n <= 0), astate starting, or running with a->shim_pid and a->shim_start when
 * a->astate is QA_RUNNING (one commit for a shim that already waits). 1 = task no
 * longer queued. */
int queue_store_begin_attempt(queue_store *st, queue_attempt *a, queue_state to);
/* The number the next attempt of task id gets (only the worker adds attempts). */
int queue_store_next_attempt(queue_store *st, int64_t id);
/* starting -> running with the shim's identity; *cancel says a cancel arrived meanwhile. */
int queue_store_attempt_running(queue_store *st, const queue_attempt *a, bool *cancel);
int queue_store_attempt_slurm(queue_store *st, const queue_attempt *a);
/* Finish an attempt and apply the policy's decision to the task. */
int queue_store_finish(queue_store *st, const queue_attempt *a, const queue_retry_out *d,
                       int64_t task_peak_gpu, int64_t task_peak_rss);
int queue_store_peaks(queue_store *st, int64_t id, int n, int64_t gpu_mib, int64_t rss_kib);
int queue_store_wait_reason(queue_store *st, int64_t id, const char *reason);
/* n of them in one transaction. */
int queue_store_wait_reasons(queue_store *st, const int64_t *id, const char *const *reason, int n);
int queue_store_fail_now(queue_store *st, int64_t id, const char *error);
/* Active attempts (starting or running) of a backend. */
int queue_store_active(queue_store *st, int backend, queue_attempt **out, int *n);
int queue_store_cancel_requested(queue_store *st, int64_t id);
int queue_store_task_began(queue_store *st, int64_t id); /* submitted -> running */
int queue_store_count_state(queue_store *st, int state);
/* Active tasks with a cancel request (ids into out, at most max). */
int queue_store_cancel_list(queue_store *st, int64_t *out, int max);
/* Delete final tasks (done only unless all) and their attempts; ids of the deleted into *ids. */
int queue_store_clean(queue_store *st, bool all, int64_t **ids, int *n);

/* What the worker saw of the GPUs, for `queue gpus`. */
typedef struct {
	int index;
	char uuid[96], name[96];
	int64_t total_mib, free_mib, pending_mib; /* -1 unknown */
	int64_t avail_mib;                        /* may be negative; INT64_MIN unknown */
	int ntasks, cap, foreign;
	char state[24]; /* "ok", "drained", "lost", "excluded" */
	char tasks[128];
} queue_gpu_row;
int queue_store_gpu_view_put(queue_store *st, const queue_gpu_row *rows, int n, double t);
int queue_store_gpu_view_get(queue_store *st, queue_gpu_row **rows, int *n, double *t);

/* ------------------------------------------------------------ processes */

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

/* ------------------------------------------------------------------ shim */

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

/* ----------------------------------------------------------------- worker */

typedef struct {
	const char *dir;
	const char *gpus;     /* global --gpus */
	int64_t idle_exit_ns; /* stop after this long with nothing to do, 0 never */
	int ready_fd;         /* write one byte here once the lock is held, -1 none */
	const char *self_exe; /* gpuwhy binary for the shim */
} queue_worker_opts;

int queue_worker_run(const queue_worker_opts *o);

/* A time-stamped line in the worker's log (its stderr). */
void queue_wlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Paths inside a queue directory. */
void queue_path(const char *dir, const char *leaf, char *out, size_t outlen);
void queue_log_path(const char *dir, int64_t id, char *out, size_t outlen);
void queue_status_path(const char *dir, int64_t id, int n, char *out, size_t outlen);

/* Whether pid is DIR's worker: holds worker.lock, runs self_exe, has `queue worker`
 * arguments. 0 yes, else -1 with why filled. */
int queue_worker_verify(const char *dir, int pid, const char *self_exe, char *why, size_t len);
/* Verify as above, then signal it (through a pidfd where the kernel has them). */
int queue_worker_signal(const char *dir, int pid, int sig, const char *self_exe, char *why,
                        size_t len);

/* PID of the worker holding DIR's lock, 0 when none. */
int queue_worker_pid(const char *dir);
/* Start a detached worker unless one runs. 0 ok (or already running), else GW_EXIT code. */
int queue_worker_ensure(const char *dir, const char *self_exe);
/* Wake the worker (no-op when none listens): poke after a change of settings or a
 * cancel (it re-reads them); wake with QUEUE_POKE_ADD after adding tasks (a pass only). */
#define QUEUE_POKE_ADD 'a'
void queue_worker_poke(const char *dir);
void queue_worker_wake(const char *dir, char what);

/* ------------------------------------------- shared by the back ends (conclude.c) */

/*
 * Conclude an attempt whose outcome, exit status, times, peaks and log
 * offset are filled in: look for out-of-memory messages in its part of the
 * log, apply the retry policy, store the result, append the task's record
 * file when it is final. largest_gpu_mib bounds an OOM retry's reservation
 * (-1 unknown). Returns the task's next state, or -1 on a database error.
 */
int queue_attempt_conclude(queue_store *st, queue_attempt *a, int64_t largest_gpu_mib);

/*
 * May queued task c start now (cooldown over, dependency done)? 1 yes;
 * 0 not yet (reason filled, *next_due lowered to the cooldown's end when
 * that is what it waits for); -1 it never will (its dependency ended badly
 * or is missing: the task is failed here).
 */
int queue_candidate_gate(queue_store *st, const queue_candidate *c, double now, char *reason,
                         size_t len, double *next_due);

/* Read the log from offset (at most max bytes from its end). malloc'd, NUL-terminated. */
char *queue_read_tail(const char *path, int64_t offset, size_t max, size_t *len);
/* Append a final record for a task to its record file (JSON Lines). */
void queue_write_record(queue_store *st, int64_t id);

#endif
