"""`fraglab.gemm`: D = act(alpha * A @ B (+ beta * C) (+ bias)) on CuPy arrays, in one kernel launch.

Validation (`validate_gemm_args`) needs no GPU: it reads only shapes, dtypes and contiguity, so it
is tested on the CPU with numpy arrays standing in. Each bad argument gives one GemmArgumentError
naming the argument and what is valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .epilogue_ref import ACT_KINDS, BIAS_MODES, bias_shape

KERNELS = ("auto", "wmma", "simt")
_WMMA_DTYPES = {"float16": "f16", "bfloat16": "bf16"}


class GemmArgumentError(ValueError):
    """A bad argument to fraglab.gemm; `argument` names it."""

    def __init__(self, argument: str, message: str):
        super().__init__(f"{argument}: {message}")
        self.argument = argument


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


def _check_matrix(x, argument: str, shape: tuple[int, ...], dtype: str = "float32") -> None:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise GemmArgumentError(argument, f"must be an array, got {type(x).__name__}")
    if tuple(x.shape) != shape:
        raise GemmArgumentError(argument, f"has shape {tuple(x.shape)}; expected {shape}")
    if _dtype_name(x) != dtype:
        raise GemmArgumentError(argument, f"has dtype {_dtype_name(x)}; expected {dtype}")
    if not x.flags.c_contiguous:
        raise GemmArgumentError(argument, "must be C-contiguous (row-major); pass cupy.ascontiguousarray(...)")


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
    if kernel == "wmma" and dtype == "f32":
        raise GemmArgumentError("a", "kernel 'wmma' takes float16 or bfloat16 inputs; use kernel='simt' for float32")
    if kernel == "simt" and dtype != "f32":
        raise GemmArgumentError("a", "kernel 'simt' takes float32 inputs; use kernel='wmma' for float16/bfloat16")

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
        _check_matrix(bias, "bias", shape)

    if beta != 0 and c is None:
        raise GemmArgumentError("c", f"beta={beta} needs c (an (M, N) = {(m, n)} float32 array)")
    if c is not None:
        _check_matrix(c, "c", (m, n))
    if out is not None:
        _check_matrix(out, "out", (m, n))
        for name, other in (("a", a), ("b", b), ("bias", bias)):
            if other is not None and other is out:
                raise GemmArgumentError("out", f"must not be the same array as {name}")
    return GemmPlan(kernel, dtype, m, n, k, act, bias_mode, c is not None and beta != 0, bool(save_z))


def _require_cupy(cp, **arrays: Any) -> None:
    for name, x in arrays.items():
        if x is not None and not isinstance(x, cp.ndarray):
            raise GemmArgumentError(name, f"must be a CuPy array on the GPU, got {type(x).__module__}."
                                          f"{type(x).__name__} (use cupy.asarray)")


def gemm(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out=None, kernel: str = "auto",
         input_dtype: Optional[str] = None, tile: Optional[str] = None, stream=None):
    """D = act(alpha * a @ b (+ beta * c) (+ bias)) in float32, one launch; returns D, or (D, Z) with save_z.

    a (M, K) and b (K, N): row-major CuPy arrays, both float16 or both bfloat16 (tensor cores, WMMA) or
    both float32 (SIMT ladder). c, bias, out: float32. bias_mode: none | per_m (M,) | per_n (N,) |
    full (M, N); left as None it follows the bias (none, or per_n for 1-D, full for 2-D).
    act: none relu leaky_relu gelu gelu_tanh silu sigmoid tanh. beta != 0 needs c; beta == 0 ignores c.
    kernel: auto (wmma for f16/bf16, simt for f32) | wmma | simt. tile (wmma only): force "256x128" or
    "128x64" (benchmarks); default chosen by size; inputs the 16-byte path cannot take use 128x128.
    """
    from . import gpu

    cp = gpu.cupy()  # GpuUnavailable, with the reason, when there is no usable GPU
    _require_cupy(cp, a=a, b=b, c=c, bias=bias, out=out)
    plan = validate_gemm_args(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                              leaky_slope=leaky_slope, save_z=save_z, out=out, kernel=kernel,
                              input_dtype=input_dtype)
    d = out if out is not None else cp.empty((plan.m, plan.n), dtype=cp.float32)
    z = cp.empty((plan.m, plan.n), dtype=cp.float32) if plan.save_z else None
    c_arg = c if plan.has_c else None
    bias_arg = bias if plan.bias_mode != "none" else None
    if plan.kernel == "wmma":
        from . import gemm_wmma

        if tile is not None and tile not in gemm_wmma.ALIGNED_TILES:
            raise GemmArgumentError("tile", f"{tile!r} is not valid: choose one of "
                                            f"{', '.join(gemm_wmma.ALIGNED_TILES)}")
        pointers = tuple(x.data.ptr for x in (a, b, c_arg, bias_arg, d, z) if x is not None)
        aligned = gemm_wmma.is_aligned(plan.k, plan.n, pointers)
        spec = gemm_wmma.spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                                  has_c=plan.has_c, save_z=plan.save_z, aligned=aligned,
                                  sm_count=_sm_count(), tile=tile if aligned else None)
        gemm_wmma.launch(spec, a, b, d, c=c_arg, bias=bias_arg, z=z, alpha=alpha, beta=beta,
                         leaky_slope=leaky_slope, stream=stream)
    else:
        from . import gemm_simt

        rung = gemm_simt.choose_rung(plan.m, plan.n, plan.k)
        gemm_simt.launch(rung, a, b, d, c=c_arg, bias=bias_arg, bias_mode=plan.bias_mode, act=plan.act,
                         alpha=alpha, beta=beta, leaky_slope=leaky_slope, z=z, stream=stream)
    return (d, z) if plan.save_z else d


_SM_COUNT: Optional[int] = None


def _sm_count() -> int:
    global _SM_COUNT
    if _SM_COUNT is None:
        from . import gpu
        _SM_COUNT = int(gpu.device_info()["sm_count"])
    return _SM_COUNT


__all__ = ["gemm", "validate_gemm_args", "GemmArgumentError", "GemmPlan", "KERNELS"]
