/* test_trace_kevent.c - the whole-event reader leaves what the callbacks leave: on the events
 * traces hold, on every kind of unusual event, and on thousands of damaged ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/trace_kevent_diff.h"

/* Events as PyTorch writes them, and the unusual forms the reader must decline or get right. */
static const char *const events[] = {
    /* the common shapes */
    "{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void "
    "at::native::vectorized_elementwise_"
    "kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, "
    "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)\", \"pid\": 0, \"tid\": 7,\n"
    "    \"ts\": 4458676388076.445, \"dur\": 52.469,\n    \"args\": {\n      \"External id\": 2, "
    "\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 1000, "
    "\"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 4.740741, \"grid\": "
    "[512, 1, 1], \"block\": [512, 1, 1], \"est. achieved occupancy %\": 100\n    }\n  }",
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 2910249, "
    "\"tid\": 2919752, \"ts\": 4458676388071.289, \"dur\": 10.503, \"args\": {\"External id\": 2, "
    "\"cbid\": 211, \"correlation\": 1000}}",
    "{\"ph\": \"s\", \"id\": 1000, \"pid\": 2910249, \"tid\": 2919752, \"ts\": 4458676388071.289, "
    "\"cat\": \"ac2g\", \"name\": \"ac2g\"}",
    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", "
    "\"pid\": 0, \"tid\": 7, \"ts\": 100.5, \"dur\": 3, \"args\": {\"stream\": 7, \"correlation\": "
    "5, \"bytes\": 4096, \"memory bandwidth (GB/s)\": 1.365333}}",
    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#12\", \"pid\": 1, "
    "\"tid\": 1, \"ts\": 90, \"dur\": 1000}",
    "{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::empty\", \"pid\": 119771, \"tid\": "
    "\"1890023232\",\n    \"ts\": 1610366662254362, \"dur\": 4,\n    \"args\": {\n       \"Input "
    "dims\": [[], [], [], [], [], []], \"Input type\": [], \"Device\": 0, \"External id\": 2, "
    "\"Trace name\": \"PyTorch Profiler\", \"Trace iteration\": 0\n    }\n  }",
    "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": "
    "1, \"ts\": 5, \"s\": \"t\", \"args\": {\"Total Allocated\": 0, \"Bytes\": -512}}",
    "{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"ts\": 1, \"dur\": "
    "2}",
    "{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Event Sync\", \"ts\": 7, \"dur\": 2, "
    "\"args\": {\"stream\": -1, \"correlation\": 9}}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce\", \"ts\": 1e3, "
    "\"dur\": "
    "2.5E+1, \"args\": {\"stream\": 20.7, \"correlation\": 3.9}}",
    "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k\",\"ts\":-12.3456,\"dur\":0.0005,\"args\":"
    "{\"stream\":\"7\",\"correlation\":1}}",
    "{\t\"ph\" :\t\"X\" ,\r\n\"cat\"\n:\"Memset\" , \"name\" : \"m\" , \"ts\" : 1 , \"dur\" : 1 , "
    "\"args\" : { } }",
    /* declined: the callbacks decide */
    "{}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"caf\xc3\xa9 \\\"q\\\"\", \"ts\": 1, \"dur\": "
    "1}",
    "{\"ph\": \"X\", \"cat\": \"k\\u0065rnel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1}",
    "{\"ph\": \"X\", \"n\\u0061me\": \"k\", \"ts\": 1, \"dur\": 1, \"cat\": \"kernel\"}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"name\": \"b\", \"ts\": 1, \"dur\": 1}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"cat\": \"cpu_op\", \"ts\": 1, \"dur\": 1}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": \"1\", \"dur\": 1}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": null, \"dur\": 1}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": true, \"dur\": [1]}",
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": {\"a\": 1}}",
    "{\"ph\": 1, \"cat\": 7, \"name\": null, \"ts\": 1, \"dur\": 1}",
    "{\"ph\": \"\", \"cat\": null, \"name\": 5, \"ts\": 1, \"dur\": 1}",
    "{\"ph\": {}, \"cat\": [], \"name\": {}, \"ts\": 1, \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": [1, 2]}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": null}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"stream\": 1}, \"args\": {}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"stream\": \"x7\", \"correlation\": "
    "\"5\"}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"stream\": null, \"correlation\": "
    "null, \"memory bandwidth (GB/s)\": null}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"stream\": true, \"correlation\": "
    "[1], \"memory bandwidth (GB/s)\": \"fast\"}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"stream\": 1, \"stream\": 2}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"rank\": 3}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"rank\": 5}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"x\": {\"y\": [{\"rank\": 4}]}}}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"x\": {\"y\": [{\"z\": \"\\n\"}]}}}",
    "{\"cat\": \"kernel\", \"ts\": 123456789012345678901234567890, \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"args\": {\"correlation\": "
    "123456789012345678901234567890, \"memory bandwidth (GB/s)\": "
    "1.0000000000000000000000000000000000000000000000000000000000000000001}}",
    "{\"cat\": \"ProfilerStep#3\", \"name\": \"x\", \"ts\": 1, \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"ts\": 2}",
    "{\"cat\": \"kernel\", \"ts\": 01, \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1., \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1,}",
    "{\"cat\": \"kernel\", \"ts\": 1 \"dur\": 1}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"tid\": \"\x01\"}",
    "{\"cat\": \"kernel\", \"ts\": 1, \"dur\": 1, \"tid\": tru}",
    "{\"cat\": \"kernel\"\x0b, \"ts\": 1, \"dur\": 1}",
    "[1, 2]",
    "7",
    "\"s\"",
    "null",
};
enum { N_EVENTS = sizeof events / sizeof *events };

