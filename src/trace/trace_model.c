/* trace_model.c - name interning, HTA's name classification, per-rank containers. */
#include "trace/trace_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/i18n.h"

static bool starts_with(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/*
 * HTA 0.6.1's get_kernel_type: Python re.match (anchored at the start), first rule wins.
 * COMMUNICATION: nccl*, hip*, hccl*, or containing ncclKernel. MEMORY: Memcpy*, hipMemcpy*,
 * Memset*, hipMemset*, dma*. COMPUTATION: anything that is not one of the non-compute patterns
 * below. OTHER: the rest (cuda_sync rows, kernels whose name mentions Sync or dma...).
 */
trace_ktype trace_kernel_type(const char *n)
{
	if (starts_with(n, "nccl") || starts_with(n, "hip") || starts_with(n, "hccl") ||
	    strstr(n, "ncclKernel"))
		return TRACE_KT_COMMUNICATION;
	if (starts_with(n, "Memcpy") || starts_with(n, "hipMemcpy") || starts_with(n, "Memset") ||
	    starts_with(n, "hipMemset") || starts_with(n, "dma"))
		return TRACE_KT_MEMORY;
	static const char *const not_compute_prefix[] = {
	    "nccl",        "Stream Wait Event",
	    "runFunction", "hip",
	    "job_exe",     "packet",
	    "pe_exe",      "cpum_exe_subgraph",
	    "hccl",        "collective_subgraph_execution",
	};
	for (size_t i = 0; i < sizeof not_compute_prefix / sizeof *not_compute_prefix; i++)
		if (starts_with(n, not_compute_prefix[i]))
			return TRACE_KT_OTHER;
	if (strstr(n, "Memcpy") || strstr(n, "Memset") || strstr(n, "dma") || strstr(n, "Sync"))
		return TRACE_KT_OTHER;
	if (starts_with(n, "cuda") && strstr(n + 4, "LaunchKernel"))
		return TRACE_KT_OTHER;
	return TRACE_KT_COMPUTATION;
}

const char *trace_ktype_name(trace_ktype k)
{
	static const char *const names[] = {"COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"};
	return k < TRACE_KT_COUNT ? names[k] : "OTHER";
}

void trace_mem_group(const char *name, char *out, size_t outsz)
{
	if (starts_with(name, "Memset"))
		snprintf(out, outsz, "Memset");
	else if (!starts_with(name, "Memcpy"))
		snprintf(out, outsz, "Memcpy Unknown");
	else
		snprintf(out, outsz, "%.11s", name); /* "Memcpy DtoH" */
}

static uint8_t name_flags(const char *n)
{
	static const char *const launch[] = {"cudaLaunchKernel", "cudaLaunchKernelExC",
	                                     "runFunction - job_prep_and_submit_for_execution"};
	static const char *const mem_launch[] = {"cudaMemcpyAsync", "cudaMemsetAsync"};
	/* HTA's runtime launch events (queue length): CUDA, MTIA, ROCm and XPU enqueue calls. */
	static const char *const queue[] = {"cudaMemsetAsync",
	                                    "cudaMemcpyAsync",
	                                    "cudaLaunchKernel",
	                                    "cudaLaunchKernelExC",
	                                    "cuLaunchKernel",
	                                    "cuLaunchKernelEx",
	                                    "runFunction - job_prep_and_submit_for_execution",
	                                    "hipLaunchKernel",
	                                    "hipExtModuleLaunchKernel",
	                                    "hipMemsetAsync",
	                                    "hipMemcpyAsync",
	                                    "hipMemcpyWithStream",
	                                    "urEnqueueUSMFill",
	                                    "urEnqueueUSMFill2D",
	                                    "urEnqueueUSMMemcpy",
	                                    "urEnqueueUSMMemcpy2D",
	                                    "urEnqueueKernelLaunch",
	                                    "urEnqueueKernelLaunchExp",
	                                    "urEnqueueKernelLaunchCustomExp",
	                                    "urEnqueueKernelLaunchWithArgsExp",
	                                    "urEnqueueCooperativeKernelLaunchExp",
	                                    "urEnqueueMemBufferFill",
	                                    "urEnqueueMemBufferRead",
	                                    "urEnqueueMemBufferWrite",
	                                    "urEnqueueMemBufferCopy",
	                                    "urUSMHostAlloc",
	                                    "urUSMSharedAlloc",
	                                    "urUSMDeviceAlloc"};
	uint8_t f = 0;
	for (size_t i = 0; i < sizeof launch / sizeof *launch; i++)
		if (!strcmp(n, launch[i]))
			f |= TRACE_NAME_LAUNCH;
	for (size_t i = 0; i < sizeof mem_launch / sizeof *mem_launch; i++)
		if (!strcmp(n, mem_launch[i]))
			f |= TRACE_NAME_MEM_LAUNCH;
	for (size_t i = 0; i < sizeof queue / sizeof *queue; i++)
		if (!strcmp(n, queue[i]))
			f |= TRACE_NAME_QUEUE_LAUNCH;
	if (!strcmp(n, "Event Sync") || !strcmp(n, "Context Sync"))
		f |= TRACE_NAME_SYNC_GPU;
	if (strstr(n, "ProfilerStep"))
		f |= TRACE_NAME_PROFSTEP;
	return f;
}

void trace_names_init(trace_names *t)
{
	memset(t, 0, sizeof *t);
}

void trace_names_free(trace_names *t)
{
	free(t->arena);
	free(t->names);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

/* Kernel names are long (C++ templates): hashed eight bytes at a step, not one. */
static uint32_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15u ^ len;
	for (; len >= 8; s += 8, len -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdu;
		h ^= h >> 32;
	}
	uint64_t w = 0;
	if (len)
		memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
	h ^= h >> 29;
	return (uint32_t)h;
}

static bool names_rehash(trace_names *t, uint32_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof *slots);
	if (!slots)
		return false;
	for (uint32_t id = 0; id < t->count; id++) {
		uint32_t i = t->names[id].hash & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return true;
}

static uint32_t names_add(trace_names *t, const char *s, size_t len, uint32_t h)
{
	if (t->count == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 256;
		trace_name *n = realloc(t->names, cap * sizeof *n);
		if (!n)
			return UINT32_MAX;
		t->names = n;
		t->cap = cap;
	}
	if (t->arena_len + len + 1 > t->arena_cap) {
		size_t cap = t->arena_cap ? t->arena_cap : 16384;
		while (t->arena_len + len + 1 > cap)
			cap *= 2;
		if (cap > UINT32_MAX)
			return UINT32_MAX;
		char *a = realloc(t->arena, cap);
		if (!a)
			return UINT32_MAX;
		t->arena = a;
		t->arena_cap = cap;
	}
	char *dst = t->arena + t->arena_len;
	memcpy(dst, s, len);
	dst[len] = 0;
	uint32_t id = t->count++;
	/* An embedded NUL (legal in JSON as \u0000) ends the C string: classify what is visible. */
	t->names[id] = (trace_name){.off = (uint32_t)t->arena_len,
	                            .len = (uint32_t)len,
	                            .hash = h,
	                            .ktype = (uint8_t)trace_kernel_type(dst),
	                            .nflags = name_flags(dst)};
	t->arena_len += len + 1;
	return id;
}

/* The recent[] slot of s: its length and first and last eight bytes, mixed, the top six bits
 * of the product. */
_Static_assert(sizeof((trace_names *)0)->recent == 64 * sizeof(uint32_t), "recent: 64 slots");
static unsigned recent_slot(const char *s, size_t len)
{
	uint64_t a = 0, b = 0;
	if (len >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
	} else if (len) {
		memcpy(&a, s, len);
	}
	uint64_t h = (a ^ (b << 29 | b >> 35) ^ len) * 0x9e3779b97f4a7c15u;
	return (unsigned)(h >> 58);
}

uint32_t trace_names_intern(trace_names *t, const char *s, size_t len)
{
	if (len >= UINT32_MAX / 2)
		return UINT32_MAX;
	unsigned r = recent_slot(s, len);
	uint32_t c = t->recent[r];
	if (c) {
		const trace_name *n = &t->names[c - 1];
		if (n->len == len && !memcmp(t->arena + n->off, s, len))
			return c - 1;
	}
	if ((t->count + 1) * 2 > t->nslots && !names_rehash(t, t->nslots ? t->nslots * 2 : 1024))
		return UINT32_MAX;
	uint32_t h = name_hash(s, len);
	uint32_t i = h & (t->nslots - 1);
	for (;;) {
		uint32_t v = t->slots[i];
		if (!v)
			break;
		const trace_name *n = &t->names[v - 1];
		if (n->hash == h && n->len == len && !memcmp(t->arena + n->off, s, len)) {
			t->recent[r] = v;
			return v - 1;
		}
		i = (i + 1) & (t->nslots - 1);
	}
	uint32_t id = names_add(t, s, len, h);
	if (id != UINT32_MAX) {
		t->slots[i] = id + 1;
		t->recent[r] = id + 1;
	}
	return id;
}

static bool imap_alloc(trace_imap *m, size_t cap)
{
	m->keys = malloc(cap * sizeof *m->keys);
	m->vals = malloc(cap * sizeof *m->vals);
	m->used = calloc(cap, sizeof *m->used);
	m->mask = cap - 1;
	m->count = 0;
	return m->keys && m->vals && m->used;
}

bool trace_imap_init(trace_imap *m, size_t expected)
{
	size_t cap = 16;
	while (cap < expected * 2)
		cap *= 2;
	if (!imap_alloc(m, cap)) {
		trace_imap_free(m);
		return false;
	}
	return true;
}

void trace_imap_free(trace_imap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}

static size_t imap_hash(int64_t key, size_t mask)
{
	uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 29)) & mask;
}

