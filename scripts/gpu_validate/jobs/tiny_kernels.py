"""Launch-bound: thousands of tiny kernels per step, back to back (replayed from a CUDA
graph, so that the host's launch rate does not decide it): the GPU reads busy while
one block of 256 threads keeps almost every SM idle. --eager launches them one by
one from Python instead."""
from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--per-step", type=int, default=2000)
p.add_argument("--eager", action="store_true")
a = p.parse_args()
torch = cuda_or_exit()
x = torch.zeros(256, device="cuda")


def tiny():
    for _ in range(a.per_step):
        x.add_(1.0)


run = tiny
if not a.eager:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.add_(1.0)  # warm-up before capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tiny()
    run = graph.replay
steps = Steps(a.seconds)
while steps.more():
    run()
    torch.cuda.synchronize()
    steps.done()
print("tiny kernels: %d steps, x[0] = %.0f" % (steps.n, float(x[0])))
