/* System-wide sample from fixture trees (two snapshots one second apart) and the pure compute. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FIX FIXTURES_DIR "/host/"
#define SEC 1000000000LL

static void assert_val(host_val v, double expect)
{
	if (!v.ok)
		fail_msg("value absent, expected %g", expect);
	if (v.v < expect - 1e-6 || v.v > expect + 1e-6)
		fail_msg("value %.9g, expected %.9g", v.v, expect);
}

static void assert_absent(host_val v)
{
	if (v.ok)
		fail_msg("value %g present, expected absent", v.v);
}

/* Sample t0 then t1 of a case, one second apart. */
static host_sampler *two_samples(const char *c, const host_config *base, host_sample *s0,
                                 host_sample *s1)
{
	char proc[512], sys[512];
	host_config cfg;
	if (base)
		cfg = *base;
	else
		host_config_default(&cfg);
	snprintf(proc, sizeof(proc), FIX "%s/t0/proc", c);
	snprintf(sys, sizeof(sys), FIX "%s/t0/sys", c);
	cfg.proc_root = proc;
	cfg.sys_root = sys;
	host_sampler *hs = host_sampler_new(&cfg);
	assert_non_null(hs);
	assert_int_equal(host_sampler_sample_at(hs, 10 * SEC, 1700001000.0, s0), 0);
	snprintf(proc, sizeof(proc), FIX "%s/t1/proc", c);
	snprintf(sys, sizeof(sys), FIX "%s/t1/sys", c);
	assert_int_equal(host_sampler_set_roots(hs, proc, sys), 0);
	assert_int_equal(host_sampler_sample_at(hs, 11 * SEC, 1700001001.0, s1), 0);
	return hs;
}

static void test_first_sample_has_no_rates(void **state)
{
	(void)state;
	host_sample s0 = {0}, s1 = {0};
	host_sampler *hs = two_samples("basic", NULL, &s0, &s1);
	assert_false(s0.interval_s.ok);
	assert_absent(s0.sys[HOST_SYS_CPU_USER]);
	assert_absent(s0.sys[HOST_SYS_CTXT_RATE]);
	assert_absent(s0.sys[HOST_SYS_PSI_CPU_SOME]);
	/* levels are there from the first sample */
	assert_val(s0.sys[HOST_SYS_LOAD1], 1.5);
	assert_val(s0.sys[HOST_SYS_CPUS_ONLINE], 4);
	assert_val(s0.sys[HOST_SYS_MEM_TOTAL], 16384000.0 * 1024);
	assert_int_equal(s0.ncpus, 4);
	assert_absent(s0.cpus[0].v[HOST_CPU_USER]);
	assert_int_equal(s0.ndisks, 3);
	assert_absent(s0.disks[0].v[HOST_DISK_READ_RATE]);
	assert_val(s0.disks[0].v[HOST_DISK_IN_FLIGHT], 0);
	assert_int_equal(s0.nnets, 2);
	assert_absent(s0.nets[0].v[HOST_NET_RX_RATE]);
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);
}

