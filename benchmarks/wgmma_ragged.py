"""Ragged shapes (issue 25 item 1): the wgmma GEMM with each candidate tile and L2 promotion, on the operands as
given and on operands copied into row pitches that are multiples of 128 bytes (with the copy timed alone and
together with the GEMM), a column-major A, against torch.mm and torch._addmm_activation on the same inputs.
f16, bias per column + ReLU, D f16, B row-major unless the key says F. TFLOP/s = 2MNK / median time.

Device: PYTHONPATH=$PWD python3 benchmarks/wgmma_ragged.py OUT.json [SHAPE ...]   (SHAPE as MxNxK)
        PYTHONPATH=$PWD python3 benchmarks/wgmma_ragged.py --final OUT.json
        PYTHONPATH=$PWD python3 benchmarks/wgmma_ragged.py --loaders OUT.json [--head KERNEL.cu]
--final: the issue-25 shapes through fraglab.gemm's road (fraglab.bench.shapes.run_shapes, what `fraglab gemm --bench
--shapes` runs; B row-major) against cuBLAS and cuBLASLt fused, then per shape the scheduled tile against the tile
the schedule gave before 128x192 existed, a column-major A, and the operands at 128-byte row pitches.
--loaders: the same road, then per shape the schedule's choice (A and B on TMA) against the copy loader (cp.async
chunks for each operand whose rows are 16 but not 32 bytes aligned) on the candidate tiles, the operands at 128-byte
pitches (A and B only, and A, B and D), and with --head the kernel source given (e.g. `git show
HEAD:kernels/gemm/wgmma.cu` of before the copy loader, launched with its own parameters) on the scheduled spec.
Device: HEAD_KERNEL=KERNEL.cu bash scripts/device.sh copy_loader runs it with the copy loader's tests and sanitizers.
--clusters OUT.json [SHAPE ...] [--names]: each shape on clusters of two (128x256c2, 128x192c2, 128x128c2; small
shapes the 64-row and 128x128 tiles) and one-block tiles beside the schedule's choice; --names: which kernels
torch.mm and torch._addmm_activation run (cuBLAS's tile, cluster and split-K are in the names).
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


def operand_sets(m, n, k):
    """Input sets (rotated so no launch reads what the last one left in L2): A, B, bias f32, bias f16, D."""
    sets = max(1, min(4, (200 << 20) // ((m * k + k * n) * 2)))
    a = [torch.rand(m, k, device="cuda").sub_(0.5).half() for _ in range(sets)]
    b = [torch.rand(k, n, device="cuda").sub_(0.5).half() for _ in range(sets)]
    bias = [torch.rand(n, device="cuda") for _ in range(sets)]
    return sets, a, b, bias, [x.half() for x in bias], torch.empty(m, n, device="cuda", dtype=torch.float16)


def timed(m, n, k, sets, a, b, bias16, fns: dict, label: str = "") -> dict:
    """Time fns (name -> fn(i)) with torch.mm and torch._addmm_activation on the same inputs, interleaved (CUDA
    events, medians); print them against Lt fused; TFLOP/s and us per name."""
    calls = dict(fns)
    calls["torch.mm"] = lambda i: torch.mm(a[i], b[i])
    calls["addmm_act"] = lambda i: torch._addmm_activation(bias16[i], a[i], b[i])
    ms = time_kernels(torch, calls, sets)
    r = {key: {"tflops": 2.0 * m * n * k / v / 1e9, "us": v * 1e3} for key, v in ms.items()}
    lt = r["addmm_act"]["tflops"]
    print(f"== {m}x{n}x{k} (sets {sets}){label}", flush=True)
    for key, v in sorted(r.items(), key=lambda kv: -kv[1]["tflops"]):
        print(f"  {key:34s} {v['tflops']:7.0f} TFLOP/s {v['us']:9.1f} us  {v['tflops'] / lt:5.2f}x Lt", flush=True)
    return r


def bound(s, a, b, d, bias, **pitches):
    """fn(i): the launch of spec s on input set i."""
    ls = [wgmma.bind(s, a[i], b[i], d, bias=bias[i], **pitches) for i in range(len(a))]
    return lambda i: ls[i](None)


def with_loads(s, a_load, b_load):
    return wgmma.WgmmaKernelSpec(**{**s.__dict__, "a_load": a_load, "b_load": b_load})


def main() -> None:
    gpu.cupy()
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
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        ap = [padded(x, round_up(k)) for x in a]
        bp = [padded(x, round_up(n)) for x in b]
        dp = padded(d, round_up(n))
        aF = [x.t().contiguous().t() for x in a]          # column-major A, same values
        fns = {}
        for label, tile, promo in cases:
            s = spec(m, n, k, tile, promo)
            fns[f"{label}/{promo or s.l2_promotion}" if tile else f"sched {s.tile}/{s.l2_promotion}"] = \
                bound(s, a, b, d, bias)
            if tile and promo == "256B":   # operands and D at 128-byte row pitches
                fns[f"{label}/pad ABD"] = bound(s, ap, bp, dp, bias, lda=round_up(k), ldb=round_up(n),
                                                ldd=round_up(n))
                pad_ab = bound(s, ap, bp, d, bias, lda=round_up(k), ldb=round_up(n))
                fns[f"{label}/pad AB"] = pad_ab

                def copy_then(i, launch=pad_ab):
                    ap[i].copy_(a[i])
                    bp[i].copy_(b[i])
                    launch(i)
                fns[f"{label}/copy AB + pad AB"] = copy_then
        if m % 8 == 0:   # a column-major A's rows (M long) must be 16-byte multiples
            sF = spec(m, n, k, a_order="F")
            fns[f"A col-major sched {sF.tile}"] = bound(sF, aF, b, d, bias)
        fns["copy A"] = lambda i: ap[i].copy_(a[i])
        fns["copy B"] = lambda i: bp[i].copy_(b[i])
        res[f"{m}x{n}x{k}"] = timed(m, n, k, sets, a, b, b16, fns)
        del a, b, ap, bp, aF, d, dp, fns
        torch.cuda.empty_cache()
    Path(sys.argv[1]).write_text(json.dumps(res, indent=1))


# the tile the schedule gave before 128x192 (and the useful-share score) existed
EARLIER_TILE = {(3000, 3000, 3000): "128x256", (1000, 1000, 1000): "128x128", (5000, 3000, 2000): "128x256",
                (4095, 4096, 4096): "128x256", (3072, 3072, 3072): "128x128", (4096, 4096, 4096): "128x256",
                (8192, 8192, 8192): "128x256"}
REPLACED_TILE = {"192x192c2": "128x192c2"}
ISSUE_ROWS = [(16, 4096, 4096), (1, 4096, 4096), (64, 4096, 4096), (128, 8192, 8192)]


def road(shapes) -> dict:
    """The shapes through fraglab.gemm's road (what `fraglab gemm --bench --shapes` runs) against cuBLAS / Lt."""
    from fraglab.bench.shapes import run_shapes

    result = run_shapes(shapes, act="relu", bias_mode="per_n", out_dtype="f16", b_order="C")
    print("fraglab.gemm road, B row-major, f16 bias + ReLU, D f16 (TFLOP/s):", flush=True)
    for r in result["rows"]:
        print(f"  {r['m']}x{r['n']}x{r['k']:<6} tile {r['tile']:9s} fraglab {r['fraglab']:6.0f} cuBLAS {r['cublas']:6.0f} "
              f"Lt fused {r.get('lt_fused') or 0:6.0f}  /cuBLAS {r['vs_cublas']:.2f} /Lt {r['vs_lt_fused'] or 0:.2f}",
              flush=True)
    return result


