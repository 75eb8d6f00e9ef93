"""Block-scaled fp8 on an sm_90 GPU (DeepGEMM's recipe: e4m3 A and B, a float32 scale per row of A and 128-deep block
of K and per 128 x 128 block of B, each K-block's product scaled in the mainloop) against the float64 reference:
every tile that holds the second accumulator, odd sizes, every activation and bias mode, C and Z, split-K and
clusters, one block walking many tiles, DeepGEMM's M-major A scales, and fraglab.gemm from CuPy and torch.

D is poisoned (NaN) before every launch; the e4m3 values and the scales are random, never zeros, and the scales
differ along K and between column blocks, so a scale applied to the wrong block shows."""

import itertools

import numpy as np
import pytest

from fraglab.gemm import wgmma
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, e4m3_to_float64, reference_gemm
from gemm_operands import e4m3_bits, host_d, poisoned_outputs

pytestmark = pytest.mark.gpu

LAUNCHER_TILES = [t for t, c in wgmma.TILES.items() if c.holds_block_scales and t not in wgmma.SIXTEEN_BIT_TILES]
# the other tiles with room, each a path of its own: ping-pong, split-K (a second block's K-blocks start mid-way),
# clusters along M and N (blocks past N read no scale of B)
OTHER_TILES = ["64x64p", "64x128p", "64x64pk2", "128x64k2", "128x128c2", "128x64n2"]
SIZES = [(1, 16, 16), (131, 136, 208), (257, 264, 1024), (300, 1032, 208), (997, 520, 16), (128, 256, 384),
         (64, 384, 1040)]
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))


@pytest.fixture(scope="module", autouse=True)
def precompiled(cp, sm90):
    from precompile import precompile

    specs = [_spec(m, n, k, t) for (m, n, k), t in itertools.product(SIZES, LAUNCHER_TILES + OTHER_TILES)]
    specs += [_spec(997, 264, 208, t, act=act, bias_mode=bm, has_c=bool(i % 2), save_z=bool(i % 2),
                    out_dtype="f32" if i % 2 else "bf16")
              for i, (act, bm) in enumerate(COMBOS) for t in (LAUNCHER_TILES[i % len(LAUNCHER_TILES)],)]
    precompile(s.build() for s in specs)


def _spec(m, n, k, tile, *, act="relu", bias_mode="per_n", has_c=False, save_z=False, out_dtype="f32"):
    return wgmma.spec_for("e4m3", m, n, k, act=act, bias_mode=bias_mode, has_c=has_c, save_z=save_z, tile=tile,
                          out_dtype=out_dtype, store="tma", b_order="F", block_scaled=True)


