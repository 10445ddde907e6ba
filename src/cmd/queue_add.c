/* queue_add.c - `gpuwhy queue add`: one task from a command line, or many from a file. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/opt.h"
#include "cmd/queue_cmd.h"
#include "gpu/gpu.h"
#include "queue/queue.h"
#include "util/err.h"

extern char **environ;

static char *capture_env(void)
{
	json_t *o = json_object();
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			continue;
		char *k = strndup(*e, (size_t)(eq - *e));
		json_t *v = json_string(eq + 1);
		if (v && json_object_set_new(o, k, v) != 0)
			v = NULL;
		if (!v)
			fprintf(stderr,
			        "gpuwhy: queue add: environment variable %s is not UTF-8; the "
			        "task will not see it\n",
			        k);
		free(k);
	}
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 >= cap) {
			if (cap >= (64u << 20))
				break;
			cap *= 2;
			buf = queue_xrealloc(buf, cap);
		}
	}
	bool err = ferror(f);
	if (f != stdin)
		fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static bool text_file(const char *path, const char *text, size_t len)
{
	const char *dot = strrchr(path, '.');
	if (dot && !strcmp(dot, ".txt"))
		return true;
	if (dot && (!strcmp(dot, ".json") || !strcmp(dot, ".jsonl") || !strcmp(dot, ".ndjson")))
		return false;
	for (size_t i = 0; i < len; i++)
		if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
			return text[i] != '{' && text[i] != '[';
	return true;
}

#define QCMD_STR2(x) #x
#define QCMD_STR(x) QCMD_STR2(x)

static int set_name(const opt_def *o, const char *v, void *ctx)
{
	char err[2 * PATH_MAX + 64];
	bool cwd = o->shrt != 'n';
	if (cwd ? queue_spec_set_cwd(ctx, v, err, sizeof err)
	        : queue_spec_set_name(ctx, v, err, sizeof err))
		return gw_error(GW_EXIT_USAGE, cwd ? "--cwd" : "--name", NULL, "%s", err);
	return 0;
}

static int set_after(const opt_def *o, const char *v, void *ctx)
{
	(void)o;
	return qcmd_parse_id(v, &((queue_spec *)ctx)->after_id) ? 0 : qcmd_bad_id(v);
}

static const char *const backends[] = {"local", "slurm", NULL};

int qcmd_add(const char *dir, int argc, char **argv, const gw_global *g)
{
	(void)g;
	queue_spec tmpl;
	queue_spec_init(&tmpl);
	const char *from = NULL;
	bool no_worker = false;
	int backend = -1;
	opt_list sargs = {0};
	const opt_def opts[] = {
	    {.name = "gpus",
	     .shrt = 'g',
	     .kind = OPT_INT,
	     .arg = "N",
	     .target = &tmpl.gpus,
	     .min = 0,
	     .max = GPU_MAX,
	     .why = "'%s' is not a GPU count from 0 to " QCMD_STR(GPU_MAX),
	     .help = "GPUs the task gets (default 1; 0 = CPU only, sees no GPU)"},
	    {.name = "mem",
	     .shrt = 'm',
	     .kind = OPT_SIZE,
	     .arg = "SIZE",
	     .target = &tmpl.mem_mib,
	     .unit = 1 << 20,
	     .bare = 1 << 20,
	     .why = "'%s' is not a memory size",
	     .hint = "e.g. 12G, 800M, 1.5GiB, or MiB as a plain number",
	     .help = "GPU memory it needs on each GPU (12G, 800M; a bare number is MiB); "
	             "placement counts it as taken from the start"},
	    {.name = "per-gpu",
	     .kind = OPT_INT,
	     .arg = "K",
	     .target = &tmpl.per_gpu,
	     .min = 1,
	     .max = 1024,
	     .help = "share each of its GPUs with at most K queue tasks in all (default: "
	             "`config per-gpu`, 1)"},
	    {.name = "retries",
	     .shrt = 'r',
	     .kind = OPT_INT,
	     .arg = "N",
	     .target = &tmpl.retries,
	     .min = 0,
	     .max = 1000,
	     .help = "retry a failed attempt up to N times (default 0)"},
	    {.name = "retry-delay",
	     .kind = OPT_DURATION,
	     .arg = "D",
	     .target = &tmpl.retry_delay_ms,
	     .unit = 1000000,
	     .help = "cooldown before a retry (default 30s)"},
	    {.name = "timeout",
	     .shrt = 't',
	     .kind = OPT_DURATION,
	     .arg = "D",
	     .target = &tmpl.timeout_ms,
	     .unit = 1000000,
	     .help = "time limit per attempt (2h, 90s); SIGTERM, then SIGKILL"},
	    {.name = "name",
	     .shrt = 'n',
	     .kind = OPT_CALL,
	     .arg = "NAME",
	     .call = set_name,
	     .help = "a name for listings"},
	    {.name = "after",
	     .kind = OPT_CALL,
	     .arg = "ID",
	     .call = set_after,
	     .help = "start only after task ID ended done (fail if it did not)"},
	    {.name = "cwd",
	     .kind = OPT_CALL,
	     .arg = "DIR",
	     .call = set_name,
	     .help = "working directory (default: the current one)"},
	    {.name = "allow-foreign",
	     .kind = OPT_FLAG,
	     .target = &tmpl.allow_foreign,
	     .help = "may share GPUs with processes the queue did not start"},
	    {.name = "backend",
	     .kind = OPT_ENUM,
	     .arg = "B",
	     .target = &backend,
	     .choices = backends,
	     .why = "unknown back end '%s'",
	     .help = "local (default: `config backend`) or slurm"},
	    {.name = "host-mem",
	     .kind = OPT_SIZE,
	     .arg = "SIZE",
	     .target = &tmpl.host_mem_mib,
	     .unit = 1 << 20,
	     .bare = 1 << 20,
	     .why = "'%s' is not a memory size",
	     .hint = "e.g. 12G, 800M, 1.5GiB, or MiB as a plain number",
	     .help = "host memory for Slurm (--mem of sbatch)"},
	    {.name = "slurm-arg",
	     .kind = OPT_LIST,
	     .arg = "ARG",
	     .target = &sargs,
	     .help = "one more sbatch argument (repeatable), e.g. -p gpu"},
	    {.name = "from",
	     .shrt = 'f',
	     .kind = OPT_STRING,
	     .arg = "FILE",
	     .target = &from,
	     .help = "tasks from FILE (- = stdin): text, one shell command a line; or JSON "
	             "Lines / a JSON array of objects with the fields cmd, name, gpus, mem, "
	             "per_gpu, retries, retry_delay, timeout, after, cwd, env, allow_foreign, "
	             "backend, host_mem, slurm_args, input, log_file; or one object with "
	             "input_dir (one task per file, {input} {output} {stem} in cmd), "
	             "output_dir, max_retries, retry_interval_seconds, log_file"},
	    {.name = "no-worker",
	     .kind = OPT_FLAG,
	     .target = &no_worker,
	     .help = "do not start a worker if none runs"},
	    {0}};
	const opt_cmd oc = {
	    .name = "queue add",
	    .usage = "queue add [OPTIONS] -- CMD [ARGS...]\nqueue add [OPTIONS] --from FILE",
	    .opts = opts,
	    .more = "The task runs with the environment of this shell, CUDA_VISIBLE_DEVICES set "
	            "to its\nGPUs' UUIDs (or indices, `config visible index`), "
	            "CUDA_DEVICE_ORDER=PCI_BUS_ID,\nGPUWHY_TASK_ID, GPUWHY_ATTEMPT and "
	            "GPUWHY_ATTEMPT_TOKEN. Prints the task ids.",
	    .max_args = -1,
	    .stop_at_arg = true,
	    .ctx = &tmpl};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc) {
		queue_spec_free(&tmpl);
		opt_list_free(&sargs);
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	}
	bool backend_set = backend >= 0;
	if (backend_set)
		tmpl.backend = backend ? QB_SLURM : QB_LOCAL;
	json_t *sarr = json_array();
	for (int i = 0; i < sargs.n; i++)
		json_array_append_new(sarr, json_string(sargs.v[i]));
	opt_list_free(&sargs);
	int ncmd = argc - first;
	if (!rc && !from && ncmd == 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add",
		              "gpuwhy queue add -- CMD ARGS, or --from FILE", "no command given");
	if (!rc && from && ncmd > 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add", NULL,
		              "give either a command or --from FILE, not both");
	if (rc) {
		queue_spec_free(&tmpl);
		json_decref(sarr);
		return rc;
	}
	if (!tmpl.cwd) {
		char cwd[PATH_MAX];
		tmpl.cwd = strdup(getcwd(cwd, sizeof cwd) ? cwd : "/");
	}
	if (json_array_size(sarr))
		tmpl.slurm_args = json_dumps(sarr, JSON_COMPACT);
	json_decref(sarr);
	tmpl.env_json = capture_env();

	queue_store *st;
	if ((rc = queue_store_open(dir, &st))) {
		queue_spec_free(&tmpl);
		return rc;
	}
	if (!backend_set) {
		char b[16];
		queue_store_config_get(st, "backend", b, sizeof b);
		tmpl.backend = !strcmp(b, "slurm") ? QB_SLURM : QB_LOCAL;
	}
	queue_spec *specs = NULL;
	int n = 0;
	if (from) {
		size_t len;
		char *text = read_all(from, &len);
		if (!text) {
			rc =
			    gw_error(GW_EXIT_USAGE, from, NULL, "cannot read: %s", strerror(errno));
		} else {
			char err[512];
			n = queue_spec_parse_file(text, len, text_file(from, text, len), &tmpl,
			                          &specs, err, sizeof err);
			if (n < 0)
				rc = gw_error(GW_EXIT_USAGE, from, "see gpuwhy queue add --help",
				              "%s", err);
			free(text);
		}
	} else {
		char err[PATH_MAX + 80];
		specs = calloc(1, sizeof *specs);
		queue_spec_copy(&specs[0], &tmpl);
		queue_spec_set_argv(&specs[0], argv + first, ncmd);
		n = 1;
		if (queue_spec_validate(&specs[0], err, sizeof err))
			rc = gw_error(GW_EXIT_USAGE, "queue add", "see gpuwhy queue add --help",
			              "%s", err);
	}
	int64_t *ids = NULL;
	if (!rc) {
		ids = calloc(n > 0 ? (size_t)n : 1, sizeof *ids);
		int arc = queue_store_add(st, specs, n, ids);
		if (arc)
			rc = arc > 0 ? arc : GW_EXIT_ENV;
	}
	if (!rc)
		for (int i = 0; i < n; i++)
			printf("%lld\n", (long long)ids[i]);
	fflush(stdout);
	bool draining = !rc && queue_store_config_int(st, "draining") != 0;
	queue_store_close(st);
	for (int i = 0; i < n && specs; i++)
		queue_spec_free(&specs[i]);
	free(specs);
	free(ids);
	queue_spec_free(&tmpl);
	if (rc)
		return rc;
	if (draining)
		fprintf(stderr, "gpuwhy: queue add: the queue is draining; the task waits for "
		                "`gpuwhy queue resume`\n");
	else if (!no_worker && queue_worker_ensure(dir, qcmd_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_wake(dir, QUEUE_POKE_ADD);
	return GW_EXIT_OK;
}