static bool imap_grow(trace_imap *m)
{
	trace_imap old = *m;
	if (!imap_alloc(m, (old.mask + 1) * 2)) {
		trace_imap_free(m);
		*m = old;
		return false;
	}
	for (size_t i = 0; i <= old.mask; i++)
		if (old.used[i])
			*trace_imap_slot(m, old.keys[i]) = old.vals[i];
	trace_imap_free(&old);
	return true;
}

uint32_t *trace_imap_slot(trace_imap *m, int64_t key)
{
	if ((m->count + 1) * 2 > m->mask + 1 && !imap_grow(m))
		return NULL;
	size_t i = imap_hash(key, m->mask);
	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & m->mask;
	if (!m->used[i]) {
		m->used[i] = true;
		m->keys[i] = key;
		m->vals[i] = UINT32_MAX;
		m->count++;
	}
	return &m->vals[i];
}

uint32_t trace_imap_get(const trace_imap *m, int64_t key)
{
	if (!m->used)
		return UINT32_MAX;
	size_t i = imap_hash(key, m->mask);
	while (m->used[i]) {
		if (m->keys[i] == key)
			return m->vals[i];
		i = (i + 1) & m->mask;
	}
	return UINT32_MAX;
}

void trace_rank_init(trace_rank *r, const char *path)
{
	memset(r, 0, sizeof *r);
	r->path = strdup(path ? path : "");
	trace_names_init(&r->names);
}

