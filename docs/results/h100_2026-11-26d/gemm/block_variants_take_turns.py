# block-scaled fp8: the promotion after each K-block's wait<0> (default) against two products in flight
# (-DFRAGLAB_BLOCK_SCALE_OVERLAP), plus unscaled and rowwise e4m3 on the same tile; D bf16; TFLOP/s
import sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import torch
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
from wgmma_suite import time_kernels

def kernel_with(spec, options):
    k = gpu.function(wgmma.build_of((spec.name(),), options), spec.name())
    if k.max_dynamic_shared_size_bytes < spec.smem_bytes:
        k.max_dynamic_shared_size_bytes = spec.smem_bytes
    return k

def bind_with(kern, spec, *args, **kw):
    orig = wgmma._kernel
    wgmma._kernel = lambda s: kern
    try:
        return wgmma.bind(spec, *args, shared=False, **kw)
    finally:
        wgmma._kernel = orig

for m, n, k in ((4096, 4096, 7168), (4096, 7168, 16384), (8192, 8192, 8192), (4096, 2112, 7168), (128, 7168, 16384)):
    ka, nb = -(-k // 128), -(-n // 128)
    sets = max(1, min(4, (300 << 20) // (m * k + k * n)))
    g = torch.Generator(device="cuda").manual_seed(1)
    xs = [dict(a=((torch.rand(m, k, generator=g, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn),
               b=((torch.rand(n, k, generator=g, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn).t(),
               sa=torch.rand(m, ka, generator=g, device="cuda") + .5, sb=torch.rand(nb, ka, generator=g, device="cuda") + .5,
               sr=torch.rand(m, 1, generator=g, device="cuda") + .5, sc=torch.rand(1, n, generator=g, device="cuda") + .5)
          for _ in range(sets)]
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    spec = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", block_scaled=True)
    base = [wgmma.bind(spec, x["a"], x["b"], d, scale_a=x["sa"], scale_b=x["sb"]) for x in xs]
    variants = {"take turns": ("-DFRAGLAB_BLOCK_SCALE_PINGPONG",)}
    vb = {name: [bind_with(kernel_with(spec, o), spec, x["a"], x["b"], d, scale_a=x["sa"], scale_b=x["sb"]) for x in xs]
          for name, o in variants.items()}
    plain_spec = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", tile=spec.tile)
    row_spec = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", tile=spec.tile, scaled=True)
    plain = [wgmma.bind(plain_spec, x["a"], x["b"], d) for x in xs]
    row = [wgmma.bind(row_spec, x["a"], x["b"], d, scale_a=x["sr"], scale_b=x["sc"]) for x in xs]
    base[0](None); torch.cuda.synchronize(); want = d.clone()
    same = []
    for name, ls in vb.items():
        d.fill_(float("nan")); ls[0](None); torch.cuda.synchronize()
        same.append(bool(torch.equal(d, want)))
    fns = {"block": lambda i: base[i](None), **{name: (lambda ls: lambda i: ls[i](None))(ls) for name, ls in vb.items()},
           f"unscaled {spec.tile}": lambda i: plain[i](None), f"rowwise {spec.tile}": lambda i: row[i](None)}
    ms = time_kernels(torch, fns, sets)
    print(f"{m}x{n}x{k} {spec.tile}: " + "  ".join(f"{name} {2*m*n*k/v/1e9:.0f}" for name, v in ms.items())
          + f"  variants D bitwise equal: {same}", flush=True)
