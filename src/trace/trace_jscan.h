/* trace_jscan.h - a fast strict JSON scanner for whole in-memory buffers, with yajl's callbacks. */
#ifndef GPUWHY_TRACE_JSCAN_H
#define GPUWHY_TRACE_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_parse.h>

/*
 * Scans buf[0, len) as one JSON object or array and makes the calls yajl_parse followed by
 * yajl_complete_parse would make with callbacks cb (yajl_number must be set: numbers arrive as
 * their text). It knows only the common forms: a \u escape, \v or \f as whitespace, a nesting
 * deeper than 256 or any syntax error make it give up. True: the buffer is valid JSON and every
 * call was made and returned nonzero. False: nothing can be concluded, and the caller (which
 * must undo the calls' effects) parses the buffer again with yajl, which finds the same values
 * or reports the error.
 */
bool trace_jscan(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx);

/* A part of a document. open: the containers open where it starts, outermost first ("{[": in
 * an array in an object; "": at the start); end_depth: how many are still open where it ends,
 * right after a comma when end_after_comma. */
typedef struct {
	const char *open;
	int end_depth;
	bool end_after_comma;
} trace_jscan_mode;

/* trace_jscan for a part: the caller made the calls for the containers open at its start. */
bool trace_jscan_part(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx,
                      const trace_jscan_mode *m);

/*
 * Values a reader never looks at. A map key's call that returns TRACE_JSCAN_PASS (nonzero, so
 * yajl goes on as usual) asks for the key's value to be checked but make no calls (the reader
 * must treat it as read), unless it holds a key equal to watch (watch_len bytes, no NUL
 * needed), which then arrives with all the rest. Without a trace_jscan_skip every value is
 * reported, whatever the key's call returned.
 */
#define TRACE_JSCAN_PASS 2
typedef struct {
	const char *watch;
	size_t watch_len;
	/*
	 * Optional: an object that is an element of an array, with p at its '{', offered to the
	 * reader whole before any call is made for it. The reader returns the end of the object
	 * (past its '}') when it took it, having checked it by the scanner's grammar, or NULL
	 * when it did not, having changed nothing: the scanner then reads it as usual.
	 */
	const unsigned char *(*element)(void *ctx, const unsigned char *p, const unsigned char *end,
	                                int depth);
} trace_jscan_skip;

/*
 * The end of the value at p (whitespace before it allowed), read by the scanner's grammar with
 * depth containers open around it, or NULL where the scanner would not pass over it (an error,
 * anything it leaves to yajl, a key equal to skip's watch).
 */
const unsigned char *trace_jscan_pass(const unsigned char *p, const unsigned char *end, int depth,
                                      const trace_jscan_skip *skip);

/* trace_jscan_part (m NULL: a whole document) passing over the values skip picks. */
bool trace_jscan_skipping(const unsigned char *buf, size_t len, const yajl_callbacks *cb, void *ctx,
                          const trace_jscan_mode *m, const trace_jscan_skip *skip);

#endif
