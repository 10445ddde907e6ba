/*
 * listing_render.c - the queue's tasks, a task's attempts and log, and the GPU view as text
 * for people (`queue ls`, `show`, `gpus`). Everything a task brought (names, commands,
 * errors) is escaped for the terminal; stored English texts are said in the user's
 * language (say.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue/listing.h"
#include "queue/db.h"
#include "queue/oom.h"
#include "queue/retry.h"
#include "queue/say.h"
#include "queue/spec.h"
#include "util/i18n.h"
#include "util/termsafe.h"
#include "util/textwidth.h"
#include "util/timeutil.h"

static void cell(FILE *out, const char *s, int cols, const char *sep)
{
	fprintf(out, "%s%*s%s", s, gw_text_pad(s, cols), "", sep);
}

static void fmt_mib(int64_t mib, char *out, size_t len)
{
	if (mib < 0)
		snprintf(out, len, "-");
	else if (mib >= 1024)
		snprintf(out, len, "%.1fG", (double)mib / 1024.0);
	else
		snprintf(out, len, "%lldM", (long long)mib);
}

static void fmt_kib(int64_t kib, char *out, size_t len)
{
	fmt_mib(kib < 0 ? -1 : (kib + 1023) / 1024, out, len);
}

static void fmt_dur(double s, char *out, size_t len)
{
	if (s < 0)
		snprintf(out, len, "-");
	else if (s < 60)
		snprintf(out, len, "%.1fs", s);
	else if (s < 3600)
		snprintf(out, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(out, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void fmt_time(double t, char *out, size_t len)
{
	if (t <= 0) {
		snprintf(out, len, "-");
		return;
	}
	time_t s = (time_t)t;
	struct tm tm;
	localtime_r(&s, &tm);
	strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm);
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
		         t->wait_reason[0] ? queue_say(t->wait_reason, (char[1024]){0}, 1024) : "");
	else if (t->state == QS_DONE)
		snprintf(out, len, _("exit %d"), 0);
	else if (t->error[0])
		snprintf(out, len, "%s", queue_say(t->error, (char[1024]){0}, 1024));
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

void queue_ls_render(FILE *out, const queue_task *t, int n, double now)
{
	/* TRANSLATORS: the heads of `queue ls`'s columns: ID, state, attempts so far of the
	 * budget, GPUs, memory asked, peak GPU memory, run time, command, more. */
	fprintf(out, "%5s  ", _("ID"));
	cell(out, _("STATE"), 9, " ");
	cell(out, _("TRY"), 5, " ");
	cell(out, _("GPU"), 7, " ");
	cell(out, _("MEM"), 6, " ");
	cell(out, _("PEAK"), 6, " ");
	cell(out, _("TIME"), 7, " ");
	cell(out, _("COMMAND"), 32, " ");
	fprintf(out, "%s\n", _("INFO"));
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
			snprintf(gpu, sizeof gpu, x->spec.gpus ? "%dx" : "cpu", x->spec.gpus);
		int64_t m = x->mem_hint_mib > x->spec.mem_mib ? x->mem_hint_mib : x->spec.mem_mib;
		fmt_mib(m, mem, sizeof mem);
		fmt_mib(x->peak_gpu_mib, peak, sizeof peak);
		double dur = x->started <= 0               ? -1
		             : x->ended > x->started       ? x->ended - x->started
		             : queue_state_final(x->state) ? -1
		                                           : now - x->started;
		fmt_dur(dur, tm, sizeof tm);
		task_command(x, label, sizeof label);
		task_info(x, info, sizeof info);
		/* Names, commands and errors come from the task: never raw to a terminal;
		 * the command is cut by display columns, between characters. */
		gw_term_safe(x->spec.name[0] ? x->spec.name : label, safe_cmd, sizeof safe_cmd);
		gw_text_trunc(cmd, sizeof cmd, safe_cmd, 31, NULL);
		gw_term_safe(info, safe_info, sizeof safe_info);
		fprintf(out, "%5lld  ", (long long)x->id);
		cell(out, queue_state_text(x->state), 9, " ");
		fprintf(out, "%-5s %-7s %-6s %-6s %-7s ", try, gpu, mem, peak, tm);
		cell(out, cmd, 32, " ");
		fprintf(out, "%s\n", safe_info);
	}
}

