/* opt.c - the option-table parser, its one-line errors and the generated --help. */
#include "util/opt.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "util/err.h"
#include "util/i18n.h"
#include "util/textwidth.h"
#include "util/parse.h"
#include "util/strbuf.h"

const char *const opt_fmt_text_json[] = {"text", "json", NULL};
const char *const opt_fmt_text_csv_json[] = {"text", "json", "csv", NULL};

void opt_list_free(opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* ---- edit distance and suggestions ---- */

size_t opt_distance(const char *a, const char *b)
{
	/* Optimal string alignment: Levenshtein plus adjacent transpositions,
	 * the commonest typo ("recrod"). Names are short: three rows suffice. */
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return la > lb ? la : lb;
	size_t rows[3][65];
	size_t *pp = rows[0], *p = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		p[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = p[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (p[j - 1] + cost < d)
				d = p[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
		}
		size_t *t = pp;
		pp = p;
		p = cur;
		cur = t;
	}
	return p[lb];
}

const char *opt_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX, wl = strlen(word);
	/* Up to a third of the word may be wrong, at least one edit, at most three. */
	size_t limit = wl / 3 < 1 ? 1 : wl / 3 > 3 ? 3 : wl / 3;
	for (size_t i = 0; i < n; i++) {
		if (!cands[i])
			continue;
		size_t d = opt_distance(word, cands[i]);
		if (d < best_d) {
			best_d = d;
			best = cands[i];
		}
	}
	return best && best_d <= limit && best_d < wl ? best : NULL;
}

/* ---- messages ---- */

static const char *opt_label(const opt_def *o, char *buf, size_t len)
{
	if (o->name)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", o->shrt);
	return buf;
}

/* Replace the first %s of fmt with value: the table's texts are not printf formats. */
static void subst(char *out, size_t len, const char *fmt, const char *value)
{
	const char *p = strstr(fmt, "%s");
	if (!p)
		snprintf(out, len, "%s", fmt);
	else
		snprintf(out, len, "%.*s%s%s", (int)(p - fmt), fmt, value, p + 2);
}

/* why: the whole message for value, unless the table has its own (a translated
 * text with one %s for the value); hint: already translated, or NULL. */
static int bad_value(const opt_def *o, const char *value, const char *why, const char *hint)
{
	char what[80], msg[512];
	if (o->why)
		subst(msg, sizeof msg, _(o->why), value);
	else
		snprintf(msg, sizeof msg, "%s", why);
	return gw_error(GW_EXIT_USAGE, opt_label(o, what, sizeof what), o->hint ? _(o->hint) : hint,
	                "%s", msg);
}

static void see_help(const opt_cmd *c, char *buf, size_t len)
{
	if (c->name[0])
		snprintf(buf, len, _("see gpuwhy %s --help"), c->name);
	else
		snprintf(buf, len, "%s", _("see gpuwhy --help"));
}

int opt_unexpected(const opt_cmd *c, const char *a)
{
	char hint[160];
	see_help(c, hint, sizeof hint);
	return gw_error(GW_EXIT_USAGE, a, hint, "%s", _("unexpected argument"));
}

/* ---- values ---- */

static bool has_range(const opt_def *o)
{
	return o->min != 0 || o->max != 0;
}

static int set_int(const opt_def *o, const char *v)
{
	bool wide = o->kind == OPTK_INT64;
	long long lo = has_range(o) ? (long long)o->min : wide ? INT64_MIN : INT_MIN;
	long long hi = has_range(o) ? (long long)o->max : wide ? INT64_MAX : INT_MAX;
	long long x;
	if (!gw_parse_int(v, lo, hi, &x)) {
		char why[256];
		snprintf(why, sizeof why, _("'%s' is not an integer from %lld to %lld"), v, lo, hi);
		return bad_value(o, v, why, NULL);
	}
	if (wide)
		*(int64_t *)o->target = x;
	else
		*(int *)o->target = (int)x;
	return 0;
}

static int set_double(const opt_def *o, const char *v)
{
	double x;
	bool ok = gw_parse_double(v, &x) && isfinite(x);
	if (ok && has_range(o) && (x < o->min || x > o->max))
		ok = false;
	if (!ok) {
		char why[256];
		if (has_range(o))
			snprintf(why, sizeof why, _("'%s' is not a number from %g to %g"), v,
			         o->min, o->max);
		else
			snprintf(why, sizeof why, _("'%s' is not a number"), v);
		return bad_value(o, v, why, NULL);
	}
	*(double *)o->target = x;
	return 0;
}

static int set_duration(const opt_def *o, const char *v)
{
	int64_t ns;
	bool ok = gw_parse_duration_ns(v, o->bare ? o->bare : 1000000000LL, &ns);
	char why[256];
	if (ok && has_range(o) && ((double)ns < o->min * 1e9 || (double)ns > o->max * 1e9)) {
		snprintf(why, sizeof why, _("'%s' is not a duration from %gs to %gs"), v, o->min,
		         o->max);
		return bad_value(o, v, why, NULL);
	}
	if (!ok) {
		snprintf(why, sizeof why, _("'%s' is not a duration"), v);
		return bad_value(o, v, why,
		                 o->bare && o->bare != 1000000000LL
		                     ? _("e.g. 500ms, 30s, 10m, 2h")
		                     : _("e.g. 30s, 10m, 2h (a bare number is seconds)"));
	}
	*(int64_t *)o->target = o->unit > 1 ? ns / o->unit : ns;
	return 0;
}

static int set_size(const opt_def *o, const char *v)
{
	long long x;
	uint64_t bytes;
	int64_t unit = o->unit > 1 ? o->unit : 1, bare = o->bare > 1 ? o->bare : 1;
	bool ok = true;
	if (gw_parse_int(v, 0, INT64_MAX / bare, &x))
		bytes = (uint64_t)x * (uint64_t)bare;
	else
		ok = gw_parse_size_bytes(v, &bytes) && bytes <= (uint64_t)INT64_MAX;
	char why[256];
	if (!ok) {
		snprintf(why, sizeof why, _("'%s' is not a size"), v);
		return bad_value(o, v, why, _("e.g. 12G, 800M, 1.5GiB"));
	}
	int64_t val = (int64_t)((bytes + (uint64_t)unit - 1) / (uint64_t)unit);
	if (has_range(o) && ((double)val < o->min || (double)val > o->max)) {
		snprintf(why, sizeof why, _("'%s' is out of range"), v);
		return bad_value(o, v, why, NULL);
	}
	*(int64_t *)o->target = val;
	return 0;
}

static int set_enum(const opt_def *o, const char *v)
{
	char list[256] = "", hint[320];
	int n = 0;
	while (o->choices[n])
		n++;
	for (int i = 0; i < n; i++)
		if (!strcmp(o->choices[i], v)) {
			*(int *)o->target = i;
			return 0;
		}
	for (int i = 0; i < n; i++) {
		size_t l = strlen(list);
		/* TRANSLATORS: separators of a list of choices: "a, b or c". */
		snprintf(list + l, sizeof list - l, "%s%s",
		         i == 0       ? ""
		         : i == n - 1 ? _(" or ")
		                      : _(", "),
		         o->choices[i]);
	}
	snprintf(hint, sizeof hint, _("use %s"), list);
	char why[256];
	if (o->name)
		/* TRANSLATORS: "unknown format 'yaml'": the option's name, then its value. */
		snprintf(why, sizeof why, _("unknown %s '%s'"), o->name, v);
	else
		snprintf(why, sizeof why, _("unknown value '%s'"), v);
	return bad_value(o, v, why, hint);
}

static int set_value(const opt_cmd *c, const opt_def *o, const char *v)
{
	switch (o->kind) {
	case OPTK_FLAG:
		*(bool *)o->target = true;
		return 0;
	case OPTK_COUNT:
		(*(int *)o->target)++;
		return 0;
	case OPTK_INT:
	case OPTK_INT64:
		return set_int(o, v);
	case OPTK_DOUBLE:
		return set_double(o, v);
	case OPTK_DURATION:
		return set_duration(o, v);
	case OPTK_SIZE:
		return set_size(o, v);
	case OPTK_STRING:
		*(const char **)o->target = v;
		return 0;
	case OPTK_ENUM:
		return set_enum(o, v);
	case OPTK_LIST: {
		opt_list *l = o->target;
		const char **nv = realloc(l->v, (size_t)(l->n + 1) * sizeof *nv);
		if (!nv)
			return gw_error(GW_EXIT_ENV, "memory", NULL, "%s", _("out of memory"));
		nv[l->n++] = v;
		l->v = nv;
		return 0;
	}
	case OPTK_CALL:
		return o->call(o, v, c->ctx);
	case OPTK_END:
	case OPTK_GROUP:
		break;
	}
	return 0;
}

static bool takes_value(const opt_def *o)
{
	return o->kind != OPTK_FLAG && o->kind != OPTK_COUNT && !(o->kind == OPTK_CALL && !o->arg);
}

/* ---- lookup ---- */

static bool table_has_help(const opt_def *opts)
{
	for (const opt_def *o = opts; o->kind; o++)
		if ((o->name && !strcmp(o->name, "help")) || o->shrt == 'h')
			return true;
	return false;
}

bool opt_has_help(const opt_cmd *c)
{
	return table_has_help(c->opts);
}

static int unknown_long(const opt_cmd *c, const char *name, size_t len)
{
	char word[96], hint[160];
	snprintf(word, sizeof word, "%.*s", (int)(len < 90 ? len : 90), name);
	const char *cands[128];
	size_t n = 0;
	for (const opt_def *o = c->opts; o->kind && n < 127; o++)
		if (o->name && !o->hidden)
			cands[n++] = o->name;
	if (!table_has_help(c->opts))
		cands[n++] = "help";
	const char *s = opt_suggest(word, cands, n);
	const char *dash = c->long_only ? "-" : "--";
	if (s)
		snprintf(hint, sizeof hint, _("did you mean %s%s?"), dash, s);
	else
		see_help(c, hint, sizeof hint);
	char what[100];
	snprintf(what, sizeof what, "%s%s", dash, word);
	return gw_error(GW_EXIT_USAGE, what, hint, "%s", _("unknown option"));
}

/* Exact long name, else a unique prefix (getopt_long accepted those). */
static int find_long(const opt_cmd *c, const char *name, size_t len, const opt_def **out)
{
	const opt_def *pre = NULL;
	int npre = 0;
	for (const opt_def *o = c->opts; o->kind; o++) {
		if (!o->name || strncmp(o->name, name, len))
			continue;
		if (strlen(o->name) == len) {
			*out = o;
			return 0;
		}
		/* Aliases of one option (same target or function) are one match. */
		if (!pre || pre->target != o->target || pre->kind != o->kind ||
		    pre->call != o->call)
			npre++;
		pre = o;
	}
	if (npre == 1) {
		*out = pre;
		return 0;
	}
	if (npre > 1) {
		char what[100];
		snprintf(what, sizeof what, "--%.*s", (int)(len < 90 ? len : 90), name);
		char hint[160];
		see_help(c, hint, sizeof hint);
		return gw_error(GW_EXIT_USAGE, what, hint, "%s", _("ambiguous option"));
	}
	return unknown_long(c, name, len);
}

static const opt_def *find_short(const opt_cmd *c, int ch)
{
	for (const opt_def *o = c->opts; o->kind; o++)
		if (o->shrt == ch)
			return o;
	return NULL;
}

static int missing_value(const opt_def *o)
{
	char what[80], hint[128];
	opt_label(o, what, sizeof what);
	snprintf(hint, sizeof hint, "%s %s", what, o->arg ? o->arg : "VALUE");
	return gw_error(GW_EXIT_USAGE, what, hint, "%s", _("needs a value"));
}

/* ---- the parser ---- */

typedef struct {
	const opt_cmd *c;
	int argc;
	char **argv;
	int i; /* next argv index */
} opt_state;

static bool is_help(const opt_cmd *c, const char *name, size_t len)
{
	return !table_has_help(c->opts) && ((len == 4 && !strncmp(name, "help", 4)) ||
	                                    (c->long_only && len == 1 && name[0] == 'h'));
}

static int parse_long(opt_state *s, const char *name)
{
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	if (is_help(s->c, name, len))
		return OPT_HELP;
	const opt_def *o = NULL;
	int rc = find_long(s->c, name, len, &o);
	if (rc)
		return rc;
	if (o->optional)
		return set_value(s->c, o, eq ? eq + 1 : NULL);
	if (!takes_value(o)) {
		if (eq) {
			char what[80];
			return gw_error(GW_EXIT_USAGE, opt_label(o, what, sizeof what), NULL, "%s",
			                _("takes no value"));
		}
		return set_value(s->c, o, NULL);
	}
	if (eq)
		return set_value(s->c, o, eq + 1);
	if (s->i >= s->argc)
		return missing_value(o);
	return set_value(s->c, o, s->argv[s->i++]);
}

static int parse_short(opt_state *s, const char *arg)
{
	for (const char *p = arg + 1; *p; p++) {
		const opt_def *o = find_short(s->c, *p);
		if (!o && *p == 'h' && !table_has_help(s->c->opts))
			return OPT_HELP;
		if (!o) {
			char what[8], hint[160];
			snprintf(what, sizeof what, "-%c", *p);
			see_help(s->c, hint, sizeof hint);
			return gw_error(GW_EXIT_USAGE, what, hint, "%s", _("unknown option"));
		}
		if (o->optional)
			return set_value(s->c, o, p[1] ? p + 1 : NULL);
		if (!takes_value(o)) {
			int rc = set_value(s->c, o, NULL);
			if (rc)
				return rc;
			continue;
		}
		if (p[1])
			return set_value(s->c, o, p + 1);
		if (s->i >= s->argc)
			return missing_value(o);
		return set_value(s->c, o, s->argv[s->i++]);
	}
	return 0;
}

int opt_parse(const opt_cmd *c, int argc, char **argv, int *first)
{
	opt_state s = {.c = c, .argc = argc, .argv = argv, .i = 1};
	char **pos = calloc((size_t)argc + 1, sizeof *pos);
	if (!pos)
		return gw_error(GW_EXIT_ENV, "memory", NULL, "%s", _("out of memory"));
	int npos = 0, nopt = 1, rc = 0;
	char **optv = calloc((size_t)argc + 1, sizeof *optv);
	if (!optv) {
		free(pos);
		return gw_error(GW_EXIT_ENV, "memory", NULL, "%s", _("out of memory"));
	}
	bool rest = false;
	while (!rc && s.i < argc) {
		int at = s.i;
		char *a = argv[s.i++];
		if (rest || a[0] != '-' || !a[1]) {
			pos[npos++] = a;
			rest |= c->stop_at_arg;
			continue;
		}
		if (!strcmp(a, "--")) {
			/* Kept with the options, so argv[first..argc) are the arguments. */
			optv[nopt++] = a;
			rest = true;
			continue;
		}
		if (a[1] == '-')
			rc = parse_long(&s, a + 2);
		else
			rc = c->long_only ? parse_long(&s, a + 1) : parse_short(&s, a);
		for (int k = at; k < s.i; k++)
			optv[nopt++] = argv[k];
	}
	if (!rc) {
		/* Options first, then the positionals in their order (as GNU getopt). */
		for (int k = 1; k < nopt; k++)
			argv[k] = optv[k];
		for (int k = 0; k < npos; k++)
			argv[nopt + k] = pos[k];
		*first = nopt;
		if (npos < c->min_args) {
			char hint[160];
			see_help(c, hint, sizeof hint);
			rc = gw_error(GW_EXIT_USAGE, c->name, hint, "%s", _("missing argument"));
		} else if (c->max_args >= 0 && npos > c->max_args)
			rc = opt_unexpected(c, pos[c->max_args]);
	}
	free(pos);
	free(optv);
	if (rc == OPT_HELP)
		opt_help(c, stdout);
	return rc;
}

/* ---- --help ---- */

#define OPT_HELP_COL 24
#define OPT_WIDTH 80

/* ---- display width: a CJK character takes two columns, and Chinese text
 * breaks between characters as well as at spaces ---- */

/* The character at p (at most n bytes) into *wc; returns its length in bytes,
 * 1 for a byte that is not valid in the locale's encoding. */
static size_t char_at(const char *p, size_t n, wchar_t *wc)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	size_t k = mbrtowc(wc, p, n, &st);
	if (k == 0 || k == (size_t)-1 || k == (size_t)-2) {
		*wc = (unsigned char)*p;
		return 1;
	}
	return k;
}

