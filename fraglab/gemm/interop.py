"""Device arrays into `fraglab.gemm` and results back out, without copies.

CuPy arrays pass as they are; torch CUDA tensors, objects with `__cuda_array_interface__` and DLPack objects on a
CUDA device are viewed as CuPy arrays (`cupy.from_dlpack` / `cupy.asarray`); host arrays (numpy, CPU tensors)
are refused by name. D and Z go back as torch tensors when A was one (`torch.from_dlpack`). A bf16 tensor that
this CuPy cannot hold (no bfloat16 dtype) is viewed as uint16 bit patterns, the way bf16 travels in fraglab.
Nothing here runs on the `prepare(...)()` path; `fraglab.gemm` reaches it only for arrays that are not CuPy's.

torch tensors that the wgmma kernel takes go another way, without DLPack or CuPy arrays (torch_road.py).
"""

from __future__ import annotations

import sys

from .cast import bf16_dtype
from .validate import GemmArgumentError

_DLPACK_CUDA = (2, 13)   # kDLCUDA, kDLCUDAManaged: memory the kernels can address
_DLPACK_HOST = {1: "host memory", 3: "pinned host memory"}   # kDLCPU, kDLCUDAHost
DEVICE_ARRAYS = ("a CuPy array, a CUDA torch tensor, or an object with __cuda_array_interface__ or __dlpack__ "
                 "on a CUDA device")


def is_torch(x) -> bool:
    """A torch tensor (without importing torch)."""
    return type(x).__module__.split(".", 1)[0] == "torch" and hasattr(x, "is_cuda") and hasattr(x, "data_ptr")


def _torch():
    return sys.modules["torch"]   # imported: a tensor of it is in hand


def _kind(x) -> str:
    return f"{type(x).__module__}.{type(x).__name__}"


def _host_error(argument: str, x, where: str = "host memory") -> GemmArgumentError:
    return GemmArgumentError(argument, f"is a {_kind(x)} in {where}, not on the GPU: pass {DEVICE_ARRAYS} "
                                       "(e.g. cupy.asarray(x) or x.cuda())")


def _view(make, x, argument: str):
    try:
        return make()
    except Exception as exc:   # CuPy raises several types for an interface it cannot take
        raise GemmArgumentError(argument, f"({_kind(x)}) could not be viewed as a CuPy array without a copy: "
                                          f"{exc.__class__.__name__}: {exc}") from None


def to_cupy(cp, x, argument: str):
    """(x as a CuPy array sharing its memory, which bit patterns it holds: "bf16" (uint16), "e4m3" (uint8) or
    None); (None, None) for None. GemmArgumentError naming `argument` for host arrays and what is not an array."""
    if x is None or isinstance(x, cp.ndarray):
        return x, None
    if is_torch(x):
        if not x.is_cuda:
            raise _host_error(argument, x)
        torch = _torch()
        if getattr(x, "requires_grad", False):   # a Parameter: DLPack refuses it; the detached view shares memory
            x = x.detach()
        if x.dtype == torch.bfloat16:
            if bf16_dtype(cp) is not None:
                try:
                    return cp.from_dlpack(x), None
                except Exception:   # a CuPy with bfloat16 that DLPack still cannot carry it through: bits
                    pass
            return _view(lambda: cp.from_dlpack(x.view(torch.int16)).view(cp.uint16), x, argument), "bf16"
        if x.dtype == getattr(torch, "float8_e4m3fn", None):   # no 8-bit float in CuPy: its bytes
            return _view(lambda: cp.from_dlpack(x.view(torch.uint8)), x, argument), "e4m3"
        return _view(lambda: cp.from_dlpack(x), x, argument), None
    if hasattr(x, "__cuda_array_interface__"):
        return _view(lambda: cp.asarray(x), x, argument), None
    if hasattr(x, "__dlpack__"):
        try:
            device = int(x.__dlpack_device__()[0])
        except Exception:
            device = None   # no device query: let from_dlpack decide
        if device in _DLPACK_HOST:
            raise _host_error(argument, x, _DLPACK_HOST[device])
        if device is not None and device not in _DLPACK_CUDA:
            raise GemmArgumentError(argument, f"is a {_kind(x)} on DLPack device type {device}, not a CUDA GPU: "
                                              f"pass {DEVICE_ARRAYS}")
        return _view(lambda: cp.from_dlpack(x), x, argument), None
    if hasattr(x, "__array_interface__") or hasattr(x, "__array__"):
        raise _host_error(argument, x)
    raise GemmArgumentError(argument, f"must be {DEVICE_ARRAYS}, got {_kind(x)}")


def to_cupy_all(cp, named: dict) -> tuple[dict, set]:
    """to_cupy over {argument: array}; one object given twice (out=a) becomes one CuPy array, so identity checks
    still see it. Returns ({argument: CuPy array or None}, {argument: "bf16" | "e4m3" for those that hold bits})."""
    views: dict[int, object] = {}
    out, bits = {}, {}
    for argument, x in named.items():
        if x is not None and id(x) in views:
            view, kind = views[id(x)]
        else:
            view, kind = to_cupy(cp, x, argument)
            if x is not None:
                views[id(x)] = (view, kind)
        out[argument] = view
        if kind:
            bits[argument] = kind
    return out, bits


def to_torch(x):
    """A CuPy array as a torch tensor on the same memory; uint16 (bf16 bit patterns) comes back as bfloat16."""
    torch = _torch()
    if x.dtype.char == "H":
        return torch.from_dlpack(x.view("int16")).view(torch.bfloat16)
    try:
        return torch.from_dlpack(x)
    except Exception:
        if x.dtype.itemsize == 2 and x.dtype.kind != "f":   # CuPy's bfloat16, where DLPack cannot carry it
            return torch.from_dlpack(x.view("int16")).view(torch.bfloat16)
        raise


__all__ = ["DEVICE_ARRAYS", "is_torch", "to_cupy", "to_cupy_all", "to_torch"]
