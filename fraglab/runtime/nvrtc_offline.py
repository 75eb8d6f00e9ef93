"""Compile a KernelBuild with NVRTC from pip wheels, with no GPU and no driver (CI's compile test).

CuPy's own compile path needs a driver, so this uses `cuda.bindings.nvrtc` directly.
"""

from __future__ import annotations

from .build import KernelBuild
from .toolkit import wheel_include_dir as _wheel_include_dir


class OfflineCompilerUnavailable(RuntimeError):
    pass


def wheel_include_dir() -> str:
    found = _wheel_include_dir()
    if found is None:
        raise OfflineCompilerUnavailable("no nvidia wheel include folder with crt/mma.h "
                                         "(pip install fraglab[dev], which brings nvidia-cuda-crt)")
    return found


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise OfflineCompilerUnavailable("cuda-bindings is not installed (pip install fraglab[dev])") from exc
    return nvrtc


def _read(size_call, read_call, prog) -> bytes:
    """A buffer NVRTC fills. It must be a fresh bytearray: b" " * n can be an interned bytes object
    (n == 1 gives the shared b" "), and NVRTC writing into it corrupts every later b" " in the process."""
    _, size = size_call(prog)
    buf = bytearray(size)
    read_call(prog, buf)
    return bytes(buf)


def compile_build(build: KernelBuild, arch: str, *, cubin: bool = False,
                  include_dirs: list[str] | None = None) -> tuple[bool, str] | tuple[bool, str, bytes]:
    """(ok, log) for compiling every name expression of `build` for `arch` (e.g. 'sm_90');
    with cubin=True, (ok, log, cubin bytes) (empty bytes when it failed)."""
    nvrtc = _nvrtc()
    opts = [o.encode() for o in build.all_options(include_dirs or [wheel_include_dir()], arch)]
    err, prog = nvrtc.nvrtcCreateProgram(build.source_text().encode(), b"fraglab_build.cu", 0, [], [])
    try:
        for name in build.name_expressions:
            nvrtc.nvrtcAddNameExpression(prog, name.encode())
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _read(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog)
        log_text = log.decode(errors="replace").rstrip("\x00 ")
        ok = status == nvrtc.nvrtcResult.NVRTC_SUCCESS
        if ok:  # every requested instantiation must really exist in the result
            for name in build.name_expressions:
                e, lowered = nvrtc.nvrtcGetLoweredName(prog, name.encode())
                if e != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                    ok, log_text = False, f"no lowered name for {name}"
                    break
        if not cubin:
            return ok, log_text
        binary = _read(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, prog) if ok else b""
        return ok, log_text, binary
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