static void test_cpu(void **state)
{
	(void)state;
	host_sample s0 = {0}, s1 = {0};
	host_sampler *hs = two_samples("basic", NULL, &s0, &s1);
	assert_val(s1.interval_s, 1.0);
	/* aggregate: iowait went backwards (clamped to 0), guest is part of user */
	assert_val(s1.sys[HOST_SYS_CPU_USER], 60);
	assert_val(s1.sys[HOST_SYS_CPU_NICE], 0);
	assert_val(s1.sys[HOST_SYS_CPU_SYSTEM], 10);
	assert_val(s1.sys[HOST_SYS_CPU_IDLE], 20);
	assert_val(s1.sys[HOST_SYS_CPU_IOWAIT], 0);
	assert_val(s1.sys[HOST_SYS_CPU_IRQ], 4);
	assert_val(s1.sys[HOST_SYS_CPU_SOFTIRQ], 6);
	assert_val(s1.sys[HOST_SYS_CPU_STEAL], 0);
	assert_val(s1.sys[HOST_SYS_CPU_GUEST], 10);
	assert_val(s1.sys[HOST_SYS_CPU_BUSY], 80);
	/* per CPU, matched by id: cpu3 went offline, cpu4 appeared */
	assert_int_equal(s1.ncpus, 4);
	assert_val(s1.sys[HOST_SYS_CPUS_ONLINE], 4);
	const host_cpu *c = s1.cpus;
	assert_int_equal(c[0].id, 0);
	assert_val(c[0].v[HOST_CPU_USER], 60);
	assert_val(c[0].v[HOST_CPU_SYSTEM], 20);
	assert_val(c[0].v[HOST_CPU_IDLE], 10);
	assert_val(c[0].v[HOST_CPU_IOWAIT], 5);
	assert_val(c[0].v[HOST_CPU_IRQ], 2);
	assert_val(c[0].v[HOST_CPU_SOFTIRQ], 3);
	assert_val(c[0].v[HOST_CPU_BUSY], 85);
	assert_int_equal(c[1].id, 1);
	assert_val(c[1].v[HOST_CPU_IDLE], 100);
	assert_val(c[1].v[HOST_CPU_IOWAIT], 0);
	assert_val(c[1].v[HOST_CPU_BUSY], 0);
	assert_int_equal(c[2].id, 2);
	assert_val(c[2].v[HOST_CPU_USER], 100);
	assert_val(c[2].v[HOST_CPU_GUEST], 30);
	assert_val(c[2].v[HOST_CPU_BUSY], 100);
	assert_int_equal(c[3].id, 4);
	for (int k = 0; k < HOST_CPU_COUNT; k++)
		assert_absent(c[3].v[k]);
	/* the columns of a CPU add up to 100 */
	double sum = 0;
	for (int k = HOST_CPU_USER; k <= HOST_CPU_STEAL; k++)
		sum += c[0].v[k].v;
	assert_float_equal(sum, 100, 1e-9);

	assert_val(s1.sys[HOST_SYS_CTXT_RATE], 5000);
	assert_val(s1.sys[HOST_SYS_INTR_RATE], 2000);
	assert_val(s1.sys[HOST_SYS_FORK_RATE], 10);
	assert_val(s1.sys[HOST_SYS_PROCS_RUNNING], 4);
	assert_val(s1.sys[HOST_SYS_PROCS_BLOCKED], 2);
	assert_val(s1.sys[HOST_SYS_LOAD1], 2.5);
	assert_val(s1.sys[HOST_SYS_LOAD5], 1.75);
	assert_val(s1.sys[HOST_SYS_LOAD15], 1.10);
	assert_val(s1.sys[HOST_SYS_UPTIME], 1001);
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);
}

static void test_memory_and_pressure(void **state)
{
	(void)state;
	host_sample s0 = {0}, s1 = {0};
	host_sampler *hs = two_samples("basic", NULL, &s0, &s1);
	double kb = 1024;
	assert_val(s1.sys[HOST_SYS_MEM_TOTAL], 16384000 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_AVAILABLE], 8192000 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_USED], (16384000 - 8192000) * kb);
	assert_val(s1.sys[HOST_SYS_MEM_FREE], 2048000 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_CACHED], (4096000 + 204800) * kb);
	assert_val(s1.sys[HOST_SYS_MEM_BUFFERS], 102400 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_SHMEM], 51200 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_DIRTY], 1024 * kb);
	assert_val(s1.sys[HOST_SYS_MEM_WRITEBACK], 0);
	assert_val(s1.sys[HOST_SYS_SWAP_TOTAL], 2097152 * kb);
	assert_val(s1.sys[HOST_SYS_SWAP_USED], 1048576 * kb);
	long page = sysconf(_SC_PAGESIZE);
	assert_val(s1.sys[HOST_SYS_SWAP_IN_RATE], 100.0 * (double)page);
	assert_val(s1.sys[HOST_SYS_SWAP_OUT_RATE], 0);
	assert_val(s1.sys[HOST_SYS_MAJFLT_RATE], 250);
	assert_val(s1.sys[HOST_SYS_OOM_KILLS], 2);
	assert_val(s1.sys[HOST_SYS_PSI_CPU_SOME], 25);
	assert_val(s1.sys[HOST_SYS_PSI_MEM_SOME], 10);
	assert_val(s1.sys[HOST_SYS_PSI_MEM_FULL], 5);
	assert_val(s1.sys[HOST_SYS_PSI_IO_SOME], 50);
	assert_val(s1.sys[HOST_SYS_PSI_IO_FULL], 20);
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);
}

