/*
 * advice.c - every advice text in one place: what to change and how to
 * verify it, per finding (and per case: topology, kind of throttling), with
 * a latency-goal variant where online serving calls for different advice:
 * there, moderate utilization is normal and the levers are batching windows
 * and queueing, not feeding the GPU harder.
 */
#include <string.h>

#include "diagnose/diag_int.h"

/* A job process stopped or held by a debugger: the same advice whatever the GPU holds. */
#define STOPPED_CHANGE                                                                             \
	N_("A process of the job is stopped (SIGSTOP, Ctrl-Z, or a debugger at a breakpoint): it " \
	   "keeps its GPU memory and computes nothing. Resume it (kill -CONT PID, or fg in its "   \
	   "shell), or let the debugger continue or detach; if it must stay paused, release its "  \
	   "GPU memory first (delete the model and tensors, then torch.cuda.empty_cache()) so "    \
	   "that other work can use the GPU.")
#define STOPPED_VERIFY                                                                             \
	N_("Record again: no process of the job in state T or t, and utilization rises while the " \
	   "memory is held (or the memory is released while it waits).")

typedef struct {
	diag_rule rule;
	const char *variant; /* the case ("pcie", "thermal", ...), NULL for the rule's own advice */
	const char *change, *verify;
	const char *change_latency, *verify_latency; /* NULL: same as throughput */
	/* The GPUs' vendor the text is for, where it names a vendor's tools: "nvidia",
	 * "amd", or "" for GPUs of unknown or mixed vendors (worded without either's
	 * tools); NULL: any vendor. */
	const char *vendor;
} advice_entry;

/*
 * The texts that name a vendor's tools, for AMD GPUs (amd-smi, rocm-smi, the
 * amdgpu driver) and for GPUs of unknown vendor: an older recording, a mixed
 * set. Their NVIDIA texts are in the table below.
 */
#define V_AMD(rule, variant, change, verify)                                                       \
	{                                                                                          \
		rule, variant, change, verify, NULL, NULL, "amd"                                   \
	}
#define V_ANY(rule, variant, change, verify)                                                       \
	{                                                                                          \
		rule, variant, change, verify, NULL, NULL, ""                                      \
	}

