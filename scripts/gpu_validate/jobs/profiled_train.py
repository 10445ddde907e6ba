"""The data-loading training loop under torch.profiler: writes the Kineto trace and the
profiler's own figures (GPU time of the kernels, wall time of the profiled steps)."""
import json
import time

from common import cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--trace", required=True, help="Kineto JSON to write")
p.add_argument("--stats", required=True, help="the profiler's own figures, JSON")
p.add_argument("--steps", type=int, default=12)
a = p.parse_args()
torch = cuda_or_exit()
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402

model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 4096)).cuda().to(torch.bfloat16)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)


def step():
    # A host-side pause per step (a data loader that keeps the GPU waiting).
    t0 = time.process_time()
    while time.process_time() - t0 < 0.005:
        pass
    loss = model(x).float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


for _ in range(3):
    step()
torch.cuda.synchronize()
sched = schedule(wait=0, warmup=1, active=a.steps, repeat=1)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched) as prof:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(a.steps + 1):
        step()
        prof.step()
    torch.cuda.synchronize()
    wall_s = time.perf_counter() - t0
prof.export_chrome_trace(a.trace)
gpu_us = 0.0
for ev in prof.key_averages():
    gpu_us += getattr(ev, "self_device_time_total", None) or getattr(ev, "self_cuda_time_total", 0.0)
active_wall_us = wall_s * 1e6 * a.steps / (a.steps + 1)
json.dump({"torch": torch.__version__, "kernel_time_us": gpu_us, "wall_us": active_wall_us,
           "gpu_busy_pct": 100.0 * gpu_us / active_wall_us if active_wall_us else None},
          open(a.stats, "w"), indent=1)
print("profiled %d steps: kernels %.0f us in %.0f us" % (a.steps, gpu_us, active_wall_us))
