"""Memory full, compute idle: holds --fraction of the GPU's memory and runs nothing."""
import time

from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--fraction", type=float, default=0.93)
a = p.parse_args()
torch = cuda_or_exit()
free, total = torch.cuda.mem_get_info()
want = int(total * a.fraction) - (total - free)
held = torch.empty(max(want, 0), dtype=torch.uint8, device="cuda")
print("holding %.1f GiB of %.1f GiB" % (held.numel() / 2**30, total / 2**30), flush=True)
steps = Steps(a.seconds)
while steps.more():
    time.sleep(0.5)
    steps.done()
