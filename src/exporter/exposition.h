/*
 * exposition.h - a frame as Prometheus text exposition (exposition.c). Pure.
 */
#ifndef GPUWHY_EXPORTER_EXPOSITION_H
#define GPUWHY_EXPORTER_EXPOSITION_H

#include "exporter/buf.h"
#include "exporter/collectors.h"
#include "exporter/frame.h"

typedef enum {
	EXPORTER_HOSTLABEL_UPPER, /* Hostname: released dcgm-exporters up to 4.5.3-4.8.2 */
	EXPORTER_HOSTLABEL_LOWER, /* hostname: dcgm-exporter after PR #655 */
	EXPORTER_HOSTLABEL_NONE,  /* like dcgm-exporter -n */
} exporter_hostlabel;

typedef struct {
	exporter_hostlabel host_label;
	const char *hostname;                  /* value of the hostname label */
	const exporter_collectors *collectors; /* DCGM families to export; NULL = default */
	int processes;                         /* top N processes per GPU to export (0: none) */
	const char *version;                   /* gpuwhy version for the build_info series */
} exporter_render_opts;

/* Append the whole exposition (text format 0.0.4) for f to b. */
void exporter_render(const exporter_frame *f, const exporter_render_opts *o, exporter_buf *b);

#endif
