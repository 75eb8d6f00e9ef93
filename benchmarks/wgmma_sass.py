"""Compile wgmma GEMM instantiations with NVRTC (resource report) and write their cubins for cuobjdump -sass.

Usage (device): PYTHONPATH=$PWD python3 benchmarks/wgmma_sass.py OUTDIR [tile ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402


def compile_cubin(build, include_dirs, extra=()):
    """(ok, log, cubin) through cuda.bindings.nvrtc."""
    from cuda.bindings import nvrtc

    opts = [o.encode() for o in build.all_options(include_dirs)] + [e.encode() for e in extra]
    _, prog = nvrtc.nvrtcCreateProgram(build.source_text().encode(), b"wgmma_build.cu", 0, [], [])
    try:
        for name in build.name_expressions:
            nvrtc.nvrtcAddNameExpression(prog, name.encode())
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, log)
        ok = status == nvrtc.nvrtcResult.NVRTC_SUCCESS
        cubin = bytearray()
        if ok:
            _, size = nvrtc.nvrtcGetCUBINSize(prog)
            cubin = bytearray(size)
            nvrtc.nvrtcGetCUBIN(prog, cubin)
        return ok, bytes(log).decode(errors="replace"), bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def main(argv) -> int:
    out = Path(argv[0])
    tiles = argv[1:] or list(wgmma.TILES)
    for tile in tiles:
        for act, bias in (("relu", "per_n"), ("gelu", "full")):
            spec = wgmma.WgmmaKernelSpec("f16", act, bias, tile=tile)
            ok, log, cubin = compile_cubin(spec.build(), ["/usr/local/cuda/include"], ("--ptxas-options=-v",))
            report = " | ".join(line.split(":", 1)[-1].strip() for line in log.splitlines()
                                if "registers" in line or "spill" in line or "C7508" in line)
            print(f"{tile} {act}/{bias}: ok={ok} {report}")
            if ok:
                (out / f"wgmma_{tile}_{act}.cubin").write_bytes(cubin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
