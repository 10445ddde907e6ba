/* queue.c - `gpuwhy queue`: GPU-aware batch runner (the front end; the work is in src/queue/). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "queue/queue.h"
#include "util/selfexe.h"
#include "util/termsafe.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

extern char **environ;

static void usage(FILE *out)
{
	fputs("usage: gpuwhy queue [--queue DIR] SUBCOMMAND [OPTIONS]\n"
	      "\n"
	      "A GPU-aware batch queue: memory-aware placement, several tasks per GPU with a\n"
	      "cap, retries with a cooldown, out-of-memory recognition, a record per task,\n"
	      "state that survives restarts, and a Slurm back end.\n"
	      "\n"
	      "  add [OPTIONS] -- CMD [ARGS...]   queue a command; prints its task id\n"
	      "  add [OPTIONS] --from FILE        queue one task per line / JSON object of FILE\n"
	      "  ls [--json] [--state STATE]      list tasks\n"
	      "  show ID [--json] [--lines N]     command, state, attempts, GPUs, peaks, log tail\n"
	      "  log ID [-f] [--attempt N]        a task's output (-f: follow until it ends)\n"
	      "  wait [ID...] [--timeout D]       until the tasks end; exit 1 if one did not end "
	      "done\n"
	      "  cancel ID... | --all             cancel queued or running tasks\n"
	      "  retry ID...                      queue ended tasks again (with a fresh retry "
	      "budget)\n"
	      "  clean [--all]                    forget done tasks (--all: every ended task) and "
	      "logs\n"
	      "  pause | resume | drain           stop starting tasks / go on / finish and stop "
	      "worker\n"
	      "  drain --gpu LIST, resume --gpu LIST   take GPUs out of / back into placement\n"
	      "  gpus [--json]                    what the scheduler sees on each GPU\n"
	      "  config [KEY [VALUE]]             the queue's settings\n"
	      "  worker [--idle-exit D]           run the scheduler in the foreground\n"
	      "  stop                             stop the worker (running tasks go on)\n"
	      "\n"
	      "The queue lives in --queue DIR, else $GPUWHY_QUEUE, else\n"
	      "$XDG_STATE_HOME/gpuwhy/queue (~/.local/state/gpuwhy/queue). `gpuwhy queue add\n"
	      "--help` lists the task options. Exit codes: 0 ok, 1 a waited-for task did not end\n"
	      "done, 2 usage error, 3 environment or I/O error.\n",
	      out);
}

static void add_usage(FILE *out)
{
	fputs(
	    "usage: gpuwhy queue add [OPTIONS] -- CMD [ARGS...]\n"
	    "       gpuwhy queue add [OPTIONS] --from FILE\n"
	    "\n"
	    "  -g, --gpus N          GPUs the task gets (default 1; 0 = CPU only, sees no GPU)\n"
	    "  -m, --mem SIZE        GPU memory it needs on each GPU (12G, 800M; a bare number\n"
	    "                        is MiB); placement counts it as taken from the start\n"
	    "      --per-gpu K       share each of its GPUs with at most K queue tasks in all\n"
	    "                        (default: `config per-gpu`, 1)\n"
	    "  -r, --retries N       retry a failed attempt up to N times (default 0)\n"
	    "      --retry-delay D   cooldown before a retry (default 30s)\n"
	    "  -t, --timeout D       time limit per attempt (2h, 90s); SIGTERM, then SIGKILL\n"
	    "  -n, --name NAME       a name for listings\n"
	    "      --after ID        start only after task ID ended done (fail if it did not)\n"
	    "      --cwd DIR         working directory (default: the current one)\n"
	    "      --allow-foreign   may share GPUs with processes the queue did not start\n"
	    "      --backend B       local (default: `config backend`) or slurm\n"
	    "      --host-mem SIZE   host memory for Slurm (--mem of sbatch)\n"
	    "      --slurm-arg ARG   one more sbatch argument (repeatable), e.g. -p gpu\n"
	    "  -f, --from FILE       tasks from FILE (- = stdin): text, one shell command a line;\n"
	    "                        or JSON Lines / a JSON array of objects with the fields cmd,\n"
	    "                        name, gpus, mem, per_gpu, retries, retry_delay, timeout,\n"
	    "                        after, cwd, env, allow_foreign, backend, host_mem,\n"
	    "                        slurm_args, input, log_file; or one object with input_dir\n"
	    "                        (one task per file, {input} {output} {stem} in cmd),\n"
	    "                        output_dir, max_retries, retry_interval_seconds, log_file\n"
	    "      --no-worker       do not start a worker if none runs\n"
	    "\n"
	    "The task runs with the environment of this shell, CUDA_VISIBLE_DEVICES set to its\n"
	    "GPUs' UUIDs (or indices, `config visible index`), CUDA_DEVICE_ORDER=PCI_BUS_ID,\n"
	    "GPUWHY_TASK_ID, GPUWHY_ATTEMPT and GPUWHY_ATTEMPT_TOKEN. Prints the task ids.\n",
	    out);
}

/* ---- small helpers ---- */

static void human_mib(int64_t mib, char *out, size_t len)
{
	if (mib < 0)
		snprintf(out, len, "-");
	else if (mib >= 1024)
		snprintf(out, len, "%.1fG", (double)mib / 1024.0);
	else
		snprintf(out, len, "%lldM", (long long)mib);
}

static void human_kib(int64_t kib, char *out, size_t len)
{
	human_mib(kib < 0 ? -1 : (kib + 1023) / 1024, out, len);
}

