/*
 * subst.c - putting a configuration's values into the command. The command
 * is run as an argv, never through a shell, so a value with spaces or shell
 * characters stays one argument as it is. Only when the user's command is
 * itself a shell (sh -c 'SCRIPT') are values put into the script quoted as
 * one shell word, so they cannot turn into code.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/plan.h"
#include "sweep/subst.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "util/i18n.h"

static bool ident_start(char c)
{
	return isalpha((unsigned char)c) || c == '_';
}

static bool ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Length of the placeholder "{name}" at p (0 when p does not start one). */
static size_t placeholder_at(const char *p, size_t *name_len)
{
	if (p[0] != '{' || !ident_start(p[1]))
		return 0;
	size_t n = 1;
	while (ident(p[1 + n]))
		n++;
	if (p[1 + n] != '}')
		return 0;
	*name_len = n;
	return n + 2;
}

int sweep_placeholders(const char *tmpl, int (*fn)(const char *name, size_t len, void *arg),
                       void *arg)
{
	for (const char *p = tmpl; *p; p++) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			p++;
			continue;
		}
		size_t nl, l = placeholder_at(p, &nl);
		if (l) {
			if (fn(p + 1, nl, arg) != 0)
				return -1;
			p += l - 1;
		}
	}
	return 0;
}

void sweep_shell_quote(const char *s, char *out, size_t len)
{
	bool plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || strchr("_-.,/:=+@%", *p);
	size_t k = 0;
	if (plain) {
		snprintf(out, len, "%s", s);
		return;
	}
	if (k + 1 < len)
		out[k++] = '\'';
	for (const char *p = s; *p && k + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(out + k, "'\\''", 4);
			k += 4;
		} else {
			out[k++] = *p;
		}
	}
	if (k + 1 < len)
		out[k++] = '\'';
	out[k < len ? k : len - 1] = '\0';
}

char *sweep_subst(const sweep_spec *sp, const sweep_config *c, const char *tmpl, bool shell,
                  gw_fail *err)
{
	gw_strbuf b = {0};
	for (const char *p = tmpl; *p;) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			gw_sb_put(&b, p, 1);
			p += 2;
			continue;
		}
		size_t nl, l = placeholder_at(p, &nl);
		if (!l) {
			gw_sb_put(&b, p++, 1);
			continue;
		}
		int v = -1;
		for (int i = 0; i < sp->nvars; i++)
			if (strlen(sp->vars[i].name) == nl && !strncmp(sp->vars[i].name, p + 1, nl))
				v = i;
		if (v < 0) {
			gw_fail_set(err, GW_EXIT_USAGE, c->name, NULL, "unknown placeholder {%.*s}",
			            (int)nl, p + 1);
			gw_sb_free(&b);
			return NULL;
		}
		const char *val = c->val[v];
		if (shell) {
			size_t qlen = strlen(val) * 4 + 3;
			char *q = gw_xmalloc(qlen);
			sweep_shell_quote(val, q, qlen);
			gw_sb_puts(&b, q);
			free(q);
		} else {
			gw_sb_puts(&b, val);
		}
		p += l;
	}
	return gw_sb_take(&b);
}

bool sweep_is_shell(char *const *argv, int argc, int *script)
{
	static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"};
	if (argc < 2)
		return false;
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	bool is_sh = false;
	for (size_t i = 0; i < sizeof shells / sizeof *shells; i++)
		is_sh |= !strcmp(base, shells[i]);
	if (!is_sh)
		return false;
	/* The script is the first operand after an option cluster holding c (-c, -ec, -lc). */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !strcmp(a, "--"))
			return false;
		if (a[1] != '-' && strchr(a, 'c')) {
			if (i + 1 >= argc)
				return false;
			*script = i + 1;
			return true;
		}
	}
	return false;
}

void sweep_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

char **sweep_argv(const sweep_spec *sp, const sweep_config *c, gw_fail *err)
{
	int script = -1;
	sweep_is_shell(sp->cmd, sp->ncmd, &script);
	char **v = gw_xcalloc((size_t)sp->ncmd + 1, sizeof *v);
	for (int i = 0; i < sp->ncmd; i++) {
		v[i] = sweep_subst(sp, c, sp->cmd[i], i == script, err);
		if (!v[i]) {
			sweep_strv_free(v);
			return NULL;
		}
	}
	return v;
}

char **sweep_envv(const sweep_spec *sp, const sweep_config *c, gw_fail *err)
{
	char **v = gw_xcalloc((size_t)sp->nenv + 1, sizeof *v);
	for (int i = 0; i < sp->nenv; i++) {
		v[i] = sweep_subst(sp, c, sp->env[i], false, err);
		if (!v[i]) {
			sweep_strv_free(v);
			return NULL;
		}
	}
	return v;
}
