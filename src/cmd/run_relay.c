/* run_relay.c - relay the output CMD's leftover processes write after it exited. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cmd/run_relay.h"
#include "util/timeutil.h"

bool run_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/*
 * Copy until every pipe is closed by its writers, until deadline (monotonic
 * ns; 0: none) or until *stop. Once a destination is gone its pipe is still
 * read and the data dropped, so the writer never blocks or meets EPIPE.
 */
static void relay_loop(int fds[3], int64_t deadline, volatile sig_atomic_t *stop)
{
	struct pollfd pf[3];
	bool sink_ok[2] = {true, true};
	char chunk[8192];
	for (;;) {
		int open_fds = 0;
		for (int i = 0; i < 3; i++) {
			pf[i] = (struct pollfd){fds[i], POLLIN, 0};
			open_fds += fds[i] >= 0;
		}
		if (open_fds == 0 || (stop && *stop))
			return;
		int wait_ms = -1;
		if (deadline) {
			int64_t left = deadline - gw_mono_ns();
			if (left <= 0)
				return;
			wait_ms = (int)(left / 1000000 + 1);
		}
		int n = poll(pf, 3, wait_ms);
		if (n < 0 && errno != EINTR)
			return;
		for (int i = 0; i < 3 && n > 0; i++) {
			if (fds[i] < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t r = read(fds[i], chunk, sizeof chunk);
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				close(fds[i]);
				fds[i] = -1;
			} else if (i < 2 && sink_ok[i]) {
				sink_ok[i] = run_write_all(i + 1, chunk, (size_t)r);
			}
		}
	}
}

/* The relay process: async-signal-safe calls only (gpuwhy has threads). */
static void relay_child(int fds[3])
{
	prctl(PR_SET_NAME, "gpuwhy-relay");
	/* It ends when the writers are gone; a closing terminal is not the end of them. */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* Only the pipes and the destinations: no lock, database or socket of gpuwhy's. */
	int keep[3] = {fds[0], fds[1], fds[2]};
	for (int i = 0; i < 3; i++) /* sorted, to close the gaps between them */
		for (int j = i + 1; j < 3; j++)
			if (keep[j] < keep[i]) {
				int t = keep[i];
				keep[i] = keep[j];
				keep[j] = t;
			}
	unsigned from = 3;
	for (int i = 0; i < 3; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
	close(0);
	relay_loop(fds, 0, NULL);
	_exit(0);
}

void run_relay_rest(int fds[3], int64_t wait_ns, volatile sig_atomic_t *stop)
{
	relay_loop(fds, gw_mono_ns() + wait_ns, stop);
	if (fds[0] < 0 && fds[1] < 0 && fds[2] < 0)
		return;
	/* Still held after the wait: hand over rather than close them under a writer. */
	pid_t pid = fork();
	if (pid == 0)
		relay_child(fds);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}
