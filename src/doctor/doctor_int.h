/* doctor_int.h - what the doctor's files share with each other but not with callers. */
#ifndef GPUWHY_DOCTOR_DOCTOR_INT_H
#define GPUWHY_DOCTOR_DOCTOR_INT_H

#include "doctor/klog.h"
#include "doctor/machine.h"
#include "doctor/probe.h"
#include "doctor/pyprobe.h"
#include "doctor/report.h"
#include "doctor/where.h"

/* Filled on first use by doctor_ctx_*(); freed by doctor_ctx_free(). */
void doctor_klog_read(const doctor_probe *p, doctor_klog *out);
void doctor_klog_free(doctor_klog *k);
void doctor_where_detect(const doctor_probe *p, doctor_where *out);
void doctor_python_run(const doctor_probe *p, const doctor_opts *o, doctor_python *out);
void doctor_python_free(doctor_python *py);

/* Per-GPU status of a per-GPU check, for "worst of all GPUs". */
static inline doctor_status doctor_worse(doctor_status a, doctor_status b)
{
	/* FAIL > WARN > PASS > SKIP */
	static const int rank[] = {
	    [DOCTOR_SKIP] = 0, [DOCTOR_PASS] = 1, [DOCTOR_WARN] = 2, [DOCTOR_FAIL] = 3};
	return rank[b] > rank[a] ? b : a;
}

/* s cut to max characters with "..." (for command lines in messages). */
const char *doctor_short(const char *s, size_t max, char *buf, size_t len);

/* Minimum Linux driver for CUDA version cuda (12040 = 12.4); NULL when older than 11.4. */
const char *doctor_driver_for_cuda(int cuda);

/* "GPU 1" with the model when known: "GPU 1 (NVIDIA A100-PCIE-40GB)". */
const char *doctor_gpu_label(const doctor_gpu *g, char *out, size_t len);

/* Value of metric id on g, or NAN-free check via ok. */
static inline bool doctor_val(const doctor_gpu *g, gpu_metric_id id, double *v)
{
	if (g->lost || !g->v.ok[id])
		return false;
	*v = g->v.v[id];
	return true;
}

#endif