def final() -> dict:
    from fraglab.bench.shapes import Shape

    gpu.cupy()
    result = road([Shape("ragged", *s) for s in SHAPES] + [Shape("issue", *s) for s in ISSUE_ROWS])
    variants = {}
    for (m, n, k), earlier in EARLIER_TILE.items():
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        now = spec(m, n, k)
        fns = {f"scheduled {now.tile}": bound(now, a, b, d, bias)}
        if earlier != now.tile:
            fns[f"earlier {earlier}"] = bound(spec(m, n, k, earlier), a, b, d, bias)
        if now.tile in REPLACED_TILE:   # the tile the schedule gave before 192-row tiles existed
            fns[REPLACED_TILE[now.tile]] = bound(spec(m, n, k, REPLACED_TILE[now.tile]), a, b, d, bias)
        if m % 8 == 0:
            fns["A column-major"] = bound(spec(m, n, k, a_order="F"), [x.t().contiguous().t() for x in a], b, d,
                                          bias)
        if (k * 2) % 32 or (n * 2) % 32:
            ap = [padded(x, round_up(k)) for x in a]
            bp = [padded(x, round_up(n)) for x in b]
            fns[f"{now.tile} rows at 128-byte pitches"] = bound(spec(m, n, k, now.tile, "256B"), ap, bp,
                                                                padded(d, round_up(n)), bias, lda=round_up(k),
                                                                ldb=round_up(n), ldd=round_up(n))
        variants[f"{m}x{n}x{k}"] = timed(m, n, k, sets, a, b, b16, fns)
        del a, b, d, fns
        torch.cuda.empty_cache()
    return {"road": result, "variants": variants}


