"""The swapped tiles' host side (TileConfig.swap_ab: the kernel computes D^T = B^T A^T): their instantiations,
refusals, stores and which tensor map holds which operand. CPU only."""

import pytest

from fraglab.errors import InputError
from fraglab.gemm import wgmma

SWAPPED = [t for t, c in wgmma.ALL_TILES.items() if c.swap_ab]


def test_there_are_swapped_tiles_of_every_kind():
    shapes = {(c.bm, c.bn, c.pingpong, c.cluster_k) for t, c in wgmma.ALL_TILES.items() if c.swap_ab}
    assert any(p and k == 2 for _, _, p, k in shapes) and any(not p for _, _, p, _ in shapes)
    assert any(bn % 64 for _, bn, _, _ in shapes) and any(bn % 64 == 0 for _, bn, _, _ in shapes)


@pytest.mark.parametrize("tile", SWAPPED)
def test_a_swapped_spec_names_the_transposed_kernel_in_its_own_coordinates(tile):
    """The kernel's B is A (row-major: K-major), D transposed, and D's per-column bias is per row of its tile."""
    for b_order in wgmma.B_ORDERS:
        spec = wgmma.spec_for("f16", 100, 4096, 4096, tile=tile, bias_mode="per_n", out_dtype="f16", b_order=b_order)
        assert spec.kernel_b_order == "F" and spec.kernel_bias_mode == "per_m"
        assert spec.name().endswith("false, true, true>")   # BSwapOffsets, BKMajor, TransposedD
        assert "BiasMode::PerM" in spec.name()
    per_m = wgmma.spec_for("f16", 100, 4096, 4096, tile=tile, bias_mode="per_m", out_dtype="f16")
    assert per_m.kernel_bias_mode == "per_n" and "BiasMode::PerN" in per_m.name()
    full = wgmma.spec_for("f16", 100, 4096, 4096, tile=tile, bias_mode="full", out_dtype="f16")
    assert full.kernel_bias_mode == "full"


def test_unswapped_names_keep_their_form():
    spec = wgmma.spec_for("f16", 100, 4096, 4096, tile="128x128", bias_mode="per_n", out_dtype="f16")
    assert spec.kernel_bias_mode == "per_n" and spec.name().endswith("false, false>")
    assert wgmma.spec_for("f16", 1, 8, 8, tile="128x96", b_order="F").kernel_b_order == "F"


@pytest.mark.parametrize("tile", SWAPPED)
def test_swapped_tiles_refuse_what_they_cannot_run_naming_the_argument(tile):
    with pytest.raises(InputError) as err:
        wgmma.spec_for("e4m3", 100, 4096, 4096, tile=tile, b_order="F", out_dtype="f16")
    assert err.value.argument == "tile" and "swaps A and B" in str(err.value)
    assert "128x256" in str(err.value)   # a tile that takes e4m3
    with pytest.raises(InputError) as err:
        wgmma.spec_for("f16", 100, 4096, 4096, tile=tile, a_order="F", out_dtype="f16")
    assert err.value.argument == "tile" and "a_order" in str(err.value)
    with pytest.raises(ValueError, match="store 'direct'"):
        wgmma.spec_for("f16", 100, 4096, 4096, tile=tile, out_dtype="f32", store="tma")
    with pytest.raises(ValueError, match="TMA"):
        wgmma.WgmmaKernelSpec("f16", tile=tile, a_load="copy")


@pytest.mark.parametrize("tile", SWAPPED)
def test_stores_a_16_bit_d_staged_and_f32_direct(tile):
    for out, store in (("f16", "tma"), ("bf16", "tma"), ("f32", "direct")):
        assert wgmma.spec_for("bf16", 100, 4096, 4096, tile=tile, out_dtype=out).store == store
    config = wgmma.ALL_TILES[tile]
    # a consumer's 64 rows are 128 bytes of a row of D; a chunk is 64 (or 32) of the tile's columns, rows of D
    assert config.chunk_bytes("f16") == 128
    # (the most of 64, 32, 16 that divide the tile's columns: whole stmatrix groups of 16, within a buffer)
    assert config.bn % config.chunk_rows == 0 and config.chunk_rows % 16 == 0 and config.chunk_rows <= 64
    assert all(config.bn % bigger for bigger in (32, 64) if bigger > config.chunk_rows)
    assert config.chunk_rows * 128 <= config.warpgroup_rows * 128   # within a consumer's staging buffer


def test_the_tensor_map_of_a_and_of_b_trade_places():
    from fraglab.gemm import torch_road

    swapped = wgmma.spec_for("f16", 100, 4096, 4096, tile=SWAPPED[0], out_dtype="f16", bias_mode="per_n")
    plain = wgmma.spec_for("f16", 100, 4096, 4096, tile="128x128", out_dtype="f16", bias_mode="per_n")
    index = wgmma.PARAM_INDEX
    assert wgmma.operand_map_index(plain) == (index["map_a"], index["map_b"])
    assert wgmma.operand_map_index(swapped) == (index["map_b"], index["map_a"])
    moves = {slot: param for slot, param, is_map in torch_road._movable_parameters(swapped) if is_map}
    assert moves[0] == index["map_b"] and moves[1] == index["map_a"]   # the call's A lives in the kernel's B map


def test_launch_blocks_count_the_tiles_of_d_transposed():
    """bind sizes the persistent grid from the kernel's problem, N x M: 4096 rows of 64 are 64 tiles, split-K
    clusters of two blocks each."""
    config = wgmma.ALL_TILES["64x96pk2t"]
    assert wgmma.launch_blocks(4096, 80, config) == 128
    assert wgmma.launch_blocks(4096, 300, config) == 132   # 256 tiles: one cluster per SM pair


def test_no_swapped_tile_holds_block_scales():
    """Block-scaled e4m3 needs K-major operands the unswapped way round: the compile test's block-scaled
    representatives (every tile that holds_block_scales) never meet a swapped tile's refusal."""
    assert not any(c.holds_block_scales for c in wgmma.ALL_TILES.values() if c.swap_ab)
    assert wgmma.ALL_TILES["64x128pk2t"].bn == 128 and not wgmma.ALL_TILES["64x128pk2t"].holds_block_scales
    for tile, config in wgmma.ALL_TILES.items():
        if config.holds_block_scales:
            wgmma.WgmmaKernelSpec("e4m3", "relu", "per_n", tile=tile, out_dtype="bf16", store="tma", b_order="F",
                                  block_scaled=True)
