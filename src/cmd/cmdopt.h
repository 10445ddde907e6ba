/* cmdopt.h - option parsing shared by the commands whose only option is --format text|json. */
#ifndef GPUWHY_CMD_CMDOPT_H
#define GPUWHY_CMD_CMDOPT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Parse [--format text|json] [--help] and no positional argument. Returns 0
 * with *json set, -1 when --help was printed (exit 0), or a GW_EXIT_* code
 * with the message printed.
 */
int cmdopt_text_json(int argc, char **argv, const char *cmd, void (*usage)(FILE *), bool *json);

#endif