static int char_cols(wchar_t wc)
{
	int w = wcwidth(wc);
	return w < 0 ? 1 : w;
}

/* Closing punctuation never starts a line, opening never ends one. */
static bool is_closing(wchar_t c)
{
	return c && wcschr(L"\uff0c\u3002\u3001\uff1b\uff1a\uff01\uff1f\uff09\u300d\u300f\u300b"
	                   L"\u3011\u201d\u2019)]},.;:!?",
	                   c);
}
static bool is_opening(wchar_t c)
{
	return c && wcschr(L"\uff08\u300c\u300e\u300a\u3010\u201c\u2018([{", c);
}

/* A line may break between a and b without a space: beside a wide character. */
static bool may_break(wchar_t a, wchar_t b)
{
	return (char_cols(a) > 1 || char_cols(b) > 1) && !is_closing(b) && !is_opening(a);
}

/* The bytes of the unbreakable piece at p (up to a space, a newline or a break
 * between characters); *cols gets its display width. */
static size_t piece(const char *p, int *cols)
{
	size_t n = strlen(p), i = 0;
	wchar_t prev = 0, wc;
	*cols = 0;
	while (i < n && p[i] != ' ' && p[i] != '\n') {
		size_t k = char_at(p + i, n - i, &wc);
		if (i > 0 && may_break(prev, wc))
			break;
		*cols += char_cols(wc);
		prev = wc;
		i += k;
	}
	return i;
}