def _scales(rng, m, n, k):
    ka, nb = -(-k // 128), -(-n // 128)
    return rng.uniform(0.25, 2.0, (m, ka)).astype(np.float32), rng.uniform(0.25, 2.0, (nb, ka)).astype(np.float32)


def _block_case(cp, m, n, k, tile, *, act="relu", bias_mode="per_n", beta=0.0, save_z=False, out_dtype="f32",
                seed=0, grid=None, m_major=False):
    rng = np.random.default_rng(seed)
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    sa, sb = _scales(rng, m, n, k)
    shape = {"none": None, "per_m": (m,), "per_n": (n,), "full": (m, n)}[bias_mode]
    bias = rng.uniform(-64, 64, shape).astype(np.float32) if shape else None
    c = rng.uniform(-64, 64, (m, n)).astype(np.float32) if beta else None
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    if m_major:   # DeepGEMM's layout: K-blocks of M rows each, M padded to 4 (a transposed view)
        sa_dev = cp.zeros((sa.shape[1], -(-m // 4) * 4), cp.float32)
        sa_dev[:, :m] = cp.asarray(sa.T)
        sa_dev = sa_dev[:, :m].T
    else:
        sa_dev = cp.asarray(sa)
    spec = _spec(m, n, k, tile, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z, out_dtype=out_dtype)
    wgmma.launch(spec, cp.asarray(a8), cp.asarray(w8).T, d, c=None if c is None else cp.asarray(c),
                 bias=None if bias is None else cp.asarray(bias), z=z, alpha=0.5, beta=beta, grid=grid,
                 scale_a=sa_dev, scale_b=cp.asarray(sb))
    cp.cuda.runtime.deviceSynchronize()
    ref, z_ref = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, c=c, bias=bias, bias_mode=bias_mode,
                                act=act, alpha=0.5, beta=beta, scale_a=sa, scale_b=sb)
    ok, max_abs, rel = check_result(host_d(d, out_dtype), ref, "e4m3", k=k, out_dtype=out_dtype, z_ref=z_ref)
    assert ok, f"block-scaled e4m3 {m}x{n}x{k} {tile} {act} {bias_mode}: max abs {max_abs:.3e}, rel {rel:.3e}"
    if save_z:
        assert check_result(z.get(), z_ref, "e4m3", k=k)[0]


@pytest.mark.parametrize("tile", LAUNCHER_TILES + OTHER_TILES)
@pytest.mark.parametrize("m,n,k", SIZES)
def test_block_scales(cp, m, n, k, tile):
    _block_case(cp, m, n, k, tile, seed=m + 7 * n + k)


@pytest.mark.parametrize("i", range(len(COMBOS)))
def test_block_scales_every_activation_and_bias_mode(cp, i):
    """Scales, then C, the bias and every activation (C and Z on odd cases, bf16 D on even ones); rows and columns
    past a tile's edge (997 x 264), two K-blocks (208 = 128 + 80)."""
    act, bias_mode = COMBOS[i]
    _block_case(cp, 997, 264, 208, LAUNCHER_TILES[i % len(LAUNCHER_TILES)], act=act, bias_mode=bias_mode,
                beta=0.75 if i % 2 else 0.0, save_z=bool(i % 2), out_dtype="f32" if i % 2 else "bf16", seed=900 + i)


@pytest.mark.parametrize("tile", ["128x128", "64x64pk2", "128x64n2"])
def test_block_scales_one_cluster_walks_every_tile(cp, tile):
    """A grid of one block (or cluster): its accumulators start from zero for every tile, with that tile's scales."""
    _block_case(cp, 300, 1032, 1040, tile, grid=wgmma.ALL_TILES[tile].cluster_blocks, seed=31)


@pytest.mark.parametrize("tile", LAUNCHER_TILES)
def test_block_scales_of_a_read_m_major(cp, tile):
    """scale_a as DeepGEMM keeps it: a column-major (M, K/128) view of a (K/128, M padded to 4) array."""
    _block_case(cp, 131, 264, 1040, tile, m_major=True, seed=41)


def test_block_scales_through_fraglab_gemm(cp):
    """fraglab.gemm(..., scale_a=(M, K/128), scale_b=(N/128, K/128)): from CuPy (uint8 bits) and from torch float8
    tensors with bf16 D (what DeepGEMM returns), and the argument errors."""
    import fraglab
    from fraglab.gemm.validate import GemmArgumentError

    rng = np.random.default_rng(13)
    m, n, k = 300, 272, 400
    a8, w8 = e4m3_bits(rng, (m, k)), e4m3_bits(rng, (n, k))
    sa, sb = _scales(rng, m, n, k)
    bias = rng.uniform(-64, 64, n).astype(np.float32)
    ref, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, bias=bias, bias_mode="per_n", act="gelu",
                            scale_a=sa, scale_b=sb)
    d = fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", bias=cp.asarray(bias), act="gelu",
                     scale_a=cp.asarray(sa), scale_b=cp.asarray(sb))
    assert check_result(d.get(), ref, "e4m3", k=k)[0]
    with pytest.raises(GemmArgumentError, match="scale_b.*block scales"):
        fraglab.gemm(cp.asarray(a8), cp.asarray(w8).T, input_dtype="e4m3", scale_a=cp.asarray(sa),
                     scale_b=cp.asarray(sb[:1]))
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("this torch has no float8_e4m3fn")
    a_t = torch.from_numpy(a8).cuda().view(torch.float8_e4m3fn)
    w_t = torch.from_numpy(w8).cuda().view(torch.float8_e4m3fn)
    d_t = fraglab.gemm(a_t, w_t.t(), scale_a=torch.from_numpy(sa).cuda(), scale_b=torch.from_numpy(sb).cuda(),
                       out_dtype="bf16")
    plain, _ = reference_gemm(e4m3_to_float64(a8), e4m3_to_float64(w8).T, scale_a=sa, scale_b=sb)
    assert isinstance(d_t, torch.Tensor) and d_t.dtype == torch.bfloat16
    assert check_result(d_t.float().cpu().numpy(), plain, "e4m3", k=k, out_dtype="bf16")[0]
