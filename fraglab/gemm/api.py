"""`fraglab.gemm`: D = act(alpha * A @ B (+ beta * C) (+ bias)) on CuPy arrays, in one kernel launch.

One road for the library, the CLI and the benchmarks: validate (gemm/validate.py) -> plan (the kernel
instantiation for this problem) -> launch. `prepare` does the first two and returns the bound launch.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .validate import (KERNELS, GemmArgumentError, GemmPlan, KernelFallback, check_matrix, is_aligned,
                       tensor_core_kernel, validate_gemm_args)


def _require_cupy(cp, **arrays: Any) -> None:
    for name, x in arrays.items():
        if x is not None and not isinstance(x, cp.ndarray):
            raise GemmArgumentError(name, f"must be a CuPy array on the GPU, got {type(x).__module__}."
                                          f"{type(x).__name__} (use cupy.asarray)")


@dataclass
class PreparedGemm:
    """A validated, planned GEMM bound to its arrays; calling it launches the one kernel and returns D (or D, Z)."""

    plan: GemmPlan
    kernel_spec: Any     # gemm.wmma.WmmaKernelSpec, gemm.wgmma.WgmmaKernelSpec, or the SIMT rung's name
    d: Any
    z: Any
    _launch: Callable[[Any], None]

    def __call__(self, stream=None):
        self._launch(stream)
        return (self.d, self.z) if self.plan.save_z else self.d


def prepare(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
            beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out=None, z_out=None,
            kernel: str = "auto", input_dtype: Optional[str] = None, tile: Optional[str] = None) -> PreparedGemm:
    """Validate (gemm/validate.py) and plan once; the returned PreparedGemm launches with no further checks
    (what the benchmarks time). Arguments as for `gemm`; z_out: where Z goes (default: a new array)."""
    from ..runtime import gpu

    cp = gpu.cupy()  # GpuUnavailable, with the reason, when there is no usable GPU
    _require_cupy(cp, a=a, b=b, c=c, bias=bias, out=out, z_out=z_out)
    plan = validate_gemm_args(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                              leaky_slope=leaky_slope, save_z=save_z, out=out, kernel=kernel,
                              input_dtype=input_dtype)
    d = out if out is not None else cp.empty((plan.m, plan.n), dtype=cp.float32)
    z = None
    if plan.save_z:
        if z_out is not None:
            check_matrix(z_out, "z_out", (plan.m, plan.n))
        z = z_out if z_out is not None else cp.empty((plan.m, plan.n), dtype=cp.float32)
    c_arg = c if plan.has_c else None
    bias_arg = bias if plan.bias_mode != "none" else None
    family = plan.kernel
    if plan.kernel in ("wmma", "wgmma"):
        pointers = tuple(x.data.ptr for x in (a, b, c_arg, bias_arg, d, z) if x is not None)
        requested = kernel
        if kernel == "auto" and tile is not None:  # a forced tile names its kernel (WMMA's names first, as before)
            from .wmma import ALIGNED_TILES
            requested = "wmma" if tile in ALIGNED_TILES else "wgmma"
        family, notice = tensor_core_kernel(requested, _compute_capability(), plan.k, plan.n, pointers)
        if notice:
            warnings.warn(notice, KernelFallback, stacklevel=3)
    if family == "wgmma":
        from . import wgmma as gemm_wgmma

        if tile is not None and tile not in gemm_wgmma.ALL_TILES:
            raise GemmArgumentError("tile", f"{tile!r} is not valid for wgmma: choose one of "
                                            f"{', '.join(gemm_wgmma.ALL_TILES)}")
        spec = gemm_wgmma.spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                                   has_c=plan.has_c, save_z=plan.save_z, sm_count=_sm_count(), tile=tile)

        def launch(stream):
            gemm_wgmma.launch(spec, a, b, d, c=c_arg, bias=bias_arg, z=z, alpha=alpha, beta=beta,
                              leaky_slope=leaky_slope, stream=stream, sm_count=_sm_count())
    elif family == "wmma":
        from . import wmma as gemm_wmma

        if tile is not None and tile not in gemm_wmma.ALIGNED_TILES:
            raise GemmArgumentError("tile", f"{tile!r} is not valid: choose one of "
                                            f"{', '.join(gemm_wmma.ALIGNED_TILES)}")
        pointers = tuple(x.data.ptr for x in (a, b, c_arg, bias_arg, d, z) if x is not None)
        aligned = is_aligned(plan.k, plan.n, pointers)
        spec = gemm_wmma.spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                                  has_c=plan.has_c, save_z=plan.save_z, aligned=aligned,
                                  sm_count=_sm_count(), tile=tile if aligned else None)

        def launch(stream):
            gemm_wmma.launch(spec, a, b, d, c=c_arg, bias=bias_arg, z=z, alpha=alpha, beta=beta,
                             leaky_slope=leaky_slope, stream=stream)
    else:
        from . import simt as gemm_simt

        spec = gemm_simt.choose_rung(plan.m, plan.n, plan.k)

        def launch(stream):
            gemm_simt.launch(spec, a, b, d, c=c_arg, bias=bias_arg, bias_mode=plan.bias_mode, act=plan.act,
                             alpha=alpha, beta=beta, leaky_slope=leaky_slope, z=z, stream=stream)
    return PreparedGemm(plan, spec, d, z, launch)


def gemm(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out=None, kernel: str = "auto",
         input_dtype: Optional[str] = None, tile: Optional[str] = None, stream=None):
    """D = act(alpha * a @ b (+ beta * c) (+ bias)) in float32, one launch; returns D, or (D, Z) with save_z.

    a (M, K) and b (K, N): row-major CuPy arrays, both float16 or both bfloat16 (tensor cores, WMMA) or
    both float32 (SIMT ladder). c, bias, out: float32. bias_mode: none | per_m (M,) | per_n (N,) |
    full (M, N); left as None it follows the bias (none, or per_n for 1-D, full for 2-D).
    act: none relu leaky_relu gelu gelu_tanh silu sigmoid tanh. beta != 0 needs c; beta == 0 ignores c.
    kernel: auto (wgmma on sm_90 and wmma elsewhere for f16/bf16, simt for f32) | wgmma | wmma | simt; wgmma
    falls back to wmma with a KernelFallback warning where TMA cannot describe the operands. tile (benchmarks):
    force a wmma tile ("256x128", "128x64") or a wgmma tile (gemm.wgmma.ALL_TILES); default chosen by size.
    """
    return prepare(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                   leaky_slope=leaky_slope, save_z=save_z, out=out, kernel=kernel, input_dtype=input_dtype,
                   tile=tile)(stream)


_SM_COUNT: Optional[int] = None
_COMPUTE_CAPABILITY: Optional[int] = None


def _compute_capability() -> int:
    global _COMPUTE_CAPABILITY
    if _COMPUTE_CAPABILITY is None:
        from ..runtime import gpu
        _COMPUTE_CAPABILITY = gpu.compute_capability()
    return _COMPUTE_CAPABILITY


def _sm_count() -> int:
    global _SM_COUNT
    if _SM_COUNT is None:
        from ..runtime import gpu
        _SM_COUNT = int(gpu.device_info()["sm_count"])
    return _SM_COUNT


__all__ = ["gemm", "prepare", "PreparedGemm", "validate_gemm_args", "GemmArgumentError", "GemmPlan", "KERNELS"]
