"""The schedule's new tiles against the ones they replaced, on whatever GPU this is (f16, bias + ReLU, D f16)."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path.cwd())); sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import torch
from fraglab.runtime import gpu
from wgmma_ragged import operand_sets, spec, bound, timed
gpu.cupy()
print(torch.cuda.get_device_name(), flush=True)
for (m, n, k), old in [((3000, 3000, 3000), "128x192c2"), ((1000, 1000, 1000), "64x128pc2"), ((1000, 2000, 1000), "64x128pc2")]:
    sets, a, b, bias, b16, d = operand_sets(m, n, k)
    s0 = spec(m, n, k)
    timed(m, n, k, sets, a, b, b16, {f"sched {s0.tile}": bound(s0, a, b, d, bias), old: bound(spec(m, n, k, old), a, b, d, bias)})
