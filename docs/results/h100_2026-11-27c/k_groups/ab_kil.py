"""A/B: split-K's K-blocks interleaved between a tile's blocks (block r takes K-blocks r, r + splits, ...: the blocks
of a cluster read neighbouring 128-byte pieces of the same weight rows at about the same time) against contiguous
shares; the wgmma split-K tiles and the skinny GEMM; per-launch events, weights rotated past L2, beside torch.mm."""
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma, skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild


def rebind(launch, build, name, smem):
    kernel = gpu.function(build, name)
    if kernel.max_dynamic_shared_size_bytes < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    launch.function = kernel.kernel.ptr
    return launch


gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
GROUPS = (1, 2, 4)
cases = [(m, 4096, k, "64x64pk2" if m == 64 else "128x64k2") for m in (64, 128) for k in (4096, 11008, 14336)]
cases += [(m, n, k, "skinny") for m in (1, 8, 16, 32) for n in (4096, 11008, 14336) for k in (4096, 11008, 14336)]
if len(sys.argv) > 2:
    cases = [c for c in cases if f"{c[0]}x{c[1]}x{c[2]}" in sys.argv[2].split(",")]
for m, n, k, tile in cases:
    for order in ("F", "C"):
        if tile == "skinny":
            spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
            smem = skinny.smem_bytes(m, spec.layout, spec.stages)
            b0 = spec.build()
            builds = {g: KernelBuild(b0.entry, b0.name_expressions, b0.options + (f"-DFRAGLAB_SKINNY_K_GROUP={g}",))
                      for g in GROUPS}
            bind = lambda a, b, bias: skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias)
            label = spec.tile
        else:
            spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order,
                                  tile=tile, store="tma")
            smem = spec.smem_bytes
            builds = {g: wgmma.build_of((spec.name(),), (f"-DFRAGLAB_WGMMA_K_GROUP={g}",)) for g in GROUPS}
            bind = lambda a, b, bias: wgmma.bind(spec, a, b, d, bias=bias, shared=False)
            label = tile
        if tile == "skinny" and spec.splits == 1:
            continue
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        variants = {"g0": [bind(a, b, bias) for a, b, bias, _ in xs]}
        for g, build in builds.items():
            skinny._LAUNCHES.clear()   # (bind memoises the skinny launches: each variant needs launches of its own)
            variants[f"g{g}"] = [rebind(bind(a, b, bias), build, spec.name(), smem) for a, b, bias, _ in xs]
            assert variants["g0"][0] is not variants[f"g{g}"][0]
        skinny._LAUNCHES.clear()
        fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        errs = {}
        for name, ls in variants.items():
            errs[name] = launch_error(torch, lambda: ls[0](), d, want)
            if errs[name] < 5e-3:
                fns[name] = (lambda ls: (lambda i: ls[i]()))(ls)
        t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
        key = f"{m}x{n}x{k} {order} {label}"
        out[key] = {"us": {name: v.median_ms * 1e3 for name, v in t.items()}, "err": errs}
        print(key, "  ".join(f"{name} {v:.2f}" for name, v in out[key]["us"].items()),
              " errs " + " ".join(f"{n_}:{e:.1e}" for n_, e in errs.items()), flush=True)
        xs = d = variants = fns = None
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
