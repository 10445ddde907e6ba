/*
 * retry.c - what happens after an attempt ends. Pure.
 *
 * Policy (docs/queue.md, "Retries and out-of-memory"):
 *   exit 0 -> done; cancelled -> cancelled; timeout -> timeout (not retried:
 *   the same limit would be hit again); exit 126/127 (not executable, not
 *   found) -> failed at once. Anything else (non-zero exit, signal, lost,
 *   out of memory) is retried after the cooldown while attempts remain
 *   (1 + --retries). A GPU out-of-memory retry reserves more memory and
 *   halves the per-GPU cap, so the next attempt lands on a GPU with more
 *   free memory or shares it with fewer tasks.
 */
#include <stdio.h>
#include <string.h>

#include "queue/state.h"
#include "queue/oom.h"
#include "queue/retry.h"

const char *queue_seconds_text(double s, char *buf, size_t len)
{
	/* %g alone turns 3600 into "3.6e+03"; short delays keep their fraction. */
	snprintf(buf, len, s >= 100 ? "%.0f" : "%.3g", s);
	return buf;
}

static void describe_end(const queue_retry_in *in, char *out, size_t len)
{
	if (in->outcome == QO_LOST)
		snprintf(out, len, "lost (its process vanished without a status)");
	else if (in->oom == QOOM_GPU)
		snprintf(out, len, "GPU out of memory");
	else if (in->oom == QOOM_HOST)
		snprintf(out, len, "host out of memory");
	else if (in->signal > 0)
		snprintf(out, len, "killed by signal %d", in->signal);
	else if (in->exit_ok)
		snprintf(out, len, "exit %d", in->exit_code);
	else
		snprintf(out, len, "failed");
}

/* Reservation for the attempt after a GPU OOM; -1 when nothing is known to base it on. */
static int64_t oom_reservation(const queue_retry_in *in)
{
	int64_t grown = in->mem_mib >= 0 ? in->mem_mib + in->mem_mib / 2 : -1;
	if (in->peak_gpu_mib >= 0) {
		int64_t extra = in->tried_mib > 0 ? in->tried_mib : in->peak_gpu_mib / 4;
		if (in->peak_gpu_mib + extra > grown)
			grown = in->peak_gpu_mib + extra;
	} else if (in->tried_mib > 0 && in->mem_mib >= 0 && in->mem_mib + in->tried_mib > grown) {
		grown = in->mem_mib + in->tried_mib;
	}
	if (grown >= 0 && in->largest_gpu_mib > 0 && grown > in->largest_gpu_mib)
		grown = in->largest_gpu_mib;
	return grown;
}

void queue_retry_decide(const queue_retry_in *in, queue_retry_out *out)
{
	memset(out, 0, sizeof *out);
	out->mem_hint_mib = -1;
	char end[96];
	describe_end(in, end, sizeof end);
	switch (in->outcome) {
	case QO_DONE:
		out->next = QS_DONE;
		snprintf(out->why, sizeof out->why, "exit 0");
		return;
	case QO_CANCELLED:
		out->next = QS_CANCELLED;
		snprintf(out->why, sizeof out->why, "cancelled");
		return;
	case QO_NOT_STARTED:
		out->next = QS_QUEUED;
		snprintf(out->why, sizeof out->why,
		         "the attempt never started its command; queued again");
		return;
	case QO_TIMEOUT:
		out->next = QS_TIMEOUT;
		snprintf(out->why, sizeof out->why, "ran past its time limit (not retried)");
		return;
	default:
		break;
	}
	queue_state final = in->outcome == QO_LOST ? QS_LOST : QS_FAILED;
	if (in->outcome == QO_FAILED && in->exit_ok && in->signal == 0 &&
	    (in->exit_code == 126 || in->exit_code == 127)) {
		out->next = QS_FAILED;
		snprintf(out->why, sizeof out->why, "exit %d: command %s (not retried)",
		         in->exit_code, in->exit_code == 127 ? "not found" : "not executable");
		return;
	}
	int total = in->retries + 1;
	if (in->attempts_used >= total) {
		out->next = final;
		if (in->retries > 0)
			snprintf(out->why, sizeof out->why, "%s; no retry left (%d attempts)", end,
			         in->attempts_used);
		else
			snprintf(out->why, sizeof out->why, "%s", end);
		return;
	}
	out->next = QS_QUEUED;
	out->delay_ms = in->retry_delay_ms > 0 ? in->retry_delay_ms : 0;
	char how[120] = "";
	if (in->oom == QOOM_GPU) {
		out->mem_hint_mib = oom_reservation(in);
		out->per_gpu_hint = in->per_gpu > 1 ? in->per_gpu / 2 : 1;
		if (out->mem_hint_mib >= 0)
			snprintf(how, sizeof how,
			         " with %lld MiB reserved, at most %d task%s per GPU",
			         (long long)out->mem_hint_mib, out->per_gpu_hint,
			         out->per_gpu_hint == 1 ? "" : "s");
		else
			snprintf(how, sizeof how, " with at most %d task%s per GPU",
			         out->per_gpu_hint, out->per_gpu_hint == 1 ? "" : "s");
	}
	char secs[32];
	snprintf(out->why, sizeof out->why, "%s; retry %d of %d after %ss%s", end,
	         in->attempts_used, in->retries,
	         queue_seconds_text((double)out->delay_ms / 1000.0, secs, sizeof secs), how);
}