static char *document(const char *body)
{
	static const char head[] = "{\"schemaVersion\": 1, \"traceEvents\": [\n  ",
	                  tail[] = "\n], \"distributedInfo\": {\"rank\": 2, \"world_size\": 4}, "
	                           "\"baseTimeNanoseconds\": 1700000000000000000}\n";
	size_t n = strlen(head) + strlen(body) + strlen(tail) + 1;
	char *d = malloc(n);
	assert_non_null(d);
	snprintf(d, n, "%s%s%s", head, body, tail);
	return d;
}

static trace_kevent_diff compare(const char *doc)
{
	return trace_kevent_compare((const unsigned char *)doc, strlen(doc));
}

/* Each event alone, then all of them in one array: the same verdict and, where accepted, the
 * same state and rank. */
static void test_each_form(void **state)
{
	(void)state;
	size_t all = 1;
	for (int i = 0; i < N_EVENTS; i++) {
		char *doc = document(events[i]);
		trace_kevent_diff d = compare(doc);
		if (d.sax_ok != d.fast_ok || (d.sax_ok && !d.same))
			fail_msg("event %d differs: %s", i, events[i]);
		free(doc);
		all += strlen(events[i]) + 4;
	}
	char *body = malloc(all);
	assert_non_null(body);
	body[0] = 0;
	for (int i = 0; i < N_EVENTS; i++) {
		if (i)
			strcat(body, ",\n  ");
		strcat(body, events[i]);
	}
	char *doc = document(body);
	trace_kevent_diff d = compare(doc);
	/* Some forms are not valid JSON, so the whole array is refused both ways; the valid ones
	 * are checked together below. */
	assert_false(d.sax_ok);
	assert_false(d.fast_ok);
	free(doc);
	free(body);
}

/* The usual events are taken by the reader, not declined (else it would only cost time). */
static void test_common_events_are_taken(void **state)
{
	(void)state;
	char body[8192] = "";
	long n = 0;
	for (int i = 0; i < 12; i++) {
		if (i == 10)
			continue; /* a stream id as a string: the callbacks convert it */
		if (n++)
			strcat(body, ", ");
		strcat(body, events[i]);
	}
	char *doc = document(body);
	trace_kevent_diff d = compare(doc);
	assert_true(d.same);
	assert_int_equal(d.taken, n);
	free(doc);
}

