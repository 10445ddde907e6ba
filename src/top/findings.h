/*
 * findings.h - the live findings of `top`'s status line: short lines about
 * what is wrong in a window of the last minute, most severe first.
 *
 * The one seam between the live view and the diagnosis rules: the model
 * hands a timeline window in, lines come out (warnings and errors only;
 * an info finding or a healthy window gives none).
 */
#ifndef GPUWHY_TOP_FINDINGS_H
#define GPUWHY_TOP_FINDINGS_H

#include "model/timeline.h"

#define TOP_FINDING_LEN 320 /* a diagnosis title (240) and its id */

typedef enum { TOP_SEV_INFO = 0, TOP_SEV_WARN = 1, TOP_SEV_ERROR = 2 } top_severity;

typedef struct {
	top_severity severity;
	/* "GPU 0 idle 45 % of the last 30 s while core 3 is at 100 %: data-starved?" */
	char text[TOP_FINDING_LEN];
} top_finding;

/* Findings over tl, most severe first; returns how many (0 when nothing is wrong). */
int top_findings(const timeline *tl, top_finding *out, int max);

#endif
