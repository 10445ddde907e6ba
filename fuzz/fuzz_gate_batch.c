/*
 * libFuzzer: batch merge and split. The input is split at the first two
 * NUL bytes into a request body, a second request body and an upstream
 * answer; both bodies are keyed, merged when their keys match, and the
 * answer is split back by their input counts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/batch.h"
#include "gate/config.h"

static const char *part(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *s = *p, *z = memchr(s, 0, (size_t)(end - s));
	*len = (size_t)((z ? z : end) - s);
	*p = z ? z + 1 : end;
	return (const char *)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t l1, l2, l3;
	const char *b1 = part(&p, end, &l1), *b2 = part(&p, end, &l2), *ans = part(&p, end, &l3);
	gate_batch_rule r;
	gate_rule_defaults(&r, GATE_GOAL_LATENCY, "/v1/embeddings");
	if (size && data[0] & 1) {
		strcpy(r.input, "/inputs/0/data");
		strcpy(r.output, "/outputs/0/data");
	}
	json_t *roots[2] = {NULL, NULL};
	char *keys[2] = {NULL, NULL};
	long counts[2];
	counts[0] = gate_batch_key(&r, b1, l1, &roots[0], &keys[0]);
	counts[1] = gate_batch_key(&r, b2, l2, &roots[1], &keys[1]);
	if (counts[0] > 0 && counts[1] > 0 && !strcmp(keys[0], keys[1])) {
		free(gate_batch_merge(&r, roots, 2));
		char *out[2], *usage;
		if (gate_batch_split(&r, ans, l3, counts, 2, out, &usage) == 0) {
			free(out[0]);
			free(out[1]);
			/* One header line: never a raw line break or byte above 0x7e. */
			for (const char *c = usage; c && *c; c++)
				if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
					abort();
			free(usage);
		}
	}
	if (counts[0] > 0) {
		char *one[1];
		if (gate_batch_split(&r, ans, l3, counts, 1, one, NULL) == 0)
			free(one[0]);
	}
	gate_batch_choose(&r, size % 100, size & 1);
	for (int i = 0; i < 2; i++) {
		json_decref(roots[i]);
		free(keys[i]);
	}
	return 0;
}
