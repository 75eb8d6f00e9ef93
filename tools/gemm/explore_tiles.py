"""Time candidate WMMA tiles (plain store and fused bias+ReLU) at several sizes, plus the baselines once.

    PYTHONPATH=$PWD python3 tools/gemm/explore_tiles.py --out $OUT/explore.json
"""

import argparse
import time

from fraglab import bench, gemm_wmma, gpu

ap = argparse.ArgumentParser()
ap.add_argument("--sizes", default="1024,2048,4096,8192")
ap.add_argument("--tiles", default="128x256,128x128,128x256k64,128x128k64,256x128k64,64x128k64")
ap.add_argument("--out", required=True)
args = ap.parse_args()
sizes = [(s, s, s) for s in map(int, args.sizes.split(","))]
tiles = args.tiles.split(",")

cp = gpu.cupy()
specs = [gemm_wmma.WmmaKernelSpec("f16", act, bias, tile=t) for t in tiles
         for act, bias in (("none", "none"), ("relu", "per_n"), ("gelu", "per_n"))]
print(f"precompiled {len(specs)} in {gemm_wmma.precompile(specs):.1f} s", flush=True)
out = {"device": gpu.device_info(), "runs": []}
for t in tiles:
    t0 = time.perf_counter()
    res = gemm_wmma.run_suite(sizes, dtype="f16", act="relu", bias_mode="per_n", tile=t, check=True, bench=True,
                              baselines=(t == tiles[0]))
    out["runs"].append({"tile": t, "act": "relu", **res})
    for s in res["summary"]:
        print(f"{t:>11} {s['m']:>5} relu+bias fused {s['wmma_fused_tflops']:7.1f} plain {s['wmma_plain_tflops']:7.1f}"
              f" cost {s['epilogue_cost']:+.3f} check {s['check']} rel {s['rel_err']:.1e}"
              f" cublas {s['cublas_gemmex_tflops'] or 0:7.1f} unfused {s['cublas_unfused_tflops'] or 0:7.1f}"
              f" torch {s['torch_addmm_act_tflops'] or 0:7.1f} ceiling {res['ceiling_tflops']:.0f}"
              f"  [{time.perf_counter() - t0:.0f}s]", flush=True)
    bench.save_json(out, args.out)
for t in tiles:
    res = gemm_wmma.run_suite([s for s in sizes if s[0] in (2048, 8192)], dtype="f16", act="gelu", bias_mode="per_n", tile=t, check=True, bench=True,
                              baselines=False)
    out["runs"].append({"tile": t, "act": "gelu", **res})
    for s in res["summary"]:
        print(f"{t:>11} {s['m']:>5} gelu+bias fused {s['wmma_fused_tflops']:7.1f} plain {s['wmma_plain_tflops']:7.1f}"
              f" cost {s['epilogue_cost']:+.3f} check {s['check']}", flush=True)
    bench.save_json(out, args.out)
