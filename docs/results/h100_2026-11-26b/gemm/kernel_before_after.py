# (run from the repository root: git show 5aff2ec:kernels/gemm/wgmma.cu > .carry/wgmma_before.cu, then
# PYTHONPATH=$PWD python3 docs/results/h100_2026-11-26b/gemm/kernel_before_after.py)
# The kernel before split-K (5aff2ec) against this tree's, same spec and launch, on tiles the change does not
# split: do one-block and ClusterM tiles run as before? f16, bias per column + ReLU, D f16 through TMA.
import sys, torch
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
from wgmma_ragged import head_launch

rebind = head_launch(".carry/wgmma_before.cu")
gpu.cupy()
gen = torch.Generator(device="cuda").manual_seed(5)
# (the tiles the schedule gave at 05:17 UTC; 64x4096x4096 takes 64x64pk2 since, which the old source lacks)
for (m, n, k), order, tile in (((128, 14336, 14336), "C", "128x128"), ((128, 14336, 4096), "F", "128x128"),
                               ((64, 14336, 4096), "F", "64x256p"), ((64, 4096, 4096), "C", "64x64p"),
                               ((4096, 4096, 4096), "C", "128x256"), ((3000, 3000, 3000), "C", "128x192c2"),
                               ((1000, 1000, 1000), "C", "64x128pc2"), ((128, 8192, 8192), "F", "128x64")):
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order,
                          store="tma", tile=tile)
    tc = spec.tile_config
    old_name = spec.name().replace(f"{tc.max_store_buffers}, {tc.cluster_k}>, fraglab::Epilogue",
                                   f"{tc.max_store_buffers}>, fraglab::Epilogue")
    assert old_name != spec.name()
    new = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
    old = [rebind(spec, wgmma.bind(spec, a, b, d, bias=bias, shared=False), old_name) for a, b, bias, _ in xs]
    for label, ls in (("new", new), ("old", old)):
        err = launch_error(torch, lambda: ls[0](), d, want)
        assert err < 5e-3, (label, err)
    fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1]), "new": lambda i: new[i](), "old": lambda i: old[i]()}
    t = benchmod.time_interleaved(fns, rounds=5, reps=20 if m * n * k > 1e10 else 30, rotate=sets)
    us = {name: v.median_ms * 1e3 for name, v in t.items()}
    print(f"{m}x{n}x{k} {order} {spec.tile}: mm {us['mm']:.1f}  new {us['new']:.1f}  old {us['old']:.1f}  "
          f"new/old {us['old'] / us['new']:.3f}", flush=True)
    xs = new = old = fns = None
    torch.cuda.empty_cache()
