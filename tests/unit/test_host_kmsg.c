/* Xid and AER lines from the kernel log: the pure parser and the non-blocking reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "host/host_kmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX FIXTURES_DIR "/host/kmsg/"
#define S(lit) lit, sizeof(lit) - 1

static void test_xid_lines(void **state)
{
	(void)state;
	host_kmsg_event e;
	assert_int_equal(
	    host_kmsg_parse_line(S("[ 5678.901234] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, "
	                           "name=python3, GPU has fallen off the bus."),
	                         &e),
	    1);
	assert_int_equal(e.kind, HOST_KMSG_XID);
	assert_true(e.xid_ok);
	assert_int_equal(e.xid, 79);
	assert_string_equal(e.pci, "0000:3b:00");
	assert_true(e.pid_ok);
	assert_int_equal(e.pid, 1234);
	assert_string_equal(e.process, "python3");
	assert_string_equal(e.msg, "GPU has fallen off the bus.");
	assert_true(e.ts_ok);
	assert_float_equal(e.ts, 5678.901234, 1e-9);
	assert_false(e.seq_ok);
	assert_int_equal(e.level, -1);

	/* the /dev/kmsg record form, with its dictionary lines */
	assert_int_equal(
	    host_kmsg_parse_line(S("4,1234,5678901234,-,caller=T7;NVRM: Xid (0000:86:00): 13, "
	                           "Graphics Exception: ESR 0x404600=0x80000002\n SUBSYSTEM=pci\n"),
	                         &e),
	    1);
	assert_true(e.seq_ok);
	assert_int_equal(e.seq, 1234);
	assert_int_equal(e.level, 4);
	assert_float_equal(e.ts, 5678.901234, 1e-9);
	assert_int_equal(e.xid, 13);
	assert_string_equal(e.pci, "0000:86:00");
	assert_false(e.pid_ok);
	assert_string_equal(e.msg, "Graphics Exception: ESR 0x404600=0x80000002");

	assert_int_equal(host_kmsg_parse_line(
	                     S("NVRM: Xid (PCI:0000:3b:00): 94, pid='<unknown>', name=<unknown>, "
	                       "Contained: SM (0x1)."),
	                     &e),
	                 1);
	assert_false(e.pid_ok);
	assert_string_equal(e.process, "");
	assert_string_equal(e.msg, "Contained: SM (0x1).");
	assert_false(e.ts_ok);

	/* not Xid lines, or broken ones */
	assert_int_equal(
	    host_kmsg_parse_line(S("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."), &e), 0);
	assert_int_equal(host_kmsg_parse_line(S("NVRM: Xid (PCI:0000:3b:00"), &e), 0);
	assert_int_equal(host_kmsg_parse_line(S("NVRM: Xid (PCI:0000:3b:00): x"), &e), 0);
	assert_int_equal(host_kmsg_parse_line(S("NVRM: Xid (PCI:0000:3b:00): 99999999999"), &e), 0);
	assert_int_equal(host_kmsg_parse_line("", 0, &e), 0);
	/* the end of the buffer ends the line even without a NUL */
	char buf[] = "NVRM: Xid (PCI:0000:3b:00): 48, DBE";
	assert_int_equal(host_kmsg_parse_line(buf, 31, &e), 1);
	assert_int_equal(e.xid, 48);
	assert_string_equal(e.msg, "");
}

static void test_aer_lines(void **state)
{
	(void)state;
	host_kmsg_event e;
	assert_int_equal(
	    host_kmsg_parse_line(
	        S("pcieport 0000:00:03.0: AER: Corrected error received: 0000:3b:00.0"), &e),
	    1);
	assert_int_equal(e.kind, HOST_KMSG_AER_CORRECTED);
	assert_string_equal(e.port, "0000:00:03.0");
	assert_string_equal(e.pci, "0000:3b:00.0");
	assert_false(e.detail);
	assert_false(e.multiple);
	assert_string_equal(e.msg, "Corrected error received: 0000:3b:00.0");

	assert_int_equal(
	    host_kmsg_parse_line(
	        S("pcieport 0000:80:02.0: AER: Corrected error message received from 0000:81:00.0"),
	        &e),
	    1);
	assert_int_equal(e.kind, HOST_KMSG_AER_CORRECTED);
	assert_string_equal(e.pci, "0000:81:00.0");

	assert_int_equal(host_kmsg_parse_line(S("pcieport 0000:00:01.0: AER: Multiple Uncorrected "
	                                        "(Non-Fatal) error received: 0000:01:00.0"),
	                                      &e),
	                 1);
	assert_int_equal(e.kind, HOST_KMSG_AER_NONFATAL);
	assert_true(e.multiple);

	/* 3.x kernels print the requester id; decoded with the port's domain */
	assert_int_equal(
	    host_kmsg_parse_line(
	        S("pcieport 0001:00:01.0: AER: Uncorrected (Fatal) error received: id=0018"), &e),
	    1);
	assert_int_equal(e.kind, HOST_KMSG_AER_FATAL);
	assert_string_equal(e.pci, "0001:00:03.0");

	assert_int_equal(
	    host_kmsg_parse_line(S("nvidia 0000:01:00.0: AER: PCIe Bus Error: severity=Uncorrected "
	                           "(Non-Fatal), type=Transaction Layer, (Requester ID)"),
	                         &e),
	    1);
	assert_int_equal(e.kind, HOST_KMSG_AER_NONFATAL);
	assert_true(e.detail);
	assert_string_equal(e.pci, "0000:01:00.0");
	assert_int_equal(
	    host_kmsg_parse_line(
	        S("nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer"),
	        &e),
	    1);
	assert_true(e.detail);
	assert_int_equal(e.kind, HOST_KMSG_AER_CORRECTED);

	assert_int_equal(host_kmsg_parse_line(S("nvidia 0000:3b:00.0: AER:   device [10de:2330] "
	                                        "error status/mask=00000001/0000e000"),
	                                      &e),
	                 0);
	assert_int_equal(host_kmsg_parse_line(S("pcieport 0000:00:03.0: AER: Uncorrected "
	                                        "(Whatever) error received: 0000:3b:00.0"),
	                                      &e),
	                 0);
	assert_int_equal(host_kmsg_parse_line(S("AER:"), &e), 0);
	assert_int_equal(host_kmsg_parse_line(S("x AER: PCIe Bus Error: type=Physical"), &e), 0);
}

