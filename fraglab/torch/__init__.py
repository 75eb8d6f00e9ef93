"""fraglab for PyTorch users (needs torch: `pip install fraglab[torch]`).

- `fraglab.torch.gemm(a, b, ...)`: torch.ops.fraglab.gemm, the registered operator (torch.compile traces it,
  CUDA graphs capture it, autograd differentiates it); returns D, or (D, Z) with save_z. An eager call that
  autograd does not record skips the operator's dispatch (ops.run): same kernel, under half the host time.
- `fraglab.torch.linear(x, weight, bias=None, act=...)` and `fraglab.torch.Linear` (torch.nn.Linear plus act).

`import fraglab` never imports torch; this package does, and registers the operator on import.
"""

from __future__ import annotations

from typing import Optional

try:
    import torch
except ImportError as exc:   # one line naming the fix, not a traceback from deep inside
    raise ImportError("fraglab.torch needs PyTorch: pip install fraglab[torch] (or torch itself)") from exc

from .nn import Linear, linear
from . import ops
from .ops import activation_derivative, check_op_args


def gemm(a, b, *, c=None, bias=None, bias_mode: Optional[str] = None, act: str = "none", alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, save_z: bool = False, out_dtype=None):
    """fraglab.gemm through the registered operator: D, or (D, Z) with save_z. bias_mode None follows the bias
    (none, per_n for 1-D, full for 2-D); out_dtype a torch dtype (default float32)."""
    if bias_mode is None:
        bias_mode = "none" if bias is None else ("per_n" if bias.dim() == 1 else "full")
    d, z = ops.run(a, b, c, bias, bias_mode, act, float(alpha), float(beta), float(leaky_slope), bool(save_z),
                   out_dtype)
    return (d, z) if save_z else d


__all__ = ["gemm", "linear", "Linear", "activation_derivative", "check_op_args"]