void trace_rank_free(trace_rank *r)
{
	free(r->path);
	trace_rank_drop_events(r);
	trace_names_free(&r->names);
	for (int i = 0; i < r->n_warnings; i++) {
		free(r->warnings[i]);
		free(r->warnings_text[i]);
	}
	for (int i = 0; i < 2; i++)
		free(r->profstep_syms[i]);
	memset(r, 0, sizeof *r);
}

bool trace_rank_push(trace_rank *r, const trace_event *e)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap + r->cap / 2 : 4096;
		trace_event *ev = realloc(r->ev, cap * sizeof *ev);
		if (!ev)
			return false;
		r->ev = ev;
		r->cap = cap;
	}
	r->ev[r->n++] = *e;
	return true;
}

/* Millions of records in a big trace: each byte here is a megabyte or more of peak memory. */
_Static_assert(sizeof(trace_event) == 40, "trace_event grew");

bool trace_rank_push_bw(trace_rank *r, const trace_event *e, double bw_gbps)
{
	if (r->n >= UINT32_MAX)
		return false;
	if (r->n_bw == r->cap_bw) {
		size_t cap = r->cap_bw ? 2 * r->cap_bw : 256;
		uint32_t *ev = realloc(r->bw_ev, cap * sizeof *ev);
		if (!ev)
			return false;
		r->bw_ev = ev;
		double *val = realloc(r->bw_val, cap * sizeof *val);
		if (!val)
			return false;
		r->bw_val = val;
		r->cap_bw = cap;
	}
	trace_event with = *e;
	with.flags |= TRACE_EV_HAS_BW;
	if (!trace_rank_push(r, &with))
		return false;
	r->bw_ev[r->n_bw] = (uint32_t)(r->n - 1);
	r->bw_val[r->n_bw++] = bw_gbps;
	return true;
}

double trace_event_bw(const trace_rank *r, size_t i)
{
	if (!(r->ev[i].flags & TRACE_EV_HAS_BW))
		return -1;
	size_t lo = 0, hi = r->n_bw; /* the first entry at or after i */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->bw_ev[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_bw && r->bw_ev[lo] == i ? r->bw_val[lo] : -1;
}

void trace_rank_drop_events(trace_rank *r)
{
	free(r->ev);
	free(r->bw_ev);
	free(r->bw_val);
	r->ev = NULL;
	r->bw_ev = NULL;
	r->bw_val = NULL;
	r->n_bw = r->cap_bw = r->cap = 0;
}

void trace_rank_note_profstep(trace_rank *r, const char *sym, size_t len)
{
	if (r->n_profstep_syms >= 2)
		return;
	if (r->n_profstep_syms == 1 && strlen(r->profstep_syms[0]) == len &&
	    !memcmp(r->profstep_syms[0], sym, len))
		return;
	char *s = strndup(sym, len);
	if (s)
		r->profstep_syms[r->n_profstep_syms++] = s;
}

void trace_warn_add(char **en, char **text, int *n, int max, const char *fmt, va_list ap)
{
	if (*n >= max)
		return;
	va_list aq;
	va_copy(aq, ap);
	char *s = NULL, *t = NULL;
	if (vasprintf(&s, fmt, ap) >= 0) {
		if (vasprintf(&t, _(fmt), aq) < 0)
			t = NULL;
		text[*n] = t;
		en[(*n)++] = s;
	}
	va_end(aq);
}

void trace_rank_warn(trace_rank *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	trace_warn_add(r->warnings, r->warnings_text, &r->n_warnings, TRACE_MAX_WARNINGS, fmt, ap);
	va_end(ap);
}
