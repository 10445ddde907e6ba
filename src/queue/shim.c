/*
 * shim.c - the supervisor of an attempt (a child the worker forks).
 *
 * A shim runs one attempt at a time and, once the worker has recorded its
 * end, waits for the next one on its socket, so a drain of short tasks does
 * not fork one per task. The shim starts a session of its own, gets its
 * attempt and then the worker's go-ahead on a socket (sent only after the
 * worker recorded the shim's PID, so a command never runs unrecorded), runs
 * the command in a process group of its own with stdout/stderr appended to
 * the task's log, enforces the time limit (SIGTERM, then SIGKILL to the
 * whole group), and when the command ends hands its outcome to the worker
 * (or, with no worker to take it, writes it to a status file). Because
 * the shim, not the worker, is the command's parent, a worker that dies
 * (kill -9, restart) loses nothing: the next worker re-adopts a live shim
 * or reads the status file it left.
 *
 * Signals: SIGUSR1 = cancel (recorded as cancelled); SIGTERM/SIGINT/SIGHUP
 * (a shutdown) are passed on to the command and recorded as what killed it.
 * While it waits for work, a shutdown ends the shim; a cancel that came with
 * an attempt's end went with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "queue/shim.h"
#include "util/parse.h"
#include "util/timeutil.h"

extern char **environ;

typedef queue_shim_opts shim_opts;

typedef struct {
	int task_pid;
	double started, ended;
	bool complete, not_started, exit_ok, timed_out, cancelled;
	int exit_code, signal, exec_errno;
	int64_t maxrss_kib;
} shim_state;

/* The status as key=value lines (the status file's format, also sent to the worker). */
static size_t format_status(char *buf, size_t len, const shim_state *s)
{
	size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__)
	PUT("shim_pid=%d\n", (int)getpid());
	if (s->task_pid)
		PUT("task_pid=%d\n", s->task_pid);
	if (s->started > 0)
		PUT("started=%.6f\n", s->started);
	if (s->not_started)
		PUT("not_started=1\n");
	if (s->cancelled)
		PUT("cancelled=1\n");
	if (s->complete) {
		PUT("ended=%.6f\n", s->ended);
		if (s->exit_ok)
			PUT("exit=%d\n", s->exit_code);
		if (s->signal)
			PUT("signal=%d\n", s->signal);
		if (s->timed_out)
			PUT("timed_out=1\n");
		if (s->exec_errno)
			PUT("exec_errno=%d\n", s->exec_errno);
		if (s->maxrss_kib > 0)
			PUT("maxrss_kib=%lld\n", (long long)s->maxrss_kib);
		PUT("complete=1\n");
	}
#undef PUT
	return n < len ? n : len - 1;
}

/* Write the status file atomically: readers see the old or the new one, never half. */
static void write_status(const char *path, const shim_state *s)
{
	char tmp[4200], text[1024];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	size_t n = format_status(text, sizeof text, s);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* No fsync: rename makes it whole or absent for a crashed process; after a power
	 * loss a missing status only means the attempt is counted lost and retried. */
	bool ok = write(fd, text, n) == (ssize_t)n;
	ok = close(fd) == 0 && ok;
	if (ok)
		rename(tmp, path);
	else
		unlink(tmp);
}

/*
 * Hand the final status to the worker and wait until it has recorded it ('k'):
 * then no file is needed. false when the worker is gone (or went before
 * answering): the caller writes the status file for the next worker.
 */
static bool hand_over(int sock, const shim_state *s)
{
	char msg[1100];
	msg[0] = QUEUE_SHIM_ENDED;
	size_t n = 1 + format_status(msg + 1, sizeof msg - 1, s);
	if (send(sock, msg, n, MSG_NOSIGNAL) != (ssize_t)n)
		return false;
	char ack = 0;
	ssize_t got;
	while ((got = read(sock, &ack, 1)) < 0 && errno == EINTR)
		;
	return got == 1 && ack == QUEUE_SHIM_RECORDED;
}

