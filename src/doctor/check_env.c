/* check_env.c - env.*: variables that hide GPUs, force the CPU, or slow GPU work down. */
#include <stdbool.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor/check_cuda.h"
#include "doctor/checks.h"
#include "doctor/doctor_int.h"
#include "util/strbuf.h"

static bool is_true(const char *v)
{
	return !strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	       !strcasecmp(v, "on");
}

/* JAX_PLATFORMS lists the allowed backends, "cpu" alone forces the CPU. */
static bool jax_cpu_only(const char *v)
{
	return strcasestr(v, "cpu") && !strcasestr(v, "cuda") && !strcasestr(v, "gpu") &&
	       !strcasestr(v, "rocm");
}

typedef enum { HIDE_FAIL, HIDE_WARN, HARMLESS } hide_kind;

typedef struct {
	const char *var;
	hide_kind kind;
	bool (*applies)(const char *value, bool container);
	const char *effect; /* what it does, naming the tools it affects */
	const char *fix;
} hide_rule;

static bool r_hides(const char *v, bool ct)
{
	(void)ct;
	return doctor_cvd_hides_all(v);
}

static bool r_nvd(const char *v, bool ct)
{
	return ct && (!*v || !strcasecmp(v, "void") || !strcasecmp(v, "none"));
}

static bool r_zero(const char *v, bool ct)
{
	(void)ct;
	return !strcmp(v, "0");
}

static bool r_cpu_prefix(const char *v, bool ct)
{
	(void)ct;
	return !strncasecmp(v, "cpu", 3);
}

static bool r_jax(const char *v, bool ct)
{
	(void)ct;
	return jax_cpu_only(v);
}

static bool r_set(const char *v, bool ct)
{
	(void)v;
	(void)ct;
	return true;
}

static bool r_tf_quiet(const char *v, bool ct)
{
	(void)ct;
	return atoi(v) >= 2;
}

static const hide_rule hide_rules[] = {
    {"CUDA_VISIBLE_DEVICES", HIDE_FAIL, r_hides,
     "hides every NVIDIA GPU from CUDA programs (PyTorch, TensorFlow, JAX, ONNX Runtime, "
     "CuPy, Ollama, llama.cpp, vLLM)",
     "unset CUDA_VISIBLE_DEVICES (or list GPUs: CUDA_VISIBLE_DEVICES=0,1)"},
    {"NVIDIA_VISIBLE_DEVICES", HIDE_FAIL, r_nvd,
     "NVIDIA Container Toolkit: no GPU is injected into this container",
     "start the container with --gpus all or -e NVIDIA_VISIBLE_DEVICES=all"},
    {"OLLAMA_LLM_LIBRARY", HIDE_FAIL, r_cpu_prefix, "Ollama: forced onto its CPU runner",
     "unset OLLAMA_LLM_LIBRARY (for the service: sudo systemctl edit ollama.service) and "
     "restart Ollama"},
    {"OLLAMA_NUM_GPU", HIDE_FAIL, r_zero, "Ollama: no model layers offloaded to the GPU",
     "unset OLLAMA_NUM_GPU (for the service: sudo systemctl edit ollama.service) and restart "
     "Ollama"},
    {"LLAMA_ARG_N_GPU_LAYERS", HIDE_FAIL, r_zero, "llama.cpp server: no layers on the GPU",
     "unset LLAMA_ARG_N_GPU_LAYERS or set it to the layer count (e.g. 99)"},
    {"JAX_PLATFORMS", HIDE_FAIL, r_jax, "JAX: restricted to the CPU backend",
     "unset JAX_PLATFORMS (or JAX_PLATFORMS=cuda,cpu)"},
    {"JAX_PLATFORM_NAME", HIDE_FAIL, r_jax, "JAX: the CPU backend chosen",
     "unset JAX_PLATFORM_NAME"},
    {"HIP_VISIBLE_DEVICES", HIDE_WARN, r_hides,
     "hides AMD GPUs from HIP programs (PyTorch ROCm, Ollama on AMD); no effect on CUDA",
     "unset HIP_VISIBLE_DEVICES"},
    {"ROCR_VISIBLE_DEVICES", HIDE_WARN, r_hides,
     "hides AMD GPUs from the ROCm runtime; no effect on CUDA", "unset ROCR_VISIBLE_DEVICES"},
    {"TF_FORCE_GPU_ALLOW_GROWTH", HARMLESS, r_set,
     "TensorFlow memory growth only, does not hide GPUs", NULL},
    {"TF_CPP_MIN_LOG_LEVEL", HARMLESS, r_tf_quiet,
     "TensorFlow quiet: it will not log why a GPU was skipped", NULL},
    {"PYTORCH_CUDA_ALLOC_CONF", HARMLESS, r_set, "PyTorch allocator tuning only", NULL},
    {"XLA_PYTHON_CLIENT_PREALLOCATE", HARMLESS, r_set, "JAX memory preallocation only", NULL},
    {"XLA_PYTHON_CLIENT_MEM_FRACTION", HARMLESS, r_set, "JAX memory fraction only", NULL},
    {"CUDA_MODULE_LOADING", HARMLESS, r_set, "CUDA lazy loading only", NULL},
};

