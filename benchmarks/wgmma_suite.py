"""Check and time the wgmma GEMM side by side with cuBLAS (CuPy matmul, torch.mm) and torch._addmm_activation.

Run on the device: PYTHONPATH=$PWD python3 benchmarks/wgmma_suite.py [--quick] [--json OUT.json]
Correctness: float64 reference (torch on the GPU for A @ B, fraglab's numpy epilogue reference for the rest),
outputs poisoned with NaN first, fresh random inputs per check. Timing: CUDA events per launch, warm-up, median
over rounds that interleave the kernels and rotate input sets (so one buffer is not timed out of L2).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402

from fraglab.gemm.reference import activate, check_result  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402


def torch_dtype(torch, dtype):
    return torch.float16 if dtype == "f16" else torch.bfloat16


def make_inputs(torch, m, n, k, dtype, *, bias_mode="none", has_c=False, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    uni = lambda *shape: torch.rand(*shape, generator=g, device="cuda") * 2 - 1  # noqa: E731
    if dtype == "e4m3":   # B column-major (the K-major operand 8-bit wgmma needs): an N x K array, transposed
        a = (uni(m, k) * 4).to(torch.float8_e4m3fn)
        b = (uni(n, k) * 4).to(torch.float8_e4m3fn).t()
    else:
        a = uni(m, k).to(torch_dtype(torch, dtype))
        b = uni(k, n).to(torch_dtype(torch, dtype))
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = uni(*shape) if shape else None
    c = uni(m, n) if has_c else None
    return {"a": a, "b": b, "bias": bias, "c": c}


def reference_rows(torch, x, rows, *, act, bias_mode, alpha, beta, leaky_slope):
    """(D, Z) float64 on host for the chosen rows."""
    r = torch.as_tensor(rows, device="cuda")
    acc = (x["a"][r].double() @ x["b"].double()).cpu().numpy()
    pre = alpha * acc
    if x["c"] is not None:
        pre = pre + beta * x["c"][r].double().cpu().numpy()
    if bias_mode == "per_n":
        pre = pre + x["bias"].double().cpu().numpy()[None, :]
    elif bias_mode == "per_m":
        pre = pre + x["bias"][r].double().cpu().numpy()[:, None]
    elif bias_mode == "full":
        pre = pre + x["bias"][r].double().cpu().numpy()
    return activate(pre, act, leaky_slope), pre


def check(torch, m, n, k, dtype, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, seed=1, tile=None,
          b_swap=None, rows_limit=2048):
    alpha, leaky = 1.25, 0.1
    has_c = beta != 0
    x = make_inputs(torch, m, n, k, dtype, bias_mode=bias_mode, has_c=has_c, seed=seed)
    spec = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=has_c, save_z=save_z, tile=tile)
    if b_swap is not None:
        spec = wgmma.WgmmaKernelSpec(spec.dtype, spec.act, spec.bias_mode, spec.has_c, spec.save_z, spec.tile, b_swap)
    d = torch.full((m, n), float("nan"), device="cuda")
    z = torch.full((m, n), float("nan"), device="cuda") if save_z else None
    wgmma.launch(spec, x["a"], x["b"], d, c=x["c"], bias=x["bias"], z=z, alpha=alpha, beta=beta, leaky_slope=leaky)
    torch.cuda.synchronize()
    rows = np.arange(m) if m <= rows_limit else np.unique(np.r_[0, m - 1, np.random.default_rng(seed).choice(m, 96)])
    d_ref, z_ref = reference_rows(torch, x, rows, act=act, bias_mode=bias_mode, alpha=alpha, beta=beta,
                                  leaky_slope=leaky)
    ok, max_abs, rel = check_result(d[torch.as_tensor(rows, device="cuda")].cpu().numpy(), d_ref, "f16", z_ref=z_ref)
    if z is not None:
        z_ok, _, z_rel = check_result(z[torch.as_tensor(rows, device="cuda")].cpu().numpy(), z_ref, "f16")
        ok, rel = ok and z_ok, max(rel, z_rel)
    return {"m": m, "n": n, "k": k, "dtype": dtype, "act": act, "bias": bias_mode, "beta": beta, "save_z": save_z,
            "tile": spec.tile, "b_swap": spec.b_swap_offsets, "ok": ok, "rel_err": rel}


def time_kernels(torch, fns: dict, sets: int, rounds: int = 7, reps: int = 10) -> dict:
    """Median over rounds of the mean ms per launch of each fn(i) (i = input set). Each batch of `reps` launches
    sits behind a ~2 ms GPU sleep, so the host has queued them all before the first starts: the events time the
    GPU, not Python's launch overhead. Rounds interleave the kernels in a shuffled order."""
    for f in fns.values():
        for i in range(sets):
            f(i)
    torch.cuda.synchronize()
    times = {name: [] for name in fns}
    order = list(fns)
    rng = np.random.default_rng(5)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(4_000_000)
            start.record()
            for j in range(reps):
                fns[name](j % sets)
            end.record()
            torch.cuda.synchronize()
            times[name].append(start.elapsed_time(end) / reps)
    return {name: statistics.median(v) for name, v in times.items()}