void queue_status_parse(const char *text, queue_status *out)
{
	memset(out, 0, sizeof *out);
	out->maxrss_kib = -1;
	out->present = true;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) : strlen(p);
		char line[256];
		snprintf(line, sizeof line, "%.*s", (int)(ll < sizeof line ? ll : sizeof line - 1),
		         p);
		p = nl ? nl + 1 : p + ll;
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		const char *k = line, *v = eq + 1;
		if (!strcmp(k, "task_pid"))
			out->task_pid = atoi(v);
		else if (!strcmp(k, "started"))
			out->started = gw_strtod_c(v, NULL);
		else if (!strcmp(k, "ended"))
			out->ended = gw_strtod_c(v, NULL);
		else if (!strcmp(k, "exit")) {
			out->exit_ok = true;
			out->exit_code = atoi(v);
		} else if (!strcmp(k, "signal"))
			out->signal = atoi(v);
		else if (!strcmp(k, "timed_out"))
			out->timed_out = atoi(v) != 0;
		else if (!strcmp(k, "cancelled"))
			out->cancelled = atoi(v) != 0;
		else if (!strcmp(k, "not_started"))
			out->not_started = atoi(v) != 0;
		else if (!strcmp(k, "exec_errno"))
			out->exec_errno = atoi(v);
		else if (!strcmp(k, "maxrss_kib"))
			out->maxrss_kib = atoll(v);
		else if (!strcmp(k, "complete"))
			out->complete = atoi(v) != 0;
	}
}

int queue_status_read(const char *path, queue_status *out)
{
	memset(out, 0, sizeof *out);
	out->maxrss_kib = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	char text[2048];
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	queue_status_parse(text, out);
	return 0;
}

static void log_line(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0)
		return;
}

/*
 * Start the command: its own process group, default signal handling, stdin
 * from /dev/null, stdout and stderr appended to the log. posix_spawn (vfork
 * underneath) costs far less than fork on a loaded or sandboxed machine.
 * Returns the PID, or -errno when it could not be run.
 */
static pid_t spawn_command(const shim_opts *o, int logfd, const sigset_t *oldmask)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	if (o->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	sigset_t all;
	sigfillset(&all);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, oldmask);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
	                                  POSIX_SPAWN_SETSIGMASK);
	pid_t pid;
	int rc = posix_spawnp(&pid, o->argv[0], &fa, &at, o->argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc == 0 ? pid : -rc;
}

/* Wait for the command, ending it on its time limit or a cancel (SIGTERM, then
 * SIGKILL after the grace period). Returns its wait status; ru gets its usage. */
static int supervise(const shim_opts *o, pid_t child, int logfd, const sigset_t *set, shim_state *s,
                     struct rusage *ru)
{
	int64_t t0 = gw_mono_ns();
	int64_t timeout_at = o->timeout_ns > 0 ? t0 + o->timeout_ns : 0;
	int64_t kill_at = 0;
	int status = 0;
	memset(ru, 0, sizeof *ru);
	for (;;) {
		pid_t w = wait4(child, &status, WNOHANG, ru);
		if (w == child)
			break;
		int64_t now = gw_mono_ns();
		if (timeout_at && now >= timeout_at && !s->timed_out && !s->cancelled) {
			s->timed_out = true;
			log_line(logfd, "gpuwhy: time limit reached; sending SIGTERM\n");
			kill(-child, SIGTERM);
			kill_at = now + o->grace_ns;
		}
		if (kill_at && now >= kill_at) {
			kill(-child, SIGKILL);
			kill_at = 0;
		}
		int64_t next = now + 1000000000LL;
		if (timeout_at && !s->timed_out && timeout_at < next)
			next = timeout_at;
		if (kill_at && kill_at < next)
			next = kill_at;
		int64_t wait_ns = next - now;
		struct timespec ts = {.tv_sec = wait_ns / 1000000000LL,
		                      .tv_nsec = wait_ns % 1000000000LL};
		siginfo_t si;
		int sig = sigtimedwait(set, &si, &ts);
		if (sig == SIGUSR1 || sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			if (sig == SIGUSR1 && !s->cancelled) {
				s->cancelled = true;
				log_line(logfd, "gpuwhy: cancelled; sending SIGTERM\n");
			}
			kill(-child, SIGTERM);
			if (!kill_at)
				kill_at = gw_mono_ns() + o->grace_ns;
		}
	}
	return status;
}

