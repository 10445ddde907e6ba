/*
 * jfield.h - the one strict, typed reader of a JSON object's fields, for the files people
 * write: scenarios (sim/sim_parse.c), the gate's config (gate/config.c) and the queue's
 * task files (queue/spec.c). A field is a row: its key, its type, whether it is required,
 * its range and where its value goes (offsetof, sizeof). The reader checks and stores; what
 * it found wrong comes back as a jf_fault, and each reader words it in its own messages
 * (kept as they were: people and tests know them), so the checks are written once.
 *
 * It lives in sim/, the lowest layer that reads JSON: the simulated libnvidia-ml.so.1 may
 * use nothing of src/, and everything above may use sim/.
 */
#ifndef GPUWHY_SIM_JFIELD_H
#define GPUWHY_SIM_JFIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
	JF_INT,  /* an integer in [lo, hi], stored as an integer of size bytes (4 or 8) */
	JF_NUM,  /* any number in [dlo, dhi], stored as a double */
	JF_BOOL, /* true or false, stored as a bool */
	JF_STR,  /* a string copied into char[size], at most hi bytes (0: size - 1) */
	JF_TEXT, /* a string left in the tree: a const char * is stored */
} jf_type;

typedef struct {
	const char *key;
	jf_type type;
	bool req;
	long long lo, hi;
	double dlo, dhi;
	size_t off, size;
} jf_field;

/* The rows, with designated initializers: JF_I(key, struct, member, lo, hi), ... */
#define JF_I(k, T, m, l, h)                                                                        \
	{                                                                                          \
		.key = k, .type = JF_INT, .lo = l, .hi = h, .off = offsetof(T, m),                 \
		.size = sizeof(((T *)0)->m)                                                        \
	}
#define JF_B(k, T, m)                                                                              \
	{                                                                                          \
		.key = k, .type = JF_BOOL, .off = offsetof(T, m), .size = sizeof(bool)             \
	}
#define JF_S(k, T, m)                                                                              \
	{                                                                                          \
		.key = k, .type = JF_STR, .off = offsetof(T, m), .size = sizeof(((T *)0)->m)       \
	}

typedef enum {
	JF_OK,
	JF_MISSING,  /* a required key is absent */
	JF_TYPE,     /* the value has another type */
	JF_RANGE,    /* a number out of range */
	JF_TOO_LONG, /* a string longer than allowed */
	JF_NUL,      /* a string holding a NUL character */
	JF_UNKNOWN,  /* a key no row names (jf_known) */
} jf_fault;

/* Check v (not NULL) against f: JF_OK or what is wrong with it. */
jf_fault jf_check(const jf_field *f, const json_t *v);
/* Store v, checked, into dst at f's offset. */
void jf_store(const jf_field *f, const json_t *v, void *dst);

/* How jf_read reads. */
enum {
	JF_NULL_ABSENT = 1, /* JSON null is an absent key (else a value of the wrong type) */
	JF_NUL_CUTS = 2,    /* a string holding a NUL is kept up to it (else JF_NUL) */
};

/*
 * Read the n rows in order from obj into dst: an absent key is skipped, or JF_MISSING when
 * required. At the first fault, *bad is its row (and *val its value, NULL when missing)
 * and the fault is returned; dst holds the rows before it.
 */
jf_fault jf_read(const jf_field *rows, size_t n, const json_t *obj, unsigned flags, void *dst,
                 const jf_field **bad, const json_t **val);
/* The first key of obj (in its order) that neither a row of rows[0..n) nor more
 * (NULL-terminated; may be NULL) names, or NULL: unknown keys are typos. */
const char *jf_unknown(const json_t *obj, const jf_field *rows, size_t n, const char *const *more);
/* The row of rows[0..n) for key, or NULL. */
const jf_field *jf_find(const jf_field *rows, size_t n, const char *key);

#endif
