"""The wgmma GEMM on an sm_90 GPU against a float64 reference (marked gpu; skipped with the reason otherwise).

Outputs are poisoned (NaN) before every launch, inputs are fresh random values, never zeros. The reference
is numpy float64 on the exact f16/bf16 input values plus fraglab's epilogue formulas (gemm/reference.py).
"""

import itertools

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, reference_gemm
from gemm_operands import e4m3_bits, host_d, index_operands, poisoned_outputs, random_operands

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp, sm90):
    from precompile import precompile

    # Compile what these tests launch in parallel first (one after another: ~1 s each).
    specs = [wgmma.spec_for(dt, m, n, k, act="relu", bias_mode="per_n", tile=t)
             for (m, n, k), dt, t in itertools.product(SIZES, wgmma.DTYPES, TEST_TILES)]
    specs += [_combo_spec(i) for i in range(len(COMBOS))]
    specs += [wgmma.spec_for("f16", 1000, 520, 136, act="gelu", bias_mode=bm, has_c=True, save_z=True, tile=t,
                             out_dtype=o) for t in TEST_TILES for bm, o in (("per_n", "f32"), ("per_m", "f16"))]
    specs += [wgmma.spec_for("f16", 1, 1, 1, tile=t, store=st) for t in TEST_TILES for st in wgmma.STORES]
    specs += [wgmma.spec_for("f16", 70, 136, 48, act=act, bias_mode="per_n") for act in NAN_ACTS]
    specs += [wgmma.spec_for(dt, m, n, k, act="gelu", bias_mode="per_m", tile=t, out_dtype=out, store=store)
              for (m, n, k), dt, t, out, store in OUT_CASES]
    specs += [wgmma.spec_for("f16", 1, 1, 1, tile=t, out_dtype=o, store="tma", b_order=wgmma.ALL_TILES[t].b_orders[0])
              for t in LAYOUT_TILES for o in ("f16", "f32")]
    specs += [wgmma.spec_for("bf16", m, n, k, act="relu", bias_mode="per_n", tile=t, out_dtype=o,
                             b_order=wgmma.ALL_TILES[t].b_orders[0])
              for (m, n, k), t, o in itertools.product(SIZES, WIDE_TILES, ("f16", "bf16"))]
    specs += [wgmma.spec_for("f16", 1, 1, 1, tile=t, store=st, b_order="F") for t in K_MAJOR_B_TILES
              for st in wgmma.STORES]
    specs += [wgmma.spec_for(dt, m, n, k, act="relu", bias_mode="per_n", tile=t, b_order="F")
              for (m, n, k), dt, t in itertools.product(SIZES, wgmma.DTYPES, COLUMN_B_TILES)]
    specs += [wgmma.spec_for("bf16", 1100, 520, 136, act="gelu", bias_mode=bm, has_c=True, save_z=True, tile=t,
                             out_dtype=o, b_order="F") for t in COLUMN_B_TILES for bm, o in (("per_n", "f32"), ("per_m", "f16"))]
    specs += [wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=t, b_order="F")
              for (m, n, k), t in itertools.product(FP8_SIZES, COLUMN_B_TILES)]
    specs += [_scheduled_spec(case, order) for case in range(len(SCHEDULED)) for order in wgmma.B_ORDERS]
    specs += [wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=t, b_order="F", scaled=True)
              for (m, n, k), t in itertools.product(FP8_SIZES, COLUMN_B_TILES)]
    specs += [wgmma.spec_for("e4m3", 997, 264, 208, act=act, bias_mode=bm, has_c=bool(i % 2), save_z=bool(i % 2),
                             tile=COLUMN_B_TILES[i % len(COLUMN_B_TILES)], out_dtype="f32" if i % 2 else "f16",
                             b_order="F", scaled=True) for i, (act, bm) in enumerate(COMBOS)]
    precompile(s.build() for s in specs)


