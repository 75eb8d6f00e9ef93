"""The epilogue vocabulary, said once: activation kinds, bias modes, their C++ names and the bias shape rule.

    pre = alpha * (A @ B) (+ beta * C) (+ bias);   Z = pre;   D = act(pre)
    (scaled fp8: A @ B is first scaled by scale_a[m] * scale_b[n], the rowwise recipe; block-scaled fp8: each
    128-deep K-block's product by scale_a[m, kb] * scale_b[n // 128, kb], DeepGEMM's recipe)

The policy itself is gemm/epilogue.cuh (`fraglab::Epilogue<Act, Bias, HasC, SaveZ>`); the numpy twin is
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


def epilogue_cpp(act: str, bias_mode: str, has_c: bool, save_z: bool, row_col_scale: bool = False,
                 block_scale: bool = False) -> str:
    """The C++ type of the policy, e.g. 'fraglab::Epilogue<fraglab::ActKind::ReLU, fraglab::BiasMode::PerN, false, false>'
    (a fifth argument, true, where the accumulator is scaled per row of A and per column of B first; a sixth, true,
    where the kernel scales each K-block by block scales of A and B)."""
    if row_col_scale and block_scale:
        raise ValueError("one scaling recipe at a time: row and column scales, or block scales")
    scales = ", true" if row_col_scale else ", false, true" if block_scale else ""
    return (f"fraglab::Epilogue<{act_cpp(act)}, {bias_cpp(bias_mode)}, "
            f"{'true' if has_c else 'false'}, {'true' if save_z else 'false'}{scales}>")


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
