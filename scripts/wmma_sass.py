"""SASS of WMMA GEMM instantiations, compiled offline (NVRTC from the pip wheels, no GPU), as counts.

    python3 scripts/wmma_sass.py [--arch sm_90] [--tile 256x128] [--dtype f16,bf16] [--dump DIR]
Per instantiation: registers and spills (cuobjdump -res-usage) and, for the whole kernel and for its main
loop (the block that ends in the backward branch with the most HMMAs), the count of each opcode the
speed depends on. Same options as the GPU module's compile, so the SASS is the one the launcher runs.
"""

import argparse
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from fraglab.bench import peak
from fraglab.gemm import wmma as gemm_wmma
from fraglab.runtime.nvrtc_offline import compile_build
from fraglab.runtime.build import KernelBuild

OPS = ("HMMA", "LDSM", "LDS", "STS", "LDG", "LDGSTS", "LD", "MOVM", "BAR", "DEPBAR", "MOV", "IMAD", "ISETP")


def cubin_of(spec, arch: str) -> bytes:
    build = spec.build()
    ok, log, cubin = compile_build(KernelBuild(build.entry, (spec.name(),), build.options), arch, cubin=True)
    if not ok:
        raise RuntimeError(log)
    return cubin


def opcode(line: str) -> str | None:
    m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_]+)(\.[A-Z0-9_.]+)?", line)
    return m.group(2) if m else None


def counts(lines) -> Counter:
    c = Counter()
    for line in lines:
        op = opcode(line)
        if op in OPS:
            c[op] += 1
    return c


def main_loop(lines: list[str]) -> list[str]:
    """The instructions between the target of a backward BRA and that BRA, for the loop with most HMMAs."""
    addr = {}
    for i, line in enumerate(lines):
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", line)
        if m:
            addr[int(m.group(1), 16)] = i
    best: list[str] = []
    for i, line in enumerate(lines):
        m = re.search(r"\bBRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))", line)
        if opcode(line) == "BRA" and m and m.group(1):
            target = int(m.group(1), 16)
            if target in addr and addr[target] < i:
                body = lines[addr[target]:i + 1]
                if counts(body)["HMMA"] > counts(best)["HMMA"]:
                    best = body
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--tile", default="256x128")
    ap.add_argument("--dtype", default="f16,bf16")
    ap.add_argument("--act", default="relu")
    ap.add_argument("--bias", default="per_n")
    ap.add_argument("--dump", help="write each instantiation's SASS here")
    args = ap.parse_args()
    tool = peak.find_tool("cuobjdump")
    for tile in args.tile.split(","):
        for dtype in args.dtype.split(","):
            spec = gemm_wmma.WmmaKernelSpec(dtype, args.act, args.bias, tile=tile)
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "k.cubin"
                path.write_bytes(cubin_of(spec, args.arch))
                res = subprocess.run([tool, "-res-usage", str(path)], capture_output=True, text=True).stdout
                sass = peak.sass_text(path.read_bytes())
            regs = re.search(r"REG:(\d+)", res)
            stack = re.search(r"STACK:(\d+)", res)
            lines = sass.splitlines()
            loop = main_loop(lines)
            whole, body = counts(lines), counts(loop)
            print(f"{tile} {dtype} {args.act}/{args.bias} {args.arch}: {regs.group(1) if regs else '?'} registers, "
                  f"stack {stack.group(1) if stack else '?'} B, {sum(1 for x in lines if opcode(x))} instructions")
            print("  kernel   : " + " ".join(f"{op} {whole[op]}" for op in OPS if whole[op]))
            print(f"  main loop ({sum(1 for x in loop if opcode(x))} instructions): "
                  + " ".join(f"{op} {body[op]}" for op in OPS if body[op]))
            if args.dump:
                Path(args.dump).mkdir(parents=True, exist_ok=True)
                (Path(args.dump) / f"{tile}_{dtype}_{args.act}_{args.bias}.sass").write_text(sass)


if __name__ == "__main__":
    main()
