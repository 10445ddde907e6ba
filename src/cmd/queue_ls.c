/* queue_ls.c - `gpuwhy queue ls` and `gpuwhy queue show`: tasks as a table or JSON. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/state.h"
#include "queue/oom.h"
#include "queue/retry.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/textwidth.h"
#include "util/termsafe.h"
#include "util/timeutil.h"

static json_t *task_json(const queue_task *t)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer(t->id));
	json_object_set_new(o, "name", qcmd_jstr(t->spec.name));
	json_t *av = json_array();
	for (int i = 0; i < t->spec.argc; i++)
		json_array_append_new(av, qcmd_jstr(t->spec.argv[i]));
	json_object_set_new(o, "argv", av);
	json_object_set_new(o, "cwd", qcmd_jstr(t->spec.cwd));
	json_object_set_new(o, "state", json_string(queue_state_name(t->state)));
	json_object_set_new(o, "backend", json_string(queue_backend_name(t->spec.backend)));
	json_object_set_new(o, "gpus", json_integer(t->spec.gpus));
	json_object_set_new(o, "mem_mib", qcmd_jint(t->spec.mem_mib >= 0, t->spec.mem_mib));
	json_object_set_new(o, "mem_hint_mib", qcmd_jint(t->mem_hint_mib >= 0, t->mem_hint_mib));
	json_object_set_new(o, "per_gpu", qcmd_jint(t->spec.per_gpu > 0, t->spec.per_gpu));
	json_object_set_new(o, "per_gpu_hint", qcmd_jint(t->per_gpu_hint > 0, t->per_gpu_hint));
	json_object_set_new(o, "retries", json_integer(t->spec.retries));
	json_object_set_new(o, "retry_delay_s", json_real((double)t->spec.retry_delay_ms / 1000.0));
	json_object_set_new(o, "timeout_s",
	                    t->spec.timeout_ms > 0 ? json_real((double)t->spec.timeout_ms / 1000.0)
	                                           : json_null());
	json_object_set_new(o, "after", qcmd_jint(t->spec.after_id > 0, t->spec.after_id));
	json_object_set_new(o, "attempts", json_integer(t->attempts));
	json_object_set_new(o, "oom_retries", json_integer(t->oom_count));
	json_object_set_new(o, "gpus_used",
	                    t->gpus_used[0] ? qcmd_jstr(t->gpus_used) : json_null());
	json_object_set_new(o, "submitted", qcmd_jtime(t->submitted));
	json_object_set_new(o, "started", qcmd_jtime(t->started));
	json_object_set_new(o, "ended", qcmd_jtime(t->ended));
	json_object_set_new(o, "not_before", qcmd_jtime(t->state == QS_QUEUED ? t->not_before : 0));
	json_object_set_new(o, "exit_code", qcmd_jint(t->exit_ok, t->exit_code));
	json_object_set_new(o, "signal", qcmd_jint(t->signal != 0, t->signal));
	json_object_set_new(o, "peak_gpu_mib", qcmd_jint(t->peak_gpu_mib >= 0, t->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", qcmd_jint(t->peak_rss_kib >= 0, t->peak_rss_kib));
	json_object_set_new(o, "error", t->error[0] ? qcmd_jstr(t->error) : json_null());
	json_object_set_new(o, "waiting",
	                    t->wait_reason[0] ? qcmd_jstr(t->wait_reason) : json_null());
	json_object_set_new(o, "cancel_requested", json_boolean(t->cancel_requested));
	json_object_set_new(o, "input", qcmd_jstr(t->spec.input));
	json_object_set_new(o, "output", qcmd_jstr(t->spec.output));
	return o;
}

static void task_command(const queue_task *t, char *out, size_t len)
{
	/* sh -c LINE shows as the line: that is what the user wrote. */
	if (t->spec.argc == 3 && !strcmp(t->spec.argv[0], "sh") && !strcmp(t->spec.argv[1], "-c")) {
		snprintf(out, len, "%s", t->spec.argv[2]);
		return;
	}
	char *s = queue_argv_to_shell(t->spec.argv, t->spec.argc);
	snprintf(out, len, "%s", s);
	free(s);
}

