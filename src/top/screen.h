/*
 * screen.h - the terminal side of `top`: ncursesw set-up and tear-down,
 * the canvas copied to the screen, keys and mouse clicks read without
 * blocking. Only the UI thread calls these.
 *
 * Colour is used when the terminal has it and neither NO_COLOR nor
 * --no-color is set; without it styles become bold, dim and reverse.
 */
#ifndef GPUWHY_TOP_SCREEN_H
#define GPUWHY_TOP_SCREEN_H

#include <stdbool.h>

#include "top/canvas.h"

/* NULL when ncursesw can be loaded (it is on first use, see util/curses_dl.h), else why not. */
const char *top_screen_missing(void);
/* Start full-screen mode on the terminal. Returns 0, or -1 (nothing changed) when it cannot. */
int top_screen_open(bool color, bool mouse);
/* Restore the terminal; safe to call twice. */
void top_screen_close(void);
/* Current size (after a resize: call top_screen_resize first). */
void top_screen_size(int *cols, int *rows);
/* The terminal was resized (SIGWINCH): read the new size into ncurses. */
void top_screen_resize(void);
/* Draw the canvas; only what changed goes to the terminal. force repaints everything (Ctrl-L). */
void top_screen_draw(const top_canvas *c, bool force);
/* One key without waiting: 0 with is_key and key set, or -1 when there is none. */
int top_screen_key(bool *is_key, unsigned *key);
/* After a mouse key: the position of a button-1 press or click; false for other events. */
bool top_screen_click(int *x, int *y);

#endif
