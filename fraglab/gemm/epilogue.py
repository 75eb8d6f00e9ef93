"""The epilogue vocabulary, said once: activation kinds, bias modes, their C++ names and the bias shape rule.

    pre = alpha * (A @ B) (+ beta * C) (+ bias);   Z = pre;   D = act(pre)
    (scaled fp8: A @ B is first scaled by scale_a[m] * scale_b[n], the rowwise recipe; block-scaled fp8: each
    128-deep K-block's product by scale_a[m, kb] * scale_b[n // 128, kb], DeepGEMM's recipe)

The policy itself is gemm/epilogue.cuh (`fraglab::Epilogue<Act, Bias, HasC, SaveZ, ..., BiasT>`); the numpy twin is
gemm/reference.py. A new activation: its C++ in epilogue.cuh, its name here, its formula in reference.py.
"""

from __future__ import annotations

from typing import Optional

from ..errors import check_choice

ACT_KINDS = ("none", "relu", "leaky_relu", "gelu", "gelu_tanh", "silu", "sigmoid", "tanh")
BIAS_MODES = ("none", "per_m", "per_n", "full")

_ACT_CPP = dict(zip(ACT_KINDS, ("None", "ReLU", "LeakyReLU", "GELU", "GELUTanh", "SiLU", "Sigmoid", "Tanh")))
_BIAS_CPP = dict(zip(BIAS_MODES, ("None", "PerM", "PerN", "Full")))


def act_cpp(act: str) -> str:
    """'relu' -> 'fraglab::ActKind::ReLU'."""
    return "fraglab::ActKind::" + _ACT_CPP[check_choice(act, ACT_KINDS, "act")]


def bias_cpp(mode: str) -> str:
    """'per_n' -> 'fraglab::BiasMode::PerN'."""
    return "fraglab::BiasMode::" + _BIAS_CPP[check_choice(mode, BIAS_MODES, "bias_mode")]


BIAS_DTYPES = ("f32", "f16", "bf16")   # a bias' element type in memory (16-bit: per column, the wgmma / skinny GEMMs)
_BIAS_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}


def epilogue_cpp(act: str, bias_mode: str, has_c: bool, save_z: bool, row_col_scale: bool = False,
                 block_scale: bool = False, bias_dtype: str = "f32") -> str:
    """The C++ type of the policy, e.g. 'fraglab::Epilogue<fraglab::ActKind::ReLU, fraglab::BiasMode::PerN, false, false>'
    (a fifth argument, true, where the accumulator is scaled per row of A and per column of B first; a sixth, true,
    where the kernel scales each K-block by block scales of A and B; a seventh, the bias' 16-bit element type, where
    the bias is not float32)."""
    if row_col_scale and block_scale:
        raise ValueError("one scaling recipe at a time: row and column scales, or block scales")
    check_choice(bias_dtype, BIAS_DTYPES, "bias_dtype")
    if bias_dtype != "f32":
        scales = (f", {'true' if row_col_scale else 'false'}, {'true' if block_scale else 'false'}, "
                  f"{_BIAS_CPP_TYPE[bias_dtype]}")
    else:
        scales = ", true" if row_col_scale else ", false, true" if block_scale else ""
    return (f"fraglab::Epilogue<{act_cpp(act)}, {bias_cpp(bias_mode)}, "
            f"{'true' if has_c else 'false'}, {'true' if save_z else 'false'}{scales}>")


def check_bias_dtype(bias_dtype: str, bias_mode: str, dtype: str) -> str:
    """The one rule for a bias' element type: float32, or a per-column bias of the inputs' own 16-bit type (nn.Linear's
    bias as it is; the wgmma and skinny GEMMs read it, the other kernels take a float32 copy)."""
    check_choice(bias_dtype, BIAS_DTYPES, "bias_dtype")
    if bias_dtype != "f32" and (bias_mode != "per_n" or bias_dtype != dtype):
        raise ValueError(f"a {bias_dtype} bias is read per column (bias_mode 'per_n') with {bias_dtype} inputs; "
                         f"bias_mode {bias_mode!r} with {dtype} inputs takes a float32 bias")
    return bias_dtype


def bias_shape(bias_mode: str, m: int, n: int) -> Optional[tuple[int, ...]]:
    """Shape the bias must have: (M,) per_m, (N,) per_n, (M, N) full, None for none."""
    if bias_mode == "per_n":   # branches, not a dict built per call: every fraglab.gemm call asks
        return (n,)
    if bias_mode == "per_m":
        return (m,)
    if bias_mode == "full":
        return (m, n)
    check_choice(bias_mode, BIAS_MODES, "bias_mode")
    return None