static void task_info(const queue_task *t, char *out, size_t len)
{
	if (t->state == QS_QUEUED)
		snprintf(out, len, "%s",
		         t->wait_reason[0] ? qcmd_say(t->wait_reason, (char[1024]){0}, 1024) : "");
	else if (t->state == QS_DONE)
		snprintf(out, len, _("exit %d"), 0);
	else if (t->error[0])
		snprintf(out, len, "%s", qcmd_say(t->error, (char[1024]){0}, 1024));
	else if (t->signal)
		snprintf(out, len, _("signal %d"), t->signal);
	else if (t->exit_ok && queue_state_final(t->state))
		snprintf(out, len, _("exit %d"), t->exit_code);
	else
		out[0] = '\0';
	for (char *p = out; *p; p++)
		if (*p == '\n')
			*p = ' ';
}

static int set_state(const opt_def *o, const char *v, void *ctx)
{
	(void)o;
	int *state = ctx;
	*state = queue_state_parse(v);
	if (*state < 0)
		return gw_error(
		    GW_EXIT_USAGE, "--state",
		    N_("queued, submitted, running, done, failed, timeout, cancelled or lost"),
		    _("unknown state '%s'"), v);
	return 0;
}

int qcmd_ls(const char *dir, int argc, char **argv, const gw_global *g)
{
	bool json = false;
	int state = -1, fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {
	    OPT_FORMAT_TJ(&fmt), OPT_FLAG('j', "json", &json, "the same as --format json"),
	    OPT_CALL('s', "state", "STATE", set_state,
	             "only tasks in STATE: queued, submitted, running, done, failed, timeout, "
	             "cancelled or lost"),
	    OPT_END};
	const opt_cmd oc = {.name = "queue ls",
	                    .usage = "queue ls [--format json] [--state STATE]",
	                    .about = N_("Lists the tasks, oldest first."),
	                    .opts = opts,
	                    .ctx = &state};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	json |= fmt == OPT_FMT_JSON;
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	queue_task *t;
	int n;
	if (queue_db_list(st, state, &t, &n) != 0) {
		queue_db_close(st);
		return GW_EXIT_ENV;
	}
	if (json) {
		json_t *arr = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(arr, task_json(&t[i]));
		qcmd_print_json(arr, false);
	} else {
		/* TRANSLATORS: the heads of `queue ls`'s columns: ID, state, attempts so far of the
		 * budget, GPUs, memory asked, peak GPU memory, run time, command, more. */
		printf("%5s  ", _("ID"));
		qcmd_cell(_("STATE"), 9, " ");
		qcmd_cell(_("TRY"), 5, " ");
		qcmd_cell(_("GPU"), 7, " ");
		qcmd_cell(_("MEM"), 6, " ");
		qcmd_cell(_("PEAK"), 6, " ");
		qcmd_cell(_("TIME"), 7, " ");
		qcmd_cell(_("COMMAND"), 32, " ");
		printf("%s\n", _("INFO"));
		double now = gw_wall_s();
		for (int i = 0; i < n; i++) {
			const queue_task *x = &t[i];
			char try[16], gpu[16], mem[16], peak[16], tm[16], info[600], label[160],
			    safe_cmd[GW_TERM_SAFE_LEN(160)], cmd[GW_TERM_SAFE_LEN(160)],
			    safe_info[GW_TERM_SAFE_LEN(600)];
			/* After `queue retry` the budget starts again from the attempts so far. */
			snprintf(try, sizeof try, "%d/%d", x->attempts,
			         x->budget_from + x->spec.retries + 1);
			if (x->gpus_used[0] && x->state != QS_QUEUED)
				snprintf(gpu, sizeof gpu, "%.7s", x->gpus_used);
			else
				snprintf(gpu, sizeof gpu, x->spec.gpus ? "%dx" : "cpu",
				         x->spec.gpus);
			int64_t m =
			    x->mem_hint_mib > x->spec.mem_mib ? x->mem_hint_mib : x->spec.mem_mib;
			qcmd_mib(m, mem, sizeof mem);
			qcmd_mib(x->peak_gpu_mib, peak, sizeof peak);
			double dur = x->started <= 0               ? -1
			             : x->ended > x->started       ? x->ended - x->started
			             : queue_state_final(x->state) ? -1
			                                           : now - x->started;
			qcmd_dur(dur, tm, sizeof tm);
			task_command(x, label, sizeof label);
			task_info(x, info, sizeof info);
			/* Names, commands and errors come from the task: never raw to a terminal;
			 * the command is cut by display columns, between characters. */
			gw_term_safe(x->spec.name[0] ? x->spec.name : label, safe_cmd,
			             sizeof safe_cmd);
			gw_text_trunc(cmd, sizeof cmd, safe_cmd, 31, NULL);
			gw_term_safe(info, safe_info, sizeof safe_info);
			printf("%5lld  ", (long long)x->id);
			qcmd_cell(queue_state_text(x->state), 9, " ");
			printf("%-5s %-7s %-6s %-6s %-7s ", try, gpu, mem, peak, tm);
			qcmd_cell(cmd, 32, " ");
			printf("%s\n", safe_info);
		}
	}
	queue_tasks_free(t, n);
	queue_db_close(st);
	return GW_EXIT_OK;
}

