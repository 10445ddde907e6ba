/* queue.c - `gpuwhy queue`: GPU-aware batch runner (the front end; the work is in src/queue/).
 * The subcommands live in queue_*.c; this file dispatches and holds what they share. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/opt.h"
#include "cmd/queue_cmd.h"
#include "queue/db.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/i18n.h"

static const char *queue_dir;
static const opt_def queue_opts[] = {
    OPT_STRING('q', "queue", "DIR", &queue_dir,
               "the queue's directory (before or after the subcommand, before `--`)"),
    OPT_END};

static opt_cmd queue_cmd = {
    .name = "queue",
    .usage = "queue [--queue DIR] SUBCOMMAND [OPTIONS]",
    .about = N_(
        "A GPU-aware batch queue: memory-aware placement, several tasks per GPU with a\n"
        "cap, retries with a cooldown, out-of-memory recognition, a record per task,\n"
        "state that survives restarts, and a Slurm back end.\n"
        "\n"
        "  add [OPTIONS] -- CMD [ARGS...]   queue a command; prints its task id\n"
        "  add [OPTIONS] --from FILE        queue one task per line / JSON object of FILE\n"
        "  ls [--json] [--state STATE]      list tasks\n"
        "  show ID [--json] [--lines N]     command, state, attempts, GPUs, peaks, log tail\n"
        "  log ID [-f] [--attempt N]        a task's output (-f: follow until it ends)\n"
        "  wait [ID...] [--timeout D]       until the tasks end; exit 1 if one did not end done\n"
        "  cancel ID... | --all             cancel queued or running tasks\n"
        "  retry ID...                      queue ended tasks again (with a fresh retry budget)\n"
        "  clean [--all]                    forget done tasks (--all: every ended task) and logs\n"
        "  pause | resume | drain           stop starting tasks / go on / finish and stop worker\n"
        "  drain --gpu LIST, resume --gpu LIST   take GPUs out of / back into placement\n"
        "  gpus [--json]                    what the scheduler sees on each GPU\n"
        "  config [KEY [VALUE]]             the queue's settings\n"
        "  worker [--idle-exit D]           run the scheduler in the foreground\n"
        "  stop                             stop the worker (running tasks go on)"),
    .opts = queue_opts,
    .more = N_("The queue lives in --queue DIR, else $GPUWHY_QUEUE, else\n"
               "$XDG_STATE_HOME/gpuwhy/queue (~/.local/state/gpuwhy/queue). `gpuwhy queue "
               "SUBCOMMAND\n--help` describes each one; --format json (or --json) where the "
               "output is data."),
    .exit1 = N_("a waited-for task did not end done")};

typedef struct {
	const char *name;
	int (*fn)(const char *dir, int argc, char **argv, const gw_global *g);
} queue_sub;

static const queue_sub subs[] = {
    {"add", qcmd_add},     {"ls", qcmd_ls},         {"list", qcmd_ls},       {"show", qcmd_show},
    {"log", qcmd_log},     {"wait", qcmd_wait},     {"cancel", qcmd_cancel}, {"retry", qcmd_retry},
    {"clean", qcmd_clean}, {"pause", qcmd_flags},   {"resume", qcmd_flags},  {"drain", qcmd_flags},
    {"gpus", qcmd_gpus},   {"config", qcmd_config}, {"worker", qcmd_worker}, {"stop", qcmd_stop},
};

bool qcmd_parse_id(const char *s, int64_t *id)
{
	long long x;
	if (!gw_parse_int(s, 1, INT64_MAX, &x))
		return false;
	*id = x;
	return true;
}

static void print_err(const gw_fail *e)
{
	gw_fail_print(e);
}

int qcmd_open(const char *dir, queue_db **st)
{
	gw_fail e = {0};
	int rc = queue_db_open(dir, st, &e);
	if (rc)
		return gw_fail_print(&e);
	queue_db_on_error(*st, print_err);
	return 0;
}

int qcmd_bad_id(const char *s)
{
	return gw_error(GW_EXIT_USAGE, s, _("task ids are the numbers `gpuwhy queue ls` shows"),
	                _("not a task id"));
}

/* ---- dispatch ---- */

int cmd_queue(int argc, char **argv, const gw_global *g)
{
	/* --queue DIR before the subcommand (or anywhere before `--`). */
	const char *qopt = NULL;
	char **av = calloc((size_t)argc + 1, sizeof *av);
	int ac = 0;
	bool dashdash = false;
	for (int i = 0; i < argc; i++) {
		if (!dashdash && (!strcmp(argv[i], "--queue") || !strcmp(argv[i], "-q")) &&
		    i + 1 < argc) {
			qopt = argv[++i];
			continue;
		}
		if (!dashdash && !strncmp(argv[i], "--queue=", 8)) {
			qopt = argv[i] + 8;
			continue;
		}
		if (!strcmp(argv[i], "--"))
			dashdash = true;
		av[ac++] = argv[i];
	}
	int rc;
	if (ac < 2 || !strcmp(av[1], "--help") || !strcmp(av[1], "-h")) {
		/* The subcommands by name for the tables' dump, from the one list. */
		static const char *names[sizeof subs / sizeof *subs + 1];
		for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
			names[i] = subs[i].name;
		queue_cmd.subs = names;
		opt_help(&queue_cmd, ac < 2 ? stderr : stdout);
		rc = ac < 2 ? GW_EXIT_USAGE : GW_EXIT_OK;
		free(av);
		return rc;
	}
	char dir[PATH_MAX];
	gw_fail e = {0};
	if ((rc = queue_dir_resolve(qopt, dir, sizeof dir, &e))) {
		free(av);
		return gw_fail_print(&e);
	}
	const char *sub = av[1];
	int sac = ac - 1;
	char **sav = av + 1;
	const queue_sub *q = NULL;
	for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
		if (!strcmp(subs[i].name, sub))
			q = &subs[i];
	if (q) {
		rc = q->fn(dir, sac, sav, g);
	} else {
		const char *names[sizeof subs / sizeof *subs];
		for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
			names[i] = subs[i].name;
		const char *s = opt_suggest(sub, names, sizeof subs / sizeof *subs);
		char hint[96];
		snprintf(hint, sizeof hint, _("did you mean 'gpuwhy queue %s'?"), s ? s : "");
		rc = gw_error(GW_EXIT_USAGE, sub, s ? hint : N_("see gpuwhy queue --help"),
		              _("unknown queue subcommand"));
	}
	free(av);
	return rc;
}
