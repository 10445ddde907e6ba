/*
 * fuzz_scenario.c - libFuzzer target for the scenario parser (sim/sim_scenario*.c, sim_parse.c,
 * part of gpuwhy's sim layer). Any input must give a scenario or one error message,
 * never a crash, a leak or an unterminated message.
 * Seeds: the shipped scenarios in sim/scenarios.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sim_scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[700];
	sim_scenario *s = NULL;
	err[sizeof err - 1] = 'x';
	if (sim_scenario_parse((const char *)data, size, "fuzz.json", &s, err, sizeof err) == 0) {
		if (!s || s->n_gpus < 1)
			__builtin_trap();
		sim_scenario_free(s);
	} else if (s || memchr(err, '\0', sizeof err) == NULL || strncmp(err, "fuzz.json", 9)) {
		__builtin_trap();
	}
	return 0;
}