static void test_disks(void **state)
{
	(void)state;
	host_sample s0 = {0}, s1 = {0};
	host_sampler *hs = two_samples("basic", NULL, &s0, &s1);
	/* whole disks from /sys/block; loop0, ram0 and partitions skipped */
	assert_int_equal(s1.ndisks, 3);
	const host_disk *d = s1.disks;
	assert_string_equal(d[0].name, "sda");
	assert_int_equal(d[0].major, 8);
	assert_val(d[0].v[HOST_DISK_READ_RATE], 2048 * 512);
	assert_val(d[0].v[HOST_DISK_WRITE_RATE], 4096 * 512);
	assert_val(d[0].v[HOST_DISK_READS_RATE], 100);
	assert_val(d[0].v[HOST_DISK_WRITES_RATE], 50);
	assert_val(d[0].v[HOST_DISK_BUSY], 25);
	assert_val(d[0].v[HOST_DISK_QUEUE], 0.7);
	assert_val(d[0].v[HOST_DISK_READ_AWAIT], 2);
	assert_val(d[0].v[HOST_DISK_WRITE_AWAIT], 10);
	assert_val(d[0].v[HOST_DISK_IN_FLIGHT], 2);
	/* nvme0n1's counters went backwards (reset): no rate, never a negative or huge one */
	assert_string_equal(d[1].name, "nvme0n1");
	assert_absent(d[1].v[HOST_DISK_READ_RATE]);
	assert_absent(d[1].v[HOST_DISK_WRITE_RATE]);
	assert_absent(d[1].v[HOST_DISK_BUSY]);
	assert_absent(d[1].v[HOST_DISK_READ_AWAIT]);
	assert_val(d[1].v[HOST_DISK_IN_FLIGHT], 0);
	/* dm-0: an 11-column line; io_ticks grew more than the interval: clamped */
	assert_string_equal(d[2].name, "dm-0");
	assert_val(d[2].v[HOST_DISK_BUSY], 100);
	assert_val(d[2].v[HOST_DISK_READ_RATE], 0);
	assert_absent(d[2].v[HOST_DISK_READ_AWAIT]); /* nothing completed */
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);

	host_config cfg;
	host_config_default(&cfg);
	cfg.disk_all = true;
	hs = two_samples("basic", &cfg, &s0, &s1);
	assert_int_equal(s1.ndisks, 7);
	host_sampler_free(hs);

	/* without /sys/block the names decide */
	cfg.disk_all = false;
	cfg.sys_root = FIX "does-not-exist";
	cfg.proc_root = FIX "basic/t0/proc";
	hs = host_sampler_new(&cfg);
	assert_int_equal(host_sampler_sample_at(hs, SEC, 0, &s0), 0);
	assert_int_equal(s0.ndisks, 3);
	assert_string_equal(s0.disks[1].name, "nvme0n1");
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);
}

