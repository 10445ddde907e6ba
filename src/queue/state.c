/* state.c - task states, attempt outcomes and the transitions between them. */
#include <string.h>

#include "queue/state.h"
#include "util/i18n.h"

static const char *const state_names[QS__COUNT] = {
    [QS_QUEUED] = "queued",       [QS_SUBMITTED] = "submitted", [QS_RUNNING] = "running",
    [QS_DONE] = "done",           [QS_FAILED] = "failed",       [QS_TIMEOUT] = "timeout",
    [QS_CANCELLED] = "cancelled", [QS_LOST] = "lost",
};

const char *queue_state_name(queue_state s)
{
	return s < QS__COUNT ? state_names[s] : "?";
}

/* The same states as people read them (the stored names above stay English). */
static const char *const state_words[QS__COUNT] = {
    [QS_QUEUED] = N_("queued"),       [QS_SUBMITTED] = N_("submitted"),
    [QS_RUNNING] = N_("running"),     [QS_DONE] = N_("done"),
    [QS_FAILED] = N_("failed"),       [QS_TIMEOUT] = N_("timeout"),
    [QS_CANCELLED] = N_("cancelled"), [QS_LOST] = N_("lost"),
};

const char *queue_state_text(queue_state s)
{
	return s < QS__COUNT ? _(state_words[s]) : "?";
}

int queue_state_parse(const char *s)
{
	for (int i = 0; i < QS__COUNT; i++)
		if (s && !strcmp(s, state_names[i]))
			return i;
	return -1;
}

bool queue_state_final(queue_state s)
{
	return s == QS_DONE || s == QS_FAILED || s == QS_TIMEOUT || s == QS_CANCELLED ||
	       s == QS_LOST;
}

static const char *const outcome_names[QO__COUNT] = {
    [QO_NONE] = "",
    [QO_DONE] = "done",
    [QO_FAILED] = "failed",
    [QO_TIMEOUT] = "timeout",
    [QO_CANCELLED] = "cancelled",
    [QO_LOST] = "lost",
    [QO_NOT_STARTED] = "not_started",
};

const char *queue_outcome_name(queue_outcome o)
{
	return o < QO__COUNT ? outcome_names[o] : "?";
}

static const char *const outcome_words[QO__COUNT] = {
    [QO_NONE] = "",
    [QO_DONE] = N_("done"),
    [QO_FAILED] = N_("failed"),
    [QO_TIMEOUT] = N_("timeout"),
    [QO_CANCELLED] = N_("cancelled"),
    [QO_LOST] = N_("lost"),
    [QO_NOT_STARTED] = N_("not started"),
};

const char *queue_outcome_text(queue_outcome o)
{
	return o == QO_NONE ? "" : o < QO__COUNT ? _(outcome_words[o]) : "?";
}

int queue_outcome_parse(const char *s)
{
	if (!s)
		return QO_NONE;
	for (int i = 0; i < QO__COUNT; i++)
		if (!strcmp(s, outcome_names[i]))
			return i;
	return -1;
}

const char *queue_backend_name(queue_backend b)
{
	return b == QB_SLURM ? "slurm" : "local";
}

static bool active(queue_state s)
{
	return s == QS_RUNNING || s == QS_SUBMITTED;
}

int queue_transition(queue_state from, queue_event ev)
{
	switch (ev) {
	case QE_START:
		return from == QS_QUEUED ? QS_RUNNING : -1;
	case QE_SUBMIT:
		return from == QS_QUEUED ? QS_SUBMITTED : -1;
	case QE_BEGAN:
		return from == QS_SUBMITTED || from == QS_RUNNING ? QS_RUNNING : -1;
	case QE_CANCEL:
		/* An active task keeps its state until its process is gone: the
		 * record must not say cancelled while the command still runs. */
		if (from == QS_QUEUED)
			return QS_CANCELLED;
		return active(from) ? (int)from : -1;
	case QE_END_RETRY:
	case QE_NOT_STARTED:
		return active(from) ? QS_QUEUED : -1;
	case QE_END_DONE:
		return active(from) ? QS_DONE : -1;
	case QE_END_FAILED:
		return active(from) ? QS_FAILED : -1;
	case QE_END_TIMEOUT:
		return active(from) ? QS_TIMEOUT : -1;
	case QE_END_CANCEL:
		return active(from) ? QS_CANCELLED : -1;
	case QE_END_LOST:
		return active(from) ? QS_LOST : -1;
	case QE_RETRY:
		return queue_state_final(from) ? QS_QUEUED : -1;
	case QE_DEP_FAILED:
		return from == QS_QUEUED ? QS_FAILED : -1;
	case QE__COUNT:
		break;
	}
	return -1;
}
