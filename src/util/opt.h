/*
 * opt.h - declarative command-line options: one table per command drives the
 * parsing, the range and unit checks, the one-line errors and `--help`.
 *
 * A command describes itself with an opt_cmd (usage lines, a paragraph, its
 * options, what exit code 1 means for it) and calls opt_parse(). Values land
 * in the targets the table points at; errors are printed in the usual
 * `gpuwhy: <what>: <why> (<hint>)` form and come back as GW_EXIT_USAGE.
 */
#ifndef GPUWHY_UTIL_OPT_H
#define GPUWHY_UTIL_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/i18n.h" /* the tables' texts are messages: N_() */

typedef enum {
	OPTK_END = 0,  /* terminates a table */
	OPTK_FLAG,     /* bool *: set to true; no value */
	OPTK_COUNT,    /* int *: incremented each time it is given; no value */
	OPTK_INT,      /* int *: a base-10 integer in [min, max] */
	OPTK_INT64,    /* int64_t *: a base-10 integer in [min, max] */
	OPTK_DOUBLE,   /* double *: a number in [min, max] */
	OPTK_DURATION, /* int64_t *: 30s, 10m, 2h, 100ms; stored in units of `unit` ns */
	OPTK_SIZE,     /* int64_t *: 12G, 800M, 1.5GiB; stored in units of `unit` bytes */
	OPTK_STRING,   /* const char **: the value as given */
	OPTK_ENUM,     /* int *: the index of the value in `choices` */
	OPTK_LIST,     /* opt_list *: every value of a repeatable option, in order */
	OPTK_CALL,     /* `call` parses the value (or, with no `arg`, takes none) */
	OPTK_GROUP,    /* a heading in --help (help is its text); no option */
} opt_kind;

struct opt_def;
/* Returns 0, or an exit code after printing the one-line error itself. */
typedef int (*opt_call_fn)(const struct opt_def *o, const char *value, void *ctx);

typedef struct opt_def {
	const char *name; /* long name without "--" (NULL: short only) */
	int shrt;         /* short letter, or 0 */
	opt_kind kind;
	const char *arg;  /* value name in --help (N, SIZE, D); NULL for no value */
	const char *help; /* one line or more; wrapped at 80 columns */
	void *target;
	double min, max; /* range of INT, INT64, DOUBLE, DURATION (s), SIZE (units); 0,0: none */
	int64_t unit;    /* DURATION: ns per stored unit (0: ns); SIZE: bytes per unit (0: 1) */
	int64_t bare;    /* DURATION: ns of a bare number (0: 1 s); SIZE: bytes (0: 1) */
	const char *const *choices; /* ENUM: NULL-terminated names */
	opt_call_fn call;
	const char *why;  /* the reason on a bad value, printf with the value as %s */
	const char *hint; /* the hint on a bad value */
	bool hidden;      /* parsed but left out of --help (internal options) */
	bool optional;    /* the value may be left out: only --name=VALUE or -xVALUE give one
	                     (getopt's optional_argument); a CALL then gets NULL */
} opt_def;

/* Values of an OPTK_LIST option; free with opt_list_free. */
typedef struct {
	const char **v;
	int n;
} opt_list;
void opt_list_free(opt_list *l);

typedef struct {
	const char *name;  /* "queue add": used in messages and hints */
	const char *usage; /* lines after "usage: gpuwhy ", '\n'-separated */
	const char *about; /* paragraph(s) before the options, may be NULL */
	const opt_def *opts;
	const char *more;           /* text after the options, may be NULL */
	void (*more_fn)(FILE *out); /* prints after more: what is known only at run time */
	const char *exit1;          /* what exit code 1 means, NULL when never returned */
	const char *exits; /* the whole exit-code text, where the command passes on another\'s */
	int min_args, max_args; /* positional arguments; max -1: any number */
	bool long_only;         /* -name is --name, as nvidia-smi spells them (-lms, -i) */
	bool stop_at_arg;       /* options end at the first positional (commands run programs) */
	void *ctx;              /* passed to OPTK_CALL functions */
	/* Its subcommands (NULL-terminated names, and a one-line summary of each or
	 * NULL), for the dump of the tables (opt_dump): the man pages and the shell
	 * completion learn them from there. */
	const char *const *subs;
	const char *const *sub_summaries;
} opt_cmd;

/* opt_parse returns this after printing --help (the command exits 0). */
#define OPT_HELP (-1)
/* An OPT_CALL function returns this when it printed all there is to print
 * (--help-query): parsing stops and opt_parse returns it; the command exits 0. */
#define OPT_STOP (-2)

/*
 * Parse argv[1..argc) (argv[0] is the command's name). --opt=value, --opt
 * value, -x value, -xvalue, combined short flags (-fv), unique prefixes of
 * long names and `--` are accepted. Positional arguments are moved, in order,
 * to the end of argv; *first is the index of the first one. Returns 0,
 * OPT_HELP, or GW_EXIT_USAGE after the message.
 */
