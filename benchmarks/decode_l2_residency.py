"""Is a decode weight still partly in L2 when the benchmarks time it? (issue 25 item 2: "rotating through enough
weight copies that none is still in the 50 MB L2").

The decode benchmarks rotate over enough weight copies that one pass is twice the L2 (3 copies of a 32 MB weight at
N = K = 4096). L2 does not evict in strict LRU order, so some lines of a copy read two launches ago may survive; a
kernel that marks its weight evict-first in L2 (the skinny GEMM does, so the weight does not push out activations)
keeps fewer of them than one that does not. This times fraglab.gemm, torch.mm and torch._addmm_activation on the
same inputs three ways, each interleaved in rounds:
  rot2   the benchmarks' rotation (one pass = 2 x L2), launches back to back (fraglab.bench.time_interleaved)
  rot8   one pass = 8 x L2 (at most 6 GB), back to back
  flush  one weight, and a read of 4 x L2 of another buffer before every timed launch (outside its events),
         so nothing of the weight is in L2 when the launch starts
f16, bias per column + ReLU, D f16. Prints us and weight TB/s per mode; writes JSON.

Usage (device): python3 benchmarks/decode_l2_residency.py [--m 1,8,16,32,64,128] [--nk 4096x4096,...]
                [--orders F,C] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm.api import prepare  # noqa: E402

NK = "4096x4096,4096x11008,4096x14336,11008x4096,14336x4096"


def make_sets(torch, gen, m, n, k, order, sets):
    xs = []
    for _ in range(sets):
        a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).half()
        w = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).half()
        bias = torch.rand(n, generator=gen, device="cuda")
        xs.append((a, w.t() if order == "F" else w.t().contiguous(), bias, bias.half()))
    return xs


def calls(torch, xs, d):
    runs = [prepare(a, b, bias=bias, act="relu", out=d) for a, b, bias, _ in xs]
    return runs[0].kernel_spec, {"fraglab": lambda i: runs[i](), "mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
                                 "lt": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1])}


def time_flushed(torch, fns, flush, rounds=3, reps=30):
    """Median ms of each fn(0), every launch after a read of the flush buffer, rounds interleaved."""
    samples = {name: [] for name in fns}
    for order in benchmod.round_orders(list(fns), rounds):
        for name in order:
            fns[name](0)
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for i in range(reps):
                flush()
                starts[i].record()
                fns[name](0)
                ends[i].record()
            torch.cuda.synchronize()
            samples[name] += [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return {name: statistics.median(v) for name, v in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", default="1,8,16,32,64,128")
    parser.add_argument("--nk", default=NK)
    parser.add_argument("--orders", default="F,C")
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch

    l2 = benchmod.l2_cache_bytes()
    flush_buf = torch.ones(4 * l2 // 4, device="cuda", dtype=torch.float32)
    flush = lambda: flush_buf.sum()  # noqa: E731  (reads 4 x L2; L2 keeps only that buffer's clean lines)
    gen = torch.Generator(device="cuda").manual_seed(26)
    rows = []
    pairs = [tuple(int(v) for v in nk.split("x")) for nk in args.nk.split(",")]
    for order, m, (n, k) in itertools.product(args.orders.split(","), [int(x) for x in args.m.split(",")], pairs):
        per_set = (m * k + n * k) * 2
        cap = max(1, (6 << 30) // per_set)
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        us = {}
        for mode, factor in (("rot2", 2.0), ("rot8", 8.0)):
            sets = min(benchmod.rotation_count(per_set, factor=factor), cap)
            xs = make_sets(torch, gen, m, n, k, order, sets)
            spec, fns = calls(torch, xs, d)
            t = benchmod.time_interleaved(fns, rounds=3, reps=30, rotate=sets)
            us.update({f"{mode}.{name}": v.median_ms * 1e3 for name, v in t.items()})
            xs = fns = None
            torch.cuda.empty_cache()
        xs = make_sets(torch, gen, m, n, k, order, 1)
        spec, fns = calls(torch, xs, d)
        us.update({f"flush.{name}": v * 1e3 for name, v in time_flushed(torch, fns, flush).items()})
        xs = fns = None
        torch.cuda.empty_cache()
        tile = getattr(spec, "tile", "?")
        rows.append({"b_order": order, "m": m, "n": n, "k": k, "tile": tile, "us": us})
        line = f"{order} {m:4d} {n:6d} {k:6d} {tile:20s}"
        for mode in ("rot2", "rot8", "flush"):
            f, mm = us[f"{mode}.fraglab"], us[f"{mode}.mm"]
            line += f" | {mode} fraglab {f:6.1f} mm {mm:6.1f} lt {us[f'{mode}.lt']:6.1f} {mm / f:4.2f}x " \
                    f"{n * k * 2 / (f * 1e-6) / 1e12:4.2f} TB/s"
        print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"l2_bytes": l2, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
