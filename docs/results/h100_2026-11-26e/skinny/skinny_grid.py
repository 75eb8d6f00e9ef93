"""Sweep: the skinny GEMM's B load x ring depth x cluster size x split at the decode shapes (build options
FRAGLAB_SKINNY_STAGES / FRAGLAB_SKINNY_CLUSTER), against torch.mm, interleaved rounds, weights rotated past L2.
Prints the best few per problem and writes JSON."""
import argparse, dataclasses, itertools, json, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[4]   # the repository root
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild

def launch(spec, tma, stages, cluster, splits, a, b, d, bias, m, n, k):
    """The skinny GEMM built with this ring depth and cluster size, launched with the library's own arguments."""
    opts = (f"-DFRAGLAB_SKINNY_STAGES={stages}", f"-DFRAGLAB_SKINNY_CLUSTER={cluster}")
    name = spec.name()
    fn = gpu.function(KernelBuild(skinny.ENTRY, (name,), opts), name)
    smem = skinny.smem_bytes(m, spec.layout, stages)
    if fn.max_dynamic_shared_size_bytes < smem:
        fn.max_dynamic_shared_size_bytes = smem
    ldb = b.stride(1) if spec.b_order == "F" else b.stride(0)
    spec = dataclasses.replace(spec, splits=splits, b_load="tma" if tma else "copy")
    key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01, k, ldb,
           n, n, n, n)
    return gpu.PackedLaunch(fn, skinny.grid_blocks(n, splits, cluster), skinny.threads(spec.layout),
                            skinny.launch_parameters(key), shared_mem=smem)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", default="1,8,16,32")
    ap.add_argument("--nk", default="4096x4096,4096x11008,4096x14336,11008x4096,11008x11008,11008x14336,14336x4096,14336x11008,14336x14336")
    ap.add_argument("--orders", default="F,C")
    ap.add_argument("--stages", default="4,6,8")
    ap.add_argument("--clusters", default="2,4,8")
    ap.add_argument("--splits", default="1,2,4,8")
    ap.add_argument("--loads", default="0,1")
    ap.add_argument("--json")
    args = ap.parse_args()
    ints = lambda t: [int(x) for x in t.split(",")]
    import torch
    gen = torch.Generator(device="cuda").manual_seed(7)
    rows = []
    for order, m, nk in itertools.product(args.orders.split(","), ints(args.m), args.nk.split(",")):
        n, k = map(int, nk.split("x"))
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        bad = []
        sched = f"{'t' if base.b_load == 'tma' else 'cp'}4c8k{base.splits}"
        for tma, stages, cluster, splits in itertools.product(ints(args.loads), ints(args.stages), ints(args.clusters), ints(args.splits)):
            if cluster % splits or splits > cluster:
                continue
            if splits > 1 and -(-k // 64) < splits * 8:
                continue
            if skinny.smem_bytes(m, base.layout, stages) > 227 * 1024:
                continue
            key = f"{'t' if tma else 'cp'}{stages}c{cluster}k{splits}"
            calls = [launch(base, tma, stages, cluster, splits, a, b, d, bias, m, n, k) for a, b, bias, _ in xs]
            err = launch_error(torch, calls[0], d, want)
            if not err < 5e-3:
                bad.append(f"{key} err {err:.1e}"); continue
            fns[key] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=3, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        ranked = sorted((x for x in us if x != "mm"), key=us.get)
        rows.append({"order": order, "m": m, "n": n, "k": k, "layout": base.layout, "scheduled": sched, "us": us})
        print(f"{order} M {m:3d} {n:6d}x{k:<6d} {base.layout:9s} mm {us['mm']:6.1f} sched {sched} {us.get(sched, float('nan')):6.1f} "
              f"({us['mm'] / us.get(sched, float('nan')):.2f}x) best: " +
              "  ".join(f"{x} {us[x]:.1f} ({us['mm'] / us[x]:.2f}x)" for x in ranked[:5]) +
              (f"  BAD {bad}" if bad else ""), flush=True)
        xs = fns = d = None
        torch.cuda.empty_cache()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))

if __name__ == "__main__":
    main()
