"""fp8 e4m3 with a float32 scale per row of A and per column of B (the rowwise recipe) against torch._scaled_mm
rowwise (CUTLASS on sm_90 in torch 2.x), on the same inputs, with and without a per-column bias; the unscaled
kernel and cuBLASLt's tensorwise fp8 GEMM beside them. D bf16 (what torch's rowwise path stores).

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_fp8_rowwise.py [--json OUT] [--sizes 4096x4096x4096,...]
Each row first checks fraglab's D against torch's (both against the float64 reference on sampled rows).
Timing: wgmma_suite.time_kernels (CUDA events around batches queued behind a GPU sleep, shuffled rounds, medians).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.gemm.reference import check_result, e4m3_to_float64, reference_gemm  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402
from wgmma_suite import time_kernels  # noqa: E402

SIZES = ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (16, 4096, 4096), (128, 14336, 4096))


def bench(torch, m, n, k):
    sets = max(1, min(4, (300 << 20) // (m * k + k * n)))
    gen = torch.Generator(device="cuda").manual_seed(m + n + k)
    xs = []
    for _ in range(sets):
        a = ((torch.rand(m, k, generator=gen, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
        w = ((torch.rand(n, k, generator=gen, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn)
        sa = torch.rand(m, 1, generator=gen, device="cuda") + 0.5
        sb = torch.rand(1, n, generator=gen, device="cuda") + 0.5
        bias = torch.rand(n, generator=gen, device="cuda") - 0.5
        xs.append(dict(a=a, b=w.t(), sa=sa, sb=sb, bias=bias, bias16=bias.to(torch.bfloat16)))
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    one = torch.ones((), device="cuda")
    scaled = {bm: wgmma.spec_for("e4m3", m, n, k, bias_mode=bm, out_dtype="bf16", b_order="F", scaled=True)
              for bm in ("none", "per_n")}
    plain = wgmma.spec_for("e4m3", m, n, k, bias_mode="per_n", out_dtype="bf16", b_order="F")
    fns = {
        "fraglab rowwise": lambda i: wgmma.launch(scaled["none"], xs[i]["a"], xs[i]["b"], d, scale_a=xs[i]["sa"],
                                                  scale_b=xs[i]["sb"]),
        "fraglab rowwise+bias": lambda i: wgmma.launch(scaled["per_n"], xs[i]["a"], xs[i]["b"], d, bias=xs[i]["bias"],
                                                       scale_a=xs[i]["sa"], scale_b=xs[i]["sb"]),
        "fraglab tensorwise+bias": lambda i: wgmma.launch(plain, xs[i]["a"], xs[i]["b"], d, bias=xs[i]["bias"]),
        "torch rowwise": lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=xs[i]["sa"], scale_b=xs[i]["sb"],
                                                    out_dtype=torch.bfloat16),
        "torch rowwise+bias": lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=xs[i]["sa"],
                                                         scale_b=xs[i]["sb"], bias=xs[i]["bias16"],
                                                         out_dtype=torch.bfloat16),
        "cuBLASLt tensorwise": lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16),
    }
    # correctness on sampled rows: fraglab's D (rowwise + bias) and torch's, each against float64
    fns["fraglab rowwise+bias"](0)
    torch.cuda.synchronize()
    x = xs[0]
    rows = np.unique(np.r_[0, m - 1, np.random.default_rng(1).integers(0, m, 48)])
    r = torch.as_tensor(rows, device="cuda")
    a64 = e4m3_to_float64(x["a"].view(torch.uint8)[r].cpu().numpy())
    b64 = e4m3_to_float64(x["b"].t().view(torch.uint8).cpu().numpy()).T
    ref, _ = reference_gemm(a64, b64, bias=x["bias"].double().cpu().numpy(), bias_mode="per_n",
                            scale_a=x["sa"][r].double().cpu().numpy(), scale_b=x["sb"].double().cpu().numpy())
    ours = check_result(d[r].float().cpu().numpy(), ref, "e4m3", k=k, out_dtype="bf16")
    theirs_d = fns["torch rowwise+bias"](0)
    theirs = check_result(theirs_d[r].float().cpu().numpy(), ref, "e4m3", k=k, out_dtype="bf16")
    ms = time_kernels(torch, fns, sets)
    flops = 2.0 * m * n * k
    out = {name: {"ms": v, "tflops": flops / v / 1e9} for name, v in ms.items()}
    out["check"] = {"fraglab_ok": ours[0], "fraglab_rel": ours[2], "torch_ok": theirs[0], "torch_rel": theirs[2]}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--sizes", default=None)
    args = ap.parse_args(argv)
    import torch
    gpu.cupy()
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")] if args.sizes else SIZES
    out = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "torch": torch.__version__, "results": {}}
    bad = 0
    print(f"{'M x N x K':>18} {'ok':>5} {'fl rw':>6} {'fl rw+b':>7} {'fl tw+b':>7} {'to rw':>6} {'to rw+b':>7} "
          f"{'Lt tw':>6} {'rw/to':>6} {'rw+b/to':>7}", flush=True)
    for m, n, k in sizes:
        r = bench(torch, m, n, k)
        out["results"][f"{m}x{n}x{k}"] = r
        t = {name: v["tflops"] for name, v in r.items() if "tflops" in v}
        ok = r["check"]["fraglab_ok"]
        bad += not ok
        print(f"{f'{m}x{n}x{k}':>18} {str(ok):>5} {t['fraglab rowwise']:6.0f} {t['fraglab rowwise+bias']:7.0f} "
              f"{t['fraglab tensorwise+bias']:7.0f} {t['torch rowwise']:6.0f} {t['torch rowwise+bias']:7.0f} "
              f"{t['cuBLASLt tensorwise']:6.0f} {t['fraglab rowwise'] / t['torch rowwise']:6.2f} "
              f"{t['fraglab rowwise+bias'] / t['torch rowwise+bias']:7.2f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