/* Last n lines of text (pointer into it). */
const char *queue_last_lines(const char *text, size_t len, int n)
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

/* A field's label of `show`, in a column of 11 (at least one space after it). */
static void field(FILE *out, const char *label)
{
	fprintf(out, "  ");
	cell(out, label, gw_text_width(label) < 11 ? 11 : gw_text_width(label) + 1, "");
}

/*
 * What the out-of-memory retries changed, from the attempts themselves: the
 * retries that happened (an attempt that ran out of GPU memory and was
 * followed by another) and what the latest attempt after one reserved. A
 * retry only planned (in its cooldown, or cancelled there) is no retry, and
 * its reservation, which no attempt used, is not named.
 */
static void show_oom_note(FILE *out, const queue_attempt *at, int na)
{
	int retries = 0;
	for (int i = 0; i + 1 < na; i++)
		retries += at[i].oom == QOOM_GPU;
	if (retries == 0)
		return;
	/* Hints persist, so the last attempt ran with all the earlier retries' changes. */
	const queue_attempt *x = &at[na - 1];
	char m[16];
	fmt_mib(x->reserved_mib, m, sizeof m);
	field(out, _("after OOM"));
	if (x->reserved_mib >= 0 && x->per_gpu > 0)
		fprintf(out, _("attempt %d reserved %s, at most %d per GPU"), x->n, m, x->per_gpu);
	else if (x->reserved_mib >= 0)
		fprintf(out, _("attempt %d reserved %s"), x->n, m);
	else if (x->per_gpu > 0)
		fprintf(out, _("attempt %d reserved no memory, at most %d per GPU"), x->n,
		        x->per_gpu);
	else
		fprintf(out, _("attempt %d reserved no memory"), x->n);
	fprintf(out, P_(" (%d OOM retry)\n", " (%d OOM retries)\n", retries), retries);
}

/* The task's fields as `show` prints them; everything the task brought is escaped. */
static void show_task_text(FILE *out, const queue_task *t, const queue_attempt *at, int na)
{
	char cmd[4096], a[64], b[64], m1[16], m2[16];
	task_command(t, cmd, sizeof cmd);
	/* Everything the task brought is escaped for the terminal. */
	char safe[GW_TERM_SAFE_LEN(4096)];
	fprintf(out, _("task %lld"), (long long)t->id);
	fprintf(out, "%s%s\n", t->spec.name[0] ? "  " : "",
	        gw_term_safe(t->spec.name, safe, sizeof safe));
	field(out, _("command"));
	fprintf(out, "%s\n", gw_term_safe(cmd, safe, sizeof safe));
	field(out, _("cwd"));
	fprintf(out, "%s\n", gw_term_safe(t->spec.cwd ? t->spec.cwd : "-", safe, sizeof safe));
	field(out, _("state"));
	char secs[32];
	fprintf(out,
	        P_("%s after %d attempt (retries %d, delay %ss)",
	           "%s after %d attempts (retries %d, delay %ss)", t->attempts),
	        queue_state_text(t->state), t->attempts, t->spec.retries,
	        queue_seconds_text((double)t->spec.retry_delay_ms / 1000.0, secs, sizeof secs));
	fprintf(out, "%s\n",
	        t->cancel_requested && !queue_state_final(t->state) ? _(", cancel requested") : "");
	fmt_mib(t->spec.mem_mib, m1, sizeof m1);
	field(out, _("request"));
	if (t->spec.gpus == 0)
		fprintf(out, _("%s, no GPU"), queue_backend_name(t->spec.backend));
	else
		fprintf(out,
		        P_("%s, %d GPU, memory %s per GPU", "%s, %d GPUs, memory %s per GPU",
		           t->spec.gpus),
		        queue_backend_name(t->spec.backend), t->spec.gpus,
		        t->spec.mem_mib >= 0 ? m1 : _("not declared"));
	if (t->spec.per_gpu)
		fprintf(out, _(", at most %d per GPU"), t->spec.per_gpu);
	if (t->spec.timeout_ms)
		fprintf(out, _(", timeout %ss"),
		        queue_seconds_text((double)t->spec.timeout_ms / 1000.0, secs, sizeof secs));
	if (t->spec.after_id)
		fprintf(out, _(", after task %lld"), (long long)t->spec.after_id);
	fputc('\n', out);
	show_oom_note(out, at, na);
	if (t->spec.input || t->spec.output) {
		field(out, _("input"));
		fprintf(out, "%s\n",
		        gw_term_safe(t->spec.input ? t->spec.input : "-", safe, sizeof safe));
		field(out, _("output"));
		fprintf(out, "%s\n",
		        gw_term_safe(t->spec.output ? t->spec.output : "-", safe, sizeof safe));
	}
	fmt_time(t->submitted, a, sizeof a);
	field(out, _("submitted"));
	fprintf(out, "%s\n", a);
	fmt_time(t->started, a, sizeof a);
	fmt_time(t->ended, b, sizeof b);
	field(out, _("started"));
	fprintf(out, "%s\n", a);
	field(out, _("ended"));
	fprintf(out, "%s\n", b);
	if (t->exit_ok || t->signal) {
		field(out, _("exit"));
		if (t->signal)
			fprintf(out, _("signal %d"), t->signal);
		else
			fprintf(out, "%d", t->exit_code);
		fputc('\n', out);
	}
	fmt_mib(t->peak_gpu_mib, m1, sizeof m1);
	fmt_kib(t->peak_rss_kib, m2, sizeof m2);
	field(out, _("peaks"));
	fprintf(out, _("GPU memory %s (on one GPU), host RSS %s\n"), m1, m2);
	field(out, _("GPUs"));
	fprintf(out, "%s\n", t->gpus_used[0] ? t->gpus_used : "-");
	if (t->error[0]) {
		field(out, _("error"));
		fprintf(
		    out, "%s\n",
		    gw_term_safe(queue_say(t->error, (char[1024]){0}, 1024), safe, sizeof safe));
	}
	if (t->state == QS_QUEUED && t->wait_reason[0]) {
		field(out, _("waiting"));
		fprintf(out, "%s\n",
		        gw_term_safe(queue_say(t->wait_reason, (char[1024]){0}, 1024), safe,
		                     sizeof safe));
	}
}

