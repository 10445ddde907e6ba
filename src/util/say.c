/*
 * say.c - stored English texts said in the user's language (see say.h).
 */
#include "util/say.h"

#include <stdio.h>
#include <string.h>

#include "util/i18n.h"

#define SAY_PARTS GW_SAY_PARTS

/* Split s by f's literal pieces into parts; true when s has f's shape. */
static bool match(const gw_say_form *f, const char *s, char part[][512], int *np)
{
	const char *p = f->form;
	*np = 0;
	while (*p) {
		const char *conv = strstr(p, "%s");
		size_t lit = conv ? (size_t)(conv - p) : strlen(p);
		if (strncmp(s, p, lit))
			return false;
		s += lit;
		p += lit;
		if (!conv)
			return *s == '\0';
		p += 2;
		/* The part runs to the next literal piece (or to the end). */
		const char *next = strstr(p, "%s");
		size_t nl = next ? (size_t)(next - p) : strlen(p);
		const char *end;
		if (nl == 0) {
			if (*p)
				return false; /* two parts in a row: no form has them */
			end = s + strlen(s);
			if (*np == SAY_PARTS)
				return false;
			/* The last part may be empty (retry's " with ..." when there is none). */
			snprintf(part[(*np)++], 512, "%s", s);
			return !f->num || strspn(s, "0123456789.-") == strlen(s);
		} else {
			char sep[128];
			snprintf(sep, sizeof sep, "%.*s", (int)nl, p);
			end = strstr(s, sep);
			if (f->last_sep && *np == 0)
				for (const char *q = end; q; q = strstr(q + 1, sep))
					end = q;
			if (!next && end) /* a literal tail: it must end the text */
				for (const char *q = end; q; q = strstr(q + 1, sep))
					end = q;
		}
		if (!end || end == s || *np == SAY_PARTS)
			return false;
		snprintf(part[*np], 512, "%.*s", (int)(end - s), s);
		if (f->num && strspn(part[*np], "0123456789.-") != strlen(part[*np]))
			return false;
		(*np)++;
		s = end;
	}
	return *s == '\0';
}

static const char *say(const gw_say_form *forms, size_t nforms, const char *text, char *out,
                       size_t len, int depth)
{
	char part[SAY_PARTS][512], said[SAY_PARTS][512];
	int np;
	if (!gw_i18n_active() || depth > 6)
		return text;
	for (size_t i = 0; i < nforms; i++) {
		if (!match(&forms[i], text, part, &np))
			continue;
		const char *a[SAY_PARTS] = {"", "", "", "", ""};
		for (int k = 0; k < np; k++)
			a[k] = say(forms, nforms, part[k], said[k], sizeof said[k], depth + 1);
		/* Translations may reorder the parts (%2$s): all are passed, in order. */
		snprintf(out, len, _(forms[i].form), a[0], a[1], a[2], a[3], a[4]);
		return out;
	}
	/* A word the faces translate anyway (a state name in "waiting for task 3
	 * (running)"). */
	return _(text);
}

const char *gw_say(const gw_say_form *forms, size_t nforms, const char *text, char *out, size_t len)
{
	return say(forms, nforms, text, out, len, 0);
}
