/*
 * hostsum.h - the host summary (HM_* of timeline.h) derived from one host
 * reading, as the HOST_SUM_METRIC table of host/host_metrics.def says: the
 * one place the machine-wide values every snapshot carries are computed.
 */
#ifndef GPUWHY_MODEL_HOSTSUM_H
#define GPUWHY_MODEL_HOSTSUM_H

#include "host/host.h"
#include "model/timeline.h"

/* out[id] for every summary metric; NAN where absent. */
void host_summary_fill(const host_sample *h, double out[HM__COUNT]);

#endif
