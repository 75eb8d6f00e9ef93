"""K-blocks per stage (StageK): the rules' tile against its kb2 / kb4 variants and torch.mm, per launch, cold
(weights rotated past L2) and hot (one set); each variant checked against float32 first (D poisoned with NaN).
argv[1]: cases "M,N,K,ORDER,tile+tile;..."."""
import sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
from fraglab.gemm.api import prepare

gen = torch.Generator(device="cuda").manual_seed(11)
for text in sys.argv[1].split(";"):
    m, n, k, order, tiles = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    rules = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]
    rule_tile = str(getattr(rules[0].kernel_spec, "tile", "skinny"))
    fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1]), "rules:" + rule_tile: lambda i: rules[i]()}
    for tile in [t for t in tiles.split("+") if t]:
        spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order, tile=tile,
                              store="tma")
        ls = [wgmma.bind(spec, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
        err = launch_error(torch, lambda: ls[0](), d, want)
        if err < 5e-3:
            fns[tile] = (lambda ls: (lambda i: ls[i]()))(ls)
        else:
            print("WRONG", tile, m, n, k, order, err, flush=True)
    cold = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
    hot = benchmod.time_interleaved({nm: (lambda f: (lambda i: f(0)))(f) for nm, f in fns.items()}, rounds=5, reps=30,
                                    rotate=1)
    print(f"{m}x{n}x{k} {order}: " + "  ".join(f"{nm} {cold[nm].median_ms*1e3:.2f}/{hot[nm].median_ms*1e3:.2f}"
                                            for nm in fns), flush=True)
    xs = d = fns = rules = None
    torch.cuda.empty_cache()
