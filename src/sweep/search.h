/*
 * search.h - the search for the largest value that runs: doubling, then
 * bisecting (search.c). Pure.
 */
#ifndef GPUWHY_SWEEP_SEARCH_H
#define GPUWHY_SWEEP_SEARCH_H

#include <stdbool.h>

typedef struct {
	long long lo, hi, step;
	long long good; /* largest value that ran, -1 none yet */
	long long bad;  /* smallest value that failed, -1 none yet */
	long long next; /* value to try next, -1 when done */
	int tried;
} sweep_search;

void sweep_search_init(sweep_search *s, long long lo, long long hi, long long step);
/* The value to try now, or -1 when the search has ended. */
long long sweep_search_next(const sweep_search *s);
void sweep_search_report(sweep_search *s, long long value, bool fits);

#endif
