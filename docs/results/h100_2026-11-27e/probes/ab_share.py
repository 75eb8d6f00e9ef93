"""The committed kernel (.carry/wgmma_head.cu) against the working tree's (ping-pong tiles with one unit per block:
both consumers share its K-blocks, two TMA threads), same tiles, same process: right against float64, then cold /
hot per-launch times beside torch.mm."""
import sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.runtime import gpu


class HeadBuild(wgmma.WgmmaBuild):
    def source_text(self):
        return wgmma.accumulator_header() + f'#include "{Path(".carry/wgmma_head.cu").resolve()}"\n'


gen = torch.Generator(device="cuda").manual_seed(11)
for text in sys.argv[1].split(";"):
    m, n, k, order, tiles = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
    for tile in tiles.split("+"):
        spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order, tile=tile)
        for which in ("head", "new"):
            ls = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
            if which == "head":
                build = HeadBuild(wgmma.ENTRY, (spec.name(),), ())
                kern = gpu.function(build, spec.name())
                if kern.max_dynamic_shared_size_bytes < spec.smem_bytes:
                    kern.max_dynamic_shared_size_bytes = spec.smem_bytes
                for l in ls:
                    l.function = kern.kernel.ptr
            err = launch_error(torch, lambda: ls[0](), d, want)
            name = f"{tile}/{which}"
            if err < 5e-3:
                fns[name] = (lambda ls: (lambda i: ls[i]()))(ls)
            else:
                print("WRONG", name, err, flush=True)
    cold = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
    hot = benchmod.time_interleaved({nm: (lambda f: (lambda i: f(0)))(f) for nm, f in fns.items()}, rounds=5, reps=30, rotate=1)
    print(f"{m}x{n}x{k} {order}: " + "  ".join(f"{nm} {cold[nm].median_ms*1e3:.2f} (hot {hot[nm].median_ms*1e3:.2f})" for nm in fns), flush=True)
    xs = d = fns = None
    torch.cuda.empty_cache()
