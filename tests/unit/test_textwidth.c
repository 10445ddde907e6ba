/* util/textwidth: display columns of UTF-8 text, cells cut between characters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "util/textwidth.h"

static void width_counts_columns(void **state)
{
	(void)state;
	assert_int_equal(gw_text_width(NULL), 0);
	assert_int_equal(gw_text_width(""), 0);
	assert_int_equal(gw_text_width("GPU-Util"), 8);
	assert_int_equal(gw_text_width("显存"), 4); /* two columns a character */
	assert_int_equal(gw_text_width("训练任务 x"), 10);
	assert_int_equal(gw_text_width("ＡＢ"), 4);      /* fullwidth forms */
	assert_int_equal(gw_text_width("e\xcc\x81"), 1); /* e + combining acute */
	assert_int_equal(gw_text_width("a\xff"
	                               "b"),
	                 3);                                 /* an invalid byte: one glyph */
	assert_int_equal(gw_text_width("\xe6\x98"), 2);      /* a cut sequence: two bad bytes */
	assert_int_equal(gw_text_width("a\tb"), 2);          /* controls take no column */
	assert_int_equal(gw_text_width_n("显存占满", 6), 4); /* bytes, not characters */
}

static void fit_never_cuts_a_character(void **state)
{
	(void)state;
	int w;
	assert_int_equal(gw_text_fit("显存占满", 5, &w), 6); /* 显存 fits, 占 would need column 6 */
	assert_int_equal(w, 4);
	assert_int_equal(gw_text_fit("显存占满", 0, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(gw_text_fit("abc", 10, &w), 3);
	assert_int_equal(w, 3);
	assert_int_equal(gw_text_fit("e\xcc\x81x", 1, &w), 3); /* the mark stays with its letter */
	assert_int_equal(w, 1);
	assert_int_equal(gw_text_fit(NULL, 4, &w), 0);
}

static void pad_fills_to_columns(void **state)
{
	(void)state;
	assert_int_equal(gw_text_pad("利用率", 10), 4);
	assert_int_equal(gw_text_pad("utilisation", 4), 0);
	char buf[64];
	snprintf(buf, sizeof buf, "%s%*s|", "温度", gw_text_pad("温度", 6), "");
	assert_string_equal(buf, "温度  |");
}

static void cell_cuts_and_pads(void **state)
{
	(void)state;
	char out[64];
	assert_string_equal(gw_text_cell(out, sizeof out, "显存", 6, GW_ALIGN_LEFT, NULL),
	                    "显存  ");
	assert_string_equal(gw_text_cell(out, sizeof out, "显存", 6, GW_ALIGN_RIGHT, NULL),
	                    "  显存");
	/* 5 columns: 显存 (4) and one space where 占 did not fit */
	assert_string_equal(gw_text_cell(out, sizeof out, "显存占满", 5, GW_ALIGN_LEFT, NULL),
	                    "显存 ");
	assert_int_equal(gw_text_width(out), 5);
	assert_string_equal(gw_text_cell(out, sizeof out, "显存占满", 5, GW_ALIGN_LEFT, "~"),
	                    "显存~");
	assert_string_equal(gw_text_cell(out, sizeof out, "python3", 5, GW_ALIGN_RIGHT, "~"),
	                    "pyth~");
	assert_string_equal(gw_text_cell(out, sizeof out, "ok", 4, GW_ALIGN_LEFT, "~"), "ok  ");
	assert_string_equal(gw_text_cell(out, sizeof out, NULL, 2, GW_ALIGN_LEFT, NULL), "  ");
	assert_string_equal(gw_text_cell(out, sizeof out, "abc", 0, GW_ALIGN_LEFT, "~"), "");
	/* every width from 0 to 12 gives exactly that many columns */
	for (int c = 0; c <= 12; c++) {
		gw_text_cell(out, sizeof out, "训练任务ab", c, GW_ALIGN_LEFT, "…");
		assert_int_equal(gw_text_width(out), c);
	}
}

static void small_buffer_cuts_between_characters(void **state)
{
	(void)state;
	char out[6]; /* 5 bytes: 显 (3) fits, 存 (3) does not */
	gw_text_cell(out, sizeof out, "显存", 4, GW_ALIGN_LEFT, NULL);
	assert_string_equal(out, "显");
	gw_text_trunc(out, 1, "abc", 3, NULL);
	assert_string_equal(out, "");
}

static void trunc_keeps_short_text(void **state)
{
	(void)state;
	char out[64];
	assert_string_equal(gw_text_trunc(out, sizeof out, "数据加载", 8, "…"), "数据加载");
	assert_string_equal(gw_text_trunc(out, sizeof out, "数据加载", 7, "…"), "数据加…");
	assert_string_equal(gw_text_trunc(out, sizeof out, "数据加载", 3, NULL), "数");
}

static void fput_cell_writes_a_cell(void **state)
{
	(void)state;
	char buf[64] = "";
	FILE *f = fmemopen(buf, sizeof buf, "w");
	assert_non_null(f);
	assert_int_equal(gw_text_fput_cell(f, "降频", 6, GW_ALIGN_RIGHT), 0);
	assert_int_equal(gw_text_fput_cell(f, "PCIe 链路", 4, GW_ALIGN_LEFT), 0);
	fclose(f);
	assert_string_equal(buf, "  降频PCIe");
}

int main(void)
{
	/* Widths must not depend on the locale: run both without one and in UTF-8. */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(width_counts_columns),
	    cmocka_unit_test(fit_never_cuts_a_character),
	    cmocka_unit_test(pad_fills_to_columns),
	    cmocka_unit_test(cell_cuts_and_pads),
	    cmocka_unit_test(small_buffer_cuts_between_characters),
	    cmocka_unit_test(trunc_keeps_short_text),
	    cmocka_unit_test(fput_cell_writes_a_cell),
	};
	int failed = cmocka_run_group_tests_name("textwidth (C locale)", tests, NULL, NULL);
	if (setlocale(LC_CTYPE, "C.UTF-8"))
		failed += cmocka_run_group_tests_name("textwidth (C.UTF-8)", tests, NULL, NULL);
	return failed ? 1 : 0;
}