/* Last n lines of text (pointer into it). */
static const char *last_lines(const char *text, size_t len, int n)
{
	if (len == 0)
		return text;
	const char *p = text + len;
	if (p[-1] == '\n')
		p--;
	int seen = 0;
	while (p > text) {
		if (p[-1] == '\n' && ++seen == n)
			break;
		p--;
	}
	return p;
}

static json_t *attempt_json(const queue_attempt *a)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer(a->n));
	json_object_set_new(o, "token", qcmd_jstr(a->token));
	json_object_set_new(o, "outcome",
	                    a->outcome != QO_NONE ? json_string(queue_outcome_name(a->outcome))
	                                          : json_null());
	json_object_set_new(o, "backend", json_string(queue_backend_name(a->backend)));
	json_object_set_new(o, "slurm_job",
	                    a->slurm_job[0] ? qcmd_jstr(a->slurm_job) : json_null());
	json_object_set_new(o, "slurm_state",
	                    a->slurm_state[0] ? qcmd_jstr(a->slurm_state) : json_null());
	json_object_set_new(o, "gpus", a->gpu_idx[0] ? qcmd_jstr(a->gpu_idx) : json_null());
	json_object_set_new(o, "gpu_uuids",
	                    a->gpu_uuids[0] ? qcmd_jstr(a->gpu_uuids) : json_null());
	json_object_set_new(o, "reserved_mib", qcmd_jint(a->reserved_mib >= 0, a->reserved_mib));
	json_object_set_new(o, "per_gpu", qcmd_jint(a->per_gpu > 0, a->per_gpu));
	json_object_set_new(o, "started", qcmd_jtime(a->started));
	json_object_set_new(o, "ended", qcmd_jtime(a->ended));
	json_object_set_new(o, "exit_code", qcmd_jint(a->exit_ok, a->exit_code));
	json_object_set_new(o, "signal", qcmd_jint(a->signal != 0, a->signal));
	json_object_set_new(o, "oom",
	                    a->oom == QOOM_GPU    ? json_string("gpu")
	                    : a->oom == QOOM_HOST ? json_string("host")
	                                          : json_null());
	json_object_set_new(o, "peak_gpu_mib", qcmd_jint(a->peak_gpu_mib >= 0, a->peak_gpu_mib));
	json_object_set_new(o, "peak_rss_kib", qcmd_jint(a->peak_rss_kib >= 0, a->peak_rss_kib));
	json_object_set_new(o, "runs", json_integer(a->runs));
	json_object_set_new(o, "shim_pid", qcmd_jint(a->shim_pid > 0, a->shim_pid));
	json_object_set_new(o, "error", a->error[0] ? qcmd_jstr(a->error) : json_null());
	return o;
}

