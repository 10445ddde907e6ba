/* host_top: CPU of every process between two scans of a /proc tree, the busiest first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/host_top.h"

static char root[64];

/* A /proc/PID/stat line with utime+stime = ticks (split 3:1) and a start time. */
static void put_stat(unsigned pid, const char *comm, unsigned ppid, unsigned long ticks,
                     unsigned long start)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%u", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/%u/stat", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
	        "%u (%s) R %u 1 1 0 -1 4194560 100 0 0 0 %lu %lu 0 0 20 0 1 0 %lu 1000000 100 "
	        "18446744073709551615\n",
	        pid, comm, ppid, ticks * 3 / 4, ticks - ticks * 3 / 4, start);
	fclose(f);
}

static void test_scan(void **state)
{
	(void)state;
	snprintf(root, sizeof root, "/tmp/gpuwhy-host_top-XXXXXX");
	assert_non_null(mkdtemp(root));
	long hz = sysconf(_SC_CLK_TCK);
	put_stat(10, "hog (x)", 1, 0, 5);
	put_stat(11, "idle", 1, 0, 5);
	put_stat(12, "loader", 10, 0, 5);
	host_top *h = host_top_new(root);
	assert_non_null(h);
	host_top_entry e[4];
	assert_int_equal(host_top_scan(h, 1000000000LL, e, 4, 5), 0); /* no rate yet */
	/* One second later: 10 used a whole core, 12 half of one, 11 nothing; 13 is new. */
	put_stat(10, "hog (x)", 1, (unsigned long)hz, 5);
	put_stat(12, "loader", 10, (unsigned long)hz / 2, 5);
	put_stat(13, "new", 1, 500, 9);
	int n = host_top_scan(h, 2000000000LL, e, 4, 5);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].pid, 10);
	assert_float_equal(e[0].cpu_pct, 100, 1e-9);
	assert_string_equal(e[0].comm, "hog (x)");
	assert_int_equal(e[0].ppid, 1);
	assert_int_equal(e[1].pid, 12);
	assert_float_equal(e[1].cpu_pct, 50, 1e-9);
	/* A PID reused by another process (new start time) has no rate. */
	put_stat(10, "other", 1, (unsigned long)hz * 3, 77);
	put_stat(13, "new", 1, 500 + (unsigned long)hz / 5, 9);
	n = host_top_scan(h, 3000000000LL, e, 1, 5);
	assert_int_equal(n, 1);
	assert_int_equal(e[0].pid, 13);
	assert_float_equal(e[0].cpu_pct, 100.0 * (hz / 5) / hz, 1e-9);
	host_top_free(h);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_scan)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
