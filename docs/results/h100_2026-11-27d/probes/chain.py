"""Back-to-back chains: L launches over rotated weights between one event pair (as a model's layers run), fraglab's
prepared call against torch.mm and torch._addmm_activation on the same inputs; median of R chains, us per GEMM."""
import statistics, sys
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")
import torch
from decode_inputs import decode_inputs
from fraglab.gemm.api import prepare

L, R = 24, 15
gen = torch.Generator(device="cuda").manual_seed(3)
for text in sys.argv[1].split(";"):
    m, n, k, order = text.split(","); m, n, k = int(m), int(n), int(k)
    sets, xs, d, want = decode_inputs(torch, gen, m, n, k, order)
    runs = [prepare(a, b, bias=bias, bias_mode="per_n", act="relu", out=d) for a, b, bias, _ in xs]
    fns = {"fraglab": lambda i: runs[i](), "torch.mm": lambda i: torch.mm(xs[i][0], xs[i][1]),
           "addmm_act": lambda i: torch._addmm_activation(xs[i][3], xs[i][0], xs[i][1])}
    res = {name: [] for name in fns}
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(R + 2):
        for name, f in fns.items():
            for i in range(4): f(i % sets)
            s.record()
            for i in range(L): f(i % sets)
            e.record(); e.synchronize()
            if r >= 2: res[name].append(s.elapsed_time(e) * 1e3 / L)
    med = {name: statistics.median(v) for name, v in res.items()}
    print(f"{text:>18} sets {sets} tile {runs[0].kernel_spec.tile:>18}  " + "  ".join(f"{nm} {v:.2f}" for nm, v in med.items())
          + f"   torch.mm/fraglab {med['torch.mm'] / med['fraglab']:.3f}  lt/fraglab {med['addmm_act'] / med['fraglab']:.3f}", flush=True)
    xs = runs = d = None; torch.cuda.empty_cache()
