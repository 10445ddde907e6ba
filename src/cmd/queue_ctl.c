/* queue_ctl.c - `gpuwhy queue` cancel, retry, clean, pause/resume/drain, gpus, config,
 * worker and stop. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "queue/control.h"
#include "queue/listing.h"
#include "util/err.h"
#include "util/selfexe.h"
#include "util/parse.h"

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
		queue_ctl_unended(st, &ids, &n);
	} else {
		n = argc - first;
		ids = calloc((size_t)n, sizeof *ids);
		for (int i = 0; i < n; i++)
			qcmd_parse_id(argv[first + i], &ids[i]);
	}
	for (int i = 0; i < n && !rc; i++) {
		queue_cancel_result res;
		queue_state ended;
		int r = queue_ctl_cancel(st, ids[i], &res, &ended);
		if (r > 0) {
			rc = gw_error(GW_EXIT_USAGE, "queue cancel", NULL, _("no task %lld"),
			              (long long)ids[i]);
			break;
		}
		if (r < 0) {
			rc = GW_EXIT_ENV;
			break;
		}
		if (res == QUEUE_CANCELLED)
			printf(_("task %lld cancelled\n"), (long long)ids[i]);
		else if (res == QUEUE_CANCEL_ASKED)
			printf(_("task %lld: cancel requested (it is running; its record says "
			         "cancelled "
			         "once its processes are gone)\n"),
			       (long long)ids[i]);
		else if (res == QUEUE_CANCEL_ENDED)
			printf(_("task %lld already ended (%s)\n"), (long long)ids[i],
			       queue_state_name(ended));
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
	if (queue_ctl_kick(dir, any && !draining) != 0)
		return GW_EXIT_ENV;
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
	int n;
	if (queue_ctl_clean(st, dir, all, &n) != 0) {
		queue_db_close(st);
		return GW_EXIT_ENV;
	}
	printf(P_("removed %d task\n", "removed %d tasks\n", n), n);
	queue_db_close(st);
	return GW_EXIT_OK;
}

/* ---- pause / resume / drain ---- */

/* Add (or remove) GPU list entries to drained-gpus. */
static int edit_drained(queue_db *st, const char *list, bool add)
{
	char out[256];
	gw_fail e = {0};
	int rc = queue_ctl_drain_gpus(st, list, add, out, sizeof out, &e);
	if (rc)
		return e.code ? gw_fail_print(&e) : rc;
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
	queue_mode m = !strcmp(sub, "pause")   ? QUEUE_PAUSE
	               : !strcmp(sub, "drain") ? QUEUE_DRAIN
	                                       : QUEUE_RESUME;
	if (gpu)
		rc = edit_drained(st, gpu, m == QUEUE_DRAIN);
	else if ((rc = queue_ctl_set_mode(st, m, &start)) == 0)
		puts(m == QUEUE_PAUSE ? _("paused: running tasks go on, no new task starts (gpuwhy "
		                          "queue resume)")
		     : m == QUEUE_DRAIN
		         ? _("draining: running tasks finish, no new task starts, then the worker "
		             "stops (gpuwhy queue resume undoes it)")
		         : _("resumed"));
	queue_db_close(st);
	if (queue_ctl_kick(dir, !rc && start) != 0)
		return GW_EXIT_ENV;
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
	gw_fail e = {0};
	int pid = 0;
	queue_stop_result r = queue_ctl_stop(dir, gw_self_exe(), &pid, &e);
	if (r == QUEUE_STOP_BAD_DIR)
		return gw_fail_print(&e);
	if (r == QUEUE_STOP_NONE) {
		puts(_("no worker runs"));
		return GW_EXIT_OK;
	}
	if (r == QUEUE_STOP_NO_PID || r == QUEUE_STOP_UNSENT)
		return gw_error(
		    GW_EXIT_ENV, "queue stop",
		    _("nothing was signalled; fuser -v DIR/worker.lock shows its holder"),
		    _("worker.lock names pid %d: %s"), pid,
		    r == QUEUE_STOP_NO_PID ? _("no PID") : e.why_text);
	if (r == QUEUE_STOP_STUCK)
		return gw_error(GW_EXIT_ENV, "queue stop", NULL, _("worker %d did not stop"), pid);
	printf(_("worker %d stopped (running tasks go on; the next worker re-adopts them)\n"), pid);
	return GW_EXIT_OK;
}
