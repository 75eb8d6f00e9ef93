"""Compile wgmma GEMM instantiations with NVRTC through cuda-bindings (resource report) and write their cubins for cuobjdump -sass.

Usage (device): PYTHONPATH=$PWD python3 benchmarks/wgmma_sass.py OUTDIR [tile ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime.nvrtc_offline import compile_build  # noqa: E402


def main(argv) -> int:
    out = Path(argv[0])
    tiles = argv[1:] or list(wgmma.TILES)
    for tile in tiles:
        for act, bias in (("relu", "per_n"), ("gelu", "full")):
            spec = wgmma.WgmmaKernelSpec("f16", act, bias, tile=tile)
            ok, log, cubin = compile_build(wgmma.build_of((spec.name(),), ("--ptxas-options=-v",)), "sm_90a",
                                           cubin=True, include_dirs=["/usr/local/cuda/include"])
            report = " | ".join(line.split(":", 1)[-1].strip() for line in log.splitlines()
                                if "registers" in line or "spill" in line or "C7508" in line)
            print(f"{tile} {act}/{bias}: ok={ok} {report}")
            if ok:
                (out / f"wgmma_{tile}_{act}.cubin").write_bytes(cubin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