static const advice_entry advice_vendor[] = {
    V_AMD(DIAG_R_SYNC_WAIT, "pcie",
          N_("The job's GPUs synchronise over PCIe, outside one XGMI hive, so every all-reduce "
             "(RCCL) waits on the bus. Run the job on GPUs of one hive (XGMI in `gpuwhy topo`; "
             "select them with HIP_VISIBLE_DEVICES), or communicate less: gradient "
             "accumulation, a larger per-GPU batch, bf16 gradients/compression, DDP "
             "bucket_cap_mb tuned so communication overlaps the backward pass. Also even out "
             "the straggler's work."),
          N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
             "before.gpuwhy after.gpuwhy`: the waiting GPUs' shortfall against the straggler "
             "must shrink and step time p50 drop; on GPUs of one XGMI hive the waits should "
             "nearly vanish.")),
    V_AMD(DIAG_R_THROTTLED, "power",
          N_("The board is at its power cap: it is working as hard as its budget allows. If "
             "clocks swing with the cap, a fixed, slightly lower cap (rocm-smi "
             "--setpoweroverdrive WATTS, as root) gives steadier throughput; check that the cap "
             "was not lowered by mistake (power.limit, rocm-smi --resetpoweroverdrive restores "
             "the board's default)."),
          N_("amd-smi metric --power --clock during the run; in a new recording, SM clocks "
             "steady and step time p90/p50 closer.")),
    V_ANY(DIAG_R_THROTTLED, "power",
          N_("The board is at its power cap: it is working as hard as its budget allows. If "
             "clocks swing with the cap, a fixed, slightly lower power limit (set with the GPU "
             "vendor's management tool) gives steadier throughput; check that the limit was not "
             "lowered by mistake (power.limit against the board's default)."),
          N_("Watch power and clocks during the run (gpuwhy top); in a new recording, SM clocks "
             "steady and step time p90/p50 closer.")),
    V_AMD(DIAG_R_THROTTLED, "thermal",
          N_("The GPU slows down because it is too hot: clean dust from heatsinks, check fans and "
             "airflow (blanking panels, spacing between cards, inlet temperature); a lower power "
             "cap (rocm-smi --setpoweroverdrive WATTS) trades a little peak speed for no thermal "
             "slowdown. Fan control on consumer cards is often owned by firmware."),
          N_("amd-smi metric --temperature --clock under load; in a new recording, no thermal "
             "reason in busy samples and temperature below the slowdown threshold with margin.")),
    V_ANY(DIAG_R_THROTTLED, "thermal",
          N_("The GPU slows down because it is too hot: clean dust from heatsinks, check fans and "
             "airflow (blanking panels, spacing between cards, inlet temperature); a lower power "
             "limit trades a little peak speed for no thermal slowdown. Fan control on consumer "
             "cards is often owned by firmware."),
          N_("Watch temperature and clocks under load (gpuwhy top); in a new recording, no "
             "thermal reason in busy samples and temperature below the slowdown threshold with "
             "margin.")),
    V_AMD(DIAG_R_THROTTLED, "hw",
          N_("Hardware slowdown (a voltage regulator too hot, or an external \"processor hot\" "
             "signal) holds the clocks down: check the power supply's capacity, the GPU's power "
             "connectors and cables, the board's cooling and the system's power events; this is "
             "not fixed by software settings."),
          N_("In a new recording, no hardware slowdown in busy samples.")),
    V_ANY(DIAG_R_THROTTLED, "hw",
          N_("Hardware slowdown (power brake or an external signal) holds the clocks down: check "
             "the power supply's capacity and the GPU's power connectors and cables, and the "
             "system's power events; this is not fixed by software settings."),
          N_("In a new recording, no hardware slowdown in busy samples.")),
    V_AMD(DIAG_R_PCIE_DEGRADED, NULL,
          N_("The PCIe link runs below its maximum under load: reseat the card, check the slot (a "
             "x16 card in a x8 slot), riser and cables, the GPU's power supply and the BIOS PCIe "
             "settings. `amd-smi metric --pcie` shows the link and its errors, `lspci -vv -s BUS` "
             "the link status (LnkSta against LnkCap; on most Radeon cards the slot's link is on "
             "the bridge above the GPU) and `dmesg | grep -i pcie` AER errors. To test stability, "
             "set the slot to Gen3 in the BIOS before replacing the card."),
          N_("In a new recording: pcie.link.gen/width current equal to max while busy.")),
    V_ANY(DIAG_R_PCIE_DEGRADED, NULL,
          N_("The PCIe link runs below its maximum under load or retries packets: reseat the "
             "card, check the slot (a x16 card in a x8 slot), riser and cables, the GPU's power "
             "supply and the BIOS PCIe settings. `lspci -vv -s BUS` shows the link status (LnkSta "
             "against LnkCap) and `dmesg | grep -i pcie` AER errors. To test stability, set the "
             "slot to Gen3 in the BIOS before replacing the card."),
          N_("In a new recording: pcie.link.gen/width current equal to max while busy, and the "
             "replay counter flat.")),
    V_AMD(DIAG_R_CONTENTION, NULL,
          N_("Other processes share the job's GPUs. Give the job GPUs of its own "
             "(HIP_VISIBLE_DEVICES, a scheduler such as Slurm --gres=gpu:N, or `gpuwhy queue`), "
             "or stop the other work."),
          N_("In a new recording, no foreign process on the job's GPUs and step time p50 lower in "
             "`gpuwhy compare`.")),
    V_ANY(DIAG_R_CONTENTION, NULL,
          N_("Other processes share the job's GPUs. Give the job GPUs of its own "
             "(CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES, a scheduler such as Slurm "
             "--gres=gpu:N, or `gpuwhy queue`), or stop the other work."),
          N_("In a new recording, no foreign process on the job's GPUs and step time p50 lower in "
             "`gpuwhy compare`.")),
    /* PyTorch's ROCm builds keep the torch.cuda names: is_available() is True on an AMD GPU
     * and torch.version.hip, not torch.version.cuda, holds the version */
    V_AMD(DIAG_R_NOT_ON_GPU, NULL,
          N_("Make the job see and use the GPU: check that HIP_VISIBLE_DEVICES is not empty or "
             "-1; that the framework is a ROCm build (python -c 'import torch; "
             "print(torch.cuda.is_available(), torch.version.hip)' must print True and a "
             "version: ROCm builds of PyTorch answer through torch.cuda; a CPU-only wheel prints "
             "None); that the model and every batch are moved to the device (model.to('cuda'), "
             "x.to(device)); that the job's user may open /dev/kfd and /dev/dri/renderD* (groups "
             "render and video); in a container, pass them in (docker run --device=/dev/kfd "
             "--device=/dev/dri)."),
          N_("Run the check above in the job's own environment, then record again: step 1 of the "
             "chain "
             "must show the job's PID on a GPU and utilization must rise.")),
    V_ANY(DIAG_R_NOT_ON_GPU, NULL,
          N_("Make the job see and use the GPU: check that the variable that selects GPUs "
             "(CUDA_VISIBLE_DEVICES on NVIDIA, HIP_VISIBLE_DEVICES on AMD) is not empty or -1; "
             "that the framework is a GPU build (python -c 'import torch; "
             "print(torch.cuda.is_available(), torch.version.cuda, torch.version.hip)' must "
             "print True and one version: ROCm builds answer through torch.cuda too; a CPU-only "
             "wheel prints None for both); that the model and every batch are moved to the "
             "device (model.to('cuda'), x.to(device)); in a container, give it the GPUs the way "
             "their vendor's container documentation says."),
          N_("Run the check above in the job's own environment, then record again: step 1 of the "
             "chain "
             "must show the job's PID on a GPU and utilization must rise.")),
    V_AMD(DIAG_R_IMBALANCE, NULL,
          N_("Only some of the job's GPUs compute. Start one process per GPU (torchrun "
             "--nproc_per_node=N train.py) with torch.cuda.set_device(local_rank) (ROCm builds "
             "of PyTorch keep the torch.cuda names) and DistributedDataParallel; DataParallel in "
             "one process concentrates work and memory on GPU 0. Check that HIP_VISIBLE_DEVICES "
             "lists the GPUs you mean to use."),
          N_("During the run `gpuwhy status` shows one process per GPU with similar utilization; "
             "`gpuwhy compare` shows step time falling.")),
    V_ANY(DIAG_R_IMBALANCE, NULL,
          N_("Only some of the job's GPUs compute. Start one process per GPU (torchrun "
             "--nproc_per_node=N train.py) with torch.cuda.set_device(local_rank) and "
             "DistributedDataParallel; DataParallel in one process concentrates work and memory "
             "on GPU 0. Check that the variable that selects GPUs (CUDA_VISIBLE_DEVICES on "
             "NVIDIA, HIP_VISIBLE_DEVICES on AMD) lists the GPUs you mean to use."),
          N_("During the run `gpuwhy status` shows one process per GPU with similar utilization; "
             "`gpuwhy compare` shows step time falling.")),
    V_AMD(
        DIAG_R_ALL_ON_GPU0, NULL,
        N_("Every process of the job landed on the same GPU: the ranks do not select their "
           "device. Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before creating "
           "tensors or the process group (ROCm builds of PyTorch keep the torch.cuda names), "
           "use device=f'cuda:{local_rank}', and list the GPUs in HIP_VISIBLE_DEVICES "
           "(HIP_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 train.py)."),
        N_("During the run `gpuwhy status` shows one process per GPU; each GPU's utilization rises "
           "and "
           "GPU 0's memory drops.")),
    V_ANY(
        DIAG_R_ALL_ON_GPU0, NULL,
        N_("Every process of the job landed on the same GPU: the ranks do not select their "
           "device. Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before creating "
           "tensors or the process group, use device=f'cuda:{local_rank}', and list the GPUs "
           "in the variable that selects them (CUDA_VISIBLE_DEVICES on NVIDIA, "
           "HIP_VISIBLE_DEVICES on AMD), e.g. CUDA_VISIBLE_DEVICES=0,1 torchrun "
           "--nproc_per_node=2 train.py."),
        N_("During the run `gpuwhy status` shows one process per GPU; each GPU's utilization rises "
           "and "
           "GPU 0's memory drops.")),
    V_AMD(DIAG_R_CONTENTION, "gone",
          N_("GPU memory is held by processes that no longer exist here: the owner is usually "
             "still running somewhere (a zombie or orphaned child, a container without "
             "--pid=host, a stuck DataLoader worker). Find it with `gpuwhy status` or `amd-smi "
             "process`, `lsof /dev/kfd /dev/dri/renderD*`, and end it; memory is freed when the "
             "owning process ends."),
          N_("`gpuwhy status` shows the memory released and no unknown PID on the GPU.")),
    V_ANY(DIAG_R_CONTENTION, "gone",
          N_("GPU memory is held by processes that no longer exist here: the owner is usually "
             "still running somewhere (a zombie or orphaned child, a container without "
             "--pid=host, a stuck DataLoader worker). Find it with `gpuwhy status` and `lsof` "
             "on the GPU's device files, and end it; memory is freed when the owning process "
             "ends."),
          N_("`gpuwhy status` shows the memory released and no unknown PID on the GPU.")),
    V_AMD(DIAG_R_GPU_FAULT, NULL,
          N_("The GPU reported a driver fault or left the driver: the note gives each amdgpu "
             "fault (a ring timeout, a reset) and its time. Read the kernel log around that time "
             "(`dmesg | grep amdgpu`: ring timeouts, \"GPU reset\" lines), check power and "
             "cooling, reset the GPU (as root: amd-smi reset --gpureset -g N, or rocm-smi "
             "--gpureset -d N, or reboot) and rerun. A reset that failed, a card that left the "
             "bus, or faults that recur with different programs call for taking the GPU out of "
             "service."),
          N_("Rerun the job: no amdgpu_fault or gpu_lost event, RAS error counts flat.")),
    V_ANY(DIAG_R_GPU_FAULT, NULL,
          N_("The GPU reported a hardware or driver error or left the driver: the note gives "
             "each event and its time. Read the kernel log around that time (dmesg), check power "
             "and cooling, reset the GPU with its vendor's management tool (or reboot) and "
             "rerun; a GPU that falls off the bus again, or uncorrectable memory errors that "
             "recur, call for taking it out of service."),
          N_("Rerun the job: no fault or gpu_lost event, ECC counters flat.")),
    V_AMD(DIAG_R_NOT_CHECKED, "amd-signals",
          N_("Nothing to change in the job for this: these rules need signals only NVIDIA's "
             "driver gives. Judge the kernels by the job's step time and a profiler (rocprof, "
             "or the PyTorch profiler), the power cap by power.limit against the board's "
             "default (rocm-smi --showmaxpower), and faults by the kernel log's amdgpu lines "
             "(gpu-fault reads them)."),
          N_("Record the job's step time (gpuwhy run) and compare runs with `gpuwhy compare`.")),
    V_AMD(DIAG_R_POWER_CAPPED, NULL,
          N_("Someone set this GPU's power cap below its default (rocm-smi --setpoweroverdrive, "
             "a site policy, a power budget), and under load the cap holds the clocks down. If "
             "the cap is not on purpose, restore it: rocm-smi -d N --resetpoweroverdrive (as "
             "root), or ask the cluster admins; if it is, expect the slower steps and size the "
             "job for it."),
          N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
             "before.gpuwhy after.gpuwhy`: power.limit at its default, clocks.current.sm near "
             "clocks.max.sm under load, step time down.")),
    V_ANY(DIAG_R_POWER_CAPPED, NULL,
          N_("Someone set this GPU's power limit below its default (the vendor's management "
             "tool, a site policy, a power budget), and under load the cap holds the clocks "
             "down. If the cap is not on purpose, restore the default limit (as root), or ask "
             "the cluster admins; if it is, expect the slower steps and size the job for it."),
          N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
             "before.gpuwhy after.gpuwhy`: power.limit at its default, clocks.current.sm near "
             "clocks.max.sm under load, step time down.")),
};

