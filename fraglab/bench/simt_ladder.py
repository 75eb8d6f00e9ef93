"""The SIMT ladder run behind `fraglab gemm --simt`: every rung (or one) at each size beside cuBLAS SGEMM."""

from __future__ import annotations

import os
from typing import Optional

import numpy as np

from ..gemm.epilogue import ACT_KINDS, BIAS_MODES
from ..gemm.reference import check_result, reference_gemm
from ..errors import check_choice
from ..gemm.simt import RUNGS, launch

def _problem_sizes(sizes) -> list[tuple[int, int, int]]:
    out = []
    for s in sizes:
        t = (int(s),) * 3 if np.isscalar(s) else tuple(int(v) for v in s)
        if len(t) != 3 or min(t) < 1:
            raise ValueError(f"invalid size {s!r}: give N (for N^3) or (M, N, K), each >= 1")
        out.append(t)
    if not out:
        raise ValueError("invalid sizes: give at least one size")
    return out


# Timed reps per kernel: enough for a median, but the slow rungs at 8192^3 (seconds a launch) stay short.
_REP_BUDGET_MS = 600.0
_MIN_REPS, _MAX_REPS = 3, 50


def _reps_for(estimate_ms: float) -> int:
    if not estimate_ms > 0:
        return _MAX_REPS
    return int(min(_MAX_REPS, max(_MIN_REPS, _REP_BUDGET_MS // estimate_ms)))


def _pct(reference_ms: Optional[float], ms: Optional[float]) -> Optional[float]:
    if reference_ms is None or ms is None or not ms > 0:
        return None
    return 100.0 * reference_ms / ms


def run_ladder(sizes, *, kernel: Optional[str] = None, check: bool = True, bench: bool = True,
               act: str = "none", bias_mode: str = "none", beta: float = 0.0, save_z: bool = False,
               alpha: float = 1.0, leaky_slope: float = 0.01, progress=None, seed: int = 0) -> list[dict]:
    """Run the ladder (or one rung, `kernel`) at each size beside cuBLAS SGEMM; one row per kernel and size.

    Rows: kernel, m, n, k, ms, tflops, pct_cublas, status (PASSED / FAILED / -), max_err, rel_err.
    Outputs are poisoned with NaN before each checked run; timings are medians of CUDA-event pairs
    over inputs rotated so one pass is twice the L2. cuBLAS runs plain SGEMM (cupy.matmul, f32, TF32
    off); its row is checked only when the epilogue is the identity.
    """
    from .. import bench as benchmod
    from ..runtime import gpu

    rungs = list(RUNGS) if kernel is None else [check_choice(kernel, RUNGS, "kernel")]
    check_choice(act, ACT_KINDS, "act")
    check_choice(bias_mode, BIAS_MODES, "bias_mode")
    problems = _problem_sizes(sizes)
    if os.environ.get("CUPY_TF32", "0") not in ("", "0"):
        raise ValueError("CUPY_TF32 is set, so cupy.matmul would use TF32: unset it to compare with cuBLAS SGEMM")
    cp = gpu.cupy()
    has_c = beta != 0.0
    plain = act == "none" and bias_mode == "none" and not has_c and alpha == 1.0
    task = progress.add_task("SIMT ladder", total=len(problems) * (len(rungs) + 1)) if progress else None
    rows: list[dict] = []
    for m, n, k in problems:
        sets = benchmod.rotation_count(4 * (m * k + k * n + m * n)) if bench else 1
        rng = cp.random.default_rng(seed)

        def uniform(shape):  # random in [-1, 1): never zeros, which hide unwritten outputs
            return rng.random(shape, dtype=cp.float32) * 2 - 1

        inputs = []
        for _ in range(sets):
            shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
            inputs.append((uniform((m, k)), uniform((k, n)), uniform((m, n)) if has_c else None,
                           uniform(shape) if shape else None))
        d = cp.empty((m, n), dtype=cp.float32)
        z = cp.empty((m, n), dtype=cp.float32) if save_z else None
        d_ref = z_ref = None
        if check:
            d_ref, z_ref = _reference(*inputs[0], bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                      leaky_slope=leaky_slope)

        def verdict() -> tuple[str, Optional[float], Optional[float]]:
            ok, max_err, rel = check_result(cp.asnumpy(d), d_ref, "f32", z_ref=z_ref if save_z else None)
            if save_z:
                ok_z, max_z, rel_z = check_result(cp.asnumpy(z), z_ref, "f32")
                ok, max_err, rel = ok and ok_z, max(max_err, max_z), max(rel, rel_z)
            return ("PASSED" if ok else "FAILED"), max_err, rel

        def time_it(fn) -> Optional[benchmod.Timing]:
            if not bench:
                return None
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn(0)
            end.record()
            end.synchronize()
            estimate = cp.cuda.get_elapsed_time(start, end)
            return benchmod.time_cuda(fn, warmup=1 if estimate > 100 else 3, reps=_reps_for(estimate),
                                      rotate=sets)

        # cuBLAS first: the percentages below are of its time
        def run_cublas(i: int) -> None:
            cp.matmul(inputs[i][0], inputs[i][1], out=d)

        status, max_err, rel = "-", None, None
        if check and plain:
            d.fill(cp.nan)
            run_cublas(0)
            status, max_err, rel = verdict()
        timing = time_it(run_cublas)
        cublas_ms = timing.median_ms if timing else None
        rows.append(_row("cublas_sgemm", m, n, k, timing, None, status, max_err, rel))
        if progress:
            progress.advance(task)

        for rung in rungs:
            def run_rung(i: int, rung=rung) -> None:
                a_i, b_i, c_i, bias_i = inputs[i]
                launch(rung, a_i, b_i, d, c=c_i, bias=bias_i, bias_mode=bias_mode, act=act, alpha=alpha,
                       beta=beta, leaky_slope=leaky_slope, z=z)

            status, max_err, rel = "-", None, None
            if check:
                d.fill(cp.nan)
                if z is not None:
                    z.fill(cp.nan)
                run_rung(0)
                status, max_err, rel = verdict()
            timing = time_it(run_rung)
            rows.append(_row(rung, m, n, k, timing, cublas_ms, status, max_err, rel))
            if progress:
                progress.advance(task)
        del inputs, d, z
    return rows


def _reference(a, b, c, bias, *, bias_mode: str, act: str, alpha: float, beta: float, leaky_slope: float):
    """(D, Z) in float64: A @ B as a float64 product on the GPU (seconds on the CPU at 8192^3), then
    epilogue_ref's epilogue on the CPU, fed as an exact K = 1 product (P (MN x 1) @ [[1]]) so that the
    formula lives in one place."""
    from ..runtime import gpu

    cp = gpu.cupy()
    m, n = a.shape[0], b.shape[1]
    product = cp.asnumpy(cp.matmul(a.astype(cp.float64), b.astype(cp.float64))).reshape(m * n, 1)
    if bias_mode == "none":
        flat_bias = None
    else:
        b64 = cp.asnumpy(bias).astype(np.float64)
        full = {"per_m": lambda: np.broadcast_to(b64[:, None], (m, n)), "per_n": lambda: np.broadcast_to(b64, (m, n)),
                "full": lambda: b64}[bias_mode]()
        flat_bias = np.ascontiguousarray(full).reshape(m * n, 1)
    d, z = reference_gemm(product, np.ones((1, 1)), c=None if c is None else cp.asnumpy(c).reshape(m * n, 1),
                          bias=flat_bias, bias_mode="none" if flat_bias is None else "full", act=act,
                          alpha=alpha, beta=beta, leaky_slope=leaky_slope)
    return d.reshape(m, n), z.reshape(m, n)


def _row(name: str, m: int, n: int, k: int, timing, cublas_ms: Optional[float], status: str,
         max_err: Optional[float], rel_err: Optional[float]) -> dict:
    from .timing import tflops

    ms = timing.median_ms if timing else None
    return {
        "kernel": name, "m": m, "n": n, "k": k,
        "ms": ms, "p20_ms": timing.p20_ms if timing else None, "p80_ms": timing.p80_ms if timing else None,
        "reps": timing.reps if timing else None,
        "tflops": tflops(m, n, k, ms) if ms else None,
        "pct_cublas": 100.0 if name == "cublas_sgemm" and ms else _pct(cublas_ms, ms),
        "status": status, "max_err": max_err, "rel_err": rel_err,
    }
