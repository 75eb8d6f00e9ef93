"""CPU tests of the FP32 SIMT GEMM ladder: specs, dispatch, launch geometry and NVRTC compiles (no GPU)."""

from __future__ import annotations

import math
import os
import re
from concurrent.futures import ProcessPoolExecutor

import pytest

from fraglab.bench import simt_ladder
from fraglab.gemm import simt
from fraglab.gemm.reference import ACT_KINDS, BIAS_MODES, epilogue_cpp
from fraglab.runtime.build import kernels_dir
from nvrtc_compile import offline_nvrtc

ARCHS = ("sm_80", "sm_90")


# ---------------------------------------------------------------------------------------- specs
def test_ladder_holds_the_rungs_the_cli_and_dispatcher_name():
    assert simt.RUNGS[0] == "smoke"
    assert simt.TOP_RUNG in simt.RUNGS and simt.TOP_RUNG != "smoke"
    for name in ("naive_uncoalesced", "naive_coalesced", "smem_cache", "reg_tile_1d", "reg_tile_2d",
                 "reg_tile_2d_db", "vectorized", "warp_tiled"):
        assert name in simt.RUNGS
    assert len(set(simt.RUNGS)) == len(simt.RUNGS)


def _named_defaults() -> dict[str, int]:
    text = (kernels_dir() / simt.ENTRY).read_text()
    return {name: int(value) for name, value in re.findall(r"\b(k[A-Z]\w*) = (\d+)", text)}


def test_tile_arguments_are_the_named_defaults_of_the_source():
    d = _named_defaults()
    expected = {
        "smoke": (d["kSmokeBlock"], d["kSmokeBlock"]),
        "naive_uncoalesced": (False, d["kNaiveThreads"]),
        "naive_coalesced": (True, d["kNaiveThreads"]),
        "smem_cache": (d["kSmemTile"],),
        "reg_tile_1d": (d["kTile1dBM"], d["kTile1dBN"], d["kTile1dBK"], d["kTile1dTM"]),
        "reg_tile_2d": (False, d["kTile2dBM"], d["kTile2dBN"], d["kTile2dBK"], d["kTile2dTM"], d["kTile2dTN"],
                        d["kTile2dPadA"]),
        "reg_tile_2d_db": (True, d["kTile2dBM"], d["kTile2dBN"], d["kTile2dBK"], d["kTile2dTM"],
                           d["kTile2dTN"], d["kTile2dPadA"]),
        "vectorized": (d["kVecBM"], d["kVecBN"], d["kVecBK"], d["kVecTM"], d["kVecTN"], d["kVecPadA"]),
        "warp_tiled": (d["kWarpBM"], d["kWarpBN"], d["kWarpBK"], d["kWarpWM"], d["kWarpWN"], d["kWarpPadA"],
                       d["kWarpMinBlocks"]),
    }
    for rung in simt.RUNGS:
        assert simt.rung_spec(rung).template_args == expected[rung], rung


