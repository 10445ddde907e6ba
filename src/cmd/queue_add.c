/* queue_add.c - `gpuwhy queue add`: one task from a command line, or many from a file. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/jsonw.h"
#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "gpu/gpu.h"
#include "queue/state.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/enqueue.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/selfexe.h"

/* A variable the task's environment leaves out, said where it is left out. */
static void env_skipped(const char *name, int len)
{
	fprintf(stderr, "gpuwhy: queue add: ");
	fprintf(stderr, _("environment variable %.*s is not UTF-8; the task will not see it\n"),
	        len, name);
}

/* --gpus's reason names the bound as a literal: the catalogue cannot expand a macro. */
_Static_assert(GPU_MAX == 64, "--gpus's reason says 64");

static int set_name(const opt_def *o, const char *v, void *ctx)
{
	gw_fail e;
	bool cwd = o->shrt != 'n';
	if (cwd ? queue_spec_set_cwd(ctx, v, &e) : queue_spec_set_name(ctx, v, &e))
		return gw_fail_print(&e);
	return 0;
}

static int set_after(const opt_def *o, const char *v, void *ctx)
{
	(void)o;
	return qcmd_parse_id(v, &((queue_spec *)ctx)->after_id) ? 0 : qcmd_bad_id(v);
}

static const char *const backends[] = {"local", "slurm", NULL};

/* The tasks to add: those of --from FILE, or the one command line, over tmpl. */
static int make_specs(const char *from, const queue_spec *tmpl, char **cmd, int ncmd,
                      queue_spec **specs, int *n)
{
	size_t len = 0;
	char *text = NULL;
	if (from && !(text = queue_task_file_read(from, &len)))
		return gw_error(GW_EXIT_USAGE, from, NULL, _("cannot read: %s"), strerror(errno));
	gw_fail e = {0};
	int rc = queue_specs_make(from, text, len, tmpl, cmd, ncmd, specs, n, &e);
	free(text);
	return rc ? gw_fail_print(&e) : 0;
}

/* Add them in one transaction (under token: see submit.c) and print their ids. */
static int store_specs(queue_db *st, queue_spec *specs, int n, const char *token)
{
	int64_t *ids = calloc(n > 0 ? (size_t)n : 1, sizeof *ids);
	int rc = queue_specs_store(st, specs, n, token, ids);
	for (int i = 0; i < n && !rc; i++)
		printf("%lld\n", (long long)ids[i]);
	free(ids);
	return rc;
}

/* What queue add's options give besides the task template. */
typedef struct {
	const char *from;
	bool no_worker;
	int backend; /* -1: the queue's `config backend` */
	opt_list sargs;
	int first; /* argv index of the command */
} add_args;

/* Parse the options into tmpl and a. 0, OPT_HELP or a usage exit code (message printed). */
static int add_parse(int argc, char **argv, queue_spec *tmpl, add_args *a)
{
	*a = (add_args){.backend = -1};
	const opt_def opts[] = {
	    OPT_INT('g', "gpus", "N", &tmpl->gpus, 0, GPU_MAX,
	            "GPUs the task gets (default 1; 0 = CPU only, sees no GPU)",
	            .why = N_("'%s' is not a GPU count from 0 to 64")),
	    OPT_SIZE('m', "mem", "SIZE", &tmpl->mem_mib, 1 << 20,
	             "GPU memory it needs on each GPU (12G, 800M; a bare number is MiB); "
	             "placement counts it as taken from the start",
	             .bare = 1 << 20, .why = N_("'%s' is not a memory size"),
	             .hint = N_("e.g. 12G, 800M, 1.5GiB, or MiB as a plain number")),
	    OPT_INT(0, "per-gpu", "K", &tmpl->per_gpu, 1, 1024,
	            "share each of its GPUs with at most K queue tasks in all (default: "
	            "`config per-gpu`, 1)"),
	    OPT_INT('r', "retries", "N", &tmpl->retries, 0, 1000,
	            "retry a failed attempt up to N times (default 0)"),
	    OPT_DURATION(0, "retry-delay", "D", &tmpl->retry_delay_ms, 1000000,
	                 "cooldown before a retry (default 30s)"),
	    OPT_DURATION('t', "timeout", "D", &tmpl->timeout_ms, 1000000,
	                 "time limit per attempt (2h, 90s); SIGTERM, then SIGKILL"),
	    OPT_CALL('n', "name", "NAME", set_name, "a name for listings"),
	    OPT_CALL(0, "after", "ID", set_after,
	             "start only after task ID ended done (fail if it did not)"),
	    OPT_CALL(0, "cwd", "DIR", set_name, "working directory (default: the current one)"),
	    OPT_FLAG(0, "allow-foreign", &tmpl->allow_foreign,
	             "may share GPUs with processes the queue did not start"),
	    OPT_ENUM(0, "backend", "B", &a->backend, backends,
	             "local (default: `config backend`) or slurm",
	             .why = N_("unknown back end '%s'")),
	    OPT_SIZE(0, "host-mem", "SIZE", &tmpl->host_mem_mib, 1 << 20,
	             "host memory for Slurm (--mem of sbatch)", .bare = 1 << 20,
	             .why = N_("'%s' is not a memory size"),
	             .hint = N_("e.g. 12G, 800M, 1.5GiB, or MiB as a plain number")),
	    OPT_LIST(0, "slurm-arg", "ARG", &a->sargs,
	             "one more sbatch argument (repeatable), e.g. -p gpu"),
	    OPT_STRING('f', "from", "FILE", &a->from,
	               "tasks from FILE (- = stdin): text, one shell command a line; or JSON "
	               "Lines / a JSON array of objects with the fields cmd, name, gpus, mem, "
	               "per_gpu, retries, retry_delay, timeout, after, cwd, env, allow_foreign, "
	               "backend, host_mem, slurm_args, input, log_file; or one object with "
	               "input_dir (one task per file, {input} {output} {stem} in cmd), "
	               "output_dir, max_retries, retry_interval_seconds, log_file"),
	    OPT_FLAG(0, "no-worker", &a->no_worker, "do not start a worker if none runs"),
	    OPT_END};
	const opt_cmd oc = {
	    .name = "queue add",
	    .usage = "queue add [OPTIONS] -- CMD [ARGS...]\nqueue add [OPTIONS] --from FILE",
	    .opts = opts,
	    .more = N_("The task runs with the environment of this shell, CUDA_VISIBLE_DEVICES set "
	               "to its\nGPUs' UUIDs (or indices, `config visible index`), "
	               "CUDA_DEVICE_ORDER=PCI_BUS_ID,\nGPUWHY_TASK_ID, GPUWHY_ATTEMPT and "
	               "GPUWHY_ATTEMPT_TOKEN. Prints the task ids."),
	    .max_args = -1,
	    .stop_at_arg = true,
	    .ctx = tmpl};
	return opt_parse(&oc, argc, argv, &a->first);
}

