/* input.c - keys to actions, prompts, and the key table (see input.h). */
#define _XOPEN_SOURCE_EXTENDED 1
#include "top/input.h"

#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <wctype.h>

#include "util/i18n.h"
#include "util/textwidth.h"

/* Key names stay as they are on the keyboard; the words are translated where printed. */
const top_key_help top_keys[] = {
    {"q", N_("quit"), N_("quit (Ctrl-C too); the terminal is restored")},
    {"h", N_("help"), N_("this help (? and F1 too): keys and every finding; any key closes it")},
    {"s", N_("sort"), N_("sort processes by the next column: gpu pid user mem sm cpu rss cmd")},
    {"r", N_("reverse"), N_("reverse the sort order")},
    {"/", N_("filter"), N_("filter processes by PID, user or command (Enter keeps, Esc clears)")},
    {"g", N_("GPUs"),
     N_("show only some GPUs: indices or UUIDs, comma-separated; 'all' for every one")},
    {"p", N_("pause"), N_("pause the screen (space too); sampling and recording go on")},
    {"t", N_("tree"), N_("show the process tree around the selected process")},
    {"+ -", N_("interval"), N_("sample less / more often: 100 ms to 10 s")},
    {"Up Down", NULL, N_("select a process (j k, PgUp PgDn, Home End too)")},
    {"Ctrl-L", NULL, N_("redraw the screen")},
    {"mouse", NULL, N_("with --mouse: click a process to select it, a column title to sort")},
};
const int top_nkeys = (int)(sizeof top_keys / sizeof *top_keys);

const char *top_input_prompt(const top_input *in)
{
	switch (in->mode) {
	case TOP_IN_FILTER:
		return _("filter: ");
	case TOP_IN_GPUS:
		return _("GPUs (e.g. 0,2 or all): ");
	default:
		return NULL;
	}
}

static top_action act(top_action_kind kind)
{
	return (top_action){.kind = kind};
}

static top_action with_text(top_action_kind kind, const char *text)
{
	top_action a = {.kind = kind};
	snprintf(a.text, sizeof a.text, "%s", text);
	return a;
}

static void open_prompt(top_input *in, top_input_mode mode, const char *initial)
{
	in->mode = mode;
	snprintf(in->buf, sizeof in->buf, "%s", initial ? initial : "");
	in->len = (int)strlen(in->buf);
}

/* Remove the last character (a whole UTF-8 sequence). */
static void backspace(top_input *in)
{
	while (in->len > 0) {
		unsigned char c = (unsigned char)in->buf[--in->len];
		if ((c & 0xc0) != 0x80)
			break;
	}
	in->buf[in->len] = '\0';
}

static void append(top_input *in, wchar_t wc)
{
	char mb[MB_LEN_MAX];
	mbstate_t st = {0};
	size_t n = wcrtomb(mb, wc, &st);
	if (n == (size_t)-1 || in->len + (int)n >= TOP_PROMPT_MAX)
		return;
	memcpy(in->buf + in->len, mb, n);
	in->len += (int)n;
	in->buf[in->len] = '\0';
}

static top_action prompt_key(top_input *in, bool is_key, unsigned key)
{
	bool filter = in->mode == TOP_IN_FILTER;
	if (!is_key && (key == 27 || key == 7)) { /* Esc, Ctrl-G */
		in->mode = TOP_IN_NORMAL;
		if (!filter)
			return act(TOP_A_REDRAW);
		in->filter[0] = '\0';
		return with_text(TOP_A_FILTER, "");
	}
	if ((!is_key && (key == '\n' || key == '\r')) || (is_key && key == KEY_ENTER)) {
		in->mode = TOP_IN_NORMAL;
		if (filter)
			snprintf(in->filter, sizeof in->filter, "%s", in->buf);
		return with_text(filter ? TOP_A_FILTER : TOP_A_GPUS, in->buf);
	}
	if ((is_key && key == KEY_BACKSPACE) || (!is_key && (key == 127 || key == 8)))
		backspace(in);
	else if (!is_key && key == 21) /* Ctrl-U */
		open_prompt(in, in->mode, "");
	else if (is_key && key == KEY_RESIZE)
		return act(TOP_A_RESIZE);
	else if (!is_key && iswprint((wint_t)key))
		append(in, (wchar_t)key);
	else
		return act(TOP_A_NONE);
	if (!filter)
		return act(TOP_A_REDRAW);
	snprintf(in->filter, sizeof in->filter, "%s", in->buf);
	return with_text(TOP_A_FILTER, in->buf);
}

