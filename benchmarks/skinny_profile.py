"""One launch of each given skinny GEMM variant (and of torch.mm at the same shape), for Nsight Compute: f16, bias
per column + ReLU, D f16, random inputs; each variant's D is checked against torch.

Usage (device): ncu --kernel-name regex:'skinny|gemm|xmma' python3 benchmarks/skinny_profile.py \\
    4x1n64:4:4:8@64,4096,4096,F mm@64,4096,4096,F
(layout:splits:stages:cluster@M,N,K,B order; `mm` for torch.mm)
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.skinny_sweep import variant_spec  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402


def main() -> int:
    import torch

    jobs = []
    for arg in sys.argv[1:]:
        what, shape = arg.split("@")
        m, n, k, order = shape.split(",")
        variant = None if what == "mm" else what.split(":")
        if variant:
            variant = (variant[0], *map(int, variant[1:]))
        jobs.append((variant, int(m), int(n), int(k), order))
    specs = {(v, o): variant_spec(v[0], o, v[1], v[2], v[3]) for v, m, n, k, o in jobs if v}
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, {spec.build() for spec in specs.values()}))
    gen = torch.Generator(device="cuda").manual_seed(3)
    bad = 0
    for variant, m, n, k, order in jobs:
        a = (torch.rand(m, k, generator=gen, device="cuda") - 0.5).half()
        wt = (torch.rand(n, k, generator=gen, device="cuda") - 0.5).half()
        b = wt.t() if order == "F" else wt.t().contiguous()
        bias = torch.rand(n, generator=gen, device="cuda")
        if variant is None:
            torch.mm(a, b)
            torch.cuda.synchronize()
            continue
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        skinny.bind(specs[(variant, order)], a, b, d, m=m, n=n, k=k, bias=bias)()
        torch.cuda.synchronize()
        want = torch.relu(a.double() @ b.double() + bias.double()).float()   # on the GPU, but no GEMM kernel
        err = float(((d.float() - want).abs().max() / want.abs().max()).item())
        bad += not err < 2e-3
        print(f"{'/'.join(map(str, variant))} {m}x{n}x{k} {order}: err {err:.1e}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
