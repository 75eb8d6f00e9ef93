"""Row-major B, one share (C k1): HEAD kernel vs the working tree's in clusters of 8 / 4 / 1, 9 interleaved rounds."""
import dataclasses, itertools, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT / ".carry"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from ab2 import launches


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(13)
    for m, (n, k) in itertools.product((32, 16, 8), [(11008, 4096), (11008, 11008), (11008, 14336), (14336, 4096)]):
        order = "C"
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        v = {"head": launches("gemm/skinny_head.cu", (), dataclasses.replace(spec, cluster=8), 8, xs, d, m, n, k, order)}
        for c in (8, 4, 1):
            s = dataclasses.replace(spec, cluster=c)
            v[f"c{c}"] = [skinny.bind(s, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
        for calls in v.values():
            assert launch_error(torch, calls[0], d, want) < 5e-3
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        fns.update({x: (lambda cs: lambda i: cs[i]())(cs) for x, cs in v.items()})
        t = benchmod.time_interleaved(fns, rounds=9, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: t[x].median_ms * 1e3 for x in fns}
        print(f"C M {m:3d} {n:6d}x{k:<6d} {spec.tile:16s} " + "  ".join(f"{x} {u:7.2f}" for x, u in us.items())
              + "  | /head " + "  ".join(f"{x} {us[x] / us['head']:.3f}" for x in us if x != "head"), flush=True)
        xs = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
