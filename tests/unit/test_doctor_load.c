/* load.*: processes on the GPUs, memory nobody owns, who holds a port, which GPU has room; env.*.
 */
#include <stdbool.h>
#include <stdint.h>
#include "test_doctor_common.h"

#define NET FX_DOCTOR "/net"
#define GIB 1073741824ULL

static fx_t *two_gpus(void)
{
	fx_t *f = fx_new();
	fx_nvml_ok(f);
	fx_gpu(f, "NVIDIA A100-SXM4-80GB", "GPU-aaaa1111-0000-0000-0000-000000000000",
	       "00000000:07:00.0");
	fx_gpu(f, "NVIDIA A100-SXM4-80GB", "GPU-bbbb2222-0000-0000-0000-000000000000",
	       "00000000:0F:00.0");
	/* pid 4242: alive; pid 5151: a zombie whose parent is 5000 */
	static const char cmd[] = "python\0train.py\0--batch-size\0"
	                          "64";
	fx_write_n(f, "proc/4242/cmdline", cmd, sizeof cmd); /* with the final NUL */
	fx_write(f, "proc/4242/stat", "4242 (python) S 1 4242 4242 0 -1 4194560 0 0\n");
	fx_write(f, "proc/5151/cmdline", "");
	fx_write(f, "proc/5151/stat", "5151 (python (worker)) Z 5000 5000 5000 0 -1 4227084\n");
	return f;
}

static void add_proc(doctor_gpu *g, unsigned pid, uint64_t mem)
{
	gpu_proc *p = &g->procs[g->nproc++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->type = GPU_PROC_COMPUTE;
	p->mem_ok = true;
	p->mem_bytes = mem;
}

static void used(doctor_gpu *g, double mib)
{
	fx_set(g, GM_MEM_USED, mib);
	fx_set(g, GM_MEM_FREE, 81559 - mib);
}

static void processes_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_gpus();
	const doctor_result *r = fx_run(f, doctor_check_load_processes);
	fx_expect(r, DOCTOR_PASS, "no processes on any of the 2 GPUs", NULL);
	add_proc(&f->m.gpu[0], 4242, 30 * GIB);
	add_proc(&f->m.gpu[0], 999, GIB / 2);
	r = fx_run(f, doctor_check_load_processes);
	fx_expect(r, DOCTOR_WARN,
	          "2 processes on the GPUs: GPU 0: pid 4242 root 'python train.py --batch-size 64' "
	          "30.0 GiB; GPU 0: pid 999 (no such process here) 512 MiB",
	          "run on a free GPU (CUDA_VISIBLE_DEVICES=1)");
	add_proc(&f->m.gpu[1], 4242, GIB);
	fx_expect(fx_run(f, doctor_check_load_processes), DOCTOR_WARN, "GPU 1: pid 4242",
	          "no GPU is free");
	fx_free(f);

	f = two_gpus(); /* in a container without --pid=host */
	fx_write(f, "proc/self/status", "Name:\tgpuwhy\nNSpid:\t81234\t7\n");
	add_proc(&f->m.gpu[1], 777001, 10 * GIB);
	fx_expect(fx_run(f, doctor_check_load_processes), DOCTOR_WARN,
	          "GPU 1: pid 777001 (not visible from this PID namespace) 10.0 GiB",
	          "CUDA_VISIBLE_DEVICES=0");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	fx_expect(fx_run(f, doctor_check_load_processes), DOCTOR_SKIP, "no GPUs", NULL);
	fx_free(f);
}

static void orphan_memory_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_gpus();
	used(&f->m.gpu[0], 30 * 1024 + 300); /* 300 MiB over the process: context overhead */
	add_proc(&f->m.gpu[0], 4242, 30 * GIB);
	used(&f->m.gpu[1], 0);
	fx_expect(fx_run(f, doctor_check_load_orphan_memory), DOCTOR_PASS,
	          "used memory belongs to listed processes on all 2 GPUs", NULL);

	used(&f->m.gpu[1], 20 * 1024);
	fx_expect(fx_run(f, doctor_check_load_orphan_memory), DOCTOR_WARN,
	          "GPU 1: 20.0 GiB of 20.0 GiB used is held by no listed process",
	          "sudo fuser -v /dev/nvidia*");
	fx_free(f);

	f = two_gpus();
	add_proc(&f->m.gpu[0], 999, 4 * GIB);
	used(&f->m.gpu[0], 4 * 1024);
	fx_expect(fx_run(f, doctor_check_load_orphan_memory), DOCTOR_WARN,
	          "GPU 0: pid 999 is gone but NVML still lists it with 4.0 GiB",
	          "nvidia-smi -r -i N");
	fx_free(f);

	f = two_gpus();
	add_proc(&f->m.gpu[1], 5151, 2 * GIB);
	used(&f->m.gpu[1], 2 * 1024);
	fx_expect(fx_run(f, doctor_check_load_orphan_memory), DOCTOR_WARN,
	          "GPU 1: pid 5151 is a zombie (defunct) still holding 2.0 GiB",
	          "its parent pid 5000 must reap it");
	fx_free(f);

	f = two_gpus(); /* per-process memory hidden (WDDM) and no zombies: nothing to say */
	for (int i = 0; i < 2; i++) {
		add_proc(&f->m.gpu[i], 4242, 0);
		f->m.gpu[i].procs[0].mem_ok = false;
		used(&f->m.gpu[i], 9000);
	}
	fx_expect(fx_run(f, doctor_check_load_orphan_memory), DOCTOR_SKIP, "not reported", NULL);
	fx_free(f);
}

