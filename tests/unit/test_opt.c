/* The declarative option parser: every kind, ranges, units, errors, --help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/opt.h"
#include "util/err.h"

static const char *const colours[] = {"red", "green", "blue", NULL};

typedef struct {
	bool flag;
	int verbose, n, colour, calls;
	int64_t big, dur_ms, mem_mib;
	double ratio;
	const char *name, *mode;
	int modes;
	opt_list tags;
} vals;

static int on_call(const opt_def *o, const char *v, void *ctx)
{
	(void)o;
	vals *x = ctx;
	if (v && !strcmp(v, "bad"))
		return gw_error(GW_EXIT_USAGE, "--call", NULL, "refused");
	x->calls++;
	return 0;
}

static vals V;

static int on_mode(const opt_def *o, const char *v, void *ctx)
{
	(void)o;
	vals *x = ctx;
	x->mode = v;
	x->modes++;
	return 0;
}

static const opt_def table[] = {
    OPT_FLAG('f', "flag", &V.flag, "a flag"),
    OPT_COUNT('v', "verbose", &V.verbose, "more"),
    OPT_INT('n', "count", "N", &V.n, 1, 10, "how many"),
    OPT_INT64(0, "big", "N", &V.big, 0, 0, "large"),
    OPT_DOUBLE(0, "ratio", "X", &V.ratio, 0, 1, "a ratio"),
    OPT_DURATION('t', "timeout", "D", &V.dur_ms, 1000000,
                 "a time limit that is described at such length that the help text has to be "
                 "wrapped onto a second line",
                 .max = 3600),
    OPT_SIZE('m', "mem", "SIZE", &V.mem_mib, 1 << 20, "memory", .bare = 1 << 20),
    OPT_STRING(0, "name", "NAME", &V.name, "a name"),
    OPT_ENUM(0, "colour", "C", &V.colour, colours, "red, green or blue"),
    OPT_LIST(0, "tag", "T", &V.tags, "repeatable"),
    OPT_CALL(0, "call", "V", on_call, "checked"),
    OPT_CALL('o', "mode", "M", on_mode, "a value only with =", .optional = true),
    OPT_FLAG(0, "secret", &V.flag, NULL, .hidden = true),
    {0},
};

static const opt_cmd cmd = {.name = "thing",
                            .usage = "thing [OPTIONS] FILE...\nthing --flag",
                            .about = "Does a thing.",
                            .opts = table,
                            .exit1 = "the thing found problems",
                            .min_args = 0,
                            .max_args = 2,
                            .ctx = &V};

static char err_text[4096];

/* Parse a NULL-terminated list; stderr is captured into err_text. */
static int parse(int *first, ...)
{
	static char *argv[32];
	va_list ap;
	va_start(ap, first);
	int argc = 0;
	argv[argc++] = "thing";
	for (char *a; (a = va_arg(ap, char *));)
		argv[argc++] = a;
	va_end(ap);
	opt_list_free(&V.tags);
	memset(&V, 0, sizeof V);
	fflush(stderr);
	FILE *tmp = tmpfile();
	int saved = dup(2);
	dup2(fileno(tmp), 2);
	int out_fd = dup(1), devnull = fileno(tmpfile());
	dup2(devnull, 1);
	int rc = opt_parse(&cmd, argc, argv, first);
	fflush(stderr);
	fflush(stdout);
	dup2(saved, 2);
	dup2(out_fd, 1);
	close(saved);
	close(out_fd);
	rewind(tmp);
	size_t n = fread(err_text, 1, sizeof err_text - 1, tmp);
	err_text[n] = '\0';
	fclose(tmp);
	return rc;
}

static void test_kinds(void **state)
{
	(void)state;
	int first;
	assert_int_equal(parse(&first, "-fvv", "--count=3", "--big", "-5000000000", "--ratio",
	                       "0.25", "-t", "90", "-m12G", "--name", "x", "--colour", "blue",
	                       "--tag", "a", "--tag=b", "--call", "ok", "file", (char *)NULL),
	                 0);
	assert_true(V.flag);
	assert_int_equal(V.verbose, 2);
	assert_int_equal(V.n, 3);
	assert_true(V.big == -5000000000LL);
	assert_true(V.ratio == 0.25);
	assert_int_equal(V.dur_ms, 90000);
	assert_int_equal(V.mem_mib, 12 * 1024);
	assert_string_equal(V.name, "x");
	assert_int_equal(V.colour, 2);
	assert_int_equal(V.tags.n, 2);
	assert_string_equal(V.tags.v[1], "b");
	assert_int_equal(V.calls, 1);
	assert_int_equal(first, 19);
}

