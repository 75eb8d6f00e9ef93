"""Launch given skinny configs (stages|cluster|splits|load) twice each at one shape, for Nsight Compute."""
import dataclasses, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild


def main():
    import torch
    m, n, k, order = (int(x) if x.isdigit() else x for x in sys.argv[1].split(","))
    gen = torch.Generator(device="cuda").manual_seed(5)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    sched = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
    for v in sys.argv[2].split(";"):
        stages, cluster, splits, load = v.split("|")
        spec = dataclasses.replace(sched, splits=int(splits), b_load=load)
        name = spec.name()
        fn = gpu.module(KernelBuild(skinny.ENTRY, (name,), (f"-DFRAGLAB_SKINNY_STAGES={stages}",
                                                             f"-DFRAGLAB_SKINNY_CLUSTER={cluster}"))).get_function(name)
        smem = skinny.smem_bytes(m, spec.layout, int(stages))
        fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
        calls = []
        for a, b, bias, _ in xs:
            ldb = b.stride(1) if order == "F" else b.stride(0)
            key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
                   k, ldb, n, n, n, n)
            calls.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, int(splits), int(cluster)),
                                          skinny.threads(spec.layout), skinny.launch_parameters(key), shared_mem=smem))
        err = launch_error(torch, calls[0], d, want)
        print(f"{v}: err {err:.1e}", flush=True)
        calls[1 % sets]()
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
