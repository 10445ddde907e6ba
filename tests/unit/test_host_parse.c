/* Pure /proc parsers on buffers: normal files and odd ones (truncated, empty, huge, weird). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host_env.h"
#include "host/host_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(lit) lit, sizeof(lit) - 1

static char *slurp(const char *rel, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/host/%s", FIXTURES_DIR, rel);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[65536];
	*len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* ----------------------------------------------------------------- stat */

static void test_stat_fixture(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t0/proc/stat", &len);
	host_stat st = {0};
	assert_int_equal(host_parse_stat(b, len, &st), 0);
	assert_true(st.has & HOST_STAT_ALL);
	assert_int_equal(st.all.id, -1);
	assert_int_equal(st.all.nfields, 10);
	assert_int_equal(st.all.t[HOST_TICK_IDLE], 8000);
	assert_int_equal(st.ncpu, 4);
	assert_int_equal(st.cpu[3].id, 3);
	assert_int_equal(st.cpu[1].t[HOST_TICK_IOWAIT], 50);
	assert_int_equal(st.ctxt, 10000);
	assert_int_equal(st.intr, 20000);
	assert_int_equal(st.processes, 500);
	assert_int_equal(st.btime, 1700000000);
	assert_int_equal(st.procs_running, 3);
	assert_int_equal(st.procs_blocked, 1);
	/* parsing again reuses the array and forgets the old CPUs */
	assert_int_equal(host_parse_stat(S("cpu7 1 2 3 4\n"), &st), 0);
	assert_int_equal(st.ncpu, 1);
	assert_int_equal(st.cpu[0].id, 7);
	assert_int_equal(st.cpu[0].nfields, 4);
	assert_false(st.has & HOST_STAT_ALL);
	host_stat_free(&st);
}

static void test_stat_odd(void **state)
{
	(void)state;
	host_stat st = {0};
	assert_int_equal(host_parse_stat("", 0, &st), -1);
	assert_int_equal(host_parse_stat(S("garbage\n\n\n"), &st), -1);
	/* a cut-off last line is ignored, not half-read */
	assert_int_equal(host_parse_stat(S("cpu0 1 2 3 4 5\nctxt 12"), &st), 0);
	assert_int_equal(st.ncpu, 1);
	assert_false(st.has & HOST_STAT_CTXT);
	/* overflow leaves the field absent; too few columns drop the line */
	assert_int_equal(host_parse_stat(S("ctxt 99999999999999999999999\ncpu1 1 2 3\n"
	                                   "cpu2 18446744073709551615 0 0 0\n"),
	                                 &st),
	                 0);
	assert_false(st.has & HOST_STAT_CTXT);
	assert_int_equal(st.ncpu, 1);
	assert_int_equal(st.cpu[0].id, 2);
	assert_true(st.cpu[0].t[0] == UINT64_MAX);
	/* "cpufreq" is not a cpu line */
	assert_int_equal(host_parse_stat(S("cpufreq 1 2 3 4\nbtime 5\n"), &st), 0);
	assert_int_equal(st.ncpu, 0);
	assert_int_equal(st.btime, 5);
	host_stat_free(&st);
}

/* --------------------------------------------------- small system files */

static void test_loadavg_uptime(void **state)
{
	(void)state;
	host_loadavg la;
	assert_int_equal(host_parse_loadavg(S("1.50 1.25 0.07 3/250 12345\n"), &la), 0);
	assert_true(la.ok);
	assert_float_equal(la.load[0], 1.5, 1e-9);
	assert_float_equal(la.load[2], 0.07, 1e-9);
	assert_true(la.tasks_ok);
	assert_int_equal(la.runnable, 3);
	assert_int_equal(la.total, 250);
	assert_int_equal(host_parse_loadavg(S("0.50 0.40"), &la), -1);
	assert_false(la.ok);
	assert_int_equal(host_parse_loadavg(S("1 2 3"), &la), 0);
	assert_false(la.tasks_ok);

	host_uptime up;
	assert_int_equal(host_parse_uptime(S("12345.67 99.0\n"), &up), 0);
	assert_float_equal(up.seconds, 12345.67, 1e-6);
	assert_int_equal(host_parse_uptime("", 0, &up), -1);
	assert_false(up.ok);
}

