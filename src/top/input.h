/*
 * input.h - keys of `gpuwhy top`: one table that the key line, the help
 * box and --help are all printed from, and the mapping from a key press
 * (in normal mode, in a prompt, in the help box) to an action.
 *
 * Pure: a key in, an action out; the command applies actions to the model.
 * Keys are wide characters or ncurses KEY_* codes.
 */
#ifndef GPUWHY_TOP_INPUT_H
#define GPUWHY_TOP_INPUT_H

#include <stdbool.h>
#include <stdio.h>

#define TOP_PROMPT_MAX 64

typedef enum {
	TOP_A_NONE,
	TOP_A_QUIT,
	TOP_A_SORT_NEXT,
	TOP_A_SORT_REVERSE,
	TOP_A_FILTER, /* text: the filter as typed so far (applied while typing) */
	TOP_A_GPUS,   /* text: the GPU list, on Enter */
	TOP_A_PAUSE,
	TOP_A_TREE,
	TOP_A_SLOWER, /* longer interval */
	TOP_A_FASTER, /* shorter interval */
	TOP_A_HELP,   /* open or close the help box */
	TOP_A_MOVE,   /* delta rows; TOP_MOVE_PAGE means a page, TOP_MOVE_END the end */
	TOP_A_MOUSE,  /* the command reads the event */
	TOP_A_RESIZE,
	TOP_A_REDRAW, /* the prompt changed, or Ctrl-L */
} top_action_kind;

#define TOP_MOVE_PAGE 100000
#define TOP_MOVE_END 1000000

typedef struct {
	top_action_kind kind;
	int delta;
	char text[TOP_PROMPT_MAX];
} top_action;

typedef enum { TOP_IN_NORMAL, TOP_IN_FILTER, TOP_IN_GPUS, TOP_IN_HELP } top_input_mode;

typedef struct {
	top_input_mode mode;
	char buf[TOP_PROMPT_MAX]; /* prompt text, UTF-8 */
	int len;
	char filter[TOP_PROMPT_MAX]; /* the filter in force: '/' starts editing from it */
} top_input;

/* One key press: is_key says key is a KEY_* code (get_wch's KEY_CODE_YES), else a character. */
top_action top_input_key(top_input *in, bool is_key, unsigned key);

/* The prompt being edited ("filter: ", "GPUs: "), NULL in normal mode. */
const char *top_input_prompt(const top_input *in);

typedef struct {
	const char *keys;  /* "q", "+ -", ... */
	const char *brief; /* the word on the key line, NULL when it is not there */
	const char *what;  /* one line for help */
} top_key_help;

extern const top_key_help top_keys[];
extern const int top_nkeys;

/* The key line: "q quit  s sort  ..." cut to width at a whole entry. */
void top_keys_line(char *out, size_t len, int width);
/* The key table for --help, indented by two spaces. */
void top_keys_print(FILE *f);

#endif
