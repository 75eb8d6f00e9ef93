"""Random operands of the GEMM GPU tests (tests/gemm/): A and B on the device as f16 or bf16 with their exact
float64 host copies, the bias a bias mode takes and C where beta is set (host float32), and D and Z poisoned
(NaN in every type) before a launch, so an element the kernel never writes fails the check; and the one check
of a launch's D (and Z) against the float64 reference of the same operands."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

BF16_NAN = 0x7FC0   # the quiet NaN's bits


def bf16_bits(x32):
    """bf16 bit patterns (uint16) of float32 values, rounded to nearest even."""
    bits = np.asarray(x32, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_values(bits):
    """The float32 values of bf16 bit patterns (exact)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def device_matrix(cp, x32, dtype):
    """(device array of f16 / bf16 bits, exact float64 host copy)."""
    if dtype == "f16":
        h = x32.astype(np.float16)
        return cp.asarray(h), h.astype(np.float64)
    bits = bf16_bits(x32)
    return cp.asarray(bits), bf16_values(bits).astype(np.float64)


class Operands(NamedTuple):
    a: object            # device, M x K (column-major where a_order is "F")
    a64: np.ndarray      # its exact float64 values
    b: object            # device, K x N (column-major where b_order is "F")
    b64: np.ndarray
    bias: np.ndarray | None   # host float32, shaped by the bias mode
    c: np.ndarray | None      # host float32 M x N where beta is set


def random_operands(cp, rng, m, n, k, dtype, *, bias_mode, beta, a32=None, a_order="C", b_order="C"):
    """Uniform(-1, 1) A (unless a32 is given), B, bias and C, drawn from rng in that order."""
    a32 = rng.uniform(-1, 1, (m, k)).astype(np.float32) if a32 is None else a32
    b32 = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    a, a64 = device_matrix(cp, a32, dtype)
    b, b64 = device_matrix(cp, b32, dtype)
    if a_order == "F":
        a = cp.asfortranarray(a)   # column-major M x K: the row-major K x M the MN-major load reads
        assert a.strides[0] == a.itemsize
    if b_order == "F":
        b = cp.asfortranarray(b)   # column-major K x N: the row-major N x K the K-major load reads
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = rng.uniform(-1, 1, shape).astype(np.float32) if shape else None
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32) if beta else None
    return Operands(a, a64, b, b64, bias, c)


def index_operands(m, n, k, what):
    """Host f16 A (M x K) and B (K x N) whose product is exactly D = its row index (`what` "row") or its column index
    ("col"), exact in f16 up to 2048 (A[:, 0] and B[0, :] carry the index or 1, the rest 0), and that D in float64:
    a store that puts an element at another (row, col) shows in one of the two."""
    a = np.zeros((m, k), np.float16)
    b = np.zeros((k, n), np.float16)
    rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
    a[:, 0] = np.arange(m) if what == "row" else 1
    b[0, :] = 1 if what == "row" else np.arange(n)
    return a, b, (rows + 0 * cols if what == "row" else 0 * rows + cols).astype(np.float64)


def e4m3_bits(rng, shape):
    """Random e4m3 bit patterns: any sign and mantissa, exponents 4..10 (magnitudes 2^-3 .. 15): exact values
    the reference decodes, no NaN."""
    sign = rng.integers(0, 2, shape) << 7
    exponent = rng.integers(4, 11, shape) << 3
    return (sign | exponent | rng.integers(0, 8, shape)).astype(np.uint8)


def poisoned_outputs(cp, m, n, out_dtype, save_z):
    """(D of out_dtype, Z of float32 or None), every element NaN; a bf16 D is held as uint16 bits."""
    if out_dtype == "bf16":
        d = cp.full((m, n), BF16_NAN, dtype=cp.uint16)
    else:
        d = cp.full((m, n), np.nan, dtype={"f32": cp.float32, "f16": cp.float16}[out_dtype])
    z = cp.full((m, n), np.nan, dtype=cp.float32) if save_z else None
    return d, z


def host_d(d, out_dtype):
    """D copied to the host as float32 values (a bf16 D's bits decoded)."""
    got = d.get()
    return bf16_values(got) if out_dtype == "bf16" else got.astype(np.float32)


def assert_matches_reference(d, z, a64, b64, c, bias, *, dtype, out_dtype, bias_mode, act, alpha, beta,
                             leaky_slope, where):
    """D (and Z where one was saved) within the accumulation tolerance of the float64 reference; `where` names the
    case in the failure message."""
    from fraglab.gemm.reference import check_result, reference_gemm

    d_ref, z_ref = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=leaky_slope)
    ok, max_abs, rel = check_result(host_d(d, out_dtype), d_ref, dtype, z_ref=None if z is None else z_ref,
                                    out_dtype=out_dtype)
    assert ok, f"D: max abs {max_abs:.3e}, rel {rel:.3e} ({where})"
    if z is not None:
        ok, max_abs, rel = check_result(z.get(), z_ref, dtype)
        assert ok, f"Z: max abs {max_abs:.3e}, rel {rel:.3e} ({where})"
