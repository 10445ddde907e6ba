/* summary.h - the short summary `gpuwhy run` prints at the end of a recording. */
#ifndef GPUWHY_RECORD_SUMMARY_H
#define GPUWHY_RECORD_SUMMARY_H

#include <stdio.h>

#include "model/timeline.h"

/* Print the summary of a timeline (path names the recording). */
void summary_print(const timeline *tl, const char *path, FILE *out);
/* Read the recording and print its summary; returns 0 or a GW_EXIT_* code. */
int summary_print_file(const char *path, FILE *out);

#endif
