#include "gpu/cell.h"

#include <stdio.h>

bool gpu_cell_text(const gpu_ctx *c, int i, const gpu_values *v, gpu_metric_id id, bool with_units,
                   char *out, size_t outlen)
{
	if (gpu_metrics[id].fmt == GMF_DEPRECATED ||
	    (!v->ok[id] && v->why[id] == GPU_WHY_DEPRECATED)) {
		snprintf(out, outlen, "%s", GPU_DEPRECATED_TEXT);
		return false;
	}
	if (!v->ok[id]) {
		/* nvidia-smi 590 prints the fabric health fields it has not as N/A, unbracketed */
		bool plain = id >= GM_FABRIC_HEALTH_SUMMARY &&
		             id <= GM_FABRIC_HEALTH_INCORRECT_CONFIGURATION;
		snprintf(out, outlen, "%s", plain ? "N/A" : "[N/A]");
		return false;
	}
	if (gpu_metrics[id].fmt == GMF_STR) {
		const char *t = gpu_metric_text(c, i, id);
		snprintf(out, outlen, "%s", t ? t : "[N/A]");
		return t != NULL;
	}
	gpu_metric_format(id, v->v[id], with_units, out, outlen);
	return true;
}

void gpu_cell_json(const gpu_ctx *c, int i, const gpu_values *v, gpu_metric_id id, jsonw *w)
{
	if (!v->ok[id]) {
		jsonw_null(w);
		return;
	}
	char buf[128];
	switch (gpu_metrics[id].fmt) {
	case GMF_STR:
		jsonw_str(w, gpu_metric_text(c, i, id));
		break;
	case GMF_ENABLED:
	case GMF_ACTIVE:
	case GMF_YESNO:
		jsonw_bool(w, v->v[id] != 0);
		break;
	case GMF_PSTATE:
	case GMF_CMODE:
	case GMF_CC:
	case GMF_ARCH:
		gpu_metric_format(id, v->v[id], false, buf, sizeof buf);
		jsonw_str(w, buf);
		break;
	case GMF_F2: {
		double x = v->v[id];
		jsonw_num(w, (double)(long long)(x * 100 + (x >= 0 ? 0.5 : -0.5)) / 100.0);
		break;
	}
	default:
		jsonw_num(w, v->v[id]);
		break;
	}
}