void doctor_check_env_gpu_hiding(doctor_ctx *c)
{
	bool ct = doctor_ctx_where(c)->container;
	gw_strbuf bad = {0}, fix = {0}, harmless = {0};
	doctor_status st = DOCTOR_PASS;
	for (size_t i = 0; i < sizeof hide_rules / sizeof *hide_rules; i++) {
		const hide_rule *h = &hide_rules[i];
		const char *v = doctor_env(c, h->var);
		if (!v || !h->applies(v, ct))
			continue;
		if (h->kind == HARMLESS) {
			gw_sb_sep(&harmless, "; ");
			gw_sb_printf(&harmless, "%s=%s (%s)", h->var, v, DOCTOR_(h->effect));
			continue;
		}
		gw_sb_sep(&bad, "; ");
		gw_sb_printf(&bad, "%s='%s' %s", h->var, v, DOCTOR_(h->effect));
		gw_sb_sep(&fix, "; ");
		gw_sb_printf(&fix, "%s", DOCTOR_(h->fix));
		st = doctor_worse(st, h->kind == HIDE_FAIL ? DOCTOR_FAIL : DOCTOR_WARN);
	}
	if (st == DOCTOR_PASS) {
		doctor_addf(c->r, "env.gpu_hiding", DOCTOR_PASS,
		            "no variable hides GPUs or forces the CPU%s%s",
		            harmless.len ? DOCTOR_("; set but harmless: ") : "",
		            gw_sb_str(&harmless));
	} else {
		doctor_result *r =
		    doctor_addf(c->r, "env.gpu_hiding", st, "%s%s%s", gw_sb_str(&bad),
		                harmless.len ? DOCTOR_("; harmless: ") : "", gw_sb_str(&harmless));
		doctor_fixf(r, "%s", gw_sb_str(&fix));
	}
	gw_sb_free(&bad);
	gw_sb_free(&fix);
	gw_sb_free(&harmless);
}

typedef struct {
	const char *var;
	bool (*applies)(const char *value);
	const char *effect;
} slow_rule;

static bool s_true(const char *v)
{
	return is_true(v);
}

static bool s_mps(const char *v)
{
	int p = atoi(v);
	return p > 0 && p < 100;
}

static bool s_p2p(const char *v)
{
	return !strcasecmp(v, "LOC") || !strcmp(v, "0");
}

static const slow_rule slow_rules[] = {
    {"CUDA_LAUNCH_BLOCKING", s_true,
     "every kernel launch waits for the kernel to finish (a debugging switch): the GPU idles "
     "between kernels"},
    {"CUDA_CACHE_DISABLE", s_true, "the JIT cache is off: PTX is recompiled at every start"},
    {"PYTORCH_NO_CUDA_MEMORY_CACHING", s_true,
     "PyTorch's caching allocator is off: every allocation is a cudaMalloc (a debugging "
     "switch)"},
    {"NCCL_P2P_DISABLE", s_true,
     "NCCL: NVLink/PCIe peer-to-peer off, all-reduce goes through host memory"},
    {"NCCL_P2P_LEVEL", s_p2p, "NCCL: peer-to-peer restricted to nothing"},
    {"NCCL_SHM_DISABLE", s_true, "NCCL: shared-memory transport off"},
    {"NCCL_IB_DISABLE", s_true,
     "NCCL: InfiniBand off, multi-node traffic falls back to TCP sockets"},
    {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", s_mps, "MPS gives this client only part of the SMs"},
};

void doctor_check_env_slowdown(doctor_ctx *c)
{
	gw_strbuf bad = {0}, fix = {0}, names = {0};
	for (size_t i = 0; i < sizeof slow_rules / sizeof *slow_rules; i++) {
		const slow_rule *s = &slow_rules[i];
		const char *v = doctor_env(c, s->var);
		gw_sb_sep(&names, ", ");
		gw_sb_printf(&names, "%s", s->var);
		if (!v || !*v || !s->applies(v))
			continue;
		gw_sb_sep(&bad, "; ");
		gw_sb_printf(&bad, "%s=%s: %s", s->var, v, DOCTOR_(s->effect));
		gw_sb_sep(&fix, "; ");
		gw_sb_printf(&fix, "unset %s", s->var);
	}
	if (bad.len) {
		doctor_result *r =
		    doctor_addf(c->r, "env.slowdown", DOCTOR_WARN, "%s", gw_sb_str(&bad));
		doctor_fixf(r, "%s (unless you are debugging)", gw_sb_str(&fix));
	} else {
		doctor_addf(c->r, "env.slowdown", DOCTOR_PASS,
		            "none of %s is set to slow GPU work down", gw_sb_str(&names));
	}
	gw_sb_free(&bad);
	gw_sb_free(&fix);
	gw_sb_free(&names);
}
