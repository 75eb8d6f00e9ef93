import cProfile, pstats, sys, io
import torch, torch.nn.functional as F
sys.path.insert(0, ".")
import fraglab, fraglab.torch as fl
from fraglab.bench.call_timing import per_call_us
sync = torch.cuda.synchronize
torch.manual_seed(0)
with torch.no_grad():
    for m, n, k in ((8, 4096, 4096), (64, 4096, 4096), (256, 256, 256)):
        x = torch.randn(m, k, device="cuda", dtype=torch.float16)
        wide = torch.randn(m, k + 2048, device="cuda", dtype=torch.float16)
        xs = wide[:, :k]
        w = torch.randn(n, k, device="cuda", dtype=torch.float16) / 64
        rows = {
            "F.linear": lambda: F.linear(x, w),
            "F.linear strided x": lambda: F.linear(xs, w),
            "fl.linear": lambda: fl.linear(x, w),
            "fl.linear relu": lambda: fl.linear(x, w, act="relu"),
            "fl.linear strided x": lambda: fl.linear(xs, w),
            "torch.ops.fraglab.gemm": lambda: torch.ops.fraglab.gemm(x, w.t(), None, None, "none", "none", 1.0, 0.0, 0.01, False, torch.float16),
            "fraglab.gemm(torch)": lambda: fraglab.gemm(x, w.t(), out_dtype="f16"),
            "fraglab.gemm(torch) strided": lambda: fraglab.gemm(xs, w.t(), out_dtype="f16"),
        }
        for name, fn in rows.items():
            try:
                print(f"{m}x{n}x{k} {name:32s} {per_call_us(fn, sync):8.1f} us", flush=True)
            except Exception as e:
                print(f"{m}x{n}x{k} {name:32s} ERROR {type(e).__name__}: {e}", flush=True)
    x = torch.randn(8, 4096, device="cuda", dtype=torch.float16)
    w = torch.randn(4096, 4096, device="cuda", dtype=torch.float16) / 64
    for label, fn in (("fl.linear", lambda: fl.linear(x, w)), ("fraglab.gemm", lambda: fraglab.gemm(x, w.t(), out_dtype="f16"))):
        for _ in range(50): fn()
        sync()
        pr = cProfile.Profile(); pr.enable()
        for _ in range(500): fn()
        sync(); pr.disable()
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(22); print("==", label); print(s.getvalue()[:6000])