static void human_dur(double s, char *out, size_t len)
{
	if (s < 0)
		snprintf(out, len, "-");
	else if (s < 60)
		snprintf(out, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(out, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(out, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void local_time(double t, char *out, size_t len)
{
	if (t <= 0) {
		snprintf(out, len, "-");
		return;
	}
	time_t s = (time_t)t;
	struct tm tm;
	localtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
}

static bool parse_id(const char *s, int64_t *id)
{
	long long x;
	if (!gw_parse_int(s, 1, INT64_MAX, &x))
		return false;
	*id = x;
	return true;
}

static int bad_id(const char *s)
{
	return gw_error(GW_EXIT_USAGE, s, "task ids are the numbers `gpuwhy queue ls` shows",
	                "not a task id");
}

static int open_store(const char *dir, queue_store **st)
{
	return queue_store_open(dir, st);
}

/* ---- add ---- */

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
			buf = gw_xrealloc(buf, cap);
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

static int parse_mib(const char *opt, const char *v, int64_t *out)
{
	long long x;
	uint64_t bytes;
	if (gw_parse_int(v, 0, INT64_MAX / 2, &x)) {
		*out = x; /* a bare number is MiB: bytes would never be meant */
		return 0;
	}
	if (gw_parse_size_bytes(v, &bytes)) {
		*out = (int64_t)((bytes + (1u << 20) - 1) >> 20);
		return 0;
	}
	return gw_error(GW_EXIT_USAGE, opt, "e.g. 12G, 800M, 1.5GiB, or MiB as a plain number",
	                "'%s' is not a memory size", v);
}

static int parse_dur_ms(const char *opt, const char *v, int64_t *out)
{
	int64_t ns;
	if (!gw_parse_duration_ns(v, 1000000000LL, &ns))
		return gw_error(GW_EXIT_USAGE, opt, "e.g. 30s, 10m, 2h (a bare number is seconds)",
		                "'%s' is not a duration", v);
	*out = ns / 1000000;
	return 0;
}

static int q_add(const char *dir, int argc, char **argv)
{
	static const struct option opts[] = {{"gpus", required_argument, NULL, 'g'},
	                                     {"mem", required_argument, NULL, 'm'},
	                                     {"per-gpu", required_argument, NULL, 'K'},
	                                     {"retries", required_argument, NULL, 'r'},
	                                     {"retry-delay", required_argument, NULL, 'D'},
	                                     {"timeout", required_argument, NULL, 't'},
	                                     {"name", required_argument, NULL, 'n'},
	                                     {"after", required_argument, NULL, 'A'},
	                                     {"cwd", required_argument, NULL, 'C'},
	                                     {"allow-foreign", no_argument, NULL, 'F'},
	                                     {"backend", required_argument, NULL, 'B'},
	                                     {"host-mem", required_argument, NULL, 'H'},
	                                     {"slurm-arg", required_argument, NULL, 'S'},
	                                     {"from", required_argument, NULL, 'f'},
	                                     {"no-worker", no_argument, NULL, 'W'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	queue_spec tmpl;
	queue_spec_init(&tmpl);
	const char *from = NULL;
	bool no_worker = false, backend_set = false;
	json_t *sargs = json_array();
	int rc = 0, c;
	long long x;
	while (!rc && (c = getopt_long(argc, argv, "+g:m:r:t:n:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (!gw_parse_int(optarg, 0, GPU_MAX, &x))
				rc = gw_error(GW_EXIT_USAGE, "--gpus", NULL,
				              "'%s' is not a GPU count from 0 to %d", optarg,
				              GPU_MAX);
			tmpl.gpus = (int)x;
			break;
		case 'm':
			rc = parse_mib("--mem", optarg, &tmpl.mem_mib);
			break;
		case 'H':
			rc = parse_mib("--host-mem", optarg, &tmpl.host_mem_mib);
			break;
		case 'K':
			if (!gw_parse_int(optarg, 1, 1024, &x))
				rc = gw_error(GW_EXIT_USAGE, "--per-gpu", NULL,
				              "'%s' is not an integer from 1 to 1024", optarg);
			tmpl.per_gpu = (int)x;
			break;
		case 'r':
			if (!gw_parse_int(optarg, 0, 1000, &x))
				rc = gw_error(GW_EXIT_USAGE, "--retries", NULL,
				              "'%s' is not an integer from 0 to 1000", optarg);
			tmpl.retries = (int)x;
			break;
		case 'D':
			rc = parse_dur_ms("--retry-delay", optarg, &tmpl.retry_delay_ms);
			break;
		case 't':
			rc = parse_dur_ms("--timeout", optarg, &tmpl.timeout_ms);
			break;
		case 'n':
		case 'C': {
			char err[2 * PATH_MAX + 64];
			if ((c == 'n' ? queue_spec_set_name(&tmpl, optarg, err, sizeof err)
			              : queue_spec_set_cwd(&tmpl, optarg, err, sizeof err)))
				rc = gw_error(GW_EXIT_USAGE, c == 'n' ? "--name" : "--cwd", NULL,
				              "%s", err);
			break;
		}
		case 'A':
			if (!parse_id(optarg, &tmpl.after_id))
				rc = bad_id(optarg);
			break;
		case 'F':
			tmpl.allow_foreign = true;
			break;
		case 'B':
			backend_set = true;
			if (!strcmp(optarg, "local"))
				tmpl.backend = QB_LOCAL;
			else if (!strcmp(optarg, "slurm"))
				tmpl.backend = QB_SLURM;
			else
				rc = gw_error(GW_EXIT_USAGE, "--backend", "use local or slurm",
				              "unknown back end '%s'", optarg);
			break;
		case 'S':
			json_array_append_new(sargs, json_string(optarg));
			break;
		case 'f':
			from = optarg;
			break;
		case 'W':
			no_worker = true;
			break;
		case 'h':
			add_usage(stdout);
			queue_spec_free(&tmpl);
			json_decref(sargs);
			return GW_EXIT_OK;
		default:
			rc = GW_EXIT_USAGE;
			break;
		}
	}
	int ncmd = argc - optind;
	if (!rc && !from && ncmd == 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add",
		              "gpuwhy queue add -- CMD ARGS, or --from FILE", "no command given");
	if (!rc && from && ncmd > 0)
		rc = gw_error(GW_EXIT_USAGE, "queue add", NULL,
		              "give either a command or --from FILE, not both");
	if (rc) {
		queue_spec_free(&tmpl);
		json_decref(sargs);
		return rc;
	}
	if (!tmpl.cwd) {
		char cwd[PATH_MAX];
		tmpl.cwd = strdup(getcwd(cwd, sizeof cwd) ? cwd : "/");
	}
	if (json_array_size(sargs))
		tmpl.slurm_args = json_dumps(sargs, JSON_COMPACT);
	json_decref(sargs);
	tmpl.env_json = capture_env();

	queue_store *st;
	if ((rc = open_store(dir, &st))) {
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
		queue_spec_set_argv(&specs[0], argv + optind, ncmd);
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
	else if (!no_worker && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_wake(dir, QUEUE_POKE_ADD);
	return GW_EXIT_OK;
}

/* ---- ls / show ---- */

/* JSON values: absent is null, never 0. Times are Unix seconds with microseconds. */
static json_t *j_opt_int(bool ok, long long v)
{
	return ok ? json_integer(v) : json_null();
}

static json_t *j_time(double t)
{
	return t > 0 ? json_real(floor(t * 1e6 + 0.5) / 1e6) : json_null();
}

static json_t *j_str(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;
	return v ? v : json_null();
}

static json_t *task_json(const queue_task *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "name", j_str(t->spec.name));
	json_t *av = json_array();
	for (int i = 0; i < t->spec.argc; i++)
		json_array_append_new(av, j_str(t->spec.argv[i]));
	json_object_set_new(o, "argv", av);
	json_object_set_new(o, "cwd", j_str(t->spec.cwd));
	json_object_set_new(o, "state", json_string(queue_state_name(t->state)));
	json_object_set_new(o, "backend", json_string(queue_backend_name(t->spec.backend)));
	json_object_set_new(o, "gpus", json_integer(t->spec.gpus));
	json_object_set_new(o, "mem_mib", j_opt_int(t->spec.mem_mib >= 0, t->spec.mem_mib));
	json_object_set_new(o, "mem_hint_mib", j_opt_int(t->mem_hint_mib >= 0, t->mem_hint_mib));
	json_object_set_new(o, "per_gpu", j_opt_int(t->spec.per_gpu > 0, t->spec.per_gpu));
	json_object_set_new(o, "per_gpu_hint", j_opt_int(t->per_gpu_hint > 0, t->per_gpu_hint));
	json_object_set_new(o, "retries", json_integer(t->spec.retries));
	json_object_set_new(o, "retry_delay_s", json_real((double)t->spec.retry_delay_ms / 1000.0));
	json_object_set_new(o, "timeout_s",
	                    t->spec.timeout_ms > 0 ? json_real((double)t->spec.timeout_ms / 1000.0)
	                                           : json_null());
	json_object_set_new(o, "after", j_opt_int(t->spec.after_id > 0, t->spec.after_id));
	json_object_set_new(o, "attempts", json_integer(t->attempts));
	json_object_set_new(o, "oom_retries", json_integer(t->oom_count));
	json_object_set_new(o, "gpus_used", t->gpus_used[0] ? j_str(t->gpus_used) : json_null());
	json_object_set_new(o, "submitted", j_time(t->submitted));
	json_object_set_new(o, "started", j_time(t->started));
	json_object_set_new(o, "ended", j_time(t->ended));
	json_object_set_new(o, "not_before", j_time(t->state == QS_QUEUED ? t->not_before : 0));
	json_object_set_new(o, "exit_code", j_opt_int(t->exit_ok, t->exit_code));
	json_object_set_new(o, "signal", j_opt_int(t->signal != 0, t->signal));
	json_object_set_new(o, "peak_gpu_mib", j_opt_int(t->peak_gpu_mib >= 0, t->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", j_opt_int(t->peak_rss_kib >= 0, t->peak_rss_kib));
	json_object_set_new(o, "error", t->error[0] ? j_str(t->error) : json_null());
	json_object_set_new(o, "waiting", t->wait_reason[0] ? j_str(t->wait_reason) : json_null());
	json_object_set_new(o, "cancel_requested", json_boolean(t->cancel_requested));
	json_object_set_new(o, "input", j_str(t->spec.input));
	json_object_set_new(o, "output", j_str(t->spec.output));
	return o;
}

static void print_json(json_t *v, bool pretty)
{
	json_dumpf(v, stdout, JSON_REAL_PRECISION(16) | (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	putchar('\n');
	json_decref(v);
}

static void task_command(const queue_task *t, char *out, size_t len)
{
	/* sh -c LINE shows as the line: that is what the user wrote. */
	if (t->spec.argc == 3 && !strcmp(t->spec.argv[0], "sh") && !strcmp(t->spec.argv[1], "-c")) {
		snprintf(out, len, "%s", t->spec.argv[2]);
		return;
	}
	char *s = queue_argv_to_shell(t->spec.argv, t->spec.argc);
	snprintf(out, len, "%s", s);
	free(s);
}

static void task_info(const queue_task *t, char *out, size_t len)
{
	if (t->state == QS_QUEUED)
		snprintf(out, len, "%s", t->wait_reason[0] ? t->wait_reason : "");
	else if (t->state == QS_DONE)
		snprintf(out, len, "exit 0");
	else if (t->error[0])
		snprintf(out, len, "%s", t->error);
	else if (t->signal)
		snprintf(out, len, "signal %d", t->signal);
	else if (t->exit_ok && queue_state_final(t->state))
		snprintf(out, len, "exit %d", t->exit_code);
	else
		out[0] = '\0';
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static int q_ls(const char *dir, int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"state", required_argument, NULL, 's'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	bool json = false;
	int state = -1, c;
	while ((c = getopt_long(argc, argv, "js:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			state = queue_state_parse(optarg);
			if (state < 0)
				return gw_error(
				    GW_EXIT_USAGE, "--state",
				    "queued, submitted, running, done, failed, timeout, "
				    "cancelled or lost",
				    "unknown state '%s'", optarg);
			break;
		case 'h':
			puts("usage: gpuwhy queue ls [--json] [--state STATE]");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], NULL, "unexpected argument");
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	queue_task *t;
	int n;
	if (queue_store_list(st, state, &t, &n) != 0) {
		queue_store_close(st);
		return GW_EXIT_ENV;
	}
	if (json) {
		json_t *arr = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(arr, task_json(&t[i]));
		print_json(arr, false);
	} else {
		printf("%5s  %-9s %-5s %-7s %-6s %-6s %-7s %-32s %s\n", "ID", "STATE", "TRY", "GPU",
		       "MEM", "PEAK", "TIME", "COMMAND", "INFO");
		double now = gw_wall_s();
		for (int i = 0; i < n; i++) {
			const queue_task *x = &t[i];
			char try[16], gpu[16], mem[16], peak[16], tm[16], cmd[64], info[600],
			    label[160], safe_cmd[32], safe_info[GW_TERM_SAFE_LEN(600)];
			/* After `queue retry` the budget starts again from the attempts so far. */
			snprintf(try, sizeof try, "%d/%d", x->attempts,
			         x->budget_from + x->spec.retries + 1);
			if (x->gpus_used[0] && x->state != QS_QUEUED)
				snprintf(gpu, sizeof gpu, "%.7s", x->gpus_used);
			else
				snprintf(gpu, sizeof gpu, x->spec.gpus ? "%dx" : "cpu",
				         x->spec.gpus);
			int64_t m =
			    x->mem_hint_mib > x->spec.mem_mib ? x->mem_hint_mib : x->spec.mem_mib;
			human_mib(m, mem, sizeof mem);
			human_mib(x->peak_gpu_mib, peak, sizeof peak);
			double dur = x->started <= 0               ? -1
			             : x->ended > x->started       ? x->ended - x->started
			             : queue_state_final(x->state) ? -1
			                                           : now - x->started;
			human_dur(dur, tm, sizeof tm);
			task_command(x, label, sizeof label);
			if (x->spec.name[0])
				snprintf(cmd, sizeof cmd, "%.31s", x->spec.name);
			else
				snprintf(cmd, sizeof cmd, "%.31s", label);
			task_info(x, info, sizeof info);
			/* Names, commands and errors come from the task: never raw to a terminal.
			 */
			gw_term_safe(cmd, safe_cmd, sizeof safe_cmd);
			gw_term_safe(info, safe_info, sizeof safe_info);
			printf("%5lld  %-9s %-5s %-7s %-6s %-6s %-7s %-32s %s\n", (long long)x->id,
			       queue_state_name(x->state), try, gpu, mem, peak, tm, safe_cmd,
			       safe_info);
		}
	}
	queue_tasks_free(t, n);
	queue_store_close(st);
	return GW_EXIT_OK;
}

/* Last n lines of text (pointer into it). */
static const char *last_lines(const char *text, size_t len, int n)
{
	if (len == 0)
		return text;
	const char *p = text + len;
	if (p[-1] == '\n')
		p--;
	int seen = 0;
	while (p > text) {
		if (p[-1] == '\n' && ++seen == n)
			break;
		p--;
	}
	return p;
}

static json_t *attempt_json(const queue_attempt *a)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer(a->n));
	json_object_set_new(o, "token", j_str(a->token));
	json_object_set_new(o, "outcome",
	                    a->outcome != QO_NONE ? json_string(queue_outcome_name(a->outcome))
	                                          : json_null());
	json_object_set_new(o, "backend", json_string(queue_backend_name(a->backend)));
	json_object_set_new(o, "slurm_job", a->slurm_job[0] ? j_str(a->slurm_job) : json_null());
	json_object_set_new(o, "slurm_state",
	                    a->slurm_state[0] ? j_str(a->slurm_state) : json_null());
	json_object_set_new(o, "gpus", a->gpu_idx[0] ? j_str(a->gpu_idx) : json_null());
	json_object_set_new(o, "gpu_uuids", a->gpu_uuids[0] ? j_str(a->gpu_uuids) : json_null());
	json_object_set_new(o, "reserved_mib", j_opt_int(a->reserved_mib >= 0, a->reserved_mib));
	json_object_set_new(o, "per_gpu", j_opt_int(a->per_gpu > 0, a->per_gpu));
	json_object_set_new(o, "started", j_time(a->started));
	json_object_set_new(o, "ended", j_time(a->ended));
	json_object_set_new(o, "exit_code", j_opt_int(a->exit_ok, a->exit_code));
	json_object_set_new(o, "signal", j_opt_int(a->signal != 0, a->signal));
	json_object_set_new(o, "oom",
	                    a->oom == QOOM_GPU    ? json_string("gpu")
	                    : a->oom == QOOM_HOST ? json_string("host")
	                                          : json_null());
	json_object_set_new(o, "peak_gpu_mib", j_opt_int(a->peak_gpu_mib >= 0, a->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", j_opt_int(a->peak_rss_kib >= 0, a->peak_rss_kib));
	json_object_set_new(o, "runs", json_integer(a->runs));
	json_object_set_new(o, "shim_pid", j_opt_int(a->shim_pid > 0, a->shim_pid));
	json_object_set_new(o, "error", a->error[0] ? j_str(a->error) : json_null());
	return o;
}

static int q_show(const char *dir, int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"lines", required_argument, NULL, 'l'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	bool json = false;
	long long lines = 10;
	int c;
	while ((c = getopt_long(argc, argv, "jl:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'l':
			if (!gw_parse_int(optarg, 0, 100000, &lines))
				return gw_error(GW_EXIT_USAGE, "--lines", NULL,
				                "'%s' is not a count", optarg);
			break;
		case 'h':
			puts("usage: gpuwhy queue show ID [--json] [--lines N]");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "queue show", "gpuwhy queue show ID",
		                "give one task id");
	int64_t id;
	if (!parse_id(argv[optind], &id))
		return bad_id(argv[optind]);
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	queue_task t;
	rc = queue_store_get(st, id, &t);
	if (rc != 0) {
		queue_store_close(st);
		return rc > 0 ? gw_error(GW_EXIT_USAGE, argv[optind], NULL, "no such task")
		              : GW_EXIT_ENV;
	}
	queue_attempt *at = NULL;
	int na = 0;
	queue_store_attempts(st, id, &at, &na);
	char logp[PATH_MAX];
	queue_log_path(dir, id, logp, sizeof logp);
	size_t len = 0;
	char *tail = queue_read_tail(logp, 0, 65536, &len);
	const char *from = tail ? last_lines(tail, len, (int)lines) : "";
	if (lines == 0)
		from = tail ? tail + len : "";
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "task", task_json(&t));
		json_t *arr = json_array();
		for (int i = 0; i < na; i++)
			json_array_append_new(arr, attempt_json(&at[i]));
		json_object_set_new(o, "attempts", arr);
		json_object_set_new(o, "log", j_str(logp));
		/* Logs are bytes: a tail that is not UTF-8 is shown as null rather than mangled. */
		json_object_set_new(o, "log_tail", j_str(from));
		print_json(o, true);
	} else {
		char cmd[4096], a[64], b[64], m1[16], m2[16];
		task_command(&t, cmd, sizeof cmd);
		/* Everything the task brought is escaped for the terminal. */
		char safe[GW_TERM_SAFE_LEN(4096)];
		printf("task %lld%s%s\n", (long long)t.id, t.spec.name[0] ? "  " : "",
		       gw_term_safe(t.spec.name, safe, sizeof safe));
		printf("  command    %s\n", gw_term_safe(cmd, safe, sizeof safe));
		printf("  cwd        %s\n",
		       gw_term_safe(t.spec.cwd ? t.spec.cwd : "-", safe, sizeof safe));
		printf("  state      %s", queue_state_name(t.state));
		printf(" after %d attempt%s (retries %d, delay %.3gs)%s\n", t.attempts,
		       t.attempts == 1 ? "" : "s", t.spec.retries,
		       (double)t.spec.retry_delay_ms / 1000.0,
		       t.cancel_requested && !queue_state_final(t.state) ? ", cancel requested"
		                                                         : "");
		human_mib(t.spec.mem_mib, m1, sizeof m1);
		if (t.spec.gpus == 0)
			printf("  request    %s, no GPU", queue_backend_name(t.spec.backend));
		else
			printf("  request    %s, %d GPU%s, memory %s per GPU",
			       queue_backend_name(t.spec.backend), t.spec.gpus,
			       t.spec.gpus == 1 ? "" : "s",
			       t.spec.mem_mib >= 0 ? m1 : "not declared");
		if (t.spec.per_gpu)
			printf(", at most %d per GPU", t.spec.per_gpu);
		if (t.spec.timeout_ms)
			printf(", timeout %.3gs", (double)t.spec.timeout_ms / 1000.0);
		if (t.spec.after_id)
			printf(", after task %lld", (long long)t.spec.after_id);
		putchar('\n');
		if (t.mem_hint_mib >= 0 || t.per_gpu_hint > 0) {
			human_mib(t.mem_hint_mib, m1, sizeof m1);
			printf("  after OOM  reserve %s, at most %d per GPU (%d OOM retr%s)\n", m1,
			       t.per_gpu_hint, t.oom_count, t.oom_count == 1 ? "y" : "ies");
		}
		if (t.spec.input || t.spec.output) {
			printf("  input      %s\n",
			       gw_term_safe(t.spec.input ? t.spec.input : "-", safe, sizeof safe));
			printf(
			    "  output     %s\n",
			    gw_term_safe(t.spec.output ? t.spec.output : "-", safe, sizeof safe));
		}
		local_time(t.submitted, a, sizeof a);
		printf("  submitted  %s\n", a);
		local_time(t.started, a, sizeof a);
		local_time(t.ended, b, sizeof b);
		printf("  started    %s\n  ended      %s\n", a, b);
		if (t.exit_ok || t.signal)
			printf("  exit       %s%d\n", t.signal ? "signal " : "",
			       t.signal ? t.signal : t.exit_code);
		human_mib(t.peak_gpu_mib, m1, sizeof m1);
		human_kib(t.peak_rss_kib, m2, sizeof m2);
		printf("  peaks      GPU memory %s (on one GPU), host RSS %s\n", m1, m2);
		printf("  GPUs       %s\n", t.gpus_used[0] ? t.gpus_used : "-");
		if (t.error[0])
			printf("  error      %s\n", gw_term_safe(t.error, safe, sizeof safe));
		if (t.state == QS_QUEUED && t.wait_reason[0])
			printf("  waiting    %s\n", gw_term_safe(t.wait_reason, safe, sizeof safe));
		if (na)
			printf("  attempts\n    %-3s %-19s %-9s %-7s %-9s %-10s %-6s %-6s %s\n",
			       "#", "START", "DURATION", "GPUS", "EXIT", "OUTCOME", "GPU", "RSS",
			       "NOTE");
		for (int i = 0; i < na; i++) {
			const queue_attempt *x = &at[i];
			char dur[16], ex[24], note[700];
			local_time(x->started, a, sizeof a);
			human_dur(x->ended > 0 ? x->ended - x->started : gw_wall_s() - x->started,
			          dur, sizeof dur);
			if (x->signal)
				snprintf(ex, sizeof ex, "sig %d", x->signal);
			else if (x->exit_ok)
				snprintf(ex, sizeof ex, "%d", x->exit_code);
			else
				snprintf(ex, sizeof ex, "-");
			human_mib(x->peak_gpu_mib, m1, sizeof m1);
			human_kib(x->peak_rss_kib, m2, sizeof m2);
			note[0] = '\0';
			if (x->slurm_job[0])
				snprintf(note, sizeof note, "slurm job %s %s; ", x->slurm_job,
				         x->slurm_state);
			size_t nl = strlen(note);
			snprintf(note + nl, sizeof note - nl, "%s", x->error);
			printf("    %-3d %-19s %-9s %-7s %-9s %-10s %-6s %-6s %s\n", x->n, a, dur,
			       x->gpu_idx[0] ? x->gpu_idx : "-", ex,
			       x->outcome != QO_NONE      ? queue_outcome_name(x->outcome)
			       : x->astate == QA_STARTING ? "starting"
			                                  : "running",
			       m1, m2, gw_term_safe(note, safe, sizeof safe));
		}
		if (lines > 0) {
			printf("  log        %s (last %lld lines)\n", logp, lines);
			const char *p = from;
			while (*p) {
				size_t l = strcspn(p, "\n");
				printf("    %.*s\n", (int)l, p);
				p += l;
				if (*p)
					p++;
			}
		}
	}
	free(tail);
	free(at);
	queue_task_free(&t);
	queue_store_close(st);
	return GW_EXIT_OK;
}

/* ---- log ---- */

static int q_log(const char *dir, int argc, char **argv)
{
	static const struct option opts[] = {{"follow", no_argument, NULL, 'f'},
	                                     {"attempt", required_argument, NULL, 'a'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	bool follow = false;
	long long attempt = 0;
	int c;
	while ((c = getopt_long(argc, argv, "fa:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			follow = true;
			break;
		case 'a':
			if (!gw_parse_int(optarg, 1, 1000000, &attempt))
				return gw_error(GW_EXIT_USAGE, "--attempt", NULL,
				                "'%s' is not an attempt number", optarg);
			break;
		case 'h':
			puts("usage: gpuwhy queue log ID [-f|--follow] [--attempt N]");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "queue log", "gpuwhy queue log ID",
		                "give one task id");
	int64_t id;
	if (!parse_id(argv[optind], &id))
		return bad_id(argv[optind]);
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	int state = queue_store_state_of(st, id);
	if (state < 0) {
		queue_store_close(st);
		return gw_error(GW_EXIT_USAGE, argv[optind], NULL, "no such task");
	}
	int64_t from = 0, until = -1;
	if (attempt > 0) {
		queue_attempt a, next;
		if (queue_store_attempt_get(st, id, (int)attempt, &a) != 0) {
			queue_store_close(st);
			return gw_error(GW_EXIT_USAGE, "--attempt", NULL,
			                "task %lld has no attempt %lld", (long long)id, attempt);
		}
		from = a.log_offset;
		if (queue_store_attempt_get(st, id, (int)attempt + 1, &next) == 0)
			until = next.log_offset;
	}
	char path[PATH_MAX];
	queue_log_path(dir, id, path, sizeof path);
	int64_t off = from;
	int quiet_rounds = 0;
	for (;;) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		bool grew = false;
		if (fd >= 0) {
			char buf[65536];
			for (;;) {
				size_t want = sizeof buf;
				if (until >= 0 && off + (int64_t)want > until)
					want = until > off ? (size_t)(until - off) : 0;
				if (want == 0)
					break;
				ssize_t n = pread(fd, buf, want, off);
				if (n <= 0)
					break;
				fwrite(buf, 1, (size_t)n, stdout);
				off += n;
				grew = true;
			}
			close(fd);
		}
		fflush(stdout);
		if (!follow || until >= 0)
			break;
		state = queue_store_state_of(st, id);
		quiet_rounds = grew ? 0 : quiet_rounds + 1;
		/* Stop once it ended and its last words are out. */
		if (state >= 0 && queue_state_final((queue_state)state) && quiet_rounds >= 2)
			break;
		gw_sleep_ns(200000000);
	}
	queue_store_close(st);
	return GW_EXIT_OK;
}

/* ---- wait ---- */

static int q_wait(const char *dir, int argc, char **argv)
{
	static const struct option opts[] = {{"timeout", required_argument, NULL, 't'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	int64_t timeout_ms = 0;
	int c, rc;
	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = parse_dur_ms("--timeout", optarg, &timeout_ms)))
				return rc;
			break;
		case 'h':
			puts("usage: gpuwhy queue wait [ID...] [--timeout D]\n"
			     "Waits until the tasks (all when none given) have ended. Exit 0 when "
			     "all\n"
			     "ended done, 1 when one ended otherwise or the timeout passed.");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	int nids = argc - optind;
	int64_t *ids = calloc((size_t)nids + 1, sizeof *ids);
	for (int i = 0; i < nids; i++)
		if (!parse_id(argv[optind + i], &ids[i])) {
			free(ids);
			return bad_id(argv[optind + i]);
		}
	queue_store *st;
	if ((rc = open_store(dir, &st))) {
		free(ids);
		return rc;
	}
	int64_t deadline = timeout_ms > 0 ? gw_mono_ns() + timeout_ms * 1000000 : 0;
	bool hinted = false;
	rc = GW_EXIT_OK;
	for (;;) {
		int pending = 0, bad = 0;
		if (nids > 0) {
			for (int i = 0; i < nids; i++) {
				int s = queue_store_state_of(st, ids[i]);
				if (s < 0) {
					rc = gw_error(GW_EXIT_USAGE, argv[optind + i], NULL,
					              "no such task");
					goto out;
				}
				pending += !queue_state_final((queue_state)s);
				bad += queue_state_final((queue_state)s) && s != QS_DONE;
			}
		} else {
			queue_task *t;
			int n;
			if (queue_store_list(st, -1, &t, &n) == 0) {
				for (int i = 0; i < n; i++) {
					pending += !queue_state_final(t[i].state);
					bad +=
					    queue_state_final(t[i].state) && t[i].state != QS_DONE;
				}
				queue_tasks_free(t, n);
			}
		}
		if (pending == 0) {
			rc = bad ? GW_EXIT_PROBLEMS : GW_EXIT_OK;
			if (bad)
				fprintf(stderr, "gpuwhy: queue wait: %d task%s did not end done\n",
				        bad, bad == 1 ? "" : "s");
			break;
		}
		if (deadline && gw_mono_ns() >= deadline) {
			fprintf(stderr, "gpuwhy: queue wait: %d task%s still not ended\n", pending,
			        pending == 1 ? "" : "s");
			rc = GW_EXIT_PROBLEMS;
			break;
		}
		if (!hinted && queue_worker_pid(dir) == 0) {
			fprintf(stderr,
			        "gpuwhy: queue wait: no worker runs for %s (start one with "
			        "gpuwhy queue worker); waiting anyway\n",
			        dir);
			hinted = true;
		}
		gw_sleep_ns(200000000);
	}
out:
	free(ids);
	queue_store_close(st);
	return rc;
}

/* ---- cancel / retry / clean ---- */

static int q_cancel(const char *dir, int argc, char **argv)
{
	bool all = false;
	int first = 1;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: gpuwhy queue cancel ID... | --all\n"
		     "A queued task is cancelled at once; a running one gets SIGTERM to its "
		     "process\n"
		     "group, then SIGKILL after `config kill-grace`; a Slurm job is scancel'ed.");
		return GW_EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--all")) {
		all = true;
		first = 2;
	}
	if (!all && argc < 2)
		return gw_error(GW_EXIT_USAGE, "queue cancel", "gpuwhy queue cancel ID... or --all",
		                "no task given");
	for (int i = first; i < argc; i++) {
		int64_t id;
		if (!parse_id(argv[i], &id))
			return bad_id(argv[i]);
	}
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	int64_t *ids = NULL;
	int n = 0;
	if (all) {
		queue_task *t;
		int nt;
		if (queue_store_list(st, -1, &t, &nt) == 0) {
			ids = calloc((size_t)nt + 1, sizeof *ids);
			for (int i = 0; i < nt; i++)
				if (!queue_state_final(t[i].state))
					ids[n++] = t[i].id;
			queue_tasks_free(t, nt);
		}
	} else {
		n = argc - first;
		ids = calloc((size_t)n, sizeof *ids);
		for (int i = 0; i < n; i++)
			parse_id(argv[first + i], &ids[i]);
	}
	for (int i = 0; i < n && !rc; i++) {
		int result;
		queue_attempt a;
		int r = queue_store_cancel(st, ids[i], &result, &a);
		if (r > 0) {
			rc = gw_error(GW_EXIT_USAGE, "queue cancel", NULL, "no task %lld",
			              (long long)ids[i]);
			break;
		}
		if (r < 0) {
			rc = GW_EXIT_ENV;
			break;
		}
		if (result == 0) {
			printf("task %lld cancelled\n", (long long)ids[i]);
			queue_write_record(st, ids[i]);
		} else if (result == 1) {
			/* Tell the shim straight away; the worker also does, should this miss. */
			if (a.backend == QB_LOCAL && a.astate == QA_RUNNING &&
			    queue_proc_alive(a.shim_pid, a.shim_start))
				kill(a.shim_pid, SIGUSR1);
			printf(
			    "task %lld: cancel requested (it is running; its record says cancelled "
			    "once its processes are gone)\n",
			    (long long)ids[i]);
		} else {
			queue_task t;
			if (queue_store_get(st, ids[i], &t) == 0) {
				printf("task %lld already ended (%s)\n", (long long)ids[i],
				       queue_state_name(t.state));
				queue_task_free(&t);
			}
		}
	}
	free(ids);
	queue_store_close(st);
	queue_worker_poke(dir);
	return rc;
}

static int q_retry(const char *dir, int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: gpuwhy queue retry ID...\n"
		     "Queues ended tasks (done, failed, timeout, cancelled, lost) again with a "
		     "fresh\n"
		     "retry budget; earlier attempts stay in the record.");
		return GW_EXIT_OK;
	}
	if (argc < 2)
		return gw_error(GW_EXIT_USAGE, "queue retry", "gpuwhy queue retry ID...",
		                "no task given");
	for (int i = 1; i < argc; i++) {
		int64_t id;
		if (!parse_id(argv[i], &id))
			return bad_id(argv[i]);
	}
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	bool any = false;
	for (int i = 1; i < argc && !rc; i++) {
		int64_t id = 0;
		parse_id(argv[i], &id);
		int result;
		int r = queue_store_retry(st, id, &result);
		if (r > 0)
			rc = gw_error(GW_EXIT_USAGE, argv[i], NULL, "no such task");
		else if (r < 0)
			rc = GW_EXIT_ENV;
		else if (result == 0) {
			printf("task %lld queued again\n", (long long)id);
			any = true;
		} else
			printf("task %lld has not ended: nothing to retry\n", (long long)id);
	}
	bool draining = queue_store_config_int(st, "draining") != 0;
	queue_store_close(st);
	if (any && !draining && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_poke(dir);
	return rc;
}

static int q_clean(const char *dir, int argc, char **argv)
{
	bool all = argc > 1 && !strcmp(argv[1], "--all");
	if (argc > 1 && !all) {
		puts("usage: gpuwhy queue clean [--all]\n"
		     "Forgets done tasks (--all: every ended task), their attempts and logs.\n"
		     "Tasks that a queued task waits for (--after) are kept.");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? GW_EXIT_USAGE
		                                                          : GW_EXIT_OK;
	}
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	int64_t *ids;
	int n;
	if (queue_store_clean(st, all, &ids, &n) != 0) {
		queue_store_close(st);
		return GW_EXIT_ENV;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		queue_log_path(dir, ids[i], path, sizeof path);
		unlink(path);
	}
	printf("removed %d task%s\n", n, n == 1 ? "" : "s");
	free(ids);
	queue_store_close(st);
	return GW_EXIT_OK;
}

/* ---- pause / resume / drain ---- */

/* Add (or remove) GPU list entries to drained-gpus. */
static int edit_drained(queue_store *st, const char *list, bool add)
{
	char cur[256], out[256] = "", err[200];
	queue_store_config_get(st, "drained-gpus", cur, sizeof cur);
	if (!queue_config_check("drained-gpus", list, err, sizeof err))
		return gw_error(GW_EXIT_USAGE, "--gpu", NULL, "%s", err);
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", cur);
	/* Keep current entries not being removed. */
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool drop = false;
		char l2[256], *s2 = NULL;
		snprintf(l2, sizeof l2, "%s", list);
		for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2))
			drop |= !strcasecmp(t, u);
		if (!drop || add) {
			size_t ol = strlen(out);
			if (!drop)
				snprintf(out + ol, sizeof out - ol, "%s%s", ol ? "," : "", t);
		}
	}
	if (add) {
		char l2[256], *s2 = NULL;
		snprintf(l2, sizeof l2, "%s", list);
		for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2)) {
			size_t ol = strlen(out);
			snprintf(out + ol, sizeof out - ol, "%s%s", ol ? "," : "", u);
		}
	}
	if (queue_store_config_set(st, "drained-gpus", out) != 0)
		return GW_EXIT_ENV;
	printf("drained GPUs: %s\n", out[0] ? out : "none");
	return GW_EXIT_OK;
}

static int q_flags(const char *dir, const char *sub, int argc, char **argv)
{
	const char *gpu = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: gpuwhy queue %s%s\n", sub,
			       !strcmp(sub, "pause") ? "" : " [--gpu LIST]");
			return GW_EXIT_OK;
		}
		if (!strcmp(argv[i], "--gpu") && i + 1 < argc && strcmp(sub, "pause"))
			gpu = argv[++i];
		else
			return gw_error(GW_EXIT_USAGE, argv[i], NULL, "unexpected argument");
	}
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	bool start = false;
	if (gpu) {
		rc = edit_drained(st, gpu, !strcmp(sub, "drain"));
	} else if (!strcmp(sub, "pause")) {
		rc = queue_store_config_set(st, "paused", "1") ? GW_EXIT_ENV : 0;
		if (!rc)
			puts("paused: running tasks go on, no new task starts (gpuwhy queue "
			     "resume)");
	} else if (!strcmp(sub, "drain")) {
		rc = queue_store_config_set(st, "draining", "1") ? GW_EXIT_ENV : 0;
		if (!rc)
			puts("draining: running tasks finish, no new task starts, then the worker "
			     "stops (gpuwhy queue resume undoes it)");
	} else {
		rc = queue_store_config_set(st, "paused", "0") ||
		             queue_store_config_set(st, "draining", "0")
		         ? GW_EXIT_ENV
		         : 0;
		start = !rc;
		if (!rc)
			puts("resumed");
	}
	int queued = queue_store_count_state(st, QS_QUEUED);
	queue_store_close(st);
	if (!rc && start && queued > 0 && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_poke(dir);
	return rc;
}

/* ---- gpus ---- */

static int q_gpus(const char *dir, int argc, char **argv)
{
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	if (argc > 1 && !json) {
		puts(
		    "usage: gpuwhy queue gpus [--json]\n"
		    "What the worker last saw: per GPU its memory, what placed tasks reserved but\n"
		    "have not allocated yet (PENDING), what a new task can count on (AVAIL = free "
		    "-\n"
		    "pending), queue tasks on it and their cap, processes that are not ours.");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? GW_EXIT_USAGE
		                                                          : GW_EXIT_OK;
	}
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	queue_gpu_row *rows;
	int n;
	double t;
	if (queue_store_gpu_view_get(st, &rows, &n, &t) != 0) {
		queue_store_close(st);
		return GW_EXIT_ENV;
	}
	char drained[256];
	queue_store_config_get(st, "drained-gpus", drained, sizeof drained);
	int wpid = queue_worker_pid(dir);
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "worker_pid", j_opt_int(wpid > 0, wpid));
		json_object_set_new(o, "time", j_time(t));
		json_t *arr = json_array();
		for (int i = 0; i < n; i++) {
			const queue_gpu_row *r = &rows[i];
			json_t *g = json_object();
			json_object_set_new(g, "index", json_integer(r->index));
			json_object_set_new(g, "uuid", j_str(r->uuid));
			json_object_set_new(g, "name", j_str(r->name));
			json_object_set_new(g, "total_mib",
			                    j_opt_int(r->total_mib >= 0, r->total_mib));
			json_object_set_new(g, "free_mib",
			                    j_opt_int(r->free_mib >= 0, r->free_mib));
			json_object_set_new(g, "pending_mib",
			                    j_opt_int(r->pending_mib >= 0, r->pending_mib));
			json_object_set_new(g, "available_mib",
			                    j_opt_int(r->avail_mib != INT64_MIN, r->avail_mib));
			json_object_set_new(g, "tasks", json_integer(r->ntasks));
			json_object_set_new(g, "task_ids", j_str(r->tasks));
			json_object_set_new(g, "cap", j_opt_int(r->cap > 0, r->cap));
			json_object_set_new(g, "foreign_processes", json_integer(r->foreign));
			json_object_set_new(g, "state", j_str(r->state));
			json_array_append_new(arr, g);
		}
		json_object_set_new(o, "gpus", arr);
		print_json(o, false);
	} else {
		if (n == 0)
			printf("no GPU view yet%s\n",
			       wpid ? " (the worker has not sampled yet, or sees no GPU: see "
			              "worker.log)"
			            : ": no worker runs (gpuwhy queue worker starts one)");
		else {
			char ts[32];
			local_time(t, ts, sizeof ts);
			printf("as seen by %s at %s\n", wpid > 0 ? "the worker" : "the last worker",
			       ts);
			printf("%-4s %-14s %9s %9s %9s %9s %-6s %-4s %-7s %-8s %s\n", "GPU", "UUID",
			       "TOTAL", "FREE", "PENDING", "AVAIL", "TASKS", "CAP", "FOREIGN",
			       "STATE", "TASK IDS");
			for (int i = 0; i < n; i++) {
				const queue_gpu_row *r = &rows[i];
				char tot[16], fr[16], pe[16], av[24], cap[16];
				human_mib(r->total_mib, tot, sizeof tot);
				human_mib(r->free_mib, fr, sizeof fr);
				human_mib(r->pending_mib, pe, sizeof pe);
				if (r->avail_mib == INT64_MIN)
					snprintf(av, sizeof av, "-");
				else if (r->avail_mib < 0) {
					char pos[16];
					human_mib(-r->avail_mib, pos, sizeof pos);
					snprintf(av, sizeof av, "-%s", pos);
				} else
					human_mib(r->avail_mib, av, sizeof av);
				snprintf(cap, sizeof cap, r->cap ? "%d" : "-", r->cap);
				printf("%-4d %-14.14s %9s %9s %9s %9s %-6d %-4s %-7d %-8s %s\n",
				       r->index, r->uuid, tot, fr, pe, av, r->ntasks, cap,
				       r->foreign, r->state, r->tasks);
			}
			if (drained[0])
				printf("drained: %s\n", drained);
		}
	}
	free(rows);
	queue_store_close(st);
	return GW_EXIT_OK;
}

/* ---- config ---- */

static int q_config(const char *dir, int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: gpuwhy queue config [KEY [VALUE]]\n\nKeys:");
		for (int i = 0; queue_config_keys[i].key; i++)
			printf("  %-16s %s (default '%s')\n", queue_config_keys[i].key,
			       queue_config_keys[i].help, queue_config_keys[i].def);
		return GW_EXIT_OK;
	}
	if (argc > 3)
		return gw_error(GW_EXIT_USAGE, argv[3], NULL, "unexpected argument");
	if (argc > 1 && !queue_config_find(argv[1]))
		return gw_error(GW_EXIT_USAGE, argv[1], "gpuwhy queue config --help lists the keys",
		                "unknown setting");
	char err[200];
	if (argc == 3 && !queue_config_check(argv[1], argv[2], err, sizeof err))
		return gw_error(GW_EXIT_USAGE, argv[1], NULL, "%s", err);
	queue_store *st;
	int rc = open_store(dir, &st);
	if (rc)
		return rc;
	char v[256];
	if (argc == 1) {
		for (int i = 0; queue_config_keys[i].key; i++) {
			queue_store_config_get(st, queue_config_keys[i].key, v, sizeof v);
			printf("%-16s %s\n", queue_config_keys[i].key, v);
		}
	} else if (argc == 2) {
		queue_store_config_get(st, argv[1], v, sizeof v);
		printf("%s\n", v);
	} else if (queue_store_config_set(st, argv[1], argv[2]) != 0) {
		rc = GW_EXIT_ENV;
	}
	queue_store_close(st);
	if (argc == 3)
		queue_worker_poke(dir);
	return rc;
}

/* ---- worker / stop ---- */

static int q_worker(const char *dir, int argc, char **argv, const gw_global *g)
{
	static const struct option opts[] = {{"idle-exit", required_argument, NULL, 'i'},
	                                     {"ready-fd", required_argument, NULL, 'r'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	queue_worker_opts o = {
	    .dir = dir, .gpus = g->gpus, .ready_fd = -1, .self_exe = gw_self_exe()};
	int c;
	long long x;
	int64_t ns;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (!gw_parse_duration_ns(optarg, 1000000000LL, &ns))
				return gw_error(GW_EXIT_USAGE, "--idle-exit", NULL,
				                "'%s' is not a duration", optarg);
			o.idle_exit_ns = ns;
			break;
		case 'r':
			if (!gw_parse_int(optarg, 0, 1 << 20, &x))
				return gw_error(GW_EXIT_USAGE, "--ready-fd", NULL,
				                "bad descriptor");
			o.ready_fd = (int)x;
			fcntl(o.ready_fd, F_SETFD, FD_CLOEXEC);
			break;
		case 'h':
			puts("usage: gpuwhy [--gpus LIST] queue [--queue DIR] worker [--idle-exit "
			     "D]\n"
			     "Runs the scheduler in the foreground until SIGTERM/SIGINT (`gpuwhy "
			     "queue\n"
			     "stop`), or until idle for D. Running tasks survive it: the next "
			     "worker\n"
			     "re-adopts them. `add` starts one in the background (with --idle-exit "
			     "10m)\n"
			     "when none runs; its log is DIR/worker.log.");
			return GW_EXIT_OK;
		default:
			return GW_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return gw_error(GW_EXIT_USAGE, argv[optind], NULL, "unexpected argument");
	if (!o.self_exe)
		return gw_error(GW_EXIT_ENV, "/proc/self/exe", NULL, "cannot find this program");
	return queue_worker_run(&o);
}

static int q_stop(const char *dir)
{
	struct stat dst;
	int rc = lstat(dir, &dst) != 0 && errno == ENOENT ? 0 : queue_dir_check(dir);
	if (rc)
		return rc;
	int pid = queue_worker_pid(dir);
	if (pid == 0) {
		puts("no worker runs");
		return GW_EXIT_OK;
	}
	char why[PATH_MAX + 80];
	if (pid < 0 || queue_worker_signal(dir, pid, SIGTERM, gw_self_exe(), why, sizeof why) != 0)
		return gw_error(GW_EXIT_ENV, "queue stop",
		                "nothing was signalled; fuser -v DIR/worker.lock shows its holder",
		                "worker.lock names pid %d: %s", pid, pid < 0 ? "no PID" : why);
	int64_t until = gw_mono_ns() + 15000000000LL;
	while (queue_worker_pid(dir) != 0 && gw_mono_ns() < until)
		gw_sleep_ns(20000000);
	if (queue_worker_pid(dir) != 0)
		return gw_error(GW_EXIT_ENV, "queue stop", NULL, "worker %d did not stop", pid);
	printf("worker %d stopped (running tasks go on; the next worker re-adopts them)\n", pid);
	return GW_EXIT_OK;
}

/* ---- dispatch ---- */

int cmd_queue(int argc, char **argv, const gw_global *g)
{
	/* --queue DIR before the subcommand (or anywhere before `--`). */
	const char *qopt = NULL;
	char **av = calloc((size_t)argc + 1, sizeof *av);
	int ac = 0;
	bool dashdash = false;
	for (int i = 0; i < argc; i++) {
		if (!dashdash && (!strcmp(argv[i], "--queue") || !strcmp(argv[i], "-q")) &&
		    i + 1 < argc) {
			qopt = argv[++i];
			continue;
		}
		if (!dashdash && !strncmp(argv[i], "--queue=", 8)) {
			qopt = argv[i] + 8;
			continue;
		}
		if (!strcmp(argv[i], "--"))
			dashdash = true;
		av[ac++] = argv[i];
	}
	int rc;
	if (ac < 2 || !strcmp(av[1], "--help") || !strcmp(av[1], "-h")) {
		usage(ac < 2 ? stderr : stdout);
		rc = ac < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
		free(av);
		return rc;
	}
	char dir[PATH_MAX];
	if ((rc = queue_dir_resolve(qopt, dir, sizeof dir))) {
		free(av);
		return rc;
	}
	const char *sub = av[1];
	int sac = ac - 1;
	char **sav = av + 1;
	optind = 0;
	if (!strcmp(sub, "add"))
		rc = q_add(dir, sac, sav);
	else if (!strcmp(sub, "ls") || !strcmp(sub, "list"))
		rc = q_ls(dir, sac, sav);
	else if (!strcmp(sub, "show"))
		rc = q_show(dir, sac, sav);
	else if (!strcmp(sub, "log"))
		rc = q_log(dir, sac, sav);
	else if (!strcmp(sub, "wait"))
		rc = q_wait(dir, sac, sav);
	else if (!strcmp(sub, "cancel"))
		rc = q_cancel(dir, sac, sav);
	else if (!strcmp(sub, "retry"))
		rc = q_retry(dir, sac, sav);
	else if (!strcmp(sub, "clean"))
		rc = q_clean(dir, sac, sav);
	else if (!strcmp(sub, "pause") || !strcmp(sub, "resume") || !strcmp(sub, "drain"))
		rc = q_flags(dir, sub, sac, sav);
	else if (!strcmp(sub, "gpus"))
		rc = q_gpus(dir, sac, sav);
	else if (!strcmp(sub, "config"))
		rc = q_config(dir, sac, sav);
	else if (!strcmp(sub, "worker"))
		rc = q_worker(dir, sac, sav, g);
	else if (!strcmp(sub, "stop"))
		rc = q_stop(dir);
	else
		rc = gw_error(GW_EXIT_USAGE, sub, "see gpuwhy queue --help",
		              "unknown queue subcommand");
	free(av);
	return rc;
}
