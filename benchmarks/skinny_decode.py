"""The decode shapes (fraglab/bench/shapes.py `decode`: M 1..128, N and K in 4096 / 11008 / 14336), both orders of
the weight B, f16 or bf16, bias per column + ReLU, D in the input type: what fraglab.gemm picks ("fraglab"), the
four-warp schedule it had before the K-grouped warp grids ("four_warp": layouts 1x4n64 / 4x1n64 with
skinny.choose_splits for M <= 32 and M <= 64 at N <= 4096, else the wgmma kernel's scheduled tile), each candidate
(warp grid, shares of K) of the skinny GEMM, torch.mm and torch._addmm_activation, on the same inputs interleaved in
rounds (fraglab.bench.timing), the weights rotated over enough copies that a pass is twice the L2 (each GEMM reads
its weight from DRAM). Each candidate's D is checked against torch first. Prints one line per shape, writes JSON.

Usage (device): python3 benchmarks/skinny_decode.py [--dtype f16] [--orders F,C] [--m 1,8,16] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.bench.shapes import DECODE_M, DECODE_NK  # noqa: E402
from fraglab.gemm import schedule, skinny  # noqa: E402
from fraglab.gemm.api import prepare  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

SPLITS_TRIED = {4096: (2, 4, 8), 11008: (1, 2, 4), 14336: (1, 2)}


def layouts_tried(m: int) -> tuple[str, ...]:
    return ("1x4n64", "1x4x2n64") if m <= 32 else ("4x1n64",)


def four_warp_choice(m: int, n: int) -> str | None:
    """The four-warp schedule's layout where it took the skinny GEMM, else None (the wgmma kernel)."""
    if m <= 32:
        return "1x4n64"
    return "4x1n64" if m <= 64 and n <= 4096 else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dtype", default="f16", choices=("f16", "bf16"))
    parser.add_argument("--orders", default="F,C")
    parser.add_argument("--m", default=",".join(str(m) for m in DECODE_M))
    parser.add_argument("--nk", default=",".join(str(x) for x in DECODE_NK))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch

    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    ms, sizes, orders = [int(x) for x in args.m.split(",")], [int(x) for x in args.nk.split(",")], args.orders.split(",")
    base = skinny.SkinnyKernelSpec(args.dtype, "relu", "per_n", False, False, args.dtype)
    builds = {dataclasses.replace(base, b_order=o, layout=lay, cluster=skinny.cluster_for(o, s)).build()
              for m, o in itertools.product(ms, orders) for lay in layouts_tried(m) + (four_warp_choice(m, 1),) if lay
              for s in skinny.SPLITS}
    with ThreadPoolExecutor(16) as pool:   # every skinny module at once (the wgmma ones compile on first use)
        list(pool.map(gpu.module, builds))
    gen = torch.Generator(device="cuda").manual_seed(25)
    rows = []
    print(f"{'B':>1} {'M':>4} {'N':>6} {'K':>6} {'fraglab':>7} {'4warp':>6} {'mm':>6} {'Lt':>6} {'/mm':>5} "
          f"{'4w/mm':>5} {'TB/s':>5}  fraglab's; best candidate", flush=True)
    for order, m, n, k in itertools.product(orders, ms, sizes, sizes):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order, tdt)
        chosen = [prepare(a, b, bias=bias, act="relu", out=d) for a, b, bias, _ in xs]
        old_layout = four_warp_choice(m, n)
        if old_layout:
            old_splits = skinny.choose_splits(m, n, k)
            old_spec = dataclasses.replace(base, b_order=order, layout=old_layout, splits=old_splits,
                                           cluster=skinny.cluster_for(order, old_splits))
            old = [skinny.bind(old_spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
            old_tile = old_spec.tile
        else:   # the wgmma kernel's scheduled tile (tile='128x64' alone would name WMMA's tile of that name)
            old_tile = schedule.choose(m, n, k, args.dtype, order, args.dtype).tile
            old = [prepare(a, b, bias=bias, act="relu", out=d, kernel="wgmma") for a, b, bias, _ in xs]
        fns = {"fraglab": lambda i: chosen[i](), "four_warp": lambda i: old[i](),
               "mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
               "lt": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1])}
        bad = []
        for layout, splits in itertools.product(layouts_tried(m), SPLITS_TRIED.get(n, (1, 2, 4))):
            spec = dataclasses.replace(base, b_order=order, layout=layout, splits=splits,
                                       cluster=skinny.cluster_for(order, splits))
            launches = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
            err = launch_error(torch, launches[0], d, want)
            if not err < 5e-3:
                bad.append(f"{layout}/k{splits} err {err:.1e}")
                continue
            fns[f"{layout}/k{splits}"] = (lambda ls: lambda i: ls[i]())(launches)
        reps = 30 if n * k < 100e6 else 12
        t = benchmod.time_interleaved(fns, rounds=args.rounds, reps=reps, rotate=sets)
        us = {name: v.median_ms * 1e3 for name, v in t.items()}
        ranked = sorted((x for x in us if "/k" in x), key=us.get)
        tbs = n * k * 2 / (us["fraglab"] * 1e-6) / 1e12
        tile = getattr(chosen[0].kernel_spec, "tile", "?")
        rows.append({"b_order": order, "m": m, "n": n, "k": k, "sets": sets, "dtype": args.dtype, "tile": tile,
                     "four_warp_tile": old_tile, "weight_tbs": tbs, "bad": bad,
                     **{f"{name}_us": v for name, v in us.items()}})
        best = ranked[0] if ranked else "-"
        print(f"{order:>1} {m:4d} {n:6d} {k:6d} {us['fraglab']:7.1f} {us['four_warp']:6.1f} {us['mm']:6.1f} "
              f"{us['lt']:6.1f} {us['mm'] / us['fraglab']:5.2f} {us['mm'] / us['four_warp']:5.2f} {tbs:5.2f}  "
              f"{tile} ({old_tile}); {best} {us.get(best, 0):.1f} " + " ".join(f"{x} {us[x]:.1f}" for x in ranked[1:4])
              + (f" BAD {bad}" if bad else ""), flush=True)
        xs = chosen = old = fns = d = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps({"dtype": args.dtype, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