/* Print text wrapped at OPT_WIDTH display columns, continuation lines indented
 * by indent; col is where the cursor already is. A '\n' in text is a hard break. */
static void wrap(FILE *out, const char *text, int col, int indent)
{
	const char *p = text;
	bool space = false; /* a space stood before the next piece */
	while (*p) {
		if (*p == '\n') {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			space = false;
			p++;
			continue;
		}
		if (*p == ' ') {
			space = true;
			p++;
			continue;
		}
		int w;
		size_t len = piece(p, &w);
		int gap = space && col > indent ? 1 : 0;
		if (col > indent && col + gap + w > OPT_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (gap) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, len, out);
		col += w;
		p += len;
		space = false;
	}
	fputc('\n', out);
}

/* Where a line's continuation starts: after its indentation, or, in a two-column
 * line ("  name    text"), where the text after the first run of two spaces begins. */
static int hang_of(const char *line, size_t len)
{
	size_t lead = strspn(line, " "), word = 0; /* characters of the current word */
	/* The gap follows a word of two characters or more: a one-character
	 * prefix (a bullet, a mark) is not a column. */
	for (size_t i = lead; i < len;) {
		wchar_t wc;
		size_t k = char_at(line + i, len - i, &wc);
		if (wc != ' ') {
			word++;
		} else if (i + 1 < len && line[i + 1] == ' ' && word >= 2) {
			size_t at = i + strspn(line + i, " ");
			int hang = gw_text_width_n(line, at);
			return hang < OPT_WIDTH / 2 ? hang : (int)lead;
		} else if (i + 1 < len && line[i + 1] == ' ') {
			word = 0;
		}
		i += k;
	}
	return (int)lead;
}

