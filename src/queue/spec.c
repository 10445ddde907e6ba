/*
 * spec.c - a task's command and policy, and `add --from FILE`.
 *
 * A file is one of:
 *   text        one shell command a line (run with sh -c); blank lines and # comments skipped
 *   JSON Lines  one object a line with the fields of `add` (cmd, gpus, mem, ...)
 *   JSON array  of such objects
 *   one object  the batch config shape: a cmd with {input}/{output} placeholders plus
 *               input_dir (one task per file in it), output_dir, max_retries,
 *               retry_interval_seconds, log_file (a JSON Lines record per finished task)
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "jfield.h"
#include "queue/state.h"
#include "queue/spec.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/parse.h"
#include "util/xalloc.h"

void queue_spec_init(queue_spec *s)
{
	memset(s, 0, sizeof *s);
	s->gpus = 1;
	s->mem_mib = -1;
	s->retry_delay_ms = 30000;
	s->host_mem_mib = -1;
	s->backend = QB_LOCAL;
}

static void free_argv(queue_spec *s)
{
	if (s->argv)
		for (int i = 0; i < s->argc; i++)
			free(s->argv[i]);
	free(s->argv);
	s->argv = NULL;
	s->argc = 0;
}

void queue_spec_free(queue_spec *s)
{
	if (!s)
		return;
	free_argv(s);
	free(s->cwd);
	free(s->env_json);
	free(s->slurm_args);
	free(s->input);
	free(s->output);
	free(s->record_file);
	queue_spec_init(s);
}

/* ---- the checks every task passes, from the command line or from a file ---- */

int queue_spec_set_name(queue_spec *s, const char *name, gw_fail *f)
{
	if (strlen(name) >= QUEUE_NAME_MAX)
		return gw_fail_set(f, GW_EXIT_USAGE, "--name", NULL, "longer than %d bytes",
		                   QUEUE_NAME_MAX - 1);
	snprintf(s->name, sizeof s->name, "%s", name);
	return 0;
}

int queue_spec_set_cwd(queue_spec *s, const char *dir, gw_fail *f)
{
	char joined[2 * PATH_MAX + 2], real[PATH_MAX];
	if (dir[0] != '/' && s->cwd)
		snprintf(joined, sizeof joined, "%s/%s", s->cwd, dir);
	else
		snprintf(joined, sizeof joined, "%s", dir);
	struct stat st;
	if (!realpath(joined, real) || stat(real, &st) != 0)
		return gw_fail_set(f, GW_EXIT_USAGE, "--cwd", NULL, "'%s': %s", joined,
		                   strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gw_fail_set(f, GW_EXIT_USAGE, "--cwd", NULL, "'%s' is not a directory",
		                   real);
	free(s->cwd);
	s->cwd = strdup(real);
	return 0;
}

/* What a task that fails the checks is: the command's, with its help as the hint. */
#define SPEC_WHAT "queue add"
#define SPEC_HINT N_("see gpuwhy queue add --help")

int queue_spec_validate(const queue_spec *s, gw_fail *f)
{
	struct stat st;
	const int u = GW_EXIT_USAGE;
	if (s->argc <= 0 || !s->argv || !s->argv[0] || !s->argv[0][0])
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT, "no command");
	if (strnlen(s->name, sizeof s->name) >= QUEUE_NAME_MAX)
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT, "'name' is longer than %d bytes",
		                   QUEUE_NAME_MAX - 1);
	if (!s->cwd || s->cwd[0] != '/')
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT,
		                   "no working directory (an absolute 'cwd')");
	if (stat(s->cwd, &st) != 0 || !S_ISDIR(st.st_mode))
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT, "'cwd' '%s' is not a directory",
		                   s->cwd);
	if (s->gpus < 0 || s->gpus > GPU_MAX)
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT, "'gpus' must be between 0 and %d",
		                   GPU_MAX);
	if (s->per_gpu < 0 || s->per_gpu > 1024)
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT,
		                   "'per_gpu' must be between 1 and 1024");
	if (s->retries < 0 || s->retries > 1000)
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT,
		                   "'retries' must be between 0 and 1000");
	if (s->after_id < 0 || s->retry_delay_ms < 0 || s->timeout_ms < 0)
		return gw_fail_set(f, u, SPEC_WHAT, SPEC_HINT,
		                   "'after', 'retry_delay' and 'timeout' must not be negative");
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void queue_spec_set_argv(queue_spec *s, char *const *argv, int argc)
{
	free_argv(s);
	s->argv = calloc((size_t)argc + 1, sizeof *s->argv);
	for (int i = 0; i < argc; i++)
		s->argv[i] = strdup(argv[i]);
	s->argc = argc;
}