def _threads_the_kernel_expects(rung: str) -> tuple[int, tuple[int, int] | None]:
    """(threads per block, (rows, cols) per block) from the template arguments, as the C++ computes them."""
    args = simt.rung_spec(rung).template_args
    if rung == "smoke":
        bx, by = args
        return bx * by, (by, bx)
    if rung.startswith("naive"):
        return args[1], None
    if rung == "smem_cache":
        return args[0] ** 2, (args[0], args[0])
    if rung == "reg_tile_1d":
        bm, bn, _, tm = args
        return bm * bn // tm, (bm, bn)
    if rung.startswith("reg_tile_2d"):
        _, bm, bn, _, tm, tn, _ = args
        return (bm // tm) * (bn // tn), (bm, bn)
    if rung == "vectorized":
        bm, bn, _, tm, tn, _ = args
        return (bm // tm) * (bn // tn), (bm, bn)
    bm, bn, _, wm, wn, _, _ = args
    return (bm // wm) * (bn // wn) * 32, (bm, bn)


@pytest.mark.parametrize("rung", simt.RUNGS)
def test_launch_block_matches_the_kernel_tile(rung):
    spec = simt.rung_spec(rung)
    threads, tile = _threads_the_kernel_expects(rung)
    assert math.prod(spec.block) == threads
    assert spec.tile == tile
    assert threads % 32 == 0 and threads <= 1024


@pytest.mark.parametrize("rung", simt.RUNGS)
@pytest.mark.parametrize("m,n", [(1, 1), (7, 7), (33, 33), (127, 129), (129, 127), (1000, 1000), (2048, 24),
                                 (9, 3000)])
def test_launch_grid_covers_every_output_once(rung, m, n):
    grid, block = simt.launch_geometry(rung, m, n)
    spec = simt.rung_spec(rung)
    if spec.tile is None:
        threads = grid[0] * block[0]
        assert m * n <= threads < m * n + block[0]
    else:
        rows, cols = spec.tile
        assert grid[0] * cols >= n and (grid[0] - 1) * cols < n
        assert grid[1] * rows >= m and (grid[1] - 1) * rows < m


def test_launch_geometry_refuses_grids_beyond_cuda_limits():
    with pytest.raises(ValueError, match="smoke"):
        simt.launch_geometry("smoke", 16 * 65536, 16)
    grid, _ = simt.launch_geometry("smoke", 16 * 65535, 16)
    assert grid == (1, 65535)


def test_kernel_name_spells_rung_epilogue_and_tiles():
    name = simt.kernel_name("warp_tiled", "relu", "per_n", True, False)
    assert name.startswith("fraglab::simt::gemm_warp_tiled<")
    assert epilogue_cpp("relu", "per_n", True, False) in name
    assert name.endswith(", 128, 256, 8, 64, 64, 4, 1>")
    assert simt.kernel_name("naive_uncoalesced").endswith(", false, 256>")
    assert simt.kernel_name("naive_coalesced").endswith(", true, 256>")
    build = simt.build_for("smoke", "gelu", "full", False, True)
    assert build.entry == "gemm/simt.cu"
    assert build.name_expressions == (simt.kernel_name("smoke", "gelu", "full", False, True),)


@pytest.mark.parametrize("call,argument", [
    (lambda: simt.build_for("tiled"), "kernel"),
    (lambda: simt.build_for("smoke", act="swish"), "act"),
    (lambda: simt.build_for("smoke", bias_mode="per_row"), "bias_mode"),
])
def test_bad_names_are_refused_naming_the_argument_and_choices(call, argument):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert f"invalid {argument}" in message and "valid choices are" in message


def test_epilogue_combinations_cover_every_policy_once():
    combos = simt.epilogue_combinations()
    assert len(combos) == len(set(combos)) == len(ACT_KINDS) * len(BIAS_MODES) * 2 * 2
    assert {c[0] for c in combos} == set(ACT_KINDS) and {c[1] for c in combos} == set(BIAS_MODES)
    builds = simt.all_builds()
    assert len(builds) == len(simt.RUNGS) * len(combos)
    assert len({b.name_expressions for b in builds}) == len(builds)


# ------------------------------------------------------------------------------------- dispatch
def test_dispatch_by_output_count():
    t, mid = simt.SMOKE_THRESHOLD, simt.MID_THRESHOLD
    assert 1 <= t < mid
    assert simt.choose_rung(1, 1, 1) == "smoke"
    assert simt.choose_rung(1, t, 8192) == "smoke"
    assert simt.choose_rung(t, 1, 1) == "smoke"
    assert simt.choose_rung(1, t + 1, 1) == simt.MID_RUNG
    assert simt.choose_rung(mid, 1, 8192) == simt.MID_RUNG
    assert simt.choose_rung(1, mid + 1, 1) == simt.TOP_RUNG
    # the sizes the H200 measurements name (gemm_simt.py notes them at the thresholds)
    assert simt.choose_rung(512, 512, 4096) == "smoke"
    assert simt.choose_rung(768, 768, 64) == simt.MID_RUNG
    assert simt.choose_rung(1280, 1280, 4096) == simt.MID_RUNG
    assert simt.choose_rung(64, 16384, 512) == simt.MID_RUNG
    assert simt.choose_rung(1536, 1536, 64) == simt.TOP_RUNG
    assert simt.choose_rung(2048, 2048, 2048) == simt.TOP_RUNG
    assert simt.choose_rung(4096, 4096, 4096) == simt.TOP_RUNG
    assert simt.choose_rung(8192, 8192, 8192) == simt.TOP_RUNG
    assert set(simt.DISPATCH_RUNGS) == {"smoke", simt.MID_RUNG, simt.TOP_RUNG} <= set(simt.RUNGS)


def test_dispatch_never_steps_back_as_outputs_grow():
    order = {rung: i for i, rung in enumerate(simt.DISPATCH_RUNGS)}
    sizes = [1, 3, 16, 31, 64, 100, 128, 129, 256, 500, 512, 513, 700, 1024, 1025, 2048, 4096, 65536]
    for k in (1, 64, 4096):
        for m in sizes:
            chosen = [order[simt.choose_rung(m, n, k)] for n in sizes]
            assert chosen == sorted(chosen), (m, k)


@pytest.mark.parametrize("m,n,k,argument", [(0, 4, 4, "m"), (4, 0, 4, "n"), (4, 4, 0, "k")])
def test_dispatch_refuses_empty_problems(m, n, k, argument):
    with pytest.raises(ValueError, match=f"invalid {argument}"):
        simt.choose_rung(m, n, k)


def test_run_ladder_refuses_bad_arguments_before_touching_the_gpu(monkeypatch):
    monkeypatch.setenv("FRAGLAB_NO_GPU", "1")
    with pytest.raises(ValueError, match="invalid kernel 'tiled'.*warp_tiled"):
        simt_ladder.run_ladder([64], kernel="tiled")
    with pytest.raises(ValueError, match="invalid act"):
        simt_ladder.run_ladder([64], act="swish")
    with pytest.raises(ValueError, match="invalid size"):
        simt_ladder.run_ladder([(64, 64)])
    with pytest.raises(ValueError, match="invalid size"):
        simt_ladder.run_ladder([0])


def test_slow_rungs_still_get_a_median_of_several_reps():
    assert simt_ladder._reps_for(5000.0) >= 3        # naive rungs at 8192^3 take seconds a launch
    assert simt_ladder._reps_for(0.01) <= 50
    assert simt_ladder._reps_for(2.0) > simt_ladder._reps_for(20.0)


# --------------------------------------------------------------------------------- NVRTC compiles
# The exact builds `launch` requests take NVRTC about 1-2 CPU-seconds each for the register-tiled rungs
# (fully unrolled 8x8 or 16x8 outer products). So: every rung with a covering set of epilogues as
# built, and every rung (any of them can be asked for with --kernel) with all 128 epilogues at
# --Ofast-compile=max (same source, same instantiations, same front end and code generation, minimal
# optimisation: ~25x faster).
FAST_COMPILE = ("--Ofast-compile=max",)


def _compile(job):
    from fraglab.runtime.nvrtc_offline import compile_build
    from fraglab.runtime.build import KernelBuild

    rung, combos, arch, extra = job
    build = simt.rung_build(rung, combos)
    ok, log = compile_build(KernelBuild(build.entry, build.name_expressions, build.options + extra), arch)
    return rung, arch, ok, log


def _run_compiles(jobs):
    offline_nvrtc()
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(_compile, jobs))
    failed = [f"{rung} {arch}:\n{log[-2000:]}" for rung, arch, ok, log in results if not ok]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_rung_compiles_with_every_epilogue(arch):
    """Every rung launch() can be asked for, each with all 128 epilogues (at --Ofast-compile=max)."""
    combos = simt.epilogue_combinations()
    assert len(combos) == 128
    jobs = [(rung, [c for c in combos if c[0] == act], arch, FAST_COMPILE)
            for rung in simt.RUNGS for act in ACT_KINDS]
    _run_compiles(jobs)


def _covering_epilogues() -> list[tuple[str, str, bool, bool]]:
    """Every activation, bias mode, C and Z choice at least once (8 policies instead of 128)."""
    return [(act, BIAS_MODES[i % 4], bool(i % 2), bool((i // 2) % 2)) for i, act in enumerate(ACT_KINDS)]


@pytest.mark.parametrize("arch", ARCHS)
def test_every_rung_compiles_as_launched_with_every_epilogue_branch(arch):
    combos = _covering_epilogues()
    assert {c[1] for c in combos} == set(BIAS_MODES) and {c[2] for c in combos} == {False, True}
    assert {c[3] for c in combos} == {False, True}
    _run_compiles([(rung, combos, arch, ()) for rung in simt.RUNGS])


def test_a_broken_instantiation_fails_the_compile_check():
    """The check above can fail: a tile shape the static_asserts reject does not compile."""
    from fraglab.runtime.build import KernelBuild

    compile_build = offline_nvrtc().compile_build
    bad = simt.kernel_name("warp_tiled").replace(", 128, 256, 8, 64, 64,", ", 128, 256, 8, 48, 64,")
    ok, log = compile_build(KernelBuild(simt.ENTRY, (bad,), FAST_COMPILE), "sm_90")
    assert not ok and "warp tile" in log