COPY_TILES = ("128x256", "128x192", "128x128", "64x128p", "128x64")


def head_launch(path: str):
    """(spec, packed launch[, name]) -> the same launch on the kernel compiled from `path` (a wgmma.cu of before the
    copy loader: its parameters are the first 21 of today's, and the launch passes today's; CUDA reads its own
    count); `name`: the instantiation's name in that source where its template arguments differ from today's."""
    class HeadBuild(wgmma.WgmmaBuild):
        def source_text(self) -> str:
            return wgmma.accumulator_header() + f'#include "{Path(path).resolve()}"\n'

    def rebind(s, launch, name=None):
        name = name or s.name()
        kernel = gpu.function(HeadBuild(wgmma.ENTRY, (name,)), name)
        if kernel.max_dynamic_shared_size_bytes < s.smem_bytes:
            kernel.max_dynamic_shared_size_bytes = s.smem_bytes
        launch.function = kernel.kernel.ptr
        return launch

    return rebind


def loaders() -> dict:
    """The copy loader against the TMA path, per shape and tile, in one process (see the module docstring)."""
    from fraglab.bench.shapes import Shape

    gpu.cupy()
    rebind = head_launch(sys.argv[sys.argv.index("--head") + 1]) if "--head" in sys.argv else None
    result = road([Shape("ragged", *s) for s in SHAPES])
    variants = {}
    for m, n, k in SHAPES:
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        now = spec(m, n, k)
        fns = {f"scheduled {now.tile} (TMA)": bound(now, a, b, d, bias)}
        # A's rows are K halves long, B's (row-major) N: copied where not a multiple of 32 bytes
        loads = tuple("copy" if (2 * extent) % 32 else "tma" for extent in (k, n))
        if "copy" in loads:
            tiles = [t for t in COPY_TILES if t not in ("64x128p", "128x64") or m * n <= 4e6]
            for t in tiles:
                fns[f"{t} {loads[0]}/{loads[1]}"] = bound(with_loads(spec(m, n, k, t), *loads), a, b, d, bias)
            ap = [padded(x, round_up(k)) for x in a]
            bp = [padded(x, round_up(n)) for x in b]
            pad = spec(m, n, k, now.tile, "256B")
            fns[f"{now.tile} TMA pad AB"] = bound(pad, ap, bp, d, bias, lda=round_up(k), ldb=round_up(n))
            fns[f"{now.tile} TMA pad ABD"] = bound(pad, ap, bp, padded(d, round_up(n)), bias, lda=round_up(k),
                                                   ldb=round_up(n), ldd=round_up(n))
        if rebind is not None:
            ls = [rebind(now, wgmma.bind(now, a[i], b[i], d, bias=bias[i], shared=False)) for i in range(sets)]
            fns[f"{now.tile} committed kernel (TMA)"] = lambda i, ls=ls: ls[i](None)
        variants[f"{m}x{n}x{k}"] = timed(m, n, k, sets, a, b, b16, fns)
        del a, b, d, fns
        torch.cuda.empty_cache()
    return {"road": result, "variants": variants}