static void test_meminfo(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t0/proc/meminfo", &len);
	host_meminfo mi;
	assert_int_equal(host_parse_meminfo(b, len, &mi), 0);
	assert_int_equal(mi.v[HOST_MI_TOTAL], 16384000ull * 1024);
	assert_int_equal(mi.v[HOST_MI_AVAILABLE], 8192000ull * 1024);
	assert_int_equal(mi.v[HOST_MI_SRECLAIMABLE], 204800ull * 1024);
	assert_int_equal(mi.v[HOST_MI_SWAP_FREE], 1048576ull * 1024);
	assert_int_equal(mi.has, (1u << HOST_MI_COUNT) - 1);

	/* huge values: not representable in bytes -> absent, not wrapped */
	b = slurp("odd/proc/meminfo", &len);
	assert_int_equal(host_parse_meminfo(b, len, &mi), 0);
	assert_false(mi.has & (1u << HOST_MI_TOTAL)); /* > 2^64 kB digits */
	assert_true(mi.has & (1u << HOST_MI_FREE));   /* 2^54 - 1 kB fits */
	assert_int_equal(mi.v[HOST_MI_FREE], 18014398509481983ull * 1024);
	assert_false(mi.has & (1u << HOST_MI_AVAILABLE)); /* 2^54 kB overflows */
	assert_false(mi.has & (1u << HOST_MI_CACHED));    /* unknown unit */
	assert_true(mi.has & (1u << HOST_MI_SWAP_TOTAL));
	assert_false(mi.has & (1u << HOST_MI_SWAP_FREE)); /* cut-off line */
	assert_int_equal(host_parse_meminfo("", 0, &mi), -1);
}

