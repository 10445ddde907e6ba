/*
 * say.h - a text stored in English, said in the user's language where it is shown.
 *
 * Some texts are kept in English where they are made (a queue's stored error, a
 * trace reader's error: JSON and logs keep them so) and translated only where a
 * person reads them. Each stored form is a pattern whose %s are its variable
 * parts; a text that matches one is printed as that pattern's translation with
 * the parts in place, each part translated in turn by the same table. Anything
 * else is shown as stored (or as its own translation, when it is a message).
 * A form of punctuation only (a join: "%s (%s)", "%s; %s") applies only where its
 * first part is said, so a program's own words with brackets in them (an OOM
 * line) stay as they came; a join whose first part is a form goes before that
 * form, whose open last part would otherwise swallow the bracket.
 */
#ifndef GPUWHY_UTIL_SAY_H
#define GPUWHY_UTIL_SAY_H

#include <stdbool.h>
#include <stddef.h>

#define GW_SAY_PARTS 5

typedef struct {
	const char *form; /* the stored English with %s for each part, marked N_() */
	bool last_sep;    /* the first part runs to the last separator (a list) */
	bool num;         /* every part is a number */
} gw_say_form;

/* text in the user's language: out (len bytes), or text itself. Forms that
 * begin alike go longer first. */
const char *gw_say(const gw_say_form *forms, size_t nforms, const char *text, char *out,
                   size_t len);

#endif
