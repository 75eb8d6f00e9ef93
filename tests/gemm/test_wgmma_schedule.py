"""fraglab/gemm/schedule.py: one test per rule, with the problem each rule was measured on, plus the launcher's use."""

from __future__ import annotations

import pytest

from fraglab.gemm import schedule, wgmma


def test_rules_are_named_and_every_choice_is_a_launcher_tile():
    seen = set()
    for m in (1, 16, 64, 65, 128, 160, 256, 1000, 2048, 3000, 4095, 8192):
        for n in (8, 1000, 3000, 4096, 8192, 14336):
            for k in (8, 1000, 2048, 4096, 8192):
                for dtype, order in (("f16", "C"), ("bf16", "F"), ("e4m3", "F")):
                    for block in (False, True) if dtype == "e4m3" else (False,):
                        s = schedule.choose(m, n, k, dtype, order, "f16", block_scaled=block)
                        assert s.tile in wgmma.TILES and s.rule in schedule.RULES
                        assert s.l2_promotion in schedule.L2_PROMOTIONS
                        assert not block or wgmma.TILES[s.tile].holds_block_scales
                        seen.add(s.rule)
    assert seen == set(schedule.RULES)   # every rule is reachable


@pytest.mark.parametrize("m", [1, 8, 16, 32, 64])
def test_rule_one_row_tile_for_decode_m(m):
    # N 4096, K 2048: 64 tiles of 64x64 fit one wave (more SMs stream the weight; 19.8 us against 64x256p's 28.4
    # at M 64, K 4096), in stages of two K-blocks (12.54 us against 64x64p's 13.98 at K 2048); N 8192 (128 tiles,
    # too many for split-K clusters) from K 4096 on too
    for n, k in ((4096, 2048), (8192, 4096), (8192, 14336)):
        s = schedule.choose(m, n, k, "f16", "F", "f16")
        assert (s.tile, s.rule, s.l2_promotion) == ("64x64pkb2", "one_row_tile", "256B"), (n, k)
    # N 11008 / 14336: 172 / 224 tiles of 64x64 would be two waves; 64x128 tiles in stages of two K-blocks with
    # either B order (86 / 112 tiles; M 64, N 11008, K 4096: 37.47 us against 64x128p's 37.66 with a column-major B,
    # 36.70 against 64x256p's 38.21 with a row-major one)
    for n, k in ((14336, 4096), (11008, 4096), (11008, 14336)):
        s = schedule.choose(m, n, k, "f16", "F", "f16")
        assert (s.tile, s.rule, s.l2_promotion) == ("64x128pkb2", "one_row_tile", "256B")
        s = schedule.choose(m, n, k, "bf16", "C", "f16")
        assert (s.tile, s.rule, s.l2_promotion) == ("64x128pkb2", "one_row_tile", "256B")
    # 64x64p and 64x128pkb2: 16-bit inputs only
    assert schedule.choose(m, 4096, 4096, "e4m3", "F", "f16").tile == "64x256p"
    assert schedule.choose(m, 14336, 4096, "e4m3", "F", "f16").tile == "64x256p"
    # 65 rows are two 64-row tiles: the rule stops at one
    assert schedule.choose(65, 4096, 4096).rule != "one_row_tile"


def test_rule_sector_misaligned_rows_turns_promotion_off_and_takes_a_cluster_of_two():
    # 3000 f16 elements are 6000 bytes: 16-byte aligned (TMA takes it), not 32 (every other row starts mid-sector)
    assert schedule.row_pitches(3000, 3000, 3000, "f16", "C", "f16") == (6000, 6000, 6000)
    for order in ("C", "F"):
        # 3000^3: 128 units of two 192x192 tiles (1.94 waves of 66 clusters) and 192 of two 128x192 (2.91) fill
        # their waves alike (useful share 0.925 each); the 192-row tile reads fewer bytes per multiply-add
        # (629 against 570, and 128x256's 447)
        s = schedule.choose(3000, 3000, 3000, "f16", order, "f16")
        assert (s.tile, s.rule, s.l2_promotion) == ("192x192c2", "sector_misaligned_rows", "none")
        # 5000x3000x2000: 224 units of 192x192c2 are 3.39 waves (share 0.771), 320 of 128x192c2 4.85 (0.925): the
        # 128-row tile (591 against 543)
        assert schedule.useful_share(5000, 3000, 192, 192, 132, cluster=2) == pytest.approx(
            5000 * 3000 / (4 * 66 * 2 * 192 * 192))
        s = schedule.choose(5000, 3000, 2000, "f16", order, "f16")
        assert (s.tile, s.rule) == ("128x192c2", "sector_misaligned_rows")
        # 1000^3: 64 tiles of 128x128 fit one wave, and 128 of 64x128 too: 64x128pc2 makes 128 blocks (205 against
        # 173; 2x2 clusters of 128x128 on 64 SMs: 184 against 175 on the H100, 195 against 207 on the H200)
        s = schedule.choose(1000, 1000, 1000, "f16", order, "f16")
        assert (s.tile, s.rule) == ("64x128pc2", "sector_misaligned_rows")
        # 128 tiles of 128x128: one wave; 256 of 64x128 would be two: clusters of two 128x128 (281 against 238)
        for m, n in ((1000, 2000), (2000, 1000)):
            assert schedule.tile_count(m, n, 64, 128) > 132 >= schedule.tile_count(m, n, 128, 128)
            assert schedule.choose(m, n, 1000, "f16", order, "f16").tile == "128x128c2"
        # 800x1200: 130 tiles of 64x128 would fit 132 SMs, but 13 row tiles make 70 units of two against one wave's
        # 66 clusters: the second wave cost 64x128pc2 18 % (15.7 / 16.1 us against 128x128c2's 13.3 / 13.4, H100)
        assert schedule.tile_count(800, 1200, 64, 128) <= 132 and schedule.cluster_units(800, 1200, 64, 128, 2) > 66
        assert schedule.choose(800, 1200, 1000, "f16", order, "f16").tile == "128x128c2"
    assert schedule.choose(3000, 3000, 3000, "e4m3", "F", "f16").tile == "128x256"   # clusters unmeasured for fp8
    assert schedule.choose(3000, 3000, 3000, "e4m3", "F", "f16").rule == "sector_misaligned_rows"
    # D alone misaligned counts too (the TMA store: B^T rows are K = 4096 here); an f32 D of 3000 columns is
    # 12000 bytes: aligned
    assert schedule.choose(4096, 3000, 4096, "f16", "F", "f16").rule == "sector_misaligned_rows"
    assert schedule.choose(4096, 3000, 4096, "f16", "F", "f32").rule == "waves"
    assert schedule.sector_aligned(4096, 4096, 3008, "f16", "F", "f32")      # 3008 x 2 = 6016 = 188 x 32
    # few tiles and misaligned: the small tiles, promotion still off
    s = schedule.choose(200, 1000, 1000, "f16", "C", "f16")
    assert (s.tile, s.l2_promotion) == ("64x128pc2", "none")
    s = schedule.choose(200, 1000, 1000, "e4m3", "F", "f16")
    assert (s.tile, s.l2_promotion, s.rule) == ("128x64", "none", "sector_misaligned_rows")