void queue_spec_copy(queue_spec *dst, const queue_spec *src)
{
	*dst = *src;
	dst->argv = NULL;
	dst->argc = 0;
	if (src->argv)
		queue_spec_set_argv(dst, src->argv, src->argc);
	dst->cwd = dup_or_null(src->cwd);
	dst->env_json = dup_or_null(src->env_json);
	dst->slurm_args = dup_or_null(src->slurm_args);
	dst->input = dup_or_null(src->input);
	dst->output = dup_or_null(src->output);
	dst->record_file = dup_or_null(src->record_file);
}

size_t queue_shell_quote(const char *w, char *out, size_t outlen)
{
	/* Words of safe characters stay bare, which keeps logs readable. */
	bool plain = *w != '\0';
	for (const char *p = w; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		               "_-./=:,+@%",
		               *p) != NULL;
	size_t need = 0;
#define PUT(c)                                                                                     \
	do {                                                                                       \
		if (need + 1 < outlen)                                                             \
			out[need] = (c);                                                           \
		need++;                                                                            \
	} while (0)
	if (plain) {
		for (const char *p = w; *p; p++)
			PUT(*p);
	} else {
		PUT('\'');
		for (const char *p = w; *p; p++) {
			if (*p == '\'') {
				PUT('\'');
				PUT('\\');
				PUT('\'');
				PUT('\'');
			} else {
				PUT(*p);
			}
		}
		PUT('\'');
	}
#undef PUT
	if (outlen)
		out[need < outlen ? need : outlen - 1] = '\0';
	return need;
}

char *queue_argv_to_shell(char *const *argv, int argc)
{
	size_t total = 1;
	for (int i = 0; i < argc; i++)
		total += queue_shell_quote(argv[i], NULL, 0) + 1;
	char *s = malloc(total), *p = s;
	*p = '\0';
	for (int i = 0; i < argc; i++) {
		if (i)
			*p++ = ' ';
		size_t room = total - (size_t)(p - s);
		p += queue_shell_quote(argv[i], p, room);
	}
	*p = '\0';
	return s;
}

/* ---- placeholders ---- */

typedef struct {
	char *name[64];
	char *value[64];
	bool used[64];
	int n;
} vars;

static void vars_set(vars *v, const char *name, const char *value)
{
	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->name[i], name)) {
			free(v->value[i]);
			v->value[i] = strdup(value);
			return;
		}
	if (v->n < 64) {
		v->name[v->n] = strdup(name);
		v->value[v->n] = strdup(value);
		v->used[v->n] = false;
		v->n++;
	}
}

static void vars_free(vars *v)
{
	for (int i = 0; i < v->n; i++) {
		free(v->name[i]);
		free(v->value[i]);
	}
	v->n = 0;
}

/* Replace {name} by its value (shell-quoted when quote). Unknown {x} stay as written. */
static char *expand(const char *tmpl, vars *v, bool quote)
{
	size_t cap = strlen(tmpl) + 64, len = 0;
	char *out = malloc(cap);
	for (const char *p = tmpl; *p;) {
		const char *val = NULL;
		size_t skip = 0;
		if (*p == '{') {
			const char *close = strchr(p, '}');
			for (int i = 0; close && i < v->n; i++) {
				size_t nl = strlen(v->name[i]);
				if ((size_t)(close - p - 1) == nl &&
				    !strncmp(p + 1, v->name[i], nl)) {
					val = v->value[i];
					v->used[i] = true;
					skip = nl + 2;
				}
			}
		}
		char qbuf[16];
		const char *piece = val ? val : qbuf;
		size_t pl;
		char *quoted = NULL;
		if (val && quote) {
			size_t need = queue_shell_quote(val, NULL, 0) + 1;
			quoted = malloc(need);
			queue_shell_quote(val, quoted, need);
			piece = quoted;
			pl = strlen(quoted);
		} else if (val) {
			pl = strlen(val);
		} else {
			qbuf[0] = *p;
			qbuf[1] = '\0';
			pl = 1;
			skip = 1;
		}
		if (len + pl + 1 > cap) {
			cap = (len + pl + 1) * 2;
			out = gw_xrealloc(out, cap);
		}
		memcpy(out + len, piece, pl);
		len += pl;
		free(quoted);
		p += skip;
	}
	out[len] = '\0';
	return out;
}

