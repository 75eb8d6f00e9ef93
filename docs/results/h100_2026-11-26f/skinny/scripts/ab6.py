"""Experiment: wgmma consumers (layout wg64) against the schedule's mma.sync grid, column-major B, M <= 32."""
import dataclasses, itertools, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu


def launches(spec, stages, xs, d, m, n, k):
    build = spec.build()
    build = type(build)(build.entry, build.name_expressions, build.options + (f"-DFRAGLAB_SKINNY_STAGES={stages}",))
    fn = gpu.function(build, spec.name())
    smem = skinny.smem_bytes(m, spec.layout, stages)
    fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
    out = []
    for a, b, bias, _ in xs:
        key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
               k, b.stride(1), n, n, n, n)
        out.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, spec.splits, spec.cluster), skinny.threads(spec.layout),
                                    skinny.launch_parameters(key), shared_mem=smem))
    return out


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(19)
    ms = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [1, 8, 16, 32]
    ratios = []
    for m, (n, k) in itertools.product(ms, [(4096, 4096), (4096, 14336), (11008, 4096), (11008, 11008),
                                            (14336, 4096), (14336, 14336)]):
        order = "F"
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        variants = {"base": (base, 4)}
        wg = dataclasses.replace(base, layout="wg64", b_load="tma" if base.splits != 1 else base.b_load)
        variants["wg"] = (wg, 4)
        variants["wg_copy"] = (dataclasses.replace(wg, b_load="copy"), 4)
        for splits in (1, 2, 4):
            if splits != base.splits and k // 64 >= 8 * splits:
                variants[f"wg_k{splits}"] = (dataclasses.replace(wg, splits=splits, b_load="tma",
                                                                 cluster=skinny.cluster_for("F", splits)), 4)
        variants["wg_k1_s8"] = (dataclasses.replace(wg, splits=1, b_load="tma", cluster=1), 8)
        variants["wg_k2_s8"] = (dataclasses.replace(wg, splits=2, b_load="tma", cluster=2), 8)
        fns, errs = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}, {}
        for name, (spec, stages) in variants.items():
            calls = launches(spec, stages, xs, d, m, n, k)
            err = launch_error(torch, calls[0], d, want)
            errs[name] = err
            if err < 5e-3:
                fns[name] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=5, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        best_wg = min((x for x in us if x.startswith("wg")), key=us.get, default=None)
        if best_wg:
            ratios.append(us[best_wg] / us["base"])
        bad = {x: f"{e:.1e}" for x, e in errs.items() if not e < 5e-3}
        print(f"F M {m:3d} {n:6d}x{k:<6d} {base.tile:22s} " + "  ".join(f"{x} {v:.2f}" for x, v in us.items())
              + (f"  best {best_wg} {us[best_wg] / us['base']:.3f}x base, {us['mm'] / us[best_wg]:.3f}x mm" if best_wg else "")
              + (f"  WRONG {bad}" if bad else ""), flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    if ratios:
        print(f"best wg / base: median {statistics.median(ratios):.3f} min {min(ratios):.3f} max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