def run_case(cp, m, n, k, dtype, *, act="none", bias_mode="none", beta=0.0, save_z=False, seed=0, tile=None,
             a32=None, alpha=1.5, leaky_slope=0.05, grid=None, out_dtype="f32", b_order="C"):
    a, a64, b, b64, bias, c = random_operands(cp, np.random.default_rng(seed), m, n, k, dtype, bias_mode=bias_mode,
                                              beta=beta, a32=a32, b_order=b_order)
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    spec = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, tile=tile,
                          out_dtype=out_dtype, b_order=b_order)
    wgmma.launch(spec, a, b, d, c=None if c is None else cp.asarray(c), bias=None if bias is None else cp.asarray(bias),
                 z=z, alpha=alpha, beta=beta, leaky_slope=leaky_slope, grid=grid)
    cp.cuda.runtime.deviceSynchronize()
    d_ref, z_ref = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=leaky_slope)
    got = host_d(d, out_dtype)
    if out_dtype == "f16":   # one f16 rounding of D on top of the f32 tolerance
        assert np.all(np.abs(got - d_ref) <= 2.0 ** -11 * np.abs(d_ref) + 1e-3 * max(1.0, np.abs(d_ref).max())), \
            f"f16 D off by more than one rounding ({m}x{n}x{k} tile {spec.tile})"
    else:
        ok, max_abs, rel = check_result(got, d_ref, dtype, z_ref=z_ref if save_z else None, out_dtype=out_dtype)
        assert ok, f"D: max abs {max_abs:.3e}, rel {rel:.3e} ({m}x{n}x{k} {dtype} {act} {bias_mode} tile {spec.tile})"
    if save_z:
        ok, max_abs, rel = check_result(z.get(), z_ref, dtype)
        assert ok, f"Z: max abs {max_abs:.3e}, rel {rel:.3e}"
    return d


# M any; N and K multiples of 8 (TMA's 16-byte row rule). Sizes of 1, odd, prime and several tiles.
SIZES = [(1, 8, 8), (7, 24, 40), (131, 136, 72), (257, 264, 1000), (997, 520, 8), (300, 1032, 200), (128, 256, 64)]
# (the swapped tiles, which store D^T, have their own tests: test_wgmma_swapped_gpu.py)
TEST_TILES = tuple(dict.fromkeys((*(t for t in wgmma.launcher_tiles("C") if not wgmma.TILES[t].swap_ab), "128x128p", "64x256p", "128x256c2", "128x128c2", "64x256pc2",
                                  "128x128pc2",
                                  # more K-blocks per stage than the launcher's stage-K tiles, or in clusters
                                  "128x64kb2", "64x128pc2kb2", "64x64pkb4",
                                  # 96 / 160 / 224 columns of a row-major B in slots of whole 64-column boxes
                                  "128x224r", "128x160r", "128x96r")))
# tiles whose columns are not whole 64-column boxes of a row-major B (n96 / n160 / n224): B column-major only; their
# 16-bit D leaves in 64-byte chunks (64B swizzle)
K_MAJOR_B_TILES = tuple(t for t, c in wgmma.ALL_TILES.items() if c.k_major_b_only)
# a cluster's first block multicasts a K-major B whole
COLUMN_B_TILES = tuple(t for t in TEST_TILES if "F" in wgmma.ALL_TILES[t].b_orders) + K_MAJOR_B_TILES
# tiles of 96 / 160 / 224 columns, each with the B order it takes; every tile, for the layout tests
WIDE_TILES = tuple(t for t, c in wgmma.ALL_TILES.items() if c.bn % 64 and not c.swap_ab)
LAYOUT_TILES = tuple(dict.fromkeys(TEST_TILES + K_MAJOR_B_TILES))
# e4m3: K a multiple of 16 (rows of K bytes); M any
FP8_SIZES = [(1, 8, 16), (131, 136, 64), (257, 264, 1024), (300, 1032, 208), (997, 520, 16), (128, 256, 128)]
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))
NAN_ACTS = ("none", "relu", "gelu", "tanh")
OUT_CASES = [((131, 136, 72), "f16", "128x256", "f16", "direct"), ((257, 264, 1000), "bf16", "128x128", "bf16", "direct"),
             ((300, 1032, 200), "f16", "128x128p", "bf16", "direct"), ((7, 24, 40), "bf16", "64x256p", "f16", "direct"),
             # through shared memory (stmatrix) and TMA stores: edges in M and N, both clusters, ping-pong
             ((131, 136, 72), "f16", "128x256", "f16", "tma"), ((257, 264, 1000), "bf16", "128x256c2", "bf16", "tma"),
             ((300, 1032, 200), "f16", "128x128p", "bf16", "tma"), ((7, 24, 40), "bf16", "64x256p", "f16", "tma"),
             ((997, 520, 8), "f16", "128x128c2", "f16", "tma"), ((1, 8, 8), "bf16", "128x64", "bf16", "tma"),
             ((131, 136, 72), "bf16", "128x256", "f32", "tma"), ((300, 1032, 200), "f16", "128x128p", "f32", "tma"),
             ((257, 264, 1000), "f16", "128x256c2", "f32", "tma")]


