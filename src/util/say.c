/*
 * say.c - stored English texts said in the user's language (see say.h).
 */
#include "util/say.h"

#include <stdio.h>
#include <string.h>

#include "util/i18n.h"

#define SAY_PARTS GW_SAY_PARTS

/* Split s by f's literal pieces into parts; true when s has f's shape. A
 * last_sep form's first part runs to the last separator, or to the one `back`
 * separators before it. */
static bool match(const gw_say_form *f, const char *s, char part[][512], int *np, int back)
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
			if (f->last_sep && *np == 0) {
				const char *at[64];
				int n = 0;
				for (const char *q = end; q && n < 64; q = strstr(q + 1, sep))
					at[n++] = q;
				if (back >= n)
					return false;
				end = at[n - 1 - back];
			}
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

/* A form of punctuation only ("%s (%s)", "%s; %s"): it joins texts, and any
 * text with a bracket or a semicolon has its shape. */
static bool generic(const gw_say_form *f)
{
	for (const char *p = f->form; *p; p++) {
		if (p[0] == '%' && p[1] == 's')
			p++;
		else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			return false;
	}
	return true;
}

/* Whether text has the shape of a form with words ("exit %s"). Strictly, a
 * last part that runs to the end of the text must be said too (empty, a
 * message, or a form in turn): "exit 1; retry 1 of 2 after 0s" is one, the same
 * followed by a program's own "(...)" is not. */
static bool form_of(const gw_say_form *forms, size_t nforms, const char *text, bool strict)
{
	char part[SAY_PARTS][512];
	int np;
	for (size_t i = 0; i < nforms; i++) {
		const gw_say_form *f = &forms[i];
		if (generic(f) || !match(f, text, part, &np, 0))
			continue;
		size_t fl = strlen(f->form);
		bool open = np > 0 && !f->num && fl >= 2 && !strcmp(f->form + fl - 2, "%s");
		const char *last = open ? part[np - 1] : "";
		if (!strict || !*last || strcmp(_(last), last) ||
		    form_of(forms, nforms, last, true))
			return true;
	}
	return false;
}

/* Match forms[i]; a list's first part that is no form may end at an earlier
 * separator (a program's own "(...)" inside the attempt's error, after the
 * queue's words). */
static bool match_best(const gw_say_form *forms, size_t nforms, size_t i, const char *text,
                       char part[][512], int *np)
{
	if (!match(&forms[i], text, part, np, 0))
		return false;
	if (!forms[i].last_sep || form_of(forms, nforms, part[0], true))
		return true;
	char alt[SAY_PARTS][512];
	int nalt;
	for (int back = 1; match(&forms[i], text, alt, &nalt, back); back++)
		if (form_of(forms, nforms, alt[0], true)) {
			memcpy(part, alt, sizeof alt);
			*np = nalt;
			break;
		}
	return true;
}

static const char *say(const gw_say_form *forms, size_t nforms, const char *text, char *out,
                       size_t len, int depth);

/* text as forms[i] with its parts said in turn. */
static const char *put(const gw_say_form *forms, size_t nforms, size_t i, char part[][512], int np,
                       char *out, size_t len, int depth)
{
	char said[SAY_PARTS][512];
	const char *a[SAY_PARTS] = {"", "", "", "", ""};
	for (int k = 0; k < np; k++)
		a[k] = say(forms, nforms, part[k], said[k], sizeof said[k], depth + 1);
	/* Translations may reorder the parts (%2$s): all are passed, in order. */
	snprintf(out, len, _(forms[i].form), a[0], a[1], a[2], a[3], a[4]);
	return out;
}

static const char *say(const gw_say_form *forms, size_t nforms, const char *text, char *out,
                       size_t len, int depth)
{
	char part[SAY_PARTS][512];
	int np;
	if (!gw_i18n_active() || depth > 6)
		return text;
	/* A join of a form and what follows it in brackets ("exit 1; retry ... (an
	 * attempt's error)") first: otherwise the form's last part would swallow
	 * the bracket. */
	for (size_t i = 0; i < nforms; i++)
		if (generic(&forms[i]) && forms[i].last_sep &&
		    match_best(forms, nforms, i, text, part, &np) &&
		    form_of(forms, nforms, part[0], true))
			return put(forms, nforms, i, part, np, out, len, depth);
	for (size_t i = 0; i < nforms; i++) {
		if (!match_best(forms, nforms, i, text, part, &np))
			continue;
		/* A joining form applies only where it joins something said: a
		 * program's own words with brackets in them (an OOM line) stay as
		 * they are. */
		if (generic(&forms[i]) && strcmp(_(part[0]), part[0]) == 0 &&
		    !form_of(forms, nforms, part[0], false))
			continue;
		return put(forms, nforms, i, part, np, out, len, depth);
	}
	/* A word the faces translate anyway (a state name in "waiting for task 3
	 * (running)"). */
	return _(text);
}

const char *gw_say(const gw_say_form *forms, size_t nforms, const char *text, char *out, size_t len)
{
	return say(forms, nforms, text, out, len, 0);
}
