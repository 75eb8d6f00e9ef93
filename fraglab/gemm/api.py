"""`fraglab.gemm`: D = act(alpha * A @ B (+ beta * C) (+ bias)) on GPU arrays, in one kernel launch.

One road for the library, the CLI and the benchmarks: validate (gemm/validate.py) -> plan (the kernel
instantiation for this problem) -> launch. `prepare` does the first two and returns the bound launch.
The one-shot call pays validation and planning every time, so both are kept cheap: CuPy arrays skip every
conversion, plans and kernel specs are shared between calls of one signature, and no dtype name is looked up twice.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..memo import BoundedMemo
from ..runtime import gpu
from . import cast as gemm_cast
from . import simt as gemm_simt
from . import skinny as gemm_skinny
from . import tuning
from . import wgmma as gemm_wgmma
from . import wmma as gemm_wmma
from .torch_road import current_stream, torch_gemm, torch_module
from .validate import (ALIGN_BYTES, KERNELS, OUT_DTYPES, GemmArgumentError, GemmPlan, KernelFallback, check_scales,
                       is_aligned, stream_handle, tensor_core_kernel, validate_gemm_args)


@dataclass
class PreparedGemm:
    """A validated, planned GEMM bound to its arrays; calling it launches the one kernel (and, for a 16-bit D from
    the WMMA or SIMT kernel, the cast) and returns D, or (D, Z) with save_z."""

    plan: GemmPlan
    kernel_spec: Any     # gemm.wmma.WmmaKernelSpec, gemm.wgmma.WgmmaKernelSpec, or the SIMT rung's name
    d: Any               # what the call returns: `out` when given, else a CuPy array (a torch tensor when A is one)
    z: Any
    _launch: Callable[[], None]
    cast: bool = False   # D is computed in f32 and cast to out_dtype (one extra elementwise pass)
    _launch_on: Optional[Callable[[int], None]] = None   # the torch road: launch on a cudaStream_t
    _stream_of: Optional[Callable[[], int]] = None        # the torch road: torch's current stream

    def __post_init__(self):
        self._result = (self.d, self.z) if self.plan.save_z else self.d

    def __call__(self, stream=None):
        """Launch on `stream` (a CuPy Stream / ExternalStream, a torch.cuda.Stream, an int cudaStream_t; None:
        CuPy's current stream, or torch's current stream when the arrays are torch tensors)."""
        if self._launch_on is not None:
            if stream is None:
                self._launch_on(self._stream_of())
            else:
                handle = stream_handle(stream, _cupy_stream_types())
                self._launch_on(handle if isinstance(handle, int) else handle.ptr)
        elif stream is None:
            self._launch()
        else:
            with _cupy_stream(stream):
                self._launch()
        return self._result


def prepare(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
            beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out=None, z_out=None,
            kernel: str = "auto", input_dtype: Optional[str] = None, tile: Optional[str] = None,
            out_dtype=None, scale_a=None, scale_b=None) -> PreparedGemm:
    """Validate (gemm/validate.py) and plan once; the returned PreparedGemm launches with no further checks
    (what the benchmarks time). Arguments as for `gemm`; z_out: where Z goes (default: a new array). D, Z and the
    f32 scratch of a cast are allocated here, from CuPy's pool on the current stream."""
    cp = gpu.cupy()  # GpuUnavailable, with the reason, when there is no usable GPU
    torch = torch_module()
    if torch is not None and isinstance(a, torch.Tensor) and scale_a is None and scale_b is None:
        road = torch_gemm(torch, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
                          input_dtype, tile, None, out_dtype, prepare_only=True)
        if road is not None:
            road, d, z, launch_on = road
            index = road.device_index
            return PreparedGemm(road.plan, road.spec, d, z, lambda: launch_on(current_stream(torch, index)),
                                _launch_on=launch_on, _stream_of=lambda: current_stream(torch, index))
    nd = cp.ndarray
    a_in, out_in, z_in = a, out, z_out
    if not (isinstance(a, nd) and isinstance(b, nd) and (c is None or isinstance(c, nd))
            and (bias is None or isinstance(bias, nd)) and (out is None or isinstance(out, nd))
            and (z_out is None or isinstance(z_out, nd))):
        a, b, c, bias, out, z_out, input_dtype, out_dtype = _from_foreign(cp, a, b, c, bias, out, z_out, input_dtype,
                                                                          out_dtype)
    elif scale_a is None and scale_b is None:
        road = _signature_road(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
                               input_dtype, tile, out_dtype)
        prepared = road and _prepared_on_road(cp, road, a, b, c, bias, alpha, beta, leaky_slope, out, z_out)
        if prepared is not None:   # else an address TMA cannot take: the full road below
            return prepared
    plan = validate_gemm_args(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                              leaky_slope=leaky_slope, save_z=save_z, out=out, kernel=kernel,
                              input_dtype=input_dtype, out_dtype=out_dtype, z_out=z_out)
    scale_a, scale_b = _scales_as_cupy(cp, scale_a, scale_b)
    scales = check_scales(scale_a, scale_b, plan.dtype, plan.m, plan.n, plan.k)   # e4m3 only: the wgmma kernel
    m, n = plan.m, plan.n
    capturing, d, z = _outputs(cp, plan, a, out, z_out)
    c_arg = c if plan.has_c else None
    bias_arg = bias if plan.bias_mode != "none" else None
    if m == 0 or n == 0 or plan.k == 0:
        return _empty_problem(cp, plan, a_in, d, z, c_arg, bias_arg, beta, leaky_slope, out_in, z_in)
    family = plan.kernel
    aligned = True
    if family != "simt":
        pointers = (a.data.ptr, b.data.ptr, d.data.ptr, c_arg.data.ptr if c_arg is not None else 0,
                    bias_arg.data.ptr if bias_arg is not None else 0, z.data.ptr if z is not None else 0)
        requested = requested_kernel(kernel, tile)
        family, notice = tensor_core_kernel(requested, _compute_capability(), plan.k, n, pointers, plan.dtype,
                                            strided=plan.strided, m=plan.m if plan.a_order == "F" else 0)
        if notice:
            warnings.warn(notice, KernelFallback, stacklevel=3)
        if family == "wmma":
            aligned = is_aligned(plan.k, n, pointers)
    if plan.b_order == "F" and family != "wgmma":
        b = cp.ascontiguousarray(b)   # the WMMA and SIMT kernels read a row-major B: they get a row-major copy
    if plan.a_order == "F" and family != "wgmma":
        a = cp.ascontiguousarray(a)   # and a row-major A (wgmma reads a column-major 16-bit A as it is)
    spec = _spec(family, plan, tile, aligned, scales)
    cast = family != "wgmma" and plan.out_dtype != "f32"   # WMMA and SIMT store f32 only
    with gpu.relaxed_capture() if capturing else _NO_STREAM:
        d_kernel = cp.empty((m, n), dtype=cp.float32) if cast else d
        # the cast writes dense rows: a D with a row pitch gets them through a dense 16-bit scratch
        d_cast = cp.empty((m, n), dtype=d.dtype) if cast and plan.ldd else d
    bias_kernel = bias_arg
    if plan.bias_dtype != "f32" and family != "wgmma":   # the WMMA kernel reads a float32 bias: a copy per launch
        with gpu.relaxed_capture() if capturing else _NO_STREAM:
            bias_kernel = cp.empty(bias_arg.shape, dtype=cp.float32)
    launch = _launcher(family, spec, plan, a, b, d_kernel, c_arg, bias_kernel, z, alpha, beta, leaky_slope,
                       (scale_a, scale_b))
    if bias_kernel is not bias_arg:
        gemm_launch, bias_16 = launch, bias_arg

        def launch():
            bias_as_float32(cp, bias_16, plan.bias_dtype, bias_kernel)   # the bias as it is at this launch
            gemm_launch()
    if cast:
        kernel_launch, out_dtype_code = launch, plan.out_dtype

        def launch():
            kernel_launch()
            gemm_cast.launch(d_kernel, d_cast, out_dtype_code)   # same (current) stream: ordered after the GEMM
            if d_cast is not d:
                d[...] = d_cast
    d_result, z_result = d, z
    if out_in is not None:
        d_result = out_in
    elif a_in is not a and _is_torch(a_in):
        d_result = _to_torch(d)
    if z_in is not None and plan.save_z:
        z_result = z_in
    elif z is not None and a_in is not a and _is_torch(a_in):
        z_result = _to_torch(z)
    return PreparedGemm(plan, spec, d_result, z_result, launch, cast)