def _combo_case(i):
    act, bias_mode = COMBOS[i]
    beta, save_z = (0.75, True) if i % 2 else (0.0, False)
    return dict(act=act, bias_mode=bias_mode, beta=beta, save_z=save_z, dtype=wgmma.DTYPES[i % 2],
                tile=("128x256", "128x128", "128x128p")[i % 3])


def _combo_spec(i):
    c = _combo_case(i)
    return wgmma.spec_for(c["dtype"], 193, 264, 136, act=c["act"], bias_mode=c["bias_mode"], has_c=bool(c["beta"]),
                          save_z=c["save_z"], tile=c["tile"])


@pytest.mark.parametrize("dtype", wgmma.DTYPES)
@pytest.mark.parametrize("tile", TEST_TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_sizes_and_tiles(cp, m, n, k, dtype, tile):
    run_case(cp, m, n, k, dtype, act="relu", bias_mode="per_n", seed=m * 7 + n + k, tile=tile)


@pytest.mark.parametrize("bias_mode,out_dtype", (("per_n", "f32"), ("per_m", "f16")))
@pytest.mark.parametrize("tile", TEST_TILES)
def test_one_block_walks_many_tiles(cp, tile, bias_mode, out_dtype):
    """A persistent grid of one block (one cluster) walks every tile: the ring's phases, the bias slots (loaded by
    TMA a tile ahead), the ping-pong turns and the store buffers all carry over from tile to tile. 1100 rows: an
    odd number of 128-row tiles, so a cluster's last unit has a block with no rows (its bias box is all past M)."""
    grid = wgmma.ALL_TILES[tile].cluster_blocks
    run_case(cp, 1100, 520, 136, "f16", act="gelu", bias_mode=bias_mode, beta=0.5, save_z=True, seed=5, tile=tile,
             grid=grid, out_dtype=out_dtype)


@pytest.mark.parametrize("dtype", wgmma.DTYPES)
@pytest.mark.parametrize("tile", COLUMN_B_TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_column_major_b(cp, m, n, k, dtype, tile):
    """B as the transpose of a row-major N x K array: the K-major operand (imm-trans-b = 0), one TMA box per stage."""
    run_case(cp, m, n, k, dtype, act="relu", bias_mode="per_n", seed=m * 5 + n + k, tile=tile, b_order="F")


@pytest.mark.parametrize("out_dtype", ("f16", "bf16"))
@pytest.mark.parametrize("tile", WIDE_TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_sixteen_bit_d_in_64_byte_chunks(cp, m, n, k, tile, out_dtype):
    """Tiles of n96 / n160 / n224 store a 16-bit D 64 bytes of each row at a time (64B swizzle): every size,
    bias per column, D's last chunk of a row ragged at N's edge; B in the order the tile takes (a row-major B's last
    64-column box reads columns of the next tile, or zeros past N, that the tile's wgmma never reads)."""
    run_case(cp, m, n, k, "bf16", act="relu", bias_mode="per_n", seed=m + 3 * n + k, tile=tile,
             b_order=wgmma.ALL_TILES[tile].b_orders[0], out_dtype=out_dtype)


@pytest.mark.parametrize("bias_mode,out_dtype", (("per_n", "f32"), ("per_m", "f16")))
@pytest.mark.parametrize("tile", COLUMN_B_TILES)
def test_one_block_walks_many_tiles_with_a_column_major_b(cp, tile, bias_mode, out_dtype):
    run_case(cp, 1100, 520, 136, "bf16", act="gelu", bias_mode=bias_mode, beta=0.5, save_z=True, seed=6, tile=tile,
             grid=wgmma.ALL_TILES[tile].cluster_blocks, out_dtype=out_dtype, b_order="F")


@pytest.mark.parametrize("tile", COLUMN_B_TILES)
@pytest.mark.parametrize("m,n,k", FP8_SIZES)
def test_e4m3_inputs(cp, m, n, k, tile):
    """8-bit A (M x K) and B given as N x K bytes (column-major K x N): k32 instructions, 128-element K-blocks."""
    from fraglab.gemm.reference import e4m3_to_float64

    rng = np.random.default_rng(m + 3 * n + k)
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    d = cp.full((m, n), np.nan, dtype=cp.float32)
    spec = wgmma.spec_for("e4m3", m, n, k, act="relu", bias_mode="per_n", tile=tile, b_order="F")
    wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, bias=cp.asarray(bias), alpha=0.25)
    cp.cuda.runtime.deviceSynchronize()
    ref, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, bias=bias, bias_mode="per_n", act="relu",
                            alpha=0.25)
    ok, max_abs, rel = check_result(d.get(), ref, "e4m3", k=k)
    assert ok, f"e4m3 {m}x{n}x{k} tile {tile}: max abs {max_abs:.3e}, rel {rel:.3e}"


def _torch_e4m3(*bits):
    """torch and each array of e4m3 bit patterns as a float8_e4m3fn CUDA tensor (skipped where torch has none)."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    return (torch, *(torch.from_numpy(b).cuda().view(torch.float8_e4m3fn) for b in bits))


def _e4m3_scaled_case(cp, m, n, k, tile, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, out_dtype="f32",
                      seed=0):
    """e4m3 A and B with a float32 scale per row of A and per column of B, launched on `tile`, against float64."""
    from fraglab.gemm.reference import e4m3_to_float64

    rng = np.random.default_rng(seed)
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    sa, sb = rng.uniform(0.25, 2.0, m).astype(np.float32), rng.uniform(0.25, 2.0, n).astype(np.float32)
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = rng.uniform(-64, 64, shape).astype(np.float32) if shape else None
    c = rng.uniform(-64, 64, (m, n)).astype(np.float32) if beta else None
    d = cp.full((m, n), np.nan, dtype={"f32": cp.float32, "f16": cp.float16}[out_dtype])
    z = cp.full((m, n), np.nan, dtype=cp.float32) if save_z else None
    spec = wgmma.spec_for("e4m3", m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, tile=tile,
                          out_dtype=out_dtype, b_order="F", scaled=True)
    wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, c=None if c is None else cp.asarray(c),
                 bias=None if bias is None else cp.asarray(bias), z=z, alpha=0.5, beta=beta,
                 scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
    cp.cuda.runtime.deviceSynchronize()
    ref, z_ref = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, c=c, bias=bias, bias_mode=bias_mode,
                                act=act, alpha=0.5, beta=beta, scale_a=sa, scale_b=sb)
    # judged against the pre-activation's size too: fp8 accumulation leaves an absolute error in it (1.7e-3 of its
    # largest value at K = 1024) that a squashing activation (sigmoid, tanh) keeps as an absolute error in D
    ok, max_abs, rel = check_result(d.get(), ref, "e4m3", k=k, out_dtype=out_dtype, z_ref=z_ref)
    assert ok, f"scaled e4m3 {m}x{n}x{k} {tile} {act} {bias_mode}: max abs {max_abs:.3e}, rel {rel:.3e}"
    if save_z:
        assert check_result(z.get(), z_ref, "e4m3", k=k)[0]


@pytest.mark.parametrize("tile", COLUMN_B_TILES)
@pytest.mark.parametrize("m,n,k", FP8_SIZES)
def test_e4m3_rowwise_scales(cp, m, n, k, tile):
    """The rowwise recipe: D = act(alpha * scale_a[m] * (A @ B)[m, n] * scale_b[n] + bias), every tile and size."""
    _e4m3_scaled_case(cp, m, n, k, tile, seed=m + 5 * n + k)


@pytest.mark.parametrize("i", range(len(COMBOS)))
def test_e4m3_rowwise_scales_every_activation_and_bias_mode(cp, i):
    """Scales then C, bias and every activation (C and Z on odd cases, f16 D on even ones), tiles taking turns;
    rows and columns past a tile's edge (997 x 264)."""
    act, bias_mode = COMBOS[i]
    _e4m3_scaled_case(cp, 997, 264, 208, COLUMN_B_TILES[i % len(COLUMN_B_TILES)], act=act, bias_mode=bias_mode,
                      beta=0.75 if i % 2 else 0.0, save_z=bool(i % 2), out_dtype="f32" if i % 2 else "f16",
                      seed=500 + i)


def test_e4m3_rowwise_scales_one_block_walks_many_tiles(cp):
    """A grid of one block: the scales of every tile (rows past M read as 0, never stored)."""
    from fraglab.gemm.reference import e4m3_to_float64

    rng = np.random.default_rng(9)
    m, n, k = 1100, 520, 256
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    sa, sb = rng.uniform(0.25, 2.0, m).astype(np.float32), rng.uniform(0.25, 2.0, n).astype(np.float32)
    d = cp.full((m, n), np.nan, dtype=cp.float32)
    spec = wgmma.spec_for("e4m3", m, n, k, tile="128x256", b_order="F", scaled=True)
    wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, grid=1, scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
    ref, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, scale_a=sa, scale_b=sb)
    assert check_result(d.get(), ref, "e4m3", k=k)[0]


