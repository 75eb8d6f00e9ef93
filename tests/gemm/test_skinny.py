"""The skinny GEMM (kernels/gemm/skinny.cu, fraglab/gemm/skinny.py): the schedule's rule and the launcher's
arithmetic on the CPU; on an sm_90 GPU (marked gpu) every split, both B orders, odd sizes, every activation and
bias mode, C, Z and every D type against the float64 reference, with D and Z poisoned (NaN) before each launch
and random inputs; determinism, CUDA-graph replay, and the routing through fraglab.gemm."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from fraglab.gemm import schedule, skinny
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, check_result, reference_gemm
from gemm_operands import host_d, poisoned_outputs, random_operands


# ---- CPU: the rule, the split, the sizes ----

@pytest.mark.parametrize("m", [1, 8, 16, 32])
def test_rule_skinny_split_k_takes_decode_m(m):
    for n, k in itertools.product((4096, 11008, 14336), repeat=2):
        for dtype, order in (("f16", "F"), ("bf16", "C")):
            assert schedule.choose_kernel(m, n, k, dtype, order, dtype) == "skinny"
    # fp8 (the rowwise-scaled recipe is wgmma's) and a column-major A stay with wgmma
    assert schedule.choose_kernel(m, 4096, 4096, "e4m3", "F") == "wgmma"
    assert schedule.choose_kernel(m, 4096, 4096, "f16", "F", "f16", a_order="F") == "wgmma"


def test_rule_skinny_split_k_stops_at_32_rows():
    # M 64, N 4096: the wgmma kernel's 64x64p (64 tiles) 19.8 us against the skinny GEMM's 26.1 (H200, B
    # column-major; 64x64pk2 since, 16.3); M 128: 232.0 against 128x128's 92.8 at 11008^2 (H100)
    assert schedule.choose_kernel(32, 4096, 4096) == "skinny"
    for m, n in ((33, 4104), (64, 4096), (64, 14336), (64, 11008), (65, 4096), (128, 4096)):
        assert schedule.choose_kernel(m, n, 4096) == "wgmma", (m, n)


def test_layout_for_takes_the_8_warp_grid_only_for_one_share_of_a_column_major_b():
    # N 28672: 448 tiles, one share; B column-major: the 8-warp grid (skinny.layout_for); N 14336 takes two shares
    for m, k in itertools.product((1, 16, 32), (4096, 11008, 14336)):
        assert skinny.choose_splits(m, 28672, k) == 1
        assert skinny.layout_for(m, 28672, k, "F") == "1x4x2n64"
        assert skinny.layout_for(m, 28672, k, "C") == skinny.layout_for(m, 14336, k, "F") == "1x4n64"
    # K in shares (N 4096: 4; N 11008: 2): the 4-warp grid (23.8 against 18.3 us at N = K = 4096)
    assert skinny.layout_for(1, 4096, 4096, "F") == skinny.layout_for(8, 11008, 4096, "F") == "1x4n64"
    # past 32 rows one warp grid, whatever B's order
    assert {skinny.layout_for(m, n, 4096, o) for m in (33, 64, 128) for n in (4096, 14336) for o in "CF"} == {"4x1n64"}
    assert skinny.spec_for("f16", 16, 28672, 4096, b_order="F").tile == "skinny/1x4x2n64/k1/c1"
    assert skinny.spec_for("f16", 16, 4096, 4096, b_order="F").tile == "skinny/k4/c4"


def test_b_load_for_follows_the_measured_rules():
    # a column-major B by TMA with 4 shares (N 4096: 18.5 against 18.6 us at M 8, K 4096), not with 2 (N 11008:
    # 88.2 against 87.1 at K 11008) nor with the 8-warp grid; a row-major B by TMA with one share or four
    for k in (11008, 14336, 64 * 4 * skinny.SHORT_SHARE_BLOCKS + 8):
        assert skinny.b_load_for("1x4n64", "F", 4, k) == skinny.b_load_for("4x1n64", "F", 4, k) == "tma"
    assert skinny.b_load_for("1x4n64", "F", 2, 11008) == skinny.b_load_for("1x4x2n64", "F", 1, 4096) == "copy"
    assert skinny.b_load_for("1x4n64", "C", 1, 4096) == skinny.b_load_for("1x4n64", "C", 4, 4096) == "tma"
    assert skinny.b_load_for("1x4x2n64", "C", 1, 4096) == skinny.b_load_for("1x4n64", "C", 2, 4096) == "copy"
    # a column-major B's short shares (K 4096 in 4: 16 K-blocks each, up to 4096 + 0 in the last) by copies
    for k in (4096, 4000, 64 * 4 * skinny.SHORT_SHARE_BLOCKS):
        assert skinny.b_load_for("1x4n64", "F", 4, k) == skinny.b_load_for("4x1n64", "F", 4, k) == "copy"
    assert skinny.b_load_for("1x4n64", "C", 4, 4096) == "tma"   # (short shares of a row-major B: TMA still)
    for m, n, k, order in itertools.product((1, 16, 32, 64, 128), (8, 4096, 11008, 14336), (64, 4096, 11008),
                                           skinny.B_ORDERS):
        spec = skinny.spec_for("f16", m, n, k, b_order=order)
        assert spec.b_load == skinny.b_load_for(spec.layout, order, spec.splits, k)
        assert spec.tile.endswith("/tma") == (spec.b_load == "tma")
    assert skinny.spec_for("f16", 8, 4096, 4096, b_order="F").tile == "skinny/k4/c4"
    assert skinny.spec_for("f16", 8, 4096, 11008, b_order="F").tile == "skinny/k4/c4/tma"
    assert skinny.spec_for("f16", 8, 4096, 4096, b_order="C").tile == "skinny/k4/c4/tma"
    with pytest.raises(ValueError, match="b_load 'bulk'"):
        skinny.SkinnyKernelSpec("f16", b_load="bulk")


def test_launch_parameters_pass_b_map_only_for_tma_and_orient_its_boxes(monkeypatch):
    # CPU: the map is recorded, not encoded. A column-major B's rows are its N columns (inner K), a row-major B's its
    # K rows (inner N); the copy path passes the flag 0 and a zero map the kernel never reads
    asked = []
    monkeypatch.setattr(skinny, "MAPS", type("Maps", (), {"__getitem__": lambda self, key: asked.append(key) or
                                                          skinny.NO_MAP})())
    pointers_and_scalars = (1 << 20, 2 << 20, 3 << 20, 0, 4 << 20, 0, 1.0, 0.0, 0.01)
    for order, ldb, inner_outer in (("F", 1032, (1000, 520)), ("C", 520, (520, 1000))):
        for b_load in skinny.B_LOADS:
            spec = skinny.SkinnyKernelSpec("f16", b_order=order, splits=2, b_load=b_load)
            params = skinny.launch_parameters((spec, 16, 520, 1000, *pointers_and_scalars, 1000, ldb, 520, 520, 520,
                                               520))
            assert len(params) == 22 and int(params[15]) == 2 and int(params[10]) == ldb
            assert int(params[20]) == (b_load == "tma")
            if b_load == "tma":
                assert asked.pop() == (2 << 20, "f16", *inner_outer, skinny.BK, skinny.BN, skinny.TMA_L2_PROMOTION,
                                       ldb)
            assert not asked


def test_a_row_major_b_takes_one_share_once_the_tiles_fill_the_sms():
    # N 11008: 172 tiles, one block per SM and more; by TMA in one share 34.7 us against two shares' 36.7 (M 1, K
    # 4096); a column-major B keeps two shares there (1.5 blocks per SM), and N 4096 splits either way
    for m, k in itertools.product((1, 8, 32), (4096, 11008, 14336)):
        assert skinny.choose_splits(m, 11008, k, b_order="C") == 1
        assert skinny.choose_splits(m, 11008, k, b_order="F") == 2
        assert skinny.choose_splits(m, 4096, k, b_order="C") == skinny.choose_splits(m, 4096, k, b_order="F") == 4
        assert skinny.spec_for("f16", m, 11008, k, b_order="C").tile == "skinny/k1/c4/tma"
        assert skinny.spec_for("f16", m, 11008, k, b_order="F").tile == "skinny/k2/c4"
    # fewer tiles than SMs: still split, whatever the order (N 8192: 128 tiles)
    assert skinny.choose_splits(1, 8192, 4096, b_order="C") == 2


def test_the_wgmma_schedule_is_left_as_it_was():
    # choose_kernel comes first; the wgmma tile table still answers for every M (forced tiles, M > 128)
    assert schedule.choose(16, 14336, 4096, "f16", "F", "f16").tile == "64x128pkb2"
    assert schedule.SKINNY_RULE not in schedule.RULES


def test_splits_fill_the_sms_and_keep_shares_of_k_long():
    # N 4096: 64 tiles; 4 shares give 256 blocks (1.9 per SM; 2 shares: 128, under one per SM)
    assert skinny.choose_splits(1, 4096, 4096) == 4
    assert skinny.choose_splits(16, 11008, 4096) == 2     # 172 tiles: 344 blocks
    # 224 tiles (1.7 per SM): one share would leave 40 SMs with one block and 92 with two (MIN_BLOCKS_PER_SM_ONE_SHARE);
    # a row-major B (its own rule) keeps K whole there, and a column-major one with 448 tiles (3.4 per SM)
    assert skinny.choose_splits(16, 14336, 4096) == 2
    assert skinny.choose_splits(16, 14336, 4096, b_order="C") == skinny.choose_splits(16, 28672, 4096) == 1
    assert skinny.choose_splits(16, 12672 - 64, 4096) == 2 and skinny.choose_splits(16, 2 * 132 * 64, 4096) == 1
    # a short K keeps one share: 2 shares would hold fewer than MIN_BLOCKS_PER_SPLIT blocks each
    assert skinny.choose_splits(1, 4096, 8 * 64 * 2 - 64) == 1
    assert skinny.choose_splits(1, 8, 8 * 64 * 8) == 8    # one tile: the most shares K allows
    for m, n, k in itertools.product((1, 16, 33, 128), (8, 520, 4096, 11008, 14336), (8, 1000, 4096, 14336)):
        splits = skinny.choose_splits(m, n, k)
        assert splits in skinny.SPLITS
        assert splits == 1 or -(-k // skinny.BK) >= splits * skinny.MIN_BLOCKS_PER_SPLIT
        for cluster in (c for c in skinny.CLUSTERS if c >= splits):
            blocks = skinny.grid_blocks(n, splits, cluster)
            # whole clusters, enough of them for every tile's shares, and not one cluster more
            clusters, tiles_per_cluster = blocks // cluster, cluster // splits
            assert blocks % cluster == 0 and clusters * tiles_per_cluster >= skinny.tiles(n)
            assert (clusters - 1) * tiles_per_cluster < skinny.tiles(n)


@pytest.mark.parametrize("m, order", [(1, "F"), (8, "C"), (32, "F"), (32, "C"), (64, "F"), (128, "C")])
def test_the_variants_hold_the_rules_spec_and_only_launchable_ones(m, order):
    """variant_specs: every split, cluster and load a problem can take, named uniquely; the rules' choice is one
    of them (so the tuner's candidates include what it is compared with), and each obeys the launcher's limits."""
    for n, k in itertools.product((4096, 11008, 14336), (1024, 4096, 14336)):
        variants = skinny.variant_specs("f16", m, n, k, b_order=order, act="relu", bias_mode="per_n",
                                        out_dtype="f16")
        names = [spec.tile for spec in variants]
        assert len(set(names)) == len(names) and tuple(names) == skinny.variant_tiles(m, n, k, order)
        rules = skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", out_dtype="f16", b_order=order)
        assert variants[names.index(rules.tile)] == rules
        k_blocks = -(-k // skinny.BK)
        for spec in variants:
            assert spec.cluster >= spec.splits and spec.layout == skinny.variant_layout(m, order, spec.splits)
            assert spec.splits == 1 or k_blocks >= spec.splits * skinny.MIN_BLOCKS_PER_SPLIT
            assert not (spec.layout == "1x4x2n64" and spec.b_load == "tma")
            assert (spec.layout, order) in skinny.GRID_ORDERS   # an instantiation the compile test builds
        # every split the K allows, in every cluster that holds it, both loads where the grid has them
        splits = {spec.splits for spec in variants}
        assert splits == {s for s in skinny.SPLITS if s == 1 or k_blocks >= s * skinny.MIN_BLOCKS_PER_SPLIT}


def test_a_variant_name_plans_that_variant_and_a_wrong_one_lists_the_choices():
    from fraglab.gemm import validate

    plan = validate.GemmPlan("wgmma", "f16", 8, 4096, 4096, "relu", "per_n", False, False, "f16", "F")
    spec = skinny.planned(plan, "skinny/k2/c2/tma", False)
    assert (spec.splits, spec.cluster, spec.b_load, spec.layout) == (2, 2, "tma", "1x4n64")
    assert skinny.planned(plan, "skinny", False) == skinny.spec_for("f16", 8, 4096, 4096, act="relu",
                                                                    bias_mode="per_n", out_dtype="f16", b_order="F")
    for bad in ("skinny/k3", "skinny/k2/c1", "skinny/1x4x2n64/k1/c1/tma", "skinny/k2/c2/tma/s8"):
        with pytest.raises(validate.GemmArgumentError, match="not a skinny GEMM variant.*skinny/k4/c4") as caught:
            skinny.planned(plan, bad, False)
        assert caught.value.argument == "tile"
    assert skinny.planned(plan, "128x128", False) is None   # a wgmma tile: not this kernel's
    wide = validate.GemmPlan("wgmma", "f16", 129, 4096, 4096, "relu", "per_n", False, False, "f16", "F")
    with pytest.raises(validate.GemmArgumentError, match="M <= 128"):
        skinny.planned(wide, "skinny/k2/c2", False)


def test_cluster_for_follows_the_measured_rules():
    # CLUSTER_RULES: a column-major B in clusters of 4 with 2 or 4 shares, none with one share; a row-major B in
    # clusters of 4 with one share or four; else 8
    assert skinny.cluster_for("F", 4) == skinny.cluster_for("F", 2) == skinny.cluster_for("C", 1) == 4
    assert skinny.cluster_for("C", 4) == 4
    assert skinny.cluster_for("F", 1) == 1
    assert skinny.cluster_for("C", 2) == skinny.cluster_for("C", 8) == skinny.cluster_for("F", 8) == 8
    for order, splits in itertools.product(skinny.B_ORDERS, skinny.SPLITS):
        cluster = skinny.cluster_for(order, splits)
        assert cluster in skinny.CLUSTERS and cluster % splits == 0
    # the schedule's specs at the decode shapes carry it, and the cluster size is a build option of one name
    f4096 = skinny.spec_for("f16", 8, 4096, 4096, act="relu", bias_mode="per_n", b_order="F")
    f28672 = skinny.spec_for("f16", 8, 28672, 4096, act="relu", bias_mode="per_n", b_order="F")
    f14336 = skinny.spec_for("f16", 8, 14336, 4096, act="relu", bias_mode="per_n", b_order="F")
    c4096 = skinny.spec_for("f16", 8, 4096, 4096, act="relu", bias_mode="per_n", b_order="C")
    c2 = skinny.spec_for("f16", 8, 8192, 4096, act="relu", bias_mode="per_n", b_order="C")   # K in 2 shares
    assert (f4096.splits, f4096.cluster, f4096.tile) == (4, 4, "skinny/k4/c4")
    assert (f28672.splits, f28672.cluster, f28672.tile) == (1, 1, "skinny/1x4x2n64/k1/c1")
    assert (f14336.splits, f14336.cluster, f14336.tile) == (2, 4, "skinny/k2/c4")
    assert (c4096.splits, c4096.cluster, c4096.tile) == (4, 4, "skinny/k4/c4/tma")
    assert (c2.splits, c2.cluster, c2.tile) == (2, 8, "skinny/k2")
    assert f4096.build().options == c4096.build().options == ("-DFRAGLAB_SKINNY_CLUSTER=4",)
    assert c2.build().options == ()
    assert dataclasses.replace(f4096, cluster=8).name() == f4096.name()
    with pytest.raises(ValueError, match="cluster 3"):
        skinny.SkinnyKernelSpec("f16", cluster=3)
    with pytest.raises(ValueError, match="clusters of at least 4 blocks"):
        skinny.SkinnyKernelSpec("f16", splits=4, cluster=2)


def test_ring_depth_and_the_timeline_are_build_options_of_one_instantiation():
    spec = skinny.spec_for("f16", 8, 4096, 4096, act="relu", bias_mode="per_n", b_order="F")
    deep = dataclasses.replace(spec, stages=8, timeline=True)
    assert deep.name() == spec.name() and deep.tile == "skinny/k4/c4/s8"
    assert deep.build().options == ("-DFRAGLAB_SKINNY_CLUSTER=4", "-DFRAGLAB_SKINNY_STAGES=8",
                                    "-DFRAGLAB_SKINNY_TIMELINE")
    assert deep.build() != spec.build() and dataclasses.replace(deep, stages=4, timeline=False).build() == spec.build()
    with pytest.raises(ValueError, match="stages 5"):
        skinny.SkinnyKernelSpec("f16", stages=5)


def test_shared_memory_holds_the_ring_and_the_partial_tiles():
    for layout, (warps_m, warps_n, warps_k) in skinny.LAYOUTS.items():
        assert skinny.threads(layout) == 32 * warps_m * warps_n * warps_k
        for m in range(1, skinny.layout_max_m(layout) + 1):
            rows = -(-m // 16) * 16
            ring = skinny.STAGES * (64 * 64 * 2 + rows * 64 * 2)
            # one f32 partial tile (pitch 64 + 8) per K group of warps, then an 8-byte TMA barrier per stage
            assert skinny.smem_bytes(m, layout) >= max(ring, warps_k * rows * 72 * 4) + 8 * skinny.STAGES
            assert skinny.smem_bytes(m, layout) <= 227 * 1024


def test_specs_name_one_instantiation_each_and_check_their_arguments():
    specs = skinny.all_specs()
    names = {s.name() for s in specs}
    # bias: the four modes in float32, and per column in the inputs' own 16-bit type
    assert len(names) == len(specs) == 2 * 8 * (4 + 1) * 2 * 2 * len(skinny.GRID_ORDERS)
    # every (grid, order) layout_for can give has its instantiations
    pairs = {(skinny.layout_for(m, n, k, order), order) for m, n, k, order
             in itertools.product((1, 32, 33, 128), (8, 4096, 14336), (64, 4096), skinny.B_ORDERS)}
    assert pairs <= set(skinny.GRID_ORDERS)
    spec = skinny.spec_for("bf16", 1, 4096, 8192, act="gelu", bias_mode="per_n", out_dtype="f16", b_order="F")
    grid = ", ".join(map(str, skinny.LAYOUTS[spec.layout]))
    assert spec.name() in names and f"__nv_bfloat16, {grid}, 64, true" in spec.name() and spec.tile.endswith("/k4/c4/tma")
    # B's load is a launch argument: the same instantiation either way
    assert dataclasses.replace(spec, b_load="copy").name() == spec.name()
    assert skinny.SkinnyKernelSpec("f16", layout="1x4n64", splits=4).tile == "skinny/k4"
    grouped = skinny.SkinnyKernelSpec("f16", b_order="F", layout="1x4x2n64", splits=1)
    assert "__half, 1, 4, 2, 64, true" in grouped.name() and grouped.tile == "skinny/1x4x2n64/k1"
    with pytest.raises(ValueError, match="layout '8x1n64'"):
        skinny.SkinnyKernelSpec("f16", layout="8x1n64")
    with pytest.raises(ValueError, match="M from 1 to 128"):
        skinny.spec_for("f16", 129, 4096, 4096)
    with pytest.raises(ValueError, match="splits 3"):
        skinny.SkinnyKernelSpec("f16", splits=3)
    with pytest.raises(ValueError, match="dtype 'e4m3'"):
        skinny.SkinnyKernelSpec("e4m3")


def test_planned_follows_the_rule_and_a_forced_tile():
    from fraglab.gemm.validate import GemmArgumentError, GemmPlan

    plan = GemmPlan("wgmma", "f16", 16, 4096, 4096, "relu", "per_n", False, False, "f16", "F")
    assert isinstance(skinny.planned(plan, None, False), skinny.SkinnyKernelSpec)
    assert skinny.planned(plan, "64x256p", False) is None        # a wgmma tile asked for: wgmma
    big = GemmPlan("wgmma", "f16", 256, 4096, 4096, "relu", "per_n", False, False, "f16", "F")
    assert skinny.planned(big, None, False) is None
    with pytest.raises(GemmArgumentError, match="M <= 128"):
        skinny.planned(big, skinny.FORCED_TILE, False)


# ---- GPU ----

SIZES = [(1, 8, 8), (3, 24, 40), (16, 136, 72), (17, 520, 1000), (32, 200, 1048), (33, 264, 200), (64, 1032, 136),
         (100, 72, 520), (128, 256, 64), (127, 4096, 1024)]
COMBOS = list(itertools.product(ACT_KINDS, BIAS_MODES))


def _combo(i):
    act, bias_mode = COMBOS[i]
    return dict(act=act, bias_mode=bias_mode, beta=0.75 if i % 2 else 0.0, save_z=bool(i % 2),
                dtype=skinny.DTYPES[i % 2], b_order="CF"[(i // 2) % 2], out_dtype=skinny.OUT_DTYPES[i % 3])


def _other_layout(i):
    """The warp grid combination i also runs on: each in turn."""
    return list(skinny.LAYOUTS)[i % len(skinny.LAYOUTS)]


@pytest.fixture(scope="module")
def cp():
    from precompile import precompile

    from fraglab.runtime import gpu

    cp = gpu.cupy()
    if gpu.compute_capability() != 90:
        pytest.skip("the skinny GEMM uses thread-block clusters and is built for sm_90 (H100/H200)")
    specs = [skinny.SkinnyKernelSpec(dt, "relu", "per_n", False, False, "f32", o, w)
             for dt, o, w in itertools.product(skinny.DTYPES, skinny.B_ORDERS, skinny.LAYOUTS)]
    specs += [skinny.SkinnyKernelSpec(c["dtype"], c["act"], c["bias_mode"], bool(c["beta"]), c["save_z"], "f32",
                                      c["b_order"], w)
              for i, c in enumerate(map(_combo, range(len(COMBOS))))
              for w in (skinny.layout_for((5, 45)[i % 2], 136, 520, c["b_order"]), _other_layout(i))]
    precompile(s.build() for s in specs)
    return cp


def run_case(cp, m, n, k, dtype="f16", *, b_order="C", act="relu", bias_mode="per_n", beta=0.0, save_z=False,
             out_dtype="f32", splits=None, layout=None, b_load=None, cluster=None, stages=None, timeline=False,
             seed=0, alpha=1.5, leaky_slope=0.05):
    a, a64, b, b64, bias, c = random_operands(cp, np.random.default_rng(seed), m, n, k, dtype, bias_mode=bias_mode,
                                              beta=beta, b_order=b_order)
    d, z = poisoned_outputs(cp, m, n, out_dtype, save_z)
    spec = skinny.spec_for(dtype, m, n, k, act=act, bias_mode=bias_mode, has_c=bool(beta), save_z=save_z,
                           out_dtype=out_dtype, b_order=b_order)
    if splits is not None or layout is not None or b_load is not None or cluster is not None:
        splits = spec.splits if splits is None else splits
        spec = dataclasses.replace(spec, splits=splits, layout=spec.layout if layout is None else layout,
                                   b_load=spec.b_load if b_load is None else b_load,
                                   cluster=skinny.cluster_for(b_order, splits) if cluster is None else cluster)
    if stages is not None or timeline:
        spec = dataclasses.replace(spec, stages=spec.stages if stages is None else stages, timeline=timeline)
    skinny.bind(spec, a, b, d, m=m, n=n, k=k, c=None if c is None else cp.asarray(c),
                bias=None if bias is None else cp.asarray(bias), z=z, alpha=alpha, beta=beta,
                leaky_slope=leaky_slope)()
    cp.cuda.runtime.deviceSynchronize()
    d_ref, z_ref = reference_gemm(a64, b64, c=c, bias=bias, bias_mode=bias_mode, act=act, alpha=alpha, beta=beta,
                                  leaky_slope=leaky_slope)
    got = host_d(d, out_dtype)
    what = (f"{m}x{n}x{k} {dtype} B {b_order} by {spec.b_load} {act} {bias_mode} D {out_dtype} {spec.layout} "
            f"splits {spec.splits} cluster {spec.cluster}")
    ok, max_abs, rel = check_result(got, d_ref, dtype, z_ref=z_ref if save_z else None, out_dtype=out_dtype, k=k)
    assert ok, f"D: max abs {max_abs:.3e}, rel {rel:.3e} ({what})"
    if save_z:
        ok, max_abs, rel = check_result(z.get(), z_ref, dtype, k=k)
        assert ok, f"Z: max abs {max_abs:.3e}, rel {rel:.3e} ({what})"
    return d


@pytest.mark.gpu
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", skinny.DTYPES)
@pytest.mark.parametrize("b_order", skinny.B_ORDERS)
@pytest.mark.parametrize("b_load", skinny.B_LOADS)
def test_sizes_match_the_reference(cp, size, dtype, b_order, b_load):
    # TMA boxes past N and K arrive as zeros, cp.async chunks past them are zero-filled: both loads, both orders
    run_case(cp, *size, dtype, b_order=b_order, b_load=b_load, seed=sum(size))


@pytest.mark.gpu
@pytest.mark.parametrize("splits", skinny.SPLITS)
@pytest.mark.parametrize("m", [1, 20, 97])
@pytest.mark.parametrize("b_load", skinny.B_LOADS)
def test_every_split_of_k_sums_every_share(cp, splits, m, b_load):
    # K = 1000: 16 blocks of 64 (the last 40 long), dealt unevenly over 8 shares too; N 200: tiles past N
    run_case(cp, m, 200, 1000, "bf16" if m % 2 else "f16", b_order="F" if splits % 4 else "C", splits=splits,
             b_load=b_load, seed=splits + m)


@pytest.mark.gpu
@pytest.mark.parametrize("stages", [2, 8, 16])
def test_other_ring_depths_and_the_timeline_build_compute_the_same_d(cp, stages):
    # the sweeps' ring depths (FRAGLAB_SKINNY_STAGES) and the profiling build go through skinny.bind as the library's
    # own launches do: K 1000 wraps the ring several times at 2 stages, fewer than one pass at 16
    for b_order in skinny.B_ORDERS:
        run_case(cp, 9, 200, 1000, "f16", b_order=b_order, b_load="tma", splits=2, stages=stages,
                 timeline=stages == 8, seed=stages)


@pytest.mark.gpu
@pytest.mark.parametrize("splits,cluster", [(s, c) for c in skinny.CLUSTERS for s in skinny.SPLITS if s <= c])
def test_every_cluster_size_holds_its_tiles_shares(cp, splits, cluster):
    # N 520: 9 tiles, so every cluster of more than one tile leaves tiles past N in the last cluster (they only
    # join the barriers); K 1200: 19 blocks of 64, dealt unevenly; both orders and both loads over the pairs
    index = skinny.CLUSTERS.index(cluster) + skinny.SPLITS.index(splits)
    run_case(cp, 11, 520, 1200, "f16", b_order=skinny.B_ORDERS[index % 2], b_load=skinny.B_LOADS[index // 2 % 2],
             splits=splits, cluster=cluster, seed=10 * cluster + splits)


@pytest.mark.gpu
@pytest.mark.parametrize("i", range(len(COMBOS)), ids=lambda i: "-".join(COMBOS[i]))
def test_every_activation_and_bias_mode(cp, i):
    case = _combo(i)
    dtype = case.pop("dtype")
    run_case(cp, (5, 45)[i % 2], 136, 520, dtype, seed=i, **case)
    # every other warp grid too, one per combination in turn (rows past a 16-row tile, columns past N in a tile)
    layout = _other_layout(i)
    m = min(skinny.layout_max_m(layout), (13, 77)[i % 2])
    run_case(cp, m, 200, 520, dtype, layout=layout, seed=50 + i, **case)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", skinny.LAYOUTS)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("b_order", skinny.B_ORDERS)
def test_every_warp_grid_matches_the_reference(cp, layout, size, b_order):
    m, n, k = size
    if m > skinny.layout_max_m(layout):
        m = skinny.layout_max_m(layout) - (m % 5)   # the grid's most rows, or a few fewer
    for splits in (1, 2, 8) if m % 2 else (4,):
        for b_load in skinny.B_LOADS:
            run_case(cp, m, n, k, "bf16" if m % 3 else "f16", b_order=b_order, layout=layout, splits=splits,
                     b_load=b_load, out_dtype=skinny.OUT_DTYPES[m % 3], seed=sum(size) + splits)


@pytest.mark.gpu
def test_results_are_bitwise_repeatable(cp):
    first = run_case(cp, 16, 4096, 4096, "f16", b_order="F", out_dtype="f32", seed=5).get()
    again = run_case(cp, 16, 4096, 4096, "f16", b_order="F", out_dtype="f32", seed=5).get()
    assert np.array_equal(first, again)
    for layout in skinny.LAYOUTS:   # K groups summed in a fixed order too
        m = skinny.layout_max_m(layout)
        first = run_case(cp, m, 4096, 4096, "f16", b_order="C", layout=layout, splits=8, seed=6).get()
        again = run_case(cp, m, 4096, 4096, "f16", b_order="C", layout=layout, splits=8, seed=6).get()
        assert np.array_equal(first, again), layout


@pytest.mark.gpu
def test_fraglab_gemm_routes_small_m_here_and_captures_in_a_graph(cp):
    torch = pytest.importorskip("torch")
    import fraglab
    from fraglab.gemm.api import prepare

    gen = torch.Generator(device="cuda").manual_seed(3)
    m, n, k = 16, 1032, 2048
    w = torch.rand(n, k, generator=gen, device="cuda").half() - 0.5
    a = torch.rand(m, k, generator=gen, device="cuda").half() - 0.5
    bias = torch.rand(n, generator=gen, device="cuda")
    prepared = prepare(a, w.t(), bias=bias, act="gelu", out_dtype="f16")
    assert isinstance(prepared.kernel_spec, skinny.SkinnyKernelSpec)
    wide = prepare(torch.rand(130, k, device="cuda").half(), w.t(), bias=bias, act="gelu")
    assert not isinstance(wide.kernel_spec, skinny.SkinnyKernelSpec)   # M 130: the wgmma kernel

    def reference(x):
        d, _ = reference_gemm(x.double().cpu().numpy(), w.t().double().cpu().numpy(), bias=bias.cpu().numpy(),
                              bias_mode="per_n", act="gelu")
        return d

    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fraglab.gemm(a, w.t(), bias=bias, act="gelu", out=out)   # planned and compiled outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fraglab.gemm(a, w.t(), bias=bias, act="gelu", out=out)
    for seed in (1, 2):
        a.copy_(torch.rand(m, k, generator=gen.manual_seed(seed), device="cuda").half() - 0.5)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ok, max_abs, rel = check_result(out.float().cpu().numpy(), reference(a), "f16", out_dtype="f16", k=k)
        assert ok, f"replay {seed}: max abs {max_abs:.3e}, rel {rel:.3e}"


def test_fraglab_gemm_plans_and_binds_the_skinny_kernel_for_small_m(monkeypatch):
    """The road (gemm/api.py): the wgmma family's plan of a small M becomes the skinny spec, and its launcher is
    the skinny bind with the plan's sizes (CPU: the bind is recorded, not run)."""
    from fraglab.gemm import api
    from fraglab.gemm.validate import GemmPlan

    monkeypatch.setattr(api, "_SM_COUNT", 132)
    plan = GemmPlan("wgmma", "bf16", 8, 11008, 4096, "silu", "per_n", False, True, "bf16", "C")   # 2 shares
    spec = api._make_spec(("wgmma", plan, None, True, "none"))
    assert isinstance(spec, skinny.SkinnyKernelSpec) and (spec.act, spec.save_z, spec.b_order) == ("silu", True, "C")
    assert not isinstance(api._make_spec(("wgmma", plan, "128x64", True, "none")), skinny.SkinnyKernelSpec)
    calls = []
    monkeypatch.setattr(skinny, "bind_plan", lambda *args: calls.append(args) or "bound")
    assert api._launcher("wgmma", spec, plan, "a", "b", "d", None, "bias", "z", 1.0, 0.0, 0.01) == "bound"
    assert calls[0][:5] == (spec, plan, "a", "b", "d") and calls[0][6:8] == ("bias", "z")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", skinny.LAYOUTS)
@pytest.mark.parametrize("b_load", skinny.B_LOADS)
def test_every_warp_grid_replays_in_a_cuda_graph(cp, layout, b_load):
    """A bound launch captured once replays with new A (no workspace, nothing reset between calls; the TMA map of
    B travels in the launch's parameters)."""
    torch = pytest.importorskip("torch")
    m, n, k = min(24, skinny.layout_max_m(layout)), 520, 1000
    gen = torch.Generator(device="cuda").manual_seed(9)
    a = torch.rand(m, k, generator=gen, device="cuda").half() - 0.5
    w = torch.rand(n, k, generator=gen, device="cuda").half() - 0.5
    bias = torch.rand(n, generator=gen, device="cuda")
    d = torch.full((m, n), float("nan"), device="cuda")
    spec = dataclasses.replace(skinny.spec_for("f16", m, n, k, act="relu", bias_mode="per_n", b_order="F"),
                               layout=layout, splits=2, b_load=b_load)
    launch = skinny.bind(spec, a, w.t(), d, m=m, n=n, k=k, bias=bias)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        launch.launch_on(stream.cuda_stream)   # the module loads outside the capture
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch.launch_on(torch.cuda.current_stream().cuda_stream)
    for seed in (1, 2):
        a.copy_(torch.rand(m, k, generator=gen.manual_seed(seed), device="cuda").half() - 0.5)
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want, _ = reference_gemm(a.double().cpu().numpy(), w.t().double().cpu().numpy(), bias=bias.cpu().numpy(),
                                 bias_mode="per_n", act="relu")
        ok, max_abs, rel = check_result(d.cpu().numpy(), want, "f16", k=k)
        assert ok, f"{layout} by {b_load} replay {seed}: max abs {max_abs:.3e}, rel {rel:.3e}"
