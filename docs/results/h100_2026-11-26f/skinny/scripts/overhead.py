"""Fixed cost of a skinny launch: the trace build's span (first block entry to last block exit, globaltimer) beside
Nsight Compute's gpu__time_duration (run under ncu) or CUDA-event times (--events), ours and torch.mm, K 4096 / 512 / 128."""
import dataclasses, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
import numpy as np
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild

CONFIGS = [(1, 4, 8, 4), (1, 4, 4, 4), (1, 4, 2, 2), (1, 16, 2, 2), (1, 4, 1, 1), (1, 16, 1, 1)]


def main():
    events = "--events" in sys.argv
    import torch
    cp = gpu.cupy()
    gen = torch.Generator(device="cuda").manual_seed(5)
    m, n, order = 8, 4096, "F"
    for k in (4096, 512, 128):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        fns = {"mm": (lambda i: torch.mm(xs[i][0], xs[i][1]))}
        spans = {}
        for tma, stages, cluster, splits in CONFIGS:
            if splits > 1 and k // 64 < splits:
                continue
            opts = (f"-DFRAGLAB_SKINNY_STAGES={stages}", f"-DFRAGLAB_SKINNY_CLUSTER={cluster}", "-DFRAGLAB_SKINNY_TRACE")
            name = base.name()
            mod = gpu.module(KernelBuild(skinny.ENTRY, (name,), opts))
            fn = mod.get_function(name)
            trace = cp.ndarray((4096 * 8,), cp.uint64, memptr=mod.get_global("fraglab_skinny_trace"))
            smem = skinny.smem_bytes(m, base.layout, stages)
            fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
            spec = dataclasses.replace(base, splits=splits, b_load="tma" if tma else "copy")
            grid = skinny.grid_blocks(n, splits, cluster)
            calls = []
            for a, b, bias, _ in xs:
                key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
                       k, b.stride(1), n, n, n, n)
                calls.append(gpu.PackedLaunch(fn, grid, skinny.threads(spec.layout), skinny.launch_parameters(key),
                                              shared_mem=smem))
            err = launch_error(torch, calls[0], d, want)
            assert err < 5e-3, err
            label = f"t{stages}c{cluster}k{splits}"
            if events:
                fns[label] = (lambda cs: lambda i: cs[i]())(calls)
                continue
            got = []
            for rep in range(3):
                trace.fill(0)
                cp.cuda.runtime.deviceSynchronize()
                calls[rep % sets]()
                cp.cuda.runtime.deviceSynchronize()
                t = trace.get().reshape(4096, 8)[:grid].astype(np.int64)
                got.append((t[:, 6].max() - t[:, 0].min()) / 1000)
            print(f"K {k} {label} grid {grid}: trace spans {' '.join(f'{s:.2f}' for s in got)} us", flush=True)
        if events:
            t = benchmod.time_interleaved(fns, rounds=3, reps=30, rotate=sets)
            print(f"K {k} events (us): " + "  ".join(f"{x} {v.median_ms * 1e3:.2f}" for x, v in t.items()), flush=True)
        else:
            for rep in range(3):
                torch.cuda.synchronize()
                torch.mm(xs[rep % sets][0], xs[rep % sets][1])
            torch.cuda.synchronize()
            print(f"K {k} mm x3", flush=True)
        xs = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