def test_e4m3_rowwise_scales_through_fraglab_gemm(cp):
    """fraglab.gemm(..., scale_a=, scale_b=): uint8 bits with (M,) / (N,) scales, torch float8 tensors with (M, 1) /
    (1, N) ones as torch._scaled_mm takes them (and the same D as torch's rowwise _scaled_mm, within fp8's
    accumulation), and the argument errors."""
    import fraglab
    from fraglab.gemm.reference import e4m3_to_float64
    from fraglab.gemm.validate import GemmArgumentError

    rng = np.random.default_rng(12)
    m, n, k = 300, 272, 208   # torch._scaled_mm wants N a multiple of 16
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    sa, sb = rng.uniform(0.25, 2.0, m).astype(np.float32), rng.uniform(0.25, 2.0, n).astype(np.float32)
    bias = rng.uniform(-64, 64, n).astype(np.float32)
    ref, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, bias=bias, bias_mode="per_n", act="gelu",
                            scale_a=sa, scale_b=sb)
    d = fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", bias=cp.asarray(bias), act="gelu",
                     scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
    assert check_result(d.get(), ref, "e4m3", k=k)[0]
    with pytest.raises(GemmArgumentError, match="scale_b"):
        fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", scale_a=cp.asarray(sa))
    with pytest.raises(GemmArgumentError, match="scale_a.*shape"):
        fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", scale_a=cp.asarray(sb),
                     scale_b=cp.asarray(sb))
    with pytest.raises(GemmArgumentError, match="scale_a.*e4m3"):
        h = cp.asarray(rng.uniform(-1, 1, (m, k)).astype(np.float16))
        fraglab.gemm(h, cp.asarray(rng.uniform(-1, 1, (k, n)).astype(np.float16)), scale_a=cp.asarray(sa),
                     scale_b=cp.asarray(sb))
    torch, a_t, w_t = _torch_e4m3(a8, w8)
    sa_t, sb_t = torch.from_numpy(sa).cuda()[:, None], torch.from_numpy(sb).cuda()[None, :]
    d_t = fraglab.gemm(a_t, w_t.t(), scale_a=sa_t, scale_b=sb_t, out_dtype="bf16")
    ref_plain, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, scale_a=sa, scale_b=sb)
    assert isinstance(d_t, torch.Tensor) and d_t.dtype == torch.bfloat16
    assert check_result(d_t.float().cpu().numpy(), ref_plain, "e4m3", k=k, out_dtype="bf16")[0]
    theirs = torch._scaled_mm(a_t, w_t.t(), scale_a=sa_t, scale_b=sb_t, out_dtype=torch.bfloat16)
    assert check_result(theirs.float().cpu().numpy(), ref_plain, "e4m3", k=k, out_dtype="bf16")[0]


