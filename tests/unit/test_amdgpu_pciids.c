/*
 * AMD GPU names from pci.ids: tests/fixtures/amdgpu/pciids holds an excerpt of
 * Debian's pci.ids (usr/share/misc/pci.ids, its licence beside it) and four
 * cards: one whose board is listed, one whose board is not (its chip is),
 * one with a product_name, one the database does not know.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "gpu/amdgpu.h"
#include "gpu/amdgpu_map.h"
#include "gpu/amdgpu_pciids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOT(name) FIXTURES_DIR "/amdgpu/" name
#define DB ROOT("pciids") "/usr/share/misc/pci.ids"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("%s: cannot open", path);
	char *buf = malloc(1 << 16);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static amdgpu_pciids_query q_of(unsigned v, unsigned d, unsigned sv, unsigned sd)
{
	amdgpu_pciids_query q = {v, d, sv, sd, "", ""};
	return q;
}

static void test_find(void **state)
{
	(void)state;
	size_t len;
	char *db = slurp(DB, &len);
	amdgpu_pciids_query q = q_of(0x1002, 0x73bf, 0x1002, 0x0e3a);
	assert_true(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(q.device_name, "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]");
	assert_string_equal(q.subsystem_name, "Radeon RX 6900 XT");
	assert_string_equal(amdgpu_pciids_name(&q), "Radeon RX 6900 XT");
	/* a board not listed under its chip (1da2:e471 is, 1da2:471e is not) */
	q = q_of(0x1002, 0x744c, 0x1da2, 0x471e);
	assert_true(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(q.subsystem_name, "");
	assert_string_equal(amdgpu_pciids_name(&q), "Navi 31 [Radeon RX 7900 XT/7900 XTX]");
	/* the last device of the vendor's block, then another vendor's */
	q = q_of(0x1002, 0x7480, 0, 0);
	assert_true(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(q.device_name, "Navi 33 [Radeon RX 7700S/7600S]");
	q = q_of(0x1002, 0x0201, 0, 0); /* 0201 is ULSI's, not AMD's */
	assert_false(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(amdgpu_pciids_name(&q), "");
	q = q_of(0x1003, 0x0201, 0, 0);
	assert_true(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(q.device_name, "US201");
	/* a subsystem of another device is not this board's */
	q = q_of(0x1002, 0x744c, 0x1002, 0x0e3a);
	assert_true(amdgpu_pciids_find(db, len, &q));
	assert_string_equal(q.subsystem_name, "");
	/* the class list after the vendors is no vendor's block */
	q = q_of(0x1002, 0x0000, 0, 0);
	assert_false(amdgpu_pciids_find(db, len, &q));
	/* cut inside the block: what is there is found, nothing is read past the end */
	const char *cut = strstr(db, "\t744c");
	q = q_of(0x1002, 0x744c, 0, 0);
	assert_false(amdgpu_pciids_find(db, (size_t)(cut - db) + 3, &q));
	free(db);
	const char *crlf = "1002  AMD\r\n\t73bf  Navi 21\r\n\t\t1002 0e3a  RX 6900 XT\r\n";
	q = q_of(0x1002, 0x73bf, 0x1002, 0x0e3a);
	assert_true(amdgpu_pciids_find(crlf, strlen(crlf), &q));
	assert_string_equal(q.subsystem_name, "RX 6900 XT");
	assert_string_equal(q.device_name, "Navi 21");
}

static void test_lookup_root(void **state)
{
	(void)state;
	amdgpu_pciids_query q = q_of(0x1002, 0x73bf, 0x1002, 0x0e3a);
	assert_true(amdgpu_pciids_lookup(ROOT("pciids"), &q));
	assert_string_equal(amdgpu_pciids_name(&q), "Radeon RX 6900 XT");
	q = q_of(0x1002, 0x7fff, 0x1002, 0x7fff);
	assert_false(amdgpu_pciids_lookup(ROOT("pciids"), &q));
	q = q_of(0x1002, 0x73bf, 0x1002, 0x0e3a);
	assert_false(amdgpu_pciids_lookup(ROOT("apu"), &q)); /* no database there */
}

static void test_card_names(void **state)
{
	(void)state;
	amdgpu_card cards[8];
	assert_int_equal(amdgpu_discover(ROOT("pciids"), cards, 8), 4);
	static const char *const want[] = {
	    "Radeon RX 6900 XT",                    /* 0000:03:00.0: its board's line */
	    "Navi 31 [Radeon RX 7900 XT/7900 XTX]", /* 0000:0a:00.0: its chip's line */
	    "AMD Radeon PRO W6800",                 /* 0000:0d:00.0: product_name first */
	    "AMD GPU 1002:7fff",                    /* 0000:10:00.0: unknown to the database */
	};
	for (int i = 0; i < 4; i++) {
		gpu_static st;
		amdgpu_static(&cards[i], i, &st);
		assert_string_equal(st.name, want[i]);
	}
	assert_string_equal(cards[2].pci_name, ""); /* not looked up when the board names itself */
	/* no database: the name stays what it was */
	assert_int_equal(amdgpu_discover(ROOT("apu"), cards, 8), 1);
	gpu_static st;
	amdgpu_static(&cards[0], 0, &st);
	assert_string_equal(st.name, "AMD GPU 1002:15d8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_lookup_root),
	    cmocka_unit_test(test_card_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