static void test_units(void **state)
{
	(void)state;
	int first;
	assert_int_equal(parse(&first, "-t", "250ms", "--mem", "800", (char *)NULL), 0);
	assert_int_equal(V.dur_ms, 250);
	assert_int_equal(V.mem_mib, 800); /* a bare size is MiB here */
	assert_int_equal(parse(&first, "--mem", "1.5GiB", "-t", "2h", (char *)NULL), GW_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--timeout: '2h' is not a duration from 0s to 3600s"));
	assert_int_equal(parse(&first, "--mem", "1.5GiB", (char *)NULL), 0);
	assert_int_equal(V.mem_mib, 1536);
	assert_int_equal(parse(&first, "--mem", "lots", (char *)NULL), GW_EXIT_USAGE);
	assert_non_null(strstr(err_text, "gpuwhy: --mem: 'lots' is not a size (e.g. 12G"));
	assert_int_equal(parse(&first, "-t", "soon", (char *)NULL), GW_EXIT_USAGE);
	assert_non_null(strstr(err_text, "gpuwhy: --timeout: 'soon' is not a duration ("));
}

static void test_ranges(void **state)
{
	(void)state;
	int first;
	assert_int_equal(parse(&first, "-n", "11", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --count: '11' is not an integer from 1 to 10\n");
	assert_int_equal(parse(&first, "-n", "1x", (char *)NULL), GW_EXIT_USAGE);
	assert_int_equal(parse(&first, "--ratio", "1.5", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --ratio: '1.5' is not a number from 0 to 1\n");
	assert_int_equal(parse(&first, "--ratio", "nan", (char *)NULL), GW_EXIT_USAGE);
	assert_int_equal(parse(&first, "--colour", "pink", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text,
	                    "gpuwhy: --colour: unknown colour 'pink' (use red, green or blue)\n");
	assert_int_equal(parse(&first, "--call", "bad", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --call: refused\n");
}

static void test_errors(void **state)
{
	(void)state;
	int first;
	assert_int_equal(parse(&first, "--coutn", "3", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --coutn: unknown option (did you mean --count?)\n");
	assert_int_equal(parse(&first, "--zzzzzz", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text,
	                    "gpuwhy: --zzzzzz: unknown option (see gpuwhy thing --help)\n");
	assert_int_equal(parse(&first, "-q", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: -q: unknown option (see gpuwhy thing --help)\n");
	assert_int_equal(parse(&first, "--count", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --count: needs a value (--count N)\n");
	assert_int_equal(parse(&first, "--flag=1", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: --flag: takes no value\n");
	assert_int_equal(parse(&first, "a", "b", "c", (char *)NULL), GW_EXIT_USAGE);
	assert_string_equal(err_text, "gpuwhy: c: unexpected argument (see gpuwhy thing --help)\n");
	/* Unique prefixes are accepted, as getopt_long did. */
	assert_int_equal(parse(&first, "--cou", "4", (char *)NULL), 0);
	assert_int_equal(V.n, 4);
	assert_int_equal(parse(&first, "--co", "4", (char *)NULL), GW_EXIT_USAGE);
	assert_non_null(strstr(err_text, "--co: ambiguous option"));
}

static void test_positionals(void **state)
{
	(void)state;
	int first;
	static char *argv[] = {"thing", "a", "-f", "--", "-n", NULL};
	memset(&V, 0, sizeof V);
	assert_int_equal(opt_parse(&cmd, 5, argv, &first), 0);
	assert_true(V.flag);
	assert_int_equal(first, 3);
	assert_string_equal(argv[3], "a");
	assert_string_equal(argv[4], "-n"); /* after `--`, an argument */
}

/* An optional value comes only with = (or joined to the short name), as getopt's. */
static void test_optional(void **state)
{
	(void)state;
	int first;
	assert_int_equal(parse(&first, "--mode", (char *)NULL), 0);
	assert_int_equal(V.modes, 1);
	assert_null(V.mode);
	assert_int_equal(parse(&first, "--mode=fast", (char *)NULL), 0);
	assert_string_equal(V.mode, "fast");
	assert_int_equal(parse(&first, "-oslow", (char *)NULL), 0);
	assert_string_equal(V.mode, "slow");
	assert_int_equal(parse(&first, "--mode", "file", (char *)NULL), 0);
	assert_null(V.mode);
	assert_int_equal(first, 2); /* "file" is an argument, not the value */
	assert_int_equal(parse(&first, "-o", (char *)NULL), 0);
	assert_null(V.mode);
	assert_int_equal(V.modes, 1);
}

static void test_help(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opt_help(&cmd, f);
	fclose(f);
	assert_non_null(strstr(buf, "usage: gpuwhy thing [OPTIONS] FILE...\n"
	                            "       gpuwhy thing --flag\n\nDoes a thing.\n"));
	assert_non_null(strstr(buf, "  -n, --count N         how many\n"));
	assert_non_null(strstr(buf, "      --big N           large\n"));
	assert_non_null(strstr(buf, "  -h, --help            this help\n"));
	assert_null(strstr(buf, "secret"));
	assert_non_null(strstr(buf, "  -o, --mode[=M]        a value only with =\n"));
	/* Long help is wrapped under its own column. */
	assert_non_null(strstr(
	    buf, "  -t, --timeout D       a time limit that is described at such length that the\n"
	         "                        help text has to be wrapped onto a second line\n"));
	for (char *l = buf; *l;) {
		size_t n = strcspn(l, "\n");
		assert_true(n <= 80);
		l += n + (l[n] == '\n');
	}
	assert_non_null(strstr(buf, "Exit codes: 0 ok, 1 the thing found problems, 2 usage "
	                            "error, 3 environment or\nI/O error.\n"));
	free(buf);
	int first;
	assert_int_equal(parse(&first, "--help", (char *)NULL), OPT_HELP);
	assert_int_equal(parse(&first, "-h", (char *)NULL), OPT_HELP);
}

/*
 * A paragraph line too long for the width runs on into the next line of the
 * same text, so no word is left alone on a row; a line that fits stays as
 * written, and columns and list items are never run into.
 */
static void test_help_paragraph(void **state)
{
	(void)state;
	const opt_cmd c = {
	    .name = "thing",
	    .usage = "thing",
	    .about = "Runs CMD with its stdin, stdout and stderr passed through, records GPUs, the "
	             "host\nand CMD's whole process tree into FILE while it runs.\nA short line.",
	    .opts = table,
	    .more = "  name    a column of text that is long enough to need a second row of "
	            "its very own\n  next    stays a row of its own\n"
	            "- a list item long enough to be broken onto the next row of this help "
	            "text here too\n- the next item"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opt_help(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "\nRuns CMD with its stdin, stdout and stderr passed through, "
	                            "records GPUs, the\nhost and CMD's whole process tree into "
	                            "FILE while it runs.\nA short line.\n"));
	assert_non_null(strstr(buf, "  name    a column of text that is long enough to need a "
	                            "second row of its very\n          own\n  next    stays a row "
	                            "of its own\n"));
	assert_non_null(strstr(buf, "- a list item long enough to be broken onto the next row of "
	                            "this help text here\ntoo\n- the next item\n"));
	free(buf);
}

/* The dump is the table: every option with its kind, names, value, choices and
 * hidden flag, the --help the parser adds, the exit-code sentence and the
 * subcommands; opt_help prints it instead of the text in dump mode. */
static void test_dump(void **state)
{
	(void)state;
	static const char *const subs[] = {"add", "ls", NULL};
	opt_cmd c = cmd;
	c.subs = subs;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	opt_set_dump(true);
	opt_help(&c, f);
	opt_set_dump(false);
	fclose(f);
	json_error_t e;
	json_t *d = json_loads(buf, 0, &e);
	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "name")), "thing");
	json_t *usage = json_object_get(d, "usage");
	assert_int_equal(json_array_size(usage), 2);
	assert_string_equal(json_string_value(json_array_get(usage, 1)), "thing --flag");
	json_t *opts = json_object_get(d, "options");
	size_t n_table = sizeof table / sizeof *table - 1;
	assert_int_equal(json_array_size(opts), n_table + 1); /* and --help */
	json_t *colour = json_array_get(opts, 8), *secret = json_array_get(opts, n_table - 1);
	assert_string_equal(json_string_value(json_object_get(colour, "long")), "colour");
	assert_string_equal(json_string_value(json_object_get(colour, "kind")), "enum");
	assert_string_equal(json_string_value(json_object_get(colour, "arg")), "C");
	assert_true(json_is_true(json_object_get(colour, "value")));
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(colour, "choices"), 2)), "blue");
	assert_true(json_is_true(json_object_get(secret, "hidden")));
	assert_true(json_is_false(json_object_get(json_array_get(opts, 0), "value")));
	assert_string_equal(json_string_value(json_object_get(json_array_get(opts, 0), "short")),
	                    "f");
	json_t *mode = json_array_get(opts, 11);
	assert_true(json_is_true(json_object_get(mode, "optional")));
	json_t *help = json_array_get(opts, n_table);
	assert_string_equal(json_string_value(json_object_get(help, "long")), "help");
	assert_string_equal(json_string_value(json_object_get(help, "short")), "h");
	assert_string_equal(json_string_value(json_object_get(d, "exit_codes")),
	                    "0 ok, 1 the thing found problems, 2 usage error, 3 environment or "
	                    "I/O error.");
	json_t *s = json_object_get(d, "subcommands");
	assert_int_equal(json_array_size(s), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(s, 1), "name")), "ls");
	json_decref(d);
	free(buf);
	/* Out of dump mode, --help is text again. */
	f = open_memstream(&buf, &len);
	opt_help(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "usage: gpuwhy thing"));
	free(buf);
}

static void test_suggest(void **state)
{
	(void)state;
	const char *cmds[] = {"record", "report", "run", "query", "queue", "top", "topo"};
	assert_int_equal(opt_distance("recrod", "record"), 1);
	assert_int_equal(opt_distance("", "abc"), 3);
	assert_string_equal(opt_suggest("recrod", cmds, 7), "record");
	assert_string_equal(opt_suggest("quue", cmds, 7), "queue");
	assert_null(opt_suggest("xyzzy", cmds, 7));
	assert_null(opt_suggest("zz", cmds, 7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds),          cmocka_unit_test(test_units),
	    cmocka_unit_test(test_ranges),         cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_positionals),    cmocka_unit_test(test_help),
	    cmocka_unit_test(test_suggest),        cmocka_unit_test(test_optional),
	    cmocka_unit_test(test_help_paragraph), cmocka_unit_test(test_dump),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	opt_list_free(&V.tags);
	return rc;
}
