"""fraglab.torch.linear and fraglab.torch.Linear: torch.nn.functional.linear and torch.nn.Linear with the
activation fused into fraglab's GEMM epilogue, differentiable (torch.ops.fraglab.gemm's autograd, ops.py).

    y = act(x @ weight.T + bias)

The weight is read as it is (weight.T is the column-major, K-major B the wgmma kernel takes), and so is a bias of
x's own type or float32 (the epilogue widens a 16-bit bias as it reads it; a bias of another type is converted to
float32 first); y has x's type. The forward saves the pre-activation (the
epilogue's Z) where the activation needs it for the backward.
"""

from __future__ import annotations

from typing import Optional

import torch

from ..gemm.epilogue import ACT_KINDS
from ..gemm.validate import GemmArgumentError
from . import ops   # registers torch.ops.fraglab.gemm


def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None, act: str = "none",
           leaky_slope: float = 0.01) -> torch.Tensor:
    """act(x @ weight.T + bias): x (..., in_features), weight (out_features, in_features), bias (out_features,)
    or None; Parameters welcome (requires_grad: the result is differentiable)."""
    if act not in ACT_KINDS:
        raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")
    if weight.dim() != 2:
        raise GemmArgumentError("weight", f"must be 2-D (out_features, in_features), got shape {tuple(weight.shape)}")
    if x.dim() < 1 or x.shape[-1] != weight.shape[1]:
        raise GemmArgumentError("x", f"has shape {tuple(x.shape)}; its last dimension must be in_features = "
                                     f"{weight.shape[1]}")
    rows = x if x.dim() == 2 else x.reshape(-1, x.shape[-1])
    if bias is not None and bias.dtype not in (rows.dtype, torch.float32) and rows.dtype != torch.float64:
        bias = bias.float()
    # Z only where a backward will want it: act' needs the pre-activation
    save_z = act != "none" and torch.is_grad_enabled() and (
        x.requires_grad or weight.requires_grad or (bias is not None and bias.requires_grad))
    d, _ = ops.run(rows, weight.t(), None, bias, "none" if bias is None else "per_n", act, 1.0, 0.0, leaky_slope,
                   save_z, rows.dtype)
    return d if x.dim() == 2 else d.reshape(*x.shape[:-1], weight.shape[0])


class Linear(torch.nn.Linear):
    """torch.nn.Linear(in_features, out_features, bias=True, device=None, dtype=None) plus `act` (and
    `leaky_slope`): the same parameters and initialisation, the forward through fraglab.torch.linear."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 act: str = "none", leaky_slope: float = 0.01):
        if act not in ACT_KINDS:
            raise GemmArgumentError("act", f"{act!r} is not valid: choose one of {', '.join(ACT_KINDS)}")
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.act, self.leaky_slope = act, leaky_slope

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return linear(input, self.weight, self.bias, self.act, self.leaky_slope)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, act={self.act}"


__all__ = ["linear", "Linear"]
