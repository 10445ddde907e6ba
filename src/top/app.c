/*
 * app.c - `gpuwhy top`'s application: opening the GPUs, sampling on the
 * sampler's thread (or the recorder's, with -o), and the UI loop. This
 * thread polls stdin, a pipe the feed writes to, and a pipe the signal
 * handlers write to, so drawing never waits on NVML or /proc; stderr is
 * captured while the screen is ours.
 */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "record/recorder.h"
#include "sample/sampler.h"
#include "top/app.h"
#include "top/feed.h"
#include "top/input.h"
#include "top/layout.h"
#include "top/model.h"
#include "top/render.h"
#include "top/screen.h"
#include "util/err.h"
#include "util/fail.h"
#include "util/i18n.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define MESSAGE_NS 3000000000LL /* a status-line message stays this long */
/* Rules run at most every 2 s: they read the last 60 s, which one more
 * second hardly moves, and they are the largest part of a refresh. */
#define FINDINGS_EVERY_NS 2000000000LL

/* Everything the loop works on. */
typedef struct {
	top_opts o;
	gpu_ctx *gc;
	sampler *smp;
	recorder *rec;
	top_feed *feed;
	top_model m;
	top_input in;
	top_render_memo memo; /* what is on the screen's canvas */
	char hostname[256];
	char no_gpu[160];
	char message[200];
	int64_t message_until, findings_at;
	bool utf8;
	/* stderr while the screen is ours (see capture_stderr) */
	int err_saved, err_pipe;
	char err_line[200];
	size_t err_len;
	char err_log[8192];
	size_t err_log_len;
} top_app;

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t sig_quit, sig_winch;

static void on_signal(int sig)
{
	int saved = errno;
	if (sig == SIGWINCH)
		sig_winch = 1;
	else
		sig_quit = 1;
	ssize_t r = write(sig_pipe[1], "x", 1);
	(void)r;
	errno = saved;
}

/* ------------------------------------------------------------------ set-up */

