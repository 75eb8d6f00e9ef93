"""Candidate WMMA tiles timed side by side (interleaved rounds, same inputs), fused bias+ReLU and GELU
against the plain store, per size. Prints one line per (size, tile).

    PYTHONPATH=$PWD python3 benchmarks/wmma_explore_interleaved.py --out $OUT/explore2.json
"""

import argparse

from fraglab import bench
from fraglab.bench import peak, wmma_suite
from fraglab.gemm import wmma as gemm_wmma
from fraglab.runtime import gpu

ap = argparse.ArgumentParser()
ap.add_argument("--plan", default="1024:64x64k64,64x128k64,128x64k64,128x128k64,128x128;"
                                  "2048:128x128k64,128x128,256x128k64,128x256k64,64x128k64;"
                                  "4096:256x128k64,128x256k64,128x128k64;"
                                  "8192:256x128k64,128x256k64,128x256,128x128k64")
ap.add_argument("--out", required=True)
ap.add_argument("--check-sizes", default="1000x1000x1000,2056x264x520",
                help="before timing, every candidate's GELU + bias kernel is checked at these MxNxK sizes")
ap.add_argument("--rounds", type=int, default=3)
args = ap.parse_args()
plan = [(int(s.split(":")[0]), s.split(":")[1].split(",")) for s in args.plan.split(";")]

cp = gpu.cupy()
specs = []
for size, tiles in plan:
    for t in tiles:
        for act, bias in (("none", "none"), ("relu", "per_n"), ("gelu", "per_n")):
            specs.append(gemm_wmma.WmmaKernelSpec("f16", act, bias, tile=t))
print(f"precompiled {len(set(specs))} in {gemm_wmma.precompile(specs):.1f} s", flush=True)
out = {"device": gpu.device_info(), "checks": [], "rows": []}
for t in sorted({t for _, tiles in plan for t in tiles}):   # candidates must be right before they are timed
    spec = gemm_wmma.WmmaKernelSpec("f16", "gelu", "per_n", tile=t)
    for size in args.check_sizes.split(","):
        m, n, k = (int(v) for v in size.split("x"))
        x = wmma_suite.make_inputs(cp, m, n, k, "f16", has_c=False, bias_mode="per_n", seed=5)
        d = cp.full((m, n), cp.nan, dtype=cp.float32)
        gemm_wmma.launch(spec, x["a"], x["b"], d, bias=x["bias"])
        res = wmma_suite.check_against_reference(cp, x, d, None, dtype="f16", act="gelu", bias_mode="per_n",
                                                alpha=1.0, beta=0.0, leaky_slope=0.01)
        out["checks"].append(dict(res, tile=t, size=size))
        print(f"check {t:>14} {size:>14}: {res['status']} rel {res['rel_err']:.2e}", flush=True)
out["ceiling_before"] = peak.measure(["peak_wmma_f16_f32"])
print("ceiling before", round(out["ceiling_before"][0]["tflops"], 1), flush=True)
for size, tiles in plan:
    m = n = k = size
    per_set = 2 * (m * k + k * n)
    sets = bench.rotation_count(per_set)
    x = [wmma_suite.make_inputs(cp, m, n, k, "f16", has_c=False, bias_mode="per_n", seed=s) for s in range(sets)]
    d = cp.empty((m, n), dtype=cp.float32)
    fns = {}
    for t in tiles:
        for act, bias in (("none", "none"), ("relu", "per_n"), ("gelu", "per_n")):
            spec = gemm_wmma.WmmaKernelSpec("f16", act, bias, tile=t)
            fns[(t, act)] = (lambda i, spec=spec, bias=bias:
                             gemm_wmma.launch(spec, x[i]["a"], x[i]["b"], d, bias=x[i]["bias"] if bias != "none" else None))
    reps = max(5, wmma_suite._reps_for(m, n, k) // 3)
    tm = bench.time_interleaved(fns, rounds=args.rounds, reps=reps, rotate=sets)
    for t in tiles:
        row = {"size": size, "tile": t}
        for act in ("none", "relu", "gelu"):
            row[f"{act}_ms"] = tm[(t, act)].median_ms
            row[f"{act}_tflops"] = bench.tflops(m, n, k, tm[(t, act)].median_ms)
        out["rows"].append(row)
        print(f"{size:>5} {t:>11} plain {row['none_tflops']:6.1f} ({row['none_ms']*1e3:8.1f} us)  relu {row['relu_tflops']:6.1f}"
              f" ({row['relu_ms'] / row['none_ms'] - 1:+.3f})  gelu {row['gelu_tflops']:6.1f}"
              f" ({row['gelu_ms'] / row['none_ms'] - 1:+.3f})", flush=True)
    x = d = None
    cp.get_default_memory_pool().free_all_blocks()
    bench.save_json(out, args.out)
out["ceiling_after"] = peak.measure(["peak_wmma_f16_f32"])
print("ceiling after", round(out["ceiling_after"][0]["tflops"], 1), flush=True)
bench.save_json(out, args.out)
