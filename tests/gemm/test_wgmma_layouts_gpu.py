"""The wgmma GEMM's column-major A (imm-trans-a: A loaded as (K64, M64) boxes of its K x M rows) and the tiles
added for ragged shapes and small N (128x192: wgmma n192; 256x128; 64x128p; 64x64p; clusters of two on 128x192,
64x64p and 64x128p, B's 64-column blocks multicast by alternate blocks, a K-major B by the first; split-K clusters
of two on 64x64p, 128x64 and 64x128p, K = 8 leaving the second block no K-block), on an sm_90 GPU against the
float64 reference
(marked gpu; skipped with the reason otherwise). Outputs are poisoned (NaN) before every launch, inputs are
fresh random values. A column-major A's rows in memory are M long, so M is a multiple of 8 where it is one.
"""

import itertools

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, reference_gemm
from gemm_operands import assert_matches_reference, poisoned_outputs, random_operands

pytestmark = pytest.mark.gpu

# M multiples of 8 (a column-major A's rows), N and K multiples of 8; one tile and several, edges in M, N and K
SIZES = [(8, 24, 40), (136, 136, 72), (264, 264, 1000), (1000, 520, 8), (304, 1032, 200), (128, 256, 64)]
# row-major A: any M
ODD_SIZES = [(1, 8, 8), (7, 24, 40), (131, 136, 72), (257, 264, 1000), (997, 520, 8), (300, 1032, 200)]
NEW_TILES = ("128x192", "256x128", "64x128p", "128x192c2", "64x64p", "64x64pc2", "64x128pc2", "64x64pk2", "128x64k2",
             "64x128pk2", "192x192c2", "192x128c2", "192x192", "128x128c2x2", "128x64n2", "128x192c2x2")
A_TILES = ("128x256", "128x192", "128x128", "128x64", "64x256p", "64x128p", "256x128", "128x256c2", "128x192c2",
           "64x128pc2", "64x64p", "64x64pk2", "128x64k2", "192x192c2", "128x128c2x2", "128x64n2",
           # stages of two K-blocks
           "64x64pkb2", "64x128pkb2", "64x64pk2kb2")
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))


A_CASES = [(t, o) for t in A_TILES for o in wgmma.B_ORDERS]


def _combo(i):
    act, bias_mode = COMBOS[i]
    tiles = [t for t in (*NEW_TILES, "128x256", "64x256p")]
    tile = tiles[i % len(tiles)]
    return dict(act=act, bias_mode=bias_mode, beta=0.75 if i % 2 else 0.0, save_z=bool(i % 2),
                dtype=wgmma.DTYPES[(i // 2) % 2], tile=tile, b_order=wgmma.B_ORDERS[(i // 3) % 2],
                out_dtype=("f32", "f16", "bf16")[i % 3])


def _spec(dtype, m, n, k, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, tile=None, out_dtype="f32",
          b_order="C", a_order="C"):
    return wgmma.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, tile=tile,
                          out_dtype=out_dtype, b_order=b_order, a_order=a_order)


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp, sm90):
    """Compile what these tests launch in parallel first."""
    from precompile import precompile

    specs = [_spec(dt, 8, 8, 8, tile=t, b_order=o) for dt in wgmma.DTYPES for t, o in A_CASES]
    specs += [_spec(dt, 8, 8, 8, tile=t, b_order=o) for dt in wgmma.DTYPES for t in NEW_TILES for o in wgmma.B_ORDERS]
    for i in range(len(COMBOS)):
        c = _combo(i)
        specs.append(_spec(c.pop("dtype"), 8, 8, 8, **c))
    specs += [_spec("f16", 8, 8, 8, act="gelu", bias_mode=bm, beta=0.5, save_z=True, tile=t, out_dtype=o)
              for t in A_TILES for bm, o in (("per_n", "f16"), ("per_m", "f32"))]
    precompile(s.build() for s in specs)


def run_case(cp, m, n, k, dtype, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, seed=0, tile=None,
             out_dtype="f32", b_order="C", a_order="C", grid=None, alpha=1.25, leaky_slope=0.05):
    a, a64, b, b64, bias, c = random_operands(cp, np.random.default_rng(seed), m, n, k, dtype, bias_mode=bias_mode,
                                              beta=beta, a_order=a_order, b_order=b_order)
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    spec = _spec(dtype, m, n, k, act=act, bias_mode=bias_mode, beta=beta, save_z=save_z, tile=tile,
                 out_dtype=out_dtype, b_order=b_order, a_order=a_order)
    assert spec.a_order == a_order
    wgmma.launch(spec, a, b, d, c=None if c is None else cp.asarray(c), bias=None if bias is None else cp.asarray(bias),
                 z=z, alpha=alpha, beta=beta, leaky_slope=leaky_slope, grid=grid)
    cp.cuda.runtime.deviceSynchronize()
    where = f"{m}x{n}x{k} {dtype} {act} {bias_mode} tile {spec.tile} A {a_order} B {b_order} D {out_dtype}"
    assert_matches_reference(d, z, a64, b64, c, bias, dtype=dtype, out_dtype=out_dtype, bias_mode=bias_mode, act=act,
                             alpha=alpha, beta=beta, leaky_slope=leaky_slope, where=where)


