/* test_hostsum.c - the host summary derived from one host reading, as the host table says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "model/hostsum.h"

#define MIB 1048576.0

static host_val ok(double v)
{
	return (host_val){v, true};
}

static void test_aggregates(void **state)
{
	(void)state;
	host_sample h;
	memset(&h, 0, sizeof h);
	host_cpu cpus[3];
	host_disk disks[2];
	host_netif nets[2];
	host_proc procs[2];
	memset(cpus, 0, sizeof cpus);
	memset(disks, 0, sizeof disks);
	memset(nets, 0, sizeof nets);
	memset(procs, 0, sizeof procs);
	h.sys[HOST_SYS_CPU_BUSY] = ok(42);
	h.sys[HOST_SYS_MEM_TOTAL] = ok(64 * MIB);
	h.sys[HOST_SYS_SWAP_TOTAL] = ok(0);
	cpus[0] = (host_cpu){.id = 0};
	cpus[0].v[HOST_CPU_BUSY] = ok(30);
	cpus[1] = (host_cpu){.id = 2};
	cpus[1].v[HOST_CPU_BUSY] = ok(90);
	cpus[2] = (host_cpu){.id = 5}; /* busy absent */
	h.cpus = cpus;
	h.ncpus = 3;
	disks[0].v[HOST_DISK_READ_RATE] = ok(100);
	disks[0].v[HOST_DISK_BUSY] = ok(20);
	disks[1].v[HOST_DISK_BUSY] = ok(70); /* read absent */
	h.disks = disks;
	h.ndisks = 2;
	h.nets = nets; /* no interface has a rate yet */
	h.nnets = 2;
	procs[0].v[HOST_PROC_CPU] = ok(150);
	procs[0].v[HOST_PROC_RSS] = ok(512 * MIB);
	procs[1].v[HOST_PROC_RSS] = ok(512 * MIB);
	h.procs = procs;
	h.nprocs = 2;

	double out[HM__COUNT];
	host_summary_fill(&h, out);
	assert_true(out[HM_CPU_BUSY_AVG] == 42);
	assert_true(out[HM_CPU_BUSY_MAX] == 90);
	assert_true(out[HM_CPU_BUSY_MAX_CORE] == 2); /* the CPU id, not its position */
	assert_true(out[HM_MEM_TOTAL] == 64);        /* MiB, as recordings keep it */
	assert_true(out[HM_SWAP_TOTAL] == 0);        /* present and zero */
	assert_true(isnan(out[HM_MEM_USED]));        /* absent stays absent */
	assert_true(out[HM_DISK_READ] == 100);
	assert_true(out[HM_DISK_BUSY_MAX] == 70);
	assert_true(isnan(out[HM_NET_RX]));
	assert_true(out[HM_TREE_CPU] == 150);
	assert_true(out[HM_TREE_RSS] == 1024);
	assert_true(out[HM_TREE_NPROC] == 2);
	assert_true(isnan(out[HM_TREE_READ]));

	/* Nothing followed: no tree values at all, not zeros. */
	h.nprocs = 0;
	h.ncpus = 0;
	host_summary_fill(&h, out);
	assert_true(isnan(out[HM_TREE_NPROC]) && isnan(out[HM_TREE_CPU]));
	assert_true(isnan(out[HM_CPU_BUSY_MAX]) && isnan(out[HM_CPU_BUSY_MAX_CORE]));
}

static void test_table(void **state)
{
	(void)state;
	for (int i = 0; i < HM__COUNT; i++) {
		const host_metric_desc *d = &host_metrics[i];
		assert_true(d->key[0] && d->unit[0] && d->help[0]);
		if (d->family[0])
			assert_int_equal(strncmp(d->family, "gpuwhy_host_", 12), 0);
		for (int j = 0; j < i; j++) {
			assert_string_not_equal(d->key, host_metrics[j].key);
			if (d->family[0])
				assert_string_not_equal(d->family, host_metrics[j].family);
		}
	}
	assert_true(host_metric_base_scale(HM_CPU_BUSY_AVG) == 0.01);
	assert_true(host_metric_base_scale(HM_MEM_USED) == MIB);
	assert_true(host_metric_base_scale(HM_DISK_READ) == 1);
	/* Recording columns of existing rows never change. */
	assert_string_equal(host_metrics[HM_CPU_BUSY_AVG].key, "cpu.busy.avg");
	assert_string_equal(host_metrics[HM_TREE_READ].key, "tree.read");
	assert_string_equal(host_metrics[HM_MEM_AVAIL].key, "mem.available");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aggregates),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
