"""Ring depth at N = K = 4096 (the skinny schedule's spec with stages 4 / 6 / 8 / 12), interleaved with torch.mm,
weights rotated past L2; D checked first."""
import dataclasses, itertools, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny


STAGES = tuple(int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "4,6,8,12").split(","))


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(5)
    shapes = [(m, 4096, 4096) for m in (1, 8, 16, 32)] + [(8, 4096, 11008), (8, 4096, 14336), (8, 11008, 4096), (32, 11008, 11008), (8, 14336, 4096)]
    for order, (m, n, k) in itertools.product("FC", shapes):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        for stages in STAGES:
            s = dataclasses.replace(spec, stages=stages)
            if skinny.smem_bytes(m, s.layout, stages) > skinny.SMEM_LIMIT:
                continue
            calls = [skinny.bind(s, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
            assert launch_error(torch, calls[0], d, want) < 5e-3
            fns[f"s{stages}"] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=7, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        print(f"{order} {m:3d}x{n}x{k} {spec.tile:20s} " + "  ".join(f"{x} {v:6.2f}" for x, v in us.items()), flush=True)
        xs = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
