/*
 * host_bench - CPU time and memory of one full host snapshot (system files plus
 * a followed tree of N sleeping children), against baselines that read the
 * same files in the same run:
 *   naive-c   C stdio: every /proc/PID/stat to find the tree, then stat, status,
 *             io, cmdline and cgroup of every tree member, plus the system files
 *             (no parsing)
 *   python3   the same reads as a Python loop (no psutil), parsing only the ppid
 *   cat       one `cat` of the tree members' and system files per tick (the
 *             /proc listing and the ppid pass are not even counted)
 * Output: a Markdown table on stdout. Usage: host_bench [children] [seconds_1hz] [seconds_10hz]
 */
#include "host/host.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const sys_files[] = {
    "/proc/stat",      "/proc/loadavg",      "/proc/meminfo",         "/proc/vmstat",
    "/proc/uptime",    "/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io",
    "/proc/diskstats", "/proc/net/dev",
};
#define NSYS (sizeof(sys_files) / sizeof(sys_files[0]))

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0)
			v = strtol(line + kl, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static void sleep_until(double t)
{
	double d = t - now_s();
	if (d <= 0)
		return;
	struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* ------------------------------------------------------------- children */

static pid_t *kids;
static int nkids;

static void spawn(int n)
{
	fflush(stdout); /* forks must not inherit unwritten output */
	kids = calloc((size_t)n, sizeof(*kids));
	pid_t parent = getpid();
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			for (;;)
				pause();
		}
		if (p > 0)
			kids[nkids++] = p;
	}
}

static void reap(void)
{
	for (int i = 0; i < nkids; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < nkids; i++)
		waitpid(kids[i], NULL, 0);
}

/* --------------------------------------------------------------- gpuwhy */

struct result {
	double cpu_us, wall_us; /* per snapshot */
	long rss_kb;            /* memory the reader needs */
	double stat_reads;      /* PID/stat files read per snapshot */
	int n;
};

/* One snapshot of a reader under test; returns the PID/stat files it read. */
typedef double (*snapshot_fn)(void *ctx);

/*
 * hz * seconds snapshots on a fixed cadence, each timed alone: the CPU and
 * wall time and the reads per snapshot into r (the memory is the caller's).
 */
static void measure(double hz, double seconds, snapshot_fn snap, void *ctx, struct result *r)
{
	double cpu = 0, wall = 0, reads = 0;
	double t = now_s();
	int n = (int)(hz * seconds);
	for (int i = 0; i < n; i++) {
		t += 1.0 / hz;
		sleep_until(t);
		double c0 = cpu_s(), w0 = now_s();
		reads += snap(ctx);
		cpu += cpu_s() - c0;
		wall += now_s() - w0;
	}
	r->cpu_us = cpu / n * 1e6;
	r->wall_us = wall / n * 1e6;
	r->stat_reads = reads / n;
	r->n = n;
}

struct gpuwhy_reader {
	host_sampler *hs;
	host_sample s;
};

static double gpuwhy_snapshot(void *ctx)
{
	struct gpuwhy_reader *g = ctx;
	host_sampler_sample(g->hs, &g->s);
	return (double)host_sampler_ptree_stats(g->hs).stat_reads;
}

/* follow: 1 this process's tree, 0 nothing (system files only), -1 a PID that
 * does not exist (system files plus the /proc listing pass alone) */
static struct result run_gpuwhy(double hz, double seconds, int follow)
{
	struct result r = {0};
	long rss0 = status_kb("VmRSS:");
	struct gpuwhy_reader g = {host_sampler_new(NULL), {0}};
	int me = follow > 0 ? getpid() : 0x7ffffff0;
	if (follow)
		host_sampler_follow(g.hs, &me, 1);
	host_sampler_sample(g.hs, &g.s); /* warm-up: first sight of every process */
	measure(hz, seconds, gpuwhy_snapshot, &g, &r);
	if (follow > 0 && g.s.nprocs < (size_t)nkids)
		fprintf(stderr, "host_bench: only %zu processes followed\n", g.s.nprocs);
	r.rss_kb = status_kb("VmRSS:") - rss0;
	host_sample_free(&g.s);
	host_sampler_free(g.hs);
	return r;
}

/* -------------------------------------------------------------- naive C */

static char rbuf[1 << 16];

static size_t read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(rbuf, 1, sizeof(rbuf) - 1, f);
	fclose(f);
	rbuf[n] = '\0';
	return n;
}