/* The MIG layout, read once: instances change only when an administrator repartitions. */
static void mig_summary(gpu_ctx *c, int i, top_gpu_info *info)
{
	gpu_mig m[GPU_MIG_MAX];
	int n = gpu_mig_devices(c, i, m, GPU_MIG_MAX);
	size_t used = 0;
	info->nmig = n;
	info->mig[0] = '\0';
	for (int k = 0; k < n && used < sizeof info->mig; k++) {
		int w = snprintf(info->mig + used, sizeof info->mig - used, "%s%s GI %u",
		                 k ? ", " : "", m[k].profile[0] ? m[k].profile : "?", m[k].gi);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

static int open_gpus(top_app *a)
{
	gw_fail gf;
	gpu_open_opts go = {.gpus = a->o.gpus, .failure = &gf};
	top_gpu_info info[GPU_MAX];
	int n = 0;
	if (gpu_open(&go, &a->gc) != 0) {
		a->gc = NULL;
		gw_fail_print(&gf);
		snprintf(a->no_gpu, sizeof a->no_gpu, "%s",
		         _("no GPU (the reason was printed on stderr); showing the host only. "
		           "gpuwhy --sim h100x8-nvlink top simulates eight"));
	} else {
		n = gpu_count(a->gc);
		if (n > GPU_MAX)
			n = GPU_MAX;
		for (int i = 0; i < n; i++) {
			const gpu_static *s = gpu_static_info(a->gc, i);
			info[i] = (top_gpu_info){.index = s->index};
			snprintf(info[i].name, sizeof info[i].name, "%s", s->name);
			snprintf(info[i].uuid, sizeof info[i].uuid, "%s", s->uuid);
			snprintf(info[i].pci_bus_id, sizeof info[i].pci_bus_id, "%s",
			         s->pci_bus_id);
			snprintf(info[i].vendor, sizeof info[i].vendor, "%s", s->vendor);
			mig_summary(a->gc, i, &info[i]);
		}
		if (n == 0)
			snprintf(a->no_gpu, sizeof a->no_gpu, "%s", _("the driver reports no GPU"));
	}
	if (top_model_init(&a->m, n, info) != 0)
		return -1;
	/* Links between the GPUs, read once: rules about waiting ranks weigh them. */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j) {
				a->m.nvlinks[i][j] = gpu_nvlink_count(a->gc, i, j);
				a->m.xgmi[i][j] = gpu_xgmi_pair(a->gc, i, j);
				a->m.topo[i][j] = gpu_topology_level(a->gc, i, j);
			}
	return 0;
}

static int start_sampling(top_app *a)
{
	a->feed = top_feed_new(NULL);
	if (!a->feed)
		return gw_error(GW_EXIT_ENV, "top", NULL, "cannot set up the sample feed");
	if (a->o.output) {
		recorder_opts ro = {.path = a->o.output,
		                    .interval_ns = a->o.interval_ns,
		                    .gpu = a->gc,
		                    .on_snapshot = top_feed_push,
		                    .arg = a->feed};
		int rc = recorder_open(&ro, &a->rec);
		if (rc)
			return rc;
		recorder_start(a->rec);
		return 0;
	}
	sampler_opts so = {
	    .interval_ns = a->o.interval_ns, .gpu = a->gc, .cb = top_feed_push, .arg = a->feed};
	a->smp = sampler_new(&so);
	if (!a->smp)
		return gw_error(GW_EXIT_ENV, "sampler", NULL, "cannot start the host sampler");
	if (a->gc)
		gpu_slow_thread_start(a->gc);
	if (sampler_start(a->smp) != 0)
		return gw_error(GW_EXIT_ENV, "sampler", NULL, "cannot start the sampling thread");
	return 0;
}

static int stop_sampling(top_app *a)
{
	int rc = 0;
	if (a->rec) {
		long n;
		rc = recorder_finish_stored(a->rec, -1, &n) ? GW_EXIT_ENV : 0;
		a->rec = NULL;
		fprintf(stderr, P_("gpuwhy: %ld sample in %s\n", "gpuwhy: %ld samples in %s\n", n),
		        n, a->o.output);
	}
	if (a->smp) {
		sampler_free(a->smp);
		a->smp = NULL;
	}
	return rc;
}

static int host_ncpu(const top_model *m)
{
	const snapshot *s = top_model_shown(m);
	if (s && s->ncpu > 0)
		return s->ncpu;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

static void say(top_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(top_app *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof a->message, fmt, ap);
	va_end(ap);
	a->message_until = gw_mono_ns() + MESSAGE_NS;
}

static top_frame frame_of(top_app *a, const top_layout *L)
{
	return (top_frame){.m = &a->m,
	                   .L = L,
	                   .in = &a->in,
	                   .hostname = a->hostname,
	                   .interval_ns = a->o.interval_ns,
	                   .record_path = a->o.output,
	                   .message = a->message[0] ? a->message : NULL,
	                   .no_gpu = a->no_gpu[0] ? a->no_gpu : NULL,
	                   .memo = &a->memo};
}

/* ------------------------------------------------------------------ --once */

static int cols_from_env(void)
{
	const char *c = getenv("COLUMNS");
	long long v;
	if (c && gw_parse_int(c, TOP_MIN_COLS, 1000, &v))
		return (int)v;
	return 120;
}

static int run_once(top_app *a)
{
	/* Three snapshots: CPU rates need two, a new process's CPU % one more. */
	int got = 0;
	int64_t deadline = gw_mono_ns() + 3 * a->o.interval_ns + 10000000000LL;
	while (got < 3 && gw_mono_ns() < deadline) {
		struct pollfd p = {top_feed_fd(a->feed), POLLIN, 0};
		if (poll(&p, 1, 200) > 0)
			got += top_feed_drain(a->feed, &a->m, NULL);
	}
	int rc = stop_sampling(a);
	if (got == 0)
		return gw_error(GW_EXIT_ENV, "top", NULL, "no sample arrived");
	top_model_refresh(&a->m);
	top_model_update_findings(&a->m);
	a->in.mode = TOP_IN_NORMAL;
	int cols = cols_from_env();
	top_tree_line tl[256];
	int ntree = a->m.tree ? top_model_tree(&a->m, tl, 256) : 0;
	int rows = top_layout_natural_rows(cols, top_model_gpus_shown(&a->m), host_ncpu(&a->m),
	                                   a->m.nrows, a->m.tree, ntree);
	top_layout L;
	top_layout_compute(cols, rows, top_model_gpus_shown(&a->m), host_ncpu(&a->m), a->m.tree,
	                   &L);
	top_canvas c;
	if (top_canvas_init(&c, cols, rows, a->utf8) != 0)
		return gw_error(GW_EXIT_ENV, "memory", NULL, "out of memory");
	top_frame f = frame_of(a, &L);
	f.in = NULL;
	f.memo = NULL;
	f.once = true;
	top_render(&c, &f);
	top_canvas_print(&c, stdout);
	top_canvas_free(&c);
	return rc;
}

/* ------------------------------------------------------------------ interactive */

static void change_interval(top_app *a, int dir)
{
	if (a->rec) {
		say(a, _("the interval stays %.3g s while recording to %s"),
		    (double)a->o.interval_ns / 1e9, a->o.output);
		return;
	}
	int64_t next = top_interval_step(a->o.interval_ns, dir);
	if (next == a->o.interval_ns) {
		if (dir > 0)
			say(a, "%s", _("the interval is already at its longest (10 s)"));
		else
			say(a, "%s", _("the interval is already at its shortest (100 ms)"));
		return;
	}
	a->o.interval_ns = next;
	sampler_set_interval(a->smp, next);
	double s = (double)next / 1e9;
	if (s < 1)
		say(a, _("sampling every %.0f ms"), s * 1000);
	else
		say(a, _("sampling every %.3g s"), s);
}

static void move_selection(top_app *a, int delta, int visible)
{
	if (delta == TOP_MOVE_END)
		top_model_select_row(&a->m, a->m.nrows - 1, visible);
	else if (delta == -TOP_MOVE_END)
		top_model_select_row(&a->m, 0, visible);
	else if (delta == TOP_MOVE_PAGE || delta == -TOP_MOVE_PAGE)
		top_model_move(&a->m, delta > 0 ? visible : -visible, visible);
	else
		top_model_move(&a->m, delta, visible);
}

static void mouse(top_app *a, const top_layout *L)
{
	int x, y;
	bool header;
	if (!top_screen_click(&x, &y))
		return;
	int row = top_render_hit_row(L, &a->m, x, y, &header);
	if (header) {
		int key = top_render_hit_column(L, x);
		if (key >= 0)
			top_model_set_sort(&a->m, (top_sort_key)key);
	} else if (row >= 0) {
		top_model_select_row(&a->m, row, top_render_proc_rows(L));
	}
}

/* Apply one action; returns false to quit. */
static bool apply(top_app *a, const top_action *act, const top_layout *L)
{
	int visible = top_render_proc_rows(L);
	switch (act->kind) {
	case TOP_A_QUIT:
		return false;
	case TOP_A_SORT_NEXT:
		top_model_next_sort(&a->m);
		/* TRANSLATORS: a sort key of -s/--sort follows (gpu, pid, user, ...), kept as is */
		say(a, _("sorted by %s"), top_sort_name(a->m.sort));
		break;
	case TOP_A_SORT_REVERSE:
		a->m.reverse = !a->m.reverse;
		top_model_refresh(&a->m);
		break;
	case TOP_A_FILTER:
		top_model_set_filter(&a->m, act->text);
		break;
	case TOP_A_GPUS: {
		char err[160];
		if (!top_model_set_gpus(&a->m, act->text, err, sizeof err))
			say(a, _("GPUs: %s"), err);
		else
			say(a, P_("showing %d of %d GPU", "showing %d of %d GPUs", a->m.ngpu),
			    top_model_gpus_shown(&a->m), a->m.ngpu);
		break;
	}
	case TOP_A_PAUSE:
		top_model_pause(&a->m, !a->m.paused);
		top_model_refresh(&a->m);
		if (a->m.paused && a->rec)
			say(a, "%s", _("paused: sampling and recording go on; p resumes"));
		else if (a->m.paused)
			say(a, "%s", _("paused: sampling goes on; p resumes"));
		else
			say(a, "%s", _("resumed"));
		break;
	case TOP_A_TREE:
		a->m.tree = !a->m.tree;
		break;
	case TOP_A_SLOWER:
		change_interval(a, 1);
		break;
	case TOP_A_FASTER:
		change_interval(a, -1);
		break;
	case TOP_A_MOVE:
		move_selection(a, act->delta, visible);
		break;
	case TOP_A_MOUSE:
		mouse(a, L);
		break;
	case TOP_A_RESIZE:
		top_screen_resize();
		break;
	case TOP_A_REDRAW:
	case TOP_A_HELP:
	case TOP_A_NONE:
		break;
	}
	return true;
}

static void draw(top_app *a, top_layout *L, top_canvas *c, bool force)
{
	int cols, rows;
	top_screen_size(&cols, &rows);
	top_layout_compute(cols, rows, top_model_gpus_shown(&a->m), host_ncpu(&a->m), a->m.tree, L);
	if (c->cols != cols || c->rows != rows) {
		top_canvas_free(c);
		if (top_canvas_init(c, cols, rows, a->utf8) != 0)
			return;
	}
	top_model_select_row(&a->m, a->m.sel, top_render_proc_rows(L));
	top_frame f = frame_of(a, L);
	top_render(c, &f);
	top_screen_draw(c, force);
}

/* New samples: into the model, and the findings at most once a second. */
static bool take_samples(top_app *a)
{
	if (top_feed_drain(a->feed, &a->m, NULL) == 0)
		return false;
	if (a->m.paused)
		return false;
	top_model_refresh(&a->m);
	int64_t now = gw_mono_ns();
	if (now >= a->findings_at) {
		top_model_update_findings(&a->m);
		a->findings_at = now + FINDINGS_EVERY_NS;
	}
	return true;
}

static bool read_keys(top_app *a, const top_layout *L, bool *force)
{
	bool is_key;
	unsigned key;
	while (top_screen_key(&is_key, &key) == 0) {
		top_action act = top_input_key(&a->in, is_key, key);
		if (act.kind == TOP_A_REDRAW && !is_key && key == 12)
			*force = true;
		if (!apply(a, &act, L))
			return false;
	}
	return true;
}

/*
 * While the screen is ours, stderr goes into a pipe: a message from a lower
 * layer (a recording that stopped taking writes, -v debug lines) shows on the
 * status line instead of scribbling over the frame, and is printed again once
 * the terminal is restored. Both ends are non-blocking: a flood loses lines
 * rather than stall the sampling thread that writes them.
 */
static void capture_stderr(top_app *a)
{
	int p[2];
	a->err_saved = a->err_pipe = -1;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return;
	fflush(stderr);
	a->err_saved = dup(STDERR_FILENO);
	if (a->err_saved < 0 || dup2(p[1], STDERR_FILENO) < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	close(p[1]);
	a->err_pipe = p[0];
}

static void keep_line(top_app *a)
{
	a->err_line[a->err_len] = '\0';
	if (a->err_len)
		say(a, "%s", a->err_line);
	size_t room = sizeof a->err_log - a->err_log_len;
	int n = snprintf(a->err_log + a->err_log_len, room, "%s\n", a->err_line);
	if (n > 0 && (size_t)n < room)
		a->err_log_len += (size_t)n;
	a->err_len = 0;
}

/* Lines written to stderr since the last call; returns whether there were any. */
static bool read_stderr(top_app *a)
{
	char buf[512];
	ssize_t n;
	bool any = false;
	while (a->err_pipe >= 0 && (n = read(a->err_pipe, buf, sizeof buf)) > 0) {
		any = true;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n')
				keep_line(a);
			else if (a->err_len + 1 < sizeof a->err_line)
				a->err_line[a->err_len++] = buf[i];
		}
	}
	return any;
}

static void restore_stderr(top_app *a)
{
	if (a->err_pipe < 0)
		return;
	fflush(stderr);
	read_stderr(a);
	if (a->err_len)
		keep_line(a);
	dup2(a->err_saved, STDERR_FILENO);
	close(a->err_saved);
	close(a->err_pipe);
	a->err_pipe = -1;
	if (a->err_log_len)
		fwrite(a->err_log, 1, a->err_log_len, stderr);
}

static int run_ui(top_app *a)
{
	bool color = !a->o.no_color && !(getenv("NO_COLOR") && getenv("NO_COLOR")[0]);
	const char *lib = top_screen_missing();
	if (lib)
		return gw_error(GW_EXIT_ENV, "top",
		                N_("use --once, which needs no terminal library"), "%s", lib);
	if (top_screen_open(color, a->o.mouse) != 0)
		return gw_error(GW_EXIT_ENV, "terminal", N_("check TERM, or use --once"),
		                "cannot drive this terminal (TERM=%s)",
		                getenv("TERM") ? getenv("TERM") : "unset");
	capture_stderr(a);
	top_canvas c = {0};
	top_layout L;
	draw(a, &L, &c, false);
	for (;;) {
		int timeout = -1;
		if (a->message[0]) {
			int64_t left = a->message_until - gw_mono_ns();
			timeout = left > 0 ? (int)(left / 1000000) + 1 : 0;
		}
		struct pollfd p[4] = {{STDIN_FILENO, POLLIN, 0},
		                      {top_feed_fd(a->feed), POLLIN, 0},
		                      {sig_pipe[0], POLLIN, 0},
		                      {a->err_pipe, POLLIN, 0}};
		if (poll(p, a->err_pipe >= 0 ? 4 : 3, timeout) < 0 && errno != EINTR)
			break;
		if (sig_quit)
			break;
		bool dirty = false, force = false;
		if (p[2].revents & POLLIN) {
			char buf[16];
			while (read(sig_pipe[0], buf, sizeof buf) > 0)
				;
		}
		if (sig_winch) {
			sig_winch = 0;
			top_screen_resize();
			dirty = force = true;
		}
		if (p[1].revents & POLLIN)
			dirty |= take_samples(a);
		if (a->err_pipe >= 0 && (p[3].revents & POLLIN))
			dirty |= read_stderr(a);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!read_keys(a, &L, &force))
				break;
			dirty = true;
			if (p[0].revents & (POLLHUP | POLLERR) && !(p[0].revents & POLLIN))
				break; /* the terminal went away */
		}
		if (a->message[0] && gw_mono_ns() >= a->message_until) {
			a->message[0] = '\0';
			dirty = true;
		}
		if (dirty)
			draw(a, &L, &c, force);
	}
	top_screen_close();
	restore_stderr(a);
	top_canvas_free(&c);
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Installed before ncurses starts, so ncurses leaves SIGWINCH to us. */
	sigaction(SIGWINCH, &sa, NULL);
}