/* A field's label of `show`, in a column of 11 (at least one space after it). */
static void field(const char *label)
{
	printf("  ");
	qcmd_cell(label, gw_text_width(label) < 11 ? 11 : gw_text_width(label) + 1, "");
}

/*
 * What the out-of-memory retries changed, from the attempts themselves: the
 * retries that happened (an attempt that ran out of GPU memory and was
 * followed by another) and what the latest attempt after one reserved. A
 * retry only planned (in its cooldown, or cancelled there) is no retry, and
 * its reservation, which no attempt used, is not named.
 */
static void show_oom_note(const queue_attempt *at, int na)
{
	int retries = 0;
	for (int i = 0; i + 1 < na; i++)
		retries += at[i].oom == QOOM_GPU;
	if (retries == 0)
		return;
	/* Hints persist, so the last attempt ran with all the earlier retries' changes. */
	const queue_attempt *x = &at[na - 1];
	char m[16];
	qcmd_mib(x->reserved_mib, m, sizeof m);
	field(_("after OOM"));
	if (x->reserved_mib >= 0 && x->per_gpu > 0)
		printf(_("attempt %d reserved %s, at most %d per GPU"), x->n, m, x->per_gpu);
	else if (x->reserved_mib >= 0)
		printf(_("attempt %d reserved %s"), x->n, m);
	else if (x->per_gpu > 0)
		printf(_("attempt %d reserved no memory, at most %d per GPU"), x->n, x->per_gpu);
	else
		printf(_("attempt %d reserved no memory"), x->n);
	printf(P_(" (%d OOM retry)\n", " (%d OOM retries)\n", retries), retries);
}

