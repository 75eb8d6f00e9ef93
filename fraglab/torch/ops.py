"""torch.ops.fraglab.gemm: fraglab's fused GEMM as a registered torch operator, so torch.compile traces it
(a fake function gives D's and Z's shapes and types), CUDA graphs capture it, and autograd differentiates it.

    fraglab::gemm(Tensor a, Tensor b, Tensor? c, Tensor? bias, str bias_mode, str act, float alpha, float beta,
                  float leaky_slope, bool save_z, ScalarType? out_dtype) -> (Tensor D, Tensor Z)

D = act(alpha * a @ b + beta * c + bias) as fraglab.gemm computes it; Z is the pre-activation (float32) with
save_z, else an empty (0,) float32 tensor (an operator has a fixed number of outputs).

CUDA tensors run fraglab's kernels (gemm/torch_road.py, else fraglab.gemm's CuPy road). CPU tensors run a
float64 reference written with torch's operators (float64 inputs too, which no kernel takes): it is what
torch.library.opcheck and the float64 gradient checks exercise on a machine without a GPU.

Backward: dPre = dD * act'(Z) (+ dZ), da = alpha dPre b^T, db = alpha a^T dPre, dc = beta dPre, dbias = dPre
summed over the bias' broadcast dimension; the two products are fraglab::gemm calls themselves (16-bit on the
GPU: dPre is rounded to a's type, as torch's autocast would). Z is saved by the forward when asked (save_z); else
the backward recomputes it with one more GEMM.
"""

from __future__ import annotations

import math
from typing import Optional

import torch

try:
    from torch.utils._python_dispatch import _get_current_dispatch_mode
except ImportError:   # a torch without it: every call goes through the operator
    _get_current_dispatch_mode = None

from ..gemm.epilogue import ACT_KINDS, BIAS_MODES, bias_shape
from ..gemm.torch_road import activation
from ..gemm.validate import GemmArgumentError

_OUT_CODES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_INPUT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def check_op_args(a, b, c, bias, bias_mode: str, act: str, out_dtype) -> tuple:
    """(M, N, D's dtype, Z's dtype) of a fraglab::gemm call, or GemmArgumentError naming the argument. float64
    inputs are the CPU reference's alone (their D and Z are float64)."""
    if a.dim() != 2 or b.dim() != 2:
        bad = "a" if a.dim() != 2 else "b"
        raise GemmArgumentError(bad, f"must be 2-D, got shape {tuple((a if bad == 'a' else b).shape)}")
    m, k = a.shape
    k_b, n = b.shape
    if k_b != k:
        raise GemmArgumentError("b", f"shape {tuple(b.shape)} does not chain with a {tuple(a.shape)}: b needs {k} rows")
    if a.dtype != b.dtype:
        raise GemmArgumentError("b", f"dtype {b.dtype} differs from a's {a.dtype}")
    wide = a.dtype == torch.float64
    if not wide and a.dtype not in _INPUT_DTYPES:
        raise GemmArgumentError("a", f"dtype {a.dtype} is not supported: valid are torch.float16, torch.bfloat16, "
                                     "torch.float32 (and float64 on the CPU reference)")
    if wide and a.device.type != "cpu":
        raise GemmArgumentError("a", "float64 runs on the CPU reference only: pass float16, bfloat16 or float32")
    if act not in ACT_KINDS:
        raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")
    if bias_mode not in BIAS_MODES:
        raise GemmArgumentError("bias_mode", f"{bias_mode!r} is not valid: choose one of {', '.join(BIAS_MODES)}")
    shape = bias_shape(bias_mode, m, n)
    if (shape is None) != (bias is None):
        raise GemmArgumentError("bias", f"bias_mode {bias_mode!r} needs " +
                                        (f"a bias of shape {shape}" if shape is not None else "no bias"))
    if shape is not None and tuple(bias.shape) != shape:
        raise GemmArgumentError("bias", f"has shape {tuple(bias.shape)}; bias_mode {bias_mode!r} needs {shape}")
    if c is not None and tuple(c.shape) != (m, n):
        raise GemmArgumentError("c", f"has shape {tuple(c.shape)}; expected {(m, n)}")
    if out_dtype is None:
        d_dtype = torch.float64 if wide else torch.float32
    elif out_dtype in _OUT_CODES or (wide and out_dtype == torch.float64):
        d_dtype = out_dtype
    else:
        raise GemmArgumentError("out_dtype", f"{out_dtype} is not valid: choose torch.float32, torch.float16 or "
                                             "torch.bfloat16")
    return m, n, d_dtype, torch.float64 if wide else torch.float32


