/* listing.c - the queue's tasks, attempts and GPU view as JSON (`queue ls`, `show`, `gpus`). */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "queue/listing.h"
#include "queue/db.h"
#include "queue/oom.h"
#include "queue/retry.h"
#include "util/jsonw.h"

json_t *queue_jint(bool ok, long long v)
{
	return ok ? json_integer(v) : json_null();
}

json_t *queue_jtime(double t)
{
	return t > 0 ? json_real(floor(t * 1e6 + 0.5) / 1e6) : json_null();
}

json_t *queue_jstr(const char *s)
{
	json_t *v = s ? json_string(s) : NULL;
	return v ? v : json_null();
}

void queue_json_print(FILE *out, json_t *v, bool pretty)
{
	jsonw_tree_line(out, v, 16, pretty ? JSONW_TREE_PRETTY : 0);
	json_decref(v);
}

json_t *queue_task_json(const queue_task *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "name", queue_jstr(t->spec.name));
	json_t *av = json_array();
	for (int i = 0; i < t->spec.argc; i++)
		json_array_append_new(av, queue_jstr(t->spec.argv[i]));
	json_object_set_new(o, "argv", av);
	json_object_set_new(o, "cwd", queue_jstr(t->spec.cwd));
	json_object_set_new(o, "state", json_string(queue_state_name(t->state)));
	json_object_set_new(o, "backend", json_string(queue_backend_name(t->spec.backend)));
	json_object_set_new(o, "gpus", json_integer(t->spec.gpus));
	json_object_set_new(o, "mem_mib", queue_jint(t->spec.mem_mib >= 0, t->spec.mem_mib));
	json_object_set_new(o, "mem_hint_mib", queue_jint(t->mem_hint_mib >= 0, t->mem_hint_mib));
	json_object_set_new(o, "per_gpu", queue_jint(t->spec.per_gpu > 0, t->spec.per_gpu));
	json_object_set_new(o, "per_gpu_hint", queue_jint(t->per_gpu_hint > 0, t->per_gpu_hint));
	json_object_set_new(o, "retries", json_integer(t->spec.retries));
	json_object_set_new(o, "retry_delay_s", json_real((double)t->spec.retry_delay_ms / 1000.0));
	json_object_set_new(o, "timeout_s",
	                    t->spec.timeout_ms > 0 ? json_real((double)t->spec.timeout_ms / 1000.0)
	                                           : json_null());
	json_object_set_new(o, "after", queue_jint(t->spec.after_id > 0, t->spec.after_id));
	json_object_set_new(o, "attempts", json_integer(t->attempts));
	json_object_set_new(o, "oom_retries", json_integer(t->oom_count));
	json_object_set_new(o, "gpus_used",
	                    t->gpus_used[0] ? queue_jstr(t->gpus_used) : json_null());
	json_object_set_new(o, "submitted", queue_jtime(t->submitted));
	json_object_set_new(o, "started", queue_jtime(t->started));
	json_object_set_new(o, "ended", queue_jtime(t->ended));
	json_object_set_new(o, "not_before",
	                    queue_jtime(t->state == QS_QUEUED ? t->not_before : 0));
	json_object_set_new(o, "exit_code", queue_jint(t->exit_ok, t->exit_code));
	json_object_set_new(o, "signal", queue_jint(t->signal != 0, t->signal));
	json_object_set_new(o, "peak_gpu_mib", queue_jint(t->peak_gpu_mib >= 0, t->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", queue_jint(t->peak_rss_kib >= 0, t->peak_rss_kib));
	json_object_set_new(o, "error", t->error[0] ? queue_jstr(t->error) : json_null());
	json_object_set_new(o, "waiting",
	                    t->wait_reason[0] ? queue_jstr(t->wait_reason) : json_null());
	json_object_set_new(o, "cancel_requested", json_boolean(t->cancel_requested));
	json_object_set_new(o, "input", queue_jstr(t->spec.input));
	json_object_set_new(o, "output", queue_jstr(t->spec.output));
	return o;
}

static json_t *attempt_json(const queue_attempt *a)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer(a->n));
	json_object_set_new(o, "token", queue_jstr(a->token));
	json_object_set_new(o, "outcome",
	                    a->outcome != QO_NONE ? json_string(queue_outcome_name(a->outcome))
	                                          : json_null());
	json_object_set_new(o, "backend", json_string(queue_backend_name(a->backend)));
	json_object_set_new(o, "slurm_job",
	                    a->slurm_job[0] ? queue_jstr(a->slurm_job) : json_null());
	json_object_set_new(o, "slurm_state",
	                    a->slurm_state[0] ? queue_jstr(a->slurm_state) : json_null());
	json_object_set_new(o, "gpus", a->gpu_idx[0] ? queue_jstr(a->gpu_idx) : json_null());
	json_object_set_new(o, "gpu_uuids",
	                    a->gpu_uuids[0] ? queue_jstr(a->gpu_uuids) : json_null());
	json_object_set_new(o, "reserved_mib", queue_jint(a->reserved_mib >= 0, a->reserved_mib));
	json_object_set_new(o, "per_gpu", queue_jint(a->per_gpu > 0, a->per_gpu));
	json_object_set_new(o, "started", queue_jtime(a->started));
	json_object_set_new(o, "ended", queue_jtime(a->ended));
	json_object_set_new(o, "exit_code", queue_jint(a->exit_ok, a->exit_code));
	json_object_set_new(o, "signal", queue_jint(a->signal != 0, a->signal));
	json_object_set_new(o, "oom",
	                    a->oom == QOOM_GPU    ? json_string("gpu")
	                    : a->oom == QOOM_HOST ? json_string("host")
	                                          : json_null());
	json_object_set_new(o, "peak_gpu_mib", queue_jint(a->peak_gpu_mib >= 0, a->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", queue_jint(a->peak_rss_kib >= 0, a->peak_rss_kib));
	json_object_set_new(o, "runs", json_integer(a->runs));
	json_object_set_new(o, "shim_pid", queue_jint(a->shim_pid > 0, a->shim_pid));
	json_object_set_new(o, "error", a->error[0] ? queue_jstr(a->error) : json_null());
	return o;
}

json_t *queue_ls_json(const queue_task *t, int n)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, queue_task_json(&t[i]));
	return arr;
}

