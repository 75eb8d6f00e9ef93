"""The one rule set for GEMM arguments, for every kernel (WMMA, SIMT, wgmma): shapes, dtypes, contiguity, the
output type, the epilogue names (checked here once), the stream and the 16-byte alignment of the fast path.

It needs no GPU: it reads only shapes, dtypes, contiguity and pointers, so it is tested on the CPU with
numpy arrays standing in. Each bad argument gives one GemmArgumentError naming the argument and what is valid.
It runs on every `fraglab.gemm` call, so it is written to be cheap (each dtype's name looked up once, plans
shared between calls of one signature) without skipping a check.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Optional

from ..errors import InputError
from ..memo import BoundedMemo
from .epilogue import ACT_KINDS, BIAS_MODES, bias_shape, check_bias_dtype

ALIGN_BYTES = 16     # the vectorised (cp.async / TMA) path: every row and base pointer 16-byte aligned
ALIGN_ELEMENTS = 8   # K and N multiples of 8 half-precision elements keep rows 16-byte aligned
ALIGN_K_FP8 = 16     # rows of 8-bit A and (column-major) B hold K bytes: K a multiple of 16


def is_aligned(k: int, n: int, pointers: tuple[int, ...], k_multiple: int = ALIGN_ELEMENTS, m: int = 0) -> bool:
    """The 16-byte path needs K and N multiples of 8 (rows of A, B, C, D start 16-byte aligned; K a multiple of
    16 for 8-bit inputs), M too for a column-major A (`m` given: its rows in memory are M long), and every base
    pointer 16-byte aligned."""
    if k % k_multiple or n % ALIGN_ELEMENTS or m % ALIGN_ELEMENTS:
        return False
    for p in pointers:   # a loop, not all(genexpr): this runs on every call
        if p % ALIGN_BYTES:
            return False
    return True


KERNELS = ("auto", "wmma", "wgmma", "simt")
_INPUT_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
OUT_DTYPES = ("f32", "f16", "bf16")   # D; Z is always f32
_OUT_DTYPE_NAMES = {"f32": "f32", "float32": "f32", "f16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16"}
_BF16_BITS = "uint16"                 # bf16 bit patterns, for CuPy builds without a bfloat16 dtype
_E4M3_BITS = "uint8"                  # fp8 e4m3 bit patterns (CuPy has no 8-bit float; torch's arrive viewed so)
INPUT_DTYPE_CODES = ("bf16", "e4m3")  # input_dtype: how to read 16- and 8-bit integer bit patterns


class GemmArgumentError(InputError):
    """A bad argument to fraglab.gemm; `argument` names it."""

    def __init__(self, argument: str, message: str):
        super().__init__(f"{argument}: {message}", argument=argument)


@dataclass(frozen=True)
class GemmPlan:
    """What validation resolved: which kernel family, the problem size and the epilogue."""
    kernel: str        # "wmma" | "simt" | "wgmma" (e4m3: the one kernel that takes it)
    dtype: str         # "f16" | "bf16" | "f32"
    m: int
    n: int
    k: int
    act: str
    bias_mode: str
    has_c: bool        # C is read only when beta != 0 (BLAS convention: beta == 0 ignores C, NaN included)
    save_z: bool
    out_dtype: str = "f32"   # D: "f32" | "f16" | "bf16"
    b_order: str = "C"       # B in memory: "C" row-major, "F" column-major (the wgmma kernel reads it as it is)
    lda: int = 0             # leading dimensions in elements where they differ from the width (0: dense); A's
    ldb: int = 0             # and B's only the wgmma kernel (TMA's row pitch) and the SIMT ladder take, see
    ldd: int = 0             # `matrix_layout`; D's, C's, a full bias' and Z's every kernel takes (the epilogue's
    ldc: int = 0             # ld arguments, gemm/epilogue.cuh)
    ldbias: int = 0
    ldz: int = 0
    a_order: str = "C"       # A in memory: "C" row-major, "F" column-major (16-bit on wgmma; the others get a copy)
    bias_dtype: str = "f32"  # the bias in memory: "f32", or a per-column bias of the 16-bit inputs' type (wgmma and
                             # skinny read it as it is; the WMMA kernel gets a float32 copy)

    @property
    def strided(self) -> bool:
        """A or B with a row pitch: of the tensor-core kernels only wgmma reads them (TMA)."""
        return bool(self.lda or self.ldb)


# One frozen plan per signature (building one costs more than the lookup).
_PLANS = BoundedMemo(lambda fields: GemmPlan(*fields), 1024)


def _plan(*fields) -> GemmPlan:
    return _PLANS[fields]


def _dtype_attribute_name(dt) -> str:
    name = getattr(dt, "name", None)
    return name if isinstance(name, str) else str(dt)


# dtype object -> its name: numpy computes dtype.name in Python (~2 us a time)
_DTYPE_NAMES = BoundedMemo(_dtype_attribute_name, 64)


def _dtype_name(x) -> str:
    dt = getattr(x, "dtype", None)
    if dt is None:
        return type(x).__name__
    try:
        return _DTYPE_NAMES[dt]
    except TypeError:   # an unhashable stand-in
        return _dtype_attribute_name(dt)


def _input_dtype(name: str, argument: str, input_dtype: Optional[str]) -> str:
    code = _INPUT_DTYPES.get(name)
    if code is not None:
        return code
    if input_dtype == "bf16" and name == _BF16_BITS:
        return "bf16"
    if input_dtype == "e4m3" and name == _E4M3_BITS:
        return "e4m3"
    raise GemmArgumentError(argument, f"dtype {name} is not supported: valid are float16, bfloat16 (tensor cores), "
                                      "float32 (SIMT), and uint8 e4m3 bit patterns with input_dtype='e4m3' (wgmma)")


COPY_FIX = "pass a contiguous copy (x.contiguous() in torch, cupy.ascontiguousarray(x) in CuPy)"


def check_matrix(x, argument: str, shape: tuple[int, ...], dtype: Optional[str] = "float32",
                 leading_dimension: bool = False) -> int:
    """x has this shape, this dtype (None: any, checked by the caller) and is dense row-major; with
    leading_dimension, row-major with any 16-byte aligned row pitch (returned, 0 when dense: `matrix_layout`)."""
    try:
        x_shape, strides = tuple(x.shape), x.strides
        x.dtype
    except AttributeError:
        raise GemmArgumentError(argument, f"must be an array, got {type(x).__name__}") from None
    if x_shape != shape:
        raise GemmArgumentError(argument, f"has shape {x_shape}; expected {shape}")
    if dtype is not None and _dtype_name(x) != dtype:
        raise GemmArgumentError(argument, f"has dtype {_dtype_name(x)}; expected {dtype}")
    if len(shape) == 1:
        if shape[0] > 1 and strides[0] != x.dtype.itemsize:
            raise GemmArgumentError(argument, f"has a step of {strides[0] // max(x.dtype.itemsize, 1)} elements; "
                                              f"the kernels read it with unit stride: {COPY_FIX}")
        return 0
    _, ld = matrix_layout(x_shape, strides, x.dtype.itemsize, argument)
    if ld and not leading_dimension:
        raise GemmArgumentError(argument, f"has a leading dimension of {ld} elements for {shape[1]} columns; the "
                                          f"kernels read {argument} dense (row pitch = N): {COPY_FIX}")
    return ld


def order_of_empty(orders: str) -> str:
    return orders[0]


def matrix_layout(shape, strides, itemsize: int, argument: str, orders: str = "C") -> tuple[str, int]:
    """(order, leading dimension) of a 2-D array from its byte strides: "C" row-major (a unit step along each row,
    rows ld elements apart), "F" column-major (a unit step down each column) where `orders` allows it. ld is 0
    when the array is dense (ld == its width; one row or column counts as dense); any other ld must keep rows
    16-byte aligned (TMA's row pitch). What no kernel reads is one GemmArgumentError naming the fix."""
    rows, cols = shape
    s0, s1 = strides
    if rows == 0 or cols == 0:   # nothing is read
        return order_of_empty(orders), 0
    if s0 % itemsize or s1 % itemsize:
        raise GemmArgumentError(argument, f"has byte strides {(s0, s1)}, not whole elements: {COPY_FIX}")
    e0, e1 = s0 // itemsize, s1 // itemsize
    if (e1 == 1 or cols <= 1) and (rows <= 1 or e0 >= max(cols, 1)):
        order, ld, width = "C", (e0 if rows > 1 else cols), cols
    elif (e0 == 1 or rows <= 1) and (cols <= 1 or e1 >= max(rows, 1)):
        order, ld, width = "F", (e1 if cols > 1 else rows), rows
    else:
        raise GemmArgumentError(argument, f"has element strides {(e0, e1)}: the kernels read arrays with a unit "
                                          f"stride in one dimension and rows that do not overlap; {COPY_FIX}")
    if order not in orders:
        raise GemmArgumentError(argument, f"is column-major (element strides {(e0, e1)}, e.g. x.t()); the kernels "
                                          f"read {argument} row-major: {COPY_FIX}")
    if ld == width:
        return order, 0
    if (ld * itemsize) % ALIGN_BYTES:
        raise GemmArgumentError(argument, f"has a leading dimension of {ld} elements ({ld * itemsize} bytes), not a "
                                          f"multiple of {ALIGN_BYTES} bytes as TMA's row pitch must be: {COPY_FIX}")
    return order, ld


def _foreign_dtype_name(value) -> Optional[str]:
    """'float16' for numpy.float16, numpy.dtype('float16'), cupy.float16 or torch.float16; None if not a dtype."""
    text = str(value)
    if text.startswith("torch."):
        return text[len("torch."):]
    try:
        import numpy as np

        return np.dtype(value).name
    except Exception:   # numpy raises TypeError (and more) for what is not a dtype
        return None


def resolve_out_dtype(out_dtype=None, out=None, input_dtype: Optional[str] = None) -> str:
    """D's type, "f32" | "f16" | "bf16". out_dtype: f32 f16 bf16 float32 float16 bfloat16, or a numpy / CuPy /
    torch dtype; None: f32, or out's type. When out is given its dtype decides, and an out_dtype saying otherwise
    is an error naming out_dtype. A uint16 out holds bf16 bit patterns when out_dtype or input_dtype says 'bf16'."""
    wanted = None
    if out_dtype is not None:
        wanted = _OUT_DTYPE_NAMES.get(out_dtype if type(out_dtype) is str else _foreign_dtype_name(out_dtype))
        if wanted is None:
            raise GemmArgumentError("out_dtype", f"{out_dtype!r} is not valid: choose one of f32, f16, bf16 "
                                                 "(or float32, float16, bfloat16)")
    if out is None:
        return wanted or "f32"
    name = _dtype_name(out)
    have = _INPUT_DTYPES.get(name)
    if have is None and name == _BF16_BITS:
        if wanted not in (None, "bf16"):
            raise GemmArgumentError("out_dtype", f"{out_dtype!r} contradicts out's dtype uint16 (bf16 bit patterns "
                                                 "at most): leave out_dtype unset or pass a matching out")
        if wanted == "bf16" or input_dtype == "bf16":
            have = "bf16"
    if have is None:
        raise GemmArgumentError("out", f"has dtype {name}; D can be float32, float16 or bfloat16 (a uint16 array "
                                       "of bf16 bit patterns with out_dtype='bf16')")
    if wanted is not None and wanted != have:
        raise GemmArgumentError("out_dtype", f"{out_dtype!r} contradicts out's dtype {name}: leave out_dtype unset "
                                             f"(D is then {have}) or pass an out of that type")
    return have


def stream_handle(stream, stream_types: tuple = ()):
    """What `stream=` names: None (CuPy's current stream) or an instance of `stream_types` (CuPy's Stream and
    ExternalStream) as they are; else the cudaStream_t, an int, of an int >= 0, of a torch.cuda.Stream
    (`.cuda_stream`) or of an object with `__cuda_stream__` (the CUDA stream protocol: (version, handle))."""
    if stream is None or isinstance(stream, stream_types):
        return stream
    handle = stream
    try:
        if hasattr(stream, "__cuda_stream__"):
            handle = stream.__cuda_stream__()[1]
        elif hasattr(stream, "cuda_stream"):
            handle = stream.cuda_stream
        if not isinstance(handle, bool):
            handle = operator.index(handle)
    except Exception:
        pass
    if type(handle) is not int or handle < 0:
        raise GemmArgumentError("stream", f"must be a CuPy Stream or ExternalStream, a torch.cuda.Stream, an object "
                                          f"with __cuda_stream__, or a cudaStream_t handle (an int >= 0); got "
                                          f"{stream!r}")
    return handle


class KernelFallback(UserWarning):
    """A wgmma GEMM was asked for (or chosen) but the operands need the WMMA kernel; the message says why."""


STRIDED_NEEDS = (f"a and b with a leading dimension other than their width run on the wgmma kernel (sm_90, TMA: K and N "
                 f"multiples of {ALIGN_ELEMENTS}, {ALIGN_BYTES}-byte aligned base addresses) or, float32, on the SIMT "
                 f"kernels")


def tensor_core_kernel(requested: str, compute_capability: int, k: int, n: int,
                       pointers: tuple[int, ...], dtype: str = "f16",
                       strided: bool = False, m: int = 0) -> tuple[str, Optional[str]]:
    """Which tensor-core GEMM runs f16/bf16 inputs: ("wgmma" | "wmma", the one-line notice or None).
    On sm_90, 'auto' and 'wgmma' take wgmma when TMA can describe the operands (`is_aligned`: K and N multiples
    of 8, and M for a column-major A, passed as `m`; 16-byte aligned arrays), else WMMA with a notice; 'wgmma' on
    another GPU is an error. e4m3 has only the wgmma kernel: another GPU, or operands TMA cannot describe (K a
    multiple of 16 here), are errors."""
    if dtype == "e4m3":
        if compute_capability != 90:
            raise GemmArgumentError("a", f"e4m3 inputs run on the wgmma kernel, which needs an sm_90 GPU (H100/H200); "
                                         f"this GPU is sm_{compute_capability}")
        if not is_aligned(k, n, pointers, ALIGN_K_FP8):
            raise GemmArgumentError("a", f"e4m3 needs K a multiple of {ALIGN_K_FP8}, N a multiple of {ALIGN_ELEMENTS} "
                                         f"and {ALIGN_BYTES}-byte aligned arrays (TMA); K={k}, N={n}")
        return "wgmma", None
    if strided:   # only TMA takes a row pitch: no fallback, one error naming the fix
        where = (f"kernel {requested!r}" if requested == "wmma" else
                 f"this GPU is sm_{compute_capability}" if compute_capability != 90 else f"K={k}, N={n} / the addresses")
        if requested == "wmma" or compute_capability != 90 or not is_aligned(k, n, pointers, m=m):
            raise GemmArgumentError("a" if requested != "wmma" else "kernel",
                                    f"{STRIDED_NEEDS}; {where} does not allow it: {COPY_FIX}")
        return "wgmma", None
    if requested == "wmma":
        return "wmma", None
    if compute_capability != 90:
        if requested == "wgmma":
            raise GemmArgumentError("kernel", f"'wgmma' needs an sm_90 GPU (H100/H200); this GPU is "
                                              f"sm_{compute_capability}: use kernel='wmma' or 'auto'")
        return "wmma", None
    if is_aligned(k, n, pointers, m=m):
        return "wgmma", None
    extents = f"K={k}, N={n}" + (f", M={m} (a column-major a)" if m % ALIGN_ELEMENTS else "")
    return "wmma", (f"notice: the wgmma GEMM needs K and N (and M for a column-major a) multiples of "
                    f"{ALIGN_ELEMENTS} and {ALIGN_BYTES}-byte aligned arrays (TMA); {extents}: running the WMMA kernel")


def _finite(argument: str, value) -> None:
    if type(value) is float and value - value == 0.0:   # the common case: x - x == 0 only for finite floats
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise GemmArgumentError(argument, f"must be a finite number, got {value!r}")


def _check_operand(x, argument: str, column_major_too: bool = False):
    """(shape, dtype name, order, leading dimension) of a or b: a 2-D array, row-major (or column-major)
    with a leading dimension (`matrix_layout`); empty dimensions are allowed (the caller answers them)."""
    try:
        shape, strides, itemsize = tuple(x.shape), x.strides, x.dtype.itemsize
    except AttributeError:
        raise GemmArgumentError(argument, f"must be a CuPy array, got {type(x).__name__}") from None
    if len(shape) != 2:
        raise GemmArgumentError(argument, f"must be 2-D, got shape {shape}")
    order, ld = matrix_layout(shape, strides, itemsize, argument, "CF" if column_major_too else "C")
    return shape, _dtype_name(x), order, ld


def _bias_dtype(bias, bias_mode: str, dtype: str, input_dtype: Optional[str]) -> str:
    """The bias' element type (GemmPlan.bias_dtype): float32, or for a per-column bias with 16-bit inputs their own
    type (float16, bfloat16, or uint16 bits with input_dtype='bf16'): nn.Linear's bias as it is."""
    name = _dtype_name(bias)
    code = _INPUT_DTYPES.get(name) or ("bf16" if input_dtype == "bf16" and name == _BF16_BITS else None)
    if code is not None:
        try:
            return check_bias_dtype(code, bias_mode, dtype)   # the one rule (gemm/epilogue.py)
        except ValueError:
            pass
    also = (f" or the inputs' own {'float16' if dtype == 'f16' else 'bfloat16'}"
            if dtype in ("f16", "bf16") and bias_mode == "per_n" else "")
    raise GemmArgumentError("bias", f"has dtype {name}; expected float32{also}")


SCALE_MODES = ("none", "rowwise", "block")   # check_scales' answers
SCALE_BLOCK = 128                             # block scales: 1 x 128 of A, 128 x 128 of B (DeepGEMM's recipe)


def check_scales(scale_a, scale_b, dtype: str, m: int, n: int, k: int) -> str:
    """e4m3's scale factors, given together as float32 arrays, read by their shapes ('none' when not given):
    'rowwise': scale_a (M,) per row of A and scale_b (N,) per column of B (or (M, 1) and (1, N), as
    torch._scaled_mm takes them), dense; the product is multiplied by scale_a[m] * scale_b[n] before alpha, C, the
    bias and the activation.
    'block' (DeepGEMM's recipe): scale_a (M, ceil(K / 128)) per row of A and 128-deep block of K, at any strides
    (row-major, or M-major as DeepGEMM keeps it), and scale_b (ceil(N / 128), ceil(K / 128)) row-major per 128 x 128
    block of B (N x K); each 128-deep K-block's product is multiplied by scale_a[m, kb] * scale_b[n // 128, kb]."""
    if scale_a is None and scale_b is None:
        return "none"
    if scale_a is None or scale_b is None:
        raise GemmArgumentError("scale_a" if scale_a is None else "scale_b",
                                "scale_a and scale_b come together (rowwise: (M,) and (N,); block: (M, ceil(K/128)) "
                                "and (ceil(N/128), ceil(K/128)))")
    if dtype != "e4m3":
        raise GemmArgumentError("scale_a", f"scales are for e4m3 inputs; {dtype} takes a scale in alpha")
    k_blocks, n_blocks = -(-k // SCALE_BLOCK), -(-n // SCALE_BLOCK)
    a_shape, b_shape = (tuple(getattr(x, "shape", ())) for x in (scale_a, scale_b))
    block_a, block_b = a_shape == (m, k_blocks), b_shape == (n_blocks, k_blocks)
    row_a, row_b = a_shape in ((m,), (m, 1)), b_shape in ((n,), (1, n))
    # (the two readings never share a pair of shapes: that would need N = 1, below e4m3's 16-byte rows)
    if not (block_a and block_b) and not (row_a and row_b):
        # blame the one that fits neither reading the other one allows
        wrong = "scale_b" if (block_a and not row_a) or (row_a and not block_a) else "scale_a"
        shape = b_shape if wrong == "scale_b" else a_shape
        raise GemmArgumentError(wrong, f"has shape {shape}; expected rowwise scales (M,) = ({m},) and (N,) = ({n},), "
                                       f"or block scales (M, ceil(K/128)) = ({m}, {k_blocks}) and (ceil(N/128), "
                                       f"ceil(K/128)) = ({n_blocks}, {k_blocks})")
    if block_a and block_b:
        check_matrix(scale_b, "scale_b", b_shape)
        if _dtype_name(scale_a) != "float32":
            raise GemmArgumentError("scale_a", f"has dtype {_dtype_name(scale_a)}; expected float32")
        if any(st < 0 or st % 4 or st // 4 >= 2 ** 31 for st in scale_a.strides):
            raise GemmArgumentError("scale_a", f"has strides of {tuple(scale_a.strides)} bytes; the kernel reads it "
                                               f"at non-negative whole-element strides below 2^31")
        return "block"
    for x, name, shape in ((scale_a, "scale_a", a_shape), (scale_b, "scale_b", b_shape)):
        check_matrix(x, name, shape)
        if x.data.ptr % 8:   # read as float2 pairs
            raise GemmArgumentError(name, "must start 8-byte aligned (a fresh array is)")
    return "rowwise"


def validate_gemm_args(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none",
                       alpha: float = 1.0, beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False,
                       out=None, kernel: str = "auto", input_dtype: Optional[str] = None,
                       out_dtype=None, z_out=None) -> GemmPlan:
    """Check every argument; return the resolved plan or raise GemmArgumentError naming the culprit.
    out_dtype: see `resolve_out_dtype`; z_out (read only with save_z): an (M, N) float32 array for Z."""
    requested = kernel
    if kernel not in KERNELS:
        raise GemmArgumentError("kernel", f"{kernel!r} is not valid: choose one of {', '.join(KERNELS)}")
    if act not in ACT_KINDS:
        raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")
    if input_dtype is not None and input_dtype not in INPUT_DTYPE_CODES:
        raise GemmArgumentError("input_dtype", f"{input_dtype!r} is not valid: None (from a's dtype), 'bf16' (uint16 "
                                               f"bits) or 'e4m3' (uint8 bits)")
    _finite("alpha", alpha)
    _finite("beta", beta)
    _finite("leaky_slope", leaky_slope)
    (m, k), a_name, a_order, lda = _check_operand(a, "a", column_major_too=True)
    (k_b, n), b_name, b_order, ldb = _check_operand(b, "b", column_major_too=True)
    if k_b != k:
        raise GemmArgumentError("b", f"shape {tuple(b.shape)} does not chain with a {tuple(a.shape)}: "
                                     f"b needs {k} rows")
    dtype = _input_dtype(a_name, "a", input_dtype)
    if _input_dtype(b_name, "b", input_dtype) != dtype:
        raise GemmArgumentError("b", f"dtype {b_name} differs from a's {a_name}")
    if dtype == "e4m3":
        if kernel not in ("auto", "wgmma"):
            raise GemmArgumentError("kernel", f"{kernel!r} does not take e4m3 inputs: use 'wgmma' or 'auto'")
        kernel = "wgmma"
        if b_order != "F" and not (n == 1 or k == 1):
            raise GemmArgumentError("b", "e4m3 operands are K-major only: pass b column-major (w.T of a row-major "
                                         "N x K array w)")
        if a_order != "C":
            raise GemmArgumentError("a", "e4m3 operands are K-major only (wgmma has no transpose for 8-bit types): "
                                         "a is column-major (e.g. x.t()); pass a row-major a: a.contiguous() in "
                                         "torch, cupy.ascontiguousarray(a) in CuPy")
    elif kernel == "auto":
        kernel = "simt" if dtype == "f32" else "wmma"
    elif dtype == "f32" and kernel != "simt":
        raise GemmArgumentError("a", f"kernel {kernel!r} takes float16 or bfloat16 inputs; use kernel='simt' for float32")
    elif kernel == "simt" and dtype != "f32":
        raise GemmArgumentError("a", "kernel 'simt' takes float32 inputs; use kernel='wmma', 'wgmma' or 'auto' for "
                                     "float16/bfloat16")

    if bias_mode is None:
        bias_mode = "none" if bias is None else ("per_n" if len(getattr(bias, "shape", ())) == 1 else "full")
    if bias_mode not in BIAS_MODES:
        raise GemmArgumentError("bias_mode", f"{bias_mode!r} is not valid: choose one of {', '.join(BIAS_MODES)}")
    ldbias, bias_dtype = 0, "f32"
    if bias_mode == "none":
        if bias is not None:
            raise GemmArgumentError("bias", "given, but bias_mode is 'none': pass bias_mode='per_m', 'per_n' or 'full'")
    else:
        shape = bias_shape(bias_mode, m, n)
        if bias is None:
            raise GemmArgumentError("bias", f"bias_mode {bias_mode!r} needs a float32 bias of shape {shape}")
        bias_dtype = _bias_dtype(bias, bias_mode, dtype, input_dtype)
        ldbias = check_matrix(bias, "bias", shape, dtype=None, leading_dimension=True)

    if beta != 0 and c is None:
        raise GemmArgumentError("c", f"beta={beta} needs c (an (M, N) = {(m, n)} float32 array)")
    ldc = 0
    if c is not None:
        ldc = check_matrix(c, "c", (m, n), leading_dimension=True)
    ldd = 0
    if out is not None:
        ldd = check_matrix(out, "out", (m, n), dtype=None, leading_dimension=True)
        for name, other in (("a", a), ("b", b), ("bias", bias)):
            if other is not None and other is out:
                raise GemmArgumentError("out", f"must not be the same array as {name}")
    ldz = 0
    if save_z and z_out is not None:
        ldz = check_matrix(z_out, "z_out", (m, n), leading_dimension=True)
        if z_out is out:
            raise GemmArgumentError("z_out", "must not be the same array as out")
    out_code = "f32" if out_dtype is None and out is None else resolve_out_dtype(out_dtype, out, input_dtype)
    if dtype == "e4m3":
        b_order = "F"   # (K, 1) and (1, N) are both
    if (lda or ldb) and requested == "wmma":
        raise GemmArgumentError("kernel", f"{STRIDED_NEEDS}; kernel 'wmma' reads a and b dense: {COPY_FIX}")
    has_c = c is not None and beta != 0
    return _plan(kernel, dtype, m, n, k, act, bias_mode, has_c, bool(save_z), out_code, b_order, lda, ldb, ldd,
                 ldc if has_c else 0, ldbias, ldz if save_z else 0, a_order, bias_dtype)