/*
 * Print the full rows of one line of a paragraph: none when it fits (its
 * spacing may align columns), else it is broken at spaces or between CJK
 * characters at OPT_WIDTH, rows after the first indented by hang. Returns
 * where its last row, not printed, begins (0: the line fits, or has no break).
 */
static size_t fill_rows(FILE *out, const char *line, size_t len, int hang)
{
	if (gw_text_width_n(line, len) <= OPT_WIDTH)
		return 0;
	int col = 0;
	size_t lead = strspn(line, " ");
	size_t i = 0, start = 0, brk = 0; /* brk: bytes of the line up to the last break */
	wchar_t prev = 0;
	while (i < len) {
		wchar_t wc;
		size_t k = char_at(line + i, len - i, &wc);
		if (i >= lead && i > start && (wc == ' ' || may_break(prev, wc)))
			brk = i;
		int w = char_cols(wc);
		if (col + w > OPT_WIDTH && brk > start) {
			size_t end = brk;
			while (end > start && line[end - 1] == ' ')
				end--;
			fprintf(out, "%*s%.*s\n", start ? hang : 0, "", (int)(end - start),
			        line + start);
			i = brk;
			while (i < len && line[i] == ' ')
				i++;
			start = brk = i;
			col = hang;
			prev = 0;
			continue;
		}
		col += w;
		prev = wc;
		i += k;
	}
	return start;
}