def test_e4m3_through_fraglab_gemm(cp):
    """uint8 bits with input_dtype='e4m3' (and torch float8_e4m3fn tensors, where torch is there), every part
    of the epilogue, a bf16 D; a row-major B is refused by name."""
    import fraglab
    from fraglab.gemm.reference import e4m3_to_float64
    from fraglab.gemm.validate import GemmArgumentError

    rng = np.random.default_rng(8)
    m, n, k = 300, 264, 208
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    bias, c = rng.uniform(-1, 1, m).astype(np.float32), rng.uniform(-1, 1, (m, n)).astype(np.float32)
    ref, z_ref = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, c=c, bias=bias, bias_mode="per_m",
                                act="gelu", alpha=0.5, beta=0.75)
    d, z = fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", c=cp.asarray(c), beta=0.75,
                        bias=cp.asarray(bias), bias_mode="per_m", act="gelu", alpha=0.5, save_z=True,
                        out_dtype="bf16")
    host = d.get()   # CuPy's bfloat16, or uint16 bit patterns where it has none
    got = (host.astype(np.uint32) << 16).view(np.float32) if host.dtype == np.uint16 else host.astype(np.float32)
    ok, max_abs, rel = check_result(got, ref, "e4m3", out_dtype="bf16")
    assert ok, f"bf16 D: max abs {max_abs:.3e}, rel {rel:.3e}"
    assert check_result(z.get(), z_ref, "e4m3")[0]
    with pytest.raises(GemmArgumentError, match="K-major"):
        fraglab.gemm(cp.asarray(a8), cp.asarray(np.ascontiguousarray(w8.T)), input_dtype="e4m3")
    torch, a_t, w_t = _torch_e4m3(a8, w8)
    d_t = fraglab.gemm(a_t, w_t.t(), act="relu", alpha=0.5)
    ref_relu, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, act="relu", alpha=0.5)
    assert isinstance(d_t, torch.Tensor) and check_result(d_t.cpu().numpy(), ref_relu, "e4m3")[0]


