"""Diagnose the decode gap at N = K = 4096: per-launch events vs events around back-to-back batches, fraglab's
skinny GEMM (the schedule's pick) against torch.mm; --ncu launches each once for Nsight Compute."""
import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402

SHAPES = [(1, 4096, 4096, "F"), (8, 4096, 4096, "F"), (8, 4096, 4096, "C"), (32, 4096, 4096, "F"),
          (8, 4096, 11008, "F"), (8, 11008, 11008, "F"), (8, 4096, 14336, "F")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    import torch
    gen = torch.Generator(device="cuda").manual_seed(5)
    for m, n, k, order in SHAPES:
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        chosen = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        variants = {chosen.tile: chosen}
        if n == 4096 and k == 4096:
            for b_load in skinny.B_LOADS:
                for splits in (2, 4, 8):
                    s = dataclasses.replace(chosen, b_load=b_load, splits=splits)
                    variants.setdefault(s.tile, s)
        calls = {}
        for name, spec in variants.items():
            cs = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
            err = launch_error(torch, cs[0], d, want)
            assert err < 5e-3, (name, err)
            calls[name] = cs
        mm = [(lambda a=a, b=b: torch.mm(a, b)) for a, b, _, _ in xs]
        if args.ncu:
            for j in range(2):
                mm[j % sets]()
                calls[chosen.tile][j % sets]()
            torch.cuda.synchronize()
            print(f"ncu {m}x{n}x{k} {order}: mm then {chosen.tile}, twice", flush=True)
            continue
        fns = {"mm": lambda i: mm[i](), **{nm: (lambda cs: lambda i: cs[i]())(cs) for nm, cs in calls.items()}}
        single = benchmod.time_interleaved(fns, rounds=3, reps=30, rotate=sets)
        B = args.batch

        def batched(f):
            return lambda i: [f((i * B + j) % sets) for j in range(B)]
        batch = benchmod.time_interleaved({nm: batched(f) for nm, f in fns.items()}, rounds=3, reps=10)
        gb = n * k * 2 / 1e9
        print(f"== {m}x{n}x{k} {order} (sets {sets}, batch {B}); us per GEMM: single / batched (TB/s batched)")
        for nm in sorted(fns, key=lambda x: batch[x].median_ms):
            s, bt = single[nm].median_ms * 1e3, batch[nm].median_ms * 1e3 / B
            print(f"  {nm:24s} {s:7.1f} / {bt:7.1f}  ({gb / bt * 1e3:.2f} TB/s){'  <- schedule' if nm == chosen.tile else ''}",
                  flush=True)
        xs = fns = calls = mm = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