static top_action special_key(unsigned key)
{
	top_action a = act(TOP_A_MOVE);
	switch (key) {
	case KEY_UP:
		a.delta = -1;
		return a;
	case KEY_DOWN:
		a.delta = 1;
		return a;
	case KEY_PPAGE:
		a.delta = -TOP_MOVE_PAGE;
		return a;
	case KEY_NPAGE:
		a.delta = TOP_MOVE_PAGE;
		return a;
	case KEY_HOME:
		a.delta = -TOP_MOVE_END;
		return a;
	case KEY_END:
		a.delta = TOP_MOVE_END;
		return a;
	case KEY_F(1):
		return act(TOP_A_HELP);
	case KEY_MOUSE:
		return act(TOP_A_MOUSE);
	case KEY_RESIZE:
		return act(TOP_A_RESIZE);
	default:
		return act(TOP_A_NONE);
	}
}

top_action top_input_key(top_input *in, bool is_key, unsigned key)
{
	if (in->mode == TOP_IN_FILTER || in->mode == TOP_IN_GPUS)
		return prompt_key(in, is_key, key);
	if (in->mode == TOP_IN_HELP) {
		if (is_key && (key == KEY_RESIZE || key == KEY_MOUSE))
			return act(key == KEY_RESIZE ? TOP_A_RESIZE : TOP_A_NONE);
		in->mode = TOP_IN_NORMAL;
		return act(TOP_A_HELP);
	}
	if (is_key)
		return special_key(key);
	top_action a = act(TOP_A_MOVE);
	switch (key) {
	case 'q':
	case 'Q':
		return act(TOP_A_QUIT);
	case 's':
		return act(TOP_A_SORT_NEXT);
	case 'r':
		return act(TOP_A_SORT_REVERSE);
	case '/':
		open_prompt(in, TOP_IN_FILTER, in->filter);
		return with_text(TOP_A_FILTER, in->buf);
	case 'g':
		open_prompt(in, TOP_IN_GPUS, "");
		return act(TOP_A_REDRAW);
	case 'p':
	case ' ':
		return act(TOP_A_PAUSE);
	case 't':
		return act(TOP_A_TREE);
	case '+':
	case '=':
		return act(TOP_A_SLOWER);
	case '-':
	case '_':
		return act(TOP_A_FASTER);
	case 'h':
	case '?':
		in->mode = TOP_IN_HELP;
		return act(TOP_A_HELP);
	case 'j':
		a.delta = 1;
		return a;
	case 'k':
		a.delta = -1;
		return a;
	case 12:
		return act(TOP_A_REDRAW); /* Ctrl-L */
	default:
		return act(TOP_A_NONE);
	}
}

void top_keys_line(char *out, size_t len, int width)
{
	size_t k = 0;
	int cols = 0;
	out[0] = '\0';
	for (int i = 0; i < top_nkeys; i++) {
		if (!top_keys[i].brief)
			continue;
		char entry[96];
		/* "+ -" reads better on the line without its space. */
		const char *keys = strcmp(top_keys[i].keys, "+ -") ? top_keys[i].keys : "+-";
		int n = snprintf(entry, sizeof entry, "%s%s %s", k ? "  " : "", keys,
		                 _(top_keys[i].brief));
		if (n < 0 || (size_t)n >= sizeof entry)
			break;
		int w = gw_text_width(entry);
		if (cols + w > width || k + (size_t)n + 1 > len)
			break;
		memcpy(out + k, entry, (size_t)n + 1);
		k += (size_t)n;
		cols += w;
	}
}

void top_keys_print(FILE *f)
{
	for (int i = 0; i < top_nkeys; i++)
		fprintf(f, "  %-9s %s\n", top_keys[i].keys, _(top_keys[i].what));
}
