/*
 * config_args.h - the gate's settings from `gpuwhy gate`'s arguments:
 * defaults, then --config, then the flags (config_args.c).
 */
#ifndef GPUWHY_GATE_CONFIG_ARGS_H
#define GPUWHY_GATE_CONFIG_ARGS_H

#include "gate/config.h"

typedef struct {
	int argc;
	char **argv;
} gate_args;
/* Defaults, then --config, then the flags into c. Returns 0, OPT_HELP or
 * GW_EXIT_* (the error printed). */
int gate_config_from_args(int argc, char **argv, gate_config *c);
/* A gate_reload_fn: the same steps again, ctx a gate_args. */
int gate_config_reload_args(void *ctx, gate_config *out);
/* Where c listens is loopback, or --allow-remote with an allow-list
 * (else the error is printed and GW_EXIT_USAGE returned). */
int gate_config_exposure(const gate_config *c);

#endif