@torch.library.custom_op("fraglab::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor, c: Optional[torch.Tensor], bias: Optional[torch.Tensor],
         bias_mode: str, act: str, alpha: float, beta: float, leaky_slope: float, save_z: bool,
         out_dtype: Optional[torch.dtype]) -> tuple[torch.Tensor, torch.Tensor]:
    m, n, d_dtype, z_dtype = check_op_args(a, b, c, bias, bias_mode, act, out_dtype)
    if a.device.type == "cpu":
        return _reference(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, d_dtype, z_dtype)
    result = _on_gpu(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, _OUT_CODES[d_dtype])
    if save_z:
        return result
    return result, torch.empty((0,), dtype=torch.float32, device=a.device)


def _on_gpu(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out_code: str):
    """fraglab.gemm on CUDA tensors (gemm/torch_road.py), D of type out_code: D, or (D, Z) with save_z."""
    from ..gemm import api

    return api.gemm(a, b, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                    leaky_slope=leaky_slope, save_z=save_z, out_dtype=out_code)


_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)


def untracked(tensors) -> bool:
    """Whether nothing but the kernel would see an operator call on `tensors`: eager (neither torch.compile nor
    torch.jit.trace recording), torch's own tensor types (no subclass, no dispatch mode active), and nothing for
    autograd to record."""
    if torch.compiler.is_compiling() or torch.jit.is_tracing():
        return False
    if any(type(t) not in _PLAIN_TENSORS for t in tensors):
        return False
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return False
    return _get_current_dispatch_mode is not None and _get_current_dispatch_mode() is None


def run(a, b, c, bias, bias_mode: str, act: str, alpha: float, beta: float, leaky_slope: float, save_z: bool,
        out_dtype) -> tuple:
    """(D, Z or None) of torch.ops.fraglab.gemm. An eager call on CUDA tensors that autograd does not record goes
    straight to the kernel's road (whose validation names a bad argument as the operator's checks do): the
    operator's dispatch (the autograd wrapper, dynamo's guard, the alias check) costs about 40 us a call, twice what
    the rest of a small GEMM's call costs (benchmarks/torch_call_cost.py). Everything else (compiling, gradients,
    CPU tensors, subclasses, dispatch modes) goes through the operator."""
    tensors = [t for t in (a, b, c, bias) if t is not None]
    out_code = _OUT_CODES.get(torch.float32 if out_dtype is None else out_dtype)
    if out_code is not None and isinstance(a, torch.Tensor) and a.is_cuda and untracked(tensors):
        # the rest of check_op_args is the road's validation, done once per signature (gemm/validate.py)
        result = _on_gpu(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out_code)
        return result if save_z else (result, None)
    d, z = torch.ops.fraglab.gemm(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out_dtype)
    return d, (z if save_z else None)


@gemm.register_fake
def _gemm_fake(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out_dtype):
    m, n, d_dtype, z_dtype = check_op_args(a, b, c, bias, bias_mode, act, out_dtype)
    return a.new_empty((m, n), dtype=d_dtype), a.new_empty((m, n) if save_z else (0,), dtype=z_dtype)


def _reference(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, d_dtype, z_dtype):
    """The CPU twin in float64: pre = alpha a @ b (+ beta c) (+ bias); D = act(pre)."""
    pre = alpha * (a.double() @ b.double())
    if c is not None and beta != 0:
        pre = pre + beta * c.double()
    if bias is not None:
        pre = pre + (bias.double()[:, None] if bias_mode == "per_m" else bias.double())
    d = activation(torch, pre, act, leaky_slope).to(d_dtype, copy=True)   # outputs never alias (act none)
    z = pre.to(z_dtype, copy=True) if save_z else torch.empty((0,), dtype=z_dtype)
    return d, z