/* Whether a line (len bytes) goes on with the text of a line broken with
 * continuation rows at hang: as indented, and neither columns of its own nor
 * a list item ("- ", "* ", "1. "). */
static bool continues(const char *line, size_t len, int hang)
{
	size_t lead = strspn(line, " ");
	if (lead >= len || (int)lead != hang || hang_of(line, len) != hang)
		return false;
	size_t word = strcspn(line + lead, " ");
	if (lead + word >= len)
		return true;
	bool alnum = false;
	for (size_t i = lead; i < lead + word; i++)
		alnum |= (unsigned char)line[i] >= 0x80 || isalnum((unsigned char)line[i]);
	bool numbered = isdigit((unsigned char)line[lead]) &&
	                (line[lead + word - 1] == '.' || line[lead + word - 1] == ')');
	return alnum && !numbered;
}

/* The last character of s (n > 0 bytes). */
static wchar_t last_char(const char *s, size_t n)
{
	wchar_t wc = 0;
	for (size_t i = 0; i < n;)
		i += char_at(s + i, n - i, &wc);
	return wc;
}

/*
 * A paragraph of help (about, more): each line as written when it fits. A
 * line too long for the width (a translation, an edit) is broken; the rest of
 * it then runs on into the next line when that goes on with the same text, so
 * no word is left alone on a row ("..., the" / "host" / "and ...").
 */