/* ---- JSON fields ---- */

/* Where the reader is ("line 3", "task 2", "file"), in English and in the user's language,
 * and the failure it fills: "where: why", the English kept for JSON and logs. */
typedef struct {
	gw_fail *f;
	const char *what; /* the file */
	char where[64], where_text[64];
} perr;

static void spec_where(perr *e, const char *where, const char *where_text)
{
	snprintf(e->where, sizeof e->where, "%s", where);
	snprintf(e->where_text, sizeof e->where_text, "%s", where_text);
}

static void spec_line(perr *e, int lineno)
{
	snprintf(e->where, sizeof e->where, "line %d", lineno);
	snprintf(e->where_text, sizeof e->where_text, _("line %d"), lineno);
}

static int spec_put(perr *e, const char *msg, const char *msg_text)
{
	char en[sizeof e->f->why], tr[sizeof e->f->why];
	snprintf(en, sizeof en, "%s: %.500s", e->where, msg);
	snprintf(tr, sizeof tr, _("%s: %s"), e->where_text, msg_text);
	gw_fail_set(e->f, GW_EXIT_USAGE, e->what, SPEC_HINT, "%s", en);
	if (e->f)
		snprintf(e->f->why_text, sizeof e->f->why_text, "%s", tr);
	return -1;
}

static int spec_fail(perr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int spec_fail(perr *e, const char *fmt, ...)
{
	char msg[400], msg_text[400];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	vsnprintf(msg, sizeof msg, fmt, ap);
	vsnprintf(msg_text, sizeof msg_text, _(fmt), aq);
	va_end(aq);
	va_end(ap);
	return spec_put(e, msg, msg_text);
}

/* fmt around the why of a check that failed (set_name, set_cwd, validate), in each language. */
static int spec_nest(perr *e, const char *fmt, const gw_fail *inner)
{
	char msg[sizeof inner->why + 64], msg_text[sizeof inner->why + 64];
	snprintf(msg, sizeof msg, fmt, inner->why);
	snprintf(msg_text, sizeof msg_text, _(fmt), inner->why_text);
	return spec_put(e, msg, msg_text);
}

static char *abs_path(const char *base, const char *p)
{
	if (p[0] == '/' || !base)
		return strdup(p);
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	size_t n = strlen(base) + strlen(p) + 2;
	char *out = malloc(n);
	snprintf(out, n, "%s/%s", base, p);
	return out;
}

/* The task fields that are plain integers, checked by sim/jfield.c. */
static const jf_field int_rows[] = {
    JF_I("gpus", queue_spec, gpus, 0, GPU_MAX),
    JF_I("per_gpu", queue_spec, per_gpu, 1, 1024),
    JF_I("retries", queue_spec, retries, 0, 1000),
    JF_I("max_retries", queue_spec, retries, 0, 1000),
    JF_I("after", queue_spec, after_id, 1, INT64_MAX),
};

/* Read the integer field f from v into s, a fault in the task file's words. */
static int get_int(const jf_field *f, json_t *v, queue_spec *s, perr *e)
{
	jf_fault r = jf_check(f, v);
	if (r == JF_TYPE)
		return spec_fail(e, "'%s' must be an integer", f->key);
	if (r == JF_RANGE)
		return spec_fail(e, "'%s' must be between %lld and %lld", f->key, f->lo, f->hi);
	jf_store(f, v, s);
	return 0;
}

/* A duration given as "30s"/"2h" or as a number of seconds. */
static int get_duration_ms(json_t *v, const char *key, int64_t *out, perr *e)
{
	int64_t ns;
	if (json_is_number(v)) {
		double s = json_number_value(v);
		if (s < 0 || s > 9e9)
			return spec_fail(e, "'%s' must be a non-negative number of seconds", key);
		*out = (int64_t)(s * 1000.0 + 0.5);
		return 0;
	}
	if (json_is_string(v) && gw_parse_duration_ns(json_string_value(v), 1000000000LL, &ns)) {
		*out = ns / 1000000;
		return 0;
	}
	return spec_fail(e, "'%s' must be a duration like \"30s\", \"10m\", \"2h\" or seconds",
	                 key);
}

/* A memory size "12G"/"800M" or a number of MiB. */
static int get_mib(json_t *v, const char *key, int64_t *out, perr *e)
{
	uint64_t bytes;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && gw_parse_size_bytes(json_string_value(v), &bytes)) {
		*out = (int64_t)((bytes + (1 << 20) - 1) >> 20);
		return 0;
	}
	return spec_fail(e, "'%s' must be a size like \"12G\" or \"800M\", or a number of MiB",
	                 key);
}

