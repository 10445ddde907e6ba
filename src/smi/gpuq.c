/* gpuq.c - `gpuwhy query --query-gpu`: the fields asked for, their list for people, and
 * each sample as nvidia-smi's CSV or as JSON. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi/smi.h"
#include "smi/gpuq.h"
#include "gpu/cell.h"
#include "util/err.h"
#include "util/i18n.h"
#include "util/jsonw.h"
#include "util/timeutil.h"

/* The field list is for people: its texts are translated here, at display
 * time only; the same HELP texts are the exporter's # HELP lines, which stay
 * dcgm-exporter's English. Field names, units and DCGM names stay as typed. */
void smi_gpu_fields_help(FILE *out)
{
	fprintf(out, "%s\n\n", _("Fields for --query-gpu (unit in brackets; aliases after '='):"));
	fprintf(out, "  %-52s %s\n", "timestamp",
	        _("Time of the sample, \"YYYY/MM/DD HH:MM:SS.mmm\"."));
	for (int i = 0; i < GM__COUNT; i++) {
		char name[160];
		const gpu_metric_desc *d = &gpu_metrics[i];
		int n = snprintf(name, sizeof name, "%s", d->key);
		if (d->unit[0])
			n += snprintf(name + n, sizeof name - (size_t)n, " [%s]", d->unit);
		for (int a = 0; gpu_metric_aliases[a][0]; a++)
			if (!strcmp(gpu_metric_aliases[a][1], d->key) && (size_t)n < sizeof name)
				n += snprintf(name + n, sizeof name - (size_t)n, " =%s",
				              gpu_metric_aliases[a][0]);
		fprintf(out, "  %-52s %s", name, _(d->help));
		if (d->dcgm)
			fprintf(out, " %s %s", _("DCGM:"), d->dcgm);
		if (!gpu_metric_readable((gpu_metric_id)i))
			fprintf(out, " %s", _("(not read by gpuwhy: [N/A])"));
		fputc('\n', out);
	}
}

int smi_gpu_fields_parse(const char *list, smi_gpu_fields *f)
{
	char *copy = strdup(list), *save = NULL;
	for (char *t = smi_list_next(copy, &save); t; t = smi_list_next(NULL, &save)) {
		int id = !strcmp(t, "timestamp") ? SMI_FIELD_TIMESTAMP : gpu_metric_lookup(t);
		if (id == -1) {
			int rc = smi_bad_field(t, N_("gpuwhy query --help-query lists them"));
			free(copy);
			return rc;
		}
		if (f->n >= SMI_MAX_FIELDS) {
			free(copy);
			return gw_error(GW_EXIT_USAGE, "--query-gpu", NULL, "more than %d fields",
			                SMI_MAX_FIELDS);
		}
		f->id[f->n++] = id;
	}
	free(copy);
	if (f->n == 0)
		return gw_error(GW_EXIT_USAGE, "--query-gpu",
		                N_("e.g. --query-gpu=index,utilization.gpu"), "no fields given");
	return 0;
}

/* --query-remapped-rows: the GPU's identity and its remapped_rows.* fields. */
int smi_remap_fields_check(const smi_gpu_fields *fs)
{
	for (int f = 0; f < fs->n; f++) {
		int id = fs->id[f];
		if (id == SMI_FIELD_TIMESTAMP || id == GM_NAME || id == GM_UUID ||
		    id == GM_SERIAL || id == GM_PCI_BUS_ID ||
		    !strncmp(gpu_metrics[id].key, "remapped_rows.", 14))
			continue;
		return smi_bad_field(gpu_metrics[id].key,
		                     "gpuwhy query --help lists the remapped-row fields");
	}
	return 0;
}

/* The name a header shows: nvidia-smi's process and page queries say gpu_name, not name. */
static const char *header_name(bool remap, int id)
{
	if (remap)
		switch (id) {
		case GM_NAME:
			return "gpu_name";
		case GM_UUID:
			return "gpu_uuid";
		case GM_SERIAL:
			return "gpu_serial";
		case GM_PCI_BUS_ID:
			return "gpu_bus_id";
		default:
			break;
		}
	return gpu_metrics[id].key;
}

void smi_gpu_csv_header(FILE *out, const smi_gpu_fields *f, bool remap)
{
	for (int k = 0; k < f->n; k++) {
		int id = f->id[k];
		if (id == SMI_FIELD_TIMESTAMP) {
			fprintf(out, "%stimestamp", k ? ", " : "");
			continue;
		}
		/* nounits drops units from the values only: the header keeps them. */
		fprintf(out, "%s%s", k ? ", " : "", header_name(remap, id));
		if (gpu_metrics[id].unit[0])
			fprintf(out, " [%s]", gpu_metrics[id].unit);
	}
	fputc('\n', out);
}

void smi_gpu_csv_row(FILE *out, gpu_ctx *c, int i, const gpu_values *v, const smi_gpu_fields *f,
                     bool units)
{
	char buf[256];
	for (int k = 0; k < f->n; k++) {
		int id = f->id[k];
		if (id == SMI_FIELD_TIMESTAMP)
			smi_timestamp(v->t_wall, buf, sizeof buf);
		else
			gpu_cell_text(c, i, v, (gpu_metric_id)id, units, buf, sizeof buf);
		fprintf(out, "%s%s", k ? ", " : "", buf);
	}
	fputc('\n', out);
}

void smi_gpu_json(FILE *out, gpu_ctx *c, const smi_sel *sel, const gpu_values *vals,
                  const smi_gpu_fields *fs)
{
	int n = sel->n;
	jsonw w;
	char ts[64];
	jsonw_init(&w, out, false);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "timestamp");
	jsonw_num(&w, n > 0 ? vals[0].t_wall : gw_wall_s());
	jsonw_key(&w, "gpus");
	jsonw_arr_begin(&w);
	for (int k = 0; k < n; k++) {
		int i = sel->idx[k];
		jsonw_obj_begin(&w);
		for (int f = 0; f < fs->n; f++) {
			int id = fs->id[f];
			if (id == SMI_FIELD_TIMESTAMP) {
				smi_timestamp(vals[k].t_wall, ts, sizeof ts);
				jsonw_key(&w, "timestamp");
				jsonw_str(&w, ts);
				continue;
			}
			jsonw_key(&w, gpu_metrics[id].key);
			gpu_cell_json(c, i, &vals[k], (gpu_metric_id)id, &w);
		}
		jsonw_obj_end(&w);
	}
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	fputc('\n', out);
}
