/* collectors.c - which DCGM families to export: the default set or a dcgm-exporter CSV. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/collectors.h"
#include "util/err.h"
#include "util/i18n.h"

#define LINE_MAX_LEN 4096

static const struct {
	const char *name;
	unsigned bit;
} label_fields[] = {
    {"DCGM_FI_DEV_SERIAL", EXPORTER_LABEL_DEV_SERIAL},
    {"DCGM_FI_DEV_VBIOS_VERSION", EXPORTER_LABEL_DEV_VBIOS},
    {"DCGM_FI_DRIVER_VERSION", EXPORTER_LABEL_DRIVER},
    {"DCGM_FI_NVML_VERSION", EXPORTER_LABEL_NVML},
};

void exporter_collectors_default(exporter_collectors *c)
{
	memset(c, 0, sizeof *c);
	/*
	 * dcgm-exporter types five of these counter, but their names lack the
	 * _total suffix a counter must have, one is named ..._COUNTER (a type in
	 * the name) and NVLINK_BANDWIDTH_TOTAL is a rate: promtool's lint flags
	 * all of that. They are untyped here, which promises nothing and lints
	 * clean; PromQL ignores the type, so queries are unchanged. A
	 * --collectors CSV that says counter gets counter.
	 */
	for (int i = 0; i < GM__COUNT; i++) {
		if (!gpu_metrics[i].dcgm || gpu_metrics[i].exported != GME_DEF)
			continue;
		c->order[c->n++] = i;
		c->type[i] = gpu_metrics[i].prom == GMP_counter ? EXPORTER_UNTYPED : EXPORTER_GAUGE;
	}
	c->labels = EXPORTER_LABEL_DRIVER;
}

void exporter_collectors_counter_type(exporter_collectors *c, exporter_prom_type t)
{
	for (int k = 0; k < c->n; k++)
		if (gpu_metrics[c->order[k]].prom == GMP_counter)
			c->type[c->order[k]] = t;
}

void exporter_collectors_free(exporter_collectors *c)
{
	for (int i = 0; i < GM__COUNT; i++)
		free(c->help[i]);
	memset(c, 0, sizeof *c);
}

static int dcgm_metric(const char *name)
{
	for (int i = 0; i < GM__COUNT; i++)
		if (gpu_metrics[i].dcgm && !strcmp(gpu_metrics[i].dcgm, name))
			return i;
	return -1;
}

static unsigned label_bit(const char *name)
{
	for (size_t i = 0; i < sizeof label_fields / sizeof *label_fields; i++)
		if (!strcmp(label_fields[i].name, name))
			return label_fields[i].bit;
	return 0;
}

/* Trim blanks (and a CR) on both sides, in place. */
static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* Append name to the comma-separated list; "..." marks that some did not fit. */
static void add_unknown(char *u, size_t len, const char *name)
{
	if (!u || len < 8)
		return;
	size_t used = strlen(u);
	if (used >= 3 && !strcmp(u + used - 3, "..."))
		return;
	const char *sep = used ? ", " : "";
	/* Always keep room for a final ", ...". */
	if (used + strlen(sep) + strlen(name) + 5 < len)
		snprintf(u + used, len - used, "%s%s", sep, name);
	else
		snprintf(u + used, len - used, "%s...", sep);
}

/* One data row, already stripped of comments; NUL-terminated. 0 or -1 with err. */
static int parse_row(char *line, int lineno, exporter_collectors *out, bool *seen, char *unknown,
                     size_t unknownlen, gw_fail *err)
{
	char *c1 = strchr(line, ',');
	char *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
	if (!c2) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            "line %d: expected 'FIELD, prom_type, help'", lineno);
		return -1;
	}
	*c1 = *c2 = '\0';
	char *name = trim(line), *type = trim(c1 + 1), *help = trim(c2 + 1);
	if (!*name) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, "line %d: empty field name", lineno);
		return -1;
	}
	bool is_label = !strcmp(type, "label");
	if (!is_label && strcmp(type, "gauge") && strcmp(type, "counter")) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            "line %d: prom_type '%.40s' of %.80s is not gauge, counter or label",
		            lineno, type, name);
		return -1;
	}
	unsigned bit = label_bit(name);
	int id = dcgm_metric(name);
	if (bit) {
		if (!is_label) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            "line %d: %.80s is a text field; its prom_type must be label",
			            lineno, name);
			return -1;
		}
		out->labels |= bit;
		return 0;
	}
	if (id < 0) {
		add_unknown(unknown, unknownlen, name);
		return 0;
	}
	if (is_label) {
		gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
		            "line %d: %.80s is a number; its prom_type must be gauge or counter",
		            lineno, name);
		return -1;
	}
	if (seen[id])
		return 0; /* the first row of a field wins */
	seen[id] = true;
	out->order[out->n++] = id;
	out->type[id] = !strcmp(type, "counter") ? EXPORTER_COUNTER : EXPORTER_GAUGE;
	if (*help && !(out->help[id] = strdup(help))) {
		gw_fail_set(err, GW_EXIT_ENV, NULL, NULL, "out of memory");
		return -1;
	}
	return 0;
}

int exporter_collectors_parse(const char *text, size_t len, exporter_collectors *out, char *unknown,
                              size_t unknownlen, gw_fail *err)
{
	memset(out, 0, sizeof *out);
	if (unknown && unknownlen)
		unknown[0] = '\0';
	bool seen[GM__COUNT] = {false};
	char line[LINE_MAX_LEN + 1];
	int lineno = 0;
	size_t pos = 0;
	while (pos < len) {
		lineno++;
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - start) : len - pos;
		pos += n + (nl ? 1 : 0);
		if (n > LINE_MAX_LEN) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL, "line %d: longer than %d bytes",
			            lineno, LINE_MAX_LEN);
			exporter_collectors_free(out);
			return -1;
		}
		if (memchr(start, '\0', n)) {
			gw_fail_set(err, GW_EXIT_USAGE, NULL, NULL,
			            "line %d: contains a NUL byte (not a text file?)", lineno);
			exporter_collectors_free(out);
			return -1;
		}
		memcpy(line, start, n);
		line[n] = '\0';
		char *l = trim(line);
		if (!*l || *l == '#')
			continue;
		if (parse_row(l, lineno, out, seen, unknown, unknownlen, err)) {
			exporter_collectors_free(out);
			return -1;
		}
	}
	return 0;
}