static int get_str(json_t *v, const char *key, const char **out, perr *e)
{
	const jf_field f = {.key = key, .type = JF_TEXT};
	if (jf_check(&f, v) == JF_TYPE)
		return spec_fail(e, "'%s' must be a string", key);
	jf_store(&f, v, out);
	return 0;
}

static int merge_env(queue_spec *s, json_t *env, perr *e)
{
	if (!json_is_object(env))
		return spec_fail(e, "'env' must be an object of strings");
	json_t *base = s->env_json ? json_loads(s->env_json, 0, NULL) : json_object();
	if (!base)
		base = json_object();
	const char *k;
	json_t *val;
	json_object_foreach(env, k, val)
	{
		if (!json_is_string(val)) {
			json_decref(base);
			return spec_fail(e, "env value of '%s' must be a string", k);
		}
		json_object_set(base, k, val);
	}
	free(s->env_json);
	s->env_json = jsonw_tree_text(base, 0, 0);
	json_decref(base);
	return 0;
}

static const char *const shape_keys[] = {"input_dir",     "output_dir", "pattern",
                                         "skip_existing", "output",     NULL};

static bool is_field(const char *k)
{
	static const char *const fields[] = {
	    "cmd",     "command",  "name",        "gpus",        "mem",
	    "per_gpu", "retries",  "max_retries", "retry_delay", "retry_interval_seconds",
	    "timeout", "after",    "cwd",         "env",         "allow_foreign",
	    "backend", "host_mem", "slurm_args",  "input",       "log_file",
	    NULL};
	for (int i = 0; fields[i]; i++)
		if (!strcmp(k, fields[i]))
			return true;
	for (int i = 0; shape_keys[i]; i++)
		if (!strcmp(k, shape_keys[i]))
			return true;
	return false;
}

