/*
 * subst.h - a configuration's values put into the command and --env's
 * templates: placeholders, argv, shell quoting (subst.c). Pure.
 */
#ifndef GPUWHY_SWEEP_SUBST_H
#define GPUWHY_SWEEP_SUBST_H

#include <stdbool.h>
#include <stddef.h>

#include "util/fail.h"

#include "sweep/plan.h"

/*
 * Substitute {name} in tmpl with the configuration's values; {{ and }} are
 * literal braces. shell: the template is a shell script, so values are
 * single-quoted. Returns a malloc'd string, or NULL with *err filled (the
 * configuration, an unknown placeholder).
 */
char *sweep_subst(const sweep_spec *sp, const sweep_config *c, const char *tmpl, bool shell,
                  gw_fail *err);
/* The placeholders of tmpl, for checking: calls fn for each name. */
int sweep_placeholders(const char *tmpl, int (*fn)(const char *name, size_t len, void *arg),
                       void *arg);
/* argv for a configuration: the command with values put in (NULL-terminated, malloc'd). */
char **sweep_argv(const sweep_spec *sp, const sweep_config *c, gw_fail *err);
/* NAME=VALUE strings of --env for a configuration. */
char **sweep_envv(const sweep_spec *sp, const sweep_config *c, gw_fail *err);
void sweep_strv_free(char **v);
/* True when argv runs a shell script given with -c (its script is argv[i] at *script). */
bool sweep_is_shell(char *const *argv, int argc, int *script);
/* Append s to out as one shell word (quoted only when it needs it). */
void sweep_shell_quote(const char *s, char *out, size_t len);

#endif
