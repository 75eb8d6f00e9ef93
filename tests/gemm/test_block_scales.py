"""Block-scaled fp8 (DeepGEMM's recipe: a float32 scale per row of A and 128-deep block of K, and per 128 x 128 block
of B) on the CPU: how fraglab.gemm reads the scales' shapes, the kernel spec's checks and name, the strides a launch
packs, and the float64 reference. The kernel itself: test_block_scales_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

from fraglab.gemm import schedule, wgmma
from fraglab.gemm.epilogue import epilogue_cpp
from fraglab.gemm.reference import reference_gemm
from fraglab.gemm.validate import GemmArgumentError, check_scales


def _f32(*shape):
    return np.ones(shape, np.float32)


@pytest.mark.parametrize("m,n,k", [(4096, 4096, 7168), (5, 200, 300), (64, 16, 2000), (1, 136, 128)])
def test_block_scale_shapes_read_as_block(m, n, k):
    ka, nb = -(-k // 128), -(-n // 128)
    assert check_scales(_f32(m, ka), _f32(nb, ka), "e4m3", m, n, k) == "block"
    # DeepGEMM keeps A's scales M-major (a transposed array): any whole-element strides are read as they are
    assert check_scales(_f32(ka, m).T, _f32(nb, ka), "e4m3", m, n, k) == "block"


def test_block_scales_that_look_rowwise_on_one_side_read_as_block():
    # K = 128: one K-block, so A's block scales (M, 1) look rowwise; B's (1, 1) against (1, N) tells them apart
    m, n, k = 8, 256, 128
    assert check_scales(_f32(m, 1), _f32(2, 1), "e4m3", m, n, k) == "block"
    # N = 16, K = 2000: B's block scales (1, 16) look like rowwise (1, N); A's (M, 16) is not rowwise
    assert check_scales(_f32(4, 16), _f32(1, 16), "e4m3", 4, 16, 2000) == "block"


def test_wrong_scale_shapes_name_both_recipes():
    with pytest.raises(GemmArgumentError, match=r"scale_b.*rowwise.*block scales.*\(2, 56\)"):
        check_scales(_f32(64, 56), _f32(3, 56), "e4m3", 64, 256, 7168)
    with pytest.raises(GemmArgumentError, match="scale_a"):   # A's K-blocks do not match B's
        check_scales(_f32(64, 55), _f32(2, 56), "e4m3", 64, 256, 7168)


def test_block_scales_refuse_what_the_kernel_cannot_read():
    m, n, k = 64, 256, 1024
    with pytest.raises(GemmArgumentError, match="scale_a.*float32"):
        check_scales(np.ones((m, 8)), _f32(2, 8), "e4m3", m, n, k)
    with pytest.raises(GemmArgumentError, match="scale_a.*strides"):
        check_scales(_f32(m, 8)[::-1], _f32(2, 8), "e4m3", m, n, k)
    with pytest.raises(GemmArgumentError, match="scale_b"):   # B's scales are read row-major
        check_scales(_f32(m, 8), _f32(8, 2).T, "e4m3", m, n, k)
    with pytest.raises(GemmArgumentError, match="scale_a.*e4m3"):
        check_scales(_f32(m, 8), _f32(2, 8), "bf16", m, n, k)


def test_the_spec_holds_block_scales_only_where_they_fit():
    spec = wgmma.WgmmaKernelSpec("e4m3", "relu", "per_n", tile="128x128", b_order="F", block_scaled=True)
    assert spec.name().count("false, false, false, true>") == 1   # Epilogue<..., RowColScale false, BlockScale true>
    with pytest.raises(ValueError, match=r"128x256.*room.*128x128, 128x64, 64x64p, 64x64pk2, 128x64k2"):
        wgmma.WgmmaKernelSpec("e4m3", tile="128x256", b_order="F", block_scaled=True)
    with pytest.raises(ValueError, match="e4m3"):
        wgmma.WgmmaKernelSpec("bf16", tile="128x128", block_scaled=True)
    with pytest.raises(ValueError, match="one scaling recipe"):
        wgmma.WgmmaKernelSpec("e4m3", tile="128x128", b_order="F", scaled=True, block_scaled=True)
    with pytest.raises(ValueError, match="one scaling recipe"):
        epilogue_cpp("relu", "per_n", False, False, True, True)
    # 192-row tiles run three consumers of 152 registers: a second 64-column accumulator of 64 rows fits, not 128
    assert wgmma.ALL_TILES["128x128"].holds_block_scales and not wgmma.ALL_TILES["192x128"].holds_block_scales
    assert not wgmma.ALL_TILES["64x256p"].holds_block_scales and not wgmma.ALL_TILES["128x128p"].holds_block_scales
    # each K-block's product is promoted alone: stages of two K-blocks hold none, whatever their accumulators
    assert wgmma.ALL_TILES["64x64pk2"].holds_block_scales and not wgmma.ALL_TILES["64x64pk2kb2"].holds_block_scales
    with pytest.raises(ValueError, match="64x64pk2kb2.*room"):
        wgmma.WgmmaKernelSpec("e4m3", tile="64x64pk2kb2", b_order="F", block_scaled=True)


def test_every_block_scaled_instantiation_is_compiled():
    specs = wgmma.all_specs()
    block = [s for s in specs if s.block_scaled]
    assert {s.tile for s in block} == set(schedule.BLOCK_SCALE_TILES)   # what the rule picks
    assert all(s.dtype == "e4m3" and s.b_order == "F" and not s.scaled for s in block)
    assert len(block) == len(wgmma.ACT_KINDS) * len(wgmma.BIAS_MODES) * 4 * len(wgmma.OUT_DTYPES) * 5
    assert wgmma.spec_for("e4m3", 4096, 4096, 7168, b_order="F", block_scaled=True).tile == "128x128"


class _Device:
    """A device array stand-in: shape, byte strides and an address."""

    def __init__(self, shape, strides=None, address=0x1000):
        self.shape, self.strides = shape, strides or tuple(4 * int(np.prod(shape[i + 1:])) for i in range(len(shape)))
        self.__cuda_array_interface__ = {"data": (address, False)}


def test_a_launch_packs_scale_a_strides(monkeypatch):
    monkeypatch.setattr(wgmma, "_packed_launch", lambda key: key)
    spec = wgmma.WgmmaKernelSpec("e4m3", tile="128x128", b_order="F", out_dtype="bf16", block_scaled=True)
    a, b, d = _Device((300, 1024)), _Device((1024, 256)), _Device((300, 256))
    row_major = wgmma.bind(spec, a, b, d, scale_a=_Device((300, 8)), scale_b=_Device((2, 8)), shared=False)
    m_major = wgmma.bind(spec, a, b, d, scale_a=_Device((300, 8), (4, 4 * 304)), scale_b=_Device((2, 8)),
                         shared=False)
    assert row_major[-2:] == (8, 1) and m_major[-2:] == (1, 304)
    rowwise = wgmma.WgmmaKernelSpec("e4m3", tile="128x128", b_order="F", out_dtype="bf16", scaled=True)
    assert wgmma.bind(rowwise, a, b, d, scale_a=_Device((300,)), scale_b=_Device((256,)), shared=False)[-2:] == (0, 0)
    with pytest.raises(ValueError, match="scale_a and scale_b"):
        wgmma.bind(spec, a, b, d, shared=False)


def test_reference_applies_each_block_scale_to_its_block():
    rng = np.random.default_rng(7)
    m, n, k = 5, 200, 300   # K-blocks of 128, 128, 44; column blocks of 128, 72
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    sa, sb = rng.random((m, 3)) + 0.5, rng.random((2, 3)) + 0.5
    d, z = reference_gemm(a, b, scale_a=sa, scale_b=sb, bias=np.arange(n, dtype=float), bias_mode="per_n",
                          act="relu")
    want = np.zeros((m, n))
    for kk in range(k):   # one rank-1 update per K index, each with its own block's factors
        want += np.outer(a[:, kk] * sa[:, kk // 128], b[kk] * np.where(np.arange(n) < 128, sb[0, kk // 128],
                                                                         sb[1, kk // 128]))
    np.testing.assert_allclose(z, want + np.arange(n), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(d, np.maximum(want + np.arange(n), 0), rtol=1e-10, atol=1e-10)
    # scales constant along K are the rowwise recipe with B's factor per 128 columns
    d_block, _ = reference_gemm(a, b, scale_a=np.repeat(sa[:, :1], 3, 1), scale_b=np.repeat(sb[:, :1], 3, 1))
    d_row, _ = reference_gemm(a, b, scale_a=sa[:, 0], scale_b=np.where(np.arange(n) < 128, sb[0, 0], sb[1, 0]))
    np.testing.assert_allclose(d_block, d_row, rtol=1e-10, atol=1e-10)