/* Apply the policy fields of obj to s (everything but cmd and the shard keys). */
static int apply_fields(queue_spec *s, json_t *obj, perr *e)
{
	const char *k;
	json_t *v;
	const char *str = NULL;
	json_object_foreach(obj, k, v)
	{
		const jf_field *f = jf_find(int_rows, sizeof int_rows / sizeof *int_rows, k);
		if (f) {
			if (get_int(f, v, s, e))
				return -1;
		} else if (!strcmp(k, "name")) {
			gw_fail why;
			if (get_str(v, k, &str, e))
				return -1;
			if (queue_spec_set_name(s, str, &why))
				return spec_nest(e, N_("'name' is %s"), &why);
		} else if (!strcmp(k, "mem")) {
			if (get_mib(v, k, &s->mem_mib, e))
				return -1;
		} else if (!strcmp(k, "host_mem")) {
			if (get_mib(v, k, &s->host_mem_mib, e))
				return -1;
		} else if (!strcmp(k, "retry_delay") || !strcmp(k, "retry_interval_seconds")) {
			if (get_duration_ms(v, k, &s->retry_delay_ms, e))
				return -1;
		} else if (!strcmp(k, "timeout")) {
			if (get_duration_ms(v, k, &s->timeout_ms, e))
				return -1;
		} else if (!strcmp(k, "cwd")) {
			gw_fail why;
			if (get_str(v, k, &str, e))
				return -1;
			if (queue_spec_set_cwd(s, str, &why))
				return spec_nest(e, N_("'cwd' %s"), &why);
		} else if (!strcmp(k, "env")) {
			if (merge_env(s, v, e))
				return -1;
		} else if (!strcmp(k, "allow_foreign")) {
			if (!json_is_boolean(v))
				return spec_fail(e, "'allow_foreign' must be true or false");
			s->allow_foreign = json_is_true(v);
		} else if (!strcmp(k, "backend")) {
			if (get_str(v, k, &str, e))
				return -1;
			if (!strcmp(str, "local"))
				s->backend = QB_LOCAL;
			else if (!strcmp(str, "slurm"))
				s->backend = QB_SLURM;
			else
				return spec_fail(e, "'backend' must be \"local\" or \"slurm\"");
		} else if (!strcmp(k, "slurm_args")) {
			if (!json_is_array(v))
				return spec_fail(e, "'slurm_args' must be an array of strings");
			size_t i;
			json_t *a;
			json_array_foreach(v, i, a)
			{
				if (!json_is_string(a))
					return spec_fail(
					    e, "'slurm_args' must be an array of strings");
			}
			free(s->slurm_args);
			s->slurm_args = jsonw_tree_text(v, 0, 0);
		} else if (!strcmp(k, "input")) {
			if (get_str(v, k, &str, e))
				return -1;
			free(s->input);
			s->input = strdup(str);
		} else if (!strcmp(k, "log_file")) {
			if (get_str(v, k, &str, e))
				return -1;
			free(s->record_file);
			s->record_file = abs_path(s->cwd, str);
		}
	}
	return 0;
}

static int check(const queue_spec *s, perr *e)
{
	gw_fail why;
	if (queue_spec_validate(s, &why))
		return spec_nest(e, "%s", &why);
	return 0;
}

/* Extra scalar keys become {placeholders}; anything else unknown is an error. */
static int collect_vars(json_t *obj, vars *v, perr *e)
{
	const char *k;
	json_t *val;
	json_object_foreach(obj, k, val)
	{
		if (is_field(k))
			continue;
		char buf[64];
		if (json_is_string(val))
			vars_set(v, k, json_string_value(val));
		else if (json_is_integer(val)) {
			snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val));
			vars_set(v, k, buf);
		} else if (json_is_real(val)) {
			snprintf(buf, sizeof buf, "%.17g", json_real_value(val));
			vars_set(v, k, buf);
		} else if (json_is_boolean(val)) {
			vars_set(v, k, json_is_true(val) ? "true" : "false");
		} else {
			return spec_fail(e, "unknown key '%s' (see gpuwhy queue add --help)", k);
		}
	}
	return 0;
}

/* Build argv from cmd with the placeholders filled in; checks every extra key was used. */
static int make_command(queue_spec *s, json_t *obj, vars *v, int extra_from, perr *e)
{
	json_t *cmd = json_object_get(obj, "cmd");
	if (!cmd)
		cmd = json_object_get(obj, "command");
	if (!cmd)
		return spec_fail(e, "no 'cmd' (a shell command string or an array of arguments)");
	for (int i = 0; i < v->n; i++)
		v->used[i] = false;
	if (json_is_string(cmd)) {
		char *line = expand(json_string_value(cmd), v, true);
		if (!*line) {
			free(line);
			return spec_fail(e, "'cmd' is empty");
		}
		char *argv[] = {"sh", "-c", line};
		queue_spec_set_argv(s, argv, 3);
		free(line);
	} else if (json_is_array(cmd) && json_array_size(cmd) > 0) {
		size_t n = json_array_size(cmd);
		char **argv = calloc(n, sizeof *argv);
		for (size_t i = 0; i < n; i++) {
			json_t *a = json_array_get(cmd, i);
			if (!json_is_string(a)) {
				for (size_t j = 0; j < i; j++)
					free(argv[j]);
				free(argv);
				return spec_fail(e, "'cmd' array must hold strings");
			}
			argv[i] = expand(json_string_value(a), v, false);
		}
		queue_spec_set_argv(s, argv, (int)n);
		for (size_t i = 0; i < n; i++)
			free(argv[i]);
		free(argv);
	} else {
		return spec_fail(e, "'cmd' must be a string or a non-empty array of strings");
	}
	for (int i = extra_from; i < v->n; i++)
		if (!v->used[i])
			return spec_fail(
			    e,
			    "key '%s' is not a task field and cmd does not use {%s} (remove it "
			    "or use it in cmd)",
			    v->name[i], v->name[i]);
	return 0;
}

