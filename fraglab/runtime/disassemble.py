"""NVIDIA's tools for `fraglab explain`: NVRTC (a .cu to PTX and a cubin) and the disassemblers (nvdisasm,
cuobjdump) from pip wheels (pip install fraglab[explain]), the CUDA toolkit or PATH, run as subprocesses.

The only place fraglab runs a CUDA tool binary; what they print is parsed by fraglab.explain (pure Python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..errors import CompileError, FraglabError

DISASSEMBLERS = ("nvdisasm", "cuobjdump")
_TOOLKIT_BINS = ("/usr/local/cuda/bin",)
_TIMEOUT_S = 120


class ToolUnavailable(FraglabError):
    """A CUDA tool fraglab needs is not installed (the message says how to get it)."""

    exit_code = 1


def _wheel_bin_dirs() -> list[Path]:
    """bin/ folders of the nvidia-* wheels (nvidia/cu13/bin, nvidia/cuda_nvdisasm/bin, ...)."""
    found: list[Path] = []
    for entry in sys.path:
        root = Path(entry or ".") / "nvidia"
        if root.is_dir():
            found += sorted(p for p in root.glob("*/bin") if p.is_dir())
    return found


def find_tool(name: str) -> Path | None:
    """The tool's path: a pip wheel first, then the CUDA toolkit, then PATH (None when nowhere)."""
    for folder in (*_wheel_bin_dirs(), *(Path(p) for p in _TOOLKIT_BINS)):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(name)
    return Path(on_path) if on_path else None


def disassembler() -> tuple[str, Path]:
    """(name, path) of the first disassembler present; ToolUnavailable names the wheels when none is."""
    for name in DISASSEMBLERS:
        path = find_tool(name)
        if path is not None:
            return name, path
    raise ToolUnavailable("no disassembler found (nvdisasm or cuobjdump): pip install 'fraglab[explain]' "
                          "(the nvidia-cuda-nvdisasm and nvidia-cuda-cuobjdump wheels) or put the CUDA "
                          "toolkit's bin/ on PATH")


def disassemble(cubin: bytes) -> tuple[str, str]:
    """(tool name, SASS text) of a cubin."""
    import tempfile

    name, path = disassembler()
    with tempfile.TemporaryDirectory(prefix="fraglab_explain_") as folder:
        file = Path(folder) / "kernel.cubin"
        file.write_bytes(cubin)
        args = [str(path), "-c", str(file)] if name == "nvdisasm" else [str(path), "-sass", str(file)]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ToolUnavailable(f"{name} could not run: {exc}") from None
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        raise FraglabError(f"{name} refused the cubin: {first[0] if first else 'no message'}", argument="path",
                           exit_code=1)
    return name, done.stdout


def compile_source(source: str, arch: str, include_dirs: list[str], options: tuple[str, ...] = (),
                   name_expressions: tuple[str, ...] = (), file_name: str = "kernel.cu") -> tuple[str, bytes]:
    """(PTX text, cubin) of CUDA C++ `source` for `arch` (sm_90, sm_90a) through NVRTC: cuda-bindings (pip
    wheels, no GPU needed), else CuPy's own NVRTC (a GPU machine without cuda-bindings)."""
    opts = [f"-arch={arch}", "-std=c++17", *(f"-I{d}" for d in include_dirs), *options]
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return _compile_with_cupy(source, opts, name_expressions, file_name, arch)
    _, prog = nvrtc.nvrtcCreateProgram(source.encode(), file_name.encode(), 0, [], [])
    try:
        for name in name_expressions:
            nvrtc.nvrtcAddNameExpression(prog, name.encode())
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        log = _read(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog).decode(errors="replace")
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(f"NVRTC could not compile {file_name} for {arch}", log=log.rstrip("\x00 "))
        ptx = _read(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog).decode(errors="replace").rstrip("\x00")
        cubin = _read(nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN, prog)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return ptx, cubin


def _compile_with_cupy(source: str, opts: list[str], name_expressions: tuple[str, ...], file_name: str,
                       arch: str) -> tuple[str, bytes]:
    try:
        from cupy_backends.cuda.libs import nvrtc
    except ImportError:
        raise ToolUnavailable("NVRTC is not installed: pip install 'fraglab[dev]' (cuda-bindings, "
                              "nvidia-cuda-nvrtc) or 'fraglab[cuda13]' to compile a .cu here") from None
    prog = nvrtc.createProgram(source, file_name, (), ())
    try:
        for name in name_expressions:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, opts)
        except nvrtc.NVRTCError:
            raise CompileError(f"NVRTC could not compile {file_name} for {arch}",
                               log=str(nvrtc.getProgramLog(prog))) from None
        ptx = nvrtc.getPTX(prog)
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    ptx = ptx.decode(errors="replace") if isinstance(ptx, bytes) else str(ptx)
    return ptx.rstrip("\x00"), bytes(cubin)


def _read(size_call, read_call, prog) -> bytes:
    # a fresh bytearray: NVRTC writes into the buffer (an interned bytes object would be corrupted)
    _, size = size_call(prog)
    buf = bytearray(size)
    read_call(prog, buf)
    return bytes(buf)


__all__ = ["ToolUnavailable", "find_tool", "disassembler", "disassemble", "compile_source", "DISASSEMBLERS"]
