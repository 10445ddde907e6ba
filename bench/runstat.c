/* runstat.c - runs a command and prints its wall time, CPU time (user + system) and peak RSS,
 * in microseconds where GNU time prints hundredths: "WALL_S CPU_S MAXRSS_KB" on one line to
 * OUT, appended. The command's exit status is runstat's. For benchmarks only.
 *
 *   cc -O2 -o runstat runstat.c && ./runstat OUT CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT CMD [ARGS...]\n", argv[0]);
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("wait4");
		return 2;
	}
	double wall = now() - t0;
	FILE *f = fopen(argv[1], "a");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%.6f %.6f %ld\n", wall, tv(ru.ru_utime) + tv(ru.ru_stime), ru.ru_maxrss);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