int top_app_run(const top_opts *o)
{
	top_app a;
	memset(&a, 0, sizeof a);
	a.o = *o;
	/* Only LC_CTYPE follows the locale (main.c); its codeset picks the glyphs. */
	a.utf8 = !a.o.ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	/* An ASCII screen cannot show a translation: it speaks English. */
	if (!a.utf8 && gw_i18n_active())
		gw_i18n_init("en");
	gethostname(a.hostname, sizeof a.hostname - 1);
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return gw_error(GW_EXIT_ENV, "pipe", NULL, "%s", strerror(errno));
	if (open_gpus(&a) != 0)
		return gw_error(GW_EXIT_ENV, "top", NULL, "too many GPUs");
	a.m.sort = (top_sort_key)a.o.sort;
	a.m.tree = a.o.tree;
	if (a.o.filter) {
		top_model_set_filter(&a.m, a.o.filter);
		snprintf(a.in.filter, sizeof a.in.filter, "%s", a.o.filter);
	}
	install_signals();
	int rc = start_sampling(&a);
	if (rc == 0)
		rc = a.o.once ? run_once(&a) : run_ui(&a);
	int rc2 = stop_sampling(&a);
	if (!rc)
		rc = rc2;
	top_feed_free(a.feed);
	top_model_free(&a.m);
	gpu_close(a.gc);
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	return rc;
}
