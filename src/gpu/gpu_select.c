/* gpu_select.c - --gpus: indices, full or short UUIDs, against the GPUs present. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu/gpu.h"
#include "util/i18n.h"

static bool uuid_matches(const char *uuid, const char *want, bool *exact)
{
	const char *u = uuid, *w = want;
	if (!strncasecmp(u, "GPU-", 4))
		u += 4;
	if (!strncasecmp(w, "GPU-", 4))
		w += 4;
	size_t wl = strlen(w);
	if (wl == 0)
		return false;
	*exact = strcasecmp(u, w) == 0;
	return strncasecmp(u, w, wl) == 0;
}

/* Trim the spaces around a list entry in place. */
static char *trim(char *tok)
{
	while (*tok == ' ')
		tok++;
	char *end = tok + strlen(tok);
	while (end > tok && end[-1] == ' ')
		*--end = '\0';
	return tok;
}

/* The GPU one entry names: an index, or the one UUID it starts (or is). -1 with err. */
static int resolve_entry(const char *tok, const gpu_ident *ids, int n, char *err, int errlen)
{
	char *e;
	long v = strtol(tok, &e, 10);
	bool numeric = !*e && tok[0] != '-' && tok[0] != '+';
	if (numeric && v < n)
		return (int)v;
	int idx = -1, matches = 0;
	for (int k = 0; k < n; k++) {
		bool exact = false;
		if (!uuid_matches(ids[k].uuid, tok, &exact))
			continue;
		idx = k;
		if (exact)
			return k;
		matches++;
	}
	if (matches == 1)
		return idx;
	if (matches == 0 && numeric)
		/* All digits and no UUID starts so: it was meant as an index. */
		snprintf(err, (size_t)errlen,
		         P_("GPU index %s does not exist (%d GPU)",
		            "GPU index %s does not exist (%d GPUs)", n),
		         tok, n);
	else if (matches == 0)
		snprintf(err, (size_t)errlen, _("no GPU has a UUID starting with '%s'"), tok);
	else
		snprintf(err, (size_t)errlen, _("'%s' matches %d GPUs: give more of the UUID"), tok,
		         matches);
	return -1;
}

bool gpu_selection_is_empty(const char *list)
{
	for (const char *p = list; *p; p++)
		if (*p != ' ' && *p != ',')
			return false;
	return true;
}

int gpu_parse_selection(const char *list, const gpu_ident *ids, int n, int *sel, int max_sel,
                        char *err, int errlen)
{
	char *copy = strdup(list);
	if (!copy) {
		snprintf(err, (size_t)errlen, "%s", _("out of memory"));
		return -1;
	}
	int cnt = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		tok = trim(tok);
		if (!*tok)
			continue;
		int idx = resolve_entry(tok, ids, n, err, errlen);
		if (idx < 0) {
			free(copy);
			return -1;
		}
		bool dup = false;
		for (int k = 0; k < cnt; k++)
			dup |= sel[k] == idx;
		if (!dup && cnt < max_sel)
			sel[cnt++] = idx;
	}
	free(copy);
	if (cnt == 0) {
		snprintf(err, (size_t)errlen, "%s", _("empty GPU list"));
		return -1;
	}
	return cnt;
}