typedef struct {
	queue_spec *v;
	int n, cap;
} spec_list;

static queue_spec *list_push(spec_list *l)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 16;
		l->v = gw_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
	}
	return &l->v[l->n++];
}

static void list_free(spec_list *l)
{
	for (int i = 0; i < l->n; i++)
		queue_spec_free(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

static int file_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* The batch config shape: one task per file in input_dir. */
static int expand_shards(json_t *obj, const queue_spec *tmpl, spec_list *l, perr *e)
{
	const char *in_dir = NULL, *out_dir = NULL, *pattern = NULL,
	           *out_tmpl = "{output_dir}/{basename}";
	json_t *v;
	if ((v = json_object_get(obj, "input_dir")) && get_str(v, "input_dir", &in_dir, e))
		return -1;
	if ((v = json_object_get(obj, "output_dir")) && get_str(v, "output_dir", &out_dir, e))
		return -1;
	if ((v = json_object_get(obj, "pattern")) && get_str(v, "pattern", &pattern, e))
		return -1;
	if ((v = json_object_get(obj, "output")) && get_str(v, "output", &out_tmpl, e))
		return -1;
	bool skip_existing = false;
	if ((v = json_object_get(obj, "skip_existing"))) {
		if (!json_is_boolean(v))
			return spec_fail(e, "'skip_existing' must be true or false");
		skip_existing = json_is_true(v);
	}
	char *in_abs = abs_path(tmpl->cwd, in_dir);
	char *out_abs = out_dir ? abs_path(tmpl->cwd, out_dir) : NULL;
	struct dirent **names = NULL;
	int nn = scandir(in_abs, &names, file_filter, alphasort);
	if (nn < 0) {
		int rc = spec_fail(e, "input_dir '%s': %s", in_abs, strerror(errno));
		free(in_abs);
		free(out_abs);
		return rc;
	}
	int rc = 0, index = 0;
	for (int i = 0; i < nn && rc == 0; i++) {
		const char *base = names[i]->d_name;
		char *path = abs_path(in_abs, base);
		struct stat st;
		bool take = stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		            (!pattern || fnmatch(pattern, base, 0) == 0);
		if (!take) {
			free(path);
			continue;
		}
		vars vs = {0};
		vars_set(&vs, "input", path);
		vars_set(&vs, "basename", base);
		char stem[256];
		snprintf(stem, sizeof stem, "%s", base);
		char *dot = strrchr(stem, '.');
		if (dot && dot != stem)
			*dot = '\0';
		vars_set(&vs, "stem", stem);
		char idx[24];
		snprintf(idx, sizeof idx, "%d", index);
		vars_set(&vs, "index", idx);
		vars_set(&vs, "input_dir", in_abs);
		if (out_abs)
			vars_set(&vs, "output_dir", out_abs);
		char *output = out_abs ? expand(out_tmpl, &vs, false) : NULL;
		if (output)
			vars_set(&vs, "output", output);
		int fixed = vs.n;
		bool skip = skip_existing && output && access(output, F_OK) == 0;
		if (!skip) {
			queue_spec *s = list_push(l);
			queue_spec_copy(s, tmpl);
			rc = collect_vars(obj, &vs, e);
			if (!rc)
				rc = apply_fields(s, obj, e);
			if (!rc)
				rc = make_command(s, obj, &vs, fixed, e);
			if (!rc) {
				free(s->input);
				s->input = strdup(path);
				free(s->output);
				s->output = output ? strdup(output) : NULL;
				if (!s->name[0])
					snprintf(s->name, sizeof s->name, "%.127s", base);
				rc = check(s, e);
				index++;
			}
		}
		free(output);
		vars_free(&vs);
		free(path);
	}
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	free(in_abs);
	free(out_abs);
	if (rc == 0 && index == 0 && !skip_existing)
		return spec_fail(e, "input_dir has no matching files");
	return rc;
}

static int one_object(json_t *obj, const queue_spec *tmpl, spec_list *l, perr *e)
{
	if (!json_is_object(obj))
		return spec_fail(e, "expected a JSON object");
	if (json_object_get(obj, "input_dir"))
		return expand_shards(obj, tmpl, l, e);
	vars vs = {0};
	queue_spec *s = list_push(l);
	queue_spec_copy(s, tmpl);
	int rc = collect_vars(obj, &vs, e);
	if (!rc)
		rc = apply_fields(s, obj, e);
	if (!rc)
		rc = make_command(s, obj, &vs, 0, e);
	if (!rc)
		rc = check(s, e);
	vars_free(&vs);
	return rc;
}

static int parse_text(const char *text, size_t len, const queue_spec *tmpl, spec_list *l, perr *e)
{
	int lineno = 0;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		lineno++;
		if (memchr(p, '\0', ll)) {
			spec_line(e, lineno);
			return spec_fail(e, "contains a NUL byte (is this a text file?)");
		}
		char *line = strndup(p, ll);
		p = nl ? nl + 1 : end;
		char *t = line;
		while (*t == ' ' || *t == '\t')
			t++;
		size_t tl = strlen(t);
		while (tl > 0 && (t[tl - 1] == '\r' || t[tl - 1] == ' ' || t[tl - 1] == '\t'))
			t[--tl] = '\0';
		if (!*t || *t == '#') {
			free(line);
			continue;
		}
		queue_spec *s = list_push(l);
		queue_spec_copy(s, tmpl);
		char *argv[] = {"sh", "-c", t};
		queue_spec_set_argv(s, argv, 3);
		free(line);
		spec_line(e, lineno);
		if (check(s, e))
			return -1;
	}
	return 0;
}

int queue_spec_parse_file(const char *file, const char *text, size_t len, bool text_mode,
                          const queue_spec *tmpl, queue_spec **out, gw_fail *f)
{
	spec_list l = {0};
	perr e = {.f = f, .what = file};
	spec_where(&e, "file", _("file"));
	int rc = 0;
	if (text_mode) {
		rc = parse_text(text, len, tmpl, &l, &e);
	} else {
		json_error_t je;
		json_t *all = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		if (all && json_is_array(all)) {
			size_t i;
			json_t *o;
			json_array_foreach(all, i, o)
			{
				snprintf(e.where, sizeof e.where, "task %zu", i + 1);
				snprintf(e.where_text, sizeof e.where_text, _("task %zu"), i + 1);
				if ((rc = one_object(o, tmpl, &l, &e)))
					break;
			}
		} else if (all) {
			/* One object on one line is a one-line JSON Lines file: say "line 1". */
			size_t end = len;
			while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' ||
			                   text[end - 1] == ' '))
				end--;
			if (!memchr(text, '\n', end))
				spec_where(&e, "line 1", _("line 1"));
			rc = one_object(all, tmpl, &l, &e);
		} else {
			/* JSON Lines: one object a line. */
			int lineno = 0;
			for (const char *p = text, *end = text + len; p < end && !rc;) {
				const char *nl = memchr(p, '\n', (size_t)(end - p));
				size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
				const char *line = p;
				p = nl ? nl + 1 : end;
				lineno++;
				size_t k = 0;
				while (k < ll &&
				       (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
					k++;
				if (k == ll || line[k] == '#')
					continue;
				spec_line(&e, lineno);
				json_t *o = json_loadb(line, ll, JSON_REJECT_DUPLICATES, &je);
				if (!o) {
					rc = spec_fail(&e, "not JSON: %s (column %d)", je.text,
					               je.column);
					break;
				}
				rc = one_object(o, tmpl, &l, &e);
				json_decref(o);
			}
		}
		json_decref(all);
	}
	if (rc == 0 && l.n == 0) {
		spec_where(&e, "file", _("file"));
		rc = spec_put(&e, "no tasks in it", _("no tasks in it"));
	}
	if (rc) {
		list_free(&l);
		return -1;
	}
	*out = l.v;
	return l.n;
}
