"""Small WMMA GEMM launches for compute-sanitizer (memcheck, racecheck): edges, K tails, both paths.

    compute-sanitizer --tool memcheck python3 scripts/wmma_sanitize.py
Prints one line per case with the check against float64; exit 1 if any check fails.
"""

import sys

import numpy as np

import fraglab
from fraglab import bench
from fraglab.bench import peak, wmma_suite
from fraglab.runtime import gpu
from fraglab.gemm.reference import check_result, reference_gemm

CASES = [  # (m, n, k, dtype, act, bias, has_c, save_z)
    (130, 264, 72, "f16", "gelu", "full", True, True),      # aligned, edge tiles in M and N
    (37, 45, 21, "f16", "gelu", "full", True, True),        # generic path, every edge
    (257, 136, 1032, "bf16", "relu", "per_n", False, False),
    (1, 1, 1, "bf16", "silu", "per_m", True, False),
    (300, 520, 40, "f16", "tanh", "per_m", False, True),    # 2 x 5 blocks of 256x128 (forced below)
]


def main() -> int:
    cp = gpu.cupy()
    failed = 0
    for i, (m, n, k, dtype, act, bias_mode, has_c, save_z) in enumerate(CASES):
        rng = np.random.default_rng(i)
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        if dtype == "f16":
            a_d, b_d = cp.asarray(a.astype(np.float16)), cp.asarray(b.astype(np.float16))
            input_dtype = None
        else:
            a_d, b_d = wmma_suite.to_bf16_bits(cp, cp.asarray(a)), wmma_suite.to_bf16_bits(cp, cp.asarray(b))
            input_dtype = "bf16"
        a64 = wmma_suite.host_float64(a_d, dtype, input_dtype == "bf16")
        b64 = wmma_suite.host_float64(b_d, dtype, input_dtype == "bf16")
        c = rng.uniform(-1, 1, (m, n)).astype(np.float32) if has_c else None
        shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
        bias = rng.uniform(-1, 1, shape).astype(np.float32) if shape else None
        out = cp.full((m, n), cp.nan, dtype=cp.float32)
        res = fraglab.gemm(a_d, b_d, c=cp.asarray(c) if has_c else None, bias=cp.asarray(bias) if shape else None,
                           bias_mode=bias_mode, act=act, beta=0.5 if has_c else 0.0, save_z=save_z, out=out,
                           input_dtype=input_dtype, tile="256x128" if i == 4 else None)
        d = res[0] if save_z else res
        d_ref, z_ref = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act,
                                      beta=0.5 if has_c else 0.0)
        ok, max_abs, rel = check_result(d.get(), d_ref, dtype, z_ref=z_ref)
        failed += not ok
        print(f"{m}x{n}x{k} {dtype} {act} {bias_mode} C={has_c} Z={save_z}: {'PASSED' if ok else 'FAILED'} "
              f"max abs {max_abs:.2e} rel {rel:.2e}")
    rows = peak.measure(iters=4, reps=1)          # every probe once, a few iterations
    print("peak probes ran:", ", ".join(r["kernel"] for r in rows))
    bench.queue_spin(1000)
    cp.cuda.runtime.deviceSynchronize()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