@pytest.mark.parametrize("dtype", wgmma.DTYPES)
@pytest.mark.parametrize("tile,b_order", A_CASES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_column_major_a(cp, m, n, k, dtype, tile, b_order):
    run_case(cp, m, n, k, dtype, seed=m * 7 + n + k, tile=tile, b_order=b_order, a_order="F")


@pytest.mark.parametrize("bias_mode,out_dtype", (("per_n", "f16"), ("per_m", "f32")))
@pytest.mark.parametrize("tile", A_TILES)
def test_one_block_walks_many_tiles_with_a_column_major_a(cp, tile, bias_mode, out_dtype):
    """A persistent grid of one block (one cluster) walks every tile with the MN-major A loads: 1104 rows, an odd
    number of 128-row tiles."""
    run_case(cp, 1104, 520, 136, "f16", act="gelu", bias_mode=bias_mode, beta=0.5, save_z=True, seed=5, tile=tile,
             grid=wgmma.ALL_TILES[tile].cluster_blocks, out_dtype=out_dtype, a_order="F")


@pytest.mark.parametrize("dtype", wgmma.DTYPES)
@pytest.mark.parametrize("tile", NEW_TILES)
@pytest.mark.parametrize("m,n,k", ODD_SIZES)
@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
def test_ragged_tiles(cp, m, n, k, dtype, tile, b_order):
    run_case(cp, m, n, k, dtype, seed=m * 5 + n + k, tile=tile, b_order=b_order)


@pytest.mark.parametrize("b_order", wgmma.B_ORDERS)
@pytest.mark.parametrize("tile", NEW_TILES)
def test_one_block_walks_many_tiles_on_the_ragged_tiles(cp, tile, b_order):
    """One persistent block (one cluster) walks every tile; a cluster's last unit has a block with no rows."""
    run_case(cp, 1100, 520, 136, "bf16", act="gelu", bias_mode="per_m", beta=0.5, save_z=True, seed=6, tile=tile,
             grid=wgmma.ALL_TILES[tile].cluster_blocks, out_dtype="f16", b_order=b_order)


@pytest.mark.parametrize("a_order", ("C", "F"))
@pytest.mark.parametrize("i", range(len(COMBOS)))
def test_every_activation_and_bias_mode(cp, i, a_order):
    """Every activation x bias mode, C and Z on odd cases, D f32 / f16 / bf16, the new tiles and both B orders,
    with A row- and column-major."""
    c = _combo(i)
    run_case(cp, 200, 264, 136, c.pop("dtype"), seed=2000 + i, a_order=a_order, **c)


def test_column_major_a_through_fraglab_gemm(cp):
    """The public roads read a column-major A as it is: a CuPy Fortran array and a torch x.t() run on the wgmma
    kernel (its spec says A 'F'); M not a multiple of 8 falls back to WMMA on a row-major copy with one notice;
    e4m3 (K-major only) is one error naming the fix."""
    import warnings

    from fraglab.gemm import api
    from fraglab.gemm.validate import GemmArgumentError, KernelFallback

    rng = np.random.default_rng(12)
    m, n, k = 304, 264, 200
    a32, b32 = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
    bias = rng.uniform(-1, 1, n).astype(np.float32)
    ref, _ = reference_gemm(a32.astype(np.float16), b32.astype(np.float16), bias=bias, bias_mode="per_n", act="relu")
    a_f = cp.asfortranarray(cp.asarray(a32.astype(np.float16)))
    b = cp.asarray(b32.astype(np.float16))
    for b_arg in (b, cp.asfortranarray(b)):
        run = api.prepare(a_f, b_arg, bias=cp.asarray(bias), act="relu", out_dtype="f16")
        assert type(run.kernel_spec).__name__ == "WgmmaKernelSpec" and run.kernel_spec.a_order == "F"
        assert check_result(run().get().astype(np.float32), ref, "f16", out_dtype="f16")[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a_odd = cp.asfortranarray(cp.asarray(a32[:301].astype(np.float16)))   # rows of 301 elements: no tensor map
        run = api.prepare(a_odd, b, bias=cp.asarray(bias), act="relu")
    assert [type(w.message) for w in caught] == [KernelFallback] and "M=301" in str(caught[0].message)
    assert type(run.kernel_spec).__name__ == "WmmaKernelSpec"
    assert check_result(run().get(), ref[:301], "f16")[0]
    with pytest.raises(GemmArgumentError) as info:
        api.prepare(cp.zeros((32, 64), cp.uint8).T, cp.zeros((16, 32), cp.uint8).T, input_dtype="e4m3")   # A 64 x 32
    assert info.value.argument == "a" and "contiguous" in str(info.value)
    torch = pytest.importorskip("torch", reason="the torch road needs PyTorch")
    import fraglab

    x = torch.from_dlpack(cp.ascontiguousarray(a_f.T))   # (K, M) row-major: x.t() is A column-major
    d = fraglab.gemm(x.t(), torch.from_dlpack(b), bias=torch.from_dlpack(cp.asarray(bias)), act="relu")
    torch.cuda.synchronize()
    assert isinstance(d, torch.Tensor)
    assert check_result(d.cpu().numpy(), ref, "f16")[0]
    from fraglab.gemm import torch_road

    plan = torch_road.signature_plan(x.t(), torch.from_dlpack(b))
    assert plan.a_order == "F" and plan.lda == 0
