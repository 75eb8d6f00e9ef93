"""Does the epilogue cost at 8192^3 depend on what runs around the GEMM? The WMMA suite's fused/plain pair
timed with and without the cuBLAS/torch baselines in the same interleaved rounds.

    PYTHONPATH=$PWD python3 benchmarks/wmma_order_effect.py
"""

from fraglab.bench import wmma_suite

for baselines in (True, False, True, False):
    res = wmma_suite.run_suite([(8192, 8192, 8192)], act="relu", bias_mode="per_n", check=False, baselines=baselines)
    s = res["summary"][0]
    print(f"baselines={baselines!s:5}: fused {s['wmma_fused_tflops']:.1f}  plain {s['wmma_plain_tflops']:.1f}  "
          f"epilogue cost {s['epilogue_cost']:+.3f}", flush=True)