def launch_overhead(torch, cp, n: int = 256, calls: int = 300) -> dict:
    """Host microseconds per call at n^3 (f16), wgmma.launch against cupy.matmul and torch.mm."""
    a = torch.rand(n, n, device="cuda").half()
    b = torch.rand(n, n, device="cuda").half()
    d = torch.empty(n, n, device="cuda")
    spec = wgmma.spec_for("f16", n, n, n)
    out = {}
    fns = {"wgmma.launch": lambda: wgmma.launch(spec, a, b, d), "torch.mm": lambda: torch.mm(a, b)}
    if cp is not None:
        ca, cb = cp.from_dlpack(a), cp.from_dlpack(b)
        fns["cupy.matmul"] = lambda: cp.matmul(ca, cb)
    for name, f in fns.items():
        f()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        torch.cuda.synchronize()
        out[name] = (time.perf_counter() - t0) / calls * 1e6
    return out


def parse_variants(text: str | None, tiles: list[str] | None) -> list[tuple[str, str, str, str]]:
    """'128x256:f16:tma,128x256c2:f32,128x256:in:tma:F' -> [(tile, out dtype, store, B order)]; plain tile names
    mean f32 direct stores; B order C (row-major K x N) unless F (column-major: a row-major N x K)."""
    if text:
        out = []
        for item in text.split(","):
            parts = item.split(":")
            tile, dt = parts[0], parts[1] if len(parts) > 1 else "f32"
            out.append((tile, dt, parts[2] if len(parts) > 2 else wgmma.DEFAULT_STORE,
                        parts[3] if len(parts) > 3 else "C"))
        return out
    return [(t, "f32", "direct", "C") for t in (tiles or [None])]


