/*
 * search.c - the largest value that runs without running out of memory:
 * double from the lower bound until a value fails (or the upper bound
 * runs), then bisect between the largest that ran and the smallest that
 * failed until they are one resolution step apart. The same sequence as
 * Lightning's batch-size finder ("power" then "binsearch"), but for any
 * command. Pure: the caller runs each value and reports whether it fit.
 */
#include "sweep/search.h"

void sweep_search_init(sweep_search *s, long long lo, long long hi, long long step)
{
	s->lo = lo;
	s->hi = hi;
	s->step = step > 0 ? step : 1;
	s->good = s->bad = -1;
	s->next = lo;
	s->tried = 0;
}

long long sweep_search_next(const sweep_search *s)
{
	return s->next;
}

/* Midpoint of good and bad on the resolution grid above lo, strictly between them. */
static long long midpoint(const sweep_search *s)
{
	long long m = s->good + (s->bad - s->good) / 2;
	m = s->lo + (m - s->lo) / s->step * s->step;
	if (m <= s->good)
		m = s->good + s->step;
	return m < s->bad ? m : -1;
}

void sweep_search_report(sweep_search *s, long long value, bool fits)
{
	s->tried++;
	if (fits && value > s->good)
		s->good = value;
	if (!fits && (s->bad < 0 || value < s->bad))
		s->bad = value;
	if (s->good < 0) {
		s->next = -1; /* even the lower bound does not fit */
		return;
	}
	if (s->bad < 0) {
		/* still doubling */
		if (s->good >= s->hi)
			s->next = -1;
		else
			s->next = s->good * 2 > s->hi ? s->hi : s->good * 2;
		return;
	}
	s->next = s->bad - s->good <= s->step ? -1 : midpoint(s);
}