static const advice_entry advice[] = {
    {DIAG_R_NOT_ON_GPU, NULL,
     N_("Make the job see and use the GPU: check that CUDA_VISIBLE_DEVICES is not empty or -1; "
        "that "
        "the framework is a CUDA build (python -c 'import torch; print(torch.cuda.is_available(), "
        "torch.version.cuda)' must print True and a version; a CPU-only wheel prints None); that "
        "the "
        "model and every batch are moved to the device (model.to('cuda'), x.to(device)); in a "
        "container, start it with the NVIDIA runtime (docker run --gpus all) and check "
        "`nvidia-ctk cdi list`."),
     N_("Run the check above in the job's own environment, then record again: step 1 of the chain "
        "must show the job's PID on a GPU and utilization must rise."),
     NULL, NULL, "nvidia"},
    {DIAG_R_DATA_STARVED, NULL,
     N_("Feed the GPU faster than it computes: give the DataLoader worker processes "
        "(num_workers=2, 4, 8 ... up to the free cores), prefetch_factor=4, pin_memory=True and "
        "persistent_workers=True; move heavy decoding and augmentation to the GPU or do it once "
        "offline; when iowait or disk reads are high, put the data set on local SSD or in RAM "
        "(page cache), use a packed format (WebDataset/TFRecord shards) instead of many small "
        "files. More workers stop helping once the disk is at its limit."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "step time p50 must fall, the GPU's idle share drop below the threshold and "
        "the busiest core leave 100 %. Try worker counts one at a time."),
     N_("Requests wait on CPU-side preprocessing (decoding, tokenisation, resizing) while the GPU "
        "idles: run preprocessing in a pool of worker processes or on the GPU, keep payloads "
        "compact, and queue at the API layer instead of in front of a saturated core."),
     N_("Measure P99 latency at the same request rate before and after; in a new recording the "
        "busiest core must no longer sit at 100 % while the GPU idles."),
     NULL},
    {DIAG_R_LAUNCH_BOUND, NULL,
     N_("Give each kernel more work: a larger batch (with gradient accumulation if memory is "
        "short), mixed precision, fused elementwise operations (torch.compile), CUDA graphs for "
        "the steady-state step (torch.compile mode='reduce-overhead'), no per-element Python loops "
        "and no .item()/.cpu() synchronisations inside the step."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "SM activity and power must rise toward the limit and step time p50 fall. A "
        "trace (nsys profile --trace=cuda,nvtx) shows fewer, longer kernels."),
     N_("Each request runs many tiny kernels: capture the inference graph with CUDA graphs or "
        "build "
        "an optimised engine (TensorRT: trtexec --onnx=model.onnx --fp16, ONNX Runtime) so layers "
        "fuse; use dynamic batching with a short queue window so one launch carries several "
        "requests."),
     N_("Compare P99 latency and throughput at the same request rate; SM activity per request "
        "must rise."),
     NULL},
    {DIAG_R_SYNC_WAIT, NULL,
     N_("The GPUs wait on one another at synchronisation. Find the straggler's extra work (uneven "
        "batch or sequence lengths per rank, its data loader, logging or checkpointing on one rank "
        "only) and make synchronisation cheaper (gradient accumulation to sync less often, DDP "
        "bucket sizes that overlap communication with backward). Check the link with `gpuwhy "
        "topo`."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "the waiting GPUs' shortfall against the straggler (SM activity, "
        "power or utilization) must shrink and step time p50 drop."),
     NULL, NULL, NULL},
    {DIAG_R_SYNC_WAIT, "pcie",
     N_("The job's GPUs synchronise over PCIe, without NVLink, so every all-reduce waits on the "
        "bus. "
        "Run the job on GPUs joined by NVLink (NV# in `gpuwhy topo`; select them with "
        "CUDA_VISIBLE_DEVICES), or communicate less: gradient accumulation, a larger per-GPU "
        "batch, bf16 gradients/compression, DDP bucket_cap_mb tuned so communication overlaps the "
        "backward pass. Also even out the straggler's work."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "the waiting GPUs' shortfall against the straggler must shrink and step "
        "time p50 drop; on NVLink GPUs the waits should nearly vanish."),
     NULL, NULL, NULL},
    {DIAG_R_SYNC_WAIT, "xgmi",
     N_("The GPUs are joined by XGMI (one hive), so the wait is imbalance, not bandwidth: find "
        "why the straggler is slower - uneven batch or sequence lengths per rank, its data loader "
        "starving, that GPU throttled, or one rank doing extra work (evaluation, logging, "
        "checkpointing on rank 0 only)."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: the GPUs' power (or utilization) must line up and step "
        "time p50 drop; utilization alone may not show it, as waiting collectives spin."),
     NULL, NULL, NULL},
    {DIAG_R_SYNC_WAIT, "nvlink",
     N_("The GPUs are joined by NVLink, so the wait is imbalance, not bandwidth: find why the "
        "straggler is slower - uneven batch or sequence lengths per rank, its data loader "
        "starving, "
        "that GPU throttled (see throttled), or one rank doing extra work (evaluation, logging, "
        "checkpointing on rank 0 only)."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "the GPUs' SM activity (or power) must line up and step time p50 drop; "
        "utilization alone may not show it, as waiting collectives spin."),
     NULL, NULL, NULL},
    {DIAG_R_MEMORY_BOUND, NULL,
     N_("Kernels wait on device memory. Move fewer bytes: mixed precision (bf16/fp16, fp8 where "
        "supported), fused kernels (torch.compile, fused optimizers, FlashAttention-style "
        "attention), channels_last for convolutions, no needless copies and casts. A larger batch "
        "does not help a bandwidth-bound kernel."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "step time p50 must fall; DRAM activity per step drops while SM activity "
        "rises."),
     N_("Inference kernels are bandwidth-bound (typical for small-batch decoding): lower-precision "
        "weights (fp16/int8/fp8 quantisation) and batching requests raise work per byte read."),
     N_("Compare P99 latency and requests per second at the same load."), NULL},
    {DIAG_R_MEMORY_FULL_IDLE, NULL,
     N_("Memory is nearly full but little is computed: weights and cached tensors wait for work. "
        "Find the stall first (see data-starved, sync-wait, the chain below); if the batch was "
        "raised only to fill memory, go back to a batch that fits with margin; check what holds "
        "memory (a second copy of the model, tensors kept for logging, the caching allocator) with "
        "torch.cuda.memory_summary()."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "utilization must rise at the same or lower memory peak."),
     N_("A serving process keeps its model resident and computes per request: normal while latency "
        "meets its target. If several models share the GPU, unload or offload idle ones."),
     N_("Watch P99 latency and memory headroom under peak load."), NULL},
    {DIAG_R_MEMORY_FULL_IDLE, "stopped", STOPPED_CHANGE, STOPPED_VERIFY, NULL, NULL, NULL},
    {DIAG_R_OOM, NULL,
     N_("Lower the memory peak: a smaller batch with gradient accumulation to keep the effective "
        "batch, mixed precision, activation (gradient) checkpointing, shorter sequences or lower "
        "resolution, model offload or sharding (FSDP/ZeRO) for very large models. Print "
        "torch.cuda.max_memory_allocated() per step to find where the peak is; "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduces fragmentation."),
     /* xgettext:no-c-format */
     N_("Record again: no oom event, and the memory peak at least 10 % under capacity."),
     N_("Lower the peak per request: cap batch size and sequence/context length, use fp16/int8 "
        "weights, offload unused models; in image generation lower resolution or batch."),
     /* xgettext:no-c-format */
     N_("Replay the heaviest requests: no oom event and memory peak under 90 % of capacity."),
     NULL},
    {DIAG_R_OOM, "host",
     N_("The host ran out of memory: fewer DataLoader workers (each holds a copy of the data set "
        "object), a smaller prefetch_factor, memory-mapped data sets instead of loading them into "
        "RAM, fewer pinned buffers; or more RAM."),
     N_("Record again: no oom event, mem.available never near 0 and no swapping."), NULL, NULL,
     NULL},
    {DIAG_R_OOM_RISK, NULL,
     N_("Leave headroom: a longer sequence, a larger image or fragmentation will run out of memory "
        "at this peak. Lower the batch a step (keep the effective batch with gradient "
        "accumulation), use activation checkpointing or mixed precision, and set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation."),
     /* xgettext:no-c-format */
     N_("Record again with the largest inputs the job will see: the peak must stay under 90 % of "
        "capacity."),
     N_("Bound the largest request (max batch, max tokens or resolution) so the peak stays under "
        "capacity with margin under concurrent load."),
     N_("Replay peak traffic and watch the memory peak."), NULL},
    {DIAG_R_THROTTLED, "power",
     N_("The board is at its power cap: it is working as hard as its budget allows. If clocks "
        "swing "
        "with the cap, a fixed, slightly lower power limit (nvidia-smi -pl WATTS, data-center "
        "boards) gives steadier throughput; check that the limit was not lowered by mistake "
        "(power.limit against power.default_limit)."),
     N_("nvidia-smi -q -d PERFORMANCE,POWER during the run; in a new recording, SM clocks steady "
        "and step time p90/p50 closer."),
     NULL, NULL, "nvidia"},
    {DIAG_R_THROTTLED, "thermal",
     N_("The GPU slows down because it is too hot: clean dust from heatsinks, check fans and "
        "airflow (blanking panels, spacing between cards, inlet temperature); a lower power limit "
        "(nvidia-smi -pl) trades a little peak speed for no thermal slowdown. Fan control on "
        "consumer cards is often owned by firmware."),
     N_("nvidia-smi -q -d CLOCK,TEMPERATURE under load; in a new recording, no thermal reason in "
        "busy samples and temperature below the slowdown threshold with margin."),
     NULL, NULL, "nvidia"},
    {DIAG_R_THROTTLED, "hw",
     N_("Hardware slowdown (power brake or an external signal) halves the clocks: check the power "
        "supply's capacity and the GPU's power connectors and cables, and the system's power "
        "events; this is not fixed by software settings."),
     N_("nvidia-smi -q -d PERFORMANCE shows the active reasons; in a new recording, no hardware "
        "slowdown in busy samples."),
     NULL, NULL, "nvidia"},
    {DIAG_R_PCIE_DEGRADED, NULL,
     N_("The PCIe link runs below its maximum under load or retries packets: reseat the card, "
        "check "
        "the slot (a x16 card in a x8 slot), riser and cables, the GPU's power supply and the BIOS "
        "PCIe settings. `nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current,"
        "pcie.link.gen.max,pcie.link.width.max --format=csv` shows current against max, the PCI "
        "section of `nvidia-smi -q` the replays, `lspci -vv -s BUS` the link status (LnkSta "
        "against LnkCap) and `dmesg | grep -i pcie` AER errors. To test stability, set the slot "
        "to Gen3 in the BIOS before replacing the card."),
     N_("In a new recording: pcie.link.gen/width current equal to max while busy, and the replay "
        "counter flat."),
     NULL, NULL, "nvidia"},
    {DIAG_R_IMBALANCE, NULL,
     N_("Only some of the job's GPUs compute. Start one process per GPU (torchrun "
        "--nproc_per_node=N train.py) with torch.cuda.set_device(local_rank) and "
        "DistributedDataParallel; DataParallel in one process concentrates work and memory on GPU "
        "0. Check that CUDA_VISIBLE_DEVICES lists the GPUs you mean to use."),
     N_("During the run `gpuwhy status` shows one process per GPU with similar utilization; "
        "`gpuwhy compare` shows step time falling."),
     NULL, NULL, "nvidia"},
    {DIAG_R_ALL_ON_GPU0, NULL,
     N_("Every process of the job landed on the same GPU: the ranks do not select their device. "
        "Call "
        "torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before creating tensors or the "
        "process "
        "group, use device=f'cuda:{local_rank}', and list the GPUs in CUDA_VISIBLE_DEVICES "
        "(CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=2 train.py)."),
     N_("During the run `gpuwhy status` shows one process per GPU; each GPU's utilization rises "
        "and "
        "GPU 0's memory drops."),
     NULL, NULL, "nvidia"},
    {DIAG_R_CONTENTION, NULL,
     N_("Other processes share the job's GPUs. Give the job GPUs of its own (CUDA_VISIBLE_DEVICES, "
        "a "
        "scheduler such as Slurm --gres=gpu:N, or `gpuwhy queue`), or stop the other work; compute "
        "mode Exclusive_Process (nvidia-smi -c) keeps a second process off a GPU."),
     N_("In a new recording, no foreign process on the job's GPUs and step time p50 lower in "
        "`gpuwhy compare`."),
     NULL, NULL, "nvidia"},
    {DIAG_R_CONTENTION, "gone",
     N_("GPU memory is held by processes that no longer exist here: the owner is usually still "
        "running somewhere (a zombie or orphaned child, a container without --pid=host, a stuck "
        "DataLoader worker). Find it with `gpuwhy status` or `nvidia-smi`, `lsof /dev/nvidia*`, "
        "and "
        "end it; memory is freed when the owning process ends."),
     N_("`gpuwhy status` shows the memory released and no unknown PID on the GPU."), NULL, NULL,
     "nvidia"},
    {DIAG_R_HOST_SWAP, NULL,
     N_("The host swapped: page-ins stall the data pipeline and pinned-memory allocation. Use less "
        "host memory (fewer DataLoader workers, a smaller prefetch_factor, memory-mapped data "
        "instead of loading it, fewer pinned buffers) or add RAM."),
     N_("In a new recording swap.in and swap.out stay at 0 and mem.available keeps a margin."),
     NULL, NULL, NULL},
    {DIAG_R_GPU_FAULT, NULL,
     N_("The GPU reported a hardware or driver error: the note gives each Xid's number, time, "
        "meaning and first action. Read `dmesg` around that time (NVRM: Xid lines), check power "
        "and "
        "cooling, reset the GPU (nvidia-smi -r, or reboot) and rerun; Xid 79 (fell off the bus), "
        "48/95 (uncorrectable ECC) and 64 (row-remap failure), when they recur, call for taking "
        "the "
        "GPU out of service."),
     N_("Rerun the job: no Xid or gpu_lost event, ECC counters flat."), NULL, NULL, "nvidia"},
    {DIAG_R_GPU_FAULT, "xid-app",
     N_("The Xid in the note (13, 31, 43, 45 and the like) is most often the application's own "
        "fault: an illegal memory access or an out-of-range index in a kernel. Rerun with "
        "CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer to find the kernel; if the same Xid recurs "
        "with different programs, treat it as hardware (reset the GPU, check dmesg)."),
     N_("Rerun the job: no Xid event in the recording."), NULL, NULL, NULL},
    {DIAG_R_POWER_CAPPED, NULL,
     N_("Someone set this GPU's power limit below its default (nvidia-smi -pl, a site policy, a "
        "power budget), and under load the cap holds the clocks down. If the cap is not on "
        "purpose, restore it: nvidia-smi -i N -pl DEFAULT (as root; check nvidia-smi -q -d POWER "
        "for the default and the allowed range), or ask the cluster admins; if it is, expect the "
        "slower steps and size the job for it."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "power.limit at its default, clocks.current.sm near clocks.max.sm under load, "
        "step time down."),
     NULL, NULL, "nvidia"},
    {DIAG_R_STEP_BURSTS, NULL,
     N_("Make the job write each step line as it happens: run Python unbuffered "
        "(PYTHONUNBUFFERED=1, "
        "or python -u), flush after each step (print(..., flush=True)), or write \"step N\" to the "
        "file descriptor `gpuwhy run` passes in $GPUWHY_STEP_FD, which it reads unbuffered."),
     N_("Record again: the report's step line shows p50 and p90 near the mean step time and no "
        "step-bursts finding."),
     NULL, NULL, NULL},
    {DIAG_R_HOST_CONTENTION, NULL,
     N_("Other processes, not the job, load the host's CPUs (or its storage) while the GPU waits: "
        "the note names the busiest. Move them elsewhere or stop them; run the job where the cores "
        "are free (a dedicated node, a Slurm allocation with --exclusive or enough "
        "--cpus-per-task); "
        "or pin the job's data path to cores of its own (taskset, numactl --physcpubind, cgroup "
        "cpusets) so the neighbours cannot take them. More DataLoader workers do not help while "
        "the "
        "cores are taken."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "with the other load gone, GPU idle share and step time down; cpu.busy.max "
        "no longer saturated during the gaps."),
     NULL, NULL, NULL},
    {DIAG_R_LOW_UTILIZATION, "gpu-only",
     N_("The GPU idles often and its own counters do not say why; the host was not in this "
        "input. Record the job with gpuwhy (gpuwhy run -- CMD): saturated CPU cores or I/O wait "
        "during the gaps mean a data-starved job (more loader workers, pinned memory, "
        "prefetching); without them, look at the gaps with a profiler (nsys profile "
        "--trace=cuda,nvtx, or the PyTorch profiler)."),
     N_("Record the same job with gpuwhy run, then compare: utilization must rise and step time "
        "p50 fall."),
     NULL, NULL, NULL},
    {DIAG_R_LOW_UTILIZATION, NULL,
     N_("The GPU idles often but no host or GPU limit explains it. Look at the gaps with a "
        "profiler "
        "(nsys profile --trace=cuda,nvtx, or the PyTorch profiler): host-device synchronisations "
        "(.item(), .cpu(), printing tensors), evaluation or checkpoint phases, Python overhead "
        "between steps; raise the batch size if memory allows."),
     N_("Record the same job again after changing one thing only, then run `gpuwhy compare "
        "before.gpuwhy after.gpuwhy`: "
        "utilization must rise and step time p50 fall."),
     N_("Moderate utilization is normal for online serving that keeps headroom for bursts. If P99 "
        "latency meets its target, nothing needs to change. To serve more per GPU, batch requests "
        "in a short window (Triton dynamic_batching with max_queue_delay_microseconds of a few "
        "hundred and preferred_batch_size) or use continuous batching (vLLM), and raise it only "
        "while P99 stays within target; do not queue long."),
     N_("Load-test at the target request rate: P99 latency within target, throughput per GPU up."),
     NULL},
    {DIAG_R_LOW_UTILIZATION, "stopped", STOPPED_CHANGE, STOPPED_VERIFY, NULL, NULL, NULL},
    {DIAG_R_MIG_NO_UTILIZATION, NULL,
     N_("Judge a MIG instance by what it does report: its memory (gpuwhy status, or the exporter's "
        "DCGM_FI_DEV_FB_USED with GPU_I_ID), the job's own step time, and profiling-grade activity "
        "(DCGM's per-instance DCGM_FI_PROF_* or Nsight Systems inside the instance). To let "
        "gpuwhy's utilization rules judge the job, run it on a GPU with MIG off."),
     N_("Record the job's step time (gpuwhy run) and compare runs with `gpuwhy compare`; step "
        "time, "
        "not utilization, is the measure on a partitioned GPU."),
     NULL, NULL, NULL},
    {DIAG_R_NOT_CHECKED, NULL,
     N_("Nothing to change in the job for this: GPU-level rules ran on every GPU that shows work. "
        "To "
        "have the process rules checked too, follow the job (gpuwhy run -- CMD, or record --pid "
        "PID) from a PID namespace that sees it (docker run --pid=host, or record inside the "
        "container)."),
     N_("Record again following the job: the report then names its PIDs in step 1 of the chain."),
     NULL, NULL, NULL},
    {DIAG_R_NOT_CHECKED, "gpu-only",
     N_("Nothing to change in the job for this: the GPU rules judged the counters the input "
        "holds. To have the host, process and step rules checked too, record the job with "
        "gpuwhy (gpuwhy run -- CMD, or gpuwhy record --pid PID): it samples the host and the "
        "job's processes and reads its step lines."),
     N_("Record the job with gpuwhy run: the report then fills steps 1, 3 and 4 of the chain."),
     NULL, NULL, NULL},
    {DIAG_R_NOT_CHECKED, "signals",
     N_("Nothing to change in the job for this. To see whether the GPU throttles, watch its "
        "clocks against the maximum (gpuwhy top, or clocks.current.sm beside clocks.max.sm in "
        "gpuwhy query) while it is busy, and its temperature and power against the cap."),
     N_("Compare clocks.current.sm with clocks.max.sm in the recording (gpuwhy export) over the "
        "busy stretches."),
     NULL, NULL, NULL},
    {DIAG_R_TOO_LITTLE_DATA, NULL,
     N_("Record longer (a minute of steady work is a fair sample), or sample faster for a short "
        "job: gpuwhy run -i 100ms -- CMD. No verdict is given on a handful of samples."),
     N_("Record again: the report must show at least the minimum number of samples "
        "(report --thresholds, min_samples) in its analysed window."),
     NULL, NULL, NULL},
    {DIAG_R_GPU_IDLE, NULL,
     N_("Nothing ran on the GPU while recording: start the job (or record while it runs), check "
        "that it was given this GPU (CUDA_VISIBLE_DEVICES, the scheduler's allocation), and record "
        "with --pid PID or `gpuwhy run -- CMD` to follow it."),
     N_("Record while the job runs: utilization.gpu must rise above the idle threshold."), NULL,
     NULL, NULL},
    {DIAG_R_HEALTHY, NULL,
     N_("Nothing to change: the GPU is busy and nothing on the host, the link or other processes "
        "holds it back. Keep this recording as the baseline for later changes."),
     N_("Compare later recordings against this one with `gpuwhy compare`."),
     N_("Nothing to change for a latency goal: utilization is where a serving load puts it. Keep "
        "this recording as the baseline."),
     N_("Compare later recordings against this one with `gpuwhy compare`, with P99 latency."),
     NULL},
    {DIAG_R_HEALTHY, "gpu-only",
     N_("Nothing to change in what the GPU counters show: the GPU is busy. The host, the link's "
        "traffic and other processes were not in this input (see not-checked). Keep it as the "
        "baseline for later logs."),
     N_("Compare later logs or recordings against this one with `gpuwhy compare`."), NULL, NULL,
     NULL},
};

static bool entry_is(const advice_entry *a, diag_rule rule, const char *variant, const char *vendor)
{
	if (a->rule != rule ||
	    (variant ? !a->variant || strcmp(a->variant, variant) : a->variant != NULL))
		return false;
	return !a->vendor || !strcmp(a->vendor, vendor);
}

static const advice_entry *find(const advice_entry *t, size_t n, diag_rule rule,
                                const char *variant, const char *vendor)
{
	for (size_t i = 0; i < n; i++)
		if (entry_is(&t[i], rule, variant, vendor))
			return &t[i];
	return NULL;
}

void diag_advice_lookup(diag_rule rule, const char *variant, const char *vendor, diag_goal goal,
                        const char **change, const char **verify)
{
	*change = *verify = NULL;
	/* a vendor nobody knows is worded as unknown, never as NVIDIA's */
	if (!vendor || (strcmp(vendor, "nvidia") != 0 && strcmp(vendor, "amd") != 0))
		vendor = "";
	const advice_entry *a = find(advice_vendor, sizeof advice_vendor / sizeof *advice_vendor,
	                             rule, variant, vendor);
	if (!a)
		a = find(advice, sizeof advice / sizeof *advice, rule, variant, vendor);
	if (!a)
		return;
	bool lat = goal == DIAG_GOAL_LATENCY;
	*change = L_(lat && a->change_latency ? a->change_latency : a->change);
	*verify = L_(lat && a->verify_latency ? a->verify_latency : a->verify);
}
