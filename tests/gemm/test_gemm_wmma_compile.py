"""Every WMMA GEMM instantiation the launcher can request compiles, with NVRTC from pip wheels (no GPU).

All 768 instantiations go through NVRTC's front end and NVVM to PTX (compute_80 and compute_90, with -G
so NVVM does not spend minutes optimising); one of each tile x path x dtype, and every activation,
also goes all the way to a cubin (sm_80 and sm_90) with the real options.
"""

import pytest

from fraglab.gemm import wmma as gemm_wmma
from fraglab.gemm.reference import ACT_KINDS
from fraglab.runtime.build import KernelBuild
from nvrtc_compile import offline_nvrtc

nvrtc_offline = offline_nvrtc(allow_module_level=True)

CHUNK = 96


def _chunks():
    names = [s.name() for s in gemm_wmma.all_specs()]
    return [tuple(names[i:i + CHUNK]) for i in range(0, len(names), CHUNK)]


@pytest.mark.parametrize("arch", ["compute_80", "compute_90"])
@pytest.mark.parametrize("chunk", range(len(_chunks())))
def test_every_instantiation_compiles(arch, chunk):
    names = _chunks()[chunk]
    ok, log = nvrtc_offline.compile_build(KernelBuild(gemm_wmma.ENTRY, names, ("-G",)), arch)
    assert ok, log


def _representatives():
    specs = []
    for dtype in gemm_wmma.DTYPES:
        for tile in gemm_wmma.ALIGNED_TILES:
            specs.append(gemm_wmma.WmmaKernelSpec(dtype, "gelu", "full", True, True, tile, True))
        specs.append(gemm_wmma.WmmaKernelSpec(dtype, "silu", "per_m", True, True, gemm_wmma.GENERIC_TILE, False))
    for i, act in enumerate(ACT_KINDS):
        aligned = bool(i % 2)
        specs.append(gemm_wmma.WmmaKernelSpec("f16", act, ("none", "per_m", "per_n", "full")[i % 4], bool(i % 2),
                                              bool(i % 3 == 0), "128x64" if aligned else gemm_wmma.GENERIC_TILE,
                                              aligned))
    return specs


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_representative_kernels_assemble_to_cubins(arch):
    names = tuple(dict.fromkeys(s.name() for s in _representatives()))
    ok, log = nvrtc_offline.compile_build(KernelBuild(gemm_wmma.ENTRY, names), arch)
    assert ok, log


def test_every_experimental_tile_compiles():
    """tools/gemm times these; each must build (one epilogue, the first stage of the compiler)."""
    names = tuple(gemm_wmma.WmmaKernelSpec("f16", "gelu", "per_n", tile=t).name() for t in gemm_wmma.EXPERIMENTAL_TILES)
    ok, log = nvrtc_offline.compile_build(KernelBuild(gemm_wmma.ENTRY, names, ("-G",)), "compute_90")
    assert ok, log


@pytest.mark.parametrize("schedule,message", [
    ((3, 0, 2), "copies would overwrite a stage in use"),   # copies before an early barrier: a race
    ((2, 2, 2), "too few stages"),                          # 2 stages with an early barrier: nothing in flight
])
def test_unsafe_pipeline_schedules_do_not_compile(schedule, message):
    stages, load_step, barrier_step = schedule
    tile = gemm_wmma.TileSpec(256, 128, 64, 64, 64, stages, 8, load_step, barrier_step)
    name = gemm_wmma.WmmaKernelSpec("f16").name().replace(gemm_wmma.TILES["256x128"].cpp(), tile.cpp())
    ok, log = nvrtc_offline.compile_build(KernelBuild(gemm_wmma.ENTRY, (name,), ("-G",)), "compute_90")
    assert not ok and message in log
    safe = gemm_wmma.TileSpec(256, 128, 64, 64, 64, 3, 8, barrier_step, barrier_step)  # copies after the barrier
    ok, log = nvrtc_offline.compile_build(
        KernelBuild(gemm_wmma.ENTRY, (name.replace(tile.cpp(), safe.cpp()),), ("-G",)), "compute_90")
    assert ok, log


def test_a_broken_instantiation_is_reported():
    bad = gemm_wmma.WmmaKernelSpec("f16").name().replace("__half", "double")
    ok, log = nvrtc_offline.compile_build(KernelBuild(gemm_wmma.ENTRY, (bad,), ("-G",)), "compute_90")
    assert not ok and log


def test_peak_and_spin_kernels_compile():
    from fraglab import bench
    from fraglab.bench import peak

    for build in (peak.PEAK_BUILD, bench.SPIN_BUILD):
        for arch in ("sm_80", "sm_90"):
            ok, log = nvrtc_offline.compile_build(build, arch)
            assert ok, log
