/* queue_ctl.c - `gpuwhy queue` cancel, retry, clean, pause/resume/drain, gpus, config,
 * worker and stop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/procscan.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "queue/listing.h"
#include "util/err.h"
#include "util/selfexe.h"
#include "util/parse.h"
#include "util/timeutil.h"
#include "util/textwidth.h"

int qcmd_cancel(const char *dir, int argc, char **argv, const gw_global *g)
{
	bool all = false;
	const opt_def opts[] = {OPT_FLAG(0, "all", &all, "every task that has not ended"), OPT_END};
	const opt_cmd oc = {
	    .name = "queue cancel",
	    .usage = "queue cancel ID... | --all",
	    .about = N_("A queued task is cancelled at once; a running one gets SIGTERM to its "
	                "process\ngroup, then SIGKILL after `config kill-grace`; a Slurm job is "
	                "scancel'ed."),
	    .opts = opts,
	    .max_args = -1};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	if (!all && first >= argc)
		return gw_error(GW_EXIT_USAGE, "queue cancel",
		                _("gpuwhy queue cancel ID... or --all"), _("no task given"));
	for (int i = first; i < argc; i++) {
		int64_t id;
		if (!qcmd_parse_id(argv[i], &id))
			return qcmd_bad_id(argv[i]);
	}
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	int64_t *ids = NULL;
	int n = 0;
	if (all) {
		queue_task *t;
		int nt;
		if (queue_db_list(st, -1, &t, &nt) == 0) {
			ids = calloc((size_t)nt + 1, sizeof *ids);
			for (int i = 0; i < nt; i++)
				if (!queue_state_final(t[i].state))
					ids[n++] = t[i].id;
			queue_tasks_free(t, nt);
		}
	} else {
		n = argc - first;
		ids = calloc((size_t)n, sizeof *ids);
		for (int i = 0; i < n; i++)
			qcmd_parse_id(argv[first + i], &ids[i]);
	}
	for (int i = 0; i < n && !rc; i++) {
		int result;
		queue_attempt a;
		int r = queue_db_cancel(st, ids[i], &result, &a);
		if (r > 0) {
			rc = gw_error(GW_EXIT_USAGE, "queue cancel", NULL, _("no task %lld"),
			              (long long)ids[i]);
			break;
		}
		if (r < 0) {
			rc = GW_EXIT_ENV;
			break;
		}
		if (result == 0) {
			printf(_("task %lld cancelled\n"), (long long)ids[i]);
			queue_write_record(st, ids[i]);
		} else if (result == 1) {
			/* Tell the shim straight away; the worker also does, should this miss. */
			if (a.backend == QB_LOCAL && a.astate == QA_RUNNING &&
			    queue_proc_alive(a.shim_pid, a.shim_start))
				kill(a.shim_pid, SIGUSR1);
			printf(_("task %lld: cancel requested (it is running; its record says "
			         "cancelled "
			         "once its processes are gone)\n"),
			       (long long)ids[i]);
		} else {
			queue_task t;
			if (queue_db_get(st, ids[i], &t) == 0) {
				printf(_("task %lld already ended (%s)\n"), (long long)ids[i],
				       queue_state_name(t.state));
				queue_task_free(&t);
			}
		}
	}
	free(ids);
	queue_db_close(st);
	queue_worker_poke(dir);
	return rc;
}

