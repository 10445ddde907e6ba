/* screen.c - ncursesw for `top` (see screen.h). */
#define _XOPEN_SOURCE_EXTENDED 1
#include "top/screen.h"

#include <curses.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

static SCREEN *scr;
static attr_t style_attr[TOP_S__COUNT];
static short style_pair[TOP_S__COUNT];
static cchar_t *row_buf;
static int row_cap;

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
	}
}

int top_screen_open(bool color, bool mouse)
{
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
	return 0;
}

void top_screen_close(void)
{
	if (!scr)
		return;
	endwin();
	delscreen(scr);
	scr = NULL;
	free(row_buf);
	row_buf = NULL;
	row_cap = 0;
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

void top_screen_draw(const top_canvas *c, bool force)
{
	if (c->cols > row_cap) {
		free(row_buf);
		row_buf = malloc((size_t)c->cols * sizeof *row_buf);
		row_cap = row_buf ? c->cols : 0;
		if (!row_buf)
			return;
	}
	int rows = c->rows < LINES ? c->rows : LINES;
	for (int y = 0; y < rows; y++) {
		int n = 0;
		for (int x = 0; x < c->cols && x < COLS; x++) {
			const top_cell *cell = &c->cell[y * c->cols + x];
			if (cell->ch == TOP_WCONT)
				continue; /* ncurses places the right half of a wide character
				             itself */
			wchar_t wc[2] = {cell->ch, L'\0'};
			unsigned st = cell->style;
			setcchar(&row_buf[n++], wc, style_attr[st], style_pair[st], NULL);
		}
		/* add_wchnstr does not move the cursor, so the bottom-right cell cannot scroll. */
		mvadd_wchnstr(y, 0, row_buf, n);
	}
	if (force)
		clearok(curscr, TRUE);
	refresh();
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