def _outputs(cp, plan: GemmPlan, a, out, z_out):
    """(capturing, D, Z): `out` and `z_out`, or new arrays from CuPy's pool on the current stream (allowed to grow
    while the stream is being captured into a CUDA graph)."""
    capturing = (out is None or (plan.save_z and z_out is None)) and gpu.stream_is_capturing(
        cp.cuda.get_current_stream().ptr)
    with gpu.relaxed_capture() if capturing else _NO_STREAM:   # CuPy's pool may grow (cudaMalloc) under capture
        d = out if out is not None else cp.empty((plan.m, plan.n), dtype=d_dtype(cp, plan.out_dtype, a))
        z = None
        if plan.save_z:
            z = z_out if z_out is not None else cp.empty((plan.m, plan.n), dtype=cp.float32)
    return capturing, d, z


# A call of CuPy arrays whose signature (shapes, strides and dtypes of every array, which of them are the same
# array, and the other arguments) was seen: its plan and wgmma (or skinny) spec, or False where the full road runs
# (another kernel, a notice to give, an empty problem). Validation reads nothing else from the arrays (the torch
# road keeps its plans the same way); the addresses are checked on every call.
_SIGNATURE_ROADS = BoundedMemo(lambda key: None, 512)


def _array_signature(x):
    return None if x is None else (x.shape, x.strides, x.dtype)


