/* screen.c - ncursesw for `top` (see screen.h). */
#define _XOPEN_SOURCE_EXTENDED 1
#include "top/screen.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/curses_dl.h"

static SCREEN *scr;
static attr_t style_attr[TOP_S__COUNT];
static short style_pair[TOP_S__COUNT];
static cchar_t *row_buf;
static int row_cap;
/* What the last frames handed to ncurses, cell by cell (drawn_valid: all of it). */
static top_cell *drawn;
static int drawn_cols, drawn_rows;
static bool drawn_valid;

/*
 * Frames go to the terminal directly, as cursor moves and SGR strings from
 * its terminfo entry: ncurses' doupdate spends most of a refresh comparing
 * and re-encoding cells the diff here has already chosen. ncurses still
 * sets the terminal up, clears it, reads keys and restores it. Without
 * cursor addressing the cells go through ncurses as before.
 */
static bool direct;
static const char *cup;         /* cursor_address */
static bool cup_ansi;           /* it is ANSI's, written without tiparm */
static char *sgr[TOP_S__COUNT]; /* the whole appearance of each style, from plain */
static bool skip_last_cell;     /* writing the bottom-right cell would scroll */
static short style_fg[TOP_S__COUNT], style_bg[TOP_S__COUNT];
static char *out_buf;
static size_t out_len, out_cap;
static volatile sig_atomic_t resumed; /* SIGCONT: the terminal holds nothing of ours */

static void mono_styles(void)
{
	style_attr[TOP_S_NORMAL] = A_NORMAL;
	style_attr[TOP_S_DIM] = A_DIM;
	style_attr[TOP_S_HEAD] = A_REVERSE;
	style_attr[TOP_S_SEL] = A_REVERSE | A_BOLD;
	style_attr[TOP_S_OK] = A_NORMAL;
	style_attr[TOP_S_MID] = A_BOLD;
	style_attr[TOP_S_HIGH] = A_BOLD;
	style_attr[TOP_S_WARN] = A_BOLD;
	style_attr[TOP_S_ERR] = A_BOLD | A_UNDERLINE;
	style_attr[TOP_S_ACCENT] = A_BOLD;
}

static void color_styles(void)
{
	start_color();
	use_default_colors();
	static const struct {
		top_style st;
		short fg, bg;
		attr_t attr;
	} map[] = {
	    {TOP_S_HEAD, COLOR_BLACK, COLOR_CYAN, A_NORMAL}, {TOP_S_OK, COLOR_GREEN, -1, A_NORMAL},
	    {TOP_S_MID, COLOR_YELLOW, -1, A_NORMAL},         {TOP_S_HIGH, COLOR_RED, -1, A_BOLD},
	    {TOP_S_WARN, COLOR_YELLOW, -1, A_BOLD},          {TOP_S_ERR, COLOR_RED, -1, A_BOLD},
	    {TOP_S_ACCENT, COLOR_CYAN, -1, A_BOLD},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		short pair = (short)(i + 1);
		init_pair(pair, map[i].fg, map[i].bg);
		style_pair[map[i].st] = pair;
		style_attr[map[i].st] = map[i].attr;
		style_fg[map[i].st] = map[i].fg;
		style_bg[map[i].st] = map[i].bg;
	}
}

static void out_add(const char *p, size_t n)
{
	if (out_len + n > out_cap) {
		size_t cap = out_cap ? out_cap : 16384;
		while (cap < out_len + n)
			cap *= 2;
		char *b = realloc(out_buf, cap);
		if (!b)
			return; /* the frame is cut short; the next full redraw repairs it */
		out_buf = b;
		out_cap = cap;
	}
	memcpy(out_buf + out_len, p, n);
	out_len += n;
}

static void out_str(const char *p)
{
	if (p)
		out_add(p, strlen(p));
}

static int out_putc(int ch)
{
	char b = (char)ch;
	out_add(&b, 1);
	return ch;
}

/* A terminfo string, its padding ("$<5>") interpreted as tputs does. */
static void out_ti(const char *p)
{
	if (p)
		tputs(p, 1, out_putc);
}

