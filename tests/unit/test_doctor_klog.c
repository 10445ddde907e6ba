/* The kernel log: sources (file, kmsg records, dmesg and journalctl fallbacks) and Xid/AER lines.
 */
#include <stdbool.h>
#include <stdio.h>
#include "test_doctor_common.h"

#define KLOG FX_DOCTOR "/klog"

static doctor_klog read_log(fx_t *f)
{
	doctor_ctx_init(&f->c, &f->p, &f->o, &f->m, &f->r);
	f->ctx_live = true;
	return *doctor_ctx_klog(&f->c);
}

static bool has_line(const doctor_klog *k, const char *text)
{
	for (size_t i = 0; i < k->n; i++)
		if (!strcmp(k->lines[i], text))
			return true;
	return false;
}

static void reads_dmesg_style_file(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_copy(f, "kmsg", KLOG "/dmesg-xid.log");
	doctor_klog k = read_log(f);
	assert_true(k.readable);
	assert_string_equal(k.source, f->kmsg);
	/* timestamps removed; lines with nothing of interest dropped */
	assert_true(has_line(&k, "NVRM: Xid (PCI:0000:5e:00): 79, pid='<unknown>', name=<unknown>, "
	                         "GPU has fallen off the bus."));
	assert_false(has_line(&k, "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) "
	                          "(x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0) "
	                          "#45-Ubuntu SMP PREEMPT_DYNAMIC"));
	assert_int_equal(k.n, 7);
	fx_free(f);
}

static void reads_kmsg_records(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_copy(f, "kmsg", KLOG "/kmsg-app-xid.txt");
	doctor_klog k = read_log(f);
	assert_true(k.readable);
	/* "prio,seq,usec,flags[,caller];" removed, " KEY=value" continuation lines skipped */
	assert_int_equal(k.n, 2);
	assert_true(!strncmp(k.lines[1], "NVRM: Xid (PCI:0000:3b:00): 31, pid=40211", 41));
	fx_free(f);
}

static void reads_journal_lines(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_copy(f, "kmsg", KLOG "/journal-xid.log");
	doctor_klog k = read_log(f);
	assert_int_equal(k.n, 2);
	assert_true(!strncmp(k.lines[0], "NVRM: Xid (PCI:0000:3b:00): 48,", 31));
	fx_free(f);
}

static void falls_back_to_dmesg_then_journalctl(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	f->p.klog_tools = true; /* no kmsg file in the fixture */
	char script[PATH_MAX + 64];
	snprintf(script, sizeof script, "#!/bin/sh\ncat '%s'\n", KLOG "/dmesg-xid.log");
	fx_exec(f, "bin/dmesg", script);
	doctor_klog k = read_log(f);
	assert_true(k.readable);
	assert_string_equal(k.source, "dmesg");
	assert_int_equal(k.n, 7);
	fx_free(f);

	f = fx_new();
	f->p.klog_tools = true;
	fx_exec(f, "bin/dmesg",
	        "#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\n"
	        "exit 1\n");
	/* journalctl -o cat prints messages only */
	fx_exec(
	    f, "bin/journalctl",
	    "#!/bin/sh\n[ \"$1\" = -k ] || exit 2\n"
	    "echo 'NVRM: Xid (PCI:0000:3b:00): 94, pid=77, name=python, Contained: SM (0x1).'\n");
	k = read_log(f);
	assert_true(k.readable);
	assert_string_equal(k.source, "journalctl -k");
	assert_int_equal(k.n, 1);
	fx_free(f);

	f = fx_new();
	f->p.klog_tools = true;
	fx_exec(f, "bin/dmesg", "#!/bin/sh\nexit 1\n");
	fx_exec(f, "bin/journalctl", "#!/bin/sh\nsleep 30\n");
	f->p.tool_timeout_ns = 300000000LL; /* a hung tool is given up on */
	k = read_log(f);
	assert_false(k.readable);
	assert_non_null(strstr(k.why, "kernel log not readable"));
	assert_non_null(strstr(k.why, "No such file or directory"));
	fx_free(f);
}

static void xid_lines(void **state)
{
	(void)state;
	doctor_xid x;
	assert_true(
	    doctor_xid_parse("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
	                     "GPU has fallen off the bus.",
	                     &x));
	assert_string_equal(x.bus, "0000:3b:00");
	assert_int_equal(x.xid, 79);
	assert_true(!strncmp(x.text, "pid='<unknown>'", 15));
	assert_true(doctor_xid_parse("NVRM: Xid (0000:01:00): 13, 0003 00000000 0000a097", &x));
	assert_string_equal(x.bus, "0000:01:00");
	assert_int_equal(x.xid, 13);
	assert_false(doctor_xid_parse("NVRM: loading NVIDIA UNIX x86_64 Kernel Module", &x));
	assert_false(doctor_xid_parse("NVRM: Xid (PCI:0000:3b:00): abc", &x));
	assert_false(doctor_xid_parse("NVRM: Xid (PCI:0000:3b:00", &x));
	bool hw;
	assert_non_null(strstr(doctor_xid_meaning(79, &hw), "fallen off the bus"));
	assert_true(hw);
	assert_non_null(strstr(doctor_xid_meaning(13, &hw), "application"));
	assert_false(hw);
	assert_true(doctor_xid_meaning(48, &hw) && hw);
	assert_non_null(strstr(doctor_xid_meaning(99999, &hw), "catalogue"));
	assert_false(hw);
}

static void aer_lines(void **state)
{
	(void)state;
	doctor_aer a;
	assert_true(doctor_aer_parse(
	    "pcieport 0000:3a:00.0: AER: Corrected error received: 0000:3b:00.0", &a));
	assert_true(a.summary);
	assert_false(a.uncorrected);
	assert_string_equal(a.device, "0000:3b:00.0");
	assert_string_equal(a.reporter, "0000:3a:00.0");
	assert_true(doctor_aer_parse("nvidia 0000:5e:00.0: PCIe Bus Error: severity=Uncorrected "
	                             "(Non-Fatal), type=Transaction Layer, (Requester ID)",
	                             &a));
	assert_false(a.summary);
	assert_true(a.uncorrected);
	assert_false(a.fatal);
	assert_string_equal(a.device, "0000:5e:00.0");
	assert_true(doctor_aer_parse("pcieport 0000:00:01.0: PCIe Bus Error: severity=Uncorrected "
	                             "(Fatal), type=Transaction Layer, (Receiver ID)",
	                             &a));
	assert_true(a.fatal);
	assert_true(doctor_aer_parse("pcieport 0000:00:1c.0: AER: Corrected error message received "
	                             "from 0000:02:00.0",
	                             &a));
	assert_string_equal(a.device, "0000:02:00.0");
	assert_false(doctor_aer_parse("nvidia 0000:3b:00.0:   device [10de:2330] error "
	                              "status/mask=00000001/0000e000",
	                              &a));
	assert_false(doctor_aer_parse("pcieport 0000:00:01.0: AER: enabled with IRQ 24", &a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_dmesg_style_file),
	    cmocka_unit_test(reads_kmsg_records),
	    cmocka_unit_test(reads_journal_lines),
	    cmocka_unit_test(falls_back_to_dmesg_then_journalctl),
	    cmocka_unit_test(xid_lines),
	    cmocka_unit_test(aer_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