@pytest.mark.parametrize("i", range(len(COMBOS)))
def test_every_activation_and_bias_mode(cp, i):
    c = _combo_case(i)
    run_case(cp, 193, 264, 136, c.pop("dtype"), seed=1000 + i, **c)


# The schedule's choices (fraglab/gemm/schedule.py), as spec_for makes them: decode M on the 64x256p tile, rows whose
# pitch is 16 but not 32 bytes aligned (N or K = 1000, 3000: L2 promotion off), few tiles on 128x64, 128x128 by waves,
# split-K clusters for few tiles and a long K.
SCHEDULED = [((1, 1000, 1000), "one_row_tile"), ((16, 4104, 520), "one_row_tile"), ((64, 1000, 3000), "one_row_tile"),
             ((200, 1000, 360), "sector_misaligned_rows"), ((1100, 3000, 1000), "sector_misaligned_rows"),
             ((1300, 2000, 136), "sector_misaligned_rows"), ((129, 2048, 544), "few_tiles"),
             ((1000, 1024, 144), "few_tiles"), ((1000, 1152, 144), "waves"), ((40, 272, 8224), "split_k"),
             ((100, 528, 8256), "split_k"), ((1000, 2000, 136), "sector_misaligned_rows"), ((200, 8192, 144), "row_pairs")]
# their tiles (f16): 64x64pkb2 (three), 64x128pc2, 192x192c2, 128x192c2, 64x64pkb2, 64x128pkb2, 128x128 (B column-major
# 128x96), 64x64pk2kb2, 128x64k2 (K-blocks 129: the second block of each cluster one fewer), 128x128c2 and 128x128c2


def _scheduled_case(case, b_order):
    (m, n, k), rule = SCHEDULED[case]
    act, bias_mode = COMBOS[(case * 5 + (b_order == "F") * 3) % len(COMBOS)]
    return (m, n, k), rule, dict(dtype=wgmma.DTYPES[case % 2], act=act, bias_mode=bias_mode,
                                 beta=0.5 if case % 2 else 0.0, save_z=bool(case % 2),
                                 out_dtype="f16" if case % 2 == 0 else "f32", b_order=b_order)


def _scheduled_spec(case, b_order):
    (m, n, k), _, c = _scheduled_case(case, b_order)
    return wgmma.spec_for(c["dtype"], m, n, k, act=c["act"], bias_mode=c["bias_mode"], has_c=bool(c["beta"]),
                          save_z=c["save_z"], out_dtype=c["out_dtype"], b_order=b_order)


@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
@pytest.mark.parametrize("case", range(len(SCHEDULED)))
def test_scheduled_shapes(cp, case, b_order):
    """Each rule's tile and tensor-map settings against float64, both B orders, a different activation and bias
    mode per case (with C and Z on odd cases), f16 D on even cases."""
    from fraglab.gemm import schedule

    (m, n, k), rule, c = _scheduled_case(case, b_order)
    assert schedule.choose(m, n, k, c["dtype"], b_order, c["out_dtype"]).rule == rule
    assert _scheduled_spec(case, b_order).l2_promotion == ("none" if rule == "sector_misaligned_rows" or
                                                           not schedule.sector_aligned(m, n, k, c["dtype"], b_order,
                                                                                       c["out_dtype"]) else "256B")
    run_case(cp, m, n, k, seed=300 + case, **c)


@pytest.mark.parametrize("act", NAN_ACTS)
def test_nan_and_inf_propagate(cp, act):
    m, n, k = 70, 136, 48
    a32 = np.random.default_rng(3).uniform(-1, 1, (m, k)).astype(np.float32)
    a32[5, 7] = np.nan          # row 5 of D: all NaN
    a32[11, 2] = np.inf         # row 11: +-inf by the sign of B[2, n] (then the activation's limits)
    a32[12, 3], a32[12, 9] = np.inf, -np.inf   # row 12: inf - inf -> NaN where B[3, n] and B[9, n] share a sign
    d = run_case(cp, m, n, k, "f16", act=act, bias_mode="per_n", a32=a32, seed=4)
    assert np.isnan(d.get()[5]).all()


