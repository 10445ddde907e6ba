/* enqueue.c - tasks made ready for the queue and handed in (`gpuwhy queue add`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/enqueue.h"
#include "queue/submit.h"
#include "util/err.h"
#include "util/jsonw.h"
#include "util/xalloc.h"

extern char **environ;

/* The environment as one JSON object, written as it is read: a tree of it (and its hash
 * table) cost a tenth of an `add`. */
char *queue_env_json(void (*skipped)(const char *name, int len))
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f)
		abort();
	jsonw w;
	jsonw_init(&w, f, false);
	w.esc = JSONW_ESC_SHORT;
	jsonw_obj_begin(&w);
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			continue;
		size_t kl = (size_t)(eq - *e), vl = strlen(eq + 1);
		if (!jsonw_utf8_ok(*e, kl) || !jsonw_utf8_ok(eq + 1, vl)) {
			skipped(*e, (int)kl);
			continue;
		}
		jsonw_keyn(&w, *e, kl);
		jsonw_strn(&w, eq + 1, vl);
	}
	jsonw_obj_end(&w);
	if (fclose(f) != 0)
		abort();
	return out;
}

char *queue_task_file_read(const char *path, size_t *len)
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

/* A task file is text (one shell command a line) unless its name or first character says
 * JSON. */
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

int queue_specs_make(const char *from, const char *text, size_t len, const queue_spec *tmpl,
                     char **cmd, int ncmd, queue_spec **specs, int *n, gw_fail *e)
{
	if (from) {
		*n = queue_spec_parse_file(from, text, len, text_file(from, text, len), tmpl, specs,
		                           e);
		if (*n < 0) {
			*n = 0;
			return e->code;
		}
		return 0;
	}
	*specs = calloc(1, sizeof **specs);
	queue_spec_copy(&(*specs)[0], tmpl);
	queue_spec_set_argv(&(*specs)[0], cmd, ncmd);
	*n = 1;
	return queue_spec_validate(&(*specs)[0], e);
}

int queue_specs_store(queue_db *st, queue_spec *specs, int n, const char *token, int64_t *ids)
{
	int rc = queue_db_add_token(st, specs, n, token, ids);
	return rc > 0 ? rc : rc < 0 ? GW_EXIT_ENV : 0;
}

bool queue_submit_one(const char *dir, const queue_spec *tmpl, bool by_config, char **cmd, int ncmd,
                      char *token, size_t toklen, int64_t *id, bool *draining)
{
	gw_fail e = {0};
	token[0] = '\0';
	if (queue_dir_check(dir, &e) != 0)
		return false; /* the database path reports a bad directory */
	queue_spec sp;
	queue_spec_init(&sp);
	queue_spec_copy(&sp, tmpl);
	queue_spec_set_argv(&sp, cmd, ncmd);
	bool ok = false;
	if (queue_spec_validate(&sp, NULL) == 0) {
		queue_submit_token(token, toklen);
		int r = queue_submit_send(dir, &sp, 1, by_config, token, id, draining);
		if (r == QUEUE_SUBMIT_ADDED)
			ok = true;
		else if (r == QUEUE_SUBMIT_NOT_SENT)
			token[0] = '\0';
	}
	queue_spec_free(&sp);
	return ok;
}