def _signature_road(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel, input_dtype,
                    tile, out_dtype):
    """(plan, spec) of a CuPy call the wgmma kernel takes as its signature says, or None (the full road)."""
    others = None
    if c is not None or bias is not None or out is not None or z_out is not None:
        others = (_array_signature(c), _array_signature(bias), _array_signature(out), _array_signature(z_out),
                  out is not None and (out is a or out is b or out is bias), z_out is not None and z_out is out)
    # the numbers' types too: True == 1 == 1.0 as keys, and validation refuses a bool
    key = (a.shape, a.strides, a.dtype, b.shape, b.strides, b.dtype, others, bias_mode, act, alpha, type(alpha), beta,
           type(beta), leaky_slope, type(leaky_slope), save_z, kernel, input_dtype, tile, out_dtype)
    try:
        road = _SIGNATURE_ROADS.get(key)
    except TypeError:   # an unhashable argument: the full road says what is wrong with it
        return None
    if road is None:
        plan = validate_gemm_args(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=leaky_slope, save_z=save_z, out=out, kernel=kernel,
                                  input_dtype=input_dtype, out_dtype=out_dtype, z_out=z_out)
        spec = aligned_wgmma_spec(plan, kernel, tile) if plan.m and plan.n and plan.k else None
        road = _SIGNATURE_ROADS.remember(key, (plan, spec) if spec is not None else False)
    return road or None


def aligned_wgmma_spec(plan: GemmPlan, kernel: str, tile: Optional[str]):
    """The wgmma (or skinny) spec the full road gives a plan when every address is 16-byte aligned, or None where
    it takes another kernel or gives a notice: the roads that check only addresses per call take this (the torch
    road, remembered CuPy signatures)."""
    if plan.kernel == "simt":
        return None
    family, notice = tensor_core_kernel(requested_kernel(kernel, tile), _compute_capability(), plan.k, plan.n, (),
                                        plan.dtype, strided=plan.strided, m=plan.m if plan.a_order == "F" else 0)
    return _spec("wgmma", plan, tile, True) if family == "wgmma" and notice is None else None