json_t *queue_show_json(const queue_task *t, const queue_attempt *at, int na, const char *logp,
                        const char *tail)
{
	json_t *o = json_object();
	json_object_set_new(o, "task", queue_task_json(t));
	json_t *arr = json_array();
	for (int i = 0; i < na; i++)
		json_array_append_new(arr, attempt_json(&at[i]));
	json_object_set_new(o, "attempts", arr);
	json_object_set_new(o, "log", queue_jstr(logp));
	/* Logs are bytes: a tail that is not UTF-8 is shown as null rather than mangled. */
	json_object_set_new(o, "log_tail", queue_jstr(tail));
	return o;
}

json_t *queue_gpus_json(const queue_gpu_row *rows, int n, double t, int wpid)
{
	json_t *o = json_object();
	json_object_set_new(o, "worker_pid", queue_jint(wpid > 0, wpid));
	json_object_set_new(o, "time", queue_jtime(t));
	json_t *arr = json_array();
	for (int i = 0; i < n; i++) {
		const queue_gpu_row *r = &rows[i];
		json_t *g = json_object();
		json_object_set_new(g, "index", json_integer(r->index));
		json_object_set_new(g, "uuid", queue_jstr(r->uuid));
		json_object_set_new(g, "name", queue_jstr(r->name));
		json_object_set_new(g, "total_mib", queue_jint(r->total_mib >= 0, r->total_mib));
		json_object_set_new(g, "free_mib", queue_jint(r->free_mib >= 0, r->free_mib));
		json_object_set_new(g, "pending_mib",
		                    queue_jint(r->pending_mib >= 0, r->pending_mib));
		json_object_set_new(g, "available_mib",
		                    queue_jint(r->avail_mib != INT64_MIN, r->avail_mib));
		json_object_set_new(g, "tasks", json_integer(r->ntasks));
		json_object_set_new(g, "task_ids", queue_jstr(r->tasks));
		json_object_set_new(g, "cap", queue_jint(r->cap > 0, r->cap));
		json_object_set_new(g, "foreign_processes", json_integer(r->foreign));
		json_object_set_new(g, "state", queue_jstr(r->state));
		json_array_append_new(arr, g);
	}
	json_object_set_new(o, "gpus", arr);
	return o;
}
