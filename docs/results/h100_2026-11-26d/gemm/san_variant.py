# block_scale_cases of benchmarks/wgmma_sanitize.py with every kernel built with the -D switches given
import sys
sys.path.insert(0, "."); sys.path.insert(0, "benchmarks")
import numpy as np
from fraglab.gemm import wgmma
from fraglab.runtime import gpu
import wgmma_sanitize

opts = tuple(sys.argv[1:])
cache = {}
def kernel(spec):
    if spec not in cache:
        k = gpu.function(wgmma.build_of((spec.name(),), opts), spec.name())
        if k.max_dynamic_shared_size_bytes < spec.smem_bytes:
            k.max_dynamic_shared_size_bytes = spec.smem_bytes
        cache[spec] = k
    return cache[spec]
wgmma._kernel = kernel
bad = wgmma_sanitize.block_scale_cases(gpu.cupy(), np.random.default_rng(0))
raise SystemExit(1 if bad else 0)
