"""The one module that owns the GPU: lazy CuPy import, include folders, compilation, caching, errors.

Nothing else in fraglab imports CuPy at module level, so the CLI and every CPU path work on a
machine without a GPU, and `fraglab layout` answers quickly there.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Any, Optional

import numpy as np

from ..errors import CompileError, GpuUnavailable, InputError, ProbeError
from .build import KernelBuild
from .toolkit import include_dirs


_CUPY = None


def cupy():
    """Import CuPy on first use; raise GpuUnavailable with the reason if it cannot be used."""
    global _CUPY
    if _CUPY is not None:
        return _CUPY
    if os.environ.get("FRAGLAB_NO_GPU"):
        raise GpuUnavailable("the GPU is switched off by FRAGLAB_NO_GPU")
    try:
        import cupy as cp
    except Exception as exc:  # ImportError, or a CuPy build that fails to load its CUDA libraries
        raise GpuUnavailable(f"CuPy is not importable ({exc.__class__.__name__}: {exc}); "
                             "install fraglab[cuda13] or fraglab[cuda12]") from None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise GpuUnavailable(f"no CUDA driver or device ({exc})") from None
    if count < 1:
        raise GpuUnavailable("CUDA reports no device")
    _CUPY = cp
    return cp


def available() -> tuple[bool, str]:
    """(True, '') if a GPU is usable, else (False, reason)."""
    try:
        cupy()
        return True, ""
    except GpuUnavailable as exc:
        return False, str(exc)


def compute_capability() -> int:
    """e.g. 90 for an H100/H200."""
    cp = cupy()
    return int(cp.cuda.Device().compute_capability)


def device_info() -> dict[str, Any]:
    """Provenance of measurements made on the present GPU."""
    cp = cupy()
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"]
    nvrtc = cp.cuda.nvrtc.getVersion()
    return {
        "gpu_name": name.decode() if isinstance(name, bytes) else str(name),
        "compute_capability": compute_capability(),
        "sm_count": int(props["multiProcessorCount"]),
        "driver_version": _version(cp.cuda.runtime.driverGetVersion()),
        "runtime_version": _version(cp.cuda.runtime.runtimeGetVersion()),
        "nvrtc_version": f"{nvrtc[0]}.{nvrtc[1]}",
        "cupy_version": cp.__version__,
        "memory_peak_tbs": _memory_peak_tbs(cp, cp.cuda.Device().id),
    }


def _memory_peak_tbs(cp, device: int) -> Optional[float]:
    """DRAM's peak in TB/s: two transfers per memory clock across the bus width (an H100 80GB HBM3: 2619 MHz x
    5120 bits = 3.35 TB/s); None where the driver does not report them."""
    try:
        clock_khz = cp.cuda.runtime.deviceGetAttribute(36, device)   # cudaDevAttrMemoryClockRate
        bus_bits = cp.cuda.runtime.deviceGetAttribute(37, device)    # cudaDevAttrGlobalMemoryBusWidth
    except (AttributeError, cp.cuda.runtime.CUDARuntimeError):
        return None
    if clock_khz <= 0 or bus_bits <= 0:
        return None
    return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e12


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


_MODULES: dict[KernelBuild, Any] = {}


def precompile(builds, workers: int | None = None, start: float = 0.0) -> float:
    """Compile many builds at once (threads: NVRTC runs outside the GIL), beginning at the `start` share of the
    list (0 <= start < 1) and wrapping round, so processes compiling one list side by side begin apart and find
    each other's results in the disk cache; returns the seconds taken. A cold cache costs ~1 s per build."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    order = list(dict.fromkeys(builds))
    first = int(start * len(order))
    cupy()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers or min(16, os.cpu_count() or 1)) as pool:
        list(pool.map(module, order[first:] + order[:first]))
    return time.perf_counter() - t0


def module(build: KernelBuild):
    """The compiled RawModule for a build: compiled on first use, then cached in memory and on disk
    (CuPy's cache, keyed on source and options; the options carry a hash of every .cu/.cuh)."""
    if build in _MODULES:
        return _MODULES[build]
    cp = cupy()
    options = build.all_options(include_dirs())
    try:
        mod = cp.RawModule(code=build.source_text(), options=options,
                           name_expressions=list(build.name_expressions))
        mod.compile()
    except cp.cuda.compiler.CompileException as exc:
        raise CompileError(f"NVRTC could not compile fraglab/{build.entry}", str(exc)) from None
    _MODULES[build] = mod
    return mod


def function(build: KernelBuild, name: str):
    """The kernel `name` (one of build.name_expressions)."""
    return module(build).get_function(name)


def synchronize() -> None:
    cupy().cuda.runtime.deviceSynchronize()


