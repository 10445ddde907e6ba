/*
 * pyprobe.h - the Python stack as a child interpreter reports it: the interpreter, the
 * frameworks and their GPUs, the installed distributions (pyprobe.c).
 */
#ifndef GPUWHY_DOCTOR_PYPROBE_H
#define GPUWHY_DOCTOR_PYPROBE_H

#include <stdbool.h>
#include <stddef.h>

#define DOCTOR_PY_NPKG 5
#define DOCTOR_PY_NDEV 16

typedef struct {
	const char *name; /* import name: torch, jax, tensorflow, onnxruntime, cupy */
	bool installed;   /* the module can be found on sys.path */
	bool probed;      /* the import child gave an answer */
	bool timed_out;
	char version[64];
	char cuda[16];      /* CUDA version it was built for, "" when unknown or none */
	bool cpu_only;      /* a build without CUDA */
	char other_gpu[32]; /* "ROCm 6.0" for non-CUDA GPU builds */
	int gpu_count;      /* GPUs it sees, -1 when it cannot tell */
	int ndev;
	char dev_name[DOCTOR_PY_NDEV][96];
	char dev_uuid[DOCTOR_PY_NDEV][96]; /* "GPU-..." when the framework reports it */
	char file[256];
	char extra[256]; /* framework-specific note (ONNX Runtime providers) */
	char error[512]; /* import error, CUDA init error */
} doctor_pypkg;

typedef struct {
	char name[64]; /* distribution name as installed: torch, onnxruntime-gpu */
	char version[64];
	char location[256];
} doctor_pydist;

typedef struct {
	bool found;         /* an interpreter was found */
	bool explicit_path; /* from --python */
	char exe[512];
	bool ran; /* the listing child answered */
	char error[512];
	char version[32];
	int major;
	char sys_exe[256];
	bool venv;
	doctor_pypkg pkg[DOCTOR_PY_NPKG];
	doctor_pydist *dists;
	size_t ndists;
} doctor_python;

#endif
