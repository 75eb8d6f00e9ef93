"""A launch's timeline on the GPU: the wgmma GEMM compiled with -DFRAGLAB_WGMMA_TRACE records the global timer (ns)
per block at 8 points (entry, past the start sync, first loads issued, first stage full, first tile's mainloop done,
its split-K sums complete, its D issued, done; kernels/gemm/wgmma.cu FRAGLAB_TRACE). Launched back to back over
weights rotated past L2 (as the benchmarks time it), then the last launch's trace is read: per point the median and
the range over blocks, in us from the earliest entry, beside the launch's median time by CUDA events.
f16, bias per column + ReLU, D f16 through TMA.

Usage (device): python3 benchmarks/wgmma_trace.py [--shapes 64x4096x4096,...] [--tiles 64x64p,...] [--orders F,C]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab import bench as benchmod  # noqa: E402
from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

POINTS = ("entry", "synced", "loads", "full", "mainloop", "summed", "stored", "done")


def traced_launches(spec, xs, d):
    """Launches of `spec` on every input set, on the kernel compiled with the trace, and the trace's device array."""
    build = wgmma.build_of((spec.name(),), ("-DFRAGLAB_WGMMA_TRACE",))
    kernel = gpu.function(build, spec.name())
    if kernel.max_dynamic_shared_size_bytes < spec.smem_bytes:
        kernel.max_dynamic_shared_size_bytes = spec.smem_bytes
    launches = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
    for launch in launches:
        launch.function = kernel.kernel.ptr
    cp = gpu.cupy()
    ptr = gpu.module(build).get_global("fraglab_wgmma_trace")
    trace = cp.ndarray((1024, 8), dtype=cp.uint64, memptr=ptr)
    return launches, trace


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="64x4096x4096,128x4096x4096")
    parser.add_argument("--tiles", default="64x64p,64x64pk2,64x64pc2,128x64k2")
    parser.add_argument("--orders", default="F")
    args = parser.parse_args()
    bad = [t for t in args.tiles.split(",") if t not in wgmma.ALL_TILES]
    if bad:
        parser.error(f"--tiles: {', '.join(bad)} not a tile (valid: {', '.join(wgmma.ALL_TILES)})")
    try:
        shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    except ValueError:
        parser.error(f"--shapes: {args.shapes!r} is not MxNxK[,MxNxK...]")
    if any(len(s) != 3 or min(s) < 1 for s in shapes):
        parser.error(f"--shapes: {args.shapes!r} is not MxNxK[,MxNxK...] of positive sizes")
    if not set(args.orders.split(",")) <= set(wgmma.B_ORDERS):
        parser.error(f"--orders: {args.orders!r} (valid: {', '.join(wgmma.B_ORDERS)})")
    usable, why = gpu.available()
    if not usable:
        print(f"wgmma_trace.py: no usable GPU: {why}", file=sys.stderr)
        return 1
    import torch

    gen = torch.Generator(device="cuda").manual_seed(7)
    for m, n, k in shapes:
        shape = f"{m}x{n}x{k}"
        for order in args.orders.split(","):
            sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
            mm = benchmod.time_interleaved({"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}, rounds=2, reps=30,
                                           rotate=sets)["mm"].median_ms * 1e3
            print(f"{shape} B {order}: torch.mm {mm:.1f} us", flush=True)
            for tile in args.tiles.split(","):
                spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16",
                                      b_order=order, tile=tile, store="tma")
                launches, trace = traced_launches(spec, xs, d)
                err = launch_error(torch, lambda: launches[0](), d, want)
                if not err < 5e-3:
                    print(f"  {tile}: wrong result (err {err:.1e})")
                    continue
                us = benchmod.time_interleaved({tile: lambda i: launches[i]()}, rounds=2, reps=30,
                                               rotate=sets)[tile].median_ms * 1e3
                trace.fill(0)
                for i in range(sets):   # back to back, as timed; the last launch's timeline stays
                    launches[i]()
                torch.cuda.synchronize()
                blocks = wgmma.launch_blocks(m, n, spec.tile_config)
                t = trace.get()[:blocks].astype(np.int64)
                t0 = t[:, 0].min()
                cells = []
                for p, name in enumerate(POINTS):
                    got = t[:, p][t[:, p] > 0] - t0
                    if got.size:
                        cells.append(f"{name} {np.median(got) / 1e3:.2f} [{got.min() / 1e3:.2f}-{got.max() / 1e3:.2f}]")
                print(f"  {tile}: {us:.1f} us by events; {blocks} blocks; " + "  ".join(cells), flush=True)
            xs = d = None
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