def test_accumulator_registers_land_where_the_generated_indexing_says(cp):
    """D[m, n] = 256 m + n exactly (A[:, 0] = m, A[:, 1] = 1, B[0, :] = 256, B[1, :] = n, the rest 0): any
    register stored at the wrong (row, col) shows, for every thread and slot of both wgmma N (128, 256)."""
    for tile, store in itertools.product(LAYOUT_TILES, wgmma.STORES):
        m, n, k = 256, 512, 16
        a = np.zeros((m, k), np.float16)
        a[:, 0] = np.arange(m) % 128     # exact in f16
        a[:, 1] = 1
        b = np.zeros((k, n), np.float16)
        b[0, :] = 256
        b[1, :] = np.arange(n) % 256
        d = cp.full((m, n), np.nan, dtype=cp.float32)
        order = wgmma.ALL_TILES[tile].b_orders[0]
        wgmma.launch(wgmma.spec_for("f16", m, n, k, tile=tile, store=store, b_order=order), cp.asarray(a),
                     _device_b(cp, b, order), d)
        expected = 256.0 * (np.arange(m)[:, None] % 128) + (np.arange(n)[None, :] % 256)
        np.testing.assert_array_equal(d.get(), expected, err_msg=f"tile {tile}, {store} stores")


def _device_b(cp, b, order):
    """B (K x N) on the device, row-major or column-major (a row-major N x K underneath)."""
    return cp.asarray(b) if order == "C" else cp.asfortranarray(cp.asarray(b))


@pytest.mark.parametrize("out", ("f16", "f32"))
@pytest.mark.parametrize("tile", LAYOUT_TILES)
def test_staged_stores_land_where_the_generated_indexing_says(cp, tile, out):
    """D through shared memory and TMA stores (stmatrix for f16, float2 for f32): D = row index, then D = column
    index (both exact in f16 up to 2048), so every element's (row, col) is pinned; 1000 x 520 leaves ragged
    edges in both."""
    m, n, k = 1000, 520, 16
    order = wgmma.ALL_TILES[tile].b_orders[0]
    spec = wgmma.spec_for("f16", m, n, k, tile=tile, out_dtype=out, store="tma", b_order=order)
    for what in ("row", "col"):
        a, b, expected = index_operands(m, n, k, what)
        d = cp.full((m, n), np.nan, dtype=cp.float16 if out == "f16" else cp.float32)
        wgmma.launch(spec, cp.asarray(a), _device_b(cp, b, order), d)
        np.testing.assert_array_equal(host_d(d, out).astype(np.float64), expected,
                                      err_msg=f"tile {tile}, D = {what}")



@pytest.mark.parametrize("case", range(len(OUT_CASES)))
def test_f16_and_bf16_outputs(cp, case):
    """D stored as f16 / bf16: within one rounding of the output type (2^-11 / 2^-8 relative) plus the f32
    accumulation tolerance, of the float64 reference; every element written (poisoned first)."""
    (m, n, k), dtype, tile, out, store = OUT_CASES[case]
    a, a64, b, b64, bias, _ = random_operands(cp, np.random.default_rng(77 + case), m, n, k, dtype, bias_mode="per_m",
                                              beta=0.0)
    d, _ = poisoned_outputs(cp, m, n, out, save_z=False)
    spec = wgmma.spec_for(dtype, m, n, k, act="gelu", bias_mode="per_m", tile=tile, out_dtype=out, store=store)
    assert spec.store == store
    wgmma.launch(spec, a, b, d, bias=cp.asarray(bias), alpha=1.5)
    cp.cuda.runtime.deviceSynchronize()
    got = host_d(d, out).astype(np.float64)
    ref, _ = reference_gemm(a64, b64, bias=bias, bias_mode="per_m", act="gelu", alpha=1.5)
    ulp = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 0.0}[out]
    assert np.isfinite(got).all()
    assert np.all(np.abs(got - ref) <= ulp * np.abs(ref) + 1e-3 * np.abs(ref).max())


