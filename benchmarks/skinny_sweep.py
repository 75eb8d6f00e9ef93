"""Sweep of the skinny GEMM's warp grid (skinny.LAYOUTS), split of K, ring depth (FRAGLAB_SKINNY_STAGES) and
cluster size (FRAGLAB_SKINNY_CLUSTER) at chosen decode shapes, against what fraglab.gemm picks today, torch.mm
and torch._addmm_activation on the same rotated inputs (f16, bias per column + ReLU, D f16; weights rotated over
twice the L2). Each variant's D is checked against torch first (a wrong one is reported and not timed).

Usage (device): python3 benchmarks/skinny_sweep.py [--cases rows64,rows32] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402
from fraglab.gemm.api import prepare  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

# name -> [(M list, N list, K list, B orders, variants (layout, splits, ring stages, cluster size))]
CASES = {
    "rows64": [
        ((64, 128), (4096,), (4096, 14336), "FC",
         [("4x1n64", s, st, 8) for s in (4, 8) for st in (3, 4)]),
    ],
    "rows32": [
        ((1, 8, 16, 32), (4096,), (4096,), "FC",
         [(lay, s, st, c) for lay in ("1x4n64", "1x4x2n64") for s in (4, 8) for st in (4, 6) for c in (4, 8)]),
        ((1, 16, 32), (11008, 14336), (4096,), "FC",
         [(lay, s, st, 8) for lay in ("1x4n64", "1x4x2n64") for s in (1, 2) for st in (4, 6)]),
    ],
}


def variant_spec(layout: str, order: str, splits: int, stages: int, cluster: int) -> skinny.SkinnyKernelSpec:
    return skinny.SkinnyKernelSpec("f16", "relu", "per_n", False, False, "f16", order, layout, splits,
                                   cluster=cluster, stages=stages)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default="rows64,rows32")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch

    plans = [c for name in args.cases.split(",") for c in CASES[name]]
    builds = {variant_spec(lay, o, sp, st, cl).build() for ms, ns, ks, orders, vs in plans for o in orders
              for lay, sp, st, cl in vs if sp <= cl}
    from fraglab.gemm import api
    from fraglab.gemm.validate import GemmPlan

    now_builds = {api._make_spec(("wgmma", GemmPlan("wgmma", "f16", m, n, k, "relu", "per_n", False, False, "f16", o),
                                  None, True, "none")).build()
                  for ms, ns, ks, orders, vs in plans for m, n, k, o in itertools.product(ms, ns, ks, orders)}
    with ThreadPoolExecutor(16) as pool:   # every module at once: the GEMMs fraglab picks today and the variants
        list(pool.map(gpu.module, list(builds) + list(now_builds)))
    gen = torch.Generator(device="cuda").manual_seed(11)
    rows = []
    print(f"{'B':>1} {'M':>4} {'N':>6} {'K':>6} {'mm':>6} {'now':>6} {'/mm':>5}  best (us, x mm, TB/s); next",
          flush=True)
    for ms, ns, ks, orders, variants in plans:
        for order, m, n, k in itertools.product(orders, ms, ns, ks):
            sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
            now = [prepare(a, b, bias=bias, act="relu", out=d) for a, b, bias, _ in xs]
            now_tile = getattr(now[0].kernel_spec, "tile", "?")
            fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
                   "lt": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1]),
                   "now": lambda i: now[i]()}
            bad = []
            for layout, splits, stages, cluster in variants:
                if m > skinny.layout_max_m(layout) or splits > cluster:
                    continue
                spec = variant_spec(layout, order, splits, stages, cluster)
                launches = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
                err = launch_error(torch, launches[0], d, want)
                name = f"{layout}/k{splits}/s{stages}/c{cluster}"
                if not err < 2e-3:
                    bad.append((name, err))
                    continue
                fns[name] = (lambda ls: lambda i: ls[i]())(launches)
            t = benchmod.time_interleaved(fns, rounds=args.rounds, reps=20 if n * k < 100e6 else 10, rotate=sets)
            us = {name: x.median_ms * 1e3 for name, x in t.items()}
            ranked = sorted((x for x in us if x not in ("mm", "lt", "now")), key=us.get)
            best = ranked[0] if ranked else "now"
            rows.append({"order": order, "m": m, "n": n, "k": k, "sets": sets, "now_tile": now_tile, "us": us,
                         "bad": [str(x) for x in bad]})
            print(f"{order} {m:4d} {n:6d} {k:6d} {us['mm']:6.1f} {us['now']:6.1f} {us['mm'] / us['now']:5.2f}  "
                  f"{best} {us[best]:.1f} ({us['mm'] / us[best]:.2f}x, {n * k * 2 / us[best] / 1e6:.2f}); "
                  + " ".join(f"{x} {us[x]:.1f}" for x in ranked[1:6]) + f" | now={now_tile} lt {us['lt']:.1f}"
                  + (f" BAD {bad}" if bad else ""), flush=True)
            xs = fns = d = now = None
            torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