static void fill(FILE *out, const char *text)
{
	gw_strbuf cur = {0}, next = {0};
	const char *p = text;
	size_t l = strcspn(p, "\n");
	gw_sb_put(&cur, p, l);
	p += l;
	int hang = hang_of(gw_sb_str(&cur), cur.len);
	for (;;) {
		const char *line = gw_sb_str(&cur);
		size_t rest = fill_rows(out, line, cur.len, hang);
		const char *nx = *p ? p + 1 : NULL;
		size_t nl = nx ? strcspn(nx, "\n") : 0;
		if (rest && nx && continues(nx, nl, hang)) {
			size_t nlead = strspn(nx, " ");
			wchar_t a = last_char(line + rest, cur.len - rest), b;
			char_at(nx + nlead, nl - nlead, &b);
			gw_sb_clear(&next);
			gw_sb_printf(&next, "%*s", hang, "");
			gw_sb_put(&next, line + rest, cur.len - rest);
			/* Chinese runs on without a space, as it breaks without one */
			if (char_cols(a) < 2 && char_cols(b) < 2)
				gw_sb_putc(&next, ' ');
			gw_sb_put(&next, nx + nlead, nl - nlead);
			gw_strbuf t = cur;
			cur = next;
			next = t;
			p = nx + nl;
			continue;
		}
		fprintf(out, "%*s%.*s\n", rest ? hang : 0, "", (int)(cur.len - rest), line + rest);
		if (!nx)
			break;
		gw_sb_clear(&cur);
		gw_sb_put(&cur, nx, nl);
		p = nx + nl;
		hang = hang_of(gw_sb_str(&cur), cur.len);
	}
	gw_sb_free(&cur);
	gw_sb_free(&next);
}

