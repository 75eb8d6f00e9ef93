"""Device-side measurements for the FP32 SIMT ladder (run on the GPU machine, from the repo root).

    python3 tools/simt/bench_simt.py ladder --sizes 4096,8192 --json L.json --plot L.png
    python3 tools/simt/bench_simt.py threshold --json T.json     # smoke vs tiled rungs on small outputs
    python3 tools/simt/bench_simt.py variants --sizes 4096,8192 --json V.json  # warp_tiled tile choices tried beside the default: (BM, BN, BK, WM, WN, PadA, MinBlocks)
VARIANTS = {
    "wt_128x128x16_w64x64": (128, 128, 16, 64, 64, 4, 2),
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
    if args.json:
        bench.save_json({"device": gpu.device_info(), "rows": rows}, Path(args.json))


def cmd_sanitize(args):
    """Every rung on ragged shapes and misaligned views, with C, bias and Z: for memcheck / racecheck."""
    cp = gpu.cupy()
    rng = cp.random.default_rng(2)
    for m, n, k in ((67, 45, 37), (130, 129, 33), (1, 5, 300)):
        a_parent = rng.random((m, k + 1), dtype=cp.float32)
        b = rng.random((k, n), dtype=cp.float32)
        c = rng.random((m, n), dtype=cp.float32)
        bias = rng.random((n,), dtype=cp.float32)
        for rung in simt.RUNGS:
            for a in (a_parent[:, :k], a_parent[:, 1:]):
                d = cp.empty((m, n), dtype=cp.float32)
                z = cp.empty((m, n), dtype=cp.float32)
                simt.launch(rung, a, b, d, c=c, bias=bias, bias_mode="per_n", act="gelu", beta=0.5, z=z)
        cp.cuda.runtime.deviceSynchronize()
        print(f"sanitize {m}x{n}x{k}: {len(simt.RUNGS)} rungs launched")


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