/* The rest of the template: back end, one command or --from, cwd, sbatch arguments, env. */
static int add_complete(queue_spec *tmpl, add_args *a, int ncmd)
{
	if (a->backend >= 0)
		tmpl->backend = a->backend ? QB_SLURM : QB_LOCAL;
	json_t *sarr = json_array();
	for (int i = 0; i < a->sargs.n; i++)
		json_array_append_new(sarr, json_string(a->sargs.v[i]));
	opt_list_free(&a->sargs);
	int rc = 0;
	if (!a->from && ncmd == 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add",
		              _("gpuwhy queue add -- CMD ARGS, or --from FILE"),
		              _("no command given"));
	else if (a->from && ncmd > 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add", NULL,
		              _("give either a command or --from FILE, not both"));
	if (rc) {
		json_decref(sarr);
		return rc;
	}
	if (!tmpl->cwd) {
		char cwd[PATH_MAX];
		tmpl->cwd = strdup(getcwd(cwd, sizeof cwd) ? cwd : "/");
	}
	if (json_array_size(sarr))
		tmpl->slurm_args = jsonw_tree_text(sarr, 0, 0);
	json_decref(sarr);
	tmpl->env_json = queue_env_json(env_skipped);
	return 0;
}

/* One command, handed to the queue's running worker (submit.c), which adds it to the
 * database in its own connection: this process then opens no database at all. True when
 * the worker took it (its id printed). False: the caller adds it to the database, under
 * token when a submission was sent and not answered (token[0] is 0 otherwise). */
static bool via_worker(const char *dir, const queue_spec *tmpl, const add_args *a, char **cmd,
                       int ncmd, char *token, size_t toklen, bool *draining)
{
	int64_t id;
	token[0] = '\0';
	if (a->from ||
	    !queue_submit_one(dir, tmpl, a->backend < 0, cmd, ncmd, token, toklen, &id, draining))
		return false;
	printf("%lld\n", (long long)id);
	fflush(stdout);
	return true;
}

/* Add the tasks to the queue in dir; *draining: the queue will not start them yet. */
static int add_to_queue(const char *dir, queue_spec *tmpl, const add_args *a, char **cmd, int ncmd,
                        const char *token, bool *draining)
{
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	if (a->backend < 0) {
		char b[16];
		queue_db_config_get(st, "backend", b, sizeof b);
		tmpl->backend = !strcmp(b, "slurm") ? QB_SLURM : QB_LOCAL;
	}
	queue_spec *specs = NULL;
	int n = 0;
	rc = make_specs(a->from, tmpl, cmd, ncmd, &specs, &n);
	if (!rc)
		rc = store_specs(st, specs, n, token);
	fflush(stdout);
	*draining = !rc && queue_db_config_int(st, "draining") != 0;
	queue_db_close(st);
	for (int i = 0; i < n && specs; i++)
		queue_spec_free(&specs[i]);
	free(specs);
	return rc;
}

int qcmd_add(const char *dir, int argc, char **argv, const gw_global *g)
{
	(void)g;
	queue_spec tmpl;
	queue_spec_init(&tmpl);
	add_args a;
	int rc = add_parse(argc, argv, &tmpl, &a);
	if (rc) {
		queue_spec_free(&tmpl);
		opt_list_free(&a.sargs);
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	}
	int ncmd = argc - a.first;
	bool draining = false;
	char token[QUEUE_TOKEN_MAX];
	rc = add_complete(&tmpl, &a, ncmd);
	bool handed =
	    !rc && via_worker(dir, &tmpl, &a, argv + a.first, ncmd, token, sizeof token, &draining);
	if (!rc && !handed)
		rc = add_to_queue(dir, &tmpl, &a, argv + a.first, ncmd, token[0] ? token : NULL,
		                  &draining);
	queue_spec_free(&tmpl);
	if (rc)
		return rc;
	if (draining)
		fprintf(stderr, "gpuwhy: queue add: %s\n",
		        _("the queue is draining; the task waits for `gpuwhy queue resume`"));
	else if (!handed && !a.no_worker && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	/* A worker that took the task starts it in the pass after its answer. */
	if (!handed)
		queue_worker_wake(dir, QUEUE_POKE_ADD);
	return GW_EXIT_OK;
}
