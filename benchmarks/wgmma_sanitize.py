"""Small wgmma GEMM launches for compute-sanitizer (memcheck, racecheck, synccheck): every tile, edges in M, N
and K, a staged bias, C and Z; staged stores also from a grid of one block (one cluster), so the bias and store
buffers are reused from tile to tile; a column-major (K-major) B on the one-block tiles, e4m3 inputs (also with
a scale per row of A and per column of B), the schedule's picks with L2 promotion off, a column-major A (MN-major
loads, imm-trans-a) and the ragged-shape tiles (128x192, 256x128, 64x128p; clusters of two on 128x192, 64x64p and
64x128p, a K-major B multicast; split-K clusters of two on 64x64p, 128x64 and 64x128p; 192-row tiles with three
consumer warpgroups; clusters of 2x2 and 1x2, A multicast along N), and block-scaled e4m3 (a second accumulator
per K-block, scales read per K-block; one-block, ping-pong, split-K and 1x2-cluster tiles), and stages of two or four
K-blocks (the last filled up with zeros from past K), and tiles of 96, 160 and 224 columns (a 16-bit D in 64-byte chunks;
B column-major, or row-major in slots of whole 64-column boxes). Exits 1 if a result is wrong.

Usage (device): compute-sanitizer --tool racecheck python3 benchmarks/wgmma_sanitize.py [--layouts-only | --copy-only
                | --block-scales] [--tiles 64x64pk2,...]
(--layouts-only: the column-major A and ragged-tile cases alone; --copy-only: the copy loader's cases alone: cp.async
into the swizzled stages, both operands or one with the other on TMA, both orders of A and B, rows of 16 mod 32 bytes;
--block-scales: the block-scaled cases alone; --tiles: only the cases of those tiles)
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fraglab.gemm import wgmma  # noqa: E402
from fraglab.runtime import gpu  # noqa: E402


def _e4m3(rng, shape):
    return rng.integers(0x20, 0x50, shape).astype(np.uint8) | (rng.integers(0, 2, shape) << 7).astype(np.uint8)


def block_scale_cases(cp, rng) -> int:
    """Block-scaled e4m3 on each tile with room for it, the whole grid and one block (cluster); failures."""
    from fraglab.gemm.reference import e4m3_to_float64, reference_gemm
    bad = 0
    for tile in ("128x128", "128x64", "64x64p", "64x64pk2", "128x64n2"):
        for grid in (None, wgmma.ALL_TILES[tile].cluster_blocks):
            m, n, k = 200, 264, 400   # K-blocks of 128, 128, 128, 16
            a8, w8 = _e4m3(rng, (m, k)), _e4m3(rng, (n, k))
            sa = rng.uniform(0.5, 2, (m, 4)).astype(np.float32)
            sb = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
            bias = rng.uniform(-1, 1, n).astype(np.float32)
            d = cp.full((m, n), np.nan, cp.float16)
            spec = wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=tile, out_dtype="f16",
                                  b_order="F", store="tma", block_scaled=True)
            wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, bias=cp.asarray(bias), grid=grid,
                         scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
            cp.cuda.runtime.deviceSynchronize()
            ref, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, bias=bias, bias_mode="per_n",
                                    act="relu", scale_a=sa, scale_b=sb)
            err = np.abs(d.get().astype(np.float64) - ref).max() / np.abs(ref).max()
            ok = err < 2e-3 and not np.isnan(d.get()).any()
            bad += not ok
            print(f"{tile} f16 tma e4m3 block-scaled {m}x{n}x{k} per_n grid {grid or 'full'}: rel err {err:.2e} "
                  f"{'ok' if ok else 'FAILED'}", flush=True)
    return bad


def main() -> int:
    rng = np.random.default_rng(0)
    bad = 0
    if "--block-scales" in sys.argv:
        return 1 if block_scale_cases(gpu.cupy(), rng) else 0
    cases = [(t, "f32", "direct", "F" if wgmma.ALL_TILES[t].k_major_b_only else "C", "C")
             for t in dict.fromkeys((*wgmma.TILES, "128x128p", "64x256p", "128x256c2", "128x128c2"))]
    cases += [(t, o, "tma", "C", "C") for t in ("128x256", "128x256c2", "128x128p", "128x64", "64x256p", "64x256pc2",
                                                "128x128pc2") for o in ("f16", "f32")]
    cases += [(t, "f16", "tma", "F", "C") for t in ("128x256", "128x128p", "128x64", "64x256p")]
    # a column-major A (MN-major boxes of its K x M rows) and the ragged-shape tiles, both B orders
    layouts = [(t, o, "tma", bo, "F") for t, o, bo in (("128x256", "f16", "C"), ("128x192", "f32", "F"),
                                                       ("64x256p", "f16", "C"), ("64x128p", "f32", "F"),
                                                       ("128x64", "f16", "C"), ("256x128", "f16", "F"),
                                                       ("128x256c2", "f16", "C"))]
    layouts += [(t, "f16", "tma", bo, "C") for t, bo in (("128x192", "C"), ("128x192", "F"), ("256x128", "C"),
                                                          ("64x128p", "C"))]
    layouts += [("128x192", "f32", "direct", "C", "C")]
    # clusters of two on 128x192 and the small-N tiles: B's 64-column blocks multicast by alternate blocks (row-major
    # B) or a K-major B whole by the first block
    layouts += [(t, o, st, bo, "C") for t, o, st in (("128x192c2", "f16", "tma"), ("64x64p", "f32", "direct"),
                                                    ("64x64pc2", "f16", "tma"), ("64x128pc2", "f16", "direct"),
                                                    ("128x256c2", "f32", "tma"), ("128x128pc2", "f16", "tma"),
                                                    # split-K: the second block's sums land in the first's memory
                                                    ("64x64pk2", "f16", "tma"), ("128x64k2", "f32", "direct"),
                                                    ("64x128pk2", "f16", "tma"),
                                                    # three consumer warpgroups of 64 rows (512 threads)
                                                    ("192x192c2", "f16", "tma"), ("192x192", "f32", "direct"),
                                                    # clusters of 2x2 and 1x2: A multicast along N
                                                    ("128x128c2x2", "f16", "tma"), ("128x64n2", "f32", "direct"),
                                                    # stages of two / four K-blocks (K 136 and 520 leave the last
                                                    # stage part empty: boxes past K fill it with zeros)
                                                    ("64x64pk2kb2", "f16", "tma"), ("64x128pkb2", "f16", "tma"),
                                                    ("64x64pkb4", "f32", "direct"), ("128x64kb2", "f16", "tma"),
                                                    ("64x64pkb2", "f16", "tma"))
                for bo in ("C", "F")]
    layouts += [("64x128pkb2", "f16", "tma", "F", "F"), ("64x64pk2kb2", "f32", "tma", "C", "F")]
    # n96 / n160 / n224 (B column-major only): a 16-bit D in 64-byte chunks (64B swizzle), one-block and clusters
    layouts += [(t, o, st, "F", ao) for t, o, st, ao in (("128x224", "f16", "tma", "C"), ("128x160", "f32", "tma", "C"),
                                                         ("128x96", "f16", "tma", "F"), ("128x224c2", "f16", "tma", "C"),
                                                         ("128x160c2", "f16", "direct", "C"),
                                                         ("128x96c2", "f16", "tma", "C"))]
    # and for a row-major B in slots of whole 64-column boxes
    layouts += [(t, o, st, "C", ao) for t, o, st, ao in (("128x224r", "f16", "tma", "C"), ("128x160r", "f32", "tma", "F"),
                                                         ("128x96r", "f16", "direct", "C"))]
    # swapped operands (the kernel computes D^T): a 16-bit D through stmatrix .trans, an f32 one by direct stores;
    # split-K, ping-pong and cooperative tiles, both orders of B (row-major: the kernel's A MN-major)
    layouts += [(t, o, st, bo, "C") for t, o, st, bo in (
        ("64x96pk2t", "f16", "tma", "F"), ("64x96pk2t", "f32", "direct", "C"), ("64x96pkb2t", "f16", "tma", "C"),
        ("64x128pk2t", "f16", "tma", "F"), ("64x160pk2t", "f16", "tma", "C"), ("64x160pt", "f16", "tma", "F"),
        ("64x192pt", "f32", "direct", "F"), ("128x96t", "f16", "tma", "F"), ("128x128t", "f16", "tma", "C"),
        ("128x160t", "f16", "tma", "F"), ("128x192t", "f16", "tma", "C"),
        # two token tiles per cluster, the weight's tile multicast to both (A's multicast along N, swapped)
        ("128x96n2t", "f16", "tma", "F"), ("128x96n2t", "f32", "direct", "C"), ("64x96pt", "f16", "tma", "C"),
        # 64-row weight tiles split between the cluster's two blocks (32-row boxes), or one MN-major box for both
        ("64x96pn2t", "f16", "tma", "F"), ("64x96pn2t", "f16", "tma", "C"), ("64x96pkb2n2t", "f16", "tma", "F"),
        # tokens in tiles of 80 (wgmma n80; D^T in 16-row chunks)
        ("64x80pkb2n2t", "f16", "tma", "F"), ("64x80pk2t", "f16", "tma", "C"), ("64x80pkb2t", "f32", "direct", "F"),
        ("128x80n2t", "f16", "tma", "C"))]
    # the copy loader (loads of A and B last): the schedule's tiles for misaligned rows, one operand on TMA too
    copies = [(t, o, "tma", bo, ao, loads) for t, o, bo, ao, loads in (
        ("128x192", "f16", "C", "C", ("copy", "copy")), ("128x192", "f32", "F", "C", ("tma", "copy")),
        ("128x256", "f16", "C", "C", ("tma", "copy")), ("128x128", "f16", "F", "F", ("copy", "copy")),
        ("128x64", "f16", "C", "C", ("copy", "tma")), ("64x128p", "f16", "F", "C", ("copy", "copy")),
        ("128x256", "f16", "F", "F", ("copy", "tma")))]
    cases = [(*c, ("tma", "tma")) for c in cases + layouts]
    if "--layouts-only" in sys.argv:
        cases = [(*c, ("tma", "tma")) for c in layouts]
    elif "--copy-only" in sys.argv:
        cases = copies
    else:
        cases += copies
    if "--tiles" in sys.argv:   # only the cases of these tiles (comma-separated), then stop
        wanted = sys.argv[sys.argv.index("--tiles") + 1].split(",")
        missing = sorted(set(wanted) - {c[0] for c in cases})
        if missing:
            print(f"wgmma_sanitize.py: error: --tiles: no case for {', '.join(missing)} here (cases: "
                  f"{', '.join(dict.fromkeys(c[0] for c in cases))})", file=sys.stderr)
            return 2
        cases = [c for c in cases if c[0] in wanted]
    cp = gpu.cupy()
    # compiled side by side first (NVRTC releases the GIL; CuPy's disk cache keeps them for the sanitizer runs)
    from concurrent.futures import ThreadPoolExecutor

    builds = {wgmma.spec_for("f16", 8, 8, 8, act="relu", bias_mode=bm, has_c=True, save_z=True, tile=t, out_dtype=o,
                             store=st, b_order=bo).build() for t, o, st, bo, *_ in cases for bm in ("per_n", "per_m")}
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(gpu.module, builds))
    for tile, out, store, b_order, a_order, loads in cases:
        grids = (None, wgmma.ALL_TILES[tile].cluster_blocks) if store == "tma" else (None,)
        for (m, n, k, bias_mode), grid in itertools.product(((200, 264, 136, "per_n"), (130, 136, 520, "per_m")), grids):
            m = m if a_order == "C" else -(-m // 8) * 8   # a column-major A's rows (M long) are 16-byte multiples
            a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
            c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
            bias = rng.uniform(-1, 1, (n if bias_mode == "per_n" else m,)).astype(np.float32)
            d = cp.full((m, n), np.nan, cp.float32 if out == "f32" else cp.float16)
            z = cp.full((m, n), np.nan, cp.float32)
            spec = wgmma.spec_for("f16", m, n, k, act="relu", bias_mode=bias_mode, has_c=True, save_z=True, tile=tile,
                                  out_dtype=out, store=store, b_order=b_order, a_order=a_order)
            spec = dataclasses.replace(spec, a_load=loads[0], b_load=loads[1])
            b_dev = cp.asarray(b) if b_order == "C" else cp.asfortranarray(cp.asarray(b))
            a_dev = cp.asarray(a) if a_order == "C" else cp.asfortranarray(cp.asarray(a))
            wgmma.launch(spec, a_dev, b_dev, d, c=cp.asarray(c), bias=cp.asarray(bias), z=z,
                         beta=0.5, grid=grid)
            cp.cuda.runtime.deviceSynchronize()
            bias2 = bias[None, :] if bias_mode == "per_n" else bias[:, None]
            pre = a.astype(np.float64) @ b.astype(np.float64) + 0.5 * c + bias2
            err = np.abs(z.get() - pre).max() / np.abs(pre).max()
            # D against relu(pre), not by sign: a 16-bit D rounds a tiny positive value to 0
            d_err = np.abs(d.get().astype(np.float64) - np.maximum(pre, 0)).max() / np.abs(pre).max()
            ok = err < 1e-3 and d_err < 2e-3 and not np.isnan(d.get()).any()
            bad += not ok
            print(f"{tile} {out} {store} A {a_order} B {b_order} loads {'/'.join(loads)} {m}x{n}x{k} {bias_mode} "
                  f"grid {grid or 'full'}: rel err {err:.2e} {'ok' if ok else 'FAILED'}", flush=True)
    if "--layouts-only" in sys.argv or "--copy-only" in sys.argv or "--tiles" in sys.argv:
        return 1 if bad else 0
    from fraglab.gemm.reference import e4m3_to_float64
    for tile, grid in itertools.product(("128x256", "128x128p"), (None, 1)):   # e4m3: k32 steps, 128-byte K-blocks
        m, n, k = 200, 264, 208
        a8 = rng.integers(0x20, 0x50, (m, k)).astype(np.uint8) | (rng.integers(0, 2, (m, k)) << 7).astype(np.uint8)
        w8 = rng.integers(0x20, 0x50, (n, k)).astype(np.uint8) | (rng.integers(0, 2, (n, k)) << 7).astype(np.uint8)
        bias = rng.uniform(-1, 1, n).astype(np.float32)
        d = cp.full((m, n), np.nan, cp.float16)
        spec = wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=tile, out_dtype="f16", b_order="F")
        wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, bias=cp.asarray(bias), grid=grid)
        cp.cuda.runtime.deviceSynchronize()
        pre = e4m3_to_float64(a8) @ e4m3_to_float64(w8).T + bias[None, :]
        ref = np.maximum(pre, 0)
        err = np.abs(d.get().astype(np.float64) - ref).max() / np.abs(ref).max()
        ok = err < 2e-3 and not np.isnan(d.get()).any()
        bad += not ok
        print(f"{tile} f16 tma e4m3 {m}x{n}x{k} per_n grid {grid or 'full'}: rel err {err:.2e} {'ok' if ok else 'FAILED'}",
              flush=True)
    for tile, grid in itertools.product(("128x256", "64x256p", "128x64"), (None, 1)):   # e4m3 with row / column scales
        m, n, k = 200, 264, 208
        a8 = rng.integers(0x20, 0x50, (m, k)).astype(np.uint8) | (rng.integers(0, 2, (m, k)) << 7).astype(np.uint8)
        w8 = rng.integers(0x20, 0x50, (n, k)).astype(np.uint8) | (rng.integers(0, 2, (n, k)) << 7).astype(np.uint8)
        sa, sb = rng.uniform(0.5, 2, m).astype(np.float32), rng.uniform(0.5, 2, n).astype(np.float32)
        bias = rng.uniform(-1, 1, n).astype(np.float32)
        d = cp.full((m, n), np.nan, cp.float16)
        spec = wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=tile, out_dtype="f16", b_order="F",
                              scaled=True)
        wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, bias=cp.asarray(bias), grid=grid,
                     scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
        cp.cuda.runtime.deviceSynchronize()
        ref = np.maximum(sa[:, None] * (e4m3_to_float64(a8) @ e4m3_to_float64(w8).T) * sb[None, :] + bias[None, :], 0)
        err = np.abs(d.get().astype(np.float64) - ref).max() / np.abs(ref).max()
        ok = err < 2e-3 and not np.isnan(d.get()).any()
        bad += not ok
        print(f"{tile} f16 tma e4m3 scaled {m}x{n}x{k} per_n grid {grid or 'full'}: rel err {err:.2e} "
              f"{'ok' if ok else 'FAILED'}", flush=True)
    bad += block_scale_cases(cp, rng)
    for shape in ((1, 1000, 1000), (200, 1000, 360)):   # the schedule's picks with L2 promotion off (misaligned rows)
        m, n, k = shape
        a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
        b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
        d = cp.full((m, n), np.nan, cp.float16)
        spec = wgmma.spec_for("f16", m, n, k, out_dtype="f16")
        wgmma.launch(spec, cp.asarray(a), cp.asarray(b), d)
        cp.cuda.runtime.deviceSynchronize()
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = np.abs(d.get().astype(np.float64) - ref).max() / np.abs(ref).max()
        ok = err < 2e-3 and not np.isnan(d.get()).any()
        bad += not ok
        print(f"{spec.tile} f16 tma {m}x{n}x{k} promotion {spec.l2_promotion}: rel err {err:.2e} "
              f"{'ok' if ok else 'FAILED'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
