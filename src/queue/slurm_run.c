/*
 * slurm_run.c - the Slurm back end: the same tasks, placed by Slurm.
 *
 * A task with --backend slurm is submitted with `sbatch --parsable
 * --gres=gpu:N` and followed through squeue, then `scontrol show job` (for
 * ExitCode a:b, within MinJobAge) and sacct (with slurmdbd, or `sacct -c`
 * on a jobcomp/filetxt setup). Its end is concluded like a local attempt:
 * the same OOM detection on its log and the same retry policy.
 *
 * Slurm hands work over at least once: after a controller crash a job can
 * run again from the start under the same id. Each attempt therefore has a
 * token, exported to the job as GPUWHY_ATTEMPT_TOKEN and echoed as the
 * first line of every run in the log; more than one such line means Slurm
 * ran it more than once, and the record says so. The token also travels in
 * the job's comment, so a job submitted by a worker that died before it
 * stored the job id is found again.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "queue/backend.h"
#include "queue/state.h"
#include "queue/oom.h"
#include "queue/slurm.h"
#include "queue/spec.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/procscan.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "util/child.h"
#include "util/xalloc.h"
#include "util/timeutil.h"

#define SLURM_TIMEOUT_NS 60000000000LL
#define SLURM_OUT_MAX (4u << 20)
#define SLURM_MISSING_NS 120000000000LL
#define MAX_FOLLOW 256

typedef struct {
	char job[32];
	int64_t first_missing;
	bool cancel_sent;
} sl_mem;

typedef struct {
	queue_backend_env env;
	queue_db *st;
	const char *dir;
	int nactive;
	bool down_logged;
	bool due;             /* this round asks Slurm: submit too */
	bool recover_pending; /* attempts an earlier worker left unsubmitted: look for them */
	int64_t last_ask;     /* monotonic ns of the last round that asked */
	sl_mem mem[MAX_FOLLOW];
	int nmem;
} queue_slurm;

static sl_mem *memo(queue_slurm *s, const char *job)
{
	for (int i = 0; i < s->nmem; i++)
		if (!strcmp(s->mem[i].job, job))
			return &s->mem[i];
	if (s->nmem == MAX_FOLLOW) {
		/* Forget the oldest: it only costs a repeated scancel or a later LOST verdict. */
		memmove(&s->mem[0], &s->mem[1], (MAX_FOLLOW - 1) * sizeof s->mem[0]);
		s->nmem--;
	}
	sl_mem *m = &s->mem[s->nmem++];
	memset(m, 0, sizeof *m);
	snprintf(m->job, sizeof m->job, "%s", job);
	return m;
}

/* Run a Slurm command; 0 with r filled when it exited 0. */
static int slurm_cmd(char **argv, char **envp, gw_child_result *r)
{
	gw_child_spec spec = {.argv = argv, .envp = envp};
	gw_child_run(&spec, SLURM_TIMEOUT_NS, SLURM_OUT_MAX, r);
	if (!r->started) {
		gw_child_free(r);
		if (asprintf(&r->err, "cannot run %s: %s", argv[0], strerror(r->start_errno)) < 0)
			gw_out_of_memory();
		r->out = gw_xstrdup("");
		return -1;
	}
	return gw_child_ok(r) ? 0 : -1;
}

