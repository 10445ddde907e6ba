/*
 * state.c - DIR/sweep.json: the sweep's options as given and every run's
 * outcome, rewritten (temporary file + rename) after each change, so a
 * sweep killed at any moment can be resumed with `gpuwhy sweep --resume DIR`.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/state.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

/* Names in sweep.json; N_ lets the text output show them translated. */
static const char *const status_names[] = {N_("pending"), N_("running"), N_("done"),
                                           N_("failed"),  N_("oom"),     N_("interrupted")};

const char *sweep_status_name(sweep_status s)
{
	return (unsigned)s < sizeof status_names / sizeof *status_names ? status_names[s] : "?";
}

bool sweep_status_parse(const char *s, sweep_status *out)
{
	for (size_t i = 0; i < sizeof status_names / sizeof *status_names; i++)
		if (!strcmp(s, status_names[i])) {
			*out = (sweep_status)i;
			return true;
		}
	return false;
}

const char *const sweep_state_env_keys[4] = {"GPUWHY_SIM_SCENARIO", "GPUWHY_NVML", "GPUWHY_GPUS",
                                             "GPUWHY_SIM_STATE"};

void sweep_state_env_save(sweep_state *st)
{
	for (int i = 0; i < 4; i++) {
		const char *v = getenv(sweep_state_env_keys[i]);
		free(st->genv[i]);
		st->genv[i] = v && *v ? strdup(v) : NULL;
	}
}

void sweep_state_env_restore(const sweep_state *st)
{
	for (int i = 0; i < 4; i++) {
		const char *now = getenv(sweep_state_env_keys[i]);
		if (st->genv[i] && !(now && *now))
			setenv(sweep_state_env_keys[i], st->genv[i], 1);
	}
}

sweep_run *sweep_state_find(sweep_state *st, const char *config, int rep)
{
	for (int i = 0; i < st->n; i++)
		if (st->r[i].rep == rep && !strcmp(st->r[i].config, config))
			return &st->r[i];
	return NULL;
}

sweep_run *sweep_state_add(sweep_state *st, const char *config, int rep, const char *file)
{
	sweep_run *r = sweep_state_find(st, config, rep);
	if (r)
		return r;
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 32;
		st->r = gw_xrealloc(st->r, (size_t)st->cap * sizeof *st->r);
	}
	r = &st->r[st->n++];
	memset(r, 0, sizeof *r);
	snprintf(r->config, sizeof r->config, "%s", config);
	snprintf(r->file, sizeof r->file, "%s", file);
	r->rep = rep;
	r->exit_code = -1;
	return r;
}

int sweep_state_save(const sweep_state *st)
{
	char path[400], tmp[420];
	snprintf(path, sizeof path, "%s/sweep.json", st->dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return gw_error(GW_EXIT_ENV, tmp, N_("check the directory's permissions and space"),
		                "cannot write: %s", strerror(errno));
	jsonw w;
	jsonw_init(&w, f, true);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "schema");
	jsonw_int(&w, 1);
	jsonw_key(&w, "args");
	jsonw_arr_begin(&w);
	for (int i = 0; i < st->nargs; i++)
		jsonw_str(&w, st->args[i]);
	jsonw_arr_end(&w);
	jsonw_key(&w, "ncpu");
	jsonw_int(&w, st->ncpu);
	jsonw_key(&w, "free_cores");
	jsonw_num(&w, st->free_cores);
	jsonw_key(&w, "environment");
	jsonw_obj_begin(&w);
	for (int i = 0; i < 4; i++) {
		jsonw_key(&w, sweep_state_env_keys[i]);
		jsonw_str(&w, st->genv[i]);
	}
	jsonw_obj_end(&w);
	jsonw_key(&w, "runs");
	jsonw_arr_begin(&w);
	for (int i = 0; i < st->n; i++) {
		const sweep_run *r = &st->r[i];
		jsonw_obj_begin(&w);
		jsonw_key(&w, "config");
		jsonw_str(&w, r->config);
		jsonw_key(&w, "repeat");
		jsonw_int(&w, r->rep);
		jsonw_key(&w, "file");
		jsonw_str(&w, r->file);
		jsonw_key(&w, "status");
		jsonw_str(&w, sweep_status_name(r->status));
		jsonw_key(&w, "exit_code");
		if (r->exit_code >= 0)
			jsonw_int(&w, r->exit_code);
		else
			jsonw_null(&w);
		jsonw_key(&w, "started");
		jsonw_num(&w, r->started > 0 ? r->started : NAN);
		jsonw_key(&w, "ended");
		jsonw_num(&w, r->ended > 0 ? r->ended : NAN);
		jsonw_key(&w, "queue_task");
		if (r->queue_id > 0)
			jsonw_int(&w, r->queue_id);
		else
			jsonw_null(&w);
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	fputc('\n', f);
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		remove(tmp);
		return gw_error(GW_EXIT_ENV, path, N_("check the disk space"), "cannot write: %s",
		                strerror(errno));
	}
	return 0;
}

