#include "record/steps.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS_MAX_RE 4

struct steps_matcher {
	regex_t re[STEPS_MAX_RE];
	int group[STEPS_MAX_RE]; /* capture group holding the number, 0 = count */
	int n;
	long count;
	long last;
	bool have_last;
};

static const struct {
	const char *re;
	int group;
} default_res[] = {
    {"(^|[^[:alnum:]_])(global_step|step|iteration|iter|it)[[:space:]]*[:=#]?[[:space:]]*([0-9]+)",
     3},
    {"\\[[[:space:]]*([0-9]+)[[:space:]]*/[[:space:]]*[0-9]+[[:space:]]*\\]", 1},
    {"epoch[^0-9]*[0-9]+[^0-9].*[^0-9.]([0-9]+)[[:space:]]*/[[:space:]]*[0-9]+", 1},
    {"\\|[[:space:]]*([0-9]+)/[0-9]+[[:space:]]*\\[", 1},
};

steps_matcher *steps_matcher_new(const char *user_re, char *err, int errlen)
{
	steps_matcher *m = calloc(1, sizeof *m);
	if (!m) {
		snprintf(err, (size_t)errlen, "out of memory");
		return NULL;
	}
	if (user_re) {
		int rc = regcomp(&m->re[0], user_re, REG_EXTENDED | REG_ICASE);
		if (rc) {
			char buf[128];
			regerror(rc, &m->re[0], buf, sizeof buf);
			snprintf(err, (size_t)errlen, "%s", buf);
			free(m);
			return NULL;
		}
		m->group[0] = m->re[0].re_nsub > 0 ? 1 : 0;
		m->n = 1;
		return m;
	}
	for (size_t i = 0; i < sizeof default_res / sizeof *default_res; i++) {
		if (regcomp(&m->re[m->n], default_res[i].re, REG_EXTENDED | REG_ICASE) == 0) {
			m->group[m->n] = default_res[i].group;
			m->n++;
		}
	}
	return m;
}

void steps_matcher_free(steps_matcher *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++)
		regfree(&m->re[i]);
	free(m);
}

bool steps_match(steps_matcher *m, const char *line, long *step)
{
	regmatch_t g[8];
	for (int i = 0; i < m->n; i++) {
		if (regexec(&m->re[i], line, 8, g, 0) != 0)
			continue;
		int gi = m->group[i];
		if (gi <= 0 || g[gi].rm_so < 0) {
			*step = ++m->count;
			return true;
		}
		long v = strtol(line + g[gi].rm_so, NULL, 10);
		if (m->have_last && v == m->last)
			return false;
		m->last = v;
		m->have_last = true;
		m->count++;
		*step = v;
		return true;
	}
	return false;
}

bool steps_is_oom(const char *line)
{
	static const char *const needles[] = {
	    "CUDA out of memory",
	    "OutOfMemoryError",
	    "CUDA_ERROR_OUT_OF_MEMORY",
	    "cudaErrorMemoryAllocation",
	    "RESOURCE_EXHAUSTED: Out of memory",
	    "failed to allocate memory",
	    "out of memory on device",
	    "CUBLAS_STATUS_ALLOC_FAILED",
	    "OOM when allocating tensor",
	};
	for (size_t i = 0; i < sizeof needles / sizeof *needles; i++)
		if (strcasestr(line, needles[i]))
			return true;
	return false;
}