/* The command ended: what it left behind in its group goes too, and the log says how
 * it ended. */
static void conclude(const shim_opts *o, pid_t child, int logfd, shim_state *s, int status,
                     const struct rusage *ru)
{
	s->ended = gw_wall_s();
	s->complete = true;
	if (WIFEXITED(status)) {
		s->exit_ok = true;
		s->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		s->signal = WTERMSIG(status);
	}
	s->maxrss_kib = ru->ru_maxrss;
	/* What the command left behind in its group goes too: SIGTERM, then SIGKILL. */
	if (kill(-child, 0) == 0) {
		kill(-child, SIGTERM);
		int64_t until = gw_mono_ns() + o->grace_ns;
		while (kill(-child, 0) == 0 && gw_mono_ns() < until)
			gw_sleep_ns(20000000);
		kill(-child, SIGKILL);
	}
	double secs = s->ended - s->started;
	if (s->signal)
		log_line(logfd, "=== gpuwhy attempt end: signal %d after %.3fs ===\n", s->signal,
		         secs);
	else
		log_line(logfd, "=== gpuwhy attempt end: exit %d after %.3fs ===\n", s->exit_code,
		         secs);
}

static void block_signals(sigset_t *set, sigset_t *old)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigprocmask(SIG_BLOCK, set, old);
}

/* One attempt after its go-ahead (signals in set blocked, old the mask to give the
 * command): run it, supervise it, hand its end over. true when the worker recorded
 * it (this shim may then take another). */
