"""Sweep of the skinny GEMM's build knobs (tile width FRAGLAB_SKINNY_BN, ring depth FRAGLAB_SKINNY_STAGES, the L2
prefetch size of B's copies FRAGLAB_SKINNY_PREFETCH) and of the split of K, at the decode shapes, against torch.mm
on the same rotated inputs; each variant's result is checked against torch first.

Usage (device): python3 benchmarks/skinny_sweep.py [--m 1,16,32,64] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

VARIANTS = [(bn, stages, pf) for bn, stages, pf in itertools.product((64, 128), (4, 6, 8), (0, 256))]


def smem(bn, stages, m):
    rows = skinny.m_tiles(m) * 16
    return max(stages * (bn * 64 * 2 + rows * 128), rows * (bn + 8) * 4)


def build(spec, bn, stages, pf):
    return skinny.build_of((spec.name(),), (f"-DFRAGLAB_SKINNY_BN={bn}", f"-DFRAGLAB_SKINNY_STAGES={stages}",
                                            f"-DFRAGLAB_SKINNY_PREFETCH={pf}"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--m", default="1,16,32,64")
    parser.add_argument("--nk", default="4096,11008,14336")
    parser.add_argument("--orders", default="F,C")
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch
    from concurrent.futures import ThreadPoolExecutor

    ms = [int(x) for x in args.m.split(",")]
    sizes = [int(x) for x in args.nk.split(",")]
    specs = {(w, o): skinny.SkinnyKernelSpec("f16", "relu", "per_n", False, False, "f16", o, w)
             for w in skinny.WARPS_M for o in args.orders.split(",")}
    builds = {(w, o, v): build(s, *v) for (w, o), s in specs.items() for v in VARIANTS}
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, builds.values()))
    kernels = {key: gpu.function(b, b.name_expressions[0]) for key, b in builds.items()}
    for key, k in kernels.items():
        k.max_dynamic_shared_size_bytes = 227 * 1024
    gen = torch.Generator(device="cuda").manual_seed(7)
    rows = []
    for order, m, n, k in itertools.product(args.orders.split(","), ms, sizes, sizes):
        w = skinny.warps_m_for(m)
        per_set = (m * k + n * k) * 2
        sets = min(benchmod.rotation_count(per_set), max(1, (6 << 30) // per_set))
        xs = []
        for _ in range(sets):
            a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).half()
            wt = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).half()
            b = wt.t() if order == "F" else wt.t().contiguous()
            xs.append((a, b, torch.rand(n, generator=gen, device="cuda")))
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        want = torch.relu(xs[0][0].float() @ xs[0][1].float() + xs[0][2])
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        bad = []
        for v in VARIANTS:
            shared = smem(v[0], v[1], m)
            if shared > 227 * 1024:
                continue
            tiles = -(-n // v[0])
            for splits in skinny.SPLITS:
                if -(-k // 64) < splits * 4:
                    continue
                grid = -(-tiles // (8 // splits)) * 8
                launches = []
                for a, b, bias in xs:
                    params = (np.uint64(a.data_ptr()), np.uint64(b.data_ptr()), np.uint64(d.data_ptr()), np.uint64(0),
                              np.uint64(bias.data_ptr()), np.uint64(0), np.int32(m), np.int32(n), np.int32(k),
                              np.int32(k), np.int32(k if order == "F" else n), np.int32(n), np.int32(n), np.int32(n),
                              np.int32(n), np.int32(splits), np.int32(1), np.float32(1), np.float32(0),
                              np.float32(0.01))
                    launches.append(gpu.PackedLaunch(kernels[(w, order, v)], grid, 128, params, shared_mem=shared))
                d.fill_(float("nan"))
                launches[0]()
                torch.cuda.synchronize()
                err = float(((d.float() - want).abs().max() / want.abs().max()).item())
                if not err < 2e-3:
                    bad.append((v, splits, err))
                    continue
                fns[f"{v[0]}/{v[1]}/{v[2]}/k{splits}"] = (lambda ls: lambda i: ls[i]())(launches)
        t = benchmod.time_interleaved(fns, rounds=2, reps=12, rotate=sets)
        us = {name: x.median_ms * 1e3 for name, x in t.items()}
        best = min((x for x in us if x != "mm"), key=us.get)
        rows.append({"order": order, "m": m, "n": n, "k": k, "us": us, "bad": [str(b) for b in bad]})
        top = sorted((x for x in us if x != "mm"), key=us.get)[:4]
        print(f"{order} {m:3d} {n:6d} {k:6d} mm {us['mm']:6.1f} best {best} {us[best]:6.1f} "
              f"({us['mm'] / us[best]:.2f}x, {n * k * 2 / us[best] / 1e6:.2f} TB/s) next "
              + " ".join(f"{x} {us[x]:.1f}" for x in top[1:]) + (f" BAD {bad}" if bad else ""), flush=True)
        xs = fns = d = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
