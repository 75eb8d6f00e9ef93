"""A decode step's GEMMs back to back, as a model runs them: fraglab.torch.linear against torch's F.linear on the
same weights, eagerly and replayed from a CUDA graph, with and without programmatic dependent launch.

Each layer is a Llama-3 8B layer's four projections on the same M rows (x (M, 4096) -> QKV (M, 6144) -> O on its
first 4096 columns -> gate+up (M, 28672) with ReLU -> down on its first 14336 columns -> the next layer's x), the
weights row-major (out_features, in_features) as models keep them, distinct per layer so that none is in L2 when
its turn comes. One figure: the median over rounds of (the whole chain's time, one pair of CUDA events) / layers.

fraglab's GEMMs launch with programmatic stream serialization (runtime/gpu.py PackedLaunch): a kernel's blocks
start while the previous kernel ends, set up (the skinny GEMM's ask L2 for their first K-blocks of the weight),
and wait (`griddepcontrol.wait`) before touching anything the previous kernel may write. FRAGLAB_PROGRAMMATIC_LAUNCH=0
launches them as plain kernels: each child process runs one setting (two processes each, alternating), the parent
prints the lower figure of each beside torch.

Device: PYTHONPATH=$PWD python3 benchmarks/decode_chain.py [--layers 4] [--m 1,8,16,32,64,128] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HIDDEN, QKV, GATE_UP, FFN = 4096, 6144, 28672, 14336
ROUNDS = 15
ROUNDS_OF_CHILDREN = 2


def make_layers(torch, layers: int):
    """Per layer the four weights (out_features, in_features), f16, uniform in +-1/sqrt(in) (outputs stay O(1))."""
    shapes = ((QKV, HIDDEN), (HIDDEN, HIDDEN), (GATE_UP, HIDDEN), (HIDDEN, FFN))
    return [[(torch.rand(n, k, device="cuda", dtype=torch.float16) - 0.5) * (2.0 / k ** 0.5) for n, k in shapes]
            for _ in range(layers)]


def chain(torch, linear, x, weights):
    """The layers' GEMMs in order; `linear(x, w, act)` is one projection. Returns the last layer's output."""
    for w_qkv, w_o, w_gate_up, w_down in weights:
        qkv = linear(x, w_qkv, "none")
        o = linear(qkv[:, :HIDDEN], w_o, "none")
        gate_up = linear(o, w_gate_up, "relu")
        x = linear(gate_up[:, :FFN], w_down, "none")
    return x


def timed_ms(torch, fn, rounds: int = ROUNDS) -> float:
    """Median over rounds of fn's GPU time (CUDA events around it), after two warm-up runs."""
    fn()
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def graph_of(torch, fn):
    """fn captured into a CUDA graph (after a warm-up run on a side stream, as torch asks); returns its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def child(args) -> dict:
    import torch
    import torch.nn.functional as F

    import fraglab.torch as fl
    from fraglab.runtime import gpu

    torch.manual_seed(0)
    weights = make_layers(torch, args.layers)
    big = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    started = time.perf_counter()
    while time.perf_counter() - started < 1.0:   # the clocks up from idle before anything is timed
        torch.mm(big, big)
        torch.cuda.synchronize()

    def torch_linear(x, w, act):
        y = F.linear(x, w)
        return torch.relu_(y) if act == "relu" else y

    def fraglab_linear(x, w, act):
        return fl.linear(x, w, act=act)

    rows = {}
    with torch.no_grad():
        for m in args.m:
            x = torch.randn(m, HIDDEN, device="cuda", dtype=torch.float16)
            got = chain(torch, fraglab_linear, x, weights).float()
            want = chain(torch, torch_linear, x, weights).float()
            error = float((got - want).abs().max() / want.abs().max())
            row = {"m": m, "max_error_vs_torch": error}
            for name, linear in (("fraglab", fraglab_linear), ("torch", torch_linear)):
                eager = lambda linear=linear: chain(torch, linear, x, weights)   # noqa: E731
                row[f"{name}_eager_us"] = timed_ms(torch, eager) * 1e3 / args.layers
                row[f"{name}_graph_us"] = timed_ms(torch, graph_of(torch, eager)) * 1e3 / args.layers
            rows[m] = row
    return {"programmatic": gpu.programmatic_launch_available(), "device": torch.cuda.get_device_name(),
            "rows": rows}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--m", type=lambda t: [int(v) for v in t.split(",")], default=[1, 8, 16, 32, 64, 128])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    runs = {"1": [], "0": []}
    for setting in ("0", "1") * ROUNDS_OF_CHILDREN:   # alternating: a process started first runs slower at times
        env = {**os.environ, "FRAGLAB_PROGRAMMATIC_LAUNCH": setting}
        out = subprocess.run([sys.executable, __file__, "--child", "--layers", str(args.layers), "--m",
                              ",".join(map(str, args.m))], env=env, capture_output=True, text=True)
        if out.returncode:
            print(out.stdout, out.stderr, file=sys.stderr)
            return out.returncode
        runs[setting].append(json.loads(out.stdout.strip().splitlines()[-1]))
    # per setting, figure and M: the lowest time over its processes
    on, off = ({m: {key: (min(r["rows"][m][key] for r in runs[s]) if key.endswith("_us") else value)
                    for key, value in rows.items()} for m, rows in runs[s][0]["rows"].items()} for s in ("1", "0"))
    runs = {"programmatic": on, "plain": off, "processes": runs}
    print(f"decode chain, {args.layers} Llama-3 8B layers (QKV, O, gate+up + ReLU, down), f16, us per layer, "
          f"the lowest of {ROUNDS_OF_CHILDREN} processes per setting ({runs['processes']['1'][0]['device']})")
    print(f"{'M':>4} | {'eager: fraglab':>14} {'no PDL':>7} {'torch':>7} {'ratio':>6} | "
          f"{'graph: fraglab':>14} {'no PDL':>7} {'torch':>7} {'ratio':>6} | {'max err':>8}")
    for key, row in on.items():
        plain = off[key]
        print(f"{row['m']:>4} | {row['fraglab_eager_us']:14.1f} {plain['fraglab_eager_us']:7.1f} "
              f"{row['torch_eager_us']:7.1f} {row['torch_eager_us'] / row['fraglab_eager_us']:6.2f} | "
              f"{row['fraglab_graph_us']:14.1f} {plain['fraglab_graph_us']:7.1f} {row['torch_graph_us']:7.1f} "
              f"{row['torch_graph_us'] / row['fraglab_graph_us']:6.2f} | {row['max_error_vs_torch']:8.1e}")
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