int qcmd_retry(const char *dir, int argc, char **argv, const gw_global *g)
{
	const opt_def opts[] = {OPT_END};
	const opt_cmd oc = {.name = "queue retry",
	                    .usage = "queue retry ID...",
	                    .about =
	                        N_("Queues ended tasks (done, failed, timeout, cancelled, lost) "
	                           "again with a fresh\nretry budget; earlier attempts stay in "
	                           "the record."),
	                    .opts = opts,
	                    .max_args = -1};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	if (first >= argc)
		return gw_error(GW_EXIT_USAGE, "queue retry", _("gpuwhy queue retry ID..."),
		                _("no task given"));
	for (int i = first; i < argc; i++) {
		int64_t id;
		if (!qcmd_parse_id(argv[i], &id))
			return qcmd_bad_id(argv[i]);
	}
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	bool any = false;
	for (int i = first; i < argc && !rc; i++) {
		int64_t id = 0;
		qcmd_parse_id(argv[i], &id);
		int result;
		int r = queue_db_retry(st, id, &result);
		if (r > 0)
			rc = gw_error(GW_EXIT_USAGE, argv[i], NULL, _("no such task"));
		else if (r < 0)
			rc = GW_EXIT_ENV;
		else if (result == 0) {
			printf(_("task %lld queued again\n"), (long long)id);
			any = true;
		} else
			printf(_("task %lld has not ended: nothing to retry\n"), (long long)id);
	}
	bool draining = queue_db_config_int(st, "draining") != 0;
	queue_db_close(st);
	if (any && !draining && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_poke(dir);
	return rc;
}

int qcmd_clean(const char *dir, int argc, char **argv, const gw_global *g)
{
	bool all = false;
	const opt_def opts[] = {
	    OPT_FLAG(0, "all", &all, "every ended task, not only the done ones"), OPT_END};
	const opt_cmd oc = {.name = "queue clean",
	                    .usage = "queue clean [--all]",
	                    .about = N_("Forgets done tasks (--all: every ended task), their "
	                                "attempts and logs.\nTasks that a queued task waits for "
	                                "(--after) are kept."),
	                    .opts = opts};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	int64_t *ids;
	int n;
	if (queue_db_clean(st, all, &ids, &n) != 0) {
		queue_db_close(st);
		return GW_EXIT_ENV;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		queue_log_path(dir, ids[i], path, sizeof path);
		unlink(path);
	}
	printf(P_("removed %d task\n", "removed %d tasks\n", n), n);
	free(ids);
	queue_db_close(st);
	return GW_EXIT_OK;
}

/* ---- pause / resume / drain ---- */

/* Add (or remove) GPU list entries to drained-gpus. */
static int edit_drained(queue_db *st, const char *list, bool add)
{
	char cur[256], out[256] = "";
	queue_db_config_get(st, "drained-gpus", cur, sizeof cur);
	gw_fail e = {0};
	if (!queue_config_check("drained-gpus", list, &e)) {
		snprintf(e.what, sizeof e.what, "--gpu"); /* the option that gave the list */
		return gw_fail_print(&e);
	}
	char copy[256], *save = NULL;
	snprintf(copy, sizeof copy, "%s", cur);
	/* Keep current entries not being removed. */
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		bool drop = false;
		char l2[256], *s2 = NULL;
		snprintf(l2, sizeof l2, "%s", list);
		for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2))
			drop |= !strcasecmp(t, u);
		if (!drop || add) {
			size_t ol = strlen(out);
			if (!drop)
				snprintf(out + ol, sizeof out - ol, "%s%s", ol ? "," : "", t);
		}
	}
	if (add) {
		char l2[256], *s2 = NULL;
		snprintf(l2, sizeof l2, "%s", list);
		for (char *u = strtok_r(l2, ",", &s2); u; u = strtok_r(NULL, ",", &s2)) {
			size_t ol = strlen(out);
			snprintf(out + ol, sizeof out - ol, "%s%s", ol ? "," : "", u);
		}
	}
	if (queue_db_config_set(st, "drained-gpus", out) != 0)
		return GW_EXIT_ENV;
	printf(_("drained GPUs: %s\n"), out[0] ? out : _("none"));
	return GW_EXIT_OK;
}

