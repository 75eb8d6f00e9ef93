"""Kernel-only durations via torch.profiler (CUPTI): torch.mm vs fraglab.gemm, weights rotated."""
import sys, statistics
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch, os
SYNC = os.environ.get('SYNC') == '1'
from decode_inputs import decode_inputs
import fraglab
from torch.profiler import profile, ProfilerActivity
gen = torch.Generator(device="cuda").manual_seed(5)
for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    for a, b, bias, _ in xs[:2]:
        fraglab.gemm(a, b, bias=bias, act="relu", out=d); torch.mm(a, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(30):
            if SYNC: torch.cuda.synchronize()
            a, b, bias, _ = xs[i % sets]
            torch.mm(a, b)
        for i in range(30):
            if SYNC: torch.cuda.synchronize()
            a, b, bias, _ = xs[i % sets]
            fraglab.gemm(a, b, bias=bias, act="relu", out=d)
        torch.cuda.synchronize()
    ds = {}
    for e in prof.events():
        if e.device_type.name == "CUDA":
            ds.setdefault(e.name[:60], []).append(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total)
    print(text, {kname: (len(v), round(statistics.median(v), 2)) for kname, v in ds.items() if len(v) >= 20}, flush=True)
