"""Per-block timeline of the skinny GEMM (FRAGLAB_SKINNY_TRACE build): entry, first stage, mid, loop end, after
reduction barrier, after epilogue, exit; summarised over launches with rotated weights."""
import dataclasses, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
import numpy as np
from decode_inputs import decode_inputs, launch_error
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild

CONFIGS = [(1, 4, 8, 4), (0, 4, 8, 4), (1, 8, 4, 4), (1, 16, 2, 2), (1, 12, 2, 2), (1, 6, 4, 4), (1, 4, 4, 4)]
SHAPES = [(8, 4096, 4096, "F"), (8, 4096, 14336, "F"), (8, 11008, 11008, "F")]


def main():
    import torch
    cp = gpu.cupy()
    gen = torch.Generator(device="cuda").manual_seed(5)
    for m, n, k, order in SHAPES:
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        configs = CONFIGS if (n, k) == (4096, 4096) else [(base.b_load == "tma", 4, 8, base.splits)]
        for tma, stages, cluster, splits in configs:
            opts = (f"-DFRAGLAB_SKINNY_STAGES={stages}", f"-DFRAGLAB_SKINNY_CLUSTER={cluster}", "-DFRAGLAB_SKINNY_TRACE")
            name = base.name()
            build = KernelBuild(skinny.ENTRY, (name,), opts)
            mod = gpu.module(build)
            fn = mod.get_function(name)
            trace = cp.ndarray((4096 * 8,), cp.uint64, memptr=mod.get_global("fraglab_skinny_trace"))
            smem = skinny.smem_bytes(m, base.layout, stages)
            fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
            spec = dataclasses.replace(base, splits=splits, b_load="tma" if tma else "copy")
            calls = []
            for a, b, bias, _ in xs:
                ldb = b.stride(1) if order == "F" else b.stride(0)
                key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
                       k, ldb, n, n, n, n)
                calls.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, splits, cluster), skinny.threads(spec.layout),
                                              skinny.launch_parameters(key), shared_mem=smem))
            err = launch_error(torch, calls[0], d, want)
            assert err < 5e-3, err
            grid = skinny.grid_blocks(n, splits, cluster)
            stats = []
            for rep in range(12):
                trace.fill(0)
                calls[rep % sets]()
                cp.cuda.runtime.deviceSynchronize()
                t = trace.get().reshape(4096, 8)[:grid].astype(np.int64)
                if rep < 4:
                    continue
                t0 = t[:, 0].min()
                rel = (t[:, :7] - t0) / 1000.0   # us
                per_sm = np.bincount(t[:, 7].astype(int), minlength=132)
                stats.append(dict(span=rel[:, 6].max(), start_last=rel[:, 0].max(), start_med=np.median(rel[:, 0]),
                                  first=np.median(rel[:, 1] - rel[:, 0]), first_max=(rel[:, 1] - rel[:, 0]).max(),
                                  stream=np.median(rel[:, 3] - rel[:, 1]), loop_end_med=np.median(rel[:, 3]),
                                  loop_end_max=rel[:, 3].max(), red_wait=np.median(rel[:, 4] - rel[:, 3]),
                                  epi=np.median(rel[:, 5] - rel[:, 4]), end_med=np.median(rel[:, 6]),
                                  sms=int((per_sm > 0).sum()), max_per_sm=int(per_sm.max())))
            med = {key: statistics.median(s[key] for s in stats) for key in stats[0]}
            print(f"{m}x{n}x{k} {order} {'tma' if tma else 'cp'} stages {stages:2d} cluster {cluster} splits {splits} "
                  f"grid {grid}: span {med['span']:.1f} | starts med {med['start_med']:.2f} last {med['start_last']:.2f} | "
                  f"first data med {med['first']:.2f} max {med['first_max']:.2f} | stream med {med['stream']:.1f} | "
                  f"loop end med {med['loop_end_med']:.1f} max {med['loop_end_max']:.1f} | red wait {med['red_wait']:.2f} "
                  f"epi {med['epi']:.2f} | end med {med['end_med']:.1f} | SMs {med['sms']} max/SM {med['max_per_sm']}",
                  flush=True)
        xs = d = None
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
