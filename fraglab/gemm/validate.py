"""The one rule set for GEMM arguments, for every kernel (WMMA, SIMT, and the kernels to come): shapes, dtypes,
contiguity, the epilogue names (checked here once) and the 16-byte alignment of the fast path.

It needs no GPU: it reads only shapes, dtypes, contiguity and pointers, so it is tested on the CPU with
numpy arrays standing in. Each bad argument gives one GemmArgumentError naming the argument and what is valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..errors import InputError
from .epilogue import ACT_KINDS, BIAS_MODES, bias_shape

ALIGN_BYTES = 16     # the vectorised (cp.async / TMA) path: every row and base pointer 16-byte aligned
ALIGN_ELEMENTS = 8   # K and N multiples of 8 half-precision elements keep rows 16-byte aligned


def is_aligned(k: int, n: int, pointers: tuple[int, ...]) -> bool:
    """The 16-byte path needs K and N multiples of 8 (rows of A, B, C, D start 16-byte aligned) and
    every base pointer 16-byte aligned."""
    return k % ALIGN_ELEMENTS == 0 and n % ALIGN_ELEMENTS == 0 and all(p % ALIGN_BYTES == 0 for p in pointers if p)


KERNELS = ("auto", "wmma", "wgmma", "simt")
_WMMA_DTYPES = {"float16": "f16", "bfloat16": "bf16"}


class GemmArgumentError(InputError):
    """A bad argument to fraglab.gemm; `argument` names it."""

    def __init__(self, argument: str, message: str):
        super().__init__(f"{argument}: {message}", argument=argument)


@dataclass(frozen=True)
class GemmPlan:
    """What validation resolved: which kernel family, the problem size and the epilogue."""
    kernel: str        # "wmma" | "simt"
    dtype: str         # "f16" | "bf16" | "f32"
    m: int
    n: int
    k: int
    act: str
    bias_mode: str
    has_c: bool        # C is read only when beta != 0 (BLAS convention: beta == 0 ignores C, NaN included)
    save_z: bool


def _dtype_name(x) -> str:
    return getattr(getattr(x, "dtype", None), "name", type(x).__name__)


def _input_dtype(x, argument: str, input_dtype: Optional[str]) -> str:
    name = _dtype_name(x)
    if input_dtype == "bf16" and name == "uint16":
        return "bf16"  # bf16 bit patterns, for CuPy builds without a bfloat16 dtype
    if name in _WMMA_DTYPES:
        return _WMMA_DTYPES[name]
    if name == "float32":
        return "f32"
    raise GemmArgumentError(argument, f"dtype {name} is not supported: valid are float16, bfloat16 (tensor cores) "
                                      "and float32 (SIMT)")


def check_matrix(x, argument: str, shape: tuple[int, ...], dtype: str = "float32") -> None:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise GemmArgumentError(argument, f"must be an array, got {type(x).__name__}")
    if tuple(x.shape) != shape:
        raise GemmArgumentError(argument, f"has shape {tuple(x.shape)}; expected {shape}")
    if _dtype_name(x) != dtype:
        raise GemmArgumentError(argument, f"has dtype {_dtype_name(x)}; expected {dtype}")
    if not x.flags.c_contiguous:
        raise GemmArgumentError(argument, "must be C-contiguous (row-major); pass cupy.ascontiguousarray(...)")


class KernelFallback(UserWarning):
    """A wgmma GEMM was asked for (or chosen) but the operands need the WMMA kernel; the message says why."""


def tensor_core_kernel(requested: str, compute_capability: int, k: int, n: int,
                       pointers: tuple[int, ...]) -> tuple[str, Optional[str]]:
    """Which tensor-core GEMM runs f16/bf16 inputs: ("wgmma" | "wmma", the one-line notice or None).
    On sm_90, 'auto' and 'wgmma' take wgmma when TMA can describe the operands (`is_aligned`: K and N multiples
    of 8, 16-byte aligned arrays), else WMMA with a notice; 'wgmma' on another GPU is an error."""
    if requested == "wmma":
        return "wmma", None
    if compute_capability != 90:
        if requested == "wgmma":
            raise GemmArgumentError("kernel", f"'wgmma' needs an sm_90 GPU (H100/H200); this GPU is "
                                              f"sm_{compute_capability}: use kernel='wmma' or 'auto'")
        return "wmma", None
    if is_aligned(k, n, pointers):
        return "wgmma", None
    return "wmma", (f"notice: the wgmma GEMM needs K and N multiples of {ALIGN_ELEMENTS} and {ALIGN_BYTES}-byte "
                    f"aligned arrays (TMA); K={k}, N={n}: running the WMMA kernel")


def validate_gemm_args(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none",
                       alpha: float = 1.0, beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False,
                       out=None, kernel: str = "auto", input_dtype: Optional[str] = None) -> GemmPlan:
    """Check every argument; return the resolved plan or raise GemmArgumentError naming the culprit."""
    if kernel not in KERNELS:
        raise GemmArgumentError("kernel", f"{kernel!r} is not valid: choose one of {', '.join(KERNELS)}")
    if act not in ACT_KINDS:
        raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")
    if input_dtype not in (None, "bf16"):
        raise GemmArgumentError("input_dtype", f"{input_dtype!r} is not valid: None (from a's dtype) or 'bf16'")
    for name, value in (("alpha", alpha), ("beta", beta), ("leaky_slope", leaky_slope)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(float(value)):
            raise GemmArgumentError(name, f"must be a finite number, got {value!r}")
    for name, x in (("a", a), ("b", b)):
        if not hasattr(x, "shape") or not hasattr(x, "dtype"):
            raise GemmArgumentError(name, f"must be a CuPy array, got {type(x).__name__}")
        if len(x.shape) != 2:
            raise GemmArgumentError(name, f"must be 2-D, got shape {tuple(x.shape)}")
        if min(x.shape) < 1:
            raise GemmArgumentError(name, f"has an empty dimension: shape {tuple(x.shape)}")
        if not x.flags.c_contiguous:
            raise GemmArgumentError(name, "must be C-contiguous (row-major); pass cupy.ascontiguousarray(...)")
    m, k = a.shape
    k_b, n = b.shape
    if k_b != k:
        raise GemmArgumentError("b", f"shape {tuple(b.shape)} does not chain with a {tuple(a.shape)}: "
                                     f"b needs {k} rows")
    dtype = _input_dtype(a, "a", input_dtype)
    if _input_dtype(b, "b", input_dtype) != dtype:
        raise GemmArgumentError("b", f"dtype {_dtype_name(b)} differs from a's {_dtype_name(a)}")
    if kernel == "auto":
        kernel = "simt" if dtype == "f32" else "wmma"
    if kernel in ("wmma", "wgmma") and dtype == "f32":
        raise GemmArgumentError("a", f"kernel {kernel!r} takes float16 or bfloat16 inputs; use kernel='simt' for float32")
    if kernel == "simt" and dtype != "f32":
        raise GemmArgumentError("a", "kernel 'simt' takes float32 inputs; use kernel='wmma', 'wgmma' or 'auto' for "
                                     "float16/bfloat16")

    if bias_mode is None:
        bias_mode = "none" if bias is None else ("per_n" if len(getattr(bias, "shape", ())) == 1 else "full")
    if bias_mode not in BIAS_MODES:
        raise GemmArgumentError("bias_mode", f"{bias_mode!r} is not valid: choose one of {', '.join(BIAS_MODES)}")
    shape = bias_shape(bias_mode, m, n)
    if shape is None and bias is not None:
        raise GemmArgumentError("bias", "given, but bias_mode is 'none': pass bias_mode='per_m', 'per_n' or 'full'")
    if shape is not None:
        if bias is None:
            raise GemmArgumentError("bias", f"bias_mode {bias_mode!r} needs a float32 bias of shape {shape}")
        check_matrix(bias, "bias", shape)

    if beta != 0 and c is None:
        raise GemmArgumentError("c", f"beta={beta} needs c (an (M, N) = {(m, n)} float32 array)")
    if c is not None:
        check_matrix(c, "c", (m, n))
    if out is not None:
        check_matrix(out, "out", (m, n))
        for name, other in (("a", a), ("b", b), ("bias", bias)):
            if other is not None and other is out:
                raise GemmArgumentError("out", f"must not be the same array as {name}")
    return GemmPlan(kernel, dtype, m, n, k, act, bias_mode, c is not None and beta != 0, bool(save_z))