static void out_flush(void)
{
	size_t off = 0;
	while (off < out_len) {
		ssize_t w = write(STDOUT_FILENO, out_buf + off, out_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the terminal went away: the main loop notices on stdin */
		off += (size_t)w;
	}
	out_len = 0;
}

/* terminfo's string capability, or NULL when the terminal lacks it. */
static const char *cap(const char *name)
{
	char *v = tigetstr(name);
	return v && v != (char *)-1 ? v : NULL;
}

static void add_color(const char *name, short color)
{
	const char *c = cap(name);
	if (c && color >= 0)
		out_ti(tiparm(c, color));
}

/* The SGR string of each style: everything off, then its attributes and colours. */
static bool direct_styles(bool color)
{
	static const struct {
		attr_t a;
		const char *cap;
	} attrs[] = {{A_BOLD, "bold"}, {A_DIM, "dim"}, {A_REVERSE, "rev"}, {A_UNDERLINE, "smul"}};
	for (int st = 0; st < TOP_S__COUNT; st++) {
		out_len = 0;
		out_ti(cap("sgr0"));
		if (color)
			out_ti(cap("op"));
		for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
			if (style_attr[st] & attrs[i].a)
				out_ti(cap(attrs[i].cap));
		if (color && style_pair[st]) {
			add_color("setaf", style_fg[st]);
			add_color("setab", style_bg[st]);
		}
		free(sgr[st]);
		sgr[st] = malloc(out_len + 1);
		if (!sgr[st])
			return false;
		memcpy(sgr[st], out_buf ? out_buf : "", out_len);
		sgr[st][out_len] = '\0';
	}
	out_len = 0;
	return true;
}

static void on_cont(int sig)
{
	(void)sig;
	resumed = 1;
}

static void direct_open(bool color)
{
	cup = cap("cup");
	cup_ansi = cup && !strcmp(cup, "\033[%i%p1%d;%p2%dH");
	direct = cup && direct_styles(color);
	skip_last_cell = tigetflag("am") > 0 && tigetflag("xenl") <= 0;
	/* ncurses repaints only its own (blank) picture after a suspend. */
	struct sigaction sa = {.sa_handler = on_cont};
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCONT, &sa, NULL);
}

const char *top_screen_missing(void)
{
	return gw_curses_error();
}

int top_screen_open(bool color, bool mouse)
{
	if (gw_curses_error())
		return -1;
	/* newterm, unlike initscr, reports a terminal it cannot drive instead of exiting. */
	scr = newterm(NULL, stdout, stdin);
	if (!scr)
		return -1;
	set_term(scr);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	mono_styles();
	if (color && has_colors())
		color_styles();
	if (mouse)
		mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
	direct_open(color && has_colors());
	return 0;
}

void top_screen_close(void)
{
	if (!scr)
		return;
	if (direct) {
		/* ncurses has not followed the cursor: give it the place to leave from. */
		mvcur(-1, -1, LINES - 1, 0);
		signal(SIGCONT, SIG_DFL);
	}
	endwin();
	delscreen(scr);
	scr = NULL;
	free(row_buf);
	row_buf = NULL;
	row_cap = 0;
	free(drawn);
	drawn = NULL;
	drawn_cols = drawn_rows = 0;
	drawn_valid = false;
	for (int st = 0; st < TOP_S__COUNT; st++) {
		free(sgr[st]);
		sgr[st] = NULL;
	}
	free(out_buf);
	out_buf = NULL;
	out_len = out_cap = 0;
	direct = false;
}

void top_screen_size(int *cols, int *rows)
{
	*cols = COLS;
	*rows = LINES;
}

void top_screen_resize(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
		resize_term(ws.ws_row, ws.ws_col);
}

/* The terminal can hold what a cell holds: the same character in the same style. */
static bool same_cell(const top_cell *a, const top_cell *b)
{
	return a->ch == b->ch && a->style == b->style;
}

/* Forget what was drawn: the next frame is copied whole. */
static int reset_drawn(const top_canvas *c)
{
	size_t n = (size_t)c->cols * (size_t)c->rows;
	if (c->cols != drawn_cols || c->rows != drawn_rows) {
		free(drawn);
		drawn = malloc(n * sizeof *drawn);
		drawn_cols = drawn ? c->cols : 0;
		drawn_rows = drawn ? c->rows : 0;
		if (!drawn)
			return -1;
	}
	drawn_valid = false;
	return 0;
}

/*
 * The columns x0..x1 of row y that differ from what was drawn there, widened
 * so that both halves of a two-column character go together. Returns false
 * when the row is unchanged.
 */
static bool changed_span(const top_cell *now, const top_cell *was, int cols, int *x0, int *x1)
{
	/* Most rows are unchanged: one memcmp (cells hold no stray padding) says so. */
	if (!memcmp(now, was, (size_t)cols * sizeof *now))
		return false;
	int a = 0, b = cols - 1;
	while (a < cols && same_cell(&now[a], &was[a]))
		a++;
	if (a == cols)
		return false;
	while (b > a && same_cell(&now[b], &was[b]))
		b--;
	while (a > 0 && now[a].ch == TOP_WCONT)
		a--;
	if (b + 1 < cols && now[b + 1].ch == TOP_WCONT)
		b++;
	*x0 = a;
	*x1 = b;
	return true;
}

/* Cells x0..x1 of a canvas row into ncurses at column x0. */
static void put_span(int y, const top_cell *row, int x0, int x1)
{
	int n = 0;
	for (int x = x0; x <= x1; x++) {
		const top_cell *cell = &row[x];
		if (cell->ch == TOP_WCONT)
			continue; /* ncurses places the right half of a wide character itself */
		wchar_t wc[2] = {cell->ch, L'\0'};
		unsigned st = cell->style;
		setcchar(&row_buf[n++], wc, style_attr[st], style_pair[st], NULL);
	}
	/* add_wchnstr does not move the cursor, so the bottom-right cell cannot scroll. */
	mvadd_wchnstr(y, x0, row_buf, n);
}

