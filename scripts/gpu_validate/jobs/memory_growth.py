"""Out of memory: allocates --chunk-gib more each step until torch.OutOfMemoryError,
which is left uncaught so that the job dies of it the way a real one does."""
from common import Steps, cuda_or_exit, parser

p = parser(__doc__)
p.add_argument("--chunk-gib", type=float, default=4.0)
a = p.parse_args()
torch = cuda_or_exit()
held = []
steps = Steps(a.seconds)
while steps.more():
    held.append(torch.empty(int(a.chunk_gib * 2**30), dtype=torch.uint8, device="cuda"))
    held[-1].fill_(1)
    torch.cuda.synchronize()
    steps.done()
print("no out-of-memory error after %d steps" % steps.n)