def _prepared_on_road(cp, road, a, b, c, bias, alpha, beta, leaky_slope, out, z_out):
    """prepare()'s result for a remembered signature (_signature_road), or None where an address is not 16-byte
    aligned (the full road then picks the kernel and gives its notice)."""
    plan, spec = road
    c_arg = c if plan.has_c else None
    bias_arg = bias if plan.bias_mode != "none" else None
    z_given = z_out if plan.save_z else None
    addresses = a.data.ptr | b.data.ptr
    for x in (c_arg, bias_arg, out, z_given):
        if x is not None:
            addresses |= x.data.ptr
    if addresses % ALIGN_BYTES:
        return None
    _, d, z = _outputs(cp, plan, a, out, z_given)
    launch = _launcher("wgmma", spec, plan, a, b, d, c_arg, bias_arg, z, alpha, beta, leaky_slope)
    return PreparedGemm(plan, spec, d, z, launch)


def bias_as_float32(cp, bias, bias_dtype: str, out=None):
    """A bias' values as float32: a float32 bias without `out` itself, a 16-bit one (`bias_dtype`) widened into
    `out` (or a new array) by gemm/cast.cu's pass on the current stream (no temporaries: launches may be captured
    in a graph)."""
    if bias_dtype == "f32" and out is None:
        return bias
    if out is None:
        out = cp.empty(bias.shape, dtype=cp.float32)
    gemm_cast.widen(bias, out, bias_dtype)
    return out


def _empty_problem(cp, plan: GemmPlan, a_in, d, z, c, bias, beta, leaky_slope, out_in, z_in) -> PreparedGemm:
    """M = 0 or N = 0: an empty D; K = 0: D = act(beta * C + bias), as torch.addmm (computed by CuPy, or by torch
    for torch tensors; the float64 reference's activation through the host for CuPy, a corner case)."""
    from . import reference

    def launch():
        if plan.m == 0 or plan.n == 0:
            return
        pre = cp.zeros((plan.m, plan.n), dtype=cp.float32)
        if plan.has_c:
            pre += beta * c
        if plan.bias_mode == "per_m":
            pre += bias[:, None]
        elif plan.bias_mode != "none":
            pre += bias_as_float32(cp, bias, plan.bias_dtype)
        d[...] = cp.asarray(reference.activate(cp.asnumpy(pre), plan.act, leaky_slope)).astype(d.dtype)
        if z is not None:
            z[...] = pre

    d_result = out_in if out_in is not None else (_to_torch(d) if _is_torch(a_in) else d)
    z_result = z_in if (z_in is not None and plan.save_z) else (_to_torch(z) if z is not None and _is_torch(a_in)
                                                                else z)
    return PreparedGemm(plan, None, d_result, z_result, launch)