/* Each attempt as a table row, then the last lines of the log. */
static void show_attempts_text(FILE *out, const queue_attempt *at, int na, const char *logp,
                               const char *from, int lines)
{
	char a[64], m1[16], m2[16], safe[GW_TERM_SAFE_LEN(4096)];
	if (na) {
		fprintf(out, "  %s\n    ", _("attempts"));
		/* TRANSLATORS: the heads of `queue show`'s attempts: number, start, duration,
		 * GPUs used, exit, outcome, peak GPU memory, peak host RSS, note. */
		cell(out, "#", 3, " ");
		cell(out, _("START"), 19, " ");
		cell(out, _("DURATION"), 9, " ");
		cell(out, _("GPUS"), 7, " ");
		cell(out, _("EXIT"), 9, " ");
		cell(out, _("OUTCOME"), 10, " ");
		cell(out, _("GPU"), 6, " ");
		cell(out, _("RSS"), 6, " ");
		fprintf(out, "%s\n", _("NOTE"));
	}
	for (int i = 0; i < na; i++) {
		const queue_attempt *x = &at[i];
		char dur[16], ex[24], note[700];
		fmt_time(x->started, a, sizeof a);
		fmt_dur(x->ended > 0 ? x->ended - x->started : gw_wall_s() - x->started, dur,
		        sizeof dur);
		if (x->signal)
			snprintf(ex, sizeof ex, _("sig %d"), x->signal);
		else if (x->exit_ok)
			snprintf(ex, sizeof ex, "%d", x->exit_code);
		else
			snprintf(ex, sizeof ex, "-");
		fmt_mib(x->peak_gpu_mib, m1, sizeof m1);
		fmt_kib(x->peak_rss_kib, m2, sizeof m2);
		note[0] = '\0';
		if (x->slurm_job[0])
			snprintf(note, sizeof note, _("slurm job %s %s; "), x->slurm_job,
			         x->slurm_state);
		size_t nl = strlen(note);
		snprintf(note + nl, sizeof note - nl, "%s",
		         queue_say(x->error, (char[1024]){0}, 1024));
		fprintf(out, "    %-3d %-19s %-9s %-7s ", x->n, a, dur,
		        x->gpu_idx[0] ? x->gpu_idx : "-");
		cell(out, ex, 9, " ");
		cell(out,
		     x->outcome != QO_NONE      ? queue_outcome_text(x->outcome)
		     : x->astate == QA_STARTING ? _("starting")
		                                : _("running"),
		     10, " ");
		fprintf(out, "%-6s %-6s %s\n", m1, m2, gw_term_safe(note, safe, sizeof safe));
	}
	if (lines > 0) {
		field(out, _("log"));
		fprintf(out, P_("%s (last %d line)\n", "%s (last %d lines)\n", lines), logp, lines);
		const char *p = from;
		while (*p) {
			size_t l = strcspn(p, "\n");
			fprintf(out, "    %.*s\n", (int)l, p);
			p += l;
			if (*p)
				p++;
		}
	}
}