static double num_or(json_t *v, double d)
{
	return json_is_number(v) ? json_number_value(v) : d;
}

static int load_runs(sweep_state *st, json_t *runs, const char *path)
{
	size_t i;
	json_t *e;
	json_array_foreach(runs, i, e)
	{
		const char *cfg = json_string_value(json_object_get(e, "config"));
		const char *file = json_string_value(json_object_get(e, "file"));
		const char *status = json_string_value(json_object_get(e, "status"));
		json_t *rep = json_object_get(e, "repeat");
		sweep_status s;
		if (!cfg || !file || !status || !json_is_integer(rep) ||
		    !sweep_status_parse(status, &s))
			return gw_error(GW_EXIT_ENV, path,
			                N_("the file is written by gpuwhy sweep"),
			                "run %zu is malformed", i + 1);
		sweep_run *r = sweep_state_add(st, cfg, (int)json_integer_value(rep), file);
		r->status = s;
		r->exit_code = (int)num_or(json_object_get(e, "exit_code"), -1);
		r->started = num_or(json_object_get(e, "started"), 0);
		r->ended = num_or(json_object_get(e, "ended"), 0);
		r->queue_id = (long long)num_or(json_object_get(e, "queue_task"), 0);
	}
	return 0;
}

int sweep_state_load(const char *dir, sweep_state *st)
{
	memset(st, 0, sizeof *st);
	snprintf(st->dir, sizeof st->dir, "%s", dir);
	st->free_cores = NAN;
	char path[400];
	snprintf(path, sizeof path, "%s/sweep.json", dir);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		if (errno == ENOENT || strstr(je.text, "unable to open"))
			return gw_error(GW_EXIT_USAGE, dir,
			                N_("give the -o DIR of an earlier sweep"),
			                "no sweep here (no sweep.json)");
		return gw_error(GW_EXIT_ENV, path, N_("the file is written by gpuwhy sweep"),
		                "line %d: %s", je.line, je.text);
	}
	json_t *args = json_object_get(root, "args"), *runs = json_object_get(root, "runs");
	if (!json_is_array(args) || !json_is_array(runs)) {
		json_decref(root);
		return gw_error(GW_EXIT_ENV, path, N_("the file is written by gpuwhy sweep"),
		                "no args or runs");
	}
	st->nargs = (int)json_array_size(args);
	st->args = gw_xcalloc((size_t)st->nargs + 1, sizeof *st->args);
	for (int i = 0; i < st->nargs; i++) {
		const char *a = json_string_value(json_array_get(args, (size_t)i));
		st->args[i] = strdup(a ? a : "");
	}
	st->ncpu = (int)num_or(json_object_get(root, "ncpu"), 0);
	st->free_cores = num_or(json_object_get(root, "free_cores"), NAN);
	json_t *env = json_object_get(root, "environment");
	for (int i = 0; i < 4; i++) {
		const char *v = json_string_value(json_object_get(env, sweep_state_env_keys[i]));
		st->genv[i] = v ? strdup(v) : NULL;
	}
	int rc = load_runs(st, runs, path);
	json_decref(root);
	return rc;
}

void sweep_state_free(sweep_state *st)
{
	if (st->args)
		for (int i = 0; i < st->nargs; i++)
			free(st->args[i]);
	free(st->args);
	free(st->r);
	for (int i = 0; i < 4; i++)
		free(st->genv[i]);
	memset(st, 0, sizeof *st);
}
