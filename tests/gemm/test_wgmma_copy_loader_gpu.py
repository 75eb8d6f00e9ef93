"""The wgmma GEMM's copy loader (cp.async 16-byte chunks into the 128B-swizzled stages, for operands whose rows are
16 but not 32 bytes aligned; asked for by name, no schedule rule picks it) on an sm_90 GPU against the float64
reference (marked gpu; skipped with the reason otherwise). Outputs are poisoned (NaN) before every launch, inputs
are fresh random values. The loaders are forced per operand (both copied, one copied and the other on TMA); sizes
put the edges of M, N and K inside a tile (K and N multiples of 8: the row pitch TMA and cp.async both need), with
row pitches of 16 mod 32 bytes (the case it is meant for) and aligned ones.
"""

import dataclasses
import itertools

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, reference_gemm
from gemm_operands import assert_matches_reference, host_d, poisoned_outputs, random_operands

pytestmark = pytest.mark.gpu

# (M, N, K): rows of N and K elements at 16 mod 32 bytes (f16 / bf16) except the last two; M odd where A is
# row-major (a column-major A's rows are M long: a multiple of 8)
SIZES = [(997, 520, 1000), (131, 136, 72), (257, 264, 200), (1, 8, 8), (300, 1032, 136), (264, 256, 128),
         (200, 96, 1024)]
TILES = ("128x256", "128x192", "128x128", "128x64", "64x128p", "64x256p", "256x128")
LOADS = (("copy", "copy"), ("tma", "copy"), ("copy", "tma"))
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))


def _spec(dtype, m, n, k, loads, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, tile=None,
          out_dtype="f32", b_order="C", a_order="C"):
    spec = wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, tile=tile,
                          out_dtype=out_dtype, b_order=b_order, a_order=a_order)
    return dataclasses.replace(spec, a_load=loads[0], b_load=loads[1])


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp, sm90):
    """Compile what these tests launch in parallel first (the loaders are launch parameters: one build each)."""
    from precompile import precompile

    specs = [_spec(dt, 8, 8, 8, LOADS[0], tile=t, b_order=o) for dt in wgmma.DTYPES for t in TILES
             for o in wgmma.B_ORDERS]
    specs += [_spec("f16", 8, 8, 8, LOADS[0], act=act, bias_mode=bm, beta=0.5, save_z=True, tile="128x192",
                    out_dtype=o, b_order=bo) for (act, bm), o, bo in zip(COMBOS, itertools.cycle(wgmma.OUT_DTYPES),
                                                                         itertools.cycle(wgmma.B_ORDERS))]
    precompile(s.build() for s in specs)


def run_case(cp, m, n, k, dtype, loads, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, seed=0,
             tile=None, out_dtype="f32", b_order="C", a_order="C", grid=None, alpha=1.25, leaky_slope=0.05):
    a, a64, b, b64, bias, c = random_operands(cp, np.random.default_rng(seed), m, n, k, dtype, bias_mode=bias_mode,
                                              beta=beta, a_order=a_order, b_order=b_order)
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    spec = _spec(dtype, m, n, k, loads, act=act, bias_mode=bias_mode, beta=beta, save_z=save_z, tile=tile,
                 out_dtype=out_dtype, b_order=b_order, a_order=a_order)
    assert (spec.a_load, spec.b_load) == loads and spec.copied_operands == (loads[0] == "copy") + 2 * (
        loads[1] == "copy")
    wgmma.launch(spec, a, b, d, c=None if c is None else cp.asarray(c), bias=None if bias is None else cp.asarray(bias),
                 z=z, alpha=alpha, beta=beta, leaky_slope=leaky_slope, grid=grid)
    cp.cuda.runtime.deviceSynchronize()
    where = (f"{m}x{n}x{k} {dtype} {act} {bias_mode} tile {spec.tile} A {a_order} B {b_order} D {out_dtype} "
             f"loads {loads}")
    assert_matches_reference(d, z, a64, b64, c, bias, dtype=dtype, out_dtype=out_dtype, bias_mode=bias_mode, act=act,
                             alpha=alpha, beta=beta, leaky_slope=leaky_slope, where=where)


