"""The decode benchmarks' inputs, made one way: enough sets of (A, weight B, bias f32, bias in the input type) that
one pass over them is twice the L2 (each GEMM reads its weight from DRAM; at most 6 GB), the weight made N x K and
given as B column-major (its transpose, "F") or row-major (a K x N copy, "C"); random values in [-0.5, 0.5).
Also D and the f32 reference of set 0 with bias per column + ReLU, which the benchmarks check each candidate against."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab import bench as benchmod  # noqa: E402


def decode_inputs(torch, gen, m: int, n: int, k: int, order: str, dtype=None):
    """(sets, [(a, b, bias, bias in dtype)], d, want) for an M x N x K problem with the weight in `order`."""
    dtype = dtype or torch.float16
    per_set = (m * k + n * k) * 2
    sets = min(benchmod.rotation_count(per_set), max(1, (6 << 30) // per_set))
    xs = []
    for _ in range(sets):
        a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).to(dtype)
        w = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).to(dtype)
        b = w.t() if order == "F" else w.t().contiguous()
        bias = torch.rand(n, generator=gen, device="cuda")
        xs.append((a, b, bias, bias.to(dtype)))
    d = torch.empty(m, n, device="cuda", dtype=dtype)
    want = torch.relu(xs[0][0].float() @ xs[0][1].float() + xs[0][2])
    return sets, xs, d, want


def launch_error(torch, launch, d, want) -> float:
    """The largest error of one launch's D against `want`, relative to want's largest value; D is poisoned with
    NaN first, so a launch that leaves an element unwritten reads as NaN (never below a tolerance)."""
    d.fill_(float("nan"))
    launch()
    torch.cuda.synchronize()
    return float(((d.float() - want).abs().max() / want.abs().max()).item())
