"""torch CUDA tensors straight to the wgmma kernel: no DLPack, no CuPy arrays, D and Z from torch's allocator.

A call reads each tensor's shape, strides, dtype and device into a signature; the first call of a signature
validates it with gemm/validate.py's rules (the tensors seen through `TensorView`, as CuPy arrays are seen) and
plans it (`TorchRoad`); later calls of it only read the data pointers, allocate D (and Z) with `torch.empty`
on the current torch stream, and launch the road's own bound launch (gemm/wgmma.py `bind`, parameters packed
once; the addresses that differ from the last call's rewritten in place, `TorchRoad.launch_one_shot`) there with
one cuLaunchKernel (runtime/gpu.py `PackedLaunch.launch_on`).

What this road does not take (float32 inputs, another GPU than sm_90, operands TMA cannot describe, arrays that
are not all torch tensors) answers `None`, and fraglab.gemm takes the CuPy road (gemm/interop.py) as before.
M = 0 or N = 0 give an empty D; K = 0 gives act(beta * C + bias), as torch.addmm does.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..memo import BoundedMemo
from .epilogue import bias_shape
from .validate import GemmPlan, tensor_core_kernel, validate_gemm_args

# torch dtype name -> (the numpy dtype validate.py reads, the bit-pattern code it stands for)
_NUMPY_OF = {"float16": (np.dtype(np.float16), None), "bfloat16": (np.dtype(np.uint16), "bf16"),
             "float32": (np.dtype(np.float32), None), "float8_e4m3fn": (np.dtype(np.uint8), "e4m3")}
_OUT_TORCH = {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}


class TensorView:
    """What validate.py reads of a tensor: shape, byte strides and a numpy dtype (bf16 / e4m3 as their bits)."""

    __slots__ = ("shape", "strides", "dtype", "bits")

    def __init__(self, x):
        name = str(x.dtype).rpartition(".")[2]
        dtype, self.bits = _NUMPY_OF.get(name, (None, None))
        if dtype is None:   # an unsupported type: a stand-in whose name validate.py reports
            dtype = _NamedDtype(name, x.element_size())
        self.dtype = dtype
        self.shape = tuple(x.shape)
        self.strides = tuple(s * x.element_size() for s in x.stride())


class _NamedDtype:
    __slots__ = ("name", "itemsize")

    def __init__(self, name: str, itemsize: int):
        self.name, self.itemsize = name, itemsize


def torch_module():
    """torch, if it has been imported (fraglab never imports it for the user); None for a stand-in without
    tensors."""
    torch = sys.modules.get("torch")
    return torch if torch is not None and hasattr(torch, "Tensor") else None


class TorchRoad:
    """One signature's plan: the kernel spec, D's and Z's shapes and types, the row pitches and the grid; the
    launches bound per set of data pointers."""

    __slots__ = ("plan", "spec", "d_shape", "d_dtype", "device", "device_index", "save_z", "blocks", "alpha",
                 "beta", "leaky_slope", "launches", "empty", "moving", "moving_at", "movable", "lock")

    def __init__(self, torch, plan: GemmPlan, spec, device, alpha, beta, leaky_slope, blocks):
        self.plan, self.spec = plan, spec
        self.d_shape = (plan.m, plan.n)
        self.d_dtype = getattr(torch, _OUT_TORCH[plan.out_dtype])
        self.device, self.device_index = device, device.index
        self.save_z = plan.save_z
        self.alpha, self.beta, self.leaky_slope = float(alpha), float(beta), float(leaky_slope)
        self.blocks = blocks
        self.launches = BoundedMemo(self._bind, 64)   # (pa, pb, pd, pc, pbias, pz) -> PackedLaunch (prepare)
        self.empty = plan.m == 0 or plan.n == 0 or plan.k == 0
        self.moving = self.moving_at = None   # the one-shot calls' own launch and the addresses it holds now
        self.movable = _movable_parameters(spec)
        self.lock = threading.Lock()

    def launch_one_shot(self, pointers, handle: int) -> None:
        """A one-shot call's launch: one of the road's own, bound once, whose addresses follow each call's arrays
        (a tensor map moved with cuTensorMapReplaceAddress, a pointer rewritten), so a D, Z or A at a new address
        (kept alive by the caller, saved by autograd) costs no new binding. cuLaunchKernel copies the parameters
        before it returns; the lock keeps another thread from rewriting them meanwhile."""
        with self.lock:
            moving = self.moving
            if moving is None or self.movable is None:
                if self.movable is None:   # a kernel without the table (the skinny GEMM): bound per pointers
                    moving = self.launches[pointers]
                else:
                    moving = self.moving = self._bind(pointers, shared=False)
                    self.moving_at = pointers
            elif pointers != self.moving_at:
                held = self.moving_at
                for slot, index, is_map in self.movable:
                    if pointers[slot] != held[slot]:
                        if is_map:
                            moving.set_map_address(index, pointers[slot])
                        else:
                            moving.set_pointer(index, pointers[slot])
                self.moving_at = pointers
            moving.launch_on(handle)

    def _bind(self, pointers, shared: bool = True):
        from . import wgmma as gemm_wgmma

        pa, pb, pd, pc, pbias, pz = pointers
        plan = self.plan
        if not hasattr(self.spec, "tile_config"):   # the skinny GEMM (gemm/skinny.py)
            from .skinny import bind_plan
            return bind_plan(self.spec, plan, _Pointer(pa), _Pointer(pb), _Pointer(pd), _Pointer.of(pc),
                             _Pointer.of(pbias), _Pointer.of(pz), self.alpha, self.beta, self.leaky_slope)
        return gemm_wgmma.bind(self.spec, _Pointer(pa, (plan.m, plan.k)), _Pointer(pb, (plan.k, plan.n)),
                               _Pointer(pd, self.d_shape), c=_Pointer.of(pc), bias=_Pointer.of(pbias),
                               z=_Pointer.of(pz), alpha=self.alpha, beta=self.beta, leaky_slope=self.leaky_slope,
                               grid=self.blocks, lda=plan.lda, ldb=plan.ldb, ldd=plan.ldd, ldc=plan.ldc,
                               ldbias=plan.ldbias, ldz=plan.ldz, shared=shared)


def _movable_parameters(spec):
    """(index in the call's pointers (pa, pb, pd, pc, pbias, pz), parameter index, whether it is a tensor map) of
    every address a wgmma launch holds; None for another kernel (or none: an empty problem)."""
    if spec is None or not hasattr(spec, "tile_config"):
        return None
    from .wgmma import PARAM_INDEX, operand_map_index

    map_of_a, map_of_b = operand_map_index(spec)
    slots = [(0, map_of_a, True), (1, map_of_b, True), (2, PARAM_INDEX["d"], False),
             (3, PARAM_INDEX["c"], False), (4, PARAM_INDEX["bias"], False), (5, PARAM_INDEX["z"], False)]
    if spec.store == "tma":
        slots.append((2, PARAM_INDEX["map_d"], True))
    if spec.bias_mode in ("per_n", "per_m"):
        slots.append((4, PARAM_INDEX["map_bias"], True))
    return tuple(slots)


class _Pointer:
    """A device address with a shape: what wgmma.bind reads of an array."""

    __slots__ = ("ptr", "shape")

    def __init__(self, ptr: int, shape=()):
        self.ptr, self.shape = ptr, shape

    def data_ptr(self) -> int:
        return self.ptr

    @classmethod
    def of(cls, ptr: int):
        return cls(ptr) if ptr else None


_ROADS = BoundedMemo(lambda key: None, 512)   # signature -> TorchRoad, or False (not this road)
_RAW_STREAM = None


def current_stream(torch, device_index: int) -> int:
    """torch's current cudaStream_t on the device (torch.cuda.current_stream().cuda_stream, without making the
    Stream object where torch offers its raw getter)."""
    global _RAW_STREAM
    if _RAW_STREAM is None:
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _RAW_STREAM = raw if raw is not None else (lambda i: torch.cuda.current_stream(i).cuda_stream)
    return _RAW_STREAM(device_index)


def _signature(x):
    return None if x is None else (x.shape, x.stride(), x.dtype, x.get_device())


def torch_gemm(torch, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
               input_dtype, tile, stream, out_dtype, prepare_only: bool = False):
    """fraglab.gemm for torch CUDA tensors on the wgmma kernel; None where this road does not take the call (the
    caller takes the CuPy road). prepare_only: (road, d, z, launch(handle)) instead of launching."""
    tensor = torch.Tensor
    if not isinstance(b, tensor):
        return None
    others = None   # the signatures of C, the bias, out and Z's out (the common calls have few of them)
    if c is not None or bias is not None or out is not None or z_out is not None:
        for x in (c, bias, out, z_out):
            if x is not None and not isinstance(x, tensor):
                return None
        others = (_signature(c), _signature(bias), _signature(out), _signature(z_out))
    # a and b inline: this line is most of a call's own cost
    key = (a.shape, a.stride(), a.dtype, a.get_device(), b.shape, b.stride(), b.dtype, b.get_device(), others,
           bias_mode, act, alpha, beta, leaky_slope, save_z, kernel, input_dtype, tile, out_dtype)
    road = _ROADS.get(key)
    if road is None:
        road = _ROADS.remember(key, _plan_road(torch, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope,
                                               save_z, out, z_out, kernel, input_dtype, tile, out_dtype))
    if road is False:
        return None
    if out is not None and (out is a or out is b or out is bias or (save_z and z_out is out)):
        return None   # the CuPy road names the culprit (identity is checked there)
    plan = road.plan
    if stream is not None:
        return _on_stream(torch, stream, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out,
                          z_out, kernel, input_dtype, tile, None, out_dtype, prepare_only)
    d = out if out is not None else torch.empty(road.d_shape, dtype=road.d_dtype, device=road.device)
    z = None
    if road.save_z:
        z = z_out if z_out is not None else torch.empty(road.d_shape, dtype=torch.float32, device=road.device)
    if road.empty:
        launch = _edge_launch(torch, road, a, b, c, bias, d, z)
    else:
        pointers = (a.data_ptr(), b.data_ptr(), d.data_ptr(), c.data_ptr() if plan.has_c else 0,
                    bias.data_ptr() if bias is not None else 0, z.data_ptr() if z is not None else 0)
        if (pointers[0] | pointers[1] | pointers[2] | pointers[3] | pointers[4] | pointers[5]) & 15:
            # TMA needs 16-byte aligned addresses: the WMMA kernel (CuPy road), or one error for strided arrays
            tensor_core_kernel("auto", 90, plan.k, plan.n, pointers, plan.dtype, strided=plan.strided,
                               m=plan.m if plan.a_order == "F" else 0)
            return None
        if not prepare_only:
            road.launch_one_shot(pointers, _RAW_STREAM(road.device_index))   # set by the planning (current_stream)
            return (d, z) if road.save_z else d
        launch = road.launches[pointers].launch_on   # a prepared call keeps its own arrays
    if prepare_only:
        return road, d, z, launch
    launch(_RAW_STREAM(road.device_index))
    return (d, z) if road.save_z else d


def _on_stream(torch, stream, a, *args):
    """The call with D and Z allocated, and the kernel launched, on `stream` (validate.stream_handle's kinds):
    torch's current stream is made that stream for the call, so its allocator and the launch both use it."""
    from .api import _cupy_stream_types
    from .validate import stream_handle

    handle = stream_handle(stream, _cupy_stream_types())
    if not isinstance(handle, int):
        handle = handle.ptr   # a CuPy stream
    if handle == current_stream(torch, a.get_device()):
        return torch_gemm(torch, a, *args)
    with torch.cuda.stream(torch.cuda.ExternalStream(handle, device=a.device)):
        return torch_gemm(torch, a, *args)


def signature_plan(a, b, c=None, bias=None, bias_mode=None, act="none", alpha=1.0, beta=0.0, leaky_slope=0.01,
                   save_z=False, out=None, z_out=None, kernel="auto", input_dtype=None, out_dtype=None) -> GemmPlan:
    """gemm/validate.py's plan of torch tensors (any device: it reads shapes, strides and dtypes only); a
    GemmArgumentError names what no kernel takes."""
    tensors = {"a": a, "b": b, "c": c, "bias": bias, "out": out, "z_out": z_out}
    views = {name: TensorView(x) if x is not None else None for name, x in tensors.items()}
    for name, x in tensors.items():   # identity checks see one view per tensor
        for other in ("a", "b", "bias", "out"):
            if x is not None and other != name and tensors[other] is x:
                views[name] = views[other]
    bits = views["a"].bits or views["b"].bits
    if input_dtype is None and bits:
        input_dtype = bits
    if out_dtype is None and views["out"] is not None and views["out"].bits == "bf16":
        out_dtype = "bf16"
    return validate_gemm_args(views["a"], views["b"], c=views["c"], bias=views["bias"], bias_mode=bias_mode,
                              act=act, alpha=alpha, beta=beta, leaky_slope=leaky_slope, save_z=save_z,
                              out=views["out"], kernel=kernel, input_dtype=input_dtype, out_dtype=out_dtype,
                              z_out=views["z_out"])


def _plan_road(torch, a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
               input_dtype, tile, out_dtype):
    """Validate a new signature (gemm/validate.py, the tensors seen as arrays) and plan it: a TorchRoad, or False
    when another road takes it (the CuPy road then validates again and says what is wrong, if anything is)."""
    from ..runtime import gpu
    from . import api

    tensors = {"a": a, "b": b, "c": c, "bias": bias, "out": out, "z_out": z_out}
    if any(x is not None and not x.is_cuda for x in tensors.values()):
        return False   # host tensors: the CuPy road refuses them by name
    plan = signature_plan(a, b, c, bias, bias_mode, act, alpha, beta, leaky_slope, save_z, out, z_out, kernel,
                          input_dtype, out_dtype)
    device = a.device
    if any(x is not None and x.device != device for x in tensors.values()):
        return False
    if plan.kernel == "simt" or plan.dtype not in ("f16", "bf16", "e4m3"):
        return False
    if device.index != gpu.cupy().cuda.Device().id:
        return False   # the kernels are loaded in CuPy's current device
    current_stream(torch, device.index)   # sets _RAW_STREAM, which the calls use directly
    empty = plan.m == 0 or plan.n == 0 or plan.k == 0
    spec = None if empty else api.aligned_wgmma_spec(plan, kernel, tile)
    if spec is None and not empty:
        return False
    blocks = 0
    if spec is not None and hasattr(spec, "tile_config"):   # the skinny GEMM sizes its own grid
        from . import wgmma as gemm_wgmma
        blocks = gemm_wgmma.launch_blocks(plan.m, plan.n, spec.tile_config, api._sm_count())
    return TorchRoad(torch, plan, spec, device, alpha, beta, leaky_slope, blocks)


# ---------------------------------------------------------------------------------------------
# Empty problems: what torch.addmm gives

def activation(torch, x, act: str, leaky_slope: float = 0.01):
    """act(x) with torch's functions, as gemm/epilogue.cuh defines it (GELU the erf form)."""
    functional = torch.nn.functional
    if act == "none":
        return x
    if act == "relu":
        return torch.relu(x)
    if act == "leaky_relu":
        return functional.leaky_relu(x, leaky_slope)
    if act == "gelu":
        return functional.gelu(x)
    if act == "gelu_tanh":
        return functional.gelu(x, approximate="tanh")
    if act == "silu":
        return functional.silu(x)
    if act == "sigmoid":
        return torch.sigmoid(x)
    return torch.tanh(x)


def epilogue_of_nothing(torch, plan: GemmPlan, c, bias, beta: float, leaky_slope: float, device):
    """(D, Z) in float32 for K = 0: pre = beta * C + bias (alpha * A @ B is a sum of nothing)."""
    pre = torch.zeros((plan.m, plan.n), dtype=torch.float32, device=device)
    if plan.has_c:
        pre = pre + beta * c.float()
    if plan.bias_mode != "none":
        shape = bias_shape(plan.bias_mode, plan.m, plan.n)
        pre = pre + (bias.float().reshape(shape[0], 1) if plan.bias_mode == "per_m" else bias.float())
    return activation(torch, pre, plan.act, leaky_slope), pre


def _edge_launch(torch, road: TorchRoad, a, b, c, bias, d, z):
    """The launch of an empty problem: nothing for M = 0 or N = 0; the epilogue alone for K = 0."""
    def launch(handle: int) -> None:
        if road.plan.m == 0 or road.plan.n == 0:
            return
        d_value, pre = epilogue_of_nothing(torch, road.plan, c, bias, road.beta, road.leaky_slope, road.device)
        d.copy_(d_value)
        if z is not None:
            z.copy_(pre)
    return launch


__all__ = ["TensorView", "TorchRoad", "signature_plan", "torch_gemm", "torch_module", "current_stream", "activation",
           "epilogue_of_nothing"]