static void ports_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_gpus();
	fx_expect(fx_run(f, doctor_check_load_ports), DOCTOR_SKIP, "no --port given", NULL);
	fx_copy(f, "proc/net/tcp", NET "/tcp");
	fx_copy(f, "proc/net/tcp6", NET "/tcp6");
	fx_symlink(f, "proc/4242/fd/0", "/dev/null");
	fx_symlink(f, "proc/4242/fd/5", "socket:[123456]");
	f->o.nports = 4;
	f->o.ports[0] = 7860;
	f->o.ports[1] = 9000;
	f->o.ports[2] = 8080;
	f->o.ports[3] = 7861;
	size_t before = f->r.n;
	doctor_ctx_init(&f->c, &f->p, &f->o, &f->m, &f->r);
	f->ctx_live = true;
	doctor_check_load_ports(&f->c);
	assert_int_equal(f->r.n, before + 4);
	fx_expect(&f->r.v[before], DOCTOR_WARN,
	          "port 7860 is taken: listened on at 0.0.0.0 by pid 4242 (root: 'python train.py "
	          "--batch-size 64')",
	          "kill 4242");
	fx_expect(&f->r.v[before + 1], DOCTOR_PASS, "port 9000 is free", NULL);
	fx_expect(&f->r.v[before + 2], DOCTOR_WARN,
	          "port 8080 is taken: listened on at :: by a process of uid 54321 (not visible",
	          "sudo ss -ltnp 'sport = :8080'");
	fx_expect(&f->r.v[before + 3], DOCTOR_WARN, "listened on at ::1 by a process of root",
	          NULL);
	fx_free(f);

	f = two_gpus(); /* /proc/net not readable */
	f->o.nports = 1;
	f->o.ports[0] = 7860;
	fx_expect(fx_run(f, doctor_check_load_ports), DOCTOR_SKIP, "port 7860: ", NULL);
	fx_free(f);
}

static void need_mem_outcomes(void **state)
{
	(void)state;
	fx_t *f = two_gpus();
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_SKIP, "no --need-mem given", NULL);
	f->o.need_mem_set = true;
	f->o.need_mem = 20 * GIB;
	used(&f->m.gpu[0], 70 * 1024);
	used(&f->m.gpu[1], 10 * 1024);
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_PASS,
	          "GPU 1 has 20.0 GiB free (CUDA_VISIBLE_DEVICES=1)", NULL);
	fx_env(f, "CUDA_VISIBLE_DEVICES=0");
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_WARN,
	          "GPU 1 has 20.0 GiB free, but CUDA_VISIBLE_DEVICES='0' selects none of them",
	          "CUDA_VISIBLE_DEVICES=1");
	used(&f->m.gpu[1], 70 * 1024);
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_FAIL,
	          "no GPU has 20.0 GiB free: GPU 0 9.6 GiB free of 79.6 GiB, GPU 1 9.6 GiB free",
	          "free memory (see load.processes");
	f->o.need_mem = 100 * GIB;
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_FAIL, "no GPU has 100.0 GiB free",
	          "shard the model");
	fx_free(f);

	f = fx_new();
	f->m.nvml = DOCTOR_NVML_NO_LIBRARY;
	f->o.need_mem_set = true;
	f->o.need_mem = GIB;
	fx_expect(fx_run(f, doctor_check_load_need_mem), DOCTOR_SKIP, "no GPUs", NULL);
	fx_free(f);
}

/* ---- env.* ---- */

