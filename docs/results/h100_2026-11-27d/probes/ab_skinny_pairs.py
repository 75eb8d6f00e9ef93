"""A/B: the skinny GEMM's reduction loading two pairs per pass (the working tree) against one (the committed kernel,
.carry/skinny_head.cu); per-launch events, weights rotated past L2, beside torch.mm; each checked against float32
first; registers of both."""
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs, launch_error
from fraglab import bench as benchmod
from fraglab.gemm import skinny
from fraglab.runtime import gpu
from fraglab.runtime.build import KernelBuild

HEAD = Path(".carry/skinny_head.cu").resolve()


class HeadBuild(KernelBuild):
    def source_text(self) -> str:
        return f'#include "{HEAD}"\n'


gen = torch.Generator(device="cuda").manual_seed(11)
out = {}
shapes = [(m, 4096, k) for m in (8, 16, 32) for k in (4096, 14336)] + [(32, 11008, 4096), (32, 14336, 4096),
                                                                      (32, 11008, 11008), (1, 4096, 4096)]
for m, n, k in shapes:
    for order in ("F", "C"):
        sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
        spec = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        smem = skinny.smem_bytes(m, spec.layout, spec.stages)
        new = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
        skinny._LAUNCHES.clear()
        b0 = spec.build()
        kernel = gpu.function(HeadBuild(b0.entry, b0.name_expressions, b0.options), spec.name())
        if kernel.max_dynamic_shared_size_bytes < smem:
            kernel.max_dynamic_shared_size_bytes = smem
        head = [skinny.bind(spec, a, b, d, m=m, n=n, k=k, bias=bias) for a, b, bias, _ in xs]
        skinny._LAUNCHES.clear()
        for launch in head:
            launch.function = kernel.kernel.ptr
        variants = {"head": head, "pairs2": new}
        k_new = skinny._kernel(spec, smem)
        regs = (kernel.num_regs, k_new.num_regs)
        fns = {"torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1])}
        errs = {}
        for name, ls in variants.items():
            errs[name] = launch_error(torch, lambda: ls[0](), d, want)
            if errs[name] < 5e-3:
                fns[name] = (lambda ls: (lambda i: ls[i]()))(ls)
        t = benchmod.time_interleaved(fns, rounds=5, reps=30, rotate=sets)
        key = f"{m}x{n}x{k} {order} {spec.tile}"
        out[key] = {"us": {name: v.median_ms * 1e3 for name, v in t.items()}, "err": errs, "regs": regs}
        print(key, "  ".join(f"{name} {v:.2f}" for name, v in out[key]["us"].items()),
              " errs " + " ".join(f"{n_}:{e:.1e}" for n_, e in errs.items()), "regs head/new", regs, flush=True)
        xs = d = variants = fns = None
        torch.cuda.empty_cache()
Path(sys.argv[1]).write_text(json.dumps(out, indent=1))