/* The task's fields as `show` prints them; everything the task brought is escaped. */
static void show_task_text(const queue_task *t, const queue_attempt *at, int na)
{
	char cmd[4096], a[64], b[64], m1[16], m2[16];
	task_command(t, cmd, sizeof cmd);
	/* Everything the task brought is escaped for the terminal. */
	char safe[GW_TERM_SAFE_LEN(4096)];
	printf(_("task %lld"), (long long)t->id);
	printf("%s%s\n", t->spec.name[0] ? "  " : "",
	       gw_term_safe(t->spec.name, safe, sizeof safe));
	field(_("command"));
	printf("%s\n", gw_term_safe(cmd, safe, sizeof safe));
	field(_("cwd"));
	printf("%s\n", gw_term_safe(t->spec.cwd ? t->spec.cwd : "-", safe, sizeof safe));
	field(_("state"));
	char secs[32];
	printf(P_("%s after %d attempt (retries %d, delay %ss)",
	          "%s after %d attempts (retries %d, delay %ss)", t->attempts),
	       queue_state_text(t->state), t->attempts, t->spec.retries,
	       queue_seconds_text((double)t->spec.retry_delay_ms / 1000.0, secs, sizeof secs));
	printf("%s\n",
	       t->cancel_requested && !queue_state_final(t->state) ? _(", cancel requested") : "");
	qcmd_mib(t->spec.mem_mib, m1, sizeof m1);
	field(_("request"));
	if (t->spec.gpus == 0)
		printf(_("%s, no GPU"), queue_backend_name(t->spec.backend));
	else
		printf(P_("%s, %d GPU, memory %s per GPU", "%s, %d GPUs, memory %s per GPU",
		          t->spec.gpus),
		       queue_backend_name(t->spec.backend), t->spec.gpus,
		       t->spec.mem_mib >= 0 ? m1 : _("not declared"));
	if (t->spec.per_gpu)
		printf(_(", at most %d per GPU"), t->spec.per_gpu);
	if (t->spec.timeout_ms)
		printf(_(", timeout %ss"),
		       queue_seconds_text((double)t->spec.timeout_ms / 1000.0, secs, sizeof secs));
	if (t->spec.after_id)
		printf(_(", after task %lld"), (long long)t->spec.after_id);
	putchar('\n');
	show_oom_note(at, na);
	if (t->spec.input || t->spec.output) {
		field(_("input"));
		printf("%s\n",
		       gw_term_safe(t->spec.input ? t->spec.input : "-", safe, sizeof safe));
		field(_("output"));
		printf("%s\n",
		       gw_term_safe(t->spec.output ? t->spec.output : "-", safe, sizeof safe));
	}
	qcmd_time(t->submitted, a, sizeof a);
	field(_("submitted"));
	printf("%s\n", a);
	qcmd_time(t->started, a, sizeof a);
	qcmd_time(t->ended, b, sizeof b);
	field(_("started"));
	printf("%s\n", a);
	field(_("ended"));
	printf("%s\n", b);
	if (t->exit_ok || t->signal) {
		field(_("exit"));
		if (t->signal)
			printf(_("signal %d"), t->signal);
		else
			printf("%d", t->exit_code);
		putchar('\n');
	}
	qcmd_mib(t->peak_gpu_mib, m1, sizeof m1);
	qcmd_kib(t->peak_rss_kib, m2, sizeof m2);
	field(_("peaks"));
	printf(_("GPU memory %s (on one GPU), host RSS %s\n"), m1, m2);
	field(_("GPUs"));
	printf("%s\n", t->gpus_used[0] ? t->gpus_used : "-");
	if (t->error[0]) {
		field(_("error"));
		printf("%s\n",
		       gw_term_safe(qcmd_say(t->error, (char[1024]){0}, 1024), safe, sizeof safe));
	}
	if (t->state == QS_QUEUED && t->wait_reason[0]) {
		field(_("waiting"));
		printf("%s\n", gw_term_safe(qcmd_say(t->wait_reason, (char[1024]){0}, 1024), safe,
		                            sizeof safe));
	}
}

/* Each attempt as a table row, then the last lines of the log. */
static void show_attempts_text(const queue_attempt *at, int na, const char *logp, const char *from,
                               int lines)
{
	char a[64], m1[16], m2[16], safe[GW_TERM_SAFE_LEN(4096)];
	if (na) {
		printf("  %s\n    ", _("attempts"));
		/* TRANSLATORS: the heads of `queue show`'s attempts: number, start, duration,
		 * GPUs used, exit, outcome, peak GPU memory, peak host RSS, note. */
		qcmd_cell("#", 3, " ");
		qcmd_cell(_("START"), 19, " ");
		qcmd_cell(_("DURATION"), 9, " ");
		qcmd_cell(_("GPUS"), 7, " ");
		qcmd_cell(_("EXIT"), 9, " ");
		qcmd_cell(_("OUTCOME"), 10, " ");
		qcmd_cell(_("GPU"), 6, " ");
		qcmd_cell(_("RSS"), 6, " ");
		printf("%s\n", _("NOTE"));
	}
	for (int i = 0; i < na; i++) {
		const queue_attempt *x = &at[i];
		char dur[16], ex[24], note[700];
		qcmd_time(x->started, a, sizeof a);
		qcmd_dur(x->ended > 0 ? x->ended - x->started : gw_wall_s() - x->started, dur,
		         sizeof dur);
		if (x->signal)
			snprintf(ex, sizeof ex, _("sig %d"), x->signal);
		else if (x->exit_ok)
			snprintf(ex, sizeof ex, "%d", x->exit_code);
		else
			snprintf(ex, sizeof ex, "-");
		qcmd_mib(x->peak_gpu_mib, m1, sizeof m1);
		qcmd_kib(x->peak_rss_kib, m2, sizeof m2);
		note[0] = '\0';
		if (x->slurm_job[0])
			snprintf(note, sizeof note, _("slurm job %s %s; "), x->slurm_job,
			         x->slurm_state);
		size_t nl = strlen(note);
		snprintf(note + nl, sizeof note - nl, "%s",
		         qcmd_say(x->error, (char[1024]){0}, 1024));
		printf("    %-3d %-19s %-9s %-7s ", x->n, a, dur, x->gpu_idx[0] ? x->gpu_idx : "-");
		qcmd_cell(ex, 9, " ");
		qcmd_cell(x->outcome != QO_NONE      ? queue_outcome_text(x->outcome)
		          : x->astate == QA_STARTING ? _("starting")
		                                     : _("running"),
		          10, " ");
		printf("%-6s %-6s %s\n", m1, m2, gw_term_safe(note, safe, sizeof safe));
	}
	if (lines > 0) {
		field(_("log"));
		printf(P_("%s (last %d line)\n", "%s (last %d lines)\n", lines), logp, lines);
		const char *p = from;
		while (*p) {
			size_t l = strcspn(p, "\n");
			printf("    %.*s\n", (int)l, p);
			p += l;
			if (*p)
				p++;
		}
	}
}

