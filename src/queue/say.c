/*
 * say.c - the queue's stored texts in the user's language, where they are shown.
 *
 * The worker stores a task's error and wait reason in English (the JSON and the
 * worker's log keep them so, and a worker may run in another language than the
 * person who looks). Text output translates them here: each stored form is a
 * pattern below whose %s are its variable parts; a text that matches one is
 * printed as that pattern's translation with the parts in place, each part
 * translated in turn (an exit inside "...; no retry left"). Anything else, a
 * command's own error for one, is shown as stored.
 */
#include "queue/say.h"
#include "util/i18n.h"
#include "util/say.h"

/* The forms of src/queue (retry.c, conclude.c, local.c, spawn.c, slurmrun.c,
 * place.c, sched.c, store_task.c), the longer before the shorter they begin
 * with, the ones in parentheses of their own before conclude's "%s (%s)". */
static const gw_say_form forms[] = {
    {N_("%s; no retry left (%s attempts)"), false, false},
    {N_("%s; retry %s of %s after %ss%s"), false, false},
    {N_("%s; its orphaned process group %s was killed"), false, false},
    {N_("its shim (pid %s) ended without recording how the command ended"), false, true},
    {N_("Slurm ran this attempt %s times (job %s was started again, e.g. after a controller "
        "restart)"),
     false, false},
    {N_("Slurm: OUT_OF_MEMORY (host memory limit)"), false, false},
    {N_("Slurm: %s (time limit)"), false, false},
    {N_("Slurm no longer knows job %s"), false, false},
    {N_("sbatch failed: %s"), false, false},
    {N_("cannot write %s: %s"), false, false},
    {N_("cannot start: %s"), false, false},
    {N_("needs %s; the largest GPU has %s MiB"), false, false},
    {N_("needs %s; the queue sees %s usable GPU"), false, false},
    {N_("needs %s; the queue sees %s usable GPUs"), false, false},
    {N_("no GPU: NVML not available (see %s/worker.log)"), false, false},
    {N_("no usable GPU in the queue's view (see gpuwhy queue gpus)"), false, false},
    {N_("waiting for the first GPU sample"), false, false},
    {N_("waits for task %s, which does not exist"), false, true},
    {N_("task %s, which it waits for, ended %s"), false, false},
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
    {N_("no output"), false, false},
    /* the attempt's own error after another (an OOM line after an exec error) */
    {N_("%s; %s"), false, false},
};

const char *queue_say(const char *text, char *out, size_t len)
{
	return gw_say(forms, sizeof forms / sizeof *forms, text, out, len);
}
