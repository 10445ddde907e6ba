/* queue_wait.c - `gpuwhy queue log` and `gpuwhy queue wait`: following tasks. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/follow.h"
#include "queue/submit.h"
#include "queue/worker.h"
#include "util/err.h"
#include "util/timeutil.h"

int qcmd_log(const char *dir, int argc, char **argv, const gw_global *g)
{
	bool follow = false;
	int attempt = 0;
	const opt_def opts[] = {
	    OPT_FLAG('f', "follow", &follow, "follow the output until the task ends"),
	    OPT_INT('a', "attempt", "N", &attempt, 1, 1000000, "only the output of attempt N",
	            .why = N_("'%s' is not an attempt number")),
	    OPT_END};
	const opt_cmd oc = {.name = "queue log",
	                    .usage = "queue log ID [-f|--follow] [--attempt N]",
	                    .about = N_("A task's output, all attempts one after the other."),
	                    .opts = opts,
	                    .max_args = -1};
	int first, prc = opt_parse(&oc, argc, argv, &first);
	if (prc)
		return prc == OPT_HELP ? GW_EXIT_OK : prc;
	if (first + 1 != argc)
		return gw_error(GW_EXIT_USAGE, "queue log", _("gpuwhy queue log ID"),
		                _("give one task id"));
	int64_t id;
	if (!qcmd_parse_id(argv[first], &id))
		return qcmd_bad_id(argv[first]);
	queue_db *st;
	int rc = qcmd_open(dir, &st);
	if (rc)
		return rc;
	int state = queue_db_state_of(st, id);
	if (state < 0) {
		queue_db_close(st);
		return gw_error(GW_EXIT_USAGE, argv[first], NULL, _("no such task"));
	}
	int64_t from, until;
	if (queue_log_span(st, id, attempt, &from, &until) != 0) {
		queue_db_close(st);
		return gw_error(GW_EXIT_USAGE, "--attempt", NULL, _("task %lld has no attempt %d"),
		                (long long)id, attempt);
	}
	char path[PATH_MAX];
	queue_log_path(dir, id, path, sizeof path);
	int64_t off = from;
	int quiet_rounds = 0;
	for (;;) {
		bool grew = queue_log_copy(path, &off, until, stdout);
		fflush(stdout);
		if (!follow || until >= 0)
			break;
		state = queue_db_state_of(st, id);
		quiet_rounds = grew ? 0 : quiet_rounds + 1;
		/* Stop once it ended and its last words are out. */
		if (state >= 0 && queue_state_final((queue_state)state) && quiet_rounds >= 2)
			break;
		gw_sleep_ns(200000000);
	}
	queue_db_close(st);
	return GW_EXIT_OK;
}

/* ---- wait ---- */

int qcmd_wait(const char *dir, int argc, char **argv, const gw_global *g)
{
	int64_t timeout_ms = 0;
	const opt_def opts[] = {OPT_DURATION('t', "timeout", "D", &timeout_ms, 1000000,
	                                     "give up after D (30s, 10m, 2h)"),
	                        OPT_END};
	const opt_cmd oc = {.name = "queue wait",
	                    .usage = "queue wait [ID...] [--timeout D]",
	                    .about = N_("Waits until the tasks (all when none given) have ended."),
	                    .opts = opts,
	                    .exit1 = N_("a task ended otherwise than done, or the timeout passed"),
	                    .max_args = -1};
	int first, rc = opt_parse(&oc, argc, argv, &first);
	if (rc)
		return rc == OPT_HELP ? GW_EXIT_OK : rc;
	int nids = argc - first;
	int64_t *ids = calloc((size_t)nids + 1, sizeof *ids);
	for (int i = 0; i < nids; i++)
		if (!qcmd_parse_id(argv[first + i], &ids[i])) {
			free(ids);
			return qcmd_bad_id(argv[first + i]);
		}
	queue_db *st;
	if ((rc = qcmd_open(dir, &st))) {
		free(ids);
		return rc;
	}
	int64_t deadline = timeout_ms > 0 ? gw_mono_ns() + timeout_ms * 1000000 : 0;
	bool hinted = false;
	rc = GW_EXIT_OK;
	for (;;) {
		int pending, bad;
		int missing = queue_wait_count(st, ids, nids, &pending, &bad);
		if (missing) {
			rc = gw_error(GW_EXIT_USAGE, argv[first + missing - 1], NULL,
			              _("no such task"));
			goto out;
		}
		if (pending == 0) {
			rc = bad ? GW_EXIT_PROBLEMS : GW_EXIT_OK;
			/* Success is silent, as `wait && next` in a script expects. */
			if (bad) {
				fprintf(stderr, "gpuwhy: queue wait: ");
				fprintf(stderr,
				        P_("%d task did not end done\n",
				           "%d tasks did not end done\n", bad),
				        bad);
			}
			break;
		}
		if (deadline && gw_mono_ns() >= deadline) {
			fprintf(stderr, "gpuwhy: queue wait: ");
			fprintf(
			    stderr,
			    P_("%d task still not ended\n", "%d tasks still not ended\n", pending),
			    pending);
			rc = GW_EXIT_PROBLEMS;
			break;
		}
		if (!hinted && queue_worker_pid(dir) == 0) {
			fprintf(stderr, "gpuwhy: queue wait: ");
			fprintf(
			    stderr,
			    _("no worker runs for %s (start one with gpuwhy queue worker); waiting "
			      "anyway\n"),
			    dir);
			hinted = true;
		}
		gw_sleep_ns(200000000);
	}
out:
	free(ids);
	queue_db_close(st);
	return rc;
}
