"""Where a skinny GEMM launch spends its time: each block's global-timer marks (the FRAGLAB_SKINNY_TIMELINE build of
kernels/gemm/skinny.cu) at entry, first stage landed, half the stages, end of the weight stream, partial tiles
visible (after the cluster barrier), epilogue done and exit, with its SM. Each launch after a device sync, the
weights rotated past L2 (decode_inputs.py); D is checked against float32 torch first. Prints, per shape and
variant, the medians over launches of: span (first entry to last exit), first stage, stream (first stage to loop
end), loop end (median / slowest block), reduction wait (loop end to partials visible), epilogue, final barrier,
and how many SMs ran blocks (most blocks on one SM). f16, bias per column + ReLU, D f16; times in us.

Usage (device): python3 benchmarks/skinny_timeline.py [--shapes 8,4096,4096,F;...] [--variants label=stages|cluster|splits|load;...]
    (a variant's empty fields keep the schedule's: 4 stages, its split, B load and cluster size)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_inputs import decode_inputs, launch_error  # noqa: E402
from fraglab.gemm import skinny  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402

SHAPES = "1,4096,4096,F;8,4096,4096,F;8,4096,4096,C;32,4096,4096,F;16,4096,14336,F;16,14336,4096,F"
MARKS = 8             # per block: 7 global-timer marks and the SM (fraglab_skinny_timeline in skinny.cu)
TIMELINE_BLOCKS = 4096


def timeline_launches(spec, xs, d, m: int, n: int, k: int):
    """One launch per input set of the spec's timeline build (skinny.bind), and the timeline it writes."""
    cp = gpu.cupy()
    spec = dataclasses.replace(spec, timeline=True)
    grid = skinny.grid_blocks(n, spec.splits, spec.cluster)
    if grid > TIMELINE_BLOCKS:
        raise SystemExit(f"{grid} blocks: the timeline holds {TIMELINE_BLOCKS}")
    calls = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
    memory = gpu.module(spec.build()).get_global("fraglab_skinny_timeline")
    return calls, cp.ndarray((TIMELINE_BLOCKS * MARKS,), cp.uint64, memptr=memory), grid


def phases(marks: np.ndarray) -> dict:
    """The phases of one launch from its blocks' marks (blocks x 8: ns at 7 points, then the SM)."""
    t = (marks[:, :7] - marks[:, 0].min()) / 1000.0
    per_sm = np.bincount(marks[:, 7].astype(np.int64))
    return {"span": float(t[:, 6].max()), "first_stage": float(np.median(t[:, 1] - t[:, 0])),
            "stream": float(np.median(t[:, 3] - t[:, 1])), "loop_end": float(np.median(t[:, 3])),
            "loop_end_last": float(t[:, 3].max()), "reduction_wait": float(np.median(t[:, 4] - t[:, 3])),
            "epilogue": float(np.median(t[:, 5] - t[:, 4])), "final_barrier": float(np.median(t[:, 6] - t[:, 5])),
            "sms": int((per_sm > 0).sum()), "most_per_sm": int(per_sm.max())}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=SHAPES, help="M,N,K,B order; ...")
    parser.add_argument("--variants", default="schedule=", help="label=stages|cluster|splits|load; ...")
    parser.add_argument("--launches", type=int, default=8)
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch

    cp = gpu.cupy()
    gen = torch.Generator(device="cuda").manual_seed(5)
    rows = []
    print(f"{'shape':>20} {'variant':>12} {'tile':>20} {'span':>6} {'first':>6} {'stream':>6} {'loop end':>13} "
          f"{'red.':>5} {'epi.':>5} {'final':>5} {'SMs (most)':>10}")
    for text in args.shapes.split(";"):
        m, n, k, order = text.split(",")
        m, n, k = int(m), int(n), int(k)
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        scheduled = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        for variant in args.variants.split(";"):
            label, _, fields = variant.partition("=")
            stages, cluster, splits, load = ((fields.split("|") if fields else []) + [""] * 4)[:4]
            splits = int(splits) if splits else scheduled.splits
            spec = dataclasses.replace(scheduled, splits=splits, b_load=load or scheduled.b_load,
                                       cluster=int(cluster) if cluster else skinny.cluster_for(order, splits),
                                       stages=int(stages) if stages else scheduled.stages)
            calls, timeline, grid = timeline_launches(spec, xs, d, m, n, k)
            err = launch_error(torch, calls[0], d, want)
            if not err < 5e-3:
                print(f"{text} {label}: wrong D (error {err:.1e})", flush=True)
                return 1
            launches = []
            for i in range(args.launches + 2):   # the first two warm the caches and clocks
                timeline.fill(0)
                cp.cuda.runtime.deviceSynchronize()
                calls[i % sets]()
                cp.cuda.runtime.deviceSynchronize()
                if i >= 2:
                    launches.append(phases(timeline.get().reshape(TIMELINE_BLOCKS, MARKS)[:grid].astype(np.int64)))
            med = {key: statistics.median(x[key] for x in launches) for key in launches[0]}
            rows.append({"m": m, "n": n, "k": k, "order": order, "variant": label, "tile": spec.tile, **med})
            print(f"{m:>5}x{n}x{k} {order} {label:>12} {spec.tile:>20} {med['span']:6.2f} {med['first_stage']:6.2f} "
                  f"{med['stream']:6.2f} {med['loop_end']:6.2f}/{med['loop_end_last']:6.2f} "
                  f"{med['reduction_wait']:5.2f} {med['epilogue']:5.2f} {med['final_barrier']:5.2f} "
                  f"{med['sms']:>5.0f} ({med['most_per_sm']:.0f})", flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
