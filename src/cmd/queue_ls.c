/* queue_ls.c - `gpuwhy queue ls` and `gpuwhy queue show`: tasks as a table or JSON
 * (queue/listing.h renders them). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/state.h"
#include "queue/db.h"
#include "queue/worker.h"
#include "queue/conclude.h"
#include "queue/listing.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/timeutil.h"

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
	if (json)
		queue_json_print(stdout, queue_ls_json(t, n), false);
	else
		queue_ls_render(stdout, t, n, gw_wall_s());
	queue_tasks_free(t, n);
	queue_db_close(st);
	return GW_EXIT_OK;
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
	const char *from = tail ? queue_last_lines(tail, len, lines) : "";
	if (lines == 0)
		from = tail ? tail + len : "";
	if (json)
		queue_json_print(stdout, queue_show_json(&t, at, na, logp, from), true);
	else
		queue_show_render(stdout, &t, at, na, logp, from, lines);
	free(tail);
	free(at);
	queue_task_free(&t);
	queue_db_close(st);
	return GW_EXIT_OK;
}
