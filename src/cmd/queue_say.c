/*
 * queue_say.c - the queue's stored texts in the user's language, where they are shown.
 *
 * The worker stores a task's error and wait reason in English (the JSON and the
 * worker's log keep them so, and a worker may run in another language than the
 * person who looks). Text output translates them here: each stored form is a
 * pattern below whose %s are its variable parts; a text that matches one is
 * printed as that pattern's translation with the parts in place, each part
 * translated in turn (an exit inside "...; no retry left"). Anything else, a
 * command's own error for one, is shown as stored.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd/queue_cmd.h"
#include "util/i18n.h"

#define SAY_PARTS 5

typedef struct {
	const char *form; /* the stored English with %s for each part */
	bool last_sep;    /* the first part runs to the last separator (a list) */
	bool num;         /* every part is a number */
} say_form;

/* The forms of src/queue (retry.c, conclude.c, local.c, place.c, sched.c), the
 * longer before the shorter they begin with. */
static const say_form forms[] = {
    {N_("%s; no retry left (%s attempts)"), false, false},
    {N_("%s; retry %s of %s after %ss%s"), false, false},
    {N_(" with %s MiB reserved, at most %s task per GPU"), false, true},
    {N_(" with %s MiB reserved, at most %s tasks per GPU"), false, true},
    {N_(" with at most %s task per GPU"), false, true},
    {N_(" with at most %s tasks per GPU"), false, true},
    {N_("exit %s: command not found (not retried)"), false, true},
    {N_("exit %s: command not executable (not retried)"), false, true},
    {N_("ran past its time limit (not retried)"), false, false},
    {N_("the attempt never started its command; queued again"), false, false},
    {N_("lost (its process vanished without a status)"), false, false},
    {N_("GPU out of memory"), false, false},
    {N_("host out of memory"), false, false},
    {N_("cancelled before it started"), false, false},
    {N_("cannot run the command: %s"), false, false},
    {N_("retry cooldown until %s"), false, false},
    {N_("waiting for task %s (%s)"), false, false},
    {N_("waiting for a CPU slot (%s in use)"), false, true},
    {N_("waiting for %s:%s"), false, false},
    {N_("%s, GPU %s %s"), true, false},
    {N_(" GPU %s %s"), false, false},
    {N_("runs %s task (cap %s)"), false, true},
    {N_("runs %s tasks (cap %s)"), false, true},
    /* conclude.c: the task's why, then its attempt's error */
    {N_("%s (%s)"), true, false},
    {N_("killed by signal %s"), false, true},
    {N_("exit %s"), false, true},
    {N_("%s GPU with %s MiB"), false, true},
    {N_("%s GPUs with %s MiB"), false, true},
    {N_("%s GPU"), false, true},
    {N_("%s GPUs"), false, true},
    {N_("is lost"), false, false},
    {N_("is drained"), false, false},
    {N_("has %s foreign process"), false, true},
    {N_("has %s foreign processes"), false, true},
    {N_("has unknown memory"), false, false},
    {N_("has %s MiB available"), false, true},
};

/* Split s by f's literal pieces into parts; true when s has f's shape. */
static bool match(const say_form *f, const char *s, char part[][512], int *np)
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

/* The stored text in the user's language: out, or the text itself. */
static const char *say(const char *text, char *out, size_t len, int depth)
{
	char part[SAY_PARTS][512], said[SAY_PARTS][512];
	int np;
	if (!gw_i18n_active() || depth > 6)
		return text;
	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
		if (!match(&forms[i], text, part, &np))
			continue;
		const char *a[SAY_PARTS] = {"", "", "", "", ""};
		for (int k = 0; k < np; k++)
			a[k] = say(part[k], said[k], sizeof said[k], depth + 1);
		/* Translations may reorder the parts (%2$s): all are passed, in order. */
		snprintf(out, len, _(forms[i].form), a[0], a[1], a[2], a[3], a[4]);
		return out;
	}
	/* A word the queue's faces translate anyway (a state name in "waiting for task 3
	 * (running)"). */
	return _(text);
}

const char *qcmd_say(const char *text, char *out, size_t len)
{
	return say(text, out, len, 0);
}