static void gpu_hiding_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_PASS, "no variable hides GPUs",
	          NULL);
	fx_env(f, "TF_FORCE_GPU_ALLOW_GROWTH=true");
	fx_env(f, "NVIDIA_VISIBLE_DEVICES=void"); /* on a host it changes nothing */
	fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_PASS,
	          "set but harmless: TF_FORCE_GPU_ALLOW_GROWTH=true (TensorFlow memory growth only",
	          NULL);
	fx_env(f, "HIP_VISIBLE_DEVICES=-1");
	fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_WARN,
	          "HIP_VISIBLE_DEVICES='-1' hides AMD GPUs", "unset HIP_VISIBLE_DEVICES");
	fx_env(f, "CUDA_VISIBLE_DEVICES=-1");
	fx_env(f, "OLLAMA_LLM_LIBRARY=cpu_avx2");
	const doctor_result *r = fx_run(f, doctor_check_env_gpu_hiding);
	fx_expect(r, DOCTOR_FAIL,
	          "CUDA_VISIBLE_DEVICES='-1' hides every NVIDIA GPU from CUDA programs "
	          "(PyTorch, TensorFlow, JAX, ONNX Runtime, CuPy, Ollama",
	          "unset CUDA_VISIBLE_DEVICES");
	assert_non_null(
	    strstr(r->found, "OLLAMA_LLM_LIBRARY='cpu_avx2' Ollama: forced onto its CPU"));
	assert_non_null(strstr(r->fix, "sudo systemctl edit ollama.service"));
	assert_non_null(strstr(r->found, "harmless: TF_FORCE_GPU_ALLOW_GROWTH"));
	fx_free(f);

	static const char *const cases[][3] = {
	    {"OLLAMA_NUM_GPU=0", "Ollama: no model layers offloaded", "unset OLLAMA_NUM_GPU"},
	    {"JAX_PLATFORMS=cpu", "JAX: restricted to the CPU", "unset JAX_PLATFORMS"},
	    {"CUDA_VISIBLE_DEVICES=NoDevFiles", "hides every NVIDIA GPU", "unset"},
	    {"CUDA_VISIBLE_DEVICES=", "hides every NVIDIA GPU", "unset"},
	    {"LLAMA_ARG_N_GPU_LAYERS=0", "llama.cpp server", "LLAMA_ARG_N_GPU_LAYERS"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		f = fx_new();
		fx_env(f, cases[i][0]);
		fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_FAIL, cases[i][1],
		          cases[i][2]);
		fx_free(f);
	}

	f = fx_new(); /* not hiding: a JAX list with cuda, a CUDA list */
	fx_env(f, "JAX_PLATFORMS=cuda,cpu");
	fx_env(f, "CUDA_VISIBLE_DEVICES=0,1");
	fx_env(f, "OLLAMA_NUM_GPU=99");
	fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_PASS, "no variable hides GPUs",
	          NULL);
	fx_free(f);

	f = fx_new(); /* in a container NVIDIA_VISIBLE_DEVICES=void means nothing injected */
	fx_write(f, "fs/.dockerenv", "");
	fx_env(f, "NVIDIA_VISIBLE_DEVICES=void");
	fx_expect(fx_run(f, doctor_check_env_gpu_hiding), DOCTOR_FAIL, "no GPU is injected",
	          "--gpus all");
	fx_free(f);
}

static void slowdown_outcomes(void **state)
{
	(void)state;
	fx_t *f = fx_new();
	fx_env(f, "CUDA_LAUNCH_BLOCKING=0");
	fx_env(f, "NCCL_P2P_DISABLE=0");
	fx_env(f, "NCCL_P2P_LEVEL=NVL");
	fx_expect(fx_run(f, doctor_check_env_slowdown), DOCTOR_PASS,
	          "none of CUDA_LAUNCH_BLOCKING, CUDA_CACHE_DISABLE", NULL);
	fx_free(f);

	f = fx_new();
	fx_env(f, "CUDA_LAUNCH_BLOCKING=1");
	fx_env(f, "NCCL_P2P_LEVEL=LOC");
	fx_env(f, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25");
	const doctor_result *r = fx_run(f, doctor_check_env_slowdown);
	fx_expect(r, DOCTOR_WARN, "CUDA_LAUNCH_BLOCKING=1: every kernel launch waits",
	          "unset CUDA_LAUNCH_BLOCKING; unset NCCL_P2P_LEVEL");
	assert_non_null(strstr(r->found, "NCCL_P2P_LEVEL=LOC"));
	assert_non_null(strstr(r->found, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"));
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(processes_outcomes),  cmocka_unit_test(orphan_memory_outcomes),
	    cmocka_unit_test(ports_outcomes),      cmocka_unit_test(need_mem_outcomes),
	    cmocka_unit_test(gpu_hiding_outcomes), cmocka_unit_test(slowdown_outcomes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