int qcmd_flags(const char *dir, int argc, char **argv, const gw_global *g)
{
	const char *sub = argv[0], *gpu = NULL;
	bool pause = !strcmp(sub, "pause");
	const opt_def opts[] = {
	    OPT_STRING(0, "gpu", "LIST", &gpu,
	               "only these GPUs (indices or UUIDs): drain takes them out "
	               "of placement, resume puts them back"),
	    OPT_END};
	char usage[64];
	snprintf(usage, sizeof usage, "queue %s%s", sub, pause ? "" : " [--gpu LIST]");
	const opt_cmd oc = {.name = pause           ? "queue pause"
	                            : sub[0] == 'd' ? "queue drain"
	                                            : "queue resume",
	                    .usage = usage,
	                    .about = pause ? N_("No new task starts; running tasks go on.")
	                             : sub[0] == 'd'
	                                 ? N_("Running tasks finish, no new task starts, then the "
	                                      "worker stops.")
	                                 : N_("Tasks start again (undoes pause and drain)."),
	                    .opts = pause ? opts + 1 : opts};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	bool start = false;
	if (gpu) {
		rc = edit_drained(st, gpu, !strcmp(sub, "drain"));
	} else if (!strcmp(sub, "pause")) {
		rc = queue_db_config_set(st, "paused", "1") ? GW_EXIT_ENV : 0;
		if (!rc)
			puts(_("paused: running tasks go on, no new task starts (gpuwhy queue "
			       "resume)"));
	} else if (!strcmp(sub, "drain")) {
		rc = queue_db_config_set(st, "draining", "1") ? GW_EXIT_ENV : 0;
		if (!rc)
			puts(
			    _("draining: running tasks finish, no new task starts, then the worker "
			      "stops (gpuwhy queue resume undoes it)"));
	} else {
		rc = queue_db_config_set(st, "paused", "0") ||
		             queue_db_config_set(st, "draining", "0")
		         ? GW_EXIT_ENV
		         : 0;
		start = !rc;
		if (!rc)
			puts(_("resumed"));
	}
	int queued = queue_db_count_state(st, QS_QUEUED);
	queue_db_close(st);
	if (!rc && start && queued > 0 && queue_worker_ensure(dir, gw_self_exe()) != 0)
		return GW_EXIT_ENV;
	queue_worker_poke(dir);
	return rc;
}

/* ---- gpus ---- */

int qcmd_gpus(const char *dir, int argc, char **argv, const gw_global *gl)
{
	bool json = false;
	int fmt = OPT_FMT_TEXT;
	const opt_def opts[] = {OPT_FORMAT_TJ(&fmt),
	                        OPT_FLAG(0, "json", &json, "the same as --format json"), OPT_END};
	const opt_cmd oc = {
	    .name = "queue gpus",
	    .usage = "queue gpus [--format json]",
	    .about =
	        N_("What the worker last saw: per GPU its memory, what placed tasks reserved but\n"
	           "have not allocated yet (PENDING), what a new task can count on (AVAIL = free "
	           "-\npending), queue tasks on it and their cap, processes that are not ours."),
	    .opts = opts};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	json |= fmt == OPT_FMT_JSON;
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	queue_gpu_row *rows;
	int n;
	double t;
	if (queue_db_gpu_view_get(st, &rows, &n, &t) != 0) {
		queue_db_close(st);
		return GW_EXIT_ENV;
	}
	char drained[256];
	queue_db_config_get(st, "drained-gpus", drained, sizeof drained);
	int wpid = queue_worker_pid(dir);
	if (json)
		queue_json_print(stdout, queue_gpus_json(rows, n, t, wpid), false);
	else
		queue_gpus_render(stdout, rows, n, t, wpid, drained);
	free(rows);
	queue_db_close(st);
	return GW_EXIT_OK;
}

/* ---- config ---- */

static void config_keys(FILE *out)
{
	for (int i = 0; queue_config_keys[i].key; i++)
		fprintf(out, _("  %-16s %s (default '%s')\n"), queue_config_keys[i].key,
		        _(queue_config_keys[i].help), queue_config_keys[i].def);
}

int qcmd_config(const char *dir, int argc, char **argv, const gw_global *g)
{
	const opt_def opts[] = {OPT_END};
	const opt_cmd oc = {.name = "queue config",
	                    .usage = "queue config [KEY [VALUE]]",
	                    .about = N_("Without KEY every setting, with KEY its value, with VALUE "
	                                "sets it."),
	                    .opts = opts,
	                    .more = N_("Keys:"),
	                    .more_fn = config_keys,
	                    .max_args = 2,
	                    .stop_at_arg = true};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	int n = argc - first;
	const char *key = n > 0 ? argv[first] : NULL, *val = n > 1 ? argv[first + 1] : NULL;
	if (key && !queue_config_find(key)) {
		const char *keys[64];
		size_t nk = 0;
		for (; nk < 64 && queue_config_keys[nk].key; nk++)
			keys[nk] = queue_config_keys[nk].key;
		const char *s = opt_suggest(key, keys, nk);
		char hint[96];
		snprintf(hint, sizeof hint, _("did you mean '%s'?"), s ? s : "");
		return gw_error(GW_EXIT_USAGE, key,
		                s ? hint : N_("gpuwhy queue config --help lists the keys"),
		                _("unknown setting"));
	}
	gw_fail e = {0};
	if (val && !queue_config_check(key, val, &e))
		return gw_fail_print(&e);
	queue_db *st;
	if ((rc = qcmd_open(dir, &st)))
		return rc;
	char v[256];
	if (!key) {
		for (int i = 0; queue_config_keys[i].key; i++) {
			queue_db_config_get(st, queue_config_keys[i].key, v, sizeof v);
			printf("%-16s %s\n", queue_config_keys[i].key, v);
		}
	} else if (!val) {
		queue_db_config_get(st, key, v, sizeof v);
		printf("%s\n", v);
	} else if (queue_db_config_set(st, key, val) != 0) {
		rc = GW_EXIT_ENV;
	}
	queue_db_close(st);
	if (val)
		queue_worker_poke(dir);
	return rc;
}

