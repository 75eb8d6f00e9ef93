"""A/B over the decode shapes (M <= 32): the committed kernel (HEAD copy: partials pulled through DSMEM after a
cluster barrier) against the working tree's (fragments pushed by st.async to the slice's owner), the schedule's
spec for both; interleaved with torch.mm, weights rotated past L2."""
import itertools, json, os, statistics, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT)); sys.path.insert(0, str(ROOT / "benchmarks"))
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild


def head_smem(m, layout, stages=4):
    rows, warps_k = -(-m // 16) * 16, skinny.LAYOUTS[layout][2]
    return max(stages * (64 * 64 * 2 + rows * 64 * 2), warps_k * rows * 72 * 4) + 8 * stages


def head_launches(spec, xs, d, m, n, k):
    name = spec.name()
    fn = gpu.module(KernelBuild("gemm/skinny_head.cu", (name,), spec.build().options)).get_function(name)
    smem = head_smem(m, spec.layout, spec.stages)
    fn.max_dynamic_shared_size_bytes = max(smem, fn.max_dynamic_shared_size_bytes)
    out = []
    for a, b, bias, _ in xs:
        ldb = k if spec.b_order == "F" else n
        key = (spec, m, n, k, a.data_ptr(), b.data_ptr(), d.data_ptr(), 0, bias.data_ptr(), 0, 1.0, 0.0, 0.01,
               k, ldb, n, n, n, n)
        out.append(gpu.PackedLaunch(fn, skinny.grid_blocks(n, spec.splits, spec.cluster), skinny.threads(spec.layout),
                                    skinny.launch_parameters(key), shared_mem=smem))
    return out


def main():
    import torch
    gen = torch.Generator(device="cuda").manual_seed(23)
    ms = [int(x) for x in sys.argv[1].split(",")]
    orders = sys.argv[2] if len(sys.argv) > 2 else "FC"
    rows = []
    for order, m, (n, k) in itertools.product(orders, ms, [(a, b) for a in (4096, 11008, 14336) for b in (4096, 11008, 14336)]):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        head = head_launches(spec, xs, d, m, n, k)
        new = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
        for calls in (head, new):
            assert launch_error(torch, calls[0], d, want) < 5e-3
        t = benchmod.time_interleaved({"mm": lambda i: torch.mm(xs[i][0], xs[i][1]), "head": lambda i: head[i](),
                                       "new": lambda i: new[i]()}, rounds=5, reps=20 if n * k < 100e6 else 10,
                                      rotate=sets)
        us = {x: v.median_ms * 1e3 for x, v in t.items()}
        rows.append({"order": order, "m": m, "n": n, "k": k, "tile": spec.tile, "us": us})
        print(f"{order} M {m:3d} {n:6d}x{k:<6d} {spec.tile:22s} mm {us['mm']:7.2f} head {us['head']:7.2f} "
              f"new {us['new']:7.2f}  new/head {us['new'] / us['head']:.3f}  mm/new {us['mm'] / us['new']:.3f} "
              f"(mm/head {us['mm'] / us['head']:.3f})", flush=True)
        xs = d = None
        torch.cuda.empty_cache()
    r = [row["us"]["new"] / row["us"]["head"] for row in rows]
    print(f"new/head: median {statistics.median(r):.3f} min {min(r):.3f} max {max(r):.3f} faster at {sum(v < 1 for v in r)}/{len(r)}; "
          f">= mm: new {sum(row['us']['mm'] >= row['us']['new'] for row in rows)}, head {sum(row['us']['mm'] >= row['us']['head'] for row in rows)}")
    Path(os.environ.get("OUT", "/tmp"), f"ab_push_{'_'.join(map(str, ms))}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
