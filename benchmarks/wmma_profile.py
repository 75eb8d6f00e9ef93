"""Evidence for where the WMMA GEMM's time goes, in one device call (scripts/wmma_device_profile.sh runs it).

    python3 benchmarks/wmma_profile.py time --out variants.json   # candidate tiles side by side + bf16 check
    python3 benchmarks/wmma_profile.py sustain --seconds 8         # SM clock and power under a long 8192^3 run
    ncu ... python3 benchmarks/wmma_profile.py ncu                 # one warm-up and one profiled 8192^3 launch
"""

import argparse
import subprocess
import time

from fraglab import bench
from fraglab.bench import peak, wmma_suite
from fraglab.gemm import wmma as gemm_wmma
from fraglab.runtime import gpu

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=("time", "sustain", "ncu"))
ap.add_argument("--out")
ap.add_argument("--seconds", type=float, default=8.0)
ap.add_argument("--tiles", default="256x128,256x128s4,256x128g4,256x128g16")
ap.add_argument("--sizes", default="4096,8192")
ap.add_argument("--tile", default="256x128", help="ncu/sustain: the tile to run")
args = ap.parse_args()
cp = gpu.cupy()


def relu_inputs(size, dtype="f16", seed=0):
    return wmma_suite.make_inputs(cp, size, size, size, dtype, has_c=False, bias_mode="per_n", seed=seed)


def launcher(spec, x, d, bias):
    return lambda i: gemm_wmma.launch(spec, x[i]["a"], x[i]["b"], d, bias=x[i]["bias"] if bias else None)


if args.mode == "ncu":
    spec = gemm_wmma.WmmaKernelSpec("f16", "relu", "per_n", tile=args.tile)
    x = [relu_inputs(8192)]
    d = cp.empty((8192, 8192), dtype=cp.float32)
    for _ in range(2):  # the first is skipped by ncu (--launch-skip 1): compile and warm-up
        launcher(spec, x, d, True)(0)
    cp.cuda.runtime.deviceSynchronize()

elif args.mode == "sustain":
    spec = gemm_wmma.WmmaKernelSpec("f16", "relu", "per_n", tile=args.tile)
    x = [relu_inputs(8192, seed=s) for s in range(2)]
    d = cp.empty((8192, 8192), dtype=cp.float32)
    run = launcher(spec, x, d, True)
    run(0)
    cp.cuda.runtime.deviceSynchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,"
                            "clocks_throttle_reasons.active", "--format=csv,noheader", "-lms", "500"],
                           stdout=subprocess.PIPE, text=True)
    start, launches = cp.cuda.Event(), 0
    start.record()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        for _ in range(20):
            run(launches % 2)
            launches += 1
        cp.cuda.runtime.deviceSynchronize()
    stop = cp.cuda.Event()
    stop.record()
    stop.synchronize()
    ms = cp.cuda.get_elapsed_time(start, stop) / launches
    smi.terminate()
    print("\n".join(smi.communicate()[0].splitlines()))
    print(f"sustained {args.tile} relu 8192^3: {launches} launches, {ms:.3f} ms each, "
          f"{bench.tflops(8192, 8192, 8192, ms):.1f} TFLOP/s")

else:
    tiles = args.tiles.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    specs = [gemm_wmma.WmmaKernelSpec("f16", act, bias, tile=t) for t in tiles
             for act, bias in (("none", "none"), ("relu", "per_n"))]
    specs += [gemm_wmma.WmmaKernelSpec("bf16", "relu", "per_n", tile=t) for t in ("256x128", "128x64")]
    print(f"precompiled {len(set(specs))} in {gemm_wmma.precompile(specs):.1f} s", flush=True)
    out = {"device": gpu.device_info(), "ceiling_before": peak.measure(["peak_wmma_f16_f32"]), "rows": [],
           "bf16_check": []}
    print("ceiling before", round(out["ceiling_before"][0]["tflops"], 1), flush=True)
    for size, tile in ((1024, "128x64"), (2048, "256x128"), (4096, "256x128")):  # bf16 through f16 fragments
        x = wmma_suite.make_inputs(cp, size, size, size, "bf16", has_c=False, bias_mode="per_n", seed=3)
        d = cp.full((size, size), cp.nan, dtype=cp.float32)
        gemm_wmma.launch(gemm_wmma.WmmaKernelSpec("bf16", "relu", "per_n", tile=tile), x["a"], x["b"], d,
                         bias=x["bias"])
        cp.cuda.runtime.deviceSynchronize()
        res = wmma_suite.check_against_reference(cp, x, d, None, dtype="bf16", act="relu", bias_mode="per_n",
                                                alpha=1.0, beta=0.0, leaky_slope=0.01)
        out["bf16_check"].append(dict(res, size=size, tile=tile))
        print(f"bf16 {size}^3 {tile} relu per_n: {res['status']} max abs {res['max_err']:.2e}", flush=True)
    for size in sizes:
        m = n = k = size
        sets = bench.rotation_count(2 * (m * k + k * n))
        xs = {dt: [relu_inputs(size, dt, s) for s in range(sets)] for dt in ("f16", "bf16")}
        d = cp.empty((m, n), dtype=cp.float32)
        fns = {}
        for t in tiles:
            for act, bias in (("none", "none"), ("relu", "per_n")):
                fns[(t, act)] = launcher(gemm_wmma.WmmaKernelSpec("f16", act, bias, tile=t), xs["f16"], d,
                                         bias != "none")
        fns[("256x128", "bf16 relu")] = launcher(gemm_wmma.WmmaKernelSpec("bf16", "relu", "per_n", tile="256x128"),
                                                 xs["bf16"], d, True)
        reps = max(5, wmma_suite._reps_for(m, n, k) // 3)
        tm = bench.time_interleaved(fns, rounds=3, reps=reps, rotate=sets)
        for (t, act), timing in tm.items():
            row = {"size": size, "tile": t, "act": act, "ms": timing.median_ms,
                   "tflops": bench.tflops(m, n, k, timing.median_ms)}
            out["rows"].append(row)
            print(f"{size:>5} {t:>11} {act:>9} {row['tflops']:6.1f} TFLOP/s ({row['ms'] * 1e3:8.1f} us)", flush=True)
        xs = d = None
        cp.get_default_memory_pool().free_all_blocks()
    out["ceiling_after"] = peak.measure(["peak_wmma_f16_f32"])
    print("ceiling after", round(out["ceiling_after"][0]["tflops"], 1), flush=True)
    if args.out:
        bench.save_json(out, args.out)
