/*
 * curses_dl.c - load ncursesw on first use (see curses_dl.h for why).
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include "util/curses_dl.h"

#include <pthread.h>
#include <stdio.h>

#include "util/dl.h"

static char load_error[sizeof((gw_fail *)0)->why_text] = "libncursesw is not loaded";
static const char *error_now = load_error;
/* No stand-ins: `top` asks gw_curses_error() before it calls anything. */
static gw_curses_api api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Every entry of the table, with the symbol that fills it. dlsym searches the
 * library's dependencies too, so terminfo's functions and LINES come from
 * libtinfo, which libncursesw needs. */
static const gw_dl_sym syms[] = {
    GW_DL_SYM(gw_curses_api, newterm, "newterm"),
    GW_DL_SYM(gw_curses_api, set_term, "set_term"),
    GW_DL_SYM(gw_curses_api, delscreen, "delscreen"),
    GW_DL_SYM(gw_curses_api, endwin, "endwin"),
    GW_DL_SYM(gw_curses_api, cbreak, "cbreak"),
    GW_DL_SYM(gw_curses_api, noecho, "noecho"),
    GW_DL_SYM(gw_curses_api, nonl, "nonl"),
    GW_DL_SYM(gw_curses_api, keypad, "keypad"),
    GW_DL_SYM(gw_curses_api, nodelay, "nodelay"),
    GW_DL_SYM(gw_curses_api, set_escdelay, "set_escdelay"),
    GW_DL_SYM(gw_curses_api, curs_set, "curs_set"),
    GW_DL_SYM(gw_curses_api, has_colors, "has_colors"),
    GW_DL_SYM(gw_curses_api, start_color, "start_color"),
    GW_DL_SYM(gw_curses_api, use_default_colors, "use_default_colors"),
    GW_DL_SYM(gw_curses_api, init_pair, "init_pair"),
    GW_DL_SYM(gw_curses_api, mousemask, "mousemask"),
    GW_DL_SYM(gw_curses_api, getmouse, "getmouse"),
    GW_DL_SYM(gw_curses_api, tigetstr, "tigetstr"),
    GW_DL_SYM(gw_curses_api, tigetflag, "tigetflag"),
    GW_DL_SYM(gw_curses_api, tiparm, "tiparm"),
    GW_DL_SYM(gw_curses_api, tputs, "tputs"),
    GW_DL_SYM(gw_curses_api, mvcur, "mvcur"),
    GW_DL_SYM(gw_curses_api, resize_term, "resize_term"),
    GW_DL_SYM(gw_curses_api, setcchar, "setcchar"),
    GW_DL_SYM(gw_curses_api, wmove, "wmove"),
    GW_DL_SYM(gw_curses_api, wadd_wchnstr, "wadd_wchnstr"),
    GW_DL_SYM(gw_curses_api, clearok, "clearok"),
    GW_DL_SYM(gw_curses_api, wnoutrefresh, "wnoutrefresh"),
    GW_DL_SYM(gw_curses_api, doupdate, "doupdate"),
    GW_DL_SYM(gw_curses_api, wget_wch, "wget_wch"),
    GW_DL_SYM(gw_curses_api, stdscr_p, "stdscr"),
    GW_DL_SYM(gw_curses_api, curscr_p, "curscr"),
    GW_DL_SYM(gw_curses_api, lines_p, "LINES"),
    GW_DL_SYM(gw_curses_api, cols_p, "COLS"),
};

static void load(void)
{
	static const char *const names[] = {"libncursesw.so.6", "libncursesw.so"};
	const gw_dl_lib lib = {
	    .names = names,
	    .n_names = sizeof names / sizeof *names,
	    .install = "apt-get install libncursesw6",
	    .minimum = "ncurses 6.1",
	    .syms = syms,
	    .n_syms = sizeof syms / sizeof *syms,
	};
	gw_fail f = {0};
	if (gw_dl_load(&lib, &api, &f) == 0)
		error_now = NULL;
	else
		snprintf(load_error, sizeof load_error, "%s", f.why_text);
}

const gw_curses_api *gw_curses(void)
{
	pthread_once(&once, load);
	return &api;
}

const char *gw_curses_error(void)
{
	pthread_once(&once, load);
	return error_now;
}
