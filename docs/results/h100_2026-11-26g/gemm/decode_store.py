"""The wgmma schedule's split-K tiles at decode M with D stored directly from registers against through shared
memory and TMA (the default), interleaved with torch.mm; weights rotated past L2; D checked first."""
import itertools, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(8)
    for order, m, (n, k) in itertools.product("FC", (64, 128), [(4096, 4096), (4096, 11008), (4096, 14336), (11008, 4096), (14336, 4096), (14336, 14336)]):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        tile = None
        for store in ("tma", "direct"):
            spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order, store=store)
            tile = spec.tile
            calls = [wgmma.bind(spec, a, b, d, bias=bias) for a, b, bias, _ in xs]
            assert launch_error(torch, calls[0], d, want) < 5e-3, store
            fns[store] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=7, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        print(f"{order} {m:3d}x{n}x{k} {tile:10s} " + "  ".join(f"{x} {v:7.2f}" for x, v in us.items())
              + f"  direct/tma {us['direct'] / us['tma']:.3f}", flush=True)
        xs = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
