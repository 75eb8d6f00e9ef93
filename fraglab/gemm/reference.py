"""The numpy twin of gemm/epilogue.cuh, in float64, and the tolerances GEMM results are judged by.

    pre = alpha * (A @ B) (+ beta * C) (+ bias);   Z = pre;   D = act(pre)

Inputs of any float dtype are widened exactly to float64, so the reference sees the very values the
kernel saw (f16/bf16 inputs included) and the only differences left are the kernel's f32 accumulation
order and f32 epilogue arithmetic, plus one rounding when D is stored as f16 / bf16 (`check_result(out_dtype=)`). The names (ACT_KINDS, BIAS_MODES, the C++ names) live in gemm/epilogue.py
and are re-exported here for the tests that check both.
"""

from __future__ import annotations

import math
import numpy as np

from ..errors import check_choice
from .epilogue import ACT_KINDS, BIAS_MODES, act_cpp, bias_cpp, bias_shape, epilogue_cpp

def _erfc(x: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erfc  # vectorised, when present
        return erfc(x)
    except ImportError:
        return np.frompyfunc(math.erfc, 1, 1)(x).astype(np.float64)


def activate(x: np.ndarray, act: str, leaky_slope: float = 0.01) -> np.ndarray:
    """act(x) in float64, NaN in -> NaN out, limits at +-inf (as gemm/epilogue.cuh defines them)."""
    check_choice(act, ACT_KINDS, "act")
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if act == "none":
            y = x.copy()
        elif act == "relu":
            y = np.where(x < 0, 0.0, x)
        elif act == "leaky_relu":
            y = np.where(x < 0, x * leaky_slope, x)
        elif act == "gelu":
            y = 0.5 * x * _erfc(-x / math.sqrt(2.0))
        elif act == "gelu_tanh":
            y = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        elif act == "silu":
            y = x / (1.0 + np.exp(-x))
        elif act == "sigmoid":
            y = 1.0 / (1.0 + np.exp(-x))
        else:
            y = np.tanh(x)
    if act in ("gelu", "gelu_tanh", "silu"):
        y = np.where(x == -np.inf, 0.0, y)  # x * 0 at -inf would be NaN; the limit is 0
    return y


def reference_gemm(a, b, *, c=None, bias=None, bias_mode: str = "none", act: str = "none", alpha: float = 1.0,
                   beta: float = 0.0, leaky_slope: float = 0.01, scale_a=None,
                   scale_b=None) -> tuple[np.ndarray, np.ndarray]:
    """(D, Z) in float64 for D = act(alpha * a @ b + beta * c + bias), Z the pre-activation.

    `c` is used when given (beta scales it, as the kernel's HasC path does); bias follows `bias_mode`.
    scale_a (M,) and scale_b (N,), given together: a @ b becomes scale_a[m] * (a @ b)[m, n] * scale_b[n] before
    alpha, C and the bias (the rowwise-scaled fp8 recipe). scale_a (M, ceil(K/128)) and scale_b (ceil(N/128),
    ceil(K/128)): block scales (DeepGEMM's recipe), a[m, k] taken times scale_a[m, k // 128] and b[k, n] times
    scale_b[n // 128, k // 128] before the product.
    """
    a64 = np.asarray(a).astype(np.float64)
    b64 = np.asarray(b).astype(np.float64)
    if a64.ndim != 2 or b64.ndim != 2 or a64.shape[1] != b64.shape[0]:
        raise ValueError(f"a {a64.shape} and b {b64.shape} do not chain as (M, K) @ (K, N)")
    m, n = a64.shape[0], b64.shape[1]
    if (scale_a is None) != (scale_b is None):
        raise ValueError("scale_a and scale_b come together (a factor per row of A and per column of B)")
    k_blocks, n_blocks = -(-a64.shape[1] // 128), -(-n // 128)
    block = scale_a is not None and np.shape(scale_a) == (m, k_blocks) and np.shape(scale_b) == (n_blocks, k_blocks)
    with np.errstate(over="ignore", invalid="ignore"):
        if block:   # each element of A and B dequantised by its block's scale, then one product
            ks = np.arange(a64.shape[1]) // 128
            sa = np.asarray(scale_a).astype(np.float64)[:, ks]                       # (M, K)
            sb = np.asarray(scale_b).astype(np.float64)[np.arange(n) // 128][:, ks]  # (N, K)
            product = (a64 * sa) @ (b64 * sb.T)
        else:
            product = a64 @ b64
        if scale_a is not None and not block:
            sa = np.asarray(scale_a).astype(np.float64).reshape(-1)
            sb = np.asarray(scale_b).astype(np.float64).reshape(-1)
            if sa.shape != (m,) or sb.shape != (n,):
                raise ValueError(f"scale_a has {sa.size} values and scale_b {sb.size}; expected M = {m} and N = {n} "
                                 f"(rowwise) or ({m}, {k_blocks}) and ({n_blocks}, {k_blocks}) (block scales)")
            product = sa[:, None] * product * sb[None, :]
        pre = alpha * product
        if c is not None:
            pre = pre + beta * np.asarray(c).astype(np.float64)
        shape = bias_shape(bias_mode, m, n)
        if shape is not None:
            if bias is None:
                raise ValueError(f"bias_mode {bias_mode!r} needs a bias of shape {shape}")
            bias64 = np.asarray(bias).astype(np.float64)
            if bias64.shape != shape:
                raise ValueError(f"bias has shape {bias64.shape}; bias_mode {bias_mode!r} needs {shape}")
            pre = pre + (bias64[:, None] if bias_mode == "per_m" else bias64)
    return activate(pre, act, leaky_slope), pre


# Judged as max|d - d_ref| / scale, scale = the largest finite |value| of D_ref (and of Z_ref when given:
# an error made before a squashing activation stays an absolute error after it).
# Inputs are exact in the reference, so only f32 accumulation and the f32 epilogue differ. Bound used:
# a random-sign sum of K products rounded in f32 drifts ~ sqrt(K) * 2^-24 relative to its typical size;
# tensor cores add truncation inside each MMA step. 1e-3 leaves >10x room at K = 8192 yet a missing
# k-step, a wrong element or an unwritten (poisoned) element is off by 1e-2 or more at the sizes tested.
TOLERANCES: dict[str, float] = {
    "f16": 1e-3,   # f16 inputs, f32 accumulation (WMMA)
    "bf16": 1e-3,  # bf16 inputs, f32 accumulation (WMMA)
    "f32": 1e-4,   # f32 inputs, f32 FMA (SIMT): no tensor-core truncation
    # e4m3 inputs: exact products, but wgmma's fp8 accumulation keeps fewer bits than f32 and its error grows
    # with K (H100: 1.7e-3 at K = 1024 on every tile, 6.8e-3 at 8192): the value at K <= 1024, grown past it by
    # E4M3_K_GROWTH. One k32 step left out of one element at K = 1024 is off by 1e-2.
    "e4m3": 5e-3,
}
E4M3_K_GROWTH = 0.75   # tolerance * (K / 1024) ** 0.75: the measured error grew as K ** 0.68


def tolerance(dtype: str, k: int | None = None) -> float:
    """TOLERANCES[dtype], for e4m3 grown with K (k: the GEMM's K, when known)."""
    if dtype == "e4m3" and k is not None and k > 1024:
        return TOLERANCES[dtype] * (k / 1024) ** E4M3_K_GROWTH
    return TOLERANCES[dtype]


# A 16-bit D is the f32 result rounded once more, to nearest: off by at most OUTPUT_ROUNDING[out] * |value| (the
# unit roundoff: 2^-11 for f16's 11-bit significand, 2^-8 for bf16's 8), or half the subnormal spacing near zero
# (OUTPUT_TINY). f16 tops out at 65504: round to nearest sends |x| >= 65520 to +-inf (IEEE), so an infinity of
# the reference's sign where |D_ref| is that large is the expected result, not an error.
OUTPUT_ROUNDING: dict[str, float] = {"f32": 0.0, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}
OUTPUT_TINY: dict[str, float] = {"f32": 0.0, "f16": 2.0 ** -25, "bf16": 2.0 ** -134}
F16_MAX = 65504.0
F16_OVERFLOW = 65520.0   # the smallest magnitude round-to-nearest turns into inf


def check_result(d, d_ref, dtype: str, *, z_ref=None, out_dtype: str = "f32",
                 k: int | None = None) -> tuple[bool, float, float]:
    """(ok, max_abs_err, rel_err) of a kernel's D against the float64 reference.

    Non-finite reference values must be reproduced exactly (NaN where NaN, the same infinity);
    a NaN where the reference is finite (e.g. a poisoned, unwritten element) fails and counts as inf.
    out_dtype: the type D was stored in. For f16 / bf16 each element may also be off by one rounding to that type
    (OUTPUT_ROUNDING, relative), and an f16 element may be an infinity of the reference's sign where the
    reference (within the accumulation tolerance) reaches F16_OVERFLOW; rel_err is then the error beyond that
    rounding, judged against tolerance(dtype, k) * (1 + rounding).
    """
    check_choice(dtype, tuple(TOLERANCES), "dtype")
    check_choice(out_dtype, tuple(OUTPUT_ROUNDING), "out_dtype")
    d64 = np.asarray(d).astype(np.float64)
    ref = np.asarray(d_ref).astype(np.float64)
    if d64.shape != ref.shape:
        return False, math.inf, math.inf
    finite = np.isfinite(ref)
    nonfinite_ok = bool(np.all(np.isnan(d64[np.isnan(ref)]))) and bool(
        np.all(d64[np.isinf(ref)] == ref[np.isinf(ref)]))
    scale = float(np.abs(ref[finite]).max()) if finite.any() else 0.0
    if z_ref is not None:
        z = np.asarray(z_ref).astype(np.float64)
        zf = z[np.isfinite(z)]
        if zf.size:
            scale = max(scale, float(np.abs(zf).max()))
    tol = tolerance(dtype, k)
    if out_dtype == "f32":
        if finite.any():
            diff = np.abs(d64[finite] - ref[finite])
            max_abs = math.inf if not np.all(np.isfinite(diff)) else float(diff.max())
        else:
            max_abs = 0.0
        rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else math.inf)
        return bool(nonfinite_ok and rel <= tol), max_abs, rel
    rounding = OUTPUT_ROUNDING[out_dtype]
    got, want = d64[finite], ref[finite]
    if out_dtype == "f16":   # IEEE overflow: inf of the right sign where the value reaches F16_OVERFLOW
        overflow = np.isinf(got) & (np.sign(got) == np.sign(want)) & (
            np.abs(want) + (1 + rounding) * tol * scale >= F16_OVERFLOW)
        got, want = got[~overflow], want[~overflow]
    if got.size:
        diff = np.abs(got - want)
        if np.all(np.isfinite(diff)):
            max_abs = float(diff.max())
            excess = float(np.max(diff - rounding * np.abs(want) - OUTPUT_TINY[out_dtype]))
        else:
            max_abs = excess = math.inf
    else:
        max_abs = excess = 0.0
    excess = max(excess, 0.0)
    rel = excess / scale if scale > 0 else (0.0 if excess == 0 else math.inf)
    return bool(nonfinite_ok and rel <= tol * (1 + rounding)), max_abs, rel


def e4m3_to_float64(bits) -> np.ndarray:
    """OCP FP8 E4M3 bit patterns (the 'fn' form: bias 7, no infinities, S.1111.111 is NaN) as float64, exactly:
    the reference's view of e4m3 inputs, which travel as uint8."""
    b = np.asarray(bits).astype(np.uint8).astype(np.int64)
    exponent, mantissa = (b >> 3) & 0xF, b & 0x7
    magnitude = np.where(exponent == 0, mantissa / 8.0 * 2.0 ** -6, (1.0 + mantissa / 8.0) * np.exp2(exponent - 7.0))
    value = np.where(b & 0x80, -magnitude, magnitude)
    return np.where((exponent == 15) & (mantissa == 7), np.nan, value)


__all__ = ["ACT_KINDS", "BIAS_MODES", "act_cpp", "bias_cpp", "epilogue_cpp", "activate", "bias_shape",
           "reference_gemm", "TOLERANCES", "OUTPUT_ROUNDING", "F16_MAX", "check_result", "tolerance", "e4m3_to_float64"]
