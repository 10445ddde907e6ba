"""Data-starved (num_workers=0) or fed (--workers N; -1: one per core but one): a
DataLoader whose transform burns CPU for --cpu-ms per sample, feeding a model whose
step holds the GPU for about --gpu-matmuls bf16 4096x4096 matmuls. One process
needs batch x cpu-ms per batch (320 ms by default) against a step of some tens of
ms: starved; fifteen workers bring it under the step: fed. Same work either way, so
`gpuwhy compare` between the two runs measures only the data pipeline."""
import os
import time

from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--workers", type=int, default=0)
p.add_argument("--cpu-ms", type=float, default=20.0, help="CPU time per sample")
p.add_argument("--batch", type=int, default=16)
p.add_argument("--gpu-matmuls", type=int, default=200, help="GPU work per step")
a = p.parse_args()
torch = cuda_or_exit()
from torch.utils.data import DataLoader, Dataset  # noqa: E402


class Heavy(Dataset):
    """Each sample costs cpu_ms of this process's CPU time, like a decode + augment."""

    def __init__(self, cpu_ms):
        self.cpu_ms = cpu_ms

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        t0 = time.process_time()
        x = 1.0
        while (time.process_time() - t0) * 1000.0 < self.cpu_ms:
            for _ in range(1000):
                x = x * 1.0000001 + 1e-9
        return torch.full((3, 64, 64), float(i % 7))


def one_thread(_):
    torch.set_num_threads(1)


workers = a.workers
if workers < 0:
    workers = max(1, (os.cpu_count() or 2) - 1)
loader = DataLoader(Heavy(a.cpu_ms), batch_size=a.batch, num_workers=workers,
                    worker_init_fn=one_thread if workers else None,
                    persistent_workers=workers > 0, prefetch_factor=4 if workers else None)
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 4096),
                            torch.nn.ReLU(), torch.nn.Linear(4096, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
steps = Steps(a.seconds)
for batch in loader:
    if not steps.more():
        break
    out = model(batch.cuda(non_blocking=True))
    loss = out.float().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    for _ in range(a.gpu_matmuls):
        v = w @ w
    torch.cuda.synchronize()
    steps.done()
print("loader workers=%d: %d steps, %.3g" % (workers, steps.n, float(v[0, 0])))
