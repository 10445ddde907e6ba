/* frame.c - allocation of the exporter's frames, and the names of finding severities. */
#include <stdlib.h>

#include "exporter/frame.h"

exporter_frame *exporter_frame_new(int ngpus)
{
	exporter_frame *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->gpus = calloc((size_t)(ngpus > 0 ? ngpus : 1), sizeof *f->gpus);
	if (!f->gpus) {
		free(f);
		return NULL;
	}
	f->ngpus = ngpus;
	return f;
}

void exporter_frame_free(exporter_frame *f)
{
	if (!f)
		return;
	free(f->gpus);
	free(f);
}

const char *exporter_severity_name(exporter_severity s)
{
	switch (s) {
	case EXPORTER_SEV_INFO:
		return "info";
	case EXPORTER_SEV_WARN:
		return "warn";
	case EXPORTER_SEV_ERROR:
		return "error";
	}
	return "info";
}