def test_through_fraglab_gemm(cp):
    """The public road: kernel='wgmma' and 'auto' (sm_90, TMA-describable) plan the wgmma kernel, honour a
    stream, and a shape TMA cannot describe falls back to WMMA with one KernelFallback notice."""
    import warnings

    from fraglab.gemm.api import prepare
    from fraglab.gemm.validate import KernelFallback

    rng = np.random.default_rng(11)
    m, n, k = 300, 264, 200
    a32, b32 = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    a, b = cp.asarray(a32.astype(np.float16)), cp.asarray(b32.astype(np.float16))
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    ref, _ = reference_gemm(a32.astype(np.float16), b32.astype(np.float16), bias=bias, bias_mode="per_n", act="relu")
    for kernel in ("wgmma", "auto"):
        run = prepare(a, b, bias=cp.asarray(bias), act="relu", kernel=kernel)
        assert type(run.kernel_spec).__name__ == "WgmmaKernelSpec"
        stream = cp.cuda.Stream(non_blocking=True)
        d = run(stream)
        stream.synchronize()
        assert check_result(d.get(), ref, "f16")[0]
    n_odd = 100   # rows of B are 200 bytes: not a multiple of 16, no tensor map
    b_odd = cp.asarray(b32[:, :n_odd].astype(np.float16))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = prepare(a, b_odd, kernel="wgmma")
    assert [type(w.message) for w in caught] == [KernelFallback]
    assert type(run.kernel_spec).__name__ == "WmmaKernelSpec"
    ref_odd, _ = reference_gemm(a32.astype(np.float16), b32[:, :n_odd].astype(np.float16))
    assert check_result(run().get(), ref_odd, "f16")[0]
    # b = w.T of a row-major N x K weight: wgmma reads it K-major, WMMA gets a row-major copy; both right
    w = cp.ascontiguousarray(b.T)
    for kernel in ("wgmma", "wmma"):
        run = prepare(a, w.T, bias=cp.asarray(bias), act="relu", kernel=kernel)
        assert getattr(run.kernel_spec, "b_order", "C") == ("F" if kernel == "wgmma" else "C")
        assert check_result(run().get(), ref, "f16")[0], kernel


def test_the_check_suite_names_its_rows_by_family(cp):
    """`fraglab gemm --wgmma --check` runs wgmma_fused / wgmma_plain (not the WMMA rows), poisoned and checked."""
    from fraglab.bench.wmma_suite import run_suite

    result = run_suite([(200, 136, 72)], dtype="bf16", act="gelu", bias_mode="per_m", beta=0.5, check=True,
                       bench=False, kernel="wgmma")
    by = {r["kernel"]: r for r in result["rows"]}
    assert set(by) == {"wgmma_fused", "wgmma_plain"}
    assert by["wgmma_fused"]["status"] == by["wgmma_plain"]["status"] == "PASSED"
    assert by["wgmma_fused"]["tile"] in wgmma.ALL_TILES
    assert result["summary"][0]["family"] == "wgmma" and result["summary"][0]["check"] == "PASSED"


@pytest.mark.parametrize("family", ("wgmma", "wmma"))
def test_the_check_suite_takes_a_column_major_b(cp, family):
    """`fraglab gemm --wgmma/--wmma --b-order F`: B stored as a transposed N x K array, checked (the WMMA road
    plans a row-major copy), and the rows say so."""
    from fraglab.bench.wmma_suite import run_suite

    result = run_suite([(200, 136, 72)], dtype="bf16", act="relu", bias_mode="per_n", check=True, bench=False,
                       kernel=family, b_order="F")
    by = {r["kernel"]: r for r in result["rows"]}
    assert by[f"{family}_fused"]["status"] == by[f"{family}_plain"]["status"] == "PASSED"
    assert by[f"{family}_fused"]["b_order"] == "F"


def test_the_check_suite_runs_e4m3(cp):
    """`fraglab gemm --wgmma --dtype e4m3 --check`: 8-bit inputs (B column-major), every epilogue part, checked."""
    from fraglab.bench.wmma_suite import run_suite

    result = run_suite([(200, 136, 208)], dtype="e4m3", act="gelu", bias_mode="per_m", beta=0.5, save_z=True,
                       check=True, bench=False, kernel="wgmma", out_dtype="f16")
    by = {r["kernel"]: r for r in result["rows"]}
    assert by["wgmma_fused"]["status"] == by["wgmma_plain"]["status"] == "PASSED"
    assert by["wgmma_fused"]["checked_rows"] == 200 and by["wgmma_fused"]["max_err"] is not None
