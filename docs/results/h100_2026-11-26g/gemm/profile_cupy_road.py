"""Where the CuPy road's one-shot fraglab.gemm call spends its host time (256^3 f16, relu): cProfile over many
calls, and timings of its pieces."""
import cProfile, pstats, sys, time, io
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cupy as cp
import fraglab
from fraglab.gemm import api, validate
from fraglab.runtime import gpu

n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
a = cp.random.rand(n, n, dtype=cp.float32).astype(cp.float16)
b = cp.random.rand(n, n, dtype=cp.float32).astype(cp.float16)
for _ in range(50):
    fraglab.gemm(a, b, act="relu")
cp.cuda.runtime.deviceSynchronize()

def per_call(fn, calls=2000):
    fn()
    cp.cuda.runtime.deviceSynchronize()
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        cp.cuda.runtime.deviceSynchronize()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best

print(f"cupy.matmul      {per_call(lambda: cp.matmul(a, b)):6.1f} us")
print(f"fraglab.gemm     {per_call(lambda: fraglab.gemm(a, b, act='relu')):6.1f} us")
p = api.prepare(a, b, act="relu")
print(f"prepared()       {per_call(p):6.1f} us")
print(f"prepare()        {per_call(lambda: api.prepare(a, b, act='relu')):6.1f} us")
print(f"cp.empty         {per_call(lambda: cp.empty((n, n), dtype=cp.float16)):6.1f} us")
print(f"validate         {per_call(lambda: validate.validate_gemm_args(a, b, act='relu')):6.1f} us")
print(f"capturing?       {per_call(lambda: gpu.stream_is_capturing(cp.cuda.get_current_stream().ptr)):6.1f} us")
print(f"current stream   {per_call(lambda: cp.cuda.get_current_stream()):6.1f} us")
pr = cProfile.Profile()
pr.enable()
for _ in range(3000):
    fraglab.gemm(a, b, act="relu")
pr.disable()
cp.cuda.runtime.deviceSynchronize()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(35)
print(s.getvalue())
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40)
print(s.getvalue())