def gemm(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out=None, kernel: str = "auto",
         input_dtype: Optional[str] = None, tile: Optional[str] = None, stream=None, out_dtype=None,
         scale_a=None, scale_b=None, z_out=None):
    """D = act(alpha * a @ b (+ beta * c) (+ bias)), one launch; returns D, or (D, Z) with save_z.

    a (M, K) and b (K, N): GPU arrays, a row-major, b row-major or column-major (b = w.T of a row-major (N, K)
    weight w: the wgmma kernel reads it as it is, K-major; the others take a row-major copy); both float16 or both
    bfloat16 (tensor cores) or both float32
    (SIMT ladder): CuPy arrays, torch CUDA tensors, or any object with __cuda_array_interface__ or __dlpack__ on
    the GPU (viewed without a copy; host arrays are refused by name). bf16 without a CuPy bfloat16 dtype: uint16
    bit patterns with input_dtype="bf16" (a torch bfloat16 tensor is viewed so by itself).
    c, bias, z: float32; a per-column bias may also be of a and b's own 16-bit type (an nn.Linear's bias as it is:
    the wgmma and skinny GEMMs read it so, the WMMA kernel takes a float32 copy made at each launch). bias_mode:
    none | per_m (M,) | per_n (N,) | full (M, N); left as None it follows the bias (none, or per_n for 1-D, full for
    2-D). act: none relu leaky_relu gelu gelu_tanh silu sigmoid tanh.
    beta != 0 needs c; beta == 0 ignores c.
    out_dtype: D's type, "f32" (default) | "f16" | "bf16" (also float32 / float16 / bfloat16, or a numpy, CuPy or
    torch dtype); with `out` given, out's dtype decides and a different out_dtype is an error. The wgmma kernel
    stores a 16-bit D itself; the WMMA kernel and the SIMT ladder compute into a float32 scratch and cast it (one
    extra elementwise pass, on the same stream). A bf16 D is CuPy's bfloat16 where it has one, else uint16 bit
    patterns (as the inputs: uint16 when they are).
    Returns `out` when given; else a new CuPy array, or a torch tensor on the same memory when a is a torch tensor
    (Z likewise, with z_out: an (M, N) float32 array for Z, read with save_z).
    Leading dimensions: c, a full bias, out and z_out may be row-major views with a row pitch (16-byte rows, e.g.
    a slice x[:, :n] of a wider array) on every kernel, read and written in place; a and b only on the wgmma kernel
    (TMA) and the SIMT ladder (gemm/validate.py matrix_layout says the rules, and what no kernel takes).
    kernel: auto (wgmma on sm_90 and wmma elsewhere for f16/bf16, simt for f32) | wgmma | wmma | simt; wgmma
    falls back to wmma with a KernelFallback warning where TMA cannot describe the operands. tile (benchmarks):
    force a wmma tile ("256x128", "128x64"), a wgmma tile (gemm.wgmma.ALL_TILES), or the skinny GEMM (M <= 128):
    "skinny" with its rules' split of K, or a variant by name (gemm.skinny.variant_tiles, e.g. "skinny/k2/c4/tma");
    default chosen by size (and a tuning table's tile for the problem, `fraglab gemm --tune`).
    stream: a CuPy Stream or ExternalStream, a torch.cuda.Stream, or an int cudaStream_t; None: CuPy's current
    stream (torch's default stream and CuPy's are both the legacy default one unless either was changed). The
    result's memory is allocated on that stream too.
    scale_a and scale_b float32, e4m3 only, given together, read by their shapes (gemm/validate.py check_scales):
    (M,) and (N,): the rowwise fp8 recipe, the product times scale_a[m] * scale_b[n] before alpha, C, the bias and
    the activation (torch._scaled_mm's (M, 1) / (1, N) too); (M, ceil(K/128)) and (ceil(N/128), ceil(K/128)):
    DeepGEMM's block scales, each 128-deep K-block's product times scale_a[m, kb] * scale_b[n // 128, kb].
    """
    torch = torch_module()
    # the torch road: no DLPack, D from torch's allocator (scaled fp8 takes the CuPy road)
    if torch is not None and isinstance(a, torch.Tensor) and scale_a is None and scale_b is None:
        result = torch_gemm(torch, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out,
                            kernel, input_dtype, tile, stream, out_dtype)
        if result is not None:
            return result
    # D, Z and the scratch come from the pool on the stream, and the launch goes there
    with _NO_STREAM if stream is None else _cupy_stream(stream):
        return prepare(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                       leaky_slope=leaky_slope, save_z=save_z, out=out, z_out=z_out, kernel=kernel,
                       input_dtype=input_dtype, tile=tile, out_dtype=out_dtype, scale_a=scale_a, scale_b=scale_b)()


_NO_STREAM = contextlib.nullcontext()   # reusable: entering it does nothing


# ---------------------------------------------------------------------------------------------
# Planning helpers

def requested_kernel(kernel: str, tile: Optional[str]) -> str:
    """The kernel family a call asks for: `kernel`, or with kernel="auto" and a tile forced, the family the tile
    names. WMMA's names come first: "128x64" and "256x128" are tiles of both, and name WMMA's (pass kernel="wgmma"
    for the wgmma tile of that name)."""
    if kernel == "auto" and tile is not None:
        return "wmma" if tile in gemm_wmma.ALIGNED_TILES else "wgmma"
    return kernel


def _spec(family: str, plan: GemmPlan, tile: Optional[str], aligned: bool, scales: str = "none"):
    """The kernel spec for this plan (cached; the spec classes validate themselves when built); `scales`: one of
    validate.SCALE_MODES."""
    return _SPECS[(family, plan, tile, aligned, scales)]   # plans are interned by validate: hashing them is cheap


