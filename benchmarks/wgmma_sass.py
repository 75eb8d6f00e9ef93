"""Compile wgmma GEMM instantiations with NVRTC through cuda-bindings (resource report), write their cubins and,
where cuobjdump is on the PATH, count their SASS: all instructions, MUFU (the special-function unit the smooth
activations use), HGMMA/QGMMA, and BSSY (a convergence barrier per branch).

The kernels are what the bench runs: f16 in (or --dtype e4m3, B column-major; --scaled: with row and column
scales), f16 D through shared memory and TMA, bias per column.
Usage (device): PYTHONPATH=$PWD python3 benchmarks/wgmma_sass.py OUTDIR [--acts relu,gelu] [--dtype e4m3 --scaled]
[tile ...]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime.nvrtc_offline import compile_build  # noqa: E402


def sass_counts(cubin: Path) -> dict[str, int]:
    """Instruction counts of one cubin's SASS (cuobjdump -sass)."""
    text = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    ops = re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", text)
    return {"instructions": len(ops), "MUFU": sum(o.startswith("MUFU") for o in ops),
            "GMMA": sum("GMMA" in o for o in ops), "BSSY": sum(o.startswith("BSSY") for o in ops)}


def main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("tiles", nargs="*")
    parser.add_argument("--acts", default="relu,gelu")
    parser.add_argument("--dtype", default="f16", choices=wgmma.INPUT_DTYPES)
    parser.add_argument("--scaled", action="store_true")
    args = parser.parse_intermixed_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    count = shutil.which("cuobjdump") is not None
    for tile in args.tiles or list(wgmma.TILES):
        order = "F" if args.dtype in wgmma.FP8_DTYPES or wgmma.ALL_TILES[tile].k_major_b_only else "C"
        for act in args.acts.split(","):
            spec = wgmma.WgmmaKernelSpec(args.dtype, act, "per_n", tile=tile, out_dtype="f16", store="tma",
                                         b_order=order, scaled=args.scaled)
            ok, log, cubin = compile_build(wgmma.build_of((spec.name(),), ("--ptxas-options=-v",)), "sm_90a",
                                           cubin=True, include_dirs=["/usr/local/cuda/include"])
            report = " | ".join(line.split(":", 1)[-1].strip() for line in log.splitlines()
                                if "registers" in line or "spill" in line or "C7508" in line)
            counts = ""
            if ok:
                path = args.out / f"wgmma_{args.dtype}{'_scaled' if args.scaled else ''}_{tile}_{act}.cubin"
                path.write_bytes(cubin)
                if count:
                    counts = " ".join(f"{k}={v}" for k, v in sass_counts(path).items())
            print(f"{args.dtype}{' scaled' if args.scaled else ''} {tile} {act}/per_n f16 D tma: ok={ok} {counts} "
                  f"{report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
