/*
 * spec.h - the queue's task files: `add --from` text, JSON Lines and the batch config shape
 * (spec.c).
 */
#ifndef GPUWHY_QUEUE_SPEC_H
#define GPUWHY_QUEUE_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/state.h"
#include "util/fail.h"

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
 * (0, or GW_EXIT_USAGE with *f saying why; f may be NULL): a name under
 * QUEUE_NAME_MAX bytes; a working directory that exists (set_cwd resolves it
 * against s->cwd when relative); a command; counts in range. The failure's
 * what is the option (--name, --cwd) or "queue add". That `after` names an
 * existing task is checked by queue_db_add, in the transaction that adds it.
 */
int queue_spec_set_name(queue_spec *s, const char *name, gw_fail *f);
int queue_spec_set_cwd(queue_spec *s, const char *dir, gw_fail *f);
int queue_spec_validate(const queue_spec *s, gw_fail *f);

/*
 * Parse a task file: text (one shell command a line, # comments), JSON Lines,
 * a JSON array, or one JSON object (the batch config shape: cmd with {input}
 * and {output}, input_dir, output_dir, max_retries, retry_interval_seconds,
 * log_file). Each task starts as a copy of tmpl (the command line's
 * options); a value in the file overrides it. Relative paths in the file
 * are taken from tmpl->cwd. Returns the number of specs (*out owned: free
 * each and the array) or -1 with *f (may be NULL) saying why: what is file,
 * why names the line ("line 3: ...").
 */
int queue_spec_parse_file(const char *file, const char *text, size_t len, bool text_mode,
                          const queue_spec *tmpl, queue_spec **out, gw_fail *f);

/* Shell-quote one word into out ('...' with '\'' for quotes). Returns bytes needed. */
size_t queue_shell_quote(const char *word, char *out, size_t outlen);
/* argv joined as one shell-safe command line; malloc'd. */
char *queue_argv_to_shell(char *const *argv, int argc);

#endif