def test_small_misaligned_problems_get_a_tile_whose_units_fit_one_wave():
    """Where 128x128 tiles fit one wave, the misaligned rule never picks a tile that needs a second one (a cluster
    tile's wave is SMs // 2 units of two tiles)."""
    for m in range(100, 1500, 60):
        for n in (1000, 1200, 1500, 2000, 2400):
            if schedule.tile_count(m, n, 128, 128) > 132:
                continue
            s = schedule.choose(m, n, 1000, "f16", "C", "f16")
            assert s.rule == "sector_misaligned_rows", (m, n)
            bm, bn, cluster = schedule.TILE_SHAPES[s.tile]
            assert schedule.cluster_units(m, n, bm, bn, cluster) <= 132 // cluster, (m, n, s.tile)


def test_useful_share_counts_a_cluster_as_one_unit_of_two_tiles():
    # 3000^3 on 128x192c2: 12 units down (the last one's second tile past M) x 16 across = 192 units, 66 per wave
    share = schedule.useful_share(3000, 3000, 128, 192, 132, cluster=2)
    assert share == pytest.approx(3000 * 3000 / (3 * 66 * 2 * 128 * 192))
    # 1100 rows: 9 tiles of 128, so 5 units of two; one-block tiles count 9
    assert schedule.useful_share(1100, 192, 128, 192, 132, cluster=2) == pytest.approx(1100 * 192 / (66 * 2 * 128 * 192))
    assert schedule.useful_share(1100, 192, 128, 192, 132) == pytest.approx(1100 * 192 / (132 * 128 * 192))


def test_the_weighed_tiles_are_the_launchers():
    for rates in (schedule.TILE_RATE, schedule.TILE_RATE_K_MAJOR_B, schedule.TILE_RATE_MISALIGNED,
                  schedule.TILE_RATE_MISALIGNED_FP8,
                  schedule.SPLIT_K_MIN_K, schedule.ROW_PADDING_TILES):
        assert set(rates) <= set(schedule.TILE_SHAPES)


def test_rule_sector_misaligned_rows_keeps_a_and_b_on_tma():
    # the copy loader measured slower than TMA boxes of rows at 16 mod 32 bytes on every shape it was timed on
    # (3000^3, 5000x3000x2000, 1000^3): the launcher never picks it; it is asked for by name
    for shape, order in (((3000, 3000, 3000), "C"), ((5000, 3000, 2000), "C"), ((1000, 1000, 1000), "F")):
        spec = wgmma.spec_for("f16", *shape, out_dtype="f16", b_order=order)
        assert schedule.choose(*shape, "f16", order, "f16").rule == "sector_misaligned_rows"
        assert (spec.a_load, spec.b_load, spec.copied_operands) == ("tma", "tma", 0), shape