/* Descendants of root (and root) by a full ppid pass over /proc/PID/stat. */
static int tree(int root, int *out, int max, size_t *stat_reads)
{
	static int pids[1 << 16], ppids[1 << 16];
	int n = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL && n < (1 << 16)) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		(*stat_reads)++;
		if (!read_all(path))
			continue;
		char *close = strrchr(rbuf, ')');
		if (!close)
			continue;
		pids[n] = atoi(e->d_name);
		ppids[n] = atoi(close + 4);
		n++;
	}
	if (d)
		closedir(d);
	int m = 0;
	out[m++] = root;
	for (int k = 0; k < m && m < max; k++)
		for (int i = 0; i < n && m < max; i++)
			if (ppids[i] == out[k])
				out[m++] = pids[i];
	return m;
}

/* The system files, then five files of every member of this process's tree. */
static double naive_snapshot(void *ctx)
{
	(void)ctx;
	static int members[1 << 12];
	static const char *const per_pid[] = {"stat", "status", "io", "cmdline", "cgroup"};
	for (size_t f = 0; f < NSYS; f++)
		read_all(sys_files[f]);
	size_t sr = 0;
	int m = tree(getpid(), members, 1 << 12, &sr);
	for (int k = 0; k < m; k++)
		for (size_t f = 0; f < 5; f++) {
			char path[64];
			snprintf(path, sizeof(path), "/proc/%d/%s", members[k], per_pid[f]);
			read_all(path);
		}
	return (double)sr + m;
}

static struct result run_naive(double hz, double seconds)
{
	struct result r = {0};
	long rss0 = status_kb("VmRSS:");
	measure(hz, seconds, naive_snapshot, NULL, &r);
	r.rss_kb = status_kb("VmRSS:") - rss0;
	return r;
}

/* ------------------------------------------------------------------ cat */

