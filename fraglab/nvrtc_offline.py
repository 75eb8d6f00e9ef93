"""Compile a KernelBuild with NVRTC from pip wheels, with no GPU and no driver (CI's compile test).

CuPy's own compile path needs a driver, so this uses `cuda.bindings.nvrtc` directly.
"""

from __future__ import annotations

from pathlib import Path

from .sources import KernelBuild


class OfflineCompilerUnavailable(RuntimeError):
    pass


def wheel_include_dir() -> str:
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels
    except ImportError as exc:
        raise OfflineCompilerUnavailable("the nvidia-cuda-* wheels are not installed (pip install fraglab[dev])") from exc
    for root in nvidia.__path__:
        for sub in ("cu13/include", "cuda_runtime/include"):
            path = Path(root) / sub
            if (path / "crt" / "mma.h").is_file():
                return str(path)
    raise OfflineCompilerUnavailable("no nvidia wheel include folder with crt/mma.h (install nvidia-cuda-crt)")


def compile_build(build: KernelBuild, arch: str) -> tuple[bool, str]:
    """(ok, log) for compiling every name expression of `build` for `arch` (e.g. 'sm_90')."""
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise OfflineCompilerUnavailable("cuda-bindings is not installed (pip install fraglab[dev])") from exc
    opts = [o.encode() for o in build.all_options([wheel_include_dir()], arch)]
    err, prog = nvrtc.nvrtcCreateProgram(build.source_text().encode(), b"fraglab_build.cu", 0, [], [])
    try:
        for name in build.name_expressions:
            (e,) = nvrtc.nvrtcAddNameExpression(prog, name.encode())
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        ok = status == nvrtc.nvrtcResult.NVRTC_SUCCESS
        if ok:  # every requested instantiation must really exist in the result
            for name in build.name_expressions:
                e, lowered = nvrtc.nvrtcGetLoweredName(prog, name.encode())
                if e != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                    return False, f"no lowered name for {name}"
        return ok, log.decode(errors="replace").rstrip("\x00 ")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
