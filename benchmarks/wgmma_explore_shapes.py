"""Time the wgmma GEMM's tiles on the shapes of issue 25 (ragged, decode, fp8) against torch's cuBLAS calls.

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_explore_shapes.py [--json OUT]
Kernel alone; CUDA events around batches of launches queued behind a GPU sleep (wgmma_suite.time_kernels);
weights rotated over enough copies that none stays in the 50 MB L2 for the decode shapes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402
from wgmma_suite import time_kernels  # noqa: E402

RAGGED = [(3000, 3000, 3000), (1000, 1000, 1000), (5000, 3000, 2000), (4095, 4096, 4096), (4096, 4096, 4096),
          (8192, 8192, 8192)]
RAGGED_TILES = ["128x256", "128x128", "128x64", "128x128p", "64x256p", "128x256g4", "128x256g8"]
DECODE = [(m, n, k) for m in (1, 16, 128) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))]
DECODE_TILES = ["128x64", "128x128", "128x256", "64x256p"]
FP8 = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]


def sets_for(torch, weight_bytes: int) -> int:
    return max(2, min(16, -(-3 * 50 * 2**20 // weight_bytes)))


def bench(torch, m, n, k, dtype, tiles, b_order, rotate_weights):
    tdt = torch.float16
    wbytes = n * k * 2
    sets = sets_for(torch, wbytes) if rotate_weights else max(1, min(4, (200 << 20) // ((m * k + k * n) * 2)))
    a = [torch.rand(m, k, device="cuda").sub_(0.5).to(tdt) for _ in range(sets)]
    w = [torch.rand(n, k, device="cuda").sub_(0.5).to(tdt) for _ in range(sets)]
    b = [x.t() for x in w] if b_order == "F" else [x.t().contiguous() for x in w]
    bias = [torch.rand(n, device="cuda") for _ in range(sets)]
    bias16 = [x.to(tdt) for x in bias]
    d = torch.empty(m, n, device="cuda", dtype=tdt)
    fns = {}
    for t in tiles:
        spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", tile=t, out_dtype="f16", b_order=b_order)
        fns[t] = lambda i, s=spec: wgmma.launch(s, a[i], b[i], d, bias=bias[i])
    fns["torch.mm"] = lambda i: torch.mm(a[i], b[i])
    fns["addmm_act"] = lambda i: torch._addmm_activation(bias16[i], a[i], b[i])
    ms = time_kernels(torch, fns, sets)
    flops = 2.0 * m * n * k
    return {name: {"ms": v, "tflops": flops / v / 1e9, "weight_tbs": wbytes / v / 1e9} for name, v in ms.items()}


def bench_fp8(torch, m, n, k):
    sets = max(1, min(4, (200 << 20) // (m * k + k * n)))
    a = [((torch.rand(m, k, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn) for _ in range(sets)]
    w = [((torch.rand(n, k, device="cuda") * 2 - 1) * 4).to(torch.float8_e4m3fn) for _ in range(sets)]
    sa = [torch.rand(m, 1, device="cuda") + 0.5 for _ in range(sets)]
    sb = [torch.rand(1, n, device="cuda") + 0.5 for _ in range(sets)]
    bias = [torch.rand(n, device="cuda") for _ in range(sets)]
    biasb = [x.to(torch.bfloat16) for x in bias]
    one = torch.ones((), device="cuda")
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    fns = {}
    for t in ("128x256", "128x128"):
        spec = wgmma.spec_for("e4m3", m, n, k, act="none", bias_mode="per_n", tile=t, out_dtype="bf16", b_order="F")
        fns[f"fraglab {t} tensorwise+bias"] = lambda i, s=spec: wgmma.launch(s, a[i], w[i].t(), d, bias=bias[i])
    fns["scaled_mm tensorwise"] = lambda i: torch._scaled_mm(a[i], w[i].t(), scale_a=one, scale_b=one,
                                                             out_dtype=torch.bfloat16)
    fns["scaled_mm rowwise"] = lambda i: torch._scaled_mm(a[i], w[i].t(), scale_a=sa[i], scale_b=sb[i],
                                                          out_dtype=torch.bfloat16)
    fns["scaled_mm rowwise+bias"] = lambda i: torch._scaled_mm(a[i], w[i].t(), scale_a=sa[i], scale_b=sb[i],
                                                               bias=biasb[i], out_dtype=torch.bfloat16)
    ok = {}
    for name, f in list(fns.items()):
        try:
            f(0)
            torch.cuda.synchronize()
        except Exception as exc:   # a baseline torch does not offer on this build: say so, time the rest
            ok[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
            del fns[name]
    ms = time_kernels(torch, fns, sets)
    flops = 2.0 * m * n * k
    out = {name: {"ms": v, "tflops": flops / v / 1e9} for name, v in ms.items()}
    out.update({name: {"error": e} for name, e in ok.items()})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    gpu.cupy()
    out = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    specs = [wgmma.spec_for("f16", 1, 1, 1, act="relu", bias_mode="per_n", tile=t, out_dtype="f16", b_order=o).build()
             for t in set(RAGGED_TILES + DECODE_TILES) for o in ("C", "F")]
    specs += [wgmma.spec_for("e4m3", 1, 1, 1, bias_mode="per_n", tile=t, out_dtype="bf16", b_order="F").build()
              for t in ("128x256", "128x128")]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, list(dict.fromkeys(specs))))
    print(f"compiled {len(specs)} in {time.perf_counter() - t0:.0f} s", flush=True)
    res = {}
    for m, n, k in RAGGED:
        r = bench(torch, m, n, k, "f16", RAGGED_TILES, "C", False)
        res[f"ragged {m}x{n}x{k}"] = r
        print(f"ragged {m}x{n}x{k}: " + " ".join(f"{x} {v['tflops']:.0f}" for x, v in r.items()), flush=True)
    for order in ("F", "C"):
        for m, n, k in DECODE:
            r = bench(torch, m, n, k, "f16", DECODE_TILES, order, True)
            res[f"decode {order} {m}x{n}x{k}"] = r
            print(f"decode B{order} {m}x{n}x{k}: " + " ".join(f"{x} {v['tflops']:.1f}/{v['weight_tbs']:.2f}TB/s"
                                                              for x, v in r.items()), flush=True)
    for m, n, k in FP8:
        r = bench_fp8(torch, m, n, k)
        res[f"fp8 {m}x{n}x{k}"] = r
        print(f"fp8 {m}x{n}x{k}: " + " ".join(f"{x} {v.get('tflops', 0):.0f}{' ' + v['error'] if 'error' in v else ''}"
                                             for x, v in r.items()), flush=True)
    out["results"] = res
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
