# (run from the repository root: PYTHONPATH=$PWD python3 docs/results/h100_2026-11-26b/gemm/decode_l2_promotion.py)
# L2 promotion x tile at the decode shapes where fraglab trails (N = K = 4096): kernel only, weights rotated
import dataclasses, sys, torch
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma
gen = torch.Generator(device="cuda").manual_seed(3)
for m in (64, 128):
    for order in ("F", "C"):
        sets, xs, d, want = decode_inputs(torch, gen, m, 4096, 4096, order)
        fns = {"mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        for tile in ("64x64p", "64x64pk2", "128x64"):
            for promo in ("none", "64B", "128B", "256B"):
                spec = dataclasses.replace(wgmma.spec_for("f16", m, 4096, 4096, act="relu", bias_mode="per_n",
                                                           out_dtype="f16", b_order=order, tile=tile, store="tma"),
                                           l2_promotion=promo)
                calls = [wgmma.bind(spec, a, b, d, bias=bias) for a, b, bias, _ in xs]
                err = launch_error(torch, lambda: calls[0](), d, want)
                assert err < 5e-3, (tile, promo, err)
                fns[f"{tile}/{promo}"] = (lambda cs: lambda i: cs[i]())(calls)
        t = benchmod.time_interleaved(fns, rounds=3, reps=30, rotate=sets)
        us = {k: v.median_ms * 1e3 for k, v in t.items()}
        print(m, order, "  ".join(f"{k} {v:.1f}" for k, v in sorted(us.items(), key=lambda kv: kv[1])), flush=True)
