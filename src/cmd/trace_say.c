/*
 * trace_say.c - a trace reader's error in the user's language, where it is shown.
 *
 * The readers (src/trace) write their errors in English: `trace --format json`
 * keeps them so in each file's "error". `trace` and `report --trace` print them
 * to a person through these forms (util/say.h); the parts that come from other
 * libraries (the JSON parser's own words, the system's strerror, SQLite's
 * message, zlib's words for a corrupt stream) are shown as they come, their control
 * characters escaped (util/termsafe.h) so that the error stays one line.
 */
#include "cmd/trace_say.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/say.h"
#include "util/termsafe.h"

/* The readers' forms (trace_gzin.c, trace_job.c, trace_kineto*.c, trace_nsys.c,
 * trace_summary.c), with %s for every value; the longer before the shorter
 * they begin with. */
static const gw_say_form forms[] = {
    {N_("truncated JSON: the document ends after %s bytes before it is complete"), false, true},
    {N_("invalid JSON near byte %s: %s"), false, false},
    {N_("not a Chrome trace: the top level is not a JSON object"), false, false},
    {N_("not a Chrome trace: there is no traceEvents array"), false, false},
    {N_("traceEvents is empty"), false, false},
    {N_("traceEvents is an object, not an array"), false, false},
    {N_("two traceEvents arrays in one file"), false, false},
    {N_("truncated gzip file (it ends in the middle of the compressed stream)"), false, false},
    {N_("corrupt gzip data: %s"), false, false},
    {N_("read error: %s"), false, false},
    {N_("cannot open as SQLite: %s"), false, false},
    {N_("cannot make a temporary file in %s to read the stream: %s"), false, false},
    {N_("cannot write the stream to a temporary file in %s: %s"), false, false},
    {N_("cannot open: %s"), false, false},
    {N_("cannot load %s (%s)"), false, false},
    {N_("not a readable SQLite database: truncated or corrupt"), false, false},
    {N_("not a readable SQLite database: %s"), false, false},
    {N_("an SQLite database, but not an Nsight Systems export (no StringIds and "
        "CUPTI_ACTIVITY_KIND_* tables)"),
     false, false},
    {N_("no GPU kernels in the trace"), false, false},
    {N_("out of memory while analysing"), false, false},
    {N_("out of memory or threads"), false, false},
    {N_("out of memory"), false, false},
};

const char *cmd_trace_say(const char *text, char *out, size_t len)
{
	return gw_say(forms, sizeof forms / sizeof *forms, text, out, len);
}

int cmd_trace_error(int code, const char *path, const char *hint, const char *err)
{
	char said[1024], why[GW_TERM_SAFE_LEN(1024)], file[GW_TERM_SAFE_LEN(512)];
	gw_term_safe(cmd_trace_say(err, said, sizeof said), why, sizeof why);
	gw_term_safe(path, file, sizeof file);
	return gw_error(code, file, hint, "%s", why);
}
