"""Device-side measurements for the FP32 SIMT ladder (run on the GPU machine, from the repo root).

    python3 benchmarks/simt_ladder.py ladder --sizes 4096,8192 --json L.json --plot L.png
    python3 benchmarks/simt_ladder.py threshold --json T.json     # smoke vs tiled rungs on small outputs
    python3 benchmarks/simt_ladder.py variants --sizes 4096,8192 --json V.json  # warp_tiled tile choices
    python3 benchmarks/simt_ladder.py sanitize                     # small launches for compute-sanitizer

The library does the work (fraglab.gemm_simt, fraglab.bench); this script only chooses what to run,
prints tables and writes JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fraglab import bench  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402
from fraglab.bench import simt_ladder  # noqa: E402
from fraglab.gemm import simt  # noqa: E402

COLUMNS = [("kernel", "kernel", ""), ("m", "M", "d"), ("n", "N", "d"), ("k", "K", "d"), ("ms", "ms", ".4f"),
           ("tflops", "TFLOP/s", ".2f"), ("pct_cublas", "% cuBLAS", ".1f"), ("status", "check", ""),
           ("rel_err", "rel err", ".2e")]


def _print(rows, title):
    from rich.console import Console
    Console(width=140).print(bench.rows_table(rows, COLUMNS, title))


def _sizes(text: str):
    out = []
    for part in text.split(","):
        dims = [int(v) for v in part.lower().split("x")]
        out.append(dims[0] if len(dims) == 1 else tuple(dims))
    return out


def cmd_ladder(args):
    with bench.progress(transient=True) as prog:
        rows = simt_ladder.run_ladder(_sizes(args.sizes), kernel=args.kernel, check=True, bench=True, act=args.act,
                               bias_mode=args.bias, beta=args.beta, save_z=args.save_z, progress=prog)
    _print(rows, "FP32 SIMT ladder vs cuBLAS SGEMM")
    out = {"device": gpu.device_info(), "rows": rows}
    if args.json:
        bench.save_json(out, Path(args.json))
    if args.plot:
        bench.plot_tflops(rows, Path(args.plot), "FP32 SIMT ladder vs cuBLAS SGEMM (H200)")


def _time_rung(rung, a, b, d, sets):
    def fn(i):
        simt.launch(rung, a[i], b[i], d)
    return bench.time_cuda(fn, warmup=3, reps=30, rotate=sets)


def _inputs(cp, m, n, k, sets, seed=1):
    rng = cp.random.default_rng(seed)
    a = [rng.random((m, k), dtype=cp.float32) * 2 - 1 for _ in range(sets)]
    b = [rng.random((k, n), dtype=cp.float32) * 2 - 1 for _ in range(sets)]
    return a, b


def cmd_threshold(args):
    """Median time of smoke and the tiled rungs on small outputs: where does smoke stop winning?"""
    cp = gpu.cupy()
    register_variants()
    rungs = ["smoke", "reg_tile_1d", "vectorized", simt.TOP_RUNG]
    also = ["wt_128x128x16_w64x64"]  # the earlier default, timed for comparison only (not in "best")
    shapes = [(s, s) for s in (16, 32, 64, 128, 192, 256, 384, 448, 512, 576, 640, 704, 768, 1024, 1280, 1536,
                               2048, 2560, 3072)]
    shapes += [(8, 4096), (4096, 8), (32, 2048), (2048, 32), (64, 16384), (16384, 64)]
    rows = []
    with bench.progress(transient=True) as prog:
        task = prog.add_task("threshold sweep", total=len(shapes) * 3)
        for k in (64, 512, 4096):
            for m, n in shapes:
                sets = bench.rotation_count(4 * (m * k + k * n + m * n))
                a, b = _inputs(cp, m, n, k, sets)
                d = cp.empty((m, n), dtype=cp.float32)
                row = {"m": m, "n": n, "k": k}
                for rung in (*rungs, *also):
                    row[rung] = _time_rung(rung, a, b, d, sets).median_ms
                row["best"] = min(rungs, key=lambda r: row[r])
                row["smoke_over_top"] = row["smoke"] / row[simt.TOP_RUNG]
                row["mid_over_top"] = row[simt.MID_RUNG] / row[simt.TOP_RUNG]
                rows.append(row)
                del a, b, d
                prog.advance(task)
    from rich.console import Console
    from rich.table import Table
    table = Table(title="smoke vs tiled rungs (median ms)")
    for col in ("M", "N", "K", "M*N", *rungs, *also, "smoke/top", "mid/top", "best"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["m"]), str(r["n"]), str(r["k"]), str(r["m"] * r["n"]),
                      *(f"{r[x]:.4f}" for x in (*rungs, *also)), f"{r['smoke_over_top']:.2f}",
                      f"{r['mid_over_top']:.2f}", r["best"])
    Console(width=180).print(table)
    for k in (64, 512, 4096):
        for low, ratio in (("smoke", "smoke_over_top"), (simt.MID_RUNG, "mid_over_top")):
            wins = [r["m"] * r["n"] for r in rows if r["k"] == k and r[ratio] <= 1.0]
            loses = [r["m"] * r["n"] for r in rows if r["k"] == k and r[ratio] > 1.0]
            print(f"K={k}: {low} beats {simt.TOP_RUNG} up to M*N={max(wins) if wins else 0}, "
                  f"{simt.TOP_RUNG} wins from M*N={min(loses) if loses else 'never'}")
    if args.json:
        bench.save_json({"device": gpu.device_info(), "rows": rows}, Path(args.json))


# warp_tiled tile choices (the default, 128x256x8, among them): (BM, BN, BK, WM, WN, PadA, MinBlocks)
VARIANTS = {
    "wt_128x128x16_w64x64": (128, 128, 16, 64, 64, 4, 2),  # the default before 128x256x8
    "wt_128x128x8_w64x64": (128, 128, 8, 64, 64, 4, 2),
    "wt_128x256x8_w64x64": (128, 256, 8, 64, 64, 4, 1),
    "wt_256x128x8_w64x64": (256, 128, 8, 64, 64, 4, 1),
    "wt_128x128x16_w32x64": (128, 128, 16, 32, 64, 4, 2),
}


def register_variants():
    for name, args in VARIANTS.items():
        bm, bn, _, wm, wn, _, _ = args
        threads = (bm // wm) * (bn // wn) * 32
        simt.RUNG_SPECS[name] = simt.RungSpec(name, "gemm_warp_tiled", args, (threads, 1), (bm, bn), "tile variant")


def cmd_variants(args):
    cp = gpu.cupy()
    register_variants()
    rows = []
    for size in _sizes(args.sizes):
        m, n, k = (size,) * 3 if isinstance(size, int) else size
        sets = bench.rotation_count(4 * (m * k + k * n + m * n))
        a, b = _inputs(cp, m, n, k, sets)
        d = cp.empty((m, n), dtype=cp.float32)
        ref = cp.matmul(a[0].astype(cp.float64), b[0].astype(cp.float64))
        cublas = bench.time_cuda(lambda i: cp.matmul(a[i], b[i], out=d), warmup=3, reps=30, rotate=sets)
        rows.append({"kernel": "cublas_sgemm", "m": m, "n": n, "k": k, "ms": cublas.median_ms,
                     "tflops": bench.tflops(m, n, k, cublas.median_ms), "pct_cublas": 100.0, "status": "-"})
        for name in VARIANTS:
            d.fill(cp.nan)
            simt.launch(name, a[0], b[0], d)
            rel = float(cp.abs(d - ref).max() / cp.abs(ref).max())
            t = _time_rung(name, a, b, d, sets)
            rows.append({"kernel": name, "m": m, "n": n, "k": k, "ms": t.median_ms,
                         "tflops": bench.tflops(m, n, k, t.median_ms),
                         "pct_cublas": 100 * cublas.median_ms / t.median_ms,
                         "status": "PASSED" if rel <= 1e-4 else "FAILED", "rel_err": rel})
    _print(rows, "warp_tiled tile variants")
    edge = _check_variants_on_edges(cp)
    if args.json:
        bench.save_json({"device": gpu.device_info(), "rows": rows, "edge_checks": edge}, Path(args.json))


EDGE_SIZES = [(1, 1, 1), (7, 7, 7), (33, 33, 33), (127, 127, 127), (129, 129, 129), (1000, 1000, 1000),
              (1031, 20, 257), (9, 700, 1000), (300, 260, 33)]
EDGE_EPILOGUES = [("none", "none", 0.0, False), ("relu", "per_n", 0.5, False), ("gelu", "full", -1.0, True)]


def _check_variants_on_edges(cp):
    """The ragged sizes of tests/test_gemm_simt_gpu.py for every variant, so any of them can become the default."""
    from fraglab.gemm.reference import check_result

    results = {name: "PASSED" for name in VARIANTS}
    rng = cp.random.default_rng(11)
    for m, n, k in EDGE_SIZES:
        a = rng.random((m, k), dtype=cp.float32) * 2 - 1
        b = rng.random((k, n), dtype=cp.float32) * 2 - 1
        c = rng.random((m, n), dtype=cp.float32) * 2 - 1
        for act, bias_mode, beta, save_z in EDGE_EPILOGUES:
            shape = {"none": None, "per_n": (n,), "full": (m, n)}[bias_mode]
            bias = rng.random(shape, dtype=cp.float32) * 2 - 1 if shape else None
            c_arg = c if beta != 0.0 else None
            d_ref, z_ref = simt_ladder._reference(a, b, c_arg, bias, bias_mode=bias_mode, act=act, alpha=1.0, beta=beta,
                                           leaky_slope=0.01)
            for name in VARIANTS:
                d = cp.full((m, n), cp.nan, dtype=cp.float32)
                z = cp.full((m, n), cp.nan, dtype=cp.float32) if save_z else None
                simt.launch(name, a, b, d, c=c_arg, bias=bias, bias_mode=bias_mode, act=act, beta=beta, z=z)
                ok, _, rel = check_result(cp.asnumpy(d), d_ref, "f32", z_ref=z_ref if save_z else None)
                if save_z:
                    ok = ok and check_result(cp.asnumpy(z), z_ref, "f32")[0]
                if not ok:
                    results[name] = f"FAILED at {m}x{n}x{k} {act}/{bias_mode}: rel {rel:.3g}"
    for name, verdict in results.items():
        print(f"edge check {name}: {verdict}")
    return results


def cmd_sanitize(args):
    """Every rung and tile variant on ragged shapes and misaligned views, with C, bias and Z: for memcheck /
    racecheck."""
    cp = gpu.cupy()
    register_variants()
    rungs = (*simt.RUNGS, *(v for v in VARIANTS if v not in simt.RUNGS))
    rng = cp.random.default_rng(2)
    for m, n, k in ((67, 45, 37), (130, 129, 33), (1, 5, 300), (260, 300, 40)):
        a_parent = rng.random((m, k + 1), dtype=cp.float32)
        b = rng.random((k, n), dtype=cp.float32)
        c = rng.random((m, n), dtype=cp.float32)
        bias = rng.random((n,), dtype=cp.float32)
        for rung in rungs:
            for a in (a_parent[:, :k], a_parent[:, 1:]):
                d = cp.empty((m, n), dtype=cp.float32)
                z = cp.empty((m, n), dtype=cp.float32)
                simt.launch(rung, a, b, d, c=c, bias=bias, bias_mode="per_n", act="gelu", beta=0.5, z=z)
        cp.cuda.runtime.deviceSynchronize()
        print(f"sanitize {m}x{n}x{k}: {len(rungs)} kernels launched")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ladder")
    p.add_argument("--sizes", default="4096,8192")
    p.add_argument("--kernel", default=None, choices=simt.RUNGS)
    p.add_argument("--act", default="none")
    p.add_argument("--bias", default="none")
    p.add_argument("--beta", type=float, default=0.0)
    p.add_argument("--save-z", action="store_true")
    p.add_argument("--json")
    p.add_argument("--plot")
    p.set_defaults(fn=cmd_ladder)
    p = sub.add_parser("threshold")
    p.add_argument("--json")
    p.set_defaults(fn=cmd_threshold)
    p = sub.add_parser("variants")
    p.add_argument("--sizes", default="4096,8192")
    p.add_argument("--json")
    p.set_defaults(fn=cmd_variants)
    p = sub.add_parser("sanitize")
    p.set_defaults(fn=cmd_sanitize)
    args = parser.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main()
