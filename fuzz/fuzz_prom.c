/* libFuzzer: Prometheus's query_range answers (prom_parse_matrix), each input read
 * twice into one matrix, as two chunks of one query are, then its series' labels looked up. */
#include <stddef.h>
#include <stdint.h>

#include "prom/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	prom_matrix m = {0};
	gw_fail err;
	for (int pass = 0; pass < 2; pass++)
		if (prom_parse_matrix((const char *)data, size, &m, NULL, &err) != 0)
			break;
	for (int i = 0; i < m.n; i++) {
		const prom_series *s = &m.s[i];
		for (int k = 0; k < s->nlabels; k++)
			if (prom_label_get(s, s->labels[k].name) == NULL)
				__builtin_trap();
	}
	prom_matrix_free(&m);
	return 0;
}