static void test_vmstat_psi(void **state)
{
	(void)state;
	host_vmstat vm;
	assert_int_equal(
	    host_parse_vmstat(S("pswpin 5\npswpout 6\npgmajfault 7\noom_kill 1\nx 2\n"), &vm), 0);
	assert_int_equal(vm.v[HOST_VM_PSWPIN], 5);
	assert_int_equal(vm.v[HOST_VM_OOM_KILL], 1);
	assert_int_equal(host_parse_vmstat(S("pswpin_x 5\n"), &vm), -1);

	host_psi psi;
	assert_int_equal(host_parse_psi(S("some avg10=1.00 avg60=2.00 avg300=3.00 total=123456\n"
	                                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n"),
	                                &psi),
	                 0);
	assert_true(psi.some_ok && psi.full_ok);
	assert_int_equal(psi.some_us, 123456);
	assert_int_equal(psi.full_us, 789);
	assert_int_equal(host_parse_psi(S("some avg10=1.00 total=12x\n"), &psi), -1);
}

/* ------------------------------------------------------------ diskstats */

static void test_diskstats(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t0/proc/diskstats", &len);
	host_diskstats ds = {0};
	assert_int_equal(host_parse_diskstats(b, len, &ds), 0);
	assert_int_equal(ds.n, 7);
	assert_string_equal(ds.d[0].name, "sda");
	assert_int_equal(ds.d[0].major, 8);
	assert_int_equal(ds.d[0].nfields, 17);
	assert_int_equal(ds.d[0].v[HOST_DS_SECTORS_READ], 80000);
	assert_int_equal(ds.d[0].v[HOST_DS_IO_TICKS], 3000);
	assert_string_equal(ds.d[6].name, "dm-0");
	assert_int_equal(ds.d[6].nfields, 11);

	b = slurp("odd/proc/diskstats", &len);
	assert_int_equal(host_parse_diskstats(b, len, &ds), 0);
	assert_int_equal(ds.n, 1); /* sdb was cut off */
	assert_int_equal(host_parse_diskstats(S("8 0 sda 1 2 3 4\n"), &ds), -1);
	assert_int_equal(
	    host_parse_diskstats(
	        S("8 0 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 2 3 4 5 6 7 8 9 10 11\n"), &ds),
	    -1);
	host_diskstats_free(&ds);

	assert_true(host_disk_name_is_partition("sda1"));
	assert_true(host_disk_name_is_partition("xvdb12"));
	assert_true(host_disk_name_is_partition("nvme0n1p2"));
	assert_true(host_disk_name_is_partition("mmcblk0p1"));
	assert_false(host_disk_name_is_partition("sda"));
	assert_false(host_disk_name_is_partition("nvme0n1"));
	assert_false(host_disk_name_is_partition("mmcblk0"));
	assert_false(host_disk_name_is_partition("dm-0"));
	assert_false(host_disk_name_is_partition("md127"));
	assert_true(host_disk_name_is_virtual("loop7"));
	assert_true(host_disk_name_is_virtual("ram0"));
	assert_true(host_disk_name_is_virtual("zram0"));
	assert_false(host_disk_name_is_virtual("loopback"));
	assert_false(host_disk_name_is_virtual("sda"));
}

static void test_net_dev(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t1/proc/net/dev", &len);
	host_netdevs nd = {0};
	assert_int_equal(host_parse_net_dev(b, len, &nd), 0);
	assert_int_equal(nd.n, 4);
	assert_string_equal(nd.d[0].name, "lo");
	assert_string_equal(nd.d[1].name, "eth0");
	assert_int_equal(nd.d[1].v[HOST_ND_RX_BYTES], 2000000);
	assert_int_equal(nd.d[1].v[HOST_ND_TX_DROP], 2);
	/* no space after the colon, as old kernels wrote it */
	assert_int_equal(
	    host_parse_net_dev(S("eth9:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"), &nd), 0);
	assert_string_equal(nd.d[0].name, "eth9");
	assert_int_equal(nd.d[0].v[HOST_ND_TX_COMPRESSED], 16);
	b = slurp("odd/proc/net/dev", &len);
	assert_int_equal(host_parse_net_dev(b, len, &nd), 0);
	assert_int_equal(nd.n, 1); /* eth1 has too few columns */
	assert_int_equal(host_parse_net_dev("", 0, &nd), -1);
	host_netdevs_free(&nd);
}

/* ------------------------------------------------------------- PID/stat */

static void test_pid_stat(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t0/proc/101/stat", &len);
	host_pid_stat ps;
	assert_int_equal(host_parse_pid_stat(b, len, &ps), 0);
	assert_int_equal(ps.pid, 101);
	assert_string_equal(ps.comm, "my (weird) proc");
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 100);
	assert_true((ps.has & (HOST_PS_PGRP | HOST_PS_SESSION)) ==
	            (HOST_PS_PGRP | HOST_PS_SESSION));
	assert_int_equal(ps.pgrp, 101);
	assert_int_equal(ps.session, 101);
	assert_int_equal(ps.utime, 10);
	assert_int_equal(ps.starttime, 50100);
	assert_int_equal(ps.processor, 1);
	assert_true(ps.has & HOST_PS_RSS);

	/* a comm that ends in ") R 9 (" must not fool the parser */
	assert_int_equal(host_parse_pid_stat(S("42 (a) R 9 (b) S 7 1 1 0 -1 0 1 0 2 0 3 4\n"), &ps),
	                 0);
	assert_string_equal(ps.comm, "a) R 9 (b");
	assert_int_equal(ps.state, 'S');
	assert_int_equal(ps.ppid, 7);
	assert_int_equal(ps.pgrp, 1);
	assert_int_equal(ps.session, 1);
	assert_int_equal(ps.majflt, 2);
	assert_int_equal(ps.utime, 3);
	assert_int_equal(ps.stime, 4);
	assert_false(ps.has & HOST_PS_STARTTIME);

	/* truncated: the fields present are kept, the rest absent */
	b = slurp("basic/t0/proc/300/stat", &len);
	assert_int_equal(host_parse_pid_stat(b, len, &ps), 0);
	assert_int_equal(ps.ppid, 100);
	assert_true(ps.has & HOST_PS_FLAGS);
	assert_false(ps.has & HOST_PS_UTIME);
	assert_false(ps.has & HOST_PS_THREADS);

	/* negative nice, huge vsize, rss of -1 */
	assert_int_equal(host_parse_pid_stat(S("5 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 -5 2 0 9 "
	                                       "18446744073709551615 -1\n"),
	                                     &ps),
	                 0);
	assert_int_equal(ps.nice, -5);
	assert_true(ps.vsize == UINT64_MAX);
	assert_int_equal(ps.rss_pages, -1);

	/* not a stat file */
	assert_int_equal(host_parse_pid_stat("", 0, &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("12 (unterminated S 1 2 3"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("12 (x)"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("12 (x) S"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("12 (x) SS 1"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("0 (x) S 1"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("99999999999 (x) S 1"), &ps), -1);
	assert_int_equal(host_parse_pid_stat(S("12 (x) S -3"), &ps), -1);
	/* a comm longer than the buffer is cut, not overrun */
	char big[400];
	int n = snprintf(big, sizeof(big), "7 (%0300d) S 1 2\n", 0);
	assert_int_equal(host_parse_pid_stat(big, (size_t)n, &ps), 0);
	assert_int_equal(strlen(ps.comm), HOST_COMM_LEN - 1);
}

static void test_pid_status(void **state)
{
	(void)state;
	size_t len;
	const char *b = slurp("basic/t0/proc/102/status", &len);
	host_pid_status st;
	assert_int_equal(host_parse_pid_status(b, len, &st), 0);
	assert_string_equal(st.name, "worker");
	assert_int_equal(st.uid[0], 4242);
	assert_int_equal(st.uid[3], 4242);
	assert_int_equal(st.ppid, 101);
	assert_int_equal(st.threads, 2);
	assert_int_equal(st.nspid_n, 2);
	assert_int_equal(st.nspid[0], 102);
	assert_int_equal(st.nspid[1], 5);
	assert_int_equal(st.vm_rss, 1024 * 1024);
	assert_int_equal(st.vol_ctxt, 10);
	assert_true(st.has & HOST_PST_CTXT);

	b = slurp("basic/t0/proc/101/status", &len);
	assert_int_equal(host_parse_pid_status(b, len, &st), 0);
	assert_string_equal(st.name, "my (weird) proc");
	assert_int_equal(st.uid[0], 65534);

	/* truncated in the middle of the Uid line: Uid absent */
	assert_int_equal(host_parse_pid_status(S("Name:\tx\nPPid:\t3\nUid:\t1000\t10"), &st), 0);
	assert_false(st.has & HOST_PST_UID);
	assert_int_equal(st.ppid, 3);
	assert_int_equal(host_parse_pid_status(S("Uid:\t1\t2\t3\n"), &st), -1);
	assert_int_equal(host_parse_pid_status(S("NSpid:\t1\tx\n"), &st), -1);
	assert_int_equal(host_parse_pid_status(S("Uid:\t99999999999\t1\t1\t1\n"), &st), -1);
	assert_int_equal(host_parse_pid_status("", 0, &st), -1);
}

static void test_pid_io_cmdline(void **state)
{
	(void)state;
	host_pid_io io;
	assert_int_equal(
	    host_parse_pid_io(S("rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n"
	                        "write_bytes: 8192\ncancelled_write_bytes: 0\n"),
	                      &io),
	    0);
	assert_int_equal(io.v[HOST_IO_READ_BYTES], 4096);
	assert_int_equal(io.v[HOST_IO_WRITE_BYTES], 8192);
	assert_int_equal(io.has, (1u << HOST_IO_COUNT) - 1);
	assert_int_equal(host_parse_pid_io(S("rchar: 10\nwchar: 2"), &io), 0);
	assert_false(io.has & (1u << HOST_IO_WCHAR));
	assert_int_equal(host_parse_pid_io("", 0, &io), -1);

	char out[64];
	assert_int_equal(
	    host_format_cmdline(S("python\0train.py\0--lr\0000.1\0"), out, sizeof(out)), 24);
	assert_string_equal(out, "python train.py --lr 0.1");
	assert_int_equal(host_format_cmdline("", 0, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* setproctitle leaves no trailing NUL; control bytes are masked */
	assert_int_equal(host_format_cmdline(S("a\tb\nc"), out, sizeof(out)), 5);
	assert_string_equal(out, "a?b?c");
	/* truncation behaves like snprintf */
	assert_int_equal(host_format_cmdline(S("abcdef\0gh"), out, 4), 9);
	assert_string_equal(out, "abc");
}

static void test_cgroup(void **state)
{
	(void)state;
	size_t len;
	host_cgroup cg;
	const char *b = slurp("basic/t0/proc/100/cgroup", &len);
	assert_int_equal(host_parse_cgroup(b, len, &cg), 0);
	assert_false(cg.v2);
	assert_string_equal(
	    cg.path, "/docker/4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a4f1d3b2a");
	assert_int_equal(cg.runtime, HOST_RT_DOCKER);
	assert_int_equal(strlen(cg.id), 64);
	assert_string_equal(host_runtime_name(cg.runtime), "docker");

	b = slurp("basic/t0/proc/101/cgroup", &len);
	assert_int_equal(host_parse_cgroup(b, len, &cg), 0);
	assert_true(cg.v2);
	assert_int_equal(cg.runtime, HOST_RT_CONTAINERD);
	assert_string_equal(cg.id,
	                    "a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718a1b2c3d4e5f60718");
	assert_string_equal(cg.pod_uid, "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d");

	assert_int_equal(host_parse_cgroup(S("0::/user.slice/session-3.scope\n"), &cg), 0);
	assert_int_equal(cg.runtime, HOST_RT_NONE);
	assert_string_equal(cg.id, "");

	host_cgroup_classify("/machine.slice/libpod-0123456789abcdef0123.scope/container", &cg);
	assert_int_equal(cg.runtime, HOST_RT_PODMAN);
	assert_string_equal(cg.id, "0123456789abcdef0123");
	host_cgroup_classify("/machine.slice/libpod-conmon-0123456789abcdef0123.scope", &cg);
	assert_int_equal(cg.runtime, HOST_RT_NONE);
	host_cgroup_classify(
	    "/kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice/"
	    "crio-abcdefabcdef0123.scope",
	    &cg);
	assert_int_equal(cg.runtime, HOST_RT_CRIO);
	assert_string_equal(cg.pod_uid, "11111111-2222-3333-4444-555555555555");
	host_cgroup_classify("/kubepods/burstable/pod11111111-2222-3333-4444-555555555555/"
	                     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	                     &cg);
	assert_int_equal(cg.runtime, HOST_RT_KUBEPODS);
	assert_int_equal(strlen(cg.id), 64);
	host_cgroup_classify("/lxc.payload.web1/init.scope", &cg);
	assert_int_equal(cg.runtime, HOST_RT_LXC);
	assert_string_equal(cg.id, "web1");
	host_cgroup_classify("/system.slice/docker.service", &cg);
	assert_int_equal(cg.runtime, HOST_RT_NONE);

	/* a path with ':' in it, an unterminated line, garbage */
	assert_int_equal(host_parse_cgroup(S("0::/a:b/c"), &cg), 0);
	assert_string_equal(cg.path, "/a:b/c");
	assert_int_equal(host_parse_cgroup(S("nonsense\n1:cpu\n"), &cg), -1);
	assert_false(cg.path_ok);
	assert_int_equal(host_parse_cgroup("", 0, &cg), -1);
}

static void test_env_helpers(void **state)
{
	(void)state;
	assert_int_equal(host_cpulist_count(S("0-3,8,10-11\n")), 7);
	assert_int_equal(host_cpulist_count(S("0\n")), 1);
	assert_int_equal(host_cpulist_count(S("")), -1);
	assert_int_equal(host_cpulist_count(S("3-1")), -1);
	assert_int_equal(host_cpulist_count(S("0-3,x")), -1);
	assert_int_equal(host_cpulist_count(S("0-99999999999")), -1);
	assert_true(host_version_is_wsl(S("Linux version 5.15.90.1-microsoft-standard-WSL2")));
	assert_true(host_version_is_wsl(S("Linux version 4.4.0-19041-Microsoft")));
	assert_false(host_version_is_wsl(S("Linux version 6.1.0-18-amd64")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stat_fixture),   cmocka_unit_test(test_stat_odd),
	    cmocka_unit_test(test_loadavg_uptime), cmocka_unit_test(test_meminfo),
	    cmocka_unit_test(test_vmstat_psi),     cmocka_unit_test(test_diskstats),
	    cmocka_unit_test(test_net_dev),        cmocka_unit_test(test_pid_stat),
	    cmocka_unit_test(test_pid_status),     cmocka_unit_test(test_pid_io_cmdline),
	    cmocka_unit_test(test_cgroup),         cmocka_unit_test(test_env_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