static void test_nets(void **state)
{
	(void)state;
	host_sample s0 = {0}, s1 = {0};
	host_sampler *hs = two_samples("basic", NULL, &s0, &s1);
	assert_int_equal(s1.nnets, 3); /* lo skipped */
	const host_netif *n = s1.nets;
	assert_string_equal(n[0].name, "eth0");
	assert_val(n[0].v[HOST_NET_RX_RATE], 1000000);
	assert_val(n[0].v[HOST_NET_TX_RATE], 250000);
	assert_val(n[0].v[HOST_NET_RX_PACKETS], 800);
	assert_val(n[0].v[HOST_NET_TX_PACKETS], 200);
	assert_val(n[0].v[HOST_NET_RX_DROPS], 5);
	assert_val(n[0].v[HOST_NET_TX_DROPS], 2);
	assert_val(n[0].v[HOST_NET_RX_ERRORS], 3);
	assert_val(n[0].v[HOST_NET_TX_ERRORS], 0);
	/* ib0's 32-bit rx counter wrapped: absent, while its tx still has a rate */
	assert_string_equal(n[1].name, "ib0");
	assert_absent(n[1].v[HOST_NET_RX_RATE]);
	assert_val(n[1].v[HOST_NET_TX_RATE], 2000);
	assert_val(n[1].v[HOST_NET_RX_PACKETS], 10);
	/* an interface that just appeared has no rate yet */
	assert_string_equal(n[2].name, "veth1a2b");
	for (int k = 0; k < HOST_NET_COUNT; k++)
		assert_absent(n[2].v[k]);
	host_sampler_free(hs);

	host_config cfg;
	host_config_default(&cfg);
	cfg.net_lo = true;
	hs = two_samples("basic", &cfg, &s0, &s1);
	assert_int_equal(s1.nnets, 4);
	assert_string_equal(s1.nets[0].name, "lo");
	assert_val(s1.nets[0].v[HOST_NET_RX_RATE], 4000);
	host_sampler_free(hs);
	host_sample_free(&s0);
	host_sample_free(&s1);
}

static void test_empty_and_odd_trees(void **state)
{
	(void)state;
	host_config cfg;
	host_config_default(&cfg);
	cfg.proc_root = FIX "empty/proc";
	cfg.sys_root = FIX "empty/sys";
	host_sampler *hs = host_sampler_new(&cfg);
	host_sample s = {0};
	for (int i = 0; i < 2; i++)
		assert_int_equal(host_sampler_sample_at(hs, (i + 1) * SEC, 0, &s), 0);
	for (int k = 0; k < HOST_SYS_COUNT; k++)
		assert_absent(s.sys[k]);
	assert_int_equal(s.ncpus + s.ndisks + s.nnets + s.nprocs, 0);
	host_sampler_free(hs);

	cfg.proc_root = FIX "odd/proc";
	hs = host_sampler_new(&cfg);
	assert_int_equal(host_sampler_sample_at(hs, SEC, 0, &s), 0);
	assert_int_equal(host_sampler_sample_at(hs, 2 * SEC, 0, &s), 0);
	assert_int_equal(s.ncpus, 1);
	assert_absent(s.cpus[0].v[HOST_CPU_IDLE]); /* same ticks twice: nothing to divide */
	assert_absent(s.sys[HOST_SYS_CPU_BUSY]);
	assert_absent(s.sys[HOST_SYS_CTXT_RATE]); /* overflowing counter */
	assert_val(s.sys[HOST_SYS_PROCS_RUNNING], 1);
	assert_absent(s.sys[HOST_SYS_PROCS_BLOCKED]); /* cut off */
	assert_absent(s.sys[HOST_SYS_MEM_TOTAL]);     /* too big to be bytes */
	assert_absent(s.sys[HOST_SYS_MEM_USED]);      /* needs the total */
	assert_val(s.sys[HOST_SYS_MEM_BUFFERS], 5 * 1024);
	assert_absent(s.sys[HOST_SYS_LOAD1]);
	assert_absent(s.sys[HOST_SYS_UPTIME]);
	assert_int_equal(s.ndisks, 1);
	assert_int_equal(s.nnets, 1);
	assert_val(s.nets[0].v[HOST_NET_RX_RATE], 0);
	host_sampler_free(hs);
	host_sample_free(&s);

	cfg.proc_root = FIX "no-such-tree/proc";
	hs = host_sampler_new(&cfg);
	assert_non_null(hs);
	errno = 0;
	assert_int_equal(host_sampler_sample_at(hs, SEC, 0, &s), -1);
	assert_int_equal(errno, ENOENT);
	host_sampler_free(hs);
	host_sample_free(&s);
}

