/*
 * place.c - which GPUs a task goes on. Pure: the worker builds the view.
 *
 * Memory is measured before a new task allocates anything, so a check of
 * free memory alone admits task after task onto a GPU that will run out
 * once they all allocate. The view therefore carries, per GPU, what placed
 * tasks reserved but have not yet allocated (pending), and that counts as
 * taken.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "queue/place.h"

int64_t queue_gpu_available(const queue_gpu_view *v)
{
	int64_t by_total = v->total_mib - v->held_mib - v->foreign_mib;
	if (v->free_ok) {
		int64_t by_free = v->free_mib - v->pending_mib;
		return v->total_ok && by_total < by_free ? by_total : by_free;
	}
	if (v->total_ok)
		return by_total;
	return -1;
}

/* Why GPU v cannot take r now (NULL when it can). */
static const char *blocker(const queue_gpu_view *v, const queue_place_req *r, char *buf, size_t len)
{
	if (!v->usable)
		return "is lost";
	if (v->drained)
		return "is drained";
	if (v->foreign > 0 && !r->allow_foreign) {
		snprintf(buf, len, "has %d foreign process%s", v->foreign,
		         v->foreign == 1 ? "" : "es");
		return buf;
	}
	if (v->ntasks >= r->per_gpu || (v->cap > 0 && v->ntasks >= v->cap)) {
		int cap = v->cap > 0 && v->cap < r->per_gpu ? v->cap : r->per_gpu;
		snprintf(buf, len, "runs %d task%s (cap %d)", v->ntasks, v->ntasks == 1 ? "" : "s",
		         cap);
		return buf;
	}
	if (r->mem_mib >= 0) {
		int64_t avail = queue_gpu_available(v);
		if (avail < 0)
			return "has unknown memory";
		if (avail < r->mem_mib) {
			snprintf(buf, len, "has %lld MiB available", (long long)avail);
			return buf;
		}
	}
	return NULL;
}

static void append(char *out, size_t len, const char *fmt, ...)
{
	size_t used = strlen(out);
	if (used + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out + used, len - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - used) {
		/* Truncated: end with an ellipsis so the reader knows. */
		if (len >= 4)
			memcpy(out + len - 4, "...", 4);
	}
}

static void describe_need(const queue_place_req *r, char *out, size_t len)
{
	if (r->mem_mib >= 0)
		snprintf(out, len, "%d GPU%s with %lld MiB", r->gpus, r->gpus == 1 ? "" : "s",
		         (long long)r->mem_mib);
	else
		snprintf(out, len, "%d GPU%s", r->gpus, r->gpus == 1 ? "" : "s");
}

queue_place_verdict queue_place(const queue_gpu_view *v, int n, const queue_place_req *r,
                                queue_place_result *out)
{
	memset(out, 0, sizeof *out);
	char need[96];
	describe_need(r, need, sizeof need);

	/* Could it ever fit here? Only lost GPUs and too-small ones rule a GPU out for good. */
	int possible = 0;
	for (int i = 0; i < n; i++)
		if (v[i].usable &&
		    (r->mem_mib < 0 || !v[i].total_ok || v[i].total_mib >= r->mem_mib))
			possible++;
	if (r->gpus < 1 || possible < r->gpus) {
		out->verdict = QP_NEVER;
		int64_t largest = -1;
		for (int i = 0; i < n; i++)
			if (v[i].usable && v[i].total_ok && v[i].total_mib > largest)
				largest = v[i].total_mib;
		if (r->mem_mib >= 0 && largest >= 0 && largest < r->mem_mib)
			snprintf(out->reason, sizeof out->reason,
			         "needs %s; the largest GPU has %lld MiB", need,
			         (long long)largest);
		else
			snprintf(out->reason, sizeof out->reason,
			         "needs %s; the queue sees %d usable GPU%s", need, possible,
			         possible == 1 ? "" : "s");
		return out->verdict;
	}

	/* Eligible GPUs, in the order they should be used. */
	int elig[GPU_MAX], ne = 0;
	for (int i = 0; i < n && ne < GPU_MAX; i++) {
		char buf[80];
		if (!blocker(&v[i], r, buf, sizeof buf))
			elig[ne++] = i;
	}
	if (r->mode == QP_SPREAD) {
		/* Fewest tasks first; the stable insertion sort keeps preference order on ties. */
		for (int a = 1; a < ne; a++) {
			int x = elig[a], b = a - 1;
			while (b >= 0 && v[elig[b]].ntasks > v[x].ntasks) {
				elig[b + 1] = elig[b];
				b--;
			}
			elig[b + 1] = x;
		}
	}
	if (ne >= r->gpus) {
		out->verdict = QP_OK;
		out->n = r->gpus;
		memcpy(out->pick, elig, (size_t)r->gpus * sizeof *elig);
		return out->verdict;
	}

	out->verdict = QP_WAIT;
	snprintf(out->reason, sizeof out->reason, "waiting for %s:", need);
	bool first = true;
	for (int i = 0; i < n; i++) {
		char buf[80];
		const char *why = blocker(&v[i], r, buf, sizeof buf);
		if (!why)
			continue;
		append(out->reason, sizeof out->reason, "%s GPU %d %s", first ? "" : ",",
		       v[i].index, why);
		first = false;
	}
	return out->verdict;
}
