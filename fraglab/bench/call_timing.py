"""The door, timed: what one fraglab.gemm call costs a user, from torch tensors and from CuPy arrays, beside the
kernel's own time and torch._addmm_activation on the same inputs (issue 24).

Each figure is microseconds per call, `calls` one-shot calls back to back and one synchronise, the median over
`rounds`: a call's host time where that is longer than the kernel, the kernel's where not. `fraglab gemm --bench`
adds one row per size (`call_row`); CALL_COLUMNS shows them.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

CALLS = 40
ROUNDS = 9

CALL_COLUMNS = (("size", "size", ""), ("kernel_us", "kernel alone", ".1f"),
                ("torch_call_us", "gemm(torch)", ".1f"), ("cupy_call_us", "gemm(CuPy)", ".1f"),
                ("torch_fused_us", "torch fused", ".1f"), ("torch_vs_fused", "torch/fused", ".2f"))


def per_call_us(fn: Callable[[], object], sync: Callable[[], None], calls: int = CALLS,
                rounds: int = ROUNDS) -> float:
    """Median over rounds of (time for `calls` calls back to back, then one synchronise) / calls, in us."""
    fn()
    sync()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def call_row(inputs: dict, *, act: str, bias_mode: str, alpha: float, beta: float, leaky_slope: float,
             save_z: bool, out_dtype: str, kernel: str, kernel_ms: float | None) -> dict:
    """One size's call timings. inputs: make_inputs' dict (CuPy arrays; bf16 as uint16 bits when "bits")."""
    import cupy as cp

    import fraglab

    sync = cp.cuda.runtime.deviceSynchronize
    kw = dict(c=inputs["c"], bias=inputs["bias"], bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
              leaky_slope=leaky_slope, save_z=save_z, out_dtype=out_dtype, kernel=kernel,
              input_dtype=inputs.get("input_dtype"))
    m, k = inputs["a"].shape
    n = inputs["b"].shape[1]
    row = {"m": m, "n": n, "k": k, "kernel_us": kernel_ms * 1e3 if kernel_ms is not None else None,
           "cupy_call_us": per_call_us(lambda: fraglab.gemm(inputs["a"], inputs["b"], **kw), sync)}
    try:
        import torch
    except ImportError:
        return row
    def as_torch(x, operand=False):
        if x is None:
            return None
        if operand and x.dtype.itemsize == 2 and x.dtype != cp.float16:   # bf16 (CuPy's or its bits)
            return torch.from_dlpack(x.view(cp.int16)).view(torch.bfloat16)
        if operand and x.dtype.itemsize == 1:   # e4m3 bits
            return torch.from_dlpack(x).view(torch.float8_e4m3fn)
        return torch.from_dlpack(x)

    tkw = dict(kw, c=as_torch(inputs["c"]), bias=as_torch(inputs["bias"]), input_dtype=None)
    a, b = as_torch(inputs["a"], True), as_torch(inputs["b"], True)
    row["torch_call_us"] = per_call_us(lambda: fraglab.gemm(a, b, **tkw), sync)
    if bias_mode == "per_n" and act in ("relu", "gelu", "gelu_tanh") and not save_z and beta == 0 and alpha == 1:
        bias = tkw["bias"].to(a.dtype)
        use_gelu = act != "relu"
        row["torch_fused_us"] = per_call_us(lambda: torch._addmm_activation(bias, a, b, use_gelu=use_gelu), sync)
        row["torch_vs_fused"] = row["torch_call_us"] / row["torch_fused_us"]
    return row


__all__ = ["CALL_COLUMNS", "CALLS", "ROUNDS", "call_row", "per_call_us"]
