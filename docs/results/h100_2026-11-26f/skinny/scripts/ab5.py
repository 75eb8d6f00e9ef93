"""Experiment: K blocks dealt round-robin over a tile's shares (FRAGLAB_X_INTERLEAVE, add_interleave.py applied)
against contiguous shares, the schedule's spec otherwise, over the decode shapes with K split (M <= 32)."""
import itertools, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT / ".carry"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from ab2 import launches


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(17)
    ratios = []
    for order, m, (n, k) in itertools.product("FC", (1, 8, 16, 32), [(a, b) for a in (4096, 11008, 14336) for b in (4096, 11008, 14336)]):
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        if spec.splits == 1:
            continue
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
        inter = launches(skinny.ENTRY, spec.build().options + ("-DFRAGLAB_X_INTERLEAVE",), spec, spec.cluster,
                         xs, d, m, n, k, order)
        for calls in (base, inter):
            assert launch_error(torch, calls[0], d, want) < 5e-3
        t = benchmod.time_interleaved({"mm": lambda i: torch.mm(xs[i][0], xs[i][1]), "base": lambda i: base[i](),
                                       "inter": lambda i: inter[i]()}, rounds=7, reps=20 if n * k < 100e6 else 10,
                                      rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        ratios.append(us["inter"] / us["base"])
        print(f"{order} M {m:3d} {n:6d}x{k:<6d} {spec.tile:18s} mm {us['mm']:7.2f} base {us['base']:7.2f} "
              f"inter {us['inter']:7.2f}  inter/base {ratios[-1]:.3f}", flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    print(f"inter/base: median {statistics.median(ratios):.3f} min {min(ratios):.3f} max {max(ratios):.3f} "
          f"faster at {sum(r < 1 for r in ratios)}/{len(ratios)}")


if __name__ == "__main__":
    main()