def bench_size(torch, cp, m, n, k, dtype, *, variants, act="relu", bias_mode="per_n"):
    per_set = (m * k + k * n) * (1 if dtype == "e4m3" else 2)
    sets = max(1, min(4, (200 << 20) // per_set))
    xs = [make_inputs(torch, m, n, k, dtype, bias_mode=bias_mode, seed=10 + s) for s in range(sets)]
    outs = {"f32": torch.empty((m, n), device="cuda"),
            "f16": torch.empty((m, n), device="cuda", dtype=torch.float16),
            "bf16": torch.empty((m, n), device="cuda", dtype=torch.bfloat16)}
    fns = {}
    if dtype == "e4m3":   # already column-major; D in f16 (an 8-bit D is not offered)
        variants = [(t, "f16" if o == "in" else o, st, "F") for t, o, st, _ in variants]
        for x in xs:
            x["b_F"] = x["b"]
    elif any(v[3] == "F" for v in variants):
        for x in xs:   # the same B, column-major (a row-major N x K array, transposed)
            x["b_F"] = x["b"].t().contiguous().t()
    for tile, out, store, b_order in variants:
        out = dtype if out == "in" else out
        fused = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, tile=tile, out_dtype=out, store=store,
                               b_order=b_order)
        plain = wgmma.spec_for(dtype, m, n, k, tile=tile, out_dtype=out, store=store, b_order=b_order)
        label = f"{fused.tile},{out},{store}" + (",B^T" if b_order == "F" else "")
        d, b_key = outs[out], "b" if b_order == "C" else "b_F"
        fns[f"wgmma_fused[{label}]"] = lambda i, s=fused, d=d, bk=b_key: wgmma.launch(s, xs[i]["a"], xs[i][bk], d,
                                                                                    bias=xs[i]["bias"])
        fns[f"wgmma_plain[{label}]"] = lambda i, s=plain, d=d, bk=b_key: wgmma.launch(s, xs[i]["a"], xs[i][bk], d)
    if dtype == "e4m3":   # cuBLASLt's fp8 GEMM, unit scales, f16 D; with the bias fused (no activation there)
        one = torch.ones((), device="cuda")
        bias16 = [x["bias"].half() for x in xs]
        fns["torch_scaled_mm"] = lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=one, scale_b=one,
                                                            out_dtype=torch.float16)
        fns["torch_scaled_mm_bias"] = lambda i: torch._scaled_mm(xs[i]["a"], xs[i]["b"], scale_a=one, scale_b=one,
                                                                 bias=bias16[i], out_dtype=torch.float16)
        ms = time_kernels(torch, fns, sets)
        flops = 2.0 * m * n * k
        return {name: {"ms": t, "tflops": flops / t / 1e9} for name, t in ms.items()}
    fns["torch_mm"] = lambda i: torch.mm(xs[i]["a"], xs[i]["b"])
    if dtype == "f16" and cp is not None:
        cxs = [(cp.from_dlpack(x["a"]), cp.from_dlpack(x["b"])) for x in xs]
        fns["cupy_matmul"] = lambda i: cp.matmul(*cxs[i])
    bias_t = [x["bias"].to(torch_dtype(torch, dtype)) for x in xs]
    if act in ("relu", "gelu") and bias_mode == "per_n":
        fns["torch_addmm_act"] = lambda i: torch._addmm_activation(bias_t[i], xs[i]["a"], xs[i]["b"],
                                                                   use_gelu=act == "gelu")
    ms = time_kernels(torch, fns, sets)
    flops = 2.0 * m * n * k
    return {name: {"ms": t, "tflops": flops / t / 1e9} for name, t in ms.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--tiles", default=None, help="comma-separated tile names to time")
    ap.add_argument("--skip-checks", action="store_true", help="time only (the GPU tests checked this build)")
    ap.add_argument("--variants", default=None, help="tile:out:store list to time, e.g. 128x256:f16:tma (default: "
                                                     "--tiles with f32 D)")
    ap.add_argument("--sizes", default=None, help="MxNxK list to time (default: the square and awkward shapes)")
    ap.add_argument("--act", default="relu")
    ap.add_argument("--dtype", default="f16", help="input type of the --sizes runs: f16, bf16 or e4m3")
    args = ap.parse_args(argv)
    import torch
    try:
        import cupy as cp
    except ImportError:
        cp = None
    out = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    shapes = [(128, 256, 64), (1, 8, 8), (257, 136, 200), (997, 1000, 1024), (131, 520, 72), (1000, 4104, 640),
              (4096, 4096, 4096)]
    jobs = [dict(m=m, n=n, k=k, dtype=dtype, tile=tile) for (m, n, k) in shapes for dtype in wgmma.DTYPES
            for tile in (*wgmma.launcher_tiles("C"), "128x128p", "64x256p")]
    combos = [(act, bias, beta, save_z) for act in wgmma.ACT_KINDS for bias in wgmma.BIAS_MODES
              for beta, save_z in ((0.0, False), (0.5, True))]
    jobs += [dict(m=193, n=264, k=136, dtype=wgmma.DTYPES[i % 2], act=act, bias_mode=bias, beta=beta, save_z=save_z,
                  seed=100 + i) for i, (act, bias, beta, save_z) in enumerate(combos)]
    t0 = time.perf_counter()
    gpu.cupy()
    from concurrent.futures import ThreadPoolExecutor
    wanted = []
    for j in jobs:
        for swap in (wgmma.B_SWAP_OFFSETS,):
            wanted.append(wgmma.WgmmaKernelSpec(j["dtype"], j.get("act", "relu"), j.get("bias_mode", "per_n"),
                                                j.get("beta", 0.0) != 0, j.get("save_z", False),
                                                j.get("tile") or wgmma.choose_tile(j["m"], j["n"]), swap).build())
    wanted += [wgmma.spec_for(dt, 1, 1, 1, act=act, bias_mode=bias, tile=t).build() for dt in wgmma.DTYPES
               for t in (*wgmma.launcher_tiles("C"), "128x128p", "64x256p") for act, bias in (("none", "none"), ("relu", "per_n"))]
    wanted += [wgmma.WgmmaKernelSpec("f16", "relu", "per_n", tile="128x256", b_swap_offsets=s).build()
               for s in (False, True)]
    wanted += [wgmma.spec_for(dt, 1, 1, 1, act="relu", bias_mode="per_n", tile=t, out_dtype=dt).build()
               for dt in wgmma.DTYPES for t in wgmma.launcher_tiles("C")]
    wanted = list(dict.fromkeys(wanted))
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, wanted))
    print(f"compiled {len(wanted)} instantiations in {time.perf_counter() - t0:.1f} s", flush=True)

    # Which descriptor offset assignment for MN-major B is right: try both on one tile.
    swap_results = [check(torch, 256, 512, 192, "f16", b_swap=s, tile="128x256") for s in (False, True)]
    out["b_swap_probe"] = swap_results
    for r in swap_results:
        print(f"b_swap={r['b_swap']}: ok={r['ok']} rel={r['rel_err']:.2e}", flush=True)
    good = [r["b_swap"] for r in swap_results if r["ok"]]
    b_swap = good[0] if good else None
    if b_swap is not None and b_swap != wgmma.B_SWAP_OFFSETS:
        wgmma.B_SWAP_OFFSETS = b_swap  # for the rest of this run; the launcher's constant must be changed to match
    checks = []
    for j in ([] if args.skip_checks else jobs):
        print(f"check {j}", end=" ", flush=True)
        checks.append(check(torch, b_swap=b_swap, **j))
        print("ok" if checks[-1]["ok"] else f"FAILED rel={checks[-1]['rel_err']:.2e}", flush=True)
    out["checks"] = checks
    bad = [c for c in checks if not c["ok"]]
    print(f"checks: {len(checks) - len(bad)}/{len(checks)} passed", flush=True)
    for c in bad[:12]:
        print("  FAILED", c, flush=True)
    bench = {}
    if not bad:
        squares = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
        others = [(1024, 1024, 1024), (8192, 8192, 1024), (4096, 14336, 4096), (1000, 4096, 4096)]
        runs = [("f16", s) for s in squares + ([] if args.quick else others)] + [("bf16", s) for s in squares]
        tiles = args.tiles.split(",") if args.tiles else None
        variants = parse_variants(args.variants, tiles)
        if args.sizes:
            runs = [(args.dtype, tuple(int(v) for v in size.split("x"))) for size in args.sizes.split(",")]
        wanted = [wgmma.spec_for(dtype, m, n, k, act=a, bias_mode=bm, tile=t,
                                 out_dtype=("f16" if dtype == "e4m3" else dtype) if o == "in" else o, store=st,
                                 b_order="F" if dtype == "e4m3" else bo).build()
                  for dtype, (m, n, k) in runs for t, o, st, bo in variants
                  for a, bm in ((args.act, "per_n"), ("none", "none"))]
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(gpu.module, list(dict.fromkeys(wanted))))
        for dtype, (m, n, k) in runs:
            res = bench_size(torch, cp, m, n, k, dtype, variants=variants, act=args.act)
            bench[f"{dtype} {m}x{n}x{k}"] = res
            print(f"{dtype} {m}x{n}x{k}: " + "  ".join(f"{name} {v['tflops']:.0f}" for name, v in res.items()),
                  flush=True)
    out["bench"] = bench
    out["overhead_us"] = launch_overhead(torch, cp)
    print("per-call host us at 256^3: " + "  ".join(f"{k} {v:.1f}" for k, v in out["overhead_us"].items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
