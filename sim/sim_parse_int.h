/*
 * sim_parse_int.h - the scenario reader's own tools, shared by its files:
 * the parser context, errors located at their line and column in the text,
 * and typed getters that check keys, types and ranges (sim_parse.c); one
 * GPU's object (sim_scenario_gpu.c) and its behaviour over time
 * (sim_scenario_behave.c). Private to sim/.
 */
#ifndef GPUWHY_SIM_PARSE_INT_H
#define GPUWHY_SIM_PARSE_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_scenario.h"

#define MIB 1048576.0

/* What a parse reads and where its error goes ("file:line:col: path: why"). */
typedef struct {
	const char *buf;
	size_t len;
	const char *file;
	char *err;
	size_t errlen;
	uint64_t seed;
} sim_sc_ctx;

/*
 * Errors about path.key (key NULL: the object itself), located in the text;
 * values of gpus[i] that come from gpu_defaults are named where they are.
 * sim_sc_fail_key points at the key rather than its value. Both return false.
 */
__attribute__((format(printf, 4, 5))) bool sim_sc_fail(sim_sc_ctx *c, const char *path,
                                                       const char *key, const char *fmt, ...);
__attribute__((format(printf, 4, 5))) bool sim_sc_fail_key(sim_sc_ctx *c, const char *path,
                                                           const char *key, const char *fmt, ...);

/* "an object", "a string", ... for messages. */
const char *sim_sc_tname(const json_t *v);
/* A member, with JSON null meaning absent (null removes a gpu_defaults value). */
json_t *sim_sc_member(json_t *o, const char *key);
/* Every key of o is one of keys (NULL-terminated). */
bool sim_sc_check_keys(sim_sc_ctx *c, json_t *o, const char *path, const char *const *keys);
/* "missing key": false. */
bool sim_sc_missing(sim_sc_ctx *c, const char *path, const char *key);

/*
 * Typed getters: read o.key into *out, within [lo, hi] where there is a
 * range; a key that is absent is an error when req, else *out is left as it
 * is. Each returns false with the error written.
 */
bool sim_sc_get_num(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    double lo, double hi, double *out);
bool sim_sc_get_int(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, long long *out);
bool sim_sc_get_uns(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, unsigned *out);
bool sim_sc_get_ull(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    long long lo, long long hi, unsigned long long *out);
bool sim_sc_get_bool(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                     bool *out);
bool sim_sc_get_str(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    size_t maxlen, char *out, size_t outsize);
bool sim_sc_get_enum(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                     const char *const *names, const int *values, int *out);
bool sim_sc_get_obj(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    json_t **out);
bool sim_sc_get_arr(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                    size_t max, json_t **out);
bool sim_sc_get_hex32(sim_sc_ctx *c, json_t *o, const char *path, const char *key, bool req,
                      unsigned *out);

/* The keys a GPU object (and gpu_defaults) may hold. */
extern const char *const sim_sc_gpu_keys[];
/* One GPU: identity, modes, PCI, memory, power, clocks, thermal, reliability, NVLink. */
bool sim_sc_parse_gpu(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g);
/* Its behaviour over time: the idle and load profiles, segments, episodes, noise. */
bool sim_sc_parse_behaviour(sim_sc_ctx *c, json_t *gj, const char *path, sim_gpu *g);

#endif
