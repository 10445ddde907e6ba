/*
 * batch.h - merging list-input JSON bodies into one request and splitting
 * the response among them (batch.c). Pure.
 */
#ifndef GPUWHY_GATE_BATCH_H
#define GPUWHY_GATE_BATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "gate/config.h"

/*
 * Split a request body for batching: the list at rule->input (a single
 * string or number counts as a list of one) and a key of everything else,
 * canonical (sorted keys), so that requests with equal keys can be merged.
 * Returns the number of inputs (>= 1), or -1 when the body does not fit
 * (then it goes through unbatched).
 */
long gate_batch_key(const gate_batch_rule *rule, const char *body, size_t len, json_t **root,
                    char **key);
/*
 * Merge member bodies (already parsed roots, same key) into one body whose
 * input list is all their inputs in order. Returns a new string or NULL.
 */
char *gate_batch_merge(const gate_batch_rule *rule, json_t *const *roots, int n);
/*
 * Split a batch response: counts[i] items go to member i, in order.
 * Fills out[i] with a new string for each member; an "index" field in
 * the list's objects is renumbered from 0 per member. The root's "usage"
 * counts the whole batch, so with several members none gets it: a member
 * gets the sum of its items' own "usage" objects where every item has
 * one, else no "usage"; *usage (when usage is not NULL) is then the
 * batch's "usage" as one line of ASCII JSON (free()), NULL without one.
 * Returns 0, or -1 when the response is not a list of sum(counts) items
 * at rule->output.
 */
int gate_batch_split(const gate_batch_rule *rule, const char *body, size_t len, const long *counts,
                     int n, char **out, char **usage);
/* The batch size to send now from avail waiting inputs (0: keep waiting). */
long gate_batch_choose(const gate_batch_rule *rule, long avail, bool delay_expired);

#endif