def test_rule_waves_picks_by_useful_share_times_rate():
    # 3072^3: 288 tiles of 128x256 (2.18 waves, efficiency 0.73), 576 of 128x128 (4.36, 0.87 x 0.86), 384 of
    # 128x192 (2.91, 0.97 x 0.92)
    assert schedule.wave_efficiency(288) == pytest.approx(288 / 396)
    assert schedule.useful_share(3072, 3072, 128, 192) == pytest.approx(384 / 396)
    # 3000^3 on 128x256: 24 x 12 tiles in 3 waves, each tile 3000/3072 of its columns used
    assert schedule.useful_share(3000, 3000, 128, 256) == pytest.approx(3000 * 3000 / (3 * 132 * 128 * 256))
    s = schedule.choose(3072, 3072, 3072)
    assert (s.tile, s.rule, s.l2_promotion) == ("128x192", "waves", "256B")
    assert schedule.choose(3072, 3072, 3072, "e4m3", "F").tile == "128x128"   # no 128x192 for 8-bit inputs
    for m, n in ((2048, 2048), (4096, 4096), (8192, 8192), (4095, 4096), (1000, 4096), (4096, 14336)):
        assert schedule.choose(m, n, 4096).tile == "128x256", (m, n)
    # 1536^2: 288 tiles of 128x64 would be 2.18 waves; 128x192's 96 tiles (0.73 x 0.92) beat 128x256's 72
    # (0.55 x 1.0) and 128x128's 144 in two waves (0.55 x 0.86)
    assert (schedule.choose(1536, 1536, 1536).tile, schedule.choose(1536, 1536, 1536).rule) == ("128x192", "waves")
    # 2560^2: 200 tiles of 128x256 fill 0.76 of two waves; 128x192 (280 tiles, 3 waves) 0.67 x 0.92
    assert schedule.choose(2560, 2560, 2560).tile == "128x256"


def test_rule_waves_takes_the_tiles_between_64_column_multiples_for_a_column_major_b():
    # 128x224 / 128x160 / 128x96 (B column-major only: an MN-major B loads in 64-column boxes) fill the waves that
    # the 64-multiples leave part-filled. N 57344 at M 256: 448 tiles of 128x256 are 3.39 waves (0.85 of four),
    # 512 of 128x224 3.88 (0.97 x 0.97): 389.0 us against 442.9 (torch.mm 376.9)
    assert schedule.useful_share(256, 57344, 128, 224) == pytest.approx(512 / 528)
    for (m, n, k), tile, before in (((256, 57344, 8192), "128x224", "128x256"), ((512, 14336, 4096), "128x224", "128x256"),
                                    ((256, 10240, 8192), "128x160", "128x192"), ((1024, 5120, 4096), "128x160", "128x192"),
                                    ((256, 6144, 4096), "128x96", "128x128"), ((128, 11008, 11008), "128x96", "128x128")):
        s = schedule.choose(m, n, k, "f16", "F", "f16")
        assert (s.tile, s.rule) == (tile, "waves"), (m, n, k)
        assert schedule.choose(m, n, k, "bf16", "F", "bf16").tile == tile
        # a row-major B keeps the 64-column multiples but for 224 columns in a slot of whole boxes (128x224r) at
        # M 193-1024 (at M 256, N 6144 it takes rule row_pairs' 128x128c2); e4m3 (unmeasured on them) keeps them all
        row_major = ("128x224r" if tile == "128x224" and 192 < m <= 1024 and schedule.tile_count(m, n, 128, 224) > 132
                     else before)
        assert schedule.choose(m, n, k, "f16", "C", "f16").tile in (row_major, before + "c2"), (m, n, k)
        assert not wgmma.TILES[schedule.choose(m, n, k, "e4m3", "F", "f16").tile].k_major_b_only
    # where the shares are near level the rate keeps 128x256: 8192^3 is 15.5 waves of 128x256 (0.97) and 17.9 of
    # 128x224 (0.997 x 0.97): 1678 against 1683 us; 4096^3 3.9 waves (0.97) against 4.6 (0.92 x 0.97)
    for size in (4096, 8192):
        assert schedule.choose(size, size, size, "f16", "F", "f16").tile == "128x256"
    assert schedule.choose(2048, 28672, 4096, "f16", "F", "f16").tile == "128x256"   # both 0.97: 740 against 752


def test_rule_waves_takes_128x224r_for_a_row_major_b_at_193_to_1024_rows():
    """Where 128x256 leaves the last wave part-filled (N 14336 / 28672 / 57344 at M 256-1024: 0.85 of it) 224
    columns of a row-major B in a slot of four boxes fill 0.97 (512x28672x4096 172.0 us against 187.8; 768x14336x4096
    129.0 against 143.9); not within one wave of them (200x14336x4096: 128 tiles, 56.5 against 50.2), nor where the
    shares are level (M 2048: 804.8 against 722.4), nor at M <= 192 (M 80: 91.3 against 87.6), nor for a column-major
    B (128x224 itself) or 8-bit inputs."""
    def pick(m, n, k, dtype="f16", order="C"):
        s = schedule.choose(m, n, k, dtype, order, "f16")
        return s.tile, s.rule

    assert schedule.useful_share(512, 28672, 128, 224) == pytest.approx(512 / 528)
    assert schedule.useful_share(512, 28672, 128, 256) == pytest.approx(448 / 528)
    for m in (193, 256, 512, 1024):
        for n, k in ((14336, 4096), (28672, 4096), (57344, 8192)):
            if schedule.useful_share(m, n, 128, 256) < 0.9 and schedule.tile_count(m, n, 128, 224) > 132:
                assert pick(m, n, k) == ("128x224r", "waves"), (m, n, k)
                assert pick(m, n, k, "bf16") == ("128x224r", "waves")
                assert pick(m, n, k, order="F") == ("128x224", "waves")
                assert pick(m, n, k, "e4m3", "F")[0] == "128x256"
    assert pick(256, 28672, 4096) == pick(1024, 14336, 4096) == pick(1024, 10240, 8192) == ("128x224r", "waves")
    assert schedule.tile_count(256, 14336, 128, 224) == 128 and pick(256, 14336, 4096)[0] == "128x256"
    assert pick(200, 14336, 4096)[0] != "128x224r"
    assert pick(1025, 14336, 4096) == pick(2048, 28672, 4096) == ("128x256", "waves")
    assert pick(80, 28672, 4096)[0] != "128x224r"
    assert pick(4096, 4096, 4096) == ("128x256", "waves")   # level shares: the rate keeps 128x256
    # 128x160r and 128x96r stay experimental (1024x5120x4096: 128x160r 81.1 us against 128x192's 68.7)
    assert pick(1024, 5120, 4096)[0] == "128x192"
    assert "128x224r" in wgmma.launcher_tiles("C") and "128x224r" not in wgmma.launcher_tiles("F")
    assert "128x160r" not in wgmma.TILES and "128x96r" not in wgmma.TILES