static bool run_attempt(const shim_opts *op, int sock, const sigset_t *set, const sigset_t *old)
{
	shim_opts o = *op;
	shim_state s = {0};
	int logfd =
	    o.log_fd >= 0 ? o.log_fd : open(o.log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (o.log_fd >= 0)
		fcntl(logfd, F_SETFD, FD_CLOEXEC);
	if (logfd < 0)
		logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	s.started = gw_wall_s();
	/* A working directory that is not there is the task's fault, not the program's. */
	struct stat cwd_st;
	bool cd_ok = !o.cwd || (stat(o.cwd, &cwd_st) == 0 && S_ISDIR(cwd_st.st_mode) &&
	                        access(o.cwd, X_OK) == 0);
	pid_t child = cd_ok ? spawn_command(&o, logfd, old) : -(errno ? errno : ENOTDIR);
	if (child < 0) {
		int err = (int)-child;
		log_line(logfd, "gpuwhy: cannot run '%s'%s%s: %s\n", o.argv[0], cd_ok ? "" : " in ",
		         cd_ok ? "" : o.cwd, strerror(err));
		s.complete = true;
		s.exec_errno = err;
		s.exit_ok = true;
		/* The shell's convention: 127 not found, 126 found but not runnable. */
		s.exit_code = cd_ok && err == ENOENT ? 127 : 126;
		s.ended = gw_wall_s();
		log_line(logfd, "=== gpuwhy attempt end: exit %d after 0.000s ===\n", s.exit_code);
	} else {
		s.task_pid = child;
		/* The worker keeps the command's PID (its process group) to end what a lost
		 * shim leaves behind; without a worker nothing is written: the next one finds
		 * the group by the attempt's token. */
		char pmsg[32];
		int pl = snprintf(pmsg, sizeof pmsg, "%c%d", QUEUE_SHIM_PID, (int)child);
		if (send(sock, pmsg, (size_t)pl, MSG_NOSIGNAL | MSG_DONTWAIT) != pl) {
			/* No worker listens. */
		}
		struct rusage ru;
		int status = supervise(&o, child, logfd, set, &s, &ru);
		conclude(&o, child, logfd, &s, status, &ru);
	}
	close(logfd);
	bool recorded = hand_over(sock, &s);
	if (!recorded) {
		write_status(o.status, &s);
		return false;
	}
	/* A cancel the worker sent before it recorded the end was for this attempt: it is
	 * pending now (the worker signals before it answers), and goes with it. */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	struct timespec zero = {0};
	while (sigtimedwait(&usr1, NULL, &zero) == SIGUSR1)
		;
	return true;
}

int queue_shim_run(const queue_shim_opts *op)
{
	shim_opts o = *op;
	setsid();
	signal(SIGPIPE, SIG_IGN);
	fcntl(o.sock, F_SETFD, FD_CLOEXEC);

	/* The go-ahead: 'g' run; 'x' cancelled before it started; 'n' (the worker could not
	 * record the attempt) or EOF (the worker is gone): do not run. */
	char go = 0;
	ssize_t n;
	while ((n = read(o.sock, &go, 1)) < 0 && errno == EINTR)
		;
	if (n != 1 || go != 'g') {
		shim_state s = {0};
		s.not_started = true;
		s.cancelled = n == 1 && go == 'x';
		write_status(o.status, &s);
		return 0;
	}
	sigset_t set, old;
	block_signals(&set, &old);
	if (!run_attempt(&o, o.sock, &set, &old))
		return 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return queue_shim_serve(o.sock);
}

/* ---- assignments: a shim that waits for its next attempt ---- */

/* Layout: 'a', then NUL-terminated fields: timeout_ns, grace_ns, status path, log
 * path, cwd ("" none), argc, the argv strings, then the environment's strings. */
char *queue_shim_pack(const queue_shim_opts *o, char *const *envp, size_t *len)
{
	char num[3][32];
	int argc = 0;
	while (o->argv[argc])
		argc++;
	snprintf(num[0], sizeof num[0], "%lld", (long long)o->timeout_ns);
	snprintf(num[1], sizeof num[1], "%lld", (long long)o->grace_ns);
	snprintf(num[2], sizeof num[2], "%d", argc);
	const char *head[] = {num[0], num[1], o->status, o->log, o->cwd ? o->cwd : "", num[2]};
	size_t n = 1;
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		n += strlen(head[i]) + 1;
	for (int i = 0; i < argc; i++)
		n += strlen(o->argv[i]) + 1;
	for (char *const *e = envp; *e; e++)
		n += strlen(*e) + 1;
	char *msg = malloc(n), *p = msg;
	if (!msg)
		return NULL;
	*p++ = QUEUE_SHIM_ASSIGN;
#define PUTS(str) (p = stpcpy(p, (str)) + 1)
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		PUTS(head[i]);
	for (int i = 0; i < argc; i++)
		PUTS(o->argv[i]);
	for (char *const *e = envp; *e; e++)
		PUTS(*e);
#undef PUTS
	*len = n;
	return msg;
}

int queue_shim_assign(int sock, const char *msg, size_t len, int log_fd)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (log_fd >= 0) {
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof u.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &log_fd, sizeof log_fd);
	}
	ssize_t sent;
	while ((sent = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	return sent == (ssize_t)len ? 0 : -1;
}

/* Split an assignment into o (pointing into msg) and a new environment (malloc'd
 * array, NULL-terminated); false when it is not one. */
static bool unpack(char *msg, size_t len, shim_opts *o, char ***envp)
{
	if (len < 2 || msg[0] != QUEUE_SHIM_ASSIGN || msg[len - 1] != '\0')
		return false;
	size_t nf = 0;
	for (size_t i = 1; i < len; i++)
		nf += msg[i] == '\0';
	char **f = malloc((nf + 1) * sizeof *f);
	if (!f)
		return false;
	char *p = msg + 1;
	for (size_t i = 0; i < nf; i++, p += strlen(p) + 1)
		f[i] = p;
	f[nf] = NULL;
	long argc = nf >= 6 ? strtol(f[5], NULL, 10) : -1;
	if (argc < 1 || (size_t)argc > nf - 6) {
		free(f);
		return false;
	}
	o->timeout_ns = strtoll(f[0], NULL, 10);
	o->grace_ns = strtoll(f[1], NULL, 10);
	o->status = f[2];
	o->log = f[3];
	o->cwd = f[4][0] ? f[4] : NULL;
	/* argv and the environment are both NULL-terminated views into f. */
	size_t env0 = 6 + (size_t)argc;
	char **v = malloc((nf + 2) * sizeof *v);
	if (!v) {
		free(f);
		return false;
	}
	size_t k = 0;
	for (size_t i = 6; i < env0; i++)
		v[k++] = f[i];
	v[k++] = NULL;
	for (size_t i = env0; i < nf; i++)
		v[k++] = f[i];
	v[k] = NULL;
	free(f);
	o->argv = v;
	*envp = v + argc + 1;
	return true;
}

static volatile sig_atomic_t idle_stop, idle_cancel;

/* Waiting for work: a shutdown ends the shim; a cancel can only be for the attempt
 * the worker is handing over (it signals only shims of recorded attempts), so it is
 * kept for that one. */
static void on_idle_signal(int sig)
{
	if (sig == SIGUSR1)
		idle_cancel = 1;
	else
		idle_stop = 1;
}

/* The next assignment: its text (malloc'd, *len bytes) and log descriptor; NULL when
 * the worker is gone or a shutdown came. */
static char *next_assignment(int sock, const sigset_t *waitmask, size_t *len, int *log_fd)
{
	*log_fd = -1;
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		int r = ppoll(&p, 1, NULL, waitmask);
		if (idle_stop)
			return NULL;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NULL;
		break;
	}
	char *msg = malloc(QUEUE_SHIM_MSG_MAX);
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = QUEUE_SHIM_MSG_MAX};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
	ssize_t got = msg ? recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) : -1;
	for (struct cmsghdr *c = got >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(log_fd, CMSG_DATA(c), sizeof *log_fd);
	if (got <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		if (*log_fd >= 0)
			close(*log_fd);
		free(msg);
		return NULL;
	}
	*len = (size_t)got;
	return msg;
}