static void help_line(FILE *out, const opt_def *o, bool any_short)
{
	char left[96], opt_arg[64];
	const char *arg = o->arg ? o->arg : "", *sp = o->arg ? " " : "";
	if (o->optional && o->arg) {
		snprintf(opt_arg, sizeof opt_arg, "[=%s]", o->arg);
		arg = opt_arg, sp = "";
	}
	int n;
	if (o->shrt && o->name)
		n = snprintf(left, sizeof left, "  -%c, --%s%s%s", o->shrt, o->name, sp, arg);
	else if (o->shrt)
		n = snprintf(left, sizeof left, "  -%c%s%s", o->shrt, sp, arg);
	else
		n = snprintf(left, sizeof left, "%s--%s%s%s", any_short ? "      " : "  ", o->name,
		             sp, arg);
	fputs(left, out);
	if (n >= OPT_HELP_COL - 1)
		fprintf(out, "\n%*s", OPT_HELP_COL, "");
	else
		fprintf(out, "%*s", OPT_HELP_COL - n, "");
	wrap(out, o->help ? _(o->help) : "", OPT_HELP_COL, OPT_HELP_COL);
}

void opt_help(const opt_cmd *c, FILE *out)
{
	if (opt_dump_on()) {
		opt_dump(c, out);
		return;
	}
	/* The usage lines are syntax (names and placeholders): only the label is
	 * translated, and later lines are indented by its width. A line that
	 * begins with a space goes on with the form above it: no "gpuwhy". */
	const char *u = c->usage, *label = _("usage:");
	int lw = gw_text_width_n(label, strlen(label));
	for (int line = 0; *u; line++) {
		size_t l = strcspn(u, "\n");
		bool more = line && *u == ' ';
		fprintf(out, "%*s %s%.*s\n", line ? lw : 0, line ? "" : label,
		        more ? "       " : "gpuwhy ", (int)l, u);
		u += l + (u[l] == '\n');
	}
	if (c->about) {
		fputc('\n', out);
		fill(out, _(c->about));
	}
	/* Long-only options leave room for "-x, " when any option has a short name. */
	bool any_short = false;
	for (const opt_def *o = c->opts; o->kind; o++)
		any_short |= o->shrt != 0 && !o->hidden;
	if (c->opts->kind == OPTK_GROUP)
		fputc('\n', out);
	else
		fprintf(out, "\n%s\n", _("Options:"));
	for (const opt_def *o = c->opts; o->kind; o++)
		if (o->kind == OPTK_GROUP)
			fill(out, _(o->help));
		else if (!o->hidden)
			help_line(out, o, any_short);
	if (!table_has_help(c->opts))
		help_line(out,
		          &(opt_def){.name = "help",
		                     .shrt = any_short ? 'h' : 0,
		                     .kind = OPTK_FLAG,
		                     .help = N_("this help")},
		          any_short);
	if (c->more) {
		fputc('\n', out);
		fill(out, _(c->more));
	}
	if (c->more_fn)
		c->more_fn(out);
	/* "Exit codes: 0 ok, ...", one paragraph after its label. */
	char codes[1024];
	opt_exit_text(c, codes, sizeof codes);
	const char *codes_label = _("Exit codes:");
	int cw = gw_text_width_n(codes_label, strlen(codes_label)) + 1;
	fprintf(out, "\n%s ", codes_label);
	wrap(out, codes, cw, 0);
}

void opt_exit_text(const opt_cmd *c, char *codes, size_t len)
{
	if (c->exits)
		/* TRANSLATORS: the command's own list of exit codes, as a sentence. */
		snprintf(codes, len, _("%s."), _(c->exits));
	else if (c->exit1)
		snprintf(codes, len, _("0 ok, 1 %s, 2 usage error, 3 environment or I/O error."),
		         _(c->exit1));
	else
		snprintf(codes, len, "%s", _("0 ok, 2 usage error, 3 environment or I/O error."));
}
