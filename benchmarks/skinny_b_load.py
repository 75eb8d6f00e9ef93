"""How the skinny GEMM's weight reaches its ring (fraglab/gemm/skinny.py b_load_for): each decode shape with B by
TMA and by cp.async at the schedule's warp grid and split (or the splits given), against torch.mm on the same inputs
in interleaved rounds, the weights rotated over enough copies that a pass is twice the L2 (decode_inputs.py). Each
variant's D is checked against float32 torch first. f16, bias per column + ReLU, D f16; prints microseconds and TB/s
of weight bytes.

Usage (device): python3 benchmarks/skinny_b_load.py [--m 1,8,32] [--nk 4096x4096,...] [--orders F,C] [--splits 2,4]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402

SHAPES = "4096x4096,4096x1024,4096x11008,4096x14336,11008x4096,14336x4096"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", default="1,8,32")
    parser.add_argument("--nk", default=SHAPES, help="N x K pairs")
    parser.add_argument("--orders", default="F,C")
    parser.add_argument("--splits", default="", help="shares of K to time (default: the schedule's)")
    args = parser.parse_args()
    import torch

    gen = torch.Generator(device="cuda").manual_seed(7)
    for order, m, nk in itertools.product(args.orders.split(","), [int(x) for x in args.m.split(",")],
                                          args.nk.split(",")):
        n, k = map(int, nk.split("x"))
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        chosen = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        fns, bad = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}, []
        for b_load, splits in itertools.product(skinny.B_LOADS, [int(s) for s in args.splits.split(",") if s]
                                                or [chosen.splits]):
            spec = dataclasses.replace(chosen, b_load=b_load, splits=splits,
                                       cluster=skinny.cluster_for(chosen.b_order, splits))
            calls = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
            err = launch_error(torch, calls[0], d, want)
            if not err < 5e-3:
                bad.append(f"{spec.tile} err {err:.1e}")
                continue
            fns[spec.tile] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=3, reps=30 if n * k < 100e6 else 12, rotate=sets)
        us = {name: v.median_ms * 1e3 for name, v in t.items()}
        ranked = sorted((x for x in us if x != "mm"), key=us.get)
        print(f"{order} M {m:3d} {n:6d}x{k:<6d} scheduled {chosen.tile:22s} mm {us['mm']:6.1f}  "
              + "  ".join(f"{x} {us[x]:.1f} ({us['mm'] / us[x]:.2f}x, {n * k * 2 / us[x] / 1e6:.2f} TB/s)"
                          for x in ranked) + (f"  BAD {bad}" if bad else ""), flush=True)
        xs = fns = d = None
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