CLUSTER_TILES = ("128x256c2", "128x192c2", "128x128c2")
VARIANT_TILES = tuple(t for t in sys.argv if t in wgmma.EXPERIMENTAL_TILES)   # named after the shapes
SMALL_TILES = ("128x128", "128x128c2", "64x128p", "64x128pc2", "64x64p", "64x64pc2", "128x64")
CUBLAS_SHAPES = [(3000, 3000, 3000), (5000, 3000, 2000), (1000, 1000, 1000), (4095, 4096, 4096), (8, 4096, 4096),
                 (32, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (128, 4096, 14336)]


def cublas_kernels() -> dict:
    """Which kernels torch.mm and torch._addmm_activation launch per shape (B row-major and column-major): the
    names carry cuBLAS's tile, cluster and split-K choice."""
    from torch.profiler import ProfilerActivity, profile

    names = {}
    for m, n, k in CUBLAS_SHAPES:
        a = torch.rand(m, k, device="cuda").half()
        for order, b in (("C", torch.rand(k, n, device="cuda").half()),
                         ("F", torch.rand(n, k, device="cuda").half().t())):
            bias = torch.rand(n, device="cuda").half()
            for label, fn in (("torch.mm", lambda: torch.mm(a, b)),
                              ("addmm_act", lambda: torch._addmm_activation(bias, a, b))):
                fn()
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    fn()
                    torch.cuda.synchronize()
                kernels = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
                names[f"{m}x{n}x{k} B {order} {label}"] = kernels
                print(f"  {m}x{n}x{k} B {order} {label:9s} {' | '.join(kernels)}", flush=True)
    return names


def clusters() -> dict:
    """The shapes given (MxNxK after the JSON path; default SHAPES) on clusters of two (B crosses from L2 to the SMs
    once per cluster) and one-block tiles against the schedule's tile, both L2 promotions where rows are misaligned;
    with --names, the kernels cuBLAS runs for CUBLAS_SHAPES."""
    gpu.cupy()
    variants = {}
    for m, n, k in [tuple(int(v) for v in a.split("x")) for a in sys.argv[3:] if a not in wgmma.ALL_TILES and a[0].isdigit()] or SHAPES:
        sets, a, b, bias, b16, d = operand_sets(m, n, k)
        now = spec(m, n, k)
        fns = {f"scheduled {now.tile}/{now.l2_promotion}": bound(now, a, b, d, bias)}
        small = m * n <= 4e6
        tiles = SMALL_TILES if small else CLUSTER_TILES + ("128x256", "128x192") + VARIANT_TILES
        for t in tiles:
            for promo in ("none", "128B", "256B"):
                fns[f"{t}/{promo}"] = bound(spec(m, n, k, t, promo), a, b, d, bias)
        variants[f"{m}x{n}x{k}"] = timed(m, n, k, sets, a, b, b16, fns)
        del a, b, d, fns
        torch.cuda.empty_cache()
    return {"variants": variants, "cublas_kernels": cublas_kernels() if "--names" in sys.argv else None}


if __name__ == "__main__":
    if sys.argv[1] == "--clusters":
        Path(sys.argv[2]).write_text(json.dumps(clusters(), indent=1, default=str))
    elif sys.argv[1] == "--final":
        Path(sys.argv[2]).write_text(json.dumps(final(), indent=1, default=str))
    elif sys.argv[1] == "--loaders":
        Path(sys.argv[2]).write_text(json.dumps(loaders(), indent=1, default=str))
    else:
        main()
