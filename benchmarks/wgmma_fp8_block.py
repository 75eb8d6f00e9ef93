"""Block-scaled fp8 (DeepGEMM's recipe: e4m3 A and B, float32 scales per 1 x 128 of A and 128 x 128 of B, D bf16)
at the shapes of DeepGEMM's published table (DeepSeek-V3's projections at M = 64, 128 and 4096) and at 4096^3 and
8192^3: fraglab.gemm's schedule and the other tiles that hold block scales, beside fraglab's rowwise-scaled kernel
and torch._scaled_mm rowwise on the same bytes (one scale per row and column: less work, an upper bound), and
torch._scaled_mm with block scales where this torch takes them. D is checked against float64 on sampled rows first.

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_fp8_block.py [--json OUT] [--sizes 4096x7168x16384,...]
Timing: wgmma_suite.time_kernels (CUDA events around batches queued behind a GPU sleep, shuffled rounds, medians).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.gemm.reference import check_result, e4m3_to_float64, reference_gemm  # noqa: E402
from wgmma_suite import time_kernels  # noqa: E402

# DeepGEMM's README (deepseek-ai/DeepGEMM, early 2025): "normal GEMMs for dense models", H800, NVCC 12.8, TFLOP/s
DEEPGEMM_H800 = {(64, 2112, 7168): 206, (64, 24576, 1536): 289, (64, 32768, 512): 219, (64, 7168, 16384): 336,
                 (64, 4096, 7168): 287, (64, 7168, 2048): 295, (128, 2112, 7168): 352, (128, 24576, 1536): 535,
                 (128, 32768, 512): 358, (128, 7168, 16384): 645, (128, 4096, 7168): 533, (128, 7168, 2048): 510,
                 (4096, 2112, 7168): 1058, (4096, 24576, 1536): 990, (4096, 32768, 512): 590,
                 (4096, 7168, 16384): 1358, (4096, 4096, 7168): 1304, (4096, 7168, 2048): 1025}
SIZES = (*DEEPGEMM_H800, (4096, 4096, 4096), (8192, 8192, 8192))
VARIANTS = {True: ("128x128", "128x64", "128x128c2", "128x64n2"), False: ("64x64p", "64x128p", "64x64pk2", "128x64k2")}


def torch_block_call(torch, a, b, sa, sb):
    """torch._scaled_mm with 1x128 / 128x128 block scales, in the first layout this torch accepts (None if none)."""
    tries = (lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb.t(), out_dtype=torch.bfloat16),
             lambda: torch._scaled_mm(a, b, scale_a=sa.t().contiguous().t(), scale_b=sb.t(), out_dtype=torch.bfloat16),
             lambda: torch._scaled_mm(a, b, scale_a=sa.t().contiguous().t(), scale_b=sb.contiguous().t(),
                                      out_dtype=torch.bfloat16))
    for call in tries:
        try:
            call()
            torch.cuda.synchronize()
            return call
        except Exception:   # this torch does not take that layout (or block scales at all)
            continue
    return None


def bench(torch, m, n, k):
    sets = max(1, min(4, (300 << 20) // (m * k + k * n)))
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    ka, nb = -(-k // 128), -(-n // 128)
    xs = []
    for _ in range(sets):
        a = ((torch.rand(m, k, generator=gen, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
        w = ((torch.rand(n, k, generator=gen, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
        xs.append(dict(a=a, b=w.t(), sa=torch.rand(m, ka, generator=gen, device="cuda") + 0.5,
                       sb=torch.rand(nb, ka, generator=gen, device="cuda") + 0.5,
                       sa_row=torch.rand(m, 1, generator=gen, device="cuda") + 0.5,
                       sb_col=torch.rand(1, n, generator=gen, device="cuda") + 0.5))
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    chosen = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", block_scaled=True)
    specs = {"fraglab block": chosen}
    for tile in VARIANTS[m > 128]:
        if tile != chosen.tile:
            specs[f"block {tile}"] = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", block_scaled=True,
                                                    tile=tile)
    fns = {name: (lambda s: lambda i: wgmma.launch(s, xs[i]["a"], xs[i]["b"], d, scale_a=xs[i]["sa"],
                                                   scale_b=xs[i]["sb"]))(s) for name, s in specs.items()}
    rowwise = wgmma.spec_for("e4m3", m, n, k, out_dtype="bf16", b_order="F", scaled=True)
    fns["fraglab rowwise"] = lambda i: wgmma.launch(rowwise, xs[i]["a"], xs[i]["b"], d, scale_a=xs[i]["sa_row"],
                                                    scale_b=xs[i]["sb_col"])
    fns["torch rowwise"] = lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=xs[i]["sa_row"],
                                                      scale_b=xs[i]["sb_col"], out_dtype=torch.bfloat16)
    x = xs[0]
    rows = np.unique(np.r_[0, m - 1, np.random.default_rng(1).integers(0, m, 48)])
    r = torch.as_tensor(rows, device="cuda")
    a64 = e4m3_to_float64(x["a"].view(torch.uint8)[r].cpu().numpy())
    b64 = e4m3_to_float64(x["b"].t().view(torch.uint8).cpu().numpy()).T
    ref, _ = reference_gemm(a64, b64, scale_a=x["sa"][r].double().cpu().numpy(), scale_b=x["sb"].double().cpu().numpy())
    checks = {}
    for name, s in specs.items():
        d.fill_(float("nan"))
        fns[name](0)
        torch.cuda.synchronize()
        ok, _, rel = check_result(d[r].float().cpu().numpy(), ref, "e4m3", k=k, out_dtype="bf16")
        checks[name] = {"ok": bool(ok), "rel": rel, "tile": s.tile}
        if not ok:
            del fns[name]
    call = torch_block_call(torch, x["a"], x["b"], x["sa"], x["sb"])
    if call is not None:
        ok, _, rel = check_result(call()[r].float().cpu().numpy(), ref, "e4m3", k=k, out_dtype="bf16")
        checks["torch block"] = {"ok": bool(ok), "rel": rel}
        fns["torch block"] = lambda i: torch_block_call(torch, xs[i]["a"], xs[i]["b"], xs[i]["sa"], xs[i]["sb"])()
    ms = time_kernels(torch, fns, sets)
    out = {name: {"ms": v, "tflops": 2.0 * m * n * k / v / 1e9} for name, v in ms.items()}
    out["check"] = checks
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--sizes", default=",".join("x".join(map(str, s)) for s in SIZES))
    args = parser.parse_args()
    import torch

    results = {}
    for text in args.sizes.split(","):
        m, n, k = (int(v) for v in text.split("x"))
        r = bench(torch, m, n, k)
        results[text] = r
        best = max((v["tflops"], name) for name, v in r.items() if name.startswith(("fraglab block", "block ")))
        line = f"{text:18s} tile {r['check']['fraglab block']['tile']:9s}"
        line += "  ".join(f" {name} {v['tflops']:6.0f}" for name, v in r.items() if name != "check")
        published = DEEPGEMM_H800.get((m, n, k))
        line += f" | best block {best[0]:.0f} ({best[1]})" + (f", DeepGEMM H800 {published}" if published else "")
        bad = [name for name, c in r["check"].items() if not c["ok"]]
        print(line + (f" BAD {bad}" if bad else ""), flush=True)
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
