"""The skinny GEMM against the wgmma kernel's scheduled tile, torch.mm and torch._addmm_activation at the decode
shapes (fraglab/bench/shapes.py `decode`: M 1..128, N and K in 4096 / 11008 / 14336), both orders of the weight B,
f16 or bf16, bias per column + ReLU, D in the input type. Each variant on the same inputs, interleaved in rounds
(fraglab.bench.timing), the weights rotated over enough copies that a pass is twice the L2 (each GEMM reads its
weight from DRAM). Prints one line per shape and writes JSON.

Usage (device): python3 benchmarks/skinny_decode.py [--dtype f16] [--orders F,C] [--m 1,8,16] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab import bench as benchmod  # noqa: E402
from fraglab.bench.shapes import DECODE_M, DECODE_NK  # noqa: E402
from fraglab.gemm import schedule  # noqa: E402
from fraglab.gemm.api import prepare  # noqa: E402


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
    gen = torch.Generator(device="cuda").manual_seed(25)
    rows = []
    sizes = [int(x) for x in args.nk.split(",")]
    print(f"{'B':>1} {'M':>4} {'N':>6} {'K':>6} {'skinny us':>9} {'wgmma us':>9} {'mm us':>8} {'Lt us':>8} "
          f"{'/mm':>5} {'/Lt':>5} {'/wg':>5} {'TB/s':>5}  tiles", flush=True)
    for order in args.orders.split(","):
        for m in (int(x) for x in args.m.split(",")):
            for n in sizes:
                for k in sizes:
                    per_set = (m * k + n * k) * 2
                    sets = min(benchmod.rotation_count(per_set), max(1, (6 << 30) // per_set))
                    xs = []
                    for _ in range(sets):
                        a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).to(tdt)
                        w = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).to(tdt)
                        b = w.t() if order == "F" else w.t().contiguous()
                        bias = torch.rand(n, generator=gen, device="cuda")
                        xs.append((a, b, bias, bias.to(tdt)))
                    d = torch.empty(m, n, device="cuda", dtype=tdt)
                    wg_tile = schedule.choose(m, n, k, args.dtype, order, args.dtype).tile
                    sk = [prepare(a, b, bias=bias, act="relu", out=d, tile="skinny") for a, b, bias, _ in xs]
                    wg = [prepare(a, b, bias=bias, act="relu", out=d, tile=wg_tile) for a, b, bias, _ in xs]
                    fns = {"skinny": lambda i: sk[i](), "wgmma": lambda i: wg[i](),
                           "mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
                           "lt": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1])}
                    reps = 30 if n * k < 100e6 else 12
                    t = benchmod.time_interleaved(fns, rounds=args.rounds, reps=reps, rotate=sets)
                    us = {name: v.median_ms * 1e3 for name, v in t.items()}
                    tbs = n * k * 2 / (us["skinny"] * 1e-6) / 1e12
                    row = {"b_order": order, "m": m, "n": n, "k": k, "sets": sets, "dtype": args.dtype,
                           "skinny_tile": sk[0].kernel_spec.tile, "wgmma_tile": wg_tile, "weight_tbs": tbs,
                           **{f"{name}_us": v for name, v in us.items()}}
                    rows.append(row)
                    print(f"{order:>1} {m:4d} {n:6d} {k:6d} {us['skinny']:9.1f} {us['wgmma']:9.1f} {us['mm']:8.1f} "
                          f"{us['lt']:8.1f} {us['mm'] / us['skinny']:5.2f} {us['lt'] / us['skinny']:5.2f} "
                          f"{us['wgmma'] / us['skinny']:5.2f} {tbs:5.2f}  {row['skinny_tile']} {wg_tile}", flush=True)
                    xs = sk = wg = d = None
                    torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps({"dtype": args.dtype, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
