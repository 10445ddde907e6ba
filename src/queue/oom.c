/*
 * oom.c - recognise out-of-memory failures in a task's log tail. Pure.
 *
 * Exit codes do not say "out of memory": PyTorch, TensorFlow and JAX exit 1
 * like any Python error, and Slurm records a plain FAILED. The messages are
 * distinctive, though, and usually sit in the last lines of the log.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "queue/oom.h"
#include "util/parse.h"

typedef struct {
	const char *needle; /* matched case-insensitively */
	queue_oom_kind kind;
	const char *source;
	bool at_start; /* only at the start of a line (after spaces) */
} oom_pattern;

/* Most specific first: the first pattern that matches a line names its source. */
static const oom_pattern patterns[] = {
    {"torch.OutOfMemoryError", QOOM_GPU, "pytorch", false},
    {"torch.cuda.OutOfMemoryError", QOOM_GPU, "pytorch", false},
    {"CUDA out of memory", QOOM_GPU, "pytorch", false},
    {"HIP out of memory", QOOM_GPU, "pytorch", false},
    {"OOM when allocating", QOOM_GPU, "tensorflow", false},
    {"ran out of memory trying to allocate", QOOM_GPU, "tensorflow", false},
    {"RESOURCE_EXHAUSTED: Out of memory", QOOM_GPU, "jax", false},
    {"RESOURCE_EXHAUSTED: Failed to allocate", QOOM_GPU, "jax", false},
    {"XlaRuntimeError: RESOURCE_EXHAUSTED", QOOM_GPU, "jax", false},
    {"Cuda failure 'out of memory'", QOOM_GPU, "nccl", false},
    {"CUDA_ERROR_OUT_OF_MEMORY", QOOM_GPU, "cuda", false},
    {"cudaErrorMemoryAllocation", QOOM_GPU, "cuda", false},
    {"CUDA error: out of memory", QOOM_GPU, "cuda", false},
    {"CUBLAS_STATUS_ALLOC_FAILED", QOOM_GPU, "cuda", false},
    {"CUDNN_STATUS_ALLOC_FAILED", QOOM_GPU, "cuda", false},
    {"oom_kill event", QOOM_HOST, "host", false},
    {"oom-kill event", QOOM_HOST, "host", false},
    {"std::bad_alloc", QOOM_HOST, "host", false},
    {"java.lang.OutOfMemoryError", QOOM_HOST, "host", false},
    {"MemoryError", QOOM_HOST, "host", true},
};

static const char *find_ci(const char *line, size_t len, const char *needle, bool at_start)
{
	size_t nl = strlen(needle);
	size_t start = 0;
	if (at_start) {
		while (start < len && (line[start] == ' ' || line[start] == '\t'))
			start++;
		return len - start >= nl && !strncasecmp(line + start, needle, nl) ? line + start
		                                                                   : NULL;
	}
	for (size_t i = 0; i + nl <= len; i++)
		if (!strncasecmp(line + i, needle, nl))
			return line + i;
	return NULL;
}

/* "cuda ... out of memory" on one line: plain CUDA runtime messages vary in wording. */
static bool cuda_and_oom(const char *line, size_t len)
{
	return find_ci(line, len, "cuda", false) && find_ci(line, len, "out of memory", false);
}

/* A size after an "allocate" phrase: "2.00 GiB", "20.00 MiB", "17179869184 bytes", "2.00G". */
static int64_t parse_size_after(const char *p, const char *end)
{
	while (p < end && !isdigit((unsigned char)*p))
		p++;
	if (p >= end)
		return -1;
	double v = 0, frac = 0.1;
	bool dot = false;
	for (; p < end && (isdigit((unsigned char)*p) || (*p == '.' && !dot)); p++) {
		if (*p == '.') {
			dot = true;
		} else if (!dot) {
			v = v * 10 + (*p - '0');
		} else {
			v += (*p - '0') * frac;
			frac /= 10;
		}
	}
	while (p < end && *p == ' ')
		p++;
	double mult = p < end ? gw_size_unit(*p) : 0;
	if (!mult)
		mult = 1; /* bytes when no unit */
	double mib = v * mult / (1024.0 * 1024);
	if (!isfinite(mib) || mib > 1e12)
		return -1;
	return (int64_t)ceil(mib);
}

static int64_t tried_in(const char *line, size_t len)
{
	static const char *const phrases[] = {"Tried to allocate", "trying to allocate",
	                                      "allocate request for", "failed to allocate"};
	for (size_t k = 0; k < sizeof phrases / sizeof *phrases; k++) {
		const char *at = find_ci(line, len, phrases[k], false);
		if (at) {
			const char *from = at + strlen(phrases[k]);
			int64_t v = parse_size_after(from, line + len);
			if (v >= 0)
				return v;
		}
	}
	return -1;
}

static void copy_line(char *dst, size_t dlen, const char *line, size_t len)
{
	while (len > 0 && isspace((unsigned char)*line)) {
		line++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)line[len - 1]))
		len--;
	if (len >= dlen)
		len = dlen - 1;
	memcpy(dst, line, len);
	dst[len] = '\0';
}

void queue_oom_scan(const char *text, size_t len, queue_oom_info *out)
{
	memset(out, 0, sizeof *out);
	out->tried_mib = -1;
	queue_oom_info host = {.kind = QOOM_NONE, .tried_mib = -1};
	int64_t tried_anywhere = -1;
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* Progress bars rewrite one line with \r: look at the last segment only. */
		const char *seg = p;
		for (size_t i = 0; i + 1 < ll; i++)
			if (p[i] == '\r')
				seg = p + i + 1;
		size_t sl = ll - (size_t)(seg - p);
		int64_t t = tried_in(seg, sl);
		if (t >= 0)
			tried_anywhere = t;
		const oom_pattern *hit = NULL;
		for (size_t k = 0; k < sizeof patterns / sizeof *patterns && !hit; k++)
			if (find_ci(seg, sl, patterns[k].needle, patterns[k].at_start))
				hit = &patterns[k];
		queue_oom_info *dst = NULL;
		if (hit)
			dst = hit->kind == QOOM_GPU ? out : &host;
		else if (cuda_and_oom(seg, sl))
			dst = out;
		if (dst) {
			dst->kind = hit ? hit->kind : QOOM_GPU;
			dst->source = hit ? hit->source : "cuda";
			copy_line(dst->line, sizeof dst->line, seg, sl);
			dst->tried_mib = t;
		}
		p = nl ? nl + 1 : end;
	}
	if (out->kind == QOOM_GPU) {
		if (out->tried_mib < 0)
			out->tried_mib = tried_anywhere;
		return;
	}
	*out = host;
}
