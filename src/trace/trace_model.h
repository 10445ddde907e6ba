/* trace_model.h - what a profiler trace is reduced to: per-event records of GPU activity and
 * launch calls, an interned name table, and per-rank metadata. Readers (trace_kineto, trace_nsys)
 * fill a trace_rank; trace_prep applies HTA's loading rules; trace_analyze reads it. */
#ifndef GPUWHY_TRACE_MODEL_H
#define GPUWHY_TRACE_MODEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Event categories that matter to the analyses. Kineto's 2021 names (Kernel, Memcpy, Memset,
 * Runtime) map to the same ids as the later ones (kernel, gpu_memcpy, gpu_memset, cuda_runtime). */
typedef enum {
	TRACE_CAT_OTHER = 0, /* a category none of the analyses looks at */
	TRACE_CAT_KERNEL,    /* kernel, Kernel */
	TRACE_CAT_MEMCPY,    /* gpu_memcpy, Memcpy */
	TRACE_CAT_MEMSET,    /* gpu_memset, Memset */
	TRACE_CAT_MTIA_CCP,  /* mtia_ccp_events */
	TRACE_CAT_SYNC,      /* cuda_sync */
	TRACE_CAT_RUNTIME,   /* cuda_runtime, Runtime */
	TRACE_CAT_DRIVER,    /* cuda_driver */
} trace_cat;

/* HTA's kernel types (classification by name, see trace_kernel_type). */
typedef enum {
	TRACE_KT_COMPUTATION = 0,
	TRACE_KT_COMMUNICATION,
	TRACE_KT_MEMORY,
	TRACE_KT_OTHER,
	TRACE_KT_COUNT,
} trace_ktype;

/* Event flags. */
enum {
	TRACE_EV_PROFSTEP = 1 << 0, /* name contains "ProfilerStep" */
	/* the first element of traceEvents (HTA's row 0); nsys: the first event */
	TRACE_EV_ROW0 = 1 << 1,
	TRACE_EV_GPU_SIDE =
	    1 << 2,               /* HTA's "GPU side" of the correlation join (set by trace_prep) */
	TRACE_EV_HAS_BW = 1 << 3, /* a bandwidth came from the trace (trace_event_bw) */
};

/*
 * One kept event. Times are integer nanoseconds: Kineto microseconds are converted exactly from
 * the decimal text (up to three decimals), nsys times are already ns. After HTA's rounding
 * (trace_prep) ts/dur are whole microseconds and dur may be -1 us. 40 bytes: a big trace holds
 * millions, so what few events carry (the bandwidth of memory events) is kept apart, and of an
 * event's place in traceEvents only what HTA's rules read: whether it is row 0 (a flag).
 */
typedef struct {
	int64_t ts;     /* start, ns */
	int64_t dur;    /* duration, ns */
	int64_t corr;   /* args.correlation; -1 when absent */
	int64_t stream; /* args.stream coerced to an integer; -1 when absent or not numeric */
	uint32_t name;  /* id in the rank's name table */
	uint8_t cat;    /* trace_cat */
	uint8_t flags;  /* TRACE_EV_* */
} trace_event;

/* What a name is, computed once when it is interned. */
enum {
	TRACE_NAME_LAUNCH = 1 << 0,       /* cudaLaunchKernel, cudaLaunchKernelExC (launch stats) */
	TRACE_NAME_MEM_LAUNCH = 1 << 1,   /* cudaMemcpyAsync, cudaMemsetAsync (launch stats) */
	TRACE_NAME_QUEUE_LAUNCH = 1 << 2, /* every call that enqueues on a stream (queue length) */
	TRACE_NAME_SYNC_GPU = 1 << 3, /* Event Sync, Context Sync: GPU side whatever the stream */
	TRACE_NAME_PROFSTEP = 1 << 4, /* contains "ProfilerStep" */
};

typedef struct {
	uint32_t off;   /* offset of the NUL-terminated string in the arena */
	uint32_t len;   /* length in bytes */
	uint32_t hash;  /* of the bytes (name_hash) */
	uint8_t ktype;  /* trace_ktype of the name */
	uint8_t nflags; /* TRACE_NAME_* */
} trace_name;

/* Interned strings: one table per rank, so ranks parse in parallel without locks. */
typedef struct {
	char *arena;
	size_t arena_len, arena_cap;
	trace_name *names;
	uint32_t count, cap;
	uint32_t *slots; /* open addressing: id + 1, 0 = empty */
	uint32_t nslots; /* power of two */
	/* id + 1 of a name met lately, by a key of its length and ends (0 = empty): a trace
	 * repeats a few hundred names millions of times, and comparing one candidate costs less
	 * than hashing a long kernel name */
	uint32_t recent[64];
} trace_names;

