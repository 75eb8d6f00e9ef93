"""What a fraglab.gemm call from torch costs on the host, beside torch.mm and torch._addmm_activation (issue 24
targets at 256^3: one-shot within 1.3x of torch.mm, with bias + activation within 1.0x of torch's fused call, a
reused prepared call within 1.0x of torch.mm), and the issue's table of shapes.

Each figure: `calls` calls back to back, one synchronise, the median over rounds of the time per call
(fraglab/bench/call_timing.py, the one timer). "kept" rows keep every result alive, so each call's D lands at a
new address (as when autograd saves it); "bind" is what binding a launch anew for such a D costs (the wgmma
launch's parameters and tensor maps packed again), which the torch road's one-shot call no longer pays.

Usage (device): python3 benchmarks/torch_call_cost.py [--json out.json] [--profile]
      (CPU):    python3 benchmarks/torch_call_cost.py --fake   (the Python path alone, fake pointers, no launch)
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fraglab.bench.call_timing import per_call_us  # noqa: E402

SHAPES = [(256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048), (128, 8192, 8192), (512, 4096, 11008),
          (2048, 2048, 8192), (4096, 4096, 4096), (64, 4096, 14336),   # on a split-K cluster (64x64pk2)
          (8, 4096, 4096), (16, 4096, 14336), (32, 14336, 4096),   # decode: the skinny GEMM (B by TMA / by copies)
          (80, 4096, 4096), (160, 28672, 4096)]   # swapped operands (rule swap_ab: 64x96pk2t, 128x160t)
ROUNDS = 15
TARGETS = (("fraglab.gemm(torch)", "torch.mm", 1.3), ("fraglab.gemm(torch, bias, relu)", "torch._addmm_activation", 1.0),
           ("prepared(torch) reused", "torch.mm", 1.0), ("fraglab.torch.linear", "F.linear", 1.3),
           ("fraglab.torch.linear(bias, relu)", "F.linear + relu", 1.0))
KEPT_SIZES = ((256, 256, 256), (1024, 1024, 1024))   # where every result is also kept alive (memory stays small)


def fake_road():
    """The torch road on CPU tensors: validation and planning as on the GPU, a stub launch (no kernel), so the
    Python path's own cost is what is timed and profiled."""
    import torch

    from fraglab.gemm import torch_road

    class StubLaunch:
        def launch_on(self, handle):
            pass

    def plan_road(torch_, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
                  input_dtype, tile, out_dtype):
        plan = torch_road.signature_plan(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out,
                                         z_out, kernel, input_dtype, out_dtype)
        road = torch_road.TorchRoad(torch_, plan, None, torch.device("cpu"), alpha, beta, leaky_slope, 1)
        road.device_index = 0
        road.launches = torch_road.BoundedMemo(lambda pointers: StubLaunch(), 64)
        return road

    torch_road._plan_road = plan_road
    torch_road._RAW_STREAM = lambda index: 0
    return torch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--fake", action="store_true", help="CPU: the Python path with a stub launch")
    parser.add_argument("--profile", action="store_true", help="cProfile 2000 one-shot calls at 256^3")
    args = parser.parse_args(argv)

    import fraglab

    if args.fake:
        torch = fake_road()
        a, b = torch.randn(256, 256).half(), torch.randn(256, 256).half()
        bias = torch.randn(256)
        sync = lambda: None  # noqa: E731
        rows = {"fraglab.gemm(torch) python path": per_call_us(lambda: fraglab.gemm(a, b), sync, 200, ROUNDS),
                "... + bias + relu": per_call_us(lambda: fraglab.gemm(a, b, bias=bias, act="relu"), sync, 200,
                                                 ROUNDS),
                "torch.empty(256, 256) alone": per_call_us(lambda: torch.empty((256, 256)), sync, 200, ROUNDS)}
        for name, us in rows.items():
            print(f"{name:36} {us:6.2f} us/call")
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for _ in range(20000):
                fraglab.gemm(a, b, bias=bias, act="relu")
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(15)
        return 0

    import cupy as cp
    import torch

    import fraglab.torch as ft
    from fraglab.gemm.api import prepare

    F = torch.nn.functional

    sync = torch.cuda.synchronize
    big = torch.randn(4096, 4096, device="cuda").half()
    start = time.perf_counter()
    while time.perf_counter() - start < 1.0:   # the clocks up from idle before anything is timed
        torch.mm(big, big)
        sync()
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cupy": cp.__version__,
              "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "calls": 40, "rows": []}
    for m, n, k in SHAPES:
        g = torch.Generator(device="cuda").manual_seed(m + n + k)
        a = torch.randn(m, k, device="cuda", generator=g).half()
        w = torch.randn(n, k, device="cuda", generator=g).half()
        b = w.t()   # the weight as F.linear reads it: column-major K x N
        bias = torch.randn(n, device="cuda", generator=g)
        bias16 = bias.half()
        ca, cb, cbias = cp.asarray(a), cp.asarray(b), cp.asarray(bias)
        prepared = prepare(a, b)
        prepared_fused = prepare(a, b, bias=bias, act="relu", out_dtype="f16")
        row = {"m": m, "n": n, "k": k}
        fns = {
            "torch.mm": lambda: torch.mm(a, b),
            "fraglab.gemm(torch)": lambda: fraglab.gemm(a, b, out_dtype="f16"),
            "prepared(torch) reused": prepared,
            "torch._addmm_activation": lambda: torch._addmm_activation(bias16, a, b),
            "fraglab.gemm(torch, bias, relu)": lambda: fraglab.gemm(a, b, bias=bias, act="relu", out_dtype="f16"),
            "fraglab.gemm(cupy, bias, relu)": lambda: fraglab.gemm(ca, cb, bias=cbias, act="relu", out_dtype="f16"),
            "prepared(torch, bias, relu) reused": prepared_fused,
            "F.linear": lambda: F.linear(a, w),
            "fraglab.torch.linear": lambda: ft.linear(a, w),
            "F.linear + relu": lambda: torch.relu(F.linear(a, w, bias16)),
            "fraglab.torch.linear(bias, relu)": lambda: ft.linear(a, w, bias16, act="relu"),
            "torch.ops.fraglab.gemm": lambda: torch.ops.fraglab.gemm(a, b, None, None, "none", "none", 1.0, 0.0, 0.01,
                                                                     False, torch.float16),
        }
        if (m, n, k) in KEPT_SIZES:
            kept = []
            fns["fraglab.gemm(torch, bias, relu) kept"] = lambda: kept.append(
                fraglab.gemm(a, b, bias=bias, act="relu", out_dtype="f16"))
            fns["torch._addmm_activation kept"] = lambda: kept.append(torch._addmm_activation(bias16, a, b))
        for _ in range(2):   # two passes, the second kept: the first warms cuBLAS' and fraglab's plans
            for name, fn in fns.items():
                row[name] = per_call_us(fn, sync, rounds=ROUNDS)
                if (m, n, k) in KEPT_SIZES:
                    kept.clear()
        if (m, n, k) in KEPT_SIZES:
            row["bind for a new D"] = bind_cost_us(torch, a, b, bias)
        result["rows"].append(row)
        print(f"{m}x{n}x{k}: " + "  ".join(f"{name} {us:.1f}" for name, us in row.items() if name not in "mnk"),
              flush=True)
    first = result["rows"][0]
    result["targets"] = [{"call": mine, "against": theirs, "ratio": first[mine] / first[theirs], "target": target,
                          "met": first[mine] / first[theirs] <= target} for mine, theirs, target in TARGETS]
    for t in result["targets"]:
        print(f"target at {first['m']}x{first['n']}x{first['k']}: {t['call']} / {t['against']} = {t['ratio']:.2f} "
              f"(<= {t['target']}: {'met' if t['met'] else 'NOT met'})")
    if args.profile:
        a = torch.randn(256, 256, device="cuda").half()
        bias = torch.randn(256, device="cuda")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(2000):
            fraglab.gemm(a, a, bias=bias, act="relu")
        profile.disable()
        sync()
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def bind_cost_us(torch, a, b, bias, count: int = 200) -> float:
    """us per wgmma launch bound anew for D at a new address (tensor maps encoded, parameters packed): what each
    call with a fresh D paid when launches were looked up by their pointers."""
    from fraglab.gemm import torch_road

    road = next(r for key, r in torch_road._ROADS.items() if r and r.plan.m == a.shape[0] and r.plan.n == b.shape[1]
                and r.plan.bias_mode == "per_n" and r.spec is not None)
    d = torch.empty(road.d_shape, dtype=road.d_dtype, device=a.device)
    base = (a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0)
    start = time.perf_counter()
    for i in range(count):   # addresses that are never launched: binding reads no memory
        road._bind(base[:2] + (base[2] + 256 * (i + 1),) + base[3:], shared=False)
    return (time.perf_counter() - start) / count * 1e6


if __name__ == "__main__":
    sys.exit(main())
