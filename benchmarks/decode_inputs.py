"""The decode benchmarks' inputs, made one way: enough sets of (A, weight B, bias f32, bias in the input type) that
one pass over them is twice the L2 (each GEMM reads its weight from DRAM; at most 6 GB), the weight made N x K and
given as B column-major (its transpose, "F") or row-major (a K x N copy, "C"); random values in [-0.5, 0.5).
Also D and the f32 reference of set 0 with bias per column + ReLU, which the benchmarks check each candidate against."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.bench.shapes import Shape, operand_sets  # noqa: E402


def decode_inputs(torch, gen, m: int, n: int, k: int, order: str, dtype=None):
    """(sets, [(a, b, bias, bias in dtype)], d, want) for an M x N x K problem with the weight in `order`
    (fraglab.bench.shapes.operand_sets: the same sets `gemm --bench --shapes` times)."""
    dtype = dtype or torch.float16
    sets, xs = operand_sets(torch, gen, Shape("decode", m, n, k), dtype, order, "per_n", bias_in_input_type=True)
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