/* Times and integers of every length and form, where the reader converts them itself and
 * where it leaves them to the general conversion: the same values. */
static void test_numbers(void **state)
{
	(void)state;
	static const char *const nums[] = {"0",
	                                   "7",
	                                   "0.5",
	                                   "10.25",
	                                   "99.999",
	                                   "1.0",
	                                   "1.00",
	                                   "1.000",
	                                   "1.0005",
	                                   "1.0004",
	                                   "12345678",
	                                   "123456789",
	                                   "123456789012345",
	                                   "999999999999999.999",
	                                   "1234567890123456",
	                                   "12345678901234567",
	                                   "123456789012345678",
	                                   "1234567890123456789",
	                                   "99999999999999999999",
	                                   "4458676388076.445",
	                                   "1610366662254362",
	                                   "-0",
	                                   "-5.5",
	                                   "01",
	                                   "1.",
	                                   ".5",
	                                   "1e3",
	                                   "1.5E-2",
	                                   "0.0001",
	                                   "00",
	                                   "1x",
	                                   "08",
	                                   "9007199254740993"};
	enum { N = sizeof nums / sizeof *nums };
	char body[512], pad[80];
	memset(pad, ' ', sizeof pad - 1);
	pad[sizeof pad - 1] = 0;
	for (int i = 0; i < N; i++) {
		for (int near_end = 0; near_end < 2; near_end++) {
			snprintf(
			    body, sizeof body,
			    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": %s, "
			    "\"dur\": %s, \"args\": {\"stream\": %s, \"correlation\": %s}}%s",
			    nums[i], nums[(i + 1) % N], nums[(i + 2) % N], nums[i],
			    near_end ? "" : pad);
			char *doc = document(body);
			trace_kevent_diff d = compare(doc);
			if (d.sax_ok != d.fast_ok || (d.sax_ok && !d.same))
				fail_msg("numbers differ: %s", body);
			free(doc);
		}
	}
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned next(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* Damaged events: bytes removed, inserted from JSON's own alphabet, runs repeated. Whatever the
 * callbacks accept, the reader leaves the same; whatever they refuse, the scanner refuses. */
static void test_damaged_events(void **state)
{
	(void)state;
	static const char alphabet[] = "\"{}[],: \n\t\\0123456789.-eE+tfnulrsak#";
	char buf[4096];
	long agree = 0, accepted = 0;
	for (int iter = 0; iter < 20000; iter++) {
		size_t n = 0;
		int parts = 1 + (int)next(3);
		for (int p = 0; p < parts; p++) {
			const char *e = events[next(12)];
			size_t m = strlen(e);
			if (n + m + 3 >= sizeof buf / 2)
				break;
			if (p) {
				memcpy(buf + n, ", ", 2);
				n += 2;
			}
			memcpy(buf + n, e, m);
			n += m;
		}
		int cuts = 1 + (int)next(3);
		for (int c = 0; c < cuts && n > 2 && n + 40 < sizeof buf; c++) {
			size_t at = next((unsigned)n);
			switch (next(3)) {
			case 0:
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
				break;
			case 1:
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = alphabet[next(sizeof alphabet - 1)];
				n++;
				break;
			default: {
				size_t len = 1 + next(12);
				if (at + len > n)
					len = n - at;
				memmove(buf + at + len, buf + at, n - at);
				n += len;
				break;
			}
			}
		}
		buf[n] = 0;
		char *doc = document(buf);
		trace_kevent_diff d = compare(doc);
		if (d.sax_ok != d.fast_ok || (d.sax_ok && !d.same))
			fail_msg("damaged events differ (iteration %d): %s", iter, buf);
		agree++;
		accepted += d.sax_ok;
		free(doc);
	}
	assert_int_equal(agree, 20000);
	/* Some damage leaves valid JSON (a digit added, a space), so both paths are exercised. */
	assert_true(accepted > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_form),
	    cmocka_unit_test(test_common_events_are_taken),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_damaged_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
