/* internal.h - what the doctor's files share with each other but not with callers. */
#ifndef GPUWHY_DOCTOR_INTERNAL_H
#define GPUWHY_DOCTOR_INTERNAL_H

#include "doctor/doctor.h"

/* Filled on first use by dr_ctx_*(); freed by dr_ctx_free(). */
void dr_klog_read(const dr_probe *p, dr_klog *out);
void dr_klog_free(dr_klog *k);
void dr_where_detect(const dr_probe *p, dr_where *out);
void dr_python_run(const dr_probe *p, const dr_opts *o, dr_python *out);
void dr_python_free(dr_python *py);

/* Per-GPU status of a per-GPU check, for "worst of all GPUs". */
static inline dr_status dr_worse(dr_status a, dr_status b)
{
	/* FAIL > WARN > PASS > SKIP */
	static const int rank[] = {[DR_SKIP] = 0, [DR_PASS] = 1, [DR_WARN] = 2, [DR_FAIL] = 3};
	return rank[b] > rank[a] ? b : a;
}

/* s cut to max characters with "..." (for command lines in messages). */
const char *dr_short(const char *s, size_t max, char *buf, size_t len);

/* Minimum Linux driver for CUDA version cuda (12040 = 12.4); NULL when older than 11.4. */
const char *dr_driver_for_cuda(int cuda);

/* "GPU 1" with the model when known: "GPU 1 (NVIDIA A100-PCIE-40GB)". */
const char *dr_gpu_label(const dr_gpu *g, char *out, size_t len);

/* Value of metric id on g, or NAN-free check via ok. */
static inline bool dr_val(const dr_gpu *g, gpu_metric_id id, double *v)
{
	if (g->lost || !g->v.ok[id])
		return false;
	*v = g->v.v[id];
	return true;
}

#endif