static struct result run_cat(double hz, double seconds)
{
	struct result r = {0};
	static int members[1 << 12];
	size_t sr = 0;
	int m = tree(getpid(), members, 1 << 12, &sr);
	/* argv: cat, system files, per-member files; built once */
	int argc = 0;
	char **argv = calloc(NSYS + (size_t)m * 5 + 2, sizeof(char *));
	argv[argc++] = "cat";
	for (size_t f = 0; f < NSYS; f++)
		argv[argc++] = (char *)sys_files[f];
	static const char *const per_pid[] = {"stat", "status", "io", "cmdline", "cgroup"};
	for (int k = 0; k < m; k++)
		for (size_t f = 0; f < 5; f++) {
			char *p = malloc(64);
			snprintf(p, 64, "/proc/%d/%s", members[k], per_pid[f]);
			argv[argc++] = p;
		}
	double wall = 0, cpu = 0;
	fflush(stdout);
	double t = now_s();
	int n = (int)(hz * seconds);
	for (int i = 0; i < n; i++) {
		t += 1.0 / hz;
		sleep_until(t);
		double w0 = now_s();
		pid_t p = fork();
		if (p == 0) {
			if (!freopen("/dev/null", "w", stdout))
				_exit(127);
			execvp("cat", argv);
			_exit(127);
		}
		struct rusage ru;
		if (wait4(p, NULL, 0, &ru) == p) {
			cpu += (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
			if (ru.ru_maxrss > r.rss_kb)
				r.rss_kb = ru.ru_maxrss;
		}
		wall += now_s() - w0;
	}
	r.cpu_us = cpu / n * 1e6;
	r.wall_us = wall / n * 1e6;
	r.stat_reads = m;
	r.n = n;
	for (int k = (int)NSYS + 1; k < argc; k++)
		free(argv[k]);
	free(argv);
	return r;
}

/* --------------------------------------------------------------- python */

static const char *const py_src =
    "import os,sys,time,resource\n"
    "root,hz,secs=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3])\n"
    "sysf=['/proc/stat','/proc/loadavg','/proc/meminfo','/proc/vmstat','/proc/uptime',\n"
    "      "
    "'/proc/pressure/cpu','/proc/pressure/memory','/proc/pressure/io','/proc/diskstats','/proc/net/"
    "dev']\n"
    "def rd(p):\n"
    "    try:\n"
    "        with open(p,'rb') as f: return f.read()\n"
    "    except OSError: return b''\n"
    "n=int(hz*secs); cpu=0.0; wall=0.0; t=time.monotonic()\n"
    "for i in range(n):\n"
    "    t+=1.0/hz; d=t-time.monotonic()\n"
    "    if d>0: time.sleep(d)\n"
    "    c0=time.process_time(); w0=time.monotonic()\n"
    "    for p in sysf: rd(p)\n"
    "    par={}\n"
    "    for e in os.listdir('/proc'):\n"
    "        if not e.isdigit(): continue\n"
    "        s=rd('/proc/'+e+'/stat')\n"
    "        if s: par[int(e)]=int(s[s.rfind(b')')+4:].split()[0])\n"
    "    kids={}\n"
    "    for p,pp in par.items(): kids.setdefault(pp,[]).append(p)\n"
    "    todo=[root]; m=[]\n"
    "    while todo:\n"
    "        p=todo.pop(); m.append(p); todo.extend(kids.get(p,[]))\n"
    "    for p in m:\n"
    "        for f in ('stat','status','io','cmdline','cgroup'): rd('/proc/%d/%s'%(p,f))\n"
    "    cpu+=time.process_time()-c0; wall+=time.monotonic()-w0\n"
    "print(cpu/n*1e6, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, wall/n*1e6)\n";

static struct result run_python(double hz, double seconds)
{
	struct result r = {0};
	int fd[2];
	if (pipe(fd) != 0)
		return r;
	char root[32], hzs[32], secs[32];
	snprintf(root, sizeof(root), "%d", getpid());
	snprintf(hzs, sizeof(hzs), "%g", hz);
	snprintf(secs, sizeof(secs), "%g", seconds);
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		execlp("python3", "python3", "-c", py_src, root, hzs, secs, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char out[256] = {0};
	ssize_t k = read(fd[0], out, sizeof(out) - 1);
	close(fd[0]);
	waitpid(p, NULL, 0);
	if (k <= 0 || sscanf(out, "%lf %ld %lf", &r.cpu_us, &r.rss_kb, &r.wall_us) != 3)
		r.n = -1;
	else
		r.n = (int)(hz * seconds);
	return r;
}

/* ---------------------------------------------------------------- main */

static void row(const char *name, double hz, struct result r, struct result ref)
{
	if (r.n <= 0) {
		printf("| %s | %g Hz | n/a | | | | |\n", name, hz);
		return;
	}
	printf("| %s | %g Hz | %.0f | %.3f %% | %.2fx | %.0f | %ld |\n", name, hz, r.cpu_us,
	       r.cpu_us * hz / 1e4, r.cpu_us / ref.cpu_us, r.wall_us, r.rss_kb);
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 200;
	double s1 = argc > 2 ? atof(argv[2]) : 20, s10 = argc > 3 ? atof(argv[3]) : 10;
	spawn(children);
	usleep(200 * 1000);
	int nproc = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		nproc += e->d_name[0] >= '1' && e->d_name[0] <= '9';
	if (d)
		closedir(d);
	printf("%d sleeping children followed, %d processes in /proc\n\n", nkids, nproc);
	printf("| reader | rate | CPU us/snapshot | CPU of one core | vs gpuwhy | wall us/snapshot "
	       "| memory KiB (*) |\n");
	printf("| --- | --- | --- | --- | --- | --- | --- |\n");
	static const double rates[2] = {1, 10};
	for (int i = 0; i < 2; i++) {
		double hz = rates[i], secs = i ? s10 : s1;
		struct result g = run_gpuwhy(hz, secs, 1);
		struct result gs = run_gpuwhy(hz, secs, 0);
		struct result gl = run_gpuwhy(hz, secs, -1);
		struct result n = run_naive(hz, secs);
		struct result c = run_cat(hz, secs);
		struct result p = run_python(hz, secs);
		row("gpuwhy host_sampler", hz, g, g);
		row("gpuwhy, system files only", hz, gs, g);
		row("gpuwhy, system + /proc scan, nothing followed", hz, gl, g);
		row("naive C stdio", hz, n, g);
		row("cat", hz, c, g);
		row("python3 read loop", hz, p, g);
		fprintf(stderr,
		        "host_bench: %g Hz: gpuwhy read %.1f PID/stat per snapshot, naive %.1f\n",
		        hz, g.stat_reads, n.stat_reads);
	}
	reap();
	printf("\n(*) in-process readers: growth of this process's RSS while sampling;"
	       " cat and python3: peak RSS of that process.\n");
	return 0;
}