def test_tiles_between_64_column_multiples_take_a_column_major_b_only():
    for name, tile in wgmma.ALL_TILES.items():
        # whole 64-column boxes take either order; else a column-major B, or a row-major one in a slot of whole boxes
        # (a swapped tile takes B as wgmma's A: either order)
        want = ("C", "F") if tile.bn % 64 == 0 or tile.swap_ab else ("C",) if tile.b_slot_n else ("F",)
        assert tile.b_orders == want, name
        assert tile.b_slot_n == 0 or tile.b_slot_n == -(-tile.bn // 64) * 64, name
    assert wgmma.ALL_TILES["128x224r"].smem_bytes == wgmma.ALL_TILES["128x256"].smem_bytes   # 4 stages of 48 KB
    with pytest.raises(ValueError, match="takes B column-major only.*with b_order 'C' choose one of 128x256"):
        wgmma.WgmmaKernelSpec("f16", tile="128x224", b_order="C")
    with pytest.raises(ValueError, match="takes B row-major only"):
        wgmma.WgmmaKernelSpec("f16", tile="128x224r", b_order="F")
    assert "128x224" not in wgmma.launcher_tiles("C") and "128x224" in wgmma.launcher_tiles("F")
    with pytest.raises(ValueError, match="whole 64-column blocks"):
        wgmma.WgmmaKernelSpec("f16", tile="128x160", b_order="F", a_load="copy")
    specs = wgmma.all_specs()
    wide = [s for s in specs if wgmma.TILES[s.tile].k_major_b_only]
    assert {s.tile for s in wide} == {"128x224", "128x160", "128x96"}
    assert {s.b_order for s in wide} == {"F"} and {s.dtype for s in wide} == set(wgmma.DTYPES)
    # a 16-bit D of such a tile leaves 64 bytes of a row per store (64B swizzle), f32 D 128 (whole 32-column chunks)
    assert [wgmma.TILES[t].chunk_bytes(o) for t in ("128x224", "128x256") for o in ("f16", "bf16", "f32")] == \
        [64, 64, 128, 128, 128, 128]


def _past_swap_ab(m, n, k, dtype="f16", order="F", **kw):
    """The schedule of the rules after swap_ab: where swap_ab takes the problem (a 16-bit D), that is checked, and
    the problem asked again with an f32 D (which the swapped tiles are not ruled for)."""
    s = schedule.choose(m, n, k, dtype, order, "f16", **kw)
    if schedule.swapped_tile(m, n, k, kw.get("sm_count", schedule.SM_COUNT)) is None or dtype == "e4m3":
        return s
    assert s.rule == "swap_ab", (m, n, k)
    return schedule.choose(m, n, k, dtype, order, "f32", **kw)


def test_rule_row_padding_takes_64_row_tiles_between_128_and_192_rows():
    # M 160: 128-row tiles compute 256 rows (128x64 35.2 us at N = K = 4096), 64-row tiles 192: 64x128pkb2's 96
    # tiles in stages of two K-blocks 22.3 (64x128pc2, pairs sharing B by multicast, 23.3); N 6144 / 8192: 64x192p's
    # 96 / 129 tiles (29.1 / 33.2 against 128x128's 38.9 / 44.5); N 11008: 64x192p would be 174 tiles, 64x256p's
    # 129 fit (41.6 against 128x192's 47.5)
    for m in (129, 160, 176, 192):
        for order, dtype in (("F", "f16"), ("C", "bf16")):
            for n, k, tile in ((4096, 4096, "64x128pkb2"), (4096, 14336, "64x128pkb2"), (6144, 4096, "64x192p"),
                               (8192, 4096, "64x192p"), (11008, 4096, "64x256p")):
                s = _past_swap_ab(m, n, k, dtype, order)
                assert (s.tile, s.rule, s.l2_promotion) == (tile, "row_padding", "256B"), (m, n, k)
        # N 14336: 168 tiles of 64x256 are past one wave: the waves rule, 128x256 (54.2 us against 64x256p's 64.6 at
        # M 160), or with a column-major B 128x224 (128 tiles: one wave of 0.97 of the SMs)
        assert _past_swap_ab(m, 14336, 4096, "f16", "C").tile == "128x256"
        assert _past_swap_ab(m, 14336, 4096, "f16", "F").tile == "128x224"
    # the edges: 128 rows keep split-K, 193 rows the 128-row tiles (less padding: M 224 128x64 23.4 against 24.2)
    assert schedule.choose(128, 4096, 4096, "f16", "F", "f16").rule == "split_k"
    assert schedule.choose(193, 4096, 4096, "f16", "F", "f16").rule == "few_tiles"
    # M 65-96: a 128-row box 32 or more rows past M (TMA's zero fill costs: 128x64 33.0 us at M 72, 25.9 at 128,
    # N 6144, K 4096; 64x128pc2 26.1, 64x128pkb2 25.9): N 6144 / 8192 64x128pkb2 (96 / 128 tiles), N 10240 64x192p
    # (108 tiles)
    for m in (65, 72, 80, 96):
        for n, k, tile in ((6144, 4096, "64x128pkb2"), (8192, 8192, "64x128pkb2"), (10240, 8192, "64x192p")):
            s = _past_swap_ab(m, n, k)
            assert (s.tile, s.rule) == (tile, "row_padding"), (m, n, k)
        # N 14336: no 64x256p below 129 rows (1-2 % behind 128x128 at M 80 / 96): the waves rule
        assert schedule.choose(m, 14336, 4096, "f16", "F", "f16").rule == "waves"
    # 97 rows and more: 31 or fewer padding rows, the 128-row tiles (M 104, N 6144: 128x64 27.2 against 26.2, 112:
    # 25.7 against 26.2)
    for m in (97, 104, 112):
        assert schedule.choose(m, 6144, 4096, "f16", "F", "f16").tile == "128x64"
    # a tile that would leave most SMs idle is not taken: N 2048 gives 64x128pkb2 48 tiles, fewer than half of 132
    assert schedule.choose(160, 2048, 4096, "f16", "F", "f16").rule != "row_padding"
    assert _past_swap_ab(160, 3072, 4096).tile == "64x128pkb2"   # 72 tiles
    assert _past_swap_ab(160, 4096, 4096, sm_count=100).tile == "64x128pkb2"   # 96 <= 100
    assert _past_swap_ab(160, 4096, 4096, sm_count=90).tile == "64x192p"   # 96 > 90, 66 fit
    # not for e4m3 (its 64-row tiles are unmeasured) nor rows off 32-byte pitches (rule sector_misaligned_rows)
    assert schedule.choose(160, 4096, 4096, "e4m3", "F", "f16").rule != "row_padding"
    assert schedule.choose(160, 4104, 4096, "f16", "F", "f16").rule == "sector_misaligned_rows"


def test_rule_row_padding_leaves_the_measured_sets_alone():
    # the decode, llm and ragged sets were measured on the rules before it: none of them reaches row_padding, and
    # every problem of the batch set between 64 and 192 rows with 32 or more padding rows does (where a tile fits)
    from fraglab.bench import shapes
    for name in ("decode", "llm", "ragged"):
        for sh in shapes.shape_set(name):
            for order in ("F", "C"):
                assert schedule.choose(sh.m, sh.n, sh.k, "f16", order, "f16").rule != "row_padding", (name, sh)
    padded = [sh for sh in shapes.shape_set("batch") if sh.m in (80, 96, 160, 192)]
    rules = {schedule.choose(sh.m, sh.n, sh.k, "f16", "F", "f16").rule for sh in padded}
    assert "row_padding" in rules and rules <= {"swap_ab", "row_padding", "split_k", "waves", "few_tiles"}


def test_rule_few_tiles_takes_the_smallest_tile():
    # M = 128, N = 4096: 32 tiles of 128x128 (a quarter wave); 64x64 tiles give 128 (64x64p 20.0 us against 128x64's
    # 22.0) where K is too short for split-K, in stages of two K-blocks (K 2048: 12.61 against 64x64p's 13.95)
    s = schedule.choose(128, 4096, 2048, "f16", "F", "f16")
    assert (s.tile, s.rule) == ("64x64pkb2", "few_tiles")
    assert schedule.choose(128, 4096, 2048, "bf16", "C", "bf16").tile == "64x64pkb2"
    # e4m3: 128x64 (64 tiles; measured 212 against 128x128's 167 at f16 on the H100)
    assert schedule.choose(128, 4096, 4096, "e4m3", "F", "f16").tile == "128x64"
    # N 8192: 256 tiles of 64x64 are two waves; 128x64's 128 are one (25.3 us against 33.8 at K 4096)
    s = schedule.choose(128, 8192, 4096, "f16", "F", "f16")
    assert (s.tile, s.rule) == ("128x64", "few_tiles")
    # past 128 rows 64x128pkb2 where its tiles fit one wave (1024x1024x2048: 128 of them, 13.41 us against 128x64's
    # 14.72; 256x4096x14336 63.5 against 66.5; 200x4096x14336 65.9 against 92.6)
    for m, n, k in ((1024, 1024, 1024), (256, 4096, 14336), (200, 4096, 4096), (320, 2048, 14336)):
        for order in ("F", "C"):
            s = schedule.choose(m, n, k, "f16", order, "f16")
            assert (s.tile, s.rule) == ("64x128pkb2", "few_tiles"), (m, n, k, order)
    # at M <= 128 one row of 128x64 tiles is ahead at long K (128x6144x14336 72.0 against 74.0)
    assert schedule.choose(128, 6144, 14336, "f16", "F", "f16").tile == "128x64"
    assert schedule.choose(1024, 1024, 1024, "e4m3", "F", "f16").tile == "128x64"   # 64-row tiles: 16-bit only
    # 480 x 2112: 136 tiles of 64x128 are past one wave, 128x64's 132 are not (1000^3 at 128-byte pitches: 128x64
    # 213 against 128x128's 195)
    assert schedule.choose(480, 2112, 4096, "f16", "F", "f16").tile == "128x64"
    # more than a wave of 128x64 tiles: the waves rule
    assert schedule.choose(1024, 1088, 1024).rule == "waves"


def test_rule_row_pairs_shares_b_between_the_two_row_tiles_of_m():
    # M 129-256 where the waves rule gives 128x128 and its pairs of row tiles fit one wave of clusters: 128x128c2,
    # B multicast to both (256x8192x28672, B column- / row-major: 195.4 / 187.0 us against 128x128's 211.2 / 210.0)
    for m, n, k, order in ((256, 8192, 28672, "F"), (256, 8192, 28672, "C"), (200, 6144, 14336, "C"),
                           (224, 7168, 8192, "F"), (193, 8192, 4096, "C")):
        s = schedule.choose(m, n, k, "bf16", order, "f16")
        assert (s.tile, s.rule) == ("128x128c2", "row_pairs"), (m, n, k, order)
        assert schedule.cluster_units(m, n, 128, 128, 2) <= 66
    # not past two row tiles, nor where the pairs overflow a wave (N 8448: 66 units; 8576: 67), nor for e4m3 (128x128c2
    # is a 16-bit tile), nor where the waves rule takes another tile (N 6144, B column-major: 128x96)
    assert schedule.choose(257, 8192, 8192, "f16", "F", "f16").tile != "128x128c2"
    assert schedule.choose(256, 8448, 8192, "f16", "C", "f16").rule == "row_pairs"
    assert schedule.choose(256, 8576, 8192, "f16", "C", "f16").rule == "waves"
    assert schedule.choose(256, 8192, 8192, "e4m3", "F", "f16").tile == "128x128"
    assert schedule.choose(256, 6144, 4096, "f16", "F", "f16").tile == "128x96"


def test_rule_split_k_for_few_tiles_and_a_long_k():
    # M 64, N 4096: 64 tiles of 64x64, each a cluster of two blocks on half its K-blocks: 128 blocks stream the
    # weight (K 14336: H100 48.7 us against 64x64p's 53.8, H200 36.6 against 53.7; K 4096: 20.0 / 20.0, 16.3 / 19.7)
    # In stages of two K-blocks (64x64pk2kb2; M 64, K 4096, B column-major: 18.29 us against 64x64pk2's 19.07)
    for m, k, order in ((33, 14336, "F"), (64, 4096, "C"), (1, 4096, "F"), (64, 11008, "F")):
        s = schedule.choose(m, 4096, k, "f16", order, "f16")
        assert (s.tile, s.rule, s.l2_promotion) == ("64x64pk2kb2", "split_k", "256B"), (m, k)
    # M 128: 64 tiles of 128x64 from K 4096 (H100 2026-11-26 11:3x: 21.1 / 20.5 us against 64x64p's 22.1 / 22.5
    # at K 4096, 33.6 / 32.4 against 37.9 / 38.6 at K 8192)
    for k in (4096, 8192):
        s = schedule.choose(128, 4096, k, "bf16", "C", "bf16")
        assert (s.tile, s.rule) == ("128x64k2", "split_k")
    # shorter K: no split (the cluster's launch and hand-over cost about a microsecond)
    assert schedule.choose(64, 4096, 4032, "f16", "F", "f16").tile == "64x64pkb2"
    assert schedule.choose(128, 4096, 4032, "f16", "F", "f16").tile == "64x64pkb2"
    # at most half the SMs' worth of tiles: 66 tiles of 64x64 split, 67 do not
    assert schedule.choose(64, 66 * 64, 8192, "f16", "F", "f16").tile == "64x64pk2kb2"
    assert schedule.choose(64, 66 * 64 + 8, 8192, "f16", "F", "f16").tile == "64x64pkb2"
    assert schedule.choose(64, 4096, 8192, "f16", "F", "f16", sm_count=100).tile == "64x64pkb2"
    # M 65-96 (a 128-row box a quarter or more past M): from K 6144 only (M 80, us, 128x64k2 / 64x64p: K 4096
    # 23.9 / 21.4, K 6144 29.0 / 29.1, K 8192 32.1 / 36.8)
    for m in (72, 80, 96):
        assert _past_swap_ab(m, 4096, 4096).tile == "64x64pkb2"
        assert _past_swap_ab(m, 4096, 6144).tile == "128x64k2"
    assert schedule.choose(97, 4096, 4096, "f16", "F", "f16").tile == "128x64k2"
    # not for e4m3 (unmeasured), rows off 32-byte pitches (K 8200: 16400-byte rows), or past 128 rows
    assert schedule.choose(64, 4096, 8192, "e4m3", "F", "f16").rule != "split_k"
    assert schedule.choose(64, 4096, 8200, "f16", "F", "f16").rule != "split_k"
    assert schedule.choose(129, 2048, 8192, "f16", "F", "f16").rule != "split_k"


def test_sm_count_enters_the_waves():
    # on a 66-SM part 3072^3's 288 tiles of 128x256 are 4.36 waves (0.87): the big tile beats 128x128 again
    assert schedule.choose(3072, 3072, 3072, "e4m3", "F", sm_count=66).tile == "128x256"
    assert schedule.choose(3072, 3072, 3072, "e4m3", "F").tile == "128x128"


def test_a_column_major_a_counts_its_rows_of_m():
    # A column-major: its rows in memory are M long (3000 x 2 = 6000 bytes, 16 mod 32; 3008: aligned)
    assert schedule.row_pitches(3000, 4096, 4096, "f16", "C", "f16", "F") == (6000, 8192, 8192)
    assert schedule.choose(3000, 4096, 4096, "f16", "C", "f16", a_order="F").rule == "sector_misaligned_rows"
    assert schedule.choose(3000, 4096, 4096, "f16", "C", "f16").rule == "waves"
    assert schedule.choose(3008, 4096, 4096, "f16", "C", "f16", a_order="F").rule == "waves"


def test_the_sixteen_bit_tile_is_compiled_for_sixteen_bit_inputs_only():
    specs = wgmma.all_specs()
    for tile in wgmma.SIXTEEN_BIT_TILES:
        assert {s.dtype for s in specs if s.tile == tile and not s.block_scaled} == set(wgmma.DTYPES), tile
    assert "e4m3" in {s.dtype for s in specs if s.tile == "128x256"}
    assert set(wgmma.SIXTEEN_BIT_TILES) <= set(wgmma.TILES)


def test_launcher_takes_the_schedule_and_a_forced_tile_keeps_the_promotion():
    spec = wgmma.spec_for("f16", 3000, 3000, 3000, out_dtype="f16")
    assert (spec.tile, spec.l2_promotion) == ("192x192c2", "none")
    spec = wgmma.spec_for("f16", 3000, 3000, 3000, out_dtype="f16", tile="128x128")
    assert (spec.tile, spec.l2_promotion) == ("128x128", "none")
    assert wgmma.spec_for("e4m3", 16, 4096, 4096, b_order="F").tile == "64x256p"
    assert wgmma.choose_tile(1024, 1024, 132) == "64x128pkb2"
    assert wgmma.choose_tile(1024, 1024, 132, dtype="e4m3", b_order="F") == "128x64"
    with pytest.raises(ValueError, match="l2_promotion 'x'.*none, 64B, 128B, 256B"):
        wgmma.WgmmaKernelSpec("f16", l2_promotion="x")


def test_rule_block_scales_takes_a_tile_with_room_for_the_second_accumulator():
    # e4m3 with block scales, D bf16 (H100 11:59 UTC, TFLOP/s): 128x128 where its tiles fill the SMs
    for m, n, k in ((4096, 4096, 7168), (4096, 2112, 7168), (8192, 8192, 8192), (1536, 1408, 512),
                    (128, 24576, 1536)):
        s = schedule.choose(m, n, k, "e4m3", "F", "bf16", block_scaled=True)
        assert (s.tile, s.rule) == ("128x128", "block_scales"), (m, n, k)
    # 128x64 where 128x128 tiles would leave SMs idle (M 128, N 7168, K 16384: 518 against 64x128p's 497)
    for m, n, k in ((128, 7168, 16384), (1408, 1408, 512), (128, 7168, 2048)):
        assert schedule.choose(m, n, k, "e4m3", "F", "bf16", block_scaled=True).tile == "128x64", (m, n, k)
    # decode M: split-K where a cluster of two per tile fits one wave (M 64, N 4096, K 7168: 208 against 128x64's
    # 143; M 128: 128x64k2 371 against 280), else 64x64p for M <= 64 (N 24576, K 1536: 238 against 205)
    assert schedule.choose(64, 4096, 7168, "e4m3", "F", "bf16", block_scaled=True).tile == "64x64pk2"
    assert schedule.choose(64, 2112, 7168, "e4m3", "F", "bf16", block_scaled=True).tile == "64x64pk2"
    assert schedule.choose(128, 4096, 7168, "e4m3", "F", "bf16", block_scaled=True).tile == "128x64k2"
    assert schedule.choose(128, 2112, 7168, "e4m3", "F", "bf16", block_scaled=True).tile == "64x64pk2"
    for m, n, k in ((64, 24576, 1536), (64, 7168, 16384), (1, 4096, 2048), (64, 4096, 4032)):
        assert schedule.choose(m, n, k, "e4m3", "F", "bf16", block_scaled=True).tile == "64x64p", (m, n, k)
    # every tile the rule picks holds block scales and is compiled for them
    assert all(wgmma.TILES[t].holds_block_scales for t in schedule.BLOCK_SCALE_TILES)
    # the same problems without block scales keep their own rules (128x256 is too big for block scales)
    assert schedule.choose(4096, 4096, 7168, "e4m3", "F", "bf16").tile == "128x256"
    assert not wgmma.TILES["128x256"].holds_block_scales and not wgmma.TILES["64x256p"].holds_block_scales
    # misaligned rows still turn L2 promotion off
    assert schedule.choose(3000, 3000, 3000, "e4m3", "F", "bf16", block_scaled=True).l2_promotion == "none"


def test_rule_swap_ab_puts_a_third_padded_m_in_wgmma_n():
    """M of 65-96 and 129-192 rows (a 64- or 128-row tile of A pads a third or more) run swapped: the weight's rows
    as wgmma's M, A's rows as its N, in one tile of 96 / 160 / 192 columns or two of 80 / 96."""
    def rule(m, n, k, **kw):
        s = schedule.choose(m, n, k, kw.pop("dtype", "f16"), kw.pop("b_order", "F"), kw.pop("out_dtype", "f16"),
                            **kw)
        return s.tile if s.rule == "swap_ab" else None

    for order in ("C", "F"):
        # 64 weight tiles of 64 rows: split-K clusters fit one wave (80x4096x4096 19.2 us against 64x64pkb2's 21.9)
        assert rule(80, 4096, 4096, b_order=order) == "64x96pk2t"
        assert rule(65, 4096, 14336, b_order=order) == rule(96, 4096, 11008, b_order=order) == "64x96pk2t"
        # 96 / 128 weight tiles: one block each (80x6144x4096 24.6 against 25.8; 80x8192x28672 168.3 against 173.9)
        assert rule(80, 6144, 4096, b_order=order) == rule(96, 8192, 28672, b_order=order) == "64x96pkb2t"
        # past one wave of them, 96 rows stay with the rules below (80x28672x4096: 128x96t 89.1 against 88.1)
        assert rule(80, 28672, 4096, b_order=order) is None and rule(96, 8448 + 64, 4096, b_order=order) is None
        # 129-160 rows: two token tiles of 80 in a cluster sharing the weight's tile (160x4096x4096 20.6 against
        # 64x128pkb2's 22.5; 160x6144x4096 128x80n2t 26.9 against 64x192p's 29.3)
        assert rule(160, 4096, 4096, b_order=order) == rule(129, 4096, 14336, b_order=order) == "64x80pkb2n2t"
        assert rule(160, 6144, 4096, b_order=order) == rule(160, 8192, 28672, b_order=order) == "128x80n2t"
        # 128x160t where its tiles fill 0.8 of a wave: 106 tiles from N 13441 (not N 10240 / 11008: 80 / 86 tiles
        # lose 1-3 % to 64x256p's 120-129 blocks)
        assert rule(160, 14336, 4096, b_order=order) == rule(160, 57344, 8192, b_order=order) == "128x160t"
        assert rule(160, 13440 + 128, 4096, b_order=order) == "128x160t" and rule(160, 13440, 4096) is None
        assert rule(160, 10240, 8192, b_order=order) is None and rule(160, 11008, 4096, b_order=order) is None
    # 161-192 rows: two token tiles of 96 in a cluster sharing the weight's tile by multicast, 64-row weight tiles
    # where two of them per weight tile fit one wave (192x4096x4096 21.2 against 64x128pkb2's 22.6), else 128-row
    # ones (192x6144x4096 27.7 against 64x192p's 29.8; 192x8192x8192 55.6 against 58.1); past one wave of either,
    # one token tile of 192 where the weight's 128-row tiles fill 0.8 of a wave, any number of waves (168x57344x8192
    # row-major 372.3 against 128x256's 426.2), not below (192x10240x8192: 80 tiles, 76.4 against 64x256p's 71.6)
    for m in (161, 176, 192):
        assert rule(m, 4096, 4096) == rule(m, 4096, 14336, b_order="C") == "64x96pkb2n2t"
        assert rule(m, 6144, 4096) == rule(m, 8192, 8192, b_order="C") == "128x96n2t"
        for order in ("C", "F"):
            assert rule(m, 14336, 4096, b_order=order) == rule(m, 57344, 8192, b_order=order) == "128x192t"
            assert rule(m, 13440 + 128, 4096, b_order=order) == "128x192t" and rule(m, 13440, 4096) is None
        assert rule(m, 10240, 8192) is None and rule(m, 11008, 4096, b_order="C") is None
        assert rule(m, 2048, 4096) is None
    # M edges: 64 is one 64-row tile, 97-128 and 193-256 pad less (swapped tiles measured behind at 128)
    for m in (64, 97, 128, 193, 256):
        assert rule(m, 4096, 14336) is None and rule(m, 8192, 8192) is None, m
    # what the swapped tiles do not take, or were not measured on: K < 4096, an f32 D, a column-major A, 8-bit
    # inputs, rows off 32-byte pitches (D's 4100 f16 columns are 8200 bytes)
    assert rule(80, 4096, 2048) is None
    assert rule(80, 4096, 4096, out_dtype="f32") is None
    assert rule(80, 4096, 4096, a_order="F") is None
    assert rule(80, 4096, 4096, dtype="e4m3") is None
    assert rule(80, 4104, 4096) is None and not schedule.sector_aligned(80, 4104, 4096, "f16", "F", "f16")
    assert rule(80, 4096, 4096, dtype="bf16", out_dtype="bf16") == "64x96pk2t"


def test_swapped_tiles_take_a_row_major_a_only_in_tuning_and_the_launcher():
    swapped = {t for t, c in wgmma.TILES.items() if c.swap_ab}
    assert swapped and swapped <= set(wgmma.launcher_tiles("C")) and swapped <= set(wgmma.launcher_tiles("F"))
    assert not swapped & set(wgmma.launcher_tiles("F", "F"))
    assert {c.tile for choices in schedule.SWAP_AB_TILES.values() for c in choices} == swapped