/* UTF-8 of one cell (the canvas holds plain ASCII when the locale is not UTF-8). */
static void out_char(wchar_t wc)
{
	char b[4];
	uint32_t c = (uint32_t)wc;
	if (c < 0x80) {
		b[0] = (char)c;
		out_add(b, 1);
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		out_add(b, 2);
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		out_add(b, 3);
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		out_add(b, 4);
	}
}

/* The decimal digits of v at b (room for 10); returns how many. */
static size_t put_uint(char *b, unsigned v)
{
	char d[10];
	size_t n = 0, k = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof d);
	while (n)
		b[k++] = d[--n];
	return k;
}

/*
 * Move the cursor. Most terminals' cursor_address is ANSI's "\E[%i%p1%d;%p2%dH":
 * that one is written here, any other goes through terminfo's interpreter.
 */
static void out_cup(int y, int x)
{
	if (cup_ansi) {
		char b[32];
		size_t n = 0;
		b[n++] = '\033';
		b[n++] = '[';
		n += put_uint(b + n, (unsigned)y + 1);
		b[n++] = ';';
		n += put_uint(b + n, (unsigned)x + 1);
		b[n++] = 'H';
		out_add(b, n);
	} else {
		out_ti(tiparm(cup, y, x));
	}
}

/* Cells x0..x1 of a canvas row to the terminal; *cur is the style the terminal is in. */
static void out_span(int y, const top_cell *row, int x0, int x1, int *cur)
{
	out_cup(y, x0);
	int x = x0;
	while (x <= x1) {
		if (row[x].style != *cur && row[x].ch != TOP_WCONT) {
			*cur = row[x].style;
			out_str(sgr[*cur]);
		}
		/* A run of plain ASCII in one style goes out in one piece. */
		char run[256];
		size_t n = 0;
		while (x <= x1 && n < sizeof run && row[x].style == *cur && row[x].ch >= 0x20 &&
		       row[x].ch < 0x7f)
			run[n++] = (char)row[x++].ch;
		if (n) {
			out_add(run, n);
			continue;
		}
		if (row[x].ch != TOP_WCONT) /* the terminal moves past both columns of a wide one */
			out_char(row[x].ch);
		x++;
	}
}

/*
 * Only the cells that changed since the last frame are handed to ncurses:
 * most of a frame (labels, frames, the slower meters) is the same from one
 * refresh to the next, and ncurses' own comparison then looks at the few
 * lines touched instead of every cell of the screen.
 */
void top_screen_draw(const top_canvas *c, bool force)
{
	if (c->cols > row_cap) {
		free(row_buf);
		row_buf = malloc((size_t)c->cols * sizeof *row_buf);
		row_cap = row_buf ? c->cols : 0;
		if (!row_buf)
			return;
	}
	if (resumed) {
		resumed = 0;
		force = true;
	}
	if ((force || c->cols != drawn_cols || c->rows != drawn_rows) && reset_drawn(c) != 0)
		return;
	if (direct && !drawn_valid) {
		/* ncurses clears the terminal (its picture is blank), then the whole frame follows.
		 */
		clearok(curscr, TRUE);
		wnoutrefresh(stdscr);
		doupdate();
	}
	int rows = c->rows < LINES ? c->rows : LINES;
	int cols = c->cols < COLS ? c->cols : COLS;
	bool any = false;
	int cur = -1;
	for (int y = 0; y < rows; y++) {
		const top_cell *now = &c->cell[y * c->cols];
		top_cell *was = &drawn[y * c->cols];
		int x0 = 0, x1 = cols - 1;
		if (drawn_valid && !changed_span(now, was, cols, &x0, &x1))
			continue;
		int last = x1;
		if (direct && skip_last_cell && y == LINES - 1 && x1 == COLS - 1)
			last = now[x1].ch == TOP_WCONT ? x1 - 2 : x1 - 1;
		if (last >= x0 && direct)
			out_span(y, now, x0, last, &cur);
		else if (last >= x0)
			put_span(y, now, x0, x1);
		memcpy(&was[x0], &now[x0], (size_t)(x1 - x0 + 1) * sizeof *was);
		any = true;
	}
	/* Rows or columns past the terminal were not drawn: compare them again next time. */
	drawn_valid = rows == c->rows && cols == c->cols;
	if (direct) {
		if (cur >= 0)
			out_str(sgr[TOP_S_NORMAL]);
		out_flush();
		return;
	}
	if (force)
		clearok(curscr, TRUE);
	if (any || force) {
		wnoutrefresh(stdscr);
		doupdate();
	}
}

int top_screen_key(bool *is_key, unsigned *key)
{
	wint_t wc;
	int r = get_wch(&wc);
	if (r == ERR)
		return -1;
	*is_key = r == KEY_CODE_YES;
	*key = (unsigned)wc;
	return 0;
}

bool top_screen_click(int *x, int *y)
{
	MEVENT ev;
	if (getmouse(&ev) != OK || !(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return false;
	*x = ev.x;
	*y = ev.y;
	return true;
}
