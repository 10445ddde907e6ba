/* libFuzzer: the gate's config and keys files, and the --upstream / --allow values. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gate/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	gate_config c;
	gate_config_defaults(&c);
	if (gate_config_parse(&c, (const char *)data, size, err, sizeof err) == 0)
		gate_config_check(&c, err, sizeof err);
	gate_keys_parse(&c, (const char *)data, size, err, sizeof err);
	gate_config_free(&c);

	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	gate_upstream_cfg u;
	gate_parse_upstream(text, &u, err, sizeof err);
	gate_net n;
	if (gate_parse_net(text, &n, err, sizeof err) == 0) {
		uint8_t a[16] = {0};
		gate_net_match(&n, a, true);
		gate_net_match(&n, a, false);
	}
	gate_is_loopback(text);
	free(text);
	return 0;
}