int qcmd_show(const char *dir, int argc, char **argv, const gw_global *g)
{
	bool json = false;
	int lines = 10, fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {OPT_FORMAT_TJ(&fmt),
	                        OPT_FLAG('j', "json", &json, "the same as --format json"),
	                        OPT_INT('l', "lines", "N", &lines, 0, 100000,
	                                "lines of the log's tail to show (default 10)",
	                                .why = N_("'%s' is not a count")),
	                        OPT_END};
	const opt_cmd oc = {.name = "queue show",
	                    .usage = "queue show ID [--format json] [--lines N]",
	                    .about =
	                        N_("A task's command, state, attempts, GPUs, peaks and log tail."),
	                    .opts = opts,
	                    .max_args = -1};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	json |= fmt == OPT_FMT_JSON;
	if (first + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "queue show", _("gpuwhy queue show ID"),
		                _("give one task id"));
	int64_t id;
	if (!qcmd_parse_id(argv[first], &id))
		return qcmd_bad_id(argv[first]);
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	queue_task t;
	rc = queue_db_get(st, id, &t);
	if (rc != 0) {
		queue_db_close(st);
		return rc > 0 ? gw_error(GW_EXIT_USAGE, argv[first], NULL, _("no such task"))
		              : GW_EXIT_ENV;
	}
	queue_attempt *at = NULL;
	int na = 0;
	queue_db_attempts(st, id, &at, &na);
	char logp[PATH_MAX];
	queue_log_path(dir, id, logp, sizeof logp);
	size_t len = 0;
	char *tail = queue_read_tail(logp, 0, 65536, &len);
	const char *from = tail ? last_lines(tail, len, lines) : "";
	if (lines == 0)
		from = tail ? tail + len : "";
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "task", task_json(&t));
		json_t *arr = json_array();
		for (int i = 0; i < na; i++)
			json_array_append_new(arr, attempt_json(&at[i]));
		json_object_set_new(o, "attempts", arr);
		json_object_set_new(o, "log", qcmd_jstr(logp));
		/* Logs are bytes: a tail that is not UTF-8 is shown as null rather than mangled. */
		json_object_set_new(o, "log_tail", qcmd_jstr(from));
		qcmd_print_json(o, true);
	} else {
		show_task_text(&t, at, na);
		show_attempts_text(at, na, logp, from, lines);
	}
	free(tail);
	free(at);
	queue_task_free(&t);
	queue_db_close(st);
	return GW_EXIT_OK;
}