/* ---- worker / stop ---- */

static int set_ready_fd(const opt_def *od, const char *v, void *ctx)
{
	(void)od;
	long long x;
	queue_worker_opts *o = ctx;
	if (!gw_parse_int(v, 0, 1 << 20, &x))
		return gw_error(GW_EXIT_USAGE, "--ready-fd", NULL, _("bad descriptor"));
	o->ready_fd = (int)x;
	fcntl(o->ready_fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

int qcmd_worker(const char *dir, int argc, char **argv, const gw_global *g)
{
	queue_worker_opts o = {
	    .dir = dir, .gpus = g->gpus, .ready_fd = -1, .self_exe = gw_self_exe()};
	const opt_def opts[] = {OPT_DURATION(0, "idle-exit", "D", &o.idle_exit_ns, 0,
	                                     "stop after D with nothing to do (default: never)"),
	                        OPT_CALL(0, "ready-fd", "FD", set_ready_fd, NULL, .hidden = true),
	                        OPT_END};
	const opt_cmd oc = {
	    .name = "queue worker",
	    .usage = "[--gpus LIST] queue [--queue DIR] worker [--idle-exit D]",
	    .about =
	        N_("Runs the scheduler in the foreground until SIGTERM/SIGINT (`gpuwhy queue\n"
	           "stop`), or until idle for D. Running tasks survive it: the next worker\n"
	           "re-adopts them. `add` starts one in the background (with --idle-exit 10m)\n"
	           "when none runs; its log is DIR/worker.log."),
	    .opts = opts,
	    .stop_at_arg = true,
	    .ctx = &o};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	if (!o.self_exe)
		return gw_error(GW_EXIT_ENV, "/proc/self/exe", NULL, _("cannot find this program"));
	return queue_worker_run(&o);
}

int qcmd_stop(const char *dir, int argc, char **argv, const gw_global *g)
{
	const opt_def opts[] = {OPT_END};
	const opt_cmd oc = {.name = "queue stop",
	                    .usage = "queue stop",
	                    .about = N_("Stops the worker; running tasks go on and the next worker "
	                                "re-adopts them."),
	                    .opts = opts};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	struct stat dst;
	gw_fail e = {0};
	if (!(lstat(dir, &dst) != 0 && errno == ENOENT) && queue_dir_check(dir, &e))
		return gw_fail_print(&e);
	int pid = queue_worker_pid(dir);
	if (pid == 0) {
		puts(_("no worker runs"));
		return GW_EXIT_OK;
	}
	gw_fail why = {0};
	if (pid < 0 || queue_worker_signal(dir, pid, SIGTERM, gw_self_exe(), &why) != 0)
		return gw_error(
		    GW_EXIT_ENV, "queue stop",
		    _("nothing was signalled; fuser -v DIR/worker.lock shows its holder"),
		    _("worker.lock names pid %d: %s"), pid, pid < 0 ? _("no PID") : why.why_text);
	int64_t until = gw_mono_ns() + 15000000000LL;
	while (queue_worker_pid(dir) != 0 && gw_mono_ns() < until)
		gw_sleep_ns(20000000);
	if (queue_worker_pid(dir) != 0)
		return gw_error(GW_EXIT_ENV, "queue stop", NULL, _("worker %d did not stop"), pid);
	printf(_("worker %d stopped (running tasks go on; the next worker re-adopts them)\n"), pid);
	return GW_EXIT_OK;
}
