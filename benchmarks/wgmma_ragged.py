"""Ragged shapes (issue 25 item 1): the wgmma GEMM with each candidate tile and L2 promotion, on the operands as
given and on operands copied into row pitches that are multiples of 128 bytes (with the copy timed alone and
together with the GEMM), a column-major A, against torch.mm and torch._addmm_activation on the same inputs.
f16, bias per column + ReLU, D f16, B row-major unless the key says F. TFLOP/s = 2MNK / median time.

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_ragged.py OUT.json [SHAPE ...]   (SHAPE as MxNxK)
        PYTHONPATH=$PWD python3 benchmarks/wgmma_ragged.py --final OUT.json
--final: the issue-25 shapes through fraglab.gemm's road (fraglab.bench.shapes.run_shapes, what `fraglab gemm --bench
--shapes` runs; B row-major) against cuBLAS and cuBLASLt fused, then per shape the scheduled tile against the tile
the schedule gave before 128x192 existed, a column-major A, and the operands at 128-byte row pitches.
"""
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402
from wgmma_suite import time_kernels  # noqa: E402

SHAPES = [(3000, 3000, 3000), (5000, 3000, 2000), (1000, 1000, 1000), (4095, 4096, 4096), (3072, 3072, 3072),
          (4096, 4096, 4096), (8192, 8192, 8192)]
TILES = ("128x256", "128x192", "128x128", "256x128", "64x128p", "128x64")


def padded(x, width):
    """x (rows, cols) copied into the first cols of rows `width` elements apart: the view and its buffer."""
    buf = torch.empty(x.shape[0], width, device=x.device, dtype=x.dtype)
    view = buf[:, :x.shape[1]]
    view.copy_(x)
    return view


def round_up(v, q=64):
    return -(-v // q) * q


def spec(m, n, k, tile=None, promo=None, a_order="C", b_order="C"):
    s = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", tile=tile, out_dtype="f16", b_order=b_order,
                       a_order=a_order)
    return s if promo is None else wgmma.WgmmaKernelSpec(**{**s.__dict__, "l2_promotion": promo})


