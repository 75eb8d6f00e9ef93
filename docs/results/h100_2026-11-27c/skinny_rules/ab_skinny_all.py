"""The skinny GEMM's B load (TMA or copies) and cluster size (1-8, at least the split) together, over the decode set
(M <= 32); per-launch events, weights rotated past L2, beside torch.mm and the
scheduled kernel; each checked against float32 first."""
import dataclasses, json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import wgmma, skinny, schedule

gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
shapes = [(m, n, k) for m in (1, 8, 16, 32) for n in (4096, 11008, 14336) for k in (4096, 11008, 14336)]
for m, n, k in shapes:
    for order in ("F", "C"):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        base = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        specs = {"sched " + base.tile: base}
        for load in ("tma", "copy"):
            for cluster in (1, 2, 4, 8):
                if cluster < base.splits or (base.layout == "1x4x2n64" and load == "tma"):
                    continue
                s = dataclasses.replace(base, b_load=load, cluster=cluster)
                specs.setdefault(s.tile, s)
        variants = {name: [skinny.bind(s, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
                    for name, s in specs.items()}
        if m > 32:
            ws = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order,
                                store="tma")
            variants["wgmma " + ws.tile] = [wgmma.bind(ws, a, b, d, bias=bias, shared=False) for a, b, bias, _ in xs]
        fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        errs = {}
        for name, ls in variants.items():
            errs[name] = launch_error(torch, lambda: ls[0](), d, want)
            if errs[name] < 5e-3:
                fns[name] = (lambda ls: (lambda i: ls[i]()))(ls)
        t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
        key = f"{m}x{n}x{k} {order}"
        out[key] = {"us": {name: v.median_ms * 1e3 for name, v in t.items()}, "err": errs}
        best = min((v, nm) for nm, v in out[key]["us"].items() if nm != "torch.mm")
        print(key, "  ".join(f"{name} {v:.2f}" for name, v in out[key]["us"].items()), f" | best {best[1]} {best[0]:.2f}",
              " bad: " + " ".join(f"{n_}:{e:.1e}" for n_, e in errs.items() if e >= 5e-3), flush=True)
        xs = d = variants = fns = None
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
