"""A/B over the decode shapes (M <= 32): the committed kernel (HEAD copy), the working tree's (clusters of 8), and the
working tree's with clusters of `splits` and of max(4, splits); interleaved with torch.mm, weights rotated."""
import itertools, json, os, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild


def launches(entry, opts, spec, cluster, xs, d, m, n, k, order):
    name = spec.name()
    fn = gpu.module(KernelBuild(entry, (name,), opts)).get_function(name)
    smem = skinny.smem_bytes(m, spec.layout)
    fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
    out = []
    for a, b, bias, _ in xs:
        ldb = b.stride(1) if order == "F" else b.stride(0)
        key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
               k, ldb, n, n, n, n)
        out.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, spec.splits, cluster), skinny.threads(spec.layout),
                                    skinny.launch_parameters(key), shared_mem=smem))
    return out


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(9)
    ms = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "1,8,16,32").split(",")]
    rows = []
    for order, m, (n, k) in itertools.product("FC", ms, [(a, b) for a in (4096, 11008, 14336) for b in (4096, 11008, 14336)]):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        variants = {"head": launches("gemm/skinny_head.cu", (), spec, 8, xs, d, m, n, k, order),
                    "c8": launches(skinny.ENTRY, (), spec, 8, xs, d, m, n, k, order)}
        for label, c in (("c=splits", spec.splits), ("c=max4", max(4, spec.splits))):
            variants[label] = launches(skinny.ENTRY, (f"-DFRAGLAB_SKINNY_CLUSTER={c}",), spec, c, xs, d, m, n, k, order)
        for label, calls in variants.items():
            err = launch_error(torch, calls[0], d, want)
            assert err < 5e-3, (label, err)
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        fns.update({label: (lambda cs: lambda i: cs[i]())(calls) for label, calls in variants.items()})
        t = benchmod.time_interleaved(fns, rounds=5, reps=20 if n * k < 100e6 else 10, rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        rows.append({"order": order, "m": m, "n": n, "k": k, "tile": spec.tile, "us": us})
        print(f"{order} M {m:3d} {n:6d}x{k:<6d} {spec.tile:20s} " + "  ".join(f"{x} {v:7.2f}" for x, v in us.items())
              + "  | /c8: " + "  ".join(f"{x} {us[x] / us['c8']:.3f}" for x in us if x not in ("c8",)), flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    for x in ("head", "c=splits", "c=max4", "mm"):
        r = [row["us"][x] / row["us"]["c8"] for row in rows]
        print(f"{x}/c8: median {statistics.median(r):.3f} min {min(r):.3f} max {max(r):.3f} below 1: {sum(v < 1 for v in r)}/{len(r)}")
    Path(os.environ.get("OUT", "/tmp"), "ab2.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