def pack_parameters(params) -> tuple[np.ndarray, np.ndarray]:
    """Kernel parameters (numpy scalars and np.void structs, in the kernel's order) copied into one host buffer,
    each at its natural alignment (structs of 64 bytes or more, e.g. tensor maps, at 64); returns (buffer, the
    uint64 address of each parameter in it): the `void** kernelParams` of cuLaunchKernel. Keep the buffer alive."""
    offsets, end = [], 0
    for p in params:
        size = p.nbytes
        align = 64 if size >= 64 else max(1, min(size & -size, 8))   # the largest power of two dividing the size
        end = -(-end // align) * align
        offsets.append(end)
        end += size
    buffer = np.zeros(end + 64, dtype=np.uint8)
    shift = -buffer.ctypes.data % 64   # numpy promises 16-byte alignment at most; the structs want 64
    for p, offset in zip(params, offsets):
        start = shift + offset
        buffer[start:start + p.nbytes] = np.frombuffer(p.tobytes(), dtype=np.uint8)
    addresses = np.array([buffer.ctypes.data + shift + o for o in offsets], dtype=np.uint64)
    return buffer, addresses


# cuLaunchKernelEx's arguments as cuda.h lays them out (CUDA 12 and 13), for a launch through ctypes: cuda-bindings
# builds Python objects per call, CuPy does not wrap it. tests/runtime/test_launch_parameters.py compares the
# layout and the attribute's number with cuda-bindings' own.
class LaunchAttributeValue(ctypes.Union):
    _fields_ = [("programmatic_stream_serialization_allowed", ctypes.c_int), ("pad", ctypes.c_char * 64)]


class LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", LaunchAttributeValue)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6   # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
# FRAGLAB_PROGRAMMATIC_LAUNCH=0: launch the GEMMs as plain kernels (each waits for the previous kernel to end)
PROGRAMMATIC_SWITCH = "FRAGLAB_PROGRAMMATIC_LAUNCH"
_LAUNCH_EX = None


def _launch_ex():
    """libcuda's cuLaunchKernelEx through ctypes, or False where it cannot be loaded (launches stay plain)."""
    global _LAUNCH_EX
    if _LAUNCH_EX is None:
        try:
            fn = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
        except (OSError, AttributeError):
            _LAUNCH_EX = False
        else:
            fn.argtypes = (ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
            fn.restype = ctypes.c_int
            _LAUNCH_EX = fn
    return _LAUNCH_EX


def programmatic_launch_available() -> bool:
    """Whether PackedLaunch(programmatic=True) launches programmatically here: FRAGLAB_PROGRAMMATIC_LAUNCH is unset
    or 1 (0: plain launches; anything else an InputError naming it) and libcuda's cuLaunchKernelEx loads."""
    switch = os.environ.get(PROGRAMMATIC_SWITCH, "1").strip()
    if switch not in ("0", "1"):
        raise InputError(f"{PROGRAMMATIC_SWITCH}={switch!r} is not valid: choose 1 (launches overlap the previous "
                         "kernel's end, the default) or 0 (plain launches)", argument=PROGRAMMATIC_SWITCH)
    return switch == "1" and bool(_launch_ex())


def programmatic_launch_config(grid: int, block: int, shared_mem: int) -> tuple[LaunchConfig, LaunchAttribute]:
    """cuLaunchKernelEx's config for a 1-D launch that may begin before the previous kernel in its stream ends
    (programmatic stream serialization); the stream is set per launch. Keep the attribute alive with it."""
    attribute = LaunchAttribute(id=ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
    attribute.value.programmatic_stream_serialization_allowed = 1
    config = LaunchConfig(gridDimX=grid, gridDimY=1, gridDimZ=1, blockDimX=block, blockDimY=1, blockDimZ=1,
                          sharedMemBytes=shared_mem, hStream=None, attrs=ctypes.pointer(attribute), numAttrs=1)
    return config, attribute


class PackedLaunch:
    """One kernel launch whose parameters were packed into host memory once (pack_parameters); a call is one
    cuLaunchKernel on CuPy's current stream or the given one. CuPy's RawKernel call converts every argument again
    on each call, about a microsecond each (the wgmma GEMM has 13, three of them 128-byte tensor maps): most of
    a small GEMM's host time.

    programmatic=True (for kernels that call wait_for_previous_grid, kernels/gemm/mbarrier.cuh, before touching
    global memory): cuLaunchKernelEx with programmatic stream serialization, so the kernel's blocks start and set
    up (the skinny GEMM's also ask L2 for their first K-blocks of the weight) while the previous kernel finishes
    (unless FRAGLAB_PROGRAMMATIC_LAUNCH=0)."""

    __slots__ = ("function", "grid", "block", "shared_mem", "_buffer", "_addresses", "_params", "_config",
                 "_attribute", "_launch_ex", "_config_lock")

    def __init__(self, kernel, grid: int, block: int, params, shared_mem: int = 0, programmatic: bool = False):
        self.function = kernel.kernel.ptr   # the CUfunction of a RawKernel, loaded for the current device
        self.grid, self.block, self.shared_mem = int(grid), int(block), int(shared_mem)
        self._buffer, self._addresses = pack_parameters(params)
        self._params = int(self._addresses.ctypes.data)
        self._launch_ex = _launch_ex() if programmatic and programmatic_launch_available() else None
        if self._launch_ex is not None:
            self._config, self._attribute = programmatic_launch_config(self.grid, self.block, self.shared_mem)
            self._config_lock = threading.Lock()   # the config's stream is set per launch; ctypes lets go of the GIL

    @property
    def programmatic(self) -> bool:
        """Whether launches may overlap the previous kernel's end (cuLaunchKernelEx with the attribute)."""
        return self._launch_ex is not None

    def __call__(self, stream=None) -> None:
        """Launch on `stream` (a CuPy stream; None: CuPy's current stream). cuLaunchKernel copies the parameters
        before it returns, so the buffer is reused by the next call at once."""
        cp = _CUPY
        self.launch_on((stream if stream is not None else cp.cuda.get_current_stream()).ptr)

    def launch_on(self, handle: int) -> None:
        """Launch on the cudaStream_t `handle` (an int, e.g. torch's current stream): no stream object is made."""
        if self._launch_ex is not None:
            with self._config_lock:
                self._config.hStream = handle
                err = self._launch_ex(self._config, self.function, self._params, None)
            if err:
                raise _CUPY.cuda.driver.CUDADriverError(err)   # CuPy's error for a failed driver call, named
            return
        _CUPY.cuda.driver.launchKernel(self.function, self.grid, 1, 1, self.block, 1, 1, self.shared_mem, handle,
                                       self._params, 0)

    def set_pointer(self, index: int, address: int) -> None:
        """Parameter `index` (a 64-bit pointer) becomes `address` for the launches after this call."""
        ctypes.c_uint64.from_address(int(self._addresses[index])).value = address

    def set_map_address(self, index: int, address: int) -> None:
        """Parameter `index` (a CUtensorMap) describes the same shape at `address` (cuTensorMapReplaceAddress:
        no new encoding; `address` keeps the map's alignment rules)."""
        from cuda.bindings import driver as cu

        (err,) = cu.cuTensorMapReplaceAddress(cu.CUtensorMap(_ptr=int(self._addresses[index])), address)
        if err != cu.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuTensorMapReplaceAddress failed: {err}")


def stream_is_capturing(handle: int) -> bool:
    """Whether the stream `handle` is being captured into a CUDA graph (an error asking: treated as captured)."""
    try:
        return bool(cupy().cuda.runtime.streamIsCapturing(handle))
    except Exception:   # e.g. the legacy stream while another stream captures: allocate as under capture
        return True


@contextlib.contextmanager
def relaxed_capture():
    """This thread's stream-capture mode set to relaxed for the block: a cudaMalloc (a memory pool growing) is
    then allowed while a stream captures, as torch's caching allocator does in its own graphs."""
    from cuda.bindings import driver as cu

    err, previous = cu.cuThreadExchangeStreamCaptureMode(cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuThreadExchangeStreamCaptureMode failed: {err}")
    try:
        yield
    finally:
        cu.cuThreadExchangeStreamCaptureMode(previous)


def launch_poisoned(build: KernelBuild, name: str, blocks: int, inputs, out_shape, out_dtype, poison: int,
                    what: str = "outputs"):
    """Run `name` on `blocks` warps with the host arrays `inputs` and one output filled with `poison` first;
    the output as a host array. An element still equal to `poison` was never written: ProbeError."""
    cp = cupy()
    out = cp.full(out_shape, poison, dtype=out_dtype)
    args = [cp.asarray(np.ascontiguousarray(x)) for x in inputs]
    function(build, name)((blocks,), (32,), (*args, out))
    synchronize()
    result = out.get()
    unwritten = int(np.sum(result == poison))
    if unwritten:
        raise ProbeError(f"{name}: {unwritten} {what} left unwritten")
    return result


def run_block(build: KernelBuild, name: str, threads: int, shared_mem: int, args) -> list[np.ndarray]:
    """Run `name` as one block of `threads` threads with `shared_mem` bytes of dynamic shared memory; `args` in
    the kernel's order are host arrays (copied to the GPU) and numpy scalars. Returns every array argument
    copied back after the run (the outputs among them), in order."""
    cp = cupy()
    kernel = function(build, name)
    if shared_mem > 48 * 1024:   # above 48 KiB a kernel must opt in
        kernel.max_dynamic_shared_size_bytes = int(shared_mem)
    device_args = [cp.asarray(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
    kernel((1,), (int(threads),), tuple(device_args), shared_mem=int(shared_mem))
    synchronize()
    return [a.get() for a in device_args if isinstance(a, cp.ndarray)]


__all__ = ["GpuUnavailable", "CompileError", "cupy", "available", "compute_capability", "device_info",
           "include_dirs", "module", "function", "launch_poisoned", "pack_parameters", "PackedLaunch", "run_block",
           "programmatic_launch_available", "programmatic_launch_config", "LaunchConfig", "LaunchAttribute",
           "PROGRAMMATIC_SWITCH", "stream_is_capturing", "relaxed_capture"]
