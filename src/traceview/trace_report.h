/* trace_report.h - `gpuwhy trace` output: a readable text report, JSON, or CSV tables in
 * HTA's column layout. */
#ifndef GPUWHY_TRACE_REPORT_H
#define GPUWHY_TRACE_REPORT_H

#include <stdio.h>

#include "traceview/trace_job.h"

void trace_report_text(FILE *out, const trace_job *job, const trace_job_opts *o);
/* Returns 0, or -1 when memory runs out. */
int trace_report_json(FILE *out, const trace_job *job, const trace_job_opts *o);
/* Tables, each introduced by a "# NAME" line and followed by an empty line. */
void trace_report_csv(FILE *out, const trace_job *job);
/* The warnings the text and JSON reports hold, one line each (`gpuwhy: FILE: warning: ...`),
 * for output that has no room for them: the CSV keeps only HTA's tables. */
void trace_report_warnings(FILE *err, const trace_job *job);

#endif
