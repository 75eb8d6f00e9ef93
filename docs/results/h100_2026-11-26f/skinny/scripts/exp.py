"""A/B of skinny build options: CUDA-event times (interleaved with torch.mm, weights rotated) and trace spans.
Variants: label=opts;... with the schedule's split/load unless given. Dumps raw traces to $OUT/trace_*.npy."""
import dataclasses, os, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
import numpy as np
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild


def variant_launches(base, opts, stages, cluster, xs, d, m, n, k, order, entry=None):
    cp = gpu.cupy()
    name = base.name()
    mod = gpu.module(KernelBuild(entry or skinny.ENTRY, (name,), tuple(opts) + ("-DFRAGLAB_SKINNY_TRACE",
                                                                     f"-DFRAGLAB_SKINNY_STAGES={stages}",
                                                                     f"-DFRAGLAB_SKINNY_CLUSTER={cluster}")))
    fn = mod.get_function(name)
    trace = cp.ndarray((4096 * 8,), cp.uint64, memptr=mod.get_global("fraglab_skinny_trace"))
    smem = skinny.smem_bytes(m, base.layout, stages)
    fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
    grid = skinny.grid_blocks(n, base.splits, cluster)
    calls = []
    for a, b, bias, _ in xs:
        ldb = b.stride(1) if order == "F" else b.stride(0)
        key = (base, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
               k, ldb, n, n, n, n)
        calls.append(gpu.PackedLaunch(fn, grid, skinny.threads(base.layout), skinny.launch_parameters(key),
                                      shared_mem=smem))
    return calls, trace, grid


def main():
    import torch
    cp = gpu.cupy()
    out = Path(os.environ.get("OUT", "/tmp"))
    shapes = [tuple(int(x) if x.isdigit() else x for x in s.split(",")) for s in sys.argv[1].split(";")]
    variants = [v.split("=") for v in sys.argv[2].split(";")]   # label=opt opt|stages|cluster|splits|load
    gen = torch.Generator(device="cuda").manual_seed(5)
    dumps = {}
    for m, n, k, order in shapes:
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        sched = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        fns = {"mm": (lambda i: torch.mm(xs[i][0], xs[i][1]))}
        spans = {}
        for label, spec_text in variants:
            opts, stages, cluster, splits, load, entry = (spec_text.split("|") + [""] * 5)[:6]
            base = dataclasses.replace(sched, splits=int(splits) if splits else sched.splits,
                                       b_load=load or sched.b_load)
            calls, trace, grid = variant_launches(base, opts.split(), int(stages or 4), int(cluster or 8), xs, d,
                                                  m, n, k, order, entry or None)
            err = launch_error(torch, calls[0], d, want)
            assert label.startswith("x") or err < 5e-3, (label, err)
            fns[label] = (lambda cs: lambda i: cs[i]())(calls)
            got, raws = [], []
            for rep in range(8):
                trace.fill(0)
                cp.cuda.runtime.deviceSynchronize()
                calls[rep % sets]()
                cp.cuda.runtime.deviceSynchronize()
                t = trace.get().reshape(4096, 8)[:grid].astype(np.int64)
                if rep >= 2:
                    got.append((t[:, 6].max() - t[:, 0].min()) / 1000)
                    raws.append(t)
            dumps[f"{m}x{n}x{k}{order}_{label}"] = np.stack(raws)
            spans[label] = statistics.median(got)
        t = benchmod.time_interleaved(fns, rounds=3, reps=30 if n * k < 100e6 else 12, rotate=sets)
        print(f"{m}x{n}x{k} {order} sched {sched.tile}: events us " +
              "  ".join(f"{x} {v.median_ms * 1e3:.2f}" for x, v in t.items()) + " | trace span us " +
              "  ".join(f"{x} {v:.2f}" for x, v in spans.items()), flush=True)
        xs = d = fns = None
        torch.cuda.empty_cache()
    np.savez_compressed(out / "traces.npz", **dumps)


if __name__ == "__main__":
    main()