# ---------------------------------------------------------------------------------------------
# Autograd

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def activation_derivative(z, act: str, leaky_slope: float = 0.01):
    """act'(z) elementwise (what torch's own autograd of the activation gives; relu' and leaky_relu' take the
    right-hand value 0 / slope at 0, as torch does)."""
    if act == "none":
        return torch.ones_like(z)
    if act == "relu":
        return (z > 0).to(z.dtype)
    if act == "leaky_relu":
        return torch.where(z > 0, torch.ones_like(z), torch.full_like(z, leaky_slope))
    if act == "gelu":
        return 0.5 * (1.0 + torch.erf(z * (1.0 / math.sqrt(2.0)))) + z * torch.exp(-0.5 * z * z) / math.sqrt(
            2.0 * math.pi)
    if act == "gelu_tanh":
        u = _SQRT_2_OVER_PI * (z + 0.044715 * z ** 3)
        t = torch.tanh(u)
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _SQRT_2_OVER_PI * (1.0 + 3 * 0.044715 * z * z)
    if act == "silu":
        s = torch.sigmoid(z)
        return s * (1.0 + z * (1.0 - s))
    if act == "sigmoid":
        s = torch.sigmoid(z)
        return s * (1.0 - s)
    if act == "tanh":
        t = torch.tanh(z)
        return 1.0 - t * t
    raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")


def _setup_context(ctx, inputs, output):
    a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out_dtype = inputs
    ctx.bias_mode, ctx.act, ctx.alpha, ctx.beta, ctx.leaky_slope, ctx.save_z = (bias_mode, act, alpha, beta,
                                                                               leaky_slope, save_z)
    ctx.has_c, ctx.has_bias = c is not None, bias is not None
    z = output[1] if save_z else None
    ctx.save_for_backward(a, b, c, bias, z)


def _product(x, y, alpha: float, dtype):
    """alpha * x @ y through fraglab::gemm (no epilogue)."""
    return torch.ops.fraglab.gemm(x, y, None, None, "none", "none", alpha, 0.0, 0.01, False, dtype)[0]


def _backward(ctx, grad_d, grad_z):
    a, b, c, bias, z = ctx.saved_tensors
    wide = a.dtype == torch.float64
    grad_d = grad_d.to(torch.float64 if wide else torch.float32)
    if ctx.act == "none":
        grad_pre = grad_d
    else:
        if z is None:   # not saved by the forward: one GEMM to have it again
            z = torch.ops.fraglab.gemm(a, b, c, bias, ctx.bias_mode, "none", ctx.alpha, ctx.beta, ctx.leaky_slope,
                                       False, torch.float64 if wide else torch.float32)[0]
        grad_pre = grad_d * activation_derivative(z.to(grad_d.dtype), ctx.act, ctx.leaky_slope)
    if ctx.save_z and grad_z is not None and grad_z.numel():
        grad_pre = grad_pre + grad_z.to(grad_pre.dtype)
    operand = grad_pre.to(a.dtype)   # the GEMMs' input type (16-bit on the GPU)
    grad_a = grad_b = grad_c = grad_bias = None
    if ctx.needs_input_grad[0]:
        grad_a = _product(operand, b.t(), ctx.alpha, a.dtype)
    if ctx.needs_input_grad[1]:
        if b.stride(0) == 1 and b.stride(1) != 1:   # b is a column-major view (w.t()): its gradient likewise
            grad_b = _product(operand.t().contiguous(), a, ctx.alpha, b.dtype).t()
        else:
            grad_b = _product(a.t().contiguous(), operand, ctx.alpha, b.dtype)
    if ctx.has_c and ctx.needs_input_grad[2]:
        grad_c = (ctx.beta * grad_pre).to(c.dtype)
    if ctx.has_bias and ctx.needs_input_grad[3]:
        summed = {"per_n": lambda g: g.sum(0), "per_m": lambda g: g.sum(1), "full": lambda g: g}[ctx.bias_mode]
        grad_bias = summed(grad_pre).to(bias.dtype)
    return grad_a, grad_b, grad_c, grad_bias, None, None, None, None, None, None, None


torch.library.register_autograd("fraglab::gemm", _backward, setup_context=_setup_context)


__all__ = ["gemm", "run", "untracked", "check_op_args", "activation_derivative"]
