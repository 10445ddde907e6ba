"""Launch-bound: thousands of tiny kernels per step; the GPU looks busy, few SMs work."""
from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--per-step", type=int, default=2000)
a = p.parse_args()
torch = cuda_or_exit()
x = torch.zeros(256, device="cuda")
steps = Steps(a.seconds)
while steps.more():
    for _ in range(a.per_step):
        x.add_(1.0)
    torch.cuda.synchronize()
    steps.done()
print("tiny kernels: %d steps, x[0] = %.0f" % (steps.n, float(x[0])))