int queue_shim_serve(int sock)
{
	setsid();
	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa = {.sa_handler = on_idle_signal};
	sigemptyset(&sa.sa_mask);
	const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
	sigset_t set, old;
	block_signals(&set, &old);
	char *msg, *prev = NULL;
	char **prev_env = NULL;
	size_t len;
	int log_fd;
	while ((msg = next_assignment(sock, &old, &len, &log_fd))) {
		shim_opts o = {.sock = sock, .log_fd = log_fd};
		char **envp;
		if (!unpack(msg, len, &o, &envp)) {
			if (log_fd >= 0)
				close(log_fd);
			free(msg);
			break;
		}
		/* The go-ahead, once the worker recorded the attempt. */
		char go = 0;
		ssize_t n;
		while ((n = read(sock, &go, 1)) < 0 && errno == EINTR)
			;
		if (n == 1 && go == QUEUE_SHIM_FORGET) {
			if (log_fd >= 0)
				close(log_fd);
			free(o.argv);
			free(msg);
			continue;
		}
		if (n != 1 || go != 'g') {
			shim_state s = {0};
			s.not_started = true;
			write_status(o.status, &s);
			break;
		}
		if (idle_cancel) {
			idle_cancel = 0;
			raise(SIGUSR1); /* pending (blocked): supervise() takes it as a cancel */
		}
		environ = envp;
		free(prev_env);
		free(prev);
		prev = msg;
		prev_env = o.argv;
		if (!run_attempt(&o, sock, &set, &old))
			break;
	}
	return 0;
}
