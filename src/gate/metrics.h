/*
 * metrics.h - the gate's counters and histograms (metrics.c): kept in
 * gate_srv and gate_up (srv.h) under the gate's mutex, rendered as
 * Prometheus text on the metrics listener.
 */
#ifndef GPUWHY_GATE_METRICS_H
#define GPUWHY_GATE_METRICS_H

#include <stddef.h>

#include "gate/srv.h"
#include "util/mhd_dl.h"

void gate_hist_init(gate_hist *h, const double *le, int n);
void gate_hist_add(gate_hist *h, double v);
void gate_metrics_init(gate_srv *g);
/* The Prometheus text page (mu taken inside); free() it. */
char *gate_metrics_render(gate_srv *g, size_t *len);
enum MHD_Result gate_metrics_serve(void *cls, struct MHD_Connection *c, const char *url,
                                   const char *method, const char *version, const char *upload,
                                   size_t *upload_size, void **con_cls);
/* The label of each GATE_R_* reason (gpuwhy_gate_rejected_total). */
extern const char *const gate_reason_names[GATE_R__COUNT];

#endif
