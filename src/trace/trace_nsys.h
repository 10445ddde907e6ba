/* trace_nsys.h - Nsight Systems SQLite exports (`nsys export --type sqlite`): CUPTI kernel,
 * memcpy, memset, synchronization and runtime tables mapped onto the Kineto event model. */
#ifndef GPUWHY_TRACE_NSYS_H
#define GPUWHY_TRACE_NSYS_H

#include <stddef.h>

#include "trace/trace_model.h"
#include "util/fail.h"

/*
 * Reads path into r (prepared by trace_rank_init). Times stay integer ns. Kernel names are the
 * demangled names; memcpy names are built like Kineto's ("Memcpy HtoD (Pinned -> Device)");
 * runtime names lose their _vNNNN suffix; of several runtime rows with one correlation id the
 * outermost (earliest) is kept. Missing tables mean no such events. Returns 0, or -1 with err
 * filled (GW_EXIT_ENV, what: path, why: the reason in English, not SQLite, not an nsys export).
 */
int trace_nsys_read(const char *path, trace_rank *r, gw_fail *err);

#endif
