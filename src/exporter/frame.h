/*
 * frame.h - one published sample: the sampler's snapshot plus what only the exporter
 * shows beside it (labels, top processes, MIG, findings) (frame.c).
 */
#ifndef GPUWHY_EXPORTER_FRAME_H
#define GPUWHY_EXPORTER_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "model/snapshot.h"

#define EXPORTER_PROC_MAX 32 /* upper bound of --processes */

typedef struct {
	unsigned pid;
	char command[64]; /* short name of the executable; "" when unknown */
	bool mem_ok;
	uint64_t mem_bytes;
	bool sm_ok;
	double sm_ratio; /* 0..1 */
	/* Kubernetes pod of the process, "" when not in one or not looked up */
	char pod[254], namespace_[64], container[64];
} exporter_proc;

/* What the exporter shows of one GPU beside its values: labels, top processes, MIG. */
typedef struct {
	int index; /* NVML index: dcgm-exporter's gpu label */
	char uuid[96], pci_bus_id[32], name[96], serial[32], vbios[32];
	char vendor[8];         /* "nvidia", "amd"; "" when unknown */
	const gpu_values *vals; /* this GPU's values in the frame's snapshot */
	int nprocs_total;       /* processes on the GPU; -1 when unknown */
	int nprocs;             /* kept in procs: the top ones by memory */
	exporter_proc procs[EXPORTER_PROC_MAX];
	/* the one Kubernetes container whose processes use the GPU, "" when none or several */
	char pod[254], namespace_[64], container[64];
	int nmig; /* MIG devices (GPU instances), 0 when MIG is off */
	gpu_mig mig[GPU_MIG_MAX];
} exporter_gpu;

typedef enum { EXPORTER_SEV_INFO, EXPORTER_SEV_WARN, EXPORTER_SEV_ERROR } exporter_severity;

typedef struct {
	int gpu; /* GPU index (the gpu label); -1 for a host-wide finding */
	char rule[48];
	exporter_severity severity;
} exporter_finding;

#define EXPORTER_FINDINGS_MAX 256

/*
 * One published sample: the sampler's snapshot (every value: the GPUs by
 * position, the host summary, the cores) and what only the exporter shows
 * beside it.
 */
typedef struct {
	const snapshot *snap;
	bool host;              /* export the host families */
	double sample_seconds;  /* how long taking the sample took */
	uint64_t samples_total; /* samples taken since start, this one included */
	char driver[96], nvml[96];
	int ngpus;
	exporter_gpu *gpus; /* [ngpus], positions as in snap->gpu */
	int nfindings;
	exporter_finding findings[EXPORTER_FINDINGS_MAX];
} exporter_frame;

/* Allocate a frame with room for ngpus GPUs; NULL on ENOMEM. */
exporter_frame *exporter_frame_new(int ngpus);
void exporter_frame_free(exporter_frame *f);

const char *exporter_severity_name(exporter_severity s);

#endif