def main() -> None:
    cp = gpu.cupy()
    shapes = [tuple(int(v) for v in a.split("x")) for a in sys.argv[2:]] or SHAPES
    plans = {}
    for m, n, k in shapes:
        big = m * n * k >= 2e9
        tiles = [t for t in TILES if (t != "64x128p" or m * n <= 4e6) and (t != "128x64" or not big)]
        cases = [("sched", None, None)] + [(t, t, p) for t in tiles for p in ("256B", "none")]
        plans[(m, n, k)] = cases
    specs = {spec(m, n, k, t, p).build() for (m, n, k), cases in plans.items() for _, t, p in cases}
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, specs))
    res = {}
    for (m, n, k), cases in plans.items():
        sets = max(1, min(4, (200 << 20) // ((m * k + k * n) * 2)))
        a = [torch.rand(m, k, device="cuda").sub_(0.5).half() for _ in range(sets)]
        b = [torch.rand(k, n, device="cuda").sub_(0.5).half() for _ in range(sets)]
        bias = [torch.rand(n, device="cuda") for _ in range(sets)]
        b16 = [x.half() for x in bias]
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        ap = [padded(x, round_up(k)) for x in a]
        bp = [padded(x, round_up(n)) for x in b]
        dp = padded(d, round_up(n))
        aF = [x.t().contiguous().t() for x in a]          # column-major A, same values
        fns = {}
        for label, tile, promo in cases:
            s = spec(m, n, k, tile, promo)
            ls = [wgmma.bind(s, a[i], b[i], d, bias=bias[i]) for i in range(sets)]
            fns[f"{label}/{promo or s.l2_promotion}" if tile else f"sched {s.tile}/{s.l2_promotion}"] = \
                lambda i, ls=ls: ls[i](None)
            if tile and promo == "256B":   # operands and D at 128-byte row pitches
                lsp = [wgmma.bind(s, ap[i], bp[i], dp, bias=bias[i], lda=round_up(k), ldb=round_up(n),
                                  ldd=round_up(n)) for i in range(sets)]
                fns[f"{label}/pad ABD"] = lambda i, ls=lsp: ls[i](None)
                lsq = [wgmma.bind(s, ap[i], bp[i], d, bias=bias[i], lda=round_up(k), ldb=round_up(n))
                       for i in range(sets)]
                fns[f"{label}/pad AB"] = lambda i, ls=lsq: ls[i](None)
                lsq2 = lsq

                def copy_then(i, ls=lsq2):
                    ap[i].copy_(a[i])
                    bp[i].copy_(b[i])
                    ls[i](None)
                fns[f"{label}/copy AB + pad AB"] = copy_then
        if m % 8 == 0:   # a column-major A's rows (M long) must be 16-byte multiples
            sF = spec(m, n, k, a_order="F")
            lsF = [wgmma.bind(sF, aF[i], b[i], d, bias=bias[i]) for i in range(sets)]
            fns[f"A col-major sched {sF.tile}"] = lambda i: lsF[i](None)
        fns["copy A"] = lambda i: ap[i].copy_(a[i])
        fns["copy B"] = lambda i: bp[i].copy_(b[i])
        fns["torch.mm"] = lambda i: torch.mm(a[i], b[i])
        fns["addmm_act"] = lambda i: torch._addmm_activation(b16[i], a[i], b[i])
        ms = time_kernels(torch, fns, sets)
        r = {key: {"tflops": 2.0 * m * n * k / v / 1e9, "us": v * 1e3} for key, v in ms.items()}
        res[f"{m}x{n}x{k}"] = r
        lt = r["addmm_act"]["tflops"]
        print(f"== {m}x{n}x{k} (sets {sets})", flush=True)
        for key, v in sorted(r.items(), key=lambda kv: -kv[1]["tflops"]):
            print(f"  {key:28s} {v['tflops']:7.0f} TFLOP/s {v['us']:9.1f} us  {v['tflops'] / lt:5.2f}x Lt", flush=True)
        del a, b, ap, bp, aF, d, dp, fns
        torch.cuda.empty_cache()
    Path(sys.argv[1]).write_text(json.dumps(res, indent=1))


# the tile the schedule gave before 128x192 (and the useful-share score) existed
EARLIER_TILE = {(3000, 3000, 3000): "128x256", (1000, 1000, 1000): "128x128", (5000, 3000, 2000): "128x256",
                (4095, 4096, 4096): "128x256", (3072, 3072, 3072): "128x128", (4096, 4096, 4096): "128x256",
                (8192, 8192, 8192): "128x256"}
ISSUE_ROWS = [(16, 4096, 4096), (1, 4096, 4096), (64, 4096, 4096), (128, 8192, 8192)]


def final() -> dict:
    from fraglab.bench.shapes import Shape, run_shapes

    gpu.cupy()
    shapes = [Shape("ragged", *s) for s in SHAPES] + [Shape("issue", *s) for s in ISSUE_ROWS]
    road = run_shapes(shapes, act="relu", bias_mode="per_n", out_dtype="f16", b_order="C")
    print("fraglab.gemm road, B row-major, f16 bias + ReLU, D f16 (TFLOP/s):", flush=True)
    for r in road["rows"]:
        print(f"  {r['m']}x{r['n']}x{r['k']:<6} tile {r['tile']:9s} fraglab {r['fraglab']:6.0f} cuBLAS {r['cublas']:6.0f} "
              f"Lt fused {r.get('lt_fused') or 0:6.0f}  /cuBLAS {r['vs_cublas']:.2f} /Lt {r['vs_lt_fused'] or 0:.2f}",
              flush=True)
    variants = {}
    for (m, n, k), earlier in EARLIER_TILE.items():
        sets = max(1, min(4, (200 << 20) // ((m * k + k * n) * 2)))
        a = [torch.rand(m, k, device="cuda").sub_(0.5).half() for _ in range(sets)]
        b = [torch.rand(k, n, device="cuda").sub_(0.5).half() for _ in range(sets)]
        bias = [torch.rand(n, device="cuda") for _ in range(sets)]
        b16 = [x.half() for x in bias]
        d = torch.empty(m, n, device="cuda", dtype=torch.float16)
        now = spec(m, n, k)
        fns = {f"scheduled {now.tile}": [wgmma.bind(now, a[i], b[i], d, bias=bias[i]) for i in range(sets)]}
        if earlier != now.tile:
            old = spec(m, n, k, earlier)
            fns[f"earlier {earlier}"] = [wgmma.bind(old, a[i], b[i], d, bias=bias[i]) for i in range(sets)]
        if m % 8 == 0:
            aF = [x.t().contiguous().t() for x in a]
            sF = spec(m, n, k, a_order="F")
            fns["A column-major"] = [wgmma.bind(sF, aF[i], b[i], d, bias=bias[i]) for i in range(sets)]
        if (k * 2) % 32 or (n * 2) % 32:
            ap = [padded(x, round_up(k)) for x in a]
            bp = [padded(x, round_up(n)) for x in b]
            dp = padded(d, round_up(n))
            pad = spec(m, n, k, now.tile, "256B")
            fns[f"{now.tile} rows at 128-byte pitches"] = [
                wgmma.bind(pad, ap[i], bp[i], dp, bias=bias[i], lda=round_up(k), ldb=round_up(n), ldd=round_up(n))
                for i in range(sets)]
        calls = {name: (lambda i, ls=ls: ls[i](None)) for name, ls in fns.items()}
        calls["torch.mm"] = lambda i: torch.mm(a[i], b[i])
        calls["addmm_act"] = lambda i: torch._addmm_activation(b16[i], a[i], b[i])
        ms = time_kernels(torch, calls, sets)
        r = {key: 2.0 * m * n * k / v / 1e9 for key, v in ms.items()}
        variants[f"{m}x{n}x{k}"] = r
        print(f"== {m}x{n}x{k}: " + ", ".join(f"{key} {v:.0f} ({v / r['addmm_act']:.2f}x Lt)" for key, v in r.items()),
              flush=True)
        del a, b, d, fns, calls
        torch.cuda.empty_cache()
    return {"road": road, "variants": variants}


if __name__ == "__main__":
    if sys.argv[1] == "--final":
        Path(sys.argv[2]).write_text(json.dumps(final(), indent=1, default=str))
    else:
        main()
