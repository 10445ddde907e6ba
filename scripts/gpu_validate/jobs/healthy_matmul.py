"""Healthy: a bf16 matmul loop that keeps the GPU's tensor cores busy (no finding but healthy)."""
from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--size", type=int, default=8192)
p.add_argument("--per-step", type=int, default=20, help="matmuls per step")
a = p.parse_args()
torch = cuda_or_exit()
x = torch.randn(a.size, a.size, device="cuda", dtype=torch.bfloat16)
y = torch.randn(a.size, a.size, device="cuda", dtype=torch.bfloat16)
steps = Steps(a.seconds)
while steps.more():
    for _ in range(a.per_step):
        z = x @ y
    torch.cuda.synchronize()
    steps.done()
print("matmul %d steps, last sum %.3g" % (steps.n, float(z.float().sum())))