static void first_line(const char *text, char *out, size_t len)
{
	const char *p = text ? text : "";
	while (*p == '\n' || *p == ' ')
		p++;
	size_t n = strcspn(p, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* ---- submission ---- */

/*
 * The GPU variables of the shell the task was added from name GPUs of that
 * machine, not the job's: Slurm sets those it uses for the allocation and
 * leaves the others as they came (on an AMD node only ROCR_VISIBLE_DEVICES),
 * so a stale CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES would filter the
 * job's GPUs a second time. The job's are Slurm's alone.
 */
static bool gpu_variable(const char *key)
{
	static const char *const names[] = {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
	                                    "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(key, names[i]))
			return true;
	return false;
}

static char **task_env(const queue_spec *sp)
{
	json_t *obj = sp->env_json ? json_loads(sp->env_json, 0, NULL) : NULL;
	if (!obj)
		return NULL; /* the worker's own environment */
	size_t n = json_object_size(obj);
	char **env = calloc(n + 2, sizeof *env);
	size_t k = 0;
	const char *key;
	json_t *v;
	bool has_conf = false;
	json_object_foreach(obj, key, v)
	{
		if (!json_is_string(v) || gpu_variable(key))
			continue;
		size_t len = strlen(key) + strlen(json_string_value(v)) + 2;
		env[k] = malloc(len);
		snprintf(env[k++], len, "%s=%s", key, json_string_value(v));
		has_conf |= !strcmp(key, "SLURM_CONF");
	}
	/* The worker may know where the cluster's configuration is when the task's shell did not.
	 */
	const char *conf = getenv("SLURM_CONF");
	if (!has_conf && conf) {
		size_t len = strlen(conf) + 12;
		env[k] = malloc(len);
		snprintf(env[k++], len, "SLURM_CONF=%s", conf);
	}
	env[k] = NULL;
	json_decref(obj);
	return env;
}

static int write_script(const char *path, const queue_task *t, const queue_attempt *a)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	char *cmd = queue_argv_to_shell(t->spec.argv, t->spec.argc);
	size_t ql = queue_shell_quote(t->spec.cwd ? t->spec.cwd : "/", NULL, 0) + 1;
	char *cwd = malloc(ql);
	queue_shell_quote(t->spec.cwd ? t->spec.cwd : "/", cwd, ql);
	/*
	 * On an AMD node Slurm names the job's GPUs in ROCR_VISIBLE_DEVICES (gres.conf's
	 * Flags=amd_gpu_env, AutoDetect=rsmi's; with no Flags it sets CUDA_VISIBLE_DEVICES
	 * and GPU_DEVICE_ORDINAL to the same list). ROCr then shows only those, numbered
	 * from 0, and HIP (and OpenCL) filter again by what they read, so a job on node
	 * GPUs 1,2 must see HIP_VISIBLE_DEVICES=0,1. Without CUDA_VISIBLE_DEVICES from
	 * Slurm the node is AMD's: it repeats HIP's list, as the local queue's does.
	 */
	fprintf(
	    f,
	    "#!/bin/sh\n"
	    "# gpuwhy queue: task %lld attempt %d (written by the worker; do not edit)\n"
	    "h= n=0\n"
	    "for d in $(echo \"${ROCR_VISIBLE_DEVICES-}\" | tr , ' '); do h=$h${h:+,}$n; "
	    "n=$((n + 1)); done\n"
	    "echo \"=== gpuwhy task %lld attempt %d token %s start $(date '+%%Y-%%m-%%d "
	    "%%H:%%M:%%S') host $(hostname) slurm job ${SLURM_JOB_ID:-?} "
	    "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}${h:+ "
	    "ROCR_VISIBLE_DEVICES=$ROCR_VISIBLE_DEVICES HIP_VISIBLE_DEVICES=$h} ===\"\n"
	    "if [ -n \"$h\" ]; then\n"
	    "\texport HIP_VISIBLE_DEVICES=$h\n"
	    "\tif [ -n \"${GPU_DEVICE_ORDINAL+x}\" ]; then export GPU_DEVICE_ORDINAL=$h; fi\n"
	    "\tif [ -z \"${CUDA_VISIBLE_DEVICES+x}\" ]; then export CUDA_VISIBLE_DEVICES=$h; fi\n"
	    "fi\n"
	    "export CUDA_DEVICE_ORDER=PCI_BUS_ID GPUWHY_TASK_ID=%lld GPUWHY_ATTEMPT=%d "
	    "GPUWHY_ATTEMPT_TOKEN=%s\n"
	    "cd %s || exit 126\n"
	    "exec %s\n",
	    (long long)t->id, a->n, (long long)t->id, a->n, a->token, (long long)t->id, a->n,
	    a->token, cwd, cmd);
	free(cmd);
	free(cwd);
	bool ok = fclose(f) == 0;
	return ok && chmod(path, 0700) == 0 ? 0 : -1;
}

static void submit(queue_slurm *s, const queue_candidate *c)
{
	queue_task t;
	if (queue_db_get(s->st, c->id, &t) != 0)
		return;
	queue_attempt a;
	memset(&a, 0, sizeof a);
	a.task_id = c->id;
	a.backend = QB_SLURM;
	queue_new_token(a.token, sizeof a.token);
	a.reserved_mib = c->mem_mib;
	a.per_gpu = 1;
	a.started = gw_wall_s();
	a.peak_gpu_mib = a.peak_rss_kib = -1;
	char logp[PATH_MAX], script[PATH_MAX + 64];
	queue_log_path(s->dir, c->id, logp, sizeof logp);
	struct stat stt;
	a.log_offset = stat(logp, &stt) == 0 ? stt.st_size : 0;
	if (queue_db_begin_attempt(s->st, &a, QS_SUBMITTED) != 0) {
		queue_task_free(&t);
		return;
	}
	snprintf(script, sizeof script, "%s/slurm/%lld.%d.sh", s->dir, (long long)c->id, a.n);
	char name[QUEUE_NAME_MAX + 16], comment[64], gres[32], mem[32], tl[32];
	snprintf(name, sizeof name, "%s", t.spec.name[0] ? t.spec.name : "");
	if (!name[0])
		snprintf(name, sizeof name, "gpuwhy-%lld", (long long)c->id);
	snprintf(comment, sizeof comment, "--comment=gpuwhy:%s", a.token);
	char *argv[64 + 32];
	int n = 0;
	argv[n++] = "sbatch";
	argv[n++] = "--parsable";
	argv[n++] = "-J";
	argv[n++] = name;
	argv[n++] = comment;
	argv[n++] = "-o";
	argv[n++] = logp;
	argv[n++] = "--open-mode=append";
	argv[n++] = "-D";
	argv[n++] = t.spec.cwd ? t.spec.cwd : "/";
	if (t.spec.gpus > 0) {
		snprintf(gres, sizeof gres, "--gres=gpu:%d", t.spec.gpus);
		argv[n++] = gres;
	}
	if (t.spec.host_mem_mib > 0) {
		snprintf(mem, sizeof mem, "--mem=%lldM", (long long)t.spec.host_mem_mib);
		argv[n++] = mem;
	}
	if (t.spec.timeout_ms > 0) {
		/* Slurm counts whole minutes. */
		long long min = (t.spec.timeout_ms + 59999) / 60000;
		snprintf(tl, sizeof tl, "--time=%lld", min);
		argv[n++] = tl;
	}
	json_t *extra = t.spec.slurm_args ? json_loads(t.spec.slurm_args, 0, NULL) : NULL;
	size_t i;
	json_t *x;
	json_array_foreach(extra, i, x)
	{
		if (n < 64 + 30 && json_is_string(x))
			argv[n++] = (char *)json_string_value(x);
	}
	argv[n++] = script;
	argv[n] = NULL;

	gw_child_result r;
	memset(&r, 0, sizeof r);
	bool ok = write_script(script, &t, &a) == 0;
	if (!ok)
		snprintf(a.error, sizeof a.error, "cannot write %.300s: %s", script,
		         strerror(errno));
	char **envp = ok ? task_env(&t.spec) : NULL;
	if (ok && slurm_cmd(argv, envp, &r) == 0 &&
	    queue_slurm_parse_sbatch(r.out, a.slurm_job, sizeof a.slurm_job)) {
		a.astate = QA_RUNNING;
		snprintf(a.slurm_state, sizeof a.slurm_state, "PENDING");
		queue_db_attempt_slurm(s->st, &a);
		s->nactive++;
		queue_worker_log("task %lld attempt %d submitted to Slurm as job %s",
		                 (long long)c->id, a.n, a.slurm_job);
	} else {
		if (ok) {
			char msg[300];
			first_line(r.err && *r.err ? r.err : r.out, msg, sizeof msg);
			snprintf(a.error, sizeof a.error, "sbatch failed: %s",
			         *msg ? msg : "no output");
		}
		a.outcome = QO_FAILED;
		a.ended = gw_wall_s();
		int next = queue_attempt_conclude(s->st, &a, -1);
		queue_worker_log("task %lld: %s -> %s", (long long)c->id, a.error,
		                 next >= 0 ? queue_state_name((queue_state)next) : "?");
	}
	json_decref(extra);
	queue_env_free(envp);
	gw_child_free(&r);
	queue_task_free(&t);
}

static void submit_queued(queue_slurm *s)
{
	queue_candidate cand[64];
	int nc = queue_db_candidates(s->st, QB_SLURM, 0, cand, 64);
	double now = gw_wall_s(), next_due = 0;
	for (int i = 0; i < nc; i++) {
		char reason[200];
		int gate =
		    queue_candidate_gate(s->st, &cand[i], now, reason, sizeof reason, &next_due);
		if (gate == 1)
			submit(s, &cand[i]);
		else if (gate == 0)
			queue_db_wait_reason(s->st, cand[i].id, reason);
	}
}

/* ---- following jobs ---- */

/* Facts about a job that squeue no longer lists: scontrol, then sacct, then sacct -c. */
static bool job_details(const char *job, queue_slurm_job *out)
{
	gw_child_result r;
	char *sc[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
	if (slurm_cmd(sc, NULL, &r) == 0 && queue_slurm_parse_scontrol(r.out, out)) {
		gw_child_free(&r);
		return true;
	}
	gw_child_free(&r);
	char *sa[] = {"sacct", "-X",        "-P", "-n",
	              "-j",    (char *)job, "-o", "JobID,State,ExitCode,Start,End",
	              NULL};
	char *sc2[] = {"sacct",     "-c", "-X",
	               "-P",        "-n", "-j",
	               (char *)job, "-o", "JobID,State,ExitCode,Start,End",
	               NULL};
	char **tries[] = {sa, sc2};
	for (int k = 0; k < 2; k++) {
		bool found = false;
		if (slurm_cmd(tries[k], NULL, &r) == 0) {
			/* The last line for this job id (a requeued job appears more than once). */
			char *save = NULL;
			for (char *line = strtok_r(r.out, "\n", &save); line;
			     line = strtok_r(NULL, "\n", &save)) {
				queue_slurm_job j;
				if (queue_slurm_parse_sacct(line, &j) && !strcmp(j.job_id, job)) {
					*out = j;
					found = true;
				}
			}
		}
		gw_child_free(&r);
		if (found)
			return true;
	}
	return false;
}

/* Peak host RSS of the batch step from accounting (slurmdbd only); -1 unknown. */
static int64_t job_maxrss(const char *job)
{
	char step[48];
	snprintf(step, sizeof step, "%s.batch", job);
	char *argv[] = {"sacct", "-n", "-P", "-j", step, "-o", "MaxRSS", NULL};
	gw_child_result r;
	int64_t kib = -1;
	if (slurm_cmd(argv, NULL, &r) == 0 && r.out[0]) {
		char *end;
		double v = strtod(r.out, &end);
		if (end != r.out && v >= 0) {
			double mult = *end == 'K'   ? 1
			              : *end == 'M' ? 1024
			              : *end == 'G' ? 1048576
			              : *end == 'T' ? 1073741824.0
			                            : 1.0 / 1024;
			kib = (int64_t)(v * mult);
		}
	}
	gw_child_free(&r);
	return kib;
}

/* The value of NAME= in the header line at p (ending at eol or the text's end). */
static size_t header_value(const char *p, const char *eol, const char *name, const char **val)
{
	const char *v = strstr(p, name);
	if (!v || (eol && v > eol))
		return 0;
	*val = v + strlen(name);
	return strcspn(*val, " \n");
}

/* From the log: how many runs this token had, and the GPUs of the last one: Slurm's
 * CUDA_VISIBLE_DEVICES, else (an AMD node) its ROCR_VISIBLE_DEVICES. */
static void scan_log(queue_slurm *s, queue_attempt *a)
{
	char path[PATH_MAX];
	queue_log_path(s->dir, a->task_id, path, sizeof path);
	size_t len;
	char *text = queue_read_tail(path, a->log_offset, 8u << 20, &len);
	if (!text)
		return;
	a->runs = queue_count_token_runs(text, len, a->token);
	char needle[64];
	snprintf(needle, sizeof needle, "token %s start", a->token);
	const char *last = NULL;
	for (const char *p = text; (p = strstr(p, needle)); p++)
		last = p;
	if (last) {
		const char *eol = strchr(last, '\n'), *cv = NULL;
		size_t n = header_value(last, eol, " CUDA_VISIBLE_DEVICES=", &cv);
		if (!n)
			n = header_value(last, eol, " ROCR_VISIBLE_DEVICES=", &cv);
		if (n) {
			if (n >= sizeof a->gpu_idx)
				n = sizeof a->gpu_idx - 1;
			memcpy(a->gpu_idx, cv, n);
			a->gpu_idx[n] = '\0';
		}
	}
	free(text);
}

static void conclude(queue_slurm *s, queue_attempt *a, const queue_slurm_job *j)
{
	queue_slurm_class c = queue_slurm_classify(j->state);
	snprintf(a->slurm_state, sizeof a->slurm_state, "%s", j->state);
	if (j->start > 0)
		a->started = j->start;
	a->ended = j->end > 0 ? j->end : gw_wall_s();
	a->exit_ok = j->exit_ok;
	a->exit_code = j->exit_code;
	a->signal = j->signal;
	switch (c) {
	case QSL_COMPLETED:
		a->outcome =
		    j->exit_ok && j->exit_code == 0 && j->signal == 0 ? QO_DONE : QO_FAILED;
		break;
	case QSL_CANCELLED:
		a->outcome = QO_CANCELLED;
		break;
	case QSL_TIMEOUT:
		a->outcome = QO_TIMEOUT;
		snprintf(a->error, sizeof a->error, "Slurm: %s (time limit)", j->state);
		break;
	case QSL_OUT_OF_MEMORY:
		a->outcome = QO_FAILED;
		a->oom = QOOM_HOST;
		snprintf(a->error, sizeof a->error, "Slurm: OUT_OF_MEMORY (host memory limit)");
		break;
	case QSL_NODE_FAIL:
		a->outcome = QO_LOST;
		if (!a->error[0])
			snprintf(a->error, sizeof a->error, "Slurm: %s", j->state);
		break;
	default:
		a->outcome = QO_FAILED;
		break;
	}
	scan_log(s, a);
	if (a->runs > 1) {
		size_t l = strlen(a->error);
		snprintf(
		    a->error + l, sizeof a->error - l,
		    "%sSlurm ran this attempt %d times (job %s was started again, e.g. after a "
		    "controller restart)",
		    l ? "; " : "", a->runs, a->slurm_job);
	}
	int64_t rss = job_maxrss(a->slurm_job);
	if (rss > a->peak_rss_kib)
		a->peak_rss_kib = rss;
	int next = queue_attempt_conclude(s->st, a, -1);
	queue_worker_log("task %lld attempt %d (Slurm job %s) ended %s ExitCode %d:%d -> %s",
	                 (long long)a->task_id, a->n, a->slurm_job, j->state, j->exit_code,
	                 j->signal, next >= 0 ? queue_state_name((queue_state)next) : "?");
}

/* A job submitted by a worker that died before it stored the id: find it by its token. */
static void recover_starting(queue_slurm *s, queue_attempt *a)
{
	char *argv[] = {"squeue", "-h", "-a", "-t", "all", "-o", "%i|%k", NULL};
	gw_child_result r;
	char want[64];
	snprintf(want, sizeof want, "gpuwhy:%s", a->token);
	bool found = false;
	if (slurm_cmd(argv, NULL, &r) == 0) {
		char *save = NULL;
		for (char *line = strtok_r(r.out, "\n", &save); line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			char *bar = strchr(line, '|');
			if (bar && !strcmp(bar + 1, want)) {
				*bar = '\0';
				snprintf(a->slurm_job, sizeof a->slurm_job, "%s", line);
				found = true;
			}
		}
	}
	gw_child_free(&r);
	if (found) {
		a->astate = QA_RUNNING;
		queue_db_attempt_slurm(s->st, a);
		queue_worker_log("task %lld attempt %d: found its Slurm job %s by token",
		                 (long long)a->task_id, a->n, a->slurm_job);
		return;
	}
	a->outcome = QO_NOT_STARTED;
	a->ended = gw_wall_s();
	queue_attempt_conclude(s->st, a, -1);
	queue_worker_log("task %lld attempt %d never reached Slurm; queued again",
	                 (long long)a->task_id, a->n);
}

/* State and reason of job in squeue's "%i|%T|%r" lines. */
static void listed_state(const char *out, const char *job, char *state, size_t slen, char *reason,
                         size_t rlen)
{
	char want[40];
	snprintf(want, sizeof want, "%s|", job);
	for (const char *p = out; p && *p;) {
		if (!strncmp(p, want, strlen(want))) {
			const char *f = p + strlen(want);
			size_t l = strcspn(f, "|\n");
			snprintf(state, slen, "%.*s", (int)l, f);
			if (f[l] == '|') {
				const char *g = f + l + 1;
				snprintf(reason, rlen, "%.*s", (int)strcspn(g, "\n"), g);
			}
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

/* Still pending or running: keep what is shown about it up to date. */
static void follow_live(queue_slurm *s, queue_attempt *a, queue_slurm_class c, const char *state,
                        const char *reason)
{
	char shown[48];
	snprintf(shown, sizeof shown, "%s", state);
	if (c == QSL_PENDING && reason[0] && strcmp(reason, "None"))
		snprintf(shown, sizeof shown, "%.20s (%.20s)", state, reason);
	bool changed = strcmp(shown, a->slurm_state) != 0;
	if (c == QSL_RUNNING && !a->gpu_idx[0]) {
		/* Which GPUs Slurm gave it: the job's first log line says. */
		scan_log(s, a);
		changed |= a->gpu_idx[0] != '\0';
	}
	if (changed) {
		snprintf(a->slurm_state, sizeof a->slurm_state, "%s", shown);
		queue_db_attempt_slurm(s->st, a);
	}
	if (c == QSL_RUNNING)
		queue_db_task_began(s->st, a->task_id);
}

/* squeue no longer lists it: ask for its end, or call it lost after a while. */
static void follow_gone(queue_slurm *s, queue_attempt *a, sl_mem *m)
{
	queue_slurm_job j;
	if (job_details(a->slurm_job, &j)) {
		queue_slurm_class dc = queue_slurm_classify(j.state);
		if (dc != QSL_PENDING && dc != QSL_RUNNING && dc != QSL_UNKNOWN)
			conclude(s, a, &j);
		else
			m->first_missing = 0;
		return;
	}
	/* Slurm knows nothing about it (any more): give it a while, then call it lost. */
	int64_t now = gw_mono_ns();
	if (!m->first_missing) {
		m->first_missing = now;
	} else if (now - m->first_missing > SLURM_MISSING_NS) {
		queue_slurm_job lost = {0};
		snprintf(lost.job_id, sizeof lost.job_id, "%s", a->slurm_job);
		snprintf(lost.state, sizeof lost.state, "NODE_FAIL");
		snprintf(a->error, sizeof a->error, "Slurm no longer knows job %s", a->slurm_job);
		conclude(s, a, &lost);
	}
}

/* One squeue call for all the jobs. false when Slurm gave no answer (controller down
 * or restarting): then wait rather than call jobs lost. */
static bool list_jobs(queue_slurm *s, const queue_attempt *act, int n, gw_child_result *r,
                      bool *listed_ok)
{
	size_t cap = 16;
	for (int i = 0; i < n; i++)
		cap += strlen(act[i].slurm_job) + 1;
	char *ids = calloc(1, cap);
	for (int i = 0; i < n; i++)
		if (act[i].slurm_job[0]) {
			if (ids[0])
				strcat(ids, ",");
			strcat(ids, act[i].slurm_job);
		}
	*listed_ok = false;
	bool answer = true;
	if (ids[0]) {
		char *argv[] = {"squeue", "-h", "-a", "-t",       "all",
		                "-j",     ids,  "-o", "%i|%T|%r", NULL};
		*listed_ok = slurm_cmd(argv, NULL, r) == 0;
		/* squeue fails for ids it no longer knows: that is an answer. */
		answer = *listed_ok || (r->err && strstr(r->err, "Invalid job id"));
		if (!answer && !s->down_logged) {
			char msg[200];
			first_line(r->err, msg, sizeof msg);
			queue_worker_log("Slurm does not answer (%s); following again later",
			                 *msg ? msg : "no output");
		}
		s->down_logged = !answer;
	}
	free(ids);
	return answer;
}

static void count_active(queue_slurm *s)
{
	int left;
	queue_attempt *again;
	if (queue_db_active(s->st, QB_SLURM, &again, &left) == 0) {
		s->nactive = left;
		free(again);
	}
}

static void follow(queue_slurm *s)
{
	queue_attempt *act;
	int n;
	if (queue_db_active(s->st, QB_SLURM, &act, &n) != 0)
		return;
	s->nactive = n;
	gw_child_result r;
	memset(&r, 0, sizeof r);
	bool listed_ok = false;
	if (n > 0 && list_jobs(s, act, n, &r, &listed_ok)) {
		for (int i = 0; i < n; i++) {
			queue_attempt *a = &act[i];
			if (a->astate == QA_STARTING || !a->slurm_job[0]) {
				if (s->recover_pending)
					recover_starting(s, a);
				continue;
			}
			char state[48] = "", reason[64] = "";
			if (listed_ok)
				listed_state(r.out, a->slurm_job, state, sizeof state, reason,
				             sizeof reason);
			queue_slurm_class c = queue_slurm_classify(state);
			sl_mem *m = memo(s, a->slurm_job);
			if (c == QSL_PENDING || c == QSL_RUNNING) {
				m->first_missing = 0;
				follow_live(s, a, c, state, reason);
			} else {
				follow_gone(s, a, m);
			}
		}
		s->recover_pending = false;
		count_active(s);
	}
	gw_child_free(&r);
	free(act);
}

/* ---- the back-end table ---- */

static void *slurm_open(const queue_backend_env *env)
{
	queue_slurm *s = gw_xrealloc(NULL, sizeof *s);
	memset(s, 0, sizeof *s);
	s->env = *env;
	s->st = env->st;
	s->dir = env->dir;
	return s;
}

static void slurm_close(void *be)
{
	free(be);
}

/* Attempts an earlier worker was submitting when it died are looked for by their
 * token in the first round that reaches Slurm. */
static void slurm_recover(void *be)
{
	queue_slurm *s = be;
	s->recover_pending = true;
	count_active(s);
}

/*
 * Slurm jobs running on this machine: their processes carry the attempt's
 * token in their environment, so their GPU memory can be recorded too. They
 * stay "foreign" for local placement: they use the GPU and reserved nothing.
 */
static void slurm_observe(void *be)
{
	queue_slurm *s = be;
	if (s->nactive == 0 || s->env.pidns_nested)
		return;
	queue_attempt *act;
	int n;
	if (queue_db_active(s->st, QB_SLURM, &act, &n) != 0)
		return;
	for (int a = 0; a < n; a++) {
		int64_t best = queue_token_gpu_mib(s->env.gpus, act[a].token);
		if (best > act[a].peak_gpu_mib)
			queue_db_peaks(s->st, act[a].task_id, act[a].n, best, act[a].peak_rss_kib);
	}
	free(act);
}

static bool wants_cancel(const int64_t *ids, int n, int64_t id)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static void slurm_cancel(void *be)
{
	queue_slurm *s = be;
	int64_t ids[64];
	int nids = s->nactive > 0 ? queue_db_cancel_list(s->st, ids, 64) : 0;
	queue_attempt *act;
	int n;
	if (nids <= 0 || queue_db_active(s->st, QB_SLURM, &act, &n) != 0)
		return;
	for (int i = 0; i < n; i++) {
		queue_attempt *a = &act[i];
		if (!a->slurm_job[0] || !wants_cancel(ids, nids, a->task_id))
			continue;
		sl_mem *m = memo(s, a->slurm_job);
		if (m->cancel_sent)
			continue;
		char *argv[] = {"scancel", a->slurm_job, NULL};
		gw_child_result cr;
		slurm_cmd(argv, NULL, &cr);
		gw_child_free(&cr);
		m->cancel_sent = true;
		queue_worker_log("task %lld: scancel %s", (long long)a->task_id, a->slurm_job);
	}
	free(act);
}

/* Slurm is asked when something changed, and every slurm-poll otherwise. */
static void slurm_follow(void *be, const queue_pass *p, const struct pollfd *fds, int n)
{
	queue_slurm *s = be;
	(void)fds;
	(void)n;
	if (p->stopping)
		return;
	if (!p->poked && !p->added && p->now - s->last_ask < s->env.cfg->slurm_poll_ns)
		return;
	follow(s);
	s->last_ask = p->now;
	s->due = true;
}

static void slurm_start(void *be, const queue_pass *p)
{
	queue_slurm *s = be;
	(void)p;
	if (!s->due)
		return;
	s->due = false;
	if (!s->env.cfg->paused && !s->env.cfg->draining)
		submit_queued(s);
}

static int slurm_fds(void *be, struct pollfd *out, int max)
{
	(void)be;
	(void)out;
	(void)max;
	return 0;
}

static int64_t slurm_wait_ms(void *be, int64_t now)
{
	queue_slurm *s = be;
	if (s->nactive == 0)
		return -1;
	int64_t left = (s->last_ask + s->env.cfg->slurm_poll_ns - now) / 1000000;
	return left < 0 ? 0 : left;
}

static int slurm_active(const void *be)
{
	return ((const queue_slurm *)be)->nactive;
}

const queue_backend_ops queue_backend_slurm = {
    .kind = QB_SLURM,
    .open = slurm_open,
    .close = slurm_close,
    .recover = slurm_recover,
    .observe = slurm_observe,
    .cancel = slurm_cancel,
    .start = slurm_start,
    .fds = slurm_fds,
    .wait_ms = slurm_wait_ms,
    .follow = slurm_follow,
    .active = slurm_active,
};
