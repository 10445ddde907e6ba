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
#include "cmd/queue_cmd.h"
#include "util/i18n.h"
#include "util/say.h"

/* The forms of src/queue (retry.c, conclude.c, local.c, place.c, sched.c), the
 * longer before the shorter they begin with. */
static const gw_say_form forms[] = {
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

const char *qcmd_say(const char *text, char *out, size_t len)
{
	return gw_say(forms, sizeof forms / sizeof *forms, text, out, len);
}