def _scales_as_cupy(cp, scale_a, scale_b):
    """The scales as CuPy arrays (torch tensors and other GPU arrays viewed, gemm/interop.py)."""
    from .interop import to_cupy

    return tuple(x if x is None or isinstance(x, cp.ndarray) else to_cupy(cp, x, name)[0]
                 for x, name in ((scale_a, "scale_a"), (scale_b, "scale_b")))


def rules_tile(plan: GemmPlan) -> str:
    """The tile the schedule's rules give a 16-bit wgmma-family plan on this GPU, whatever a tuning table says (the
    skinny GEMM as tuning.SKINNY): what `fraglab gemm --tune` measures the candidates against."""
    spec = _spec_from("wgmma", plan, None, True, "none", tuned=False)
    return tuning.SKINNY if isinstance(spec, gemm_skinny.SkinnyKernelSpec) else spec.tile


def _make_spec(key):
    return _spec_from(*key)


def _spec_from(family: str, plan: GemmPlan, tile: Optional[str], aligned: bool, scales: str, tuned: bool = True):
    if tuned and family == "wgmma" and tile is None and scales == "none":
        # a tile `fraglab gemm --tune` measured faster for this problem here, if any (read once per plan: _SPECS)
        tile = tuning.tuned_tile(plan, _gpu_name)
    if family == "wgmma":
        skinny = gemm_skinny.planned(plan, tile, scales != "none", _sm_count())   # small M: the skinny GEMM's rule
        if skinny is not None:
            return skinny
        if tile is not None and tile not in gemm_wgmma.ALL_TILES:
            raise GemmArgumentError("tile", f"{tile!r} is not valid for wgmma: choose one of "
                                            f"{', '.join(gemm_wgmma.ALL_TILES)}")
        return gemm_wgmma.spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                                   has_c=plan.has_c, save_z=plan.save_z, sm_count=_sm_count(), tile=tile,
                                   out_dtype=plan.out_dtype, b_order=plan.b_order, scaled=scales == "rowwise",
                                   a_order=plan.a_order, block_scaled=scales == "block", bias_dtype=plan.bias_dtype)
    if family == "wmma":
        if tile is not None and tile not in gemm_wmma.ALIGNED_TILES:
            raise GemmArgumentError("tile", f"{tile!r} is not valid: choose one of "
                                            f"{', '.join(gemm_wmma.ALIGNED_TILES)}")
        return gemm_wmma.spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                                  has_c=plan.has_c, save_z=plan.save_z, aligned=aligned, sm_count=_sm_count(),
                                  tile=tile if aligned else None)
    return gemm_simt.choose_rung(plan.m, plan.n, plan.k)


_SPECS = BoundedMemo(_make_spec, 1024)   # (family, plan, tile, aligned) -> kernel spec: skips spec_for's checks


def _launcher(family, spec, plan, a, b, d, c, bias, z, alpha, beta, leaky_slope,
              scales=(None, None)) -> Callable[[], None]:
    """The bound launch on CuPy's current stream (PreparedGemm enters the caller's stream around it)."""
    if isinstance(spec, gemm_skinny.SkinnyKernelSpec):
        return gemm_skinny.bind_plan(spec, plan, a, b, d, c, bias, z, alpha, beta, leaky_slope)
    if family == "wgmma":   # parameters packed once: a call is one cuLaunchKernel
        launch = gemm_wgmma.bind(spec, a, b, d, c=c, bias=bias, z=z, alpha=alpha, beta=beta,
                                 leaky_slope=leaky_slope, sm_count=_sm_count(), lda=plan.lda, ldb=plan.ldb,
                                 ldd=plan.ldd, ldc=plan.ldc, ldbias=plan.ldbias, ldz=plan.ldz, scale_a=scales[0],
                                 scale_b=scales[1])
    elif family == "wmma":
        # D's pitch is the kernel's D's: a 16-bit D is cast from a dense f32 scratch
        pitches = dict(ldc=plan.ldc, ldbias=plan.ldbias, ldd=plan.ldd if plan.out_dtype == "f32" else 0, ldz=plan.ldz)

        def launch():
            gemm_wmma.launch(spec, a, b, d, c=c, bias=bias, z=z, alpha=alpha, beta=beta, leaky_slope=leaky_slope,
                             **pitches)
    else:
        bias_mode, act = plan.bias_mode, plan.act

        def launch():
            gemm_simt.launch(spec, a, b, d, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                             leaky_slope=leaky_slope, z=z)
    return launch