/* The pure layer: two hand-made raw reads. */
static void test_compute_pure(void **state)
{
	(void)state;
	host_sysraw a = {0}, b = {0};
	host_cpu_ticks cpu0 = {.id = 0, .nfields = 4, .t = {100, 0, 100, 800}};
	a.stat.cpu = &cpu0;
	a.stat.ncpu = 1;
	a.stat_ok = true;
	host_cpu_ticks cpu0b = {.id = 0, .nfields = 4, .t = {150, 0, 150, 800}};
	b.stat.cpu = &cpu0b;
	b.stat.ncpu = 1;
	b.stat_ok = true;
	a.mono_ns = 5 * SEC;
	b.mono_ns = 5 * SEC + SEC / 2;
	host_sample s = {0};
	assert_int_equal(host_compute(&a, &b, 4096, &s), 0);
	assert_val(s.interval_s, 0.5);
	assert_val(s.cpus[0].v[HOST_CPU_USER], 50);
	assert_val(s.cpus[0].v[HOST_CPU_BUSY], 100);
	/* a 4-column line has no iowait, irq...: absent, not 0 */
	assert_absent(s.cpus[0].v[HOST_CPU_IOWAIT]);
	assert_absent(s.cpus[0].v[HOST_CPU_STEAL]);
	assert_absent(s.cpus[0].v[HOST_CPU_GUEST]);
	/* time going backwards or standing still: no rates at all */
	b.mono_ns = a.mono_ns;
	assert_int_equal(host_compute(&a, &b, 4096, &s), 0);
	assert_false(s.interval_s.ok);
	assert_absent(s.cpus[0].v[HOST_CPU_USER]);
	/* no previous sample */
	assert_int_equal(host_compute(NULL, &b, 4096, &s), 0);
	assert_absent(s.cpus[0].v[HOST_CPU_USER]);
	assert_val(s.sys[HOST_SYS_CPUS_ONLINE], 1);
	host_sample_free(&s);
}

static void test_metric_table(void **state)
{
	(void)state;
	static const enum host_table tables[] = {HOST_TABLE_SYS, HOST_TABLE_CPU, HOST_TABLE_DISK,
	                                         HOST_TABLE_NET, HOST_TABLE_PROC};
	static const char *const units[] = {"percent", "bytes",   "bytes/s", "per_s",
	                                    "count",   "seconds", "load",    "ms"};
	for (size_t t = 0; t < 5; t++) {
		int n = host_table_size(tables[t]);
		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			const host_metric_info *mi = host_metric_info_get(tables[t], i);
			assert_non_null(mi);
			assert_true(mi->name[0] && mi->help[0] && mi->source[0]);
			bool unit_ok = false;
			for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
				unit_ok |= strcmp(units[u], mi->unit) == 0;
			assert_true(unit_ok);
			for (int j = 0; j < i; j++) /* names are keys: unique per table */
				assert_string_not_equal(host_metric_info_get(tables[t], j)->name,
				                        mi->name);
		}
		assert_null(host_metric_info_get(tables[t], n));
		assert_null(host_metric_info_get(tables[t], -1));
	}
	assert_string_equal(host_metric_info_get(HOST_TABLE_SYS, HOST_SYS_MEM_AVAILABLE)->name,
	                    "mem_available");
	assert_string_equal(host_metric_info_get(HOST_TABLE_PROC, HOST_PROC_RSS)->unit, "bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_sample_has_no_rates),
	    cmocka_unit_test(test_cpu),
	    cmocka_unit_test(test_memory_and_pressure),
	    cmocka_unit_test(test_disks),
	    cmocka_unit_test(test_nets),
	    cmocka_unit_test(test_empty_and_odd_trees),
	    cmocka_unit_test(test_compute_pure),
	    cmocka_unit_test(test_metric_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