void queue_show_render(FILE *out, const queue_task *t, const queue_attempt *at, int na,
                       const char *logp, const char *tail, int lines)
{
	show_task_text(out, t, at, na);
	show_attempts_text(out, at, na, logp, tail, lines);
}

/* A GPU's state as the worker stores it (sched.c, English in JSON), said where
 * queue gpus prints it. */
static const char *gpu_state_text(const char *state)
{
	static const char *const words[] = {N_("ok"), N_("drained"), N_("lost"), N_("excluded")};
	for (size_t i = 0; i < sizeof words / sizeof *words; i++)
		if (!strcmp(state, words[i]))
			return _(words[i]);
	return state;
}

void queue_gpus_render(FILE *out, const queue_gpu_row *rows, int n, double t, int wpid,
                       const char *drained)
{
	if (n == 0)
		fprintf(out, "%s\n",
		        wpid ? _("no GPU view yet (the worker has not sampled yet, or sees no "
		                 "GPU: see worker.log)")
		             : _("no GPU view yet: no worker runs (gpuwhy queue worker starts "
		                 "one)"));
	else {
		char ts[32];
		fmt_time(t, ts, sizeof ts);
		fprintf(out, _("as seen by %s at %s\n"),
		        wpid > 0 ? _("the worker") : _("the last worker"), ts);
		/* TRANSLATORS: the heads of `queue gpus`: memory total, free, pending
		 * (reserved by placed tasks), available; tasks, their cap, other
		 * processes, the GPU's state and the ids of its tasks. */
		const char *heads[] = {_("GPU"),     _("UUID"),  _("TOTAL"), _("FREE"),
		                       _("PENDING"), _("AVAIL"), _("TASKS"), _("CAP"),
		                       _("FOREIGN"), _("STATE")};
		const int widths[] = {-4, -14, 9, 9, 9, 9, -6, -4, -7, -8};
		for (int h = 0; h < 10; h++) {
			if (widths[h] < 0)
				cell(out, heads[h], -widths[h], " ");
			else
				fprintf(out, "%*s%s ", gw_text_pad(heads[h], widths[h]), "",
				        heads[h]);
		}
		fprintf(out, "%s\n", _("TASK IDS"));
		for (int i = 0; i < n; i++) {
			const queue_gpu_row *r = &rows[i];
			char tot[16], fr[16], pe[16], av[24], cap[16];
			fmt_mib(r->total_mib, tot, sizeof tot);
			fmt_mib(r->free_mib, fr, sizeof fr);
			fmt_mib(r->pending_mib, pe, sizeof pe);
			if (r->avail_mib == INT64_MIN)
				snprintf(av, sizeof av, "-");
			else if (r->avail_mib < 0) {
				char pos[16];
				fmt_mib(-r->avail_mib, pos, sizeof pos);
				snprintf(av, sizeof av, "-%s", pos);
			} else
				fmt_mib(r->avail_mib, av, sizeof av);
			snprintf(cap, sizeof cap, r->cap ? "%d" : "-", r->cap);
			fprintf(out, "%-4d %-14.14s %9s %9s %9s %9s %-6d %-4s %-7d ", r->index,
			        r->uuid, tot, fr, pe, av, r->ntasks, cap, r->foreign);
			cell(out, gpu_state_text(r->state), 8, " ");
			fprintf(out, "%s\n", r->tasks);
		}
		if (drained[0])
			fprintf(out, _("drained: %s\n"), drained);
	}
}