@pytest.mark.parametrize("loads", LOADS)
@pytest.mark.parametrize("dtype", wgmma.DTYPES)
@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_copy_loader_row_major_a(cp, m, n, k, tile, b_order, dtype, loads):
    run_case(cp, m, n, k, dtype, loads, seed=m * 3 + n + k, tile=tile, b_order=b_order)


@pytest.mark.parametrize("loads", LOADS)
@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
@pytest.mark.parametrize("tile", ("128x256", "128x192", "128x128", "64x128p"))
@pytest.mark.parametrize("m,n,k", [(1000, 520, 1000), (136, 136, 72), (264, 264, 200), (8, 8, 8)])
def test_copy_loader_column_major_a(cp, m, n, k, tile, b_order, loads):
    """A column-major (its K x M rows copied as (K64, M64) boxes, the MN-major layout imm-trans-a reads)."""
    run_case(cp, m, n, k, "bf16" if m % 16 else "f16", loads, seed=m + n * 3 + k, tile=tile, b_order=b_order,
             a_order="F")


@pytest.mark.parametrize("i", range(len(COMBOS)))
def test_copy_loader_every_activation_and_bias_mode(cp, i):
    """Every activation x bias mode with C and Z, D f32 / f16 / bf16, both B orders, both 16-bit types."""
    act, bias_mode = COMBOS[i]
    run_case(cp, 203, 264, 136, wgmma.DTYPES[i % 2], LOADS[i % 3], act=act, bias_mode=bias_mode, beta=0.5,
             save_z=True, seed=3000 + i, tile="128x192", out_dtype=wgmma.OUT_DTYPES[i % 3],
             b_order=wgmma.B_ORDERS[(i // 2) % 2])


@pytest.mark.parametrize("tile", ("128x256", "128x192", "128x128", "64x128p"))
@pytest.mark.parametrize("a_order", ("C", "F"))
def test_one_block_walks_many_tiles_with_the_copy_loader(cp, tile, a_order):
    """A grid of one block walks every tile: the ring's phases wrap many times with cp.async arrivals."""
    run_case(cp, 1104, 520, 1000, "f16", LOADS[0], act="gelu", bias_mode="per_m", beta=0.5, save_z=True, seed=7,
             tile=tile, grid=1, out_dtype="f16", a_order=a_order, b_order="F" if a_order == "C" else "C")


@pytest.mark.parametrize("k,lda", [(1000, 1032), (1001, 1008)])
def test_copy_loader_reads_views_of_wider_rows(cp, k, lda):
    """A and B as views of wider arrays (the pitch passed as lda / ldb): rows of 1032 elements (2064 bytes, 16 mod
    32) are copied; rows that end mid-chunk (K = 1001) leave A on TMA, as the launch decides."""
    m, n, ldb = 300, 520, 536
    rng = np.random.default_rng(k)
    a32 = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b32 = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    a_full = cp.asarray(rng.uniform(-1, 1, (m, lda)).astype(np.float16))   # random bytes past the view's rows
    b_full = cp.asarray(rng.uniform(-1, 1, (k, ldb)).astype(np.float16))
    a, b = a_full[:, :k], b_full[:, :n]
    a[...] = cp.asarray(a32.astype(np.float16))
    b[...] = cp.asarray(b32.astype(np.float16))
    d, _ = poisoned_outputs(cp, m, n, "f32", False)
    spec = _spec("f16", m, n, k, LOADS[0], tile="128x128")
    wgmma.bind(spec, a, b, d, bias=cp.asarray(bias), lda=lda, ldb=ldb)(None)
    cp.cuda.runtime.deviceSynchronize()
    d_ref, _ = reference_gemm(a32.astype(np.float16).astype(np.float64), b32.astype(np.float16).astype(np.float64),
                              bias=bias, bias_mode="per_n", act="relu", alpha=1.0)
    ok, max_abs, rel = check_result(host_d(d, "f32"), d_ref, "f16")
    assert ok, f"K {k} lda {lda}: max abs {max_abs:.3e}, rel {rel:.3e}"
