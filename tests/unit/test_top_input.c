/* top's keys: normal mode, the filter and GPU prompts, help, the key line. */
#define _XOPEN_SOURCE_EXTENDED 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curses.h>
#include <locale.h>
#include <string.h>

#include "top/input.h"

static top_action ch(top_input *in, unsigned c)
{
	return top_input_key(in, false, c);
}

static top_action key(top_input *in, unsigned k)
{
	return top_input_key(in, true, k);
}

static void test_normal_keys(void **state)
{
	(void)state;
	top_input in = {0};
	assert_int_equal(ch(&in, 'q').kind, TOP_A_QUIT);
	assert_int_equal(ch(&in, 's').kind, TOP_A_SORT_NEXT);
	assert_int_equal(ch(&in, 'r').kind, TOP_A_SORT_REVERSE);
	assert_int_equal(ch(&in, 'p').kind, TOP_A_PAUSE);
	assert_int_equal(ch(&in, ' ').kind, TOP_A_PAUSE);
	assert_int_equal(ch(&in, 't').kind, TOP_A_TREE);
	assert_int_equal(ch(&in, '+').kind, TOP_A_SLOWER);
	assert_int_equal(ch(&in, '-').kind, TOP_A_FASTER);
	assert_int_equal(ch(&in, 'x').kind, TOP_A_NONE);
	top_action a = key(&in, KEY_DOWN);
	assert_int_equal(a.kind, TOP_A_MOVE);
	assert_int_equal(a.delta, 1);
	assert_int_equal(ch(&in, 'k').delta, -1);
	assert_int_equal(key(&in, KEY_NPAGE).delta, TOP_MOVE_PAGE);
	assert_int_equal(key(&in, KEY_HOME).delta, -TOP_MOVE_END);
	assert_int_equal(key(&in, KEY_RESIZE).kind, TOP_A_RESIZE);
	assert_int_equal(key(&in, KEY_MOUSE).kind, TOP_A_MOUSE);
	assert_int_equal(in.mode, TOP_IN_NORMAL);
	assert_null(top_input_prompt(&in));
}

static void test_filter_prompt(void **state)
{
	(void)state;
	top_input in = {0};
	top_action a = ch(&in, '/');
	assert_int_equal(in.mode, TOP_IN_FILTER);
	assert_non_null(top_input_prompt(&in));
	assert_int_equal(a.kind, TOP_A_FILTER);
	/* typing filters as it goes; keys mean letters here */
	a = ch(&in, 'q');
	assert_int_equal(a.kind, TOP_A_FILTER);
	assert_string_equal(a.text, "q");
	a = ch(&in, 'x');
	assert_string_equal(a.text, "qx");
	a = key(&in, KEY_BACKSPACE);
	assert_string_equal(a.text, "q");
	a = ch(&in, '\r');
	assert_int_equal(a.kind, TOP_A_FILTER);
	assert_string_equal(a.text, "q");
	assert_int_equal(in.mode, TOP_IN_NORMAL);
	/* '/' edits the filter in force; Esc clears it */
	a = ch(&in, '/');
	assert_string_equal(a.text, "q");
	assert_string_equal(in.buf, "q");
	a = ch(&in, 27);
	assert_int_equal(a.kind, TOP_A_FILTER);
	assert_string_equal(a.text, "");
	assert_string_equal(in.filter, "");
	assert_int_equal(in.mode, TOP_IN_NORMAL);
	/* Ctrl-U erases, and the buffer never overflows */
	ch(&in, '/');
	for (int i = 0; i < 200; i++)
		ch(&in, 'a');
	assert_int_equal((int)strlen(in.buf), TOP_PROMPT_MAX - 1);
	a = ch(&in, 21);
	assert_string_equal(a.text, "");
}

static void test_utf8_in_prompt(void **state)
{
	(void)state;
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		skip();
	top_input in = {0};
	ch(&in, '/');
	ch(&in, 0x00e9); /* é */
	top_action a = ch(&in, 'x');
	assert_string_equal(a.text, "\xc3\xa9x");
	key(&in, KEY_BACKSPACE);
	a = key(&in, KEY_BACKSPACE); /* a whole character goes */
	assert_string_equal(a.text, "");
	setlocale(LC_CTYPE, "C");
}

static void test_gpu_prompt(void **state)
{
	(void)state;
	top_input in = {0};
	assert_int_equal(ch(&in, 'g').kind, TOP_A_REDRAW);
	assert_int_equal(in.mode, TOP_IN_GPUS);
	ch(&in, '0');
	ch(&in, ',');
	assert_int_equal(ch(&in, '2').kind, TOP_A_REDRAW); /* applied on Enter only */
	top_action a = key(&in, KEY_ENTER);
	assert_int_equal(a.kind, TOP_A_GPUS);
	assert_string_equal(a.text, "0,2");
	/* Esc cancels without a selection */
	ch(&in, 'g');
	ch(&in, '1');
	a = ch(&in, 27);
	assert_int_equal(a.kind, TOP_A_REDRAW);
	assert_int_equal(in.mode, TOP_IN_NORMAL);
}

static void test_help(void **state)
{
	(void)state;
	top_input in = {0};
	assert_int_equal(ch(&in, 'h').kind, TOP_A_HELP);
	assert_int_equal(in.mode, TOP_IN_HELP);
	/* a resize keeps it open; q closes it without quitting */
	assert_int_equal(key(&in, KEY_RESIZE).kind, TOP_A_RESIZE);
	assert_int_equal(in.mode, TOP_IN_HELP);
	assert_int_equal(ch(&in, 'q').kind, TOP_A_HELP);
	assert_int_equal(in.mode, TOP_IN_NORMAL);
	assert_int_equal(ch(&in, '?').kind, TOP_A_HELP);
	assert_int_equal(key(&in, KEY_F(1)).kind, TOP_A_HELP);
}

static void test_key_line(void **state)
{
	(void)state;
	char line[256];
	top_keys_line(line, sizeof line, 80);
	assert_true(strlen(line) <= 80);
	assert_non_null(strstr(line, "q quit"));
	assert_non_null(strstr(line, "h help"));
	assert_non_null(strstr(line, "/ filter"));
	/* narrow: whole entries only */
	top_keys_line(line, sizeof line, 20);
	assert_string_equal(line, "q quit  h help");
	/* every key of the line has a help text */
	for (int i = 0; i < top_nkeys; i++)
		assert_true(strlen(top_keys[i].what) > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_normal_keys),    cmocka_unit_test(test_filter_prompt),
	    cmocka_unit_test(test_utf8_in_prompt), cmocka_unit_test(test_gpu_prompt),
	    cmocka_unit_test(test_help),           cmocka_unit_test(test_key_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