void trace_names_init(trace_names *t);
void trace_names_free(trace_names *t);
/* Returns the id of s[0..len), adding it; UINT32_MAX when memory runs out. */
uint32_t trace_names_intern(trace_names *t, const char *s, size_t len);
static inline const char *trace_name_str(const trace_names *t, uint32_t id)
{
	return t->arena + t->names[id].off;
}

/* HTA's kernel classification of a kernel/activity name. */
trace_ktype trace_kernel_type(const char *name);
const char *trace_ktype_name(trace_ktype k); /* "COMPUTATION", ... */
/* HTA's memory bandwidth series name: "Memcpy DtoH", "Memset", "Memcpy Unknown", ... written to
 * out (at least 16 bytes). */
void trace_mem_group(const char *name, char *out, size_t outsz);

/* int64 -> uint32 map (open addressing, grows as needed), for stream ids and sparse
 * correlation ids. */
typedef struct {
	int64_t *keys;
	uint32_t *vals;
	bool *used;
	size_t mask, count;
} trace_imap;

/* expected: a hint for the number of keys. */
bool trace_imap_init(trace_imap *m, size_t expected);
void trace_imap_free(trace_imap *m);
/* The value slot of key, created with UINT32_MAX when absent; NULL when memory runs out. The
 * pointer is valid until the next call. */
uint32_t *trace_imap_slot(trace_imap *m, int64_t key);
/* The value of key, or UINT32_MAX. */
uint32_t trace_imap_get(const trace_imap *m, int64_t key);

typedef enum { TRACE_SRC_KINETO = 0, TRACE_SRC_NSYS } trace_source;

#define TRACE_MAX_WARNINGS 16

/* Everything known about one rank (one input file). */
typedef struct {
	char *path; /* the input file */
	trace_source source;
	int rank;        /* from the trace, else 0 (Kineto) / the file name (nsys) */
	bool rank_found; /* the rank came from the trace itself */

	trace_event *ev; /* kept events, in ord order */
	size_t n, cap;
	/* args["memory bandwidth (GB/s)"] of the events flagged TRACE_EV_HAS_BW: their indices in
	 * ev, ascending, and the values (trace_event_bw reads them). */
	uint32_t *bw_ev;
	double *bw_val;
	size_t n_bw, cap_bw;
	trace_names names;

	/* Reader facts used by trace_prep. */
	char *profstep_syms[2]; /* the first two distinct symbols containing "ProfilerStep" */
	int n_profstep_syms;
	bool ts_float; /* HTA would see a float64 ts column: some ts has decimals or is absent */
	uint64_t n_events;          /* elements of traceEvents */
	uint64_t n_rows;            /* rows HTA keeps (dur and cat present, cat != Trace) */
	uint64_t bytes;             /* input bytes read (uncompressed for .gz) */
	int64_t first_ts, last_end; /* over every kept row, ns (before rounding) */
	bool have_span;

	/* Metadata. */
	char device_name[96]; /* deviceProperties[0].name / TARGET_INFO_GPU.name */
	int world_size;       /* distributedInfo.world_size; 0 unknown */
	char format[112];     /* e.g. "Kineto JSON (ns timestamps)" or "nsys SQLite schema 2.9.1" */
	char format_text[224]; /* the same in the user's language, for the text report */

	/* Warnings for the report (not errors: the analysis goes on). */
	char *warnings[TRACE_MAX_WARNINGS];      /* English: what JSON keeps */
	char *warnings_text[TRACE_MAX_WARNINGS]; /* the same in the user's language, for text */
	int n_warnings;
	uint64_t n_type_errors; /* fields of the wrong JSON type, ignored */
} trace_rank;

void trace_rank_init(trace_rank *r, const char *path);
void trace_rank_free(trace_rank *r);
/* Appends an event; false when memory runs out. */
bool trace_rank_push(trace_rank *r, const trace_event *e);
/* Appends an event that carries a bandwidth (flagged TRACE_EV_HAS_BW here). */
bool trace_rank_push_bw(trace_rank *r, const trace_event *e, double bw_gbps);
/* args["memory bandwidth (GB/s)"] of event i, or -1 when it has none (HTA's default). */
double trace_event_bw(const trace_rank *r, size_t i);
/* Frees the event records and their bandwidths (the rest of the rank stays). */
void trace_rank_drop_events(trace_rank *r);
/* Records a distinct symbol (name or cat) containing "ProfilerStep" (HTA counts them). */
void trace_rank_note_profstep(trace_rank *r, const char *sym, size_t len);
void trace_rank_warn(trace_rank *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning appended to a pair of lists of max entries (*n of them used): English in en[],
 * the user's language in text[] (NULL when it cannot be made); dropped once full. */
void trace_warn_add(char **en, char **text, int *n, int max, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

#endif
