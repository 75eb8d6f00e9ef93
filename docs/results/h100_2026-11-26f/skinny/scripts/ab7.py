"""Experiment: a producer warp feeding wgmma consumers (layout wg64p, 160 threads) at several splits / clusters /
ring depths, against the schedule's grid, column-major B."""
import dataclasses, itertools, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu


def launches(spec, stages, xs, d, m, n, k, threads, extra_smem):
    build = spec.build()
    build = type(build)(build.entry, build.name_expressions, build.options + (f"-DFRAGLAB_SKINNY_STAGES={stages}",))
    fn = gpu.function(build, spec.name())
    smem = skinny.smem_bytes(m, spec.layout, stages) + extra_smem
    fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
    out = []
    for a, b, bias, _ in xs:
        key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
               k, b.stride(1), n, n, n, n)
        out.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, spec.splits, spec.cluster), threads,
                                    skinny.launch_parameters(key), shared_mem=smem))
    return out


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(23)
    ratios = []
    for m, (n, k) in itertools.product((1, 8, 32), [(4096, 4096), (4096, 14336), (11008, 4096), (11008, 11008),
                                                    (14336, 4096), (14336, 14336)]):
        order = "F"
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        variants = {"base": launches(base, 4, xs, d, m, n, k, skinny.threads(base.layout), 0)}
        for splits, cluster, stages in ((1, 1, 8), (1, 1, 16), (1, 4, 16), (2, 2, 8), (2, 2, 16), (2, 4, 12),
                                        (4, 4, 4), (4, 4, 8)):
            if splits > 1 and k // 64 < 8 * splits:
                continue
            spec = dataclasses.replace(base, layout="wg64p", splits=splits, cluster=cluster, b_load="tma")
            variants[f"p_k{splits}c{cluster}s{stages}"] = launches(spec, stages, xs, d, m, n, k, 160, 8 * stages)
        fns, bad = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}, {}
        for name, calls in variants.items():
            err = launch_error(torch, calls[0], d, want)
            if err < 5e-3:
                fns[name] = (lambda cs: lambda i: cs[i]())(calls)
            else:
                bad[name] = f"{err:.1e}"
        t = benchmod.time_interleaved(fns, rounds=5, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        best = min((x for x in us if x.startswith("p_")), key=us.get, default=None)
        if best:
            ratios.append(us[best] / us["base"])
        print(f"F M {m:3d} {n:6d}x{k:<6d} {base.tile:22s} " + "  ".join(f"{x} {v:.2f}" for x, v in us.items())
              + (f"  best {best} {us[best] / us['base']:.3f}x base, {us['mm'] / us[best]:.3f}x mm" if best else "")
              + (f"  WRONG {bad}" if bad else ""), flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    if ratios:
        print(f"best producer variant / base: median {statistics.median(ratios):.3f} min {min(ratios):.3f} "
              f"max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
