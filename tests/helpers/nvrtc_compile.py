"""CUDA source compiled for sm_90 through NVRTC from the pip wheels (cuda-bindings), for the tests of generated
headers, and fraglab's offline compiler for the kernel compile tests; the test is skipped, with the reason, where
the wheels (the dev extra) are missing."""

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


def offline_nvrtc(allow_module_level: bool = False):
    """fraglab.runtime.nvrtc_offline, once NVRTC (cuda-bindings) and its headers are found in the wheels (the dev
    extra); else the test, or with allow_module_level the whole module, is skipped with the reason."""
    nvrtc_offline = pytest.importorskip("fraglab.runtime.nvrtc_offline")
    try:
        nvrtc_offline.wheel_include_dir()
        from cuda.bindings import nvrtc  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"offline NVRTC unavailable: {exc}", allow_module_level=allow_module_level)
    return nvrtc_offline