int opt_parse(const opt_cmd *c, int argc, char **argv, int *first);

/* Print the generated help (usage, about, options, more, exit codes); in dump
 * mode (opt_set_dump) the table as JSON instead. */
void opt_help(const opt_cmd *c, FILE *out);

/*
 * Dump mode: every --help prints its table as JSON instead of text
 * (`gpuwhy help --dump COMMAND [SUB]`), so the man pages and the shell
 * completion are generated from the tables the parser uses (opt_dump.c).
 */
void opt_set_dump(bool on);
bool opt_dump_on(void);
void opt_dump(const opt_cmd *c, FILE *out);

/* Whether the table has its own --help/-h (else the parser adds one). */
bool opt_has_help(const opt_cmd *c);
/* The exit-code sentence --help prints after "Exit codes:" (translated). */
void opt_exit_text(const opt_cmd *c, char *buf, size_t len);

/* Print an error and return GW_EXIT_USAGE: "unexpected argument" for a. */
int opt_unexpected(const opt_cmd *c, const char *a);

/*
 * The candidate closest to word by edit distance (a transposition counts one),
 * when close enough to be a likely typo; NULL otherwise.
 */
const char *opt_suggest(const char *word, const char *const *cands, size_t n);
size_t opt_distance(const char *a, const char *b);

/* The output formats most commands take; OPT_FORMAT writes an int index. */
enum { OPT_FMT_TEXT, OPT_FMT_JSON, OPT_FMT_CSV };
extern const char *const opt_fmt_text_json[];     /* text, json */
extern const char *const opt_fmt_text_csv_json[]; /* text, json, csv */

/*
 * Table rows: OPT_X(short, "long", ...target..., "help", extra fields), where
 * the extras are designated initializers such as .why, .hint, .hidden, .min.
 */
#define OPT_FLAG(s, l, t, h, ...)                                                                  \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_FLAG, .target = (t), .help = (h),           \
		__VA_ARGS__                                                                        \
	}
#define OPT_COUNT(s, l, t, h, ...)                                                                 \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_COUNT, .target = (t), .help = (h),          \
		__VA_ARGS__                                                                        \
	}
#define OPT_NUM_(k, s, l, a, t, lo, hi, h, ...)                                                    \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = (k), .arg = (a), .target = (t), .min = (lo),     \
		.max = (hi), .help = (h), __VA_ARGS__                                              \
	}
#define OPT_INT(...) OPT_NUM_(OPTK_INT, __VA_ARGS__)
#define OPT_INT64(...) OPT_NUM_(OPTK_INT64, __VA_ARGS__)
#define OPT_DOUBLE(...) OPT_NUM_(OPTK_DOUBLE, __VA_ARGS__)
#define OPT_UNIT_(k, s, l, a, t, u, h, ...)                                                        \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = (k), .arg = (a), .target = (t), .unit = (u),     \
		.help = (h), __VA_ARGS__                                                           \
	}
/* unit: ns per stored unit (DURATION), bytes per stored unit (SIZE); 0 for ns or bytes. */
#define OPT_DURATION(...) OPT_UNIT_(OPTK_DURATION, __VA_ARGS__)
#define OPT_SIZE(...) OPT_UNIT_(OPTK_SIZE, __VA_ARGS__)
#define OPT_STRING(s, l, a, t, h, ...)                                                             \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_STRING, .arg = (a), .target = (t),          \
		.help = (h), __VA_ARGS__                                                           \
	}
#define OPT_LIST(s, l, a, t, h, ...)                                                               \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_LIST, .arg = (a), .target = (t),            \
		.help = (h), __VA_ARGS__                                                           \
	}
#define OPT_ENUM(s, l, a, t, c, h, ...)                                                            \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_ENUM, .arg = (a), .target = (t),            \
		.choices = (c), .help = (h), __VA_ARGS__                                           \
	}
/* a NULL: the option takes no value and fn gets NULL. */
#define OPT_CALL(s, l, a, fn, h, ...)                                                              \
	{                                                                                          \
		.shrt = (s), .name = (l), .kind = OPTK_CALL, .arg = (a), .call = (fn),             \
		.help = (h), __VA_ARGS__                                                           \
	}
#define OPT_END                                                                                    \
	{                                                                                          \
		.kind = OPTK_END                                                                   \
	}
#define OPT_GROUP(h)                                                                               \
	{                                                                                          \
		.kind = OPTK_GROUP, .help = (h)                                                    \
	}

/* --format text|json into an int (OPT_FMT_*); --json, where given, is its alias. */
#define OPT_FORMAT_TJ(t)                                                                           \
	OPT_ENUM(0, "format", "FMT", (t), opt_fmt_text_json, "text (default) or json")
#define OPT_JSON_ALIAS(t) OPT_FLAG(0, "json", (t), "the same as --format json")

#endif
