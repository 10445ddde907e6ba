/*
 * curses_dl.h - ncursesw (and terminfo behind it), loaded by `gpuwhy top`.
 *
 * Linking it would map libncursesw and libtinfo into every gpuwhy process
 * and relocate both at every start (about half a million instructions,
 * a quarter of a `queue add`), while only `top`'s full-screen mode draws
 * with them. Include this header instead of <curses.h> and <term.h>: the
 * functions and variables the screen uses go through a table filled by
 * dlopen on first use. Call gw_curses_error() before anything else: until
 * it returned NULL the table is empty.
 */
#ifndef GPUWHY_UTIL_CURSES_DL_H
#define GPUWHY_UTIL_CURSES_DL_H

#include <curses.h>
#include <term.h>

typedef struct {
	__typeof__(newterm) *newterm;
	__typeof__(set_term) *set_term;
	__typeof__(delscreen) *delscreen;
	__typeof__(endwin) *endwin;
	__typeof__(cbreak) *cbreak;
	__typeof__(noecho) *noecho;
	__typeof__(nonl) *nonl;
	__typeof__(keypad) *keypad;
	__typeof__(nodelay) *nodelay;
	__typeof__(set_escdelay) *set_escdelay;
	__typeof__(curs_set) *curs_set;
	__typeof__(has_colors) *has_colors;
	__typeof__(start_color) *start_color;
	__typeof__(use_default_colors) *use_default_colors;
	__typeof__(init_pair) *init_pair;
	__typeof__(mousemask) *mousemask;
	__typeof__(getmouse) *getmouse;
	__typeof__(tigetstr) *tigetstr;
	__typeof__(tigetflag) *tigetflag;
	__typeof__(tiparm) *tiparm;
	__typeof__(tputs) *tputs;
	__typeof__(mvcur) *mvcur;
	__typeof__(resize_term) *resize_term;
	__typeof__(setcchar) *setcchar;
	__typeof__(wmove) *wmove;
	__typeof__(wadd_wchnstr) *wadd_wchnstr;
	__typeof__(clearok) *clearok;
	__typeof__(wnoutrefresh) *wnoutrefresh;
	__typeof__(doupdate) *doupdate;
	__typeof__(wget_wch) *wget_wch;
	/* The library's variables, by address (term.h takes the plain names). */
	WINDOW **stdscr_p;
	WINDOW **curscr_p;
	int *lines_p;
	int *cols_p;
} gw_curses_api;

/* The table (loaded once, thread-safe). */
const gw_curses_api *gw_curses(void);

/* NULL once the library is loaded, else why it is not: "cannot load
 * libncursesw.so.6 (apt-get install libncursesw6)" or similar. Loads it
 * when not tried yet. */
const char *gw_curses_error(void);

#define newterm(...) ((*gw_curses()->newterm)(__VA_ARGS__))
#define set_term(...) ((*gw_curses()->set_term)(__VA_ARGS__))
#define delscreen(...) ((*gw_curses()->delscreen)(__VA_ARGS__))
#define endwin(...) ((*gw_curses()->endwin)(__VA_ARGS__))
#define cbreak(...) ((*gw_curses()->cbreak)(__VA_ARGS__))
#define noecho(...) ((*gw_curses()->noecho)(__VA_ARGS__))
#define nonl(...) ((*gw_curses()->nonl)(__VA_ARGS__))
#define keypad(...) ((*gw_curses()->keypad)(__VA_ARGS__))
#define nodelay(...) ((*gw_curses()->nodelay)(__VA_ARGS__))
#define set_escdelay(...) ((*gw_curses()->set_escdelay)(__VA_ARGS__))
#define curs_set(...) ((*gw_curses()->curs_set)(__VA_ARGS__))
#define has_colors(...) ((*gw_curses()->has_colors)(__VA_ARGS__))
#define start_color(...) ((*gw_curses()->start_color)(__VA_ARGS__))
#define use_default_colors(...) ((*gw_curses()->use_default_colors)(__VA_ARGS__))
#define init_pair(...) ((*gw_curses()->init_pair)(__VA_ARGS__))
#define mousemask(...) ((*gw_curses()->mousemask)(__VA_ARGS__))
#define getmouse(...) ((*gw_curses()->getmouse)(__VA_ARGS__))
#define tigetstr(...) ((*gw_curses()->tigetstr)(__VA_ARGS__))
#define tigetflag(...) ((*gw_curses()->tigetflag)(__VA_ARGS__))
#define tiparm(...) ((*gw_curses()->tiparm)(__VA_ARGS__))
#define tputs(...) ((*gw_curses()->tputs)(__VA_ARGS__))
#define mvcur(...) ((*gw_curses()->mvcur)(__VA_ARGS__))
#define resize_term(...) ((*gw_curses()->resize_term)(__VA_ARGS__))
#define setcchar(...) ((*gw_curses()->setcchar)(__VA_ARGS__))
#define wmove(...) ((*gw_curses()->wmove)(__VA_ARGS__))
#define wadd_wchnstr(...) ((*gw_curses()->wadd_wchnstr)(__VA_ARGS__))
#define clearok(...) ((*gw_curses()->clearok)(__VA_ARGS__))
#define wnoutrefresh(...) ((*gw_curses()->wnoutrefresh)(__VA_ARGS__))
#define doupdate(...) ((*gw_curses()->doupdate)(__VA_ARGS__))
#define wget_wch(...) ((*gw_curses()->wget_wch)(__VA_ARGS__))
#undef stdscr
#undef curscr
#undef LINES
#undef COLS
#define stdscr (*gw_curses()->stdscr_p)
#define curscr (*gw_curses()->curscr_p)
#define LINES (*gw_curses()->lines_p)
#define COLS (*gw_curses()->cols_p)

#endif
