"""CUDA source compiled for sm_90 through NVRTC from the pip wheels (cuda-bindings), for the tests of generated
headers; the test is skipped, with the reason, where cuda-bindings is missing."""

from __future__ import annotations

import pytest


def nvrtc_compiles(source: str, name: str) -> tuple[bool, str]:
    """(compiled, NVRTC's log) for `source`, named `name` in the log."""
    nvrtc = pytest.importorskip("cuda.bindings.nvrtc", reason="cuda-bindings (NVRTC) is not installed")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    try:
        opts = [b"--gpu-architecture=sm_90", b"-std=c++17"]
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        return status == nvrtc.nvrtcResult.NVRTC_SUCCESS, log.decode(errors="replace")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
