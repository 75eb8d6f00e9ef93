"""A 16-bit D from the kernels that store f32 (WMMA, SIMT): one cast pass (gemm/cast.cu) on the launch's stream;
and the other way, a 16-bit bias widened to the float32 the WMMA kernel reads.

Also which array type a 16-bit D is on this CuPy: float16, and for bf16 CuPy's bfloat16 (ml_dtypes) where this
CuPy has one, else uint16 bit patterns, the way bf16 inputs travel (`input_dtype="bf16"`).
"""

from __future__ import annotations

import numpy as np

from ..runtime.build import KernelBuild

ENTRY = "gemm/cast.cu"
OUT_DTYPES = ("f16", "bf16")
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}
THREADS = 256
MAX_BLOCKS = 8192   # grid-stride beyond: 2M threads keep any GPU's memory system busy


def kernel_name(out_dtype: str) -> str:
    """'f16' -> 'fraglab::cast_f32<__half>'."""
    return f"fraglab::cast_f32<{_CPP_TYPE[out_dtype]}>"


def widen_kernel_name(in_dtype: str) -> str:
    """'bf16' -> 'fraglab::widen_to_f32<__nv_bfloat16>'."""
    return f"fraglab::widen_to_f32<{_CPP_TYPE[in_dtype]}>"


BUILD = KernelBuild(ENTRY, tuple(kernel_name(t) for t in OUT_DTYPES) + tuple(widen_kernel_name(t) for t in OUT_DTYPES))


def grid(n: int) -> int:
    return max(1, min(-(-n // THREADS), MAX_BLOCKS))


_FUNCTIONS: dict[str, object] = {}


def _function(name: str):
    fn = _FUNCTIONS.get(name)
    if fn is None:
        from ..runtime import gpu

        fn = _FUNCTIONS[name] = gpu.function(BUILD, name)
    return fn


def launch(x, y, out_dtype: str) -> None:
    """y = x rounded to nearest even, on CuPy's current stream: x a contiguous float32 array, y a contiguous
    array of as many 16-bit elements (float16; bf16 as CuPy's bfloat16 or as uint16 bits)."""
    n = x.size
    _function(kernel_name(out_dtype))((grid(n),), (THREADS,), (x, y, np.int64(n)))


def widen(x, y, in_dtype: str) -> None:
    """y = x exactly, on CuPy's current stream: x a contiguous array of 16-bit elements (float16; bf16 as CuPy's
    bfloat16 or as uint16 bits), y a contiguous float32 array of as many."""
    n = x.size
    _function(widen_kernel_name(in_dtype))((grid(n),), (THREADS,), (x, y, np.int64(n)))


_UNPROBED = object()
_BF16 = _UNPROBED


def bf16_dtype(cp):
    """numpy's bfloat16 (ml_dtypes) when this CuPy can hold it, else None (bf16 then travels as uint16 bits).
    Probed once."""
    global _BF16
    if _BF16 is _UNPROBED:
        try:
            import ml_dtypes

            dt = np.dtype(ml_dtypes.bfloat16)
            cp.zeros(2, dtype=dt).view(cp.uint16)
            _BF16 = dt
        except Exception:
            _BF16 = None
    return _BF16


__all__ = ["ENTRY", "OUT_DTYPES", "BUILD", "kernel_name", "widen_kernel_name", "grid", "launch", "widen",
           "bf16_dtype"]
