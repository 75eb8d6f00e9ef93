"""The wgmma GEMM's swapped tiles (TileConfig.swap_ab: the kernel computes D^T = B^T A^T, the weight's rows as
wgmma's M and A's rows as its N, D^T stored back into D's rows) on an sm_90 GPU against a float64 reference (marked
gpu; skipped with the reason otherwise). Outputs are poisoned (NaN) before every launch, inputs are fresh random
values, never zeros."""

import itertools

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES
from gemm_operands import (assert_matches_reference, device_matrix, host_d, index_operands, poisoned_outputs,
                           random_operands)

pytestmark = pytest.mark.gpu

SWAPPED_TILES = tuple(t for t, c in wgmma.ALL_TILES.items() if c.swap_ab)
# M (the kernel's N: A's rows as a K-major B) any, past one and several tiles of 96-192 columns; N and K multiples
# of 8 (TMA's 16-byte rows), N past one and several 64- and 128-row tiles of the weight
SIZES = [(1, 8, 8), (7, 24, 40), (131, 136, 72), (97, 264, 1000), (200, 520, 8), (300, 1032, 200), (80, 4096, 256)]
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))
OUT_DTYPES = ("f16", "bf16", "f32")


def _combo(i):
    """Case i of the epilogue sweep: (act, bias mode, beta, save_z, input type, D's type, tile, B's order, bias
    type): every activation with every bias mode, C and Z on every other case, each swapped tile and both orders."""
    act, bias_mode = COMBOS[i]
    dtype = wgmma.DTYPES[i % 2]
    bias_dtype = dtype if bias_mode == "per_n" and i % 3 == 0 else "f32"   # nn.Linear's 16-bit bias as it is
    return (act, bias_mode, 0.75 if i % 2 else 0.0, bool(i % 2), dtype, OUT_DTYPES[i % 3],
            SWAPPED_TILES[i % len(SWAPPED_TILES)], wgmma.B_ORDERS[(i // 2) % 2], bias_dtype)


def _spec(m, n, k, dtype, tile, b_order, *, act="relu", bias_mode="per_n", has_c=False, save_z=False,
          out_dtype="f16", bias_dtype="f32", store=None):
    return wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=has_c, save_z=save_z, tile=tile,
                          out_dtype=out_dtype, b_order=b_order, bias_dtype=bias_dtype, store=store)


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp, sm90):
    from precompile import precompile

    specs = [_spec(1, 8, 8, wgmma.DTYPES[i % 2], t, o)
             for i, (t, o) in enumerate(itertools.product(SWAPPED_TILES, wgmma.B_ORDERS)) for _ in range(2)]
    specs += [_spec(1, 8, 8, dt, t, o) for t, o, dt in itertools.product(SWAPPED_TILES, wgmma.B_ORDERS, wgmma.DTYPES)]
    for i in range(len(COMBOS)):
        act, bias_mode, beta, save_z, dtype, out, tile, order, bias_dtype = _combo(i)
        specs.append(_spec(1, 8, 8, dtype, tile, order, act=act, bias_mode=bias_mode, has_c=bool(beta),
                           save_z=save_z, out_dtype=out, bias_dtype=bias_dtype))
    specs += [_spec(1, 8, 8, "f16", t, "F", act="gelu", has_c=True, save_z=True) for t in SWAPPED_TILES]
    specs += [_spec(1, 8, 8, "f16", t, "F", act="none", bias_mode="none", out_dtype=o) for t in SWAPPED_TILES
              for o in ("f16", "f32")]
    precompile(s.build() for s in specs)


def _run(cp, m, n, k, dtype, tile, b_order, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False,
         out_dtype="f16", bias_dtype="f32", grid=None, seed=0):
    ops = random_operands(cp, np.random.default_rng(seed), m, n, k, dtype, bias_mode=bias_mode, beta=beta,
                          b_order=b_order)
    bias, bias_ref = ops.bias, ops.bias
    if bias_dtype != "f32":   # the bias in the inputs' type, and its exact values for the reference
        bias, bias_ref = device_matrix(cp, ops.bias, bias_dtype)
    elif bias is not None:
        bias = cp.asarray(bias)
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    spec = _spec(m, n, k, dtype, tile, b_order, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z,
                 out_dtype=out_dtype, bias_dtype=bias_dtype)
    wgmma.launch(spec, ops.a, ops.b, d, c=None if ops.c is None else cp.asarray(ops.c), bias=bias, z=z, alpha=1.5,
                 beta=beta, leaky_slope=0.05, grid=grid)
    cp.cuda.runtime.deviceSynchronize()
    assert_matches_reference(d, z, ops.a64, ops.b64, ops.c, bias_ref, dtype=dtype, out_dtype=out_dtype,
                             bias_mode=bias_mode, act=act, alpha=1.5, beta=beta, leaky_slope=0.05,
                             where=f"{m}x{n}x{k} {dtype} tile {tile} B {b_order} {act} {bias_mode} D {out_dtype}")


@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
@pytest.mark.parametrize("tile", SWAPPED_TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_sizes(cp, m, n, k, tile, b_order):
    """Every size with each swapped tile and both orders of B (row-major: wgmma's A MN-major), bias per column
    (per row of the kernel's tile, staged by TMA), D f16 through stmatrix .trans and TMA stores clipped at both
    edges of D."""
    _run(cp, m, n, k, wgmma.DTYPES[(m + n) % 2], tile, b_order, seed=m * 7 + n + k)


@pytest.mark.parametrize("case", range(len(COMBOS)))
def test_epilogues(cp, case):
    """Every activation with every bias mode (per column, per row, full), C and Z read and written at D's (m, n)
    from the kernel's (n, m), D f16 / bf16 (staged) and f32 (direct stores), a 16-bit bias per column."""
    act, bias_mode, beta, save_z, dtype, out, tile, order, bias_dtype = _combo(case)
    _run(cp, 131, 264, 136, dtype, tile, order, act=act, bias_mode=bias_mode, beta=beta, save_z=save_z,
         out_dtype=out, bias_dtype=bias_dtype, seed=100 + case)


@pytest.mark.parametrize("tile", SWAPPED_TILES)
def test_one_block_walks_many_tiles(cp, tile):
    """A persistent grid of one block (one cluster) walks every tile of D^T: the ring's phases, the bias slots, the
    split-K hand-overs and the transposed store buffers carry over from tile to tile."""
    _run(cp, 300, 1032, 136, "f16", tile, "F", act="gelu", beta=0.5, save_z=True, seed=5,
         grid=wgmma.ALL_TILES[tile].cluster_blocks)


@pytest.mark.parametrize("out", ("f16", "f32"))
@pytest.mark.parametrize("tile", SWAPPED_TILES)
def test_stores_land_where_d_says(cp, tile, out):
    """D = row index, then D = column index (exact in f16 up to 2048), through the transposed staged store (f16)
    or direct stores (f32): every element's (row, col) of D is pinned; 300 x 1000 leaves ragged edges in both."""
    m, n, k = 300, 1000, 16
    spec = _spec(m, n, k, "f16", tile, "F", act="none", bias_mode="none", out_dtype=out)
    assert spec.store == ("tma" if out == "f16" else "direct")
    for what in ("row", "col"):
        a, b, expected = index_operands(m, n, k, what)
        d = cp.full((m, n), np.nan, dtype=cp.float16 if out == "f16" else cp.float32)
        wgmma.launch(spec, cp.asarray(a), cp.asfortranarray(cp.asarray(b)), d)
        np.testing.assert_array_equal(host_d(d, out).astype(np.float64), expected,
                                      err_msg=f"tile {tile}, D = {what}")