def d_dtype(cp, out_dtype: str, a):
    """The array type of a new D: float32, float16, or for bf16 a's own type when a is bf16 (CuPy's bfloat16 or
    uint16 bits), else CuPy's bfloat16 where it has one, else uint16 bits."""
    if out_dtype == "f32":
        return cp.float32
    if out_dtype == "f16":
        return cp.float16
    a_dtype = a.dtype
    if a_dtype.itemsize == 2 and a_dtype != cp.float16:
        return a_dtype
    return gemm_cast.bf16_dtype(cp) or cp.uint16


def _from_foreign(cp, a, b, c, bias, out, z_out, input_dtype, out_dtype):
    """Arguments that are not CuPy arrays, viewed as CuPy arrays (gemm/interop.py); a torch bf16 (or e4m3) tensor
    viewed as bits sets input_dtype (a, b) or out_dtype (out) to bf16 (or e4m3)."""
    from .interop import to_cupy_all

    views, bits = to_cupy_all(cp, {"a": a, "b": b, "c": c, "bias": bias, "out": out, "z_out": z_out})
    if input_dtype is None and (bits.get("a") or bits.get("b")):
        input_dtype = bits.get("a") or bits.get("b")
    if out_dtype is None and bits.get("out") == "bf16":
        out_dtype = "bf16"
    return (views["a"], views["b"], views["c"], views["bias"], views["out"], views["z_out"], input_dtype,
            out_dtype)


def _is_torch(x) -> bool:
    from .interop import is_torch
    return is_torch(x)


def _to_torch(x):
    from .interop import to_torch
    return to_torch(x)


_STREAM_TYPES: tuple = ()


def _cupy_stream_types() -> tuple:
    """CuPy's stream classes (what stream_handle passes through as they are)."""
    global _STREAM_TYPES
    if not _STREAM_TYPES:
        cp = gpu.cupy()
        _STREAM_TYPES = (cp.cuda.Stream, cp.cuda.ExternalStream)
    return _STREAM_TYPES


def _cupy_stream(stream):
    """`stream=` as a CuPy stream (validate.stream_handle says what is accepted)."""
    cp = gpu.cupy()
    handle = stream_handle(stream, _cupy_stream_types())
    if isinstance(handle, int):
        if handle == 0:
            return cp.cuda.Stream.null
        from_external = getattr(cp.cuda.Stream, "from_external", None)   # CuPy 14 deprecates ExternalStream
        return from_external(_StreamHandle(handle)) if from_external else cp.cuda.ExternalStream(handle)
    return handle


class _StreamHandle:
    """An int cudaStream_t as an object of the CUDA stream protocol, which CuPy's Stream.from_external takes."""

    __slots__ = ("handle",)

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)   # (protocol version, cudaStream_t)


_SM_COUNT: Optional[int] = None
_GPU_NAME: Optional[str] = None
_COMPUTE_CAPABILITY: Optional[int] = None


def _compute_capability() -> int:
    global _COMPUTE_CAPABILITY
    if _COMPUTE_CAPABILITY is None:
        _COMPUTE_CAPABILITY = gpu.compute_capability()
    return _COMPUTE_CAPABILITY


def _gpu_name() -> str:
    global _GPU_NAME
    if _GPU_NAME is None:
        _GPU_NAME = str(gpu.device_info().get("gpu_name", ""))
    return _GPU_NAME


def _sm_count() -> int:
    global _SM_COUNT
    if _SM_COUNT is None:
        _SM_COUNT = int(gpu.device_info()["sm_count"])
    return _SM_COUNT


__all__ = ["gemm", "prepare", "PreparedGemm", "rules_tile", "d_dtype", "validate_gemm_args", "GemmArgumentError",
           "GemmPlan", "KERNELS", "OUT_DTYPES"]
