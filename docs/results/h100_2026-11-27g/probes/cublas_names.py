"""cuBLAS's kernel for each shape (torch.mm and torch._addmm_activation), from the profiler, with its CUDA time.
argv[1]: "M,N,K,ORDER;..." ."""
import sys
import torch
from torch.profiler import profile, ProfilerActivity

for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    a = torch.rand(m, k, device="cuda", dtype=torch.float16) - 0.5
    w = torch.rand(n, k, device="cuda", dtype=torch.float16) - 0.5
    b = w.t() if order == "F" else w.t().contiguous()
    bias = torch.rand(n, device="cuda", dtype=torch.float16)
    for name, fn in (("mm", lambda: torch.mm(a, b)), ("fused", lambda: torch._addmm_activation(bias, a, b))):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                fn()
            torch.cuda.synchronize()
        evs = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
        desc = "; ".join(f"{e.key[:90]} x{e.count} {e.device_time_total / e.count:.1f}us" for e in evs)
        print(f"{m}x{n}x{k} {order} {name}: {desc}", flush=True)
