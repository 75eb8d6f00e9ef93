"""Small-N decode shapes (issue 25 item 2: M = 64 and 128, where the skinny GEMM's mma.sync tiles and the wgmma
kernel's 128x64 tile lose to torch at N = 4096): the wgmma kernel's 64-row tiles with few columns (64x64p, 64x128p,
and each in clusters of two, B multicast to both blocks), the split-K clusters (64x64pk2, 128x64k2: two blocks on
one tile, half of K each) against what fraglab.gemm picks, torch.mm and
torch._addmm_activation, on the same inputs interleaved in rounds (fraglab.bench.timing), the weights rotated over
enough copies that a pass is twice the L2. Each candidate's D is checked against float32 torch first.
f16, bias per column + ReLU, D f16. Prints microseconds and TB/s of weight bytes; writes JSON.

Usage (device): python3 benchmarks/wgmma_decode_tiles.py [--m 64,128] [--n 4096] [--k 4096,11008,14336]
                [--orders F,C] [--tiles 64x64p,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm.api import prepare  # noqa: E402

TILES = ("64x64p", "64x64pc2", "64x64pk2", "64x128p", "64x128pc2", "128x64", "128x64k2", "64x256p")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", default="64,128")
    parser.add_argument("--n", default="4096")
    parser.add_argument("--k", default="4096,11008,14336")
    parser.add_argument("--orders", default="F,C")
    parser.add_argument("--tiles", default=",".join(TILES))
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch

    ints = lambda text: [int(x) for x in text.split(",")]  # noqa: E731
    gen = torch.Generator(device="cuda").manual_seed(26)
    rows = []
    for order, m, n, k in itertools.product(args.orders.split(","), ints(args.m), ints(args.n), ints(args.k)):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        chosen = [prepare(a, b, bias=bias, act="relu", out=d) for a, b, bias, _ in xs]
        fns = {"fraglab": lambda i: chosen[i](), "mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
               "lt": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1])}
        bad = []
        for tile in args.tiles.split(","):
            calls = [prepare(a, b, bias=bias, act="relu", out=d, kernel="wgmma", tile=tile) for a, b, bias, _ in xs]
            err = launch_error(torch, calls[0], d, want)
            if not err < 5e-3:
                bad.append(f"{tile} err {err:.1e}")
                continue
            fns[tile] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=3, reps=30 if n * k < 100e6 else 12, rotate=sets)
        us = {name: v.median_ms * 1e3 for name, v in t.items()}
        tbs = {name: n * k * 2 / (v * 1e-6) / 1e12 for name, v in us.items()}
        rows.append({"b_order": order, "m": m, "n": n, "k": k, "sets": sets, "us": us, "weight_tbs": tbs,
                     "tile": getattr(chosen[0].kernel_spec, "tile", "?"), "bad": bad})
        ranked = sorted((x for x in us if x not in ("mm", "lt")), key=us.get)
        print(f"{order} {m:4d} {n:6d} {k:6d}  mm {us['mm']:6.1f} lt {us['lt']:6.1f}  "
              + "  ".join(f"{x} {us[x]:.1f} ({us['mm'] / us[x]:.2f}x, {tbs[x]:.2f} TB/s)" for x in ranked)
              + (f" BAD {bad}" if bad else ""), flush=True)
        xs = chosen = fns = d = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
