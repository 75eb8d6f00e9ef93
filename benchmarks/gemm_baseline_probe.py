"""What the baselines run, and at what clock: the cuBLAS kernels behind cupy.matmul, torch.mm and
torch._addmm_activation (names carry tile, cluster and split schedule), and the SM clock and board power while
each GEMM (and fraglab's wgmma GEMM) runs back to back for a while.

Usage (device): PYTHONPATH=$PWD python3 benchmarks/gemm_baseline_probe.py [--sizes 4096,8192] [--seconds 2]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402


def kernel_names(torch, fn) -> list[str]:
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def sample_clocks(stop: threading.Event, out: list) -> None:
    while not stop.is_set():
        r = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            clock, power = r.stdout.strip().split(",")[:2]
            out.append((float(clock), float(power)))
        time.sleep(0.1)


def under_load(torch, fn, seconds: float, flops: float) -> dict:
    """Runs fn back to back for `seconds`; median SM clock and power sampled in the second half, and TFLOP/s."""
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    t0 = torch.cuda.Event(enable_timing=True)
    t1 = torch.cuda.Event(enable_timing=True)
    samples: list = []
    stop = threading.Event()
    calls = 0
    t0.record()
    sampler = None
    while time.perf_counter() - start < seconds:
        for _ in range(20):
            fn()
        calls += 20
        if sampler is None and time.perf_counter() - start > seconds / 2:
            sampler = threading.Thread(target=sample_clocks, args=(stop, samples))
            sampler.start()
        torch.cuda.synchronize()
    t1.record()
    torch.cuda.synchronize()
    stop.set()
    if sampler is not None:
        sampler.join()
    ms = t0.elapsed_time(t1) / calls
    clocks = sorted(c for c, _ in samples) or [float("nan")]
    powers = sorted(p for _, p in samples) or [float("nan")]
    return {"tflops": flops / ms / 1e9, "clock_mhz": clocks[len(clocks) // 2], "power_w": powers[len(powers) // 2]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096,8192")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--dtypes", default="f16,bf16")
    ap.add_argument("--tiles", default="", help="wgmma tiles to run (default: the launcher's choice)")
    ap.add_argument("--no-baselines", action="store_true", help="only fraglab's kernels")
    args = ap.parse_args(argv)
    import torch
    import cupy as cp
    for size in (int(s) for s in args.sizes.split(",")):
        for dtype in args.dtypes.split(","):
            tdt = torch.float16 if dtype == "f16" else torch.bfloat16
            a = (torch.rand(size, size, device="cuda") * 2 - 1).to(tdt)
            b = (torch.rand(size, size, device="cuda") * 2 - 1).to(tdt)
            bias = torch.rand(size, device="cuda").to(tdt)
            bias32 = bias.float()
            d = torch.empty(size, size, device="cuda", dtype=tdt)
            ca, cb = cp.from_dlpack(a), cp.from_dlpack(b)
            fns = {} if args.no_baselines else {
                "cupy.matmul": lambda: cp.matmul(ca, cb),
                "torch.mm": lambda: torch.mm(a, b),
                "torch._addmm_activation": lambda: torch._addmm_activation(bias, a, b),
            }
            for tile in args.tiles.split(",") if args.tiles else [None]:
                spec = wgmma.spec_for(dtype, size, size, size, act="relu", bias_mode="per_n", out_dtype=dtype,
                                      tile=tile)
                fns[f"fraglab {spec.tile}"] = lambda spec=spec: wgmma.launch(spec, a, b, d, bias=bias32)
            flops = 2.0 * size ** 3
            for name, fn in fns.items():
                names = kernel_names(torch, fn) if not name.startswith("fraglab") else ["wgmma fused, bias + ReLU"]
                load = under_load(torch, fn, args.seconds, flops)
                print(f"{dtype} {size}^3 {name:24s} {load['tflops']:6.0f} TFLOP/s  SM {load['clock_mhz']:5.0f} MHz  "
                      f"{load['power_w']:5.0f} W  kernels: {' | '.join(names)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