static void test_reader_file(void **state)
{
	(void)state;
	host_kmsg *k = host_kmsg_open(FIX "dmesg.txt", 0);
	assert_non_null(k);
	host_kmsg_event ev[32];
	assert_int_equal(host_kmsg_read(k, ev, 4), 4);
	assert_int_equal(ev[0].xid, 79);
	assert_int_equal(ev[1].xid, 31);
	assert_string_equal(ev[1].pci, "0000:af:00");
	assert_float_equal(ev[1].ts, 6000.5, 1e-9);
	assert_int_equal(ev[3].xid, 94);
	uint64_t pos = host_kmsg_position(k);
	assert_true(pos > 0);
	assert_int_equal(host_kmsg_read(k, ev, 32), 6);
	int summaries = 0;
	for (int i = 0; i < 6; i++)
		summaries += ev[i].kind != HOST_KMSG_XID && !ev[i].detail;
	assert_int_equal(summaries, 4);
	assert_int_equal(host_kmsg_read(k, ev, 32), 0);
	host_kmsg_close(k);

	/* resume where we stopped */
	k = host_kmsg_open(FIX "dmesg.txt", pos);
	assert_int_equal(host_kmsg_read(k, ev, 32), 6);
	host_kmsg_close(k);
	k = host_kmsg_open(FIX "dmesg.txt", HOST_KMSG_END);
	assert_int_equal(host_kmsg_read(k, ev, 32), 0);
	host_kmsg_close(k);

	k = host_kmsg_open(FIX "kmsg.txt", 0);
	assert_int_equal(host_kmsg_read(k, ev, 32), 2);
	assert_int_equal(ev[0].seq, 1000);
	assert_int_equal(ev[0].level, 6);
	assert_int_equal(ev[1].seq, 1001);
	assert_int_equal(ev[1].kind, HOST_KMSG_AER_CORRECTED);
	host_kmsg_close(k);

	errno = 0;
	assert_null(host_kmsg_open(FIX "no-such-file", 0));
	assert_int_equal(errno, ENOENT);
}

static void test_reader_growing_file(void **state)
{
	(void)state;
	char path[] = "/tmp/gpuwhy-kmsg-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	host_kmsg *k = host_kmsg_open(path, 0);
	assert_non_null(k);
	host_kmsg_event ev[4];
	assert_int_equal(host_kmsg_read(k, ev, 4), 0);
	/* half a line: not consumed until its newline arrives */
	fputs("[ 1.0] NVRM: Xid (PCI:0000:01:00): 48, pid=7, DB", f);
	fflush(f);
	assert_int_equal(host_kmsg_read(k, ev, 4), 0);
	assert_int_equal(host_kmsg_position(k), 0);
	fputs("E (double bit error)\nunrelated\n", f);
	fflush(f);
	assert_int_equal(host_kmsg_read(k, ev, 4), 1);
	assert_string_equal(ev[0].msg, "DBE (double bit error)");
	assert_int_equal(ev[0].pid, 7);
	/* a line longer than the read buffer is skipped whole */
	for (int i = 0; i < 2000; i++)
		fputs("0123456789", f);
	fputs("\n[ 2.0] NVRM: Xid (PCI:0000:01:00): 63, row remap\n", f);
	fflush(f);
	assert_int_equal(host_kmsg_read(k, ev, 4), 1);
	assert_int_equal(ev[0].xid, 63);
	host_kmsg_close(k);
	fclose(f);
	unlink(path);
}

static void test_reader_dev_kmsg(void **state)
{
	(void)state;
	host_kmsg *k = host_kmsg_open(NULL, 0);
	if (!k) {
		/* needs CAP_SYSLOG or dmesg_restrict=0; not having it is not a failure */
		assert_true(errno == EACCES || errno == EPERM || errno == ENOENT);
		skip();
	}
	host_kmsg_event ev[64];
	/* everything still in the ring comes back, without blocking at the end */
	for (int guard = 0; guard < 100000 && host_kmsg_read(k, ev, 64) > 0; guard++)
		;
	uint64_t next = host_kmsg_position(k);
	assert_true(next > 0); /* the boot messages at least */
	host_kmsg_close(k);
	/* from a sequence number: only records at or after it */
	k = host_kmsg_open(NULL, next - 1);
	assert_non_null(k);
	for (int guard = 0; guard < 100000 && host_kmsg_read(k, ev, 64) > 0; guard++)
		;
	assert_true(host_kmsg_position(k) >= next);
	host_kmsg_close(k);
	k = host_kmsg_open(NULL, HOST_KMSG_END);
	assert_non_null(k);
	assert_true(host_kmsg_read(k, ev, 64) >= 0);
	host_kmsg_close(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xid_lines),       cmocka_unit_test(test_aer_lines),
	    cmocka_unit_test(test_reader_file),     cmocka_unit_test(test_reader_growing_file),
	    cmocka_unit_test(test_reader_dev_kmsg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
