"""Every probe kernel fraglab can request compiles with NVRTC from pip wheels, no GPU needed."""

import pytest

from fraglab.apis import wmma as probes
from fraglab.errors import CompileError
from fraglab.runtime import gpu
from fraglab.apis.wmma import wmma_catalogue

nvrtc_offline = pytest.importorskip("fraglab.runtime.nvrtc_offline")


def _offline_ready():
    try:
        nvrtc_offline.wheel_include_dir()
        import cuda.bindings.nvrtc  # noqa: F401
        return True, ""
    except (nvrtc_offline.OfflineCompilerUnavailable, ImportError) as exc:
        return False, str(exc)


ready, why = _offline_ready()
pytestmark = pytest.mark.skipif(not ready, reason=f"offline NVRTC unavailable: {why} (pip install -e .[dev])")


@pytest.mark.parametrize("sm", [75, 80, 86, 89, 90])
def test_every_probe_instantiation_compiles(sm):
    specs = probes.specs_for_arch(sm)
    assert specs, sm
    build = probes.build_for(specs)
    assert len(build.name_expressions) == 4 * len(specs)
    ok, log = nvrtc_offline.compile_build(build, f"sm_{sm}")
    assert ok, log


def test_arch_gating_matches_what_the_compiler_accepts():
    # bf16 WMMA needs sm_80: the catalogue must not offer it on sm_75, and NVRTC must refuse it there.
    bf16 = [s for s in wmma_catalogue() if s.dtype == "bf16" and s.frag == "matrix_a"][:1]
    assert bf16[0] not in probes.specs_for_arch(75)
    ok, log = nvrtc_offline.compile_build(probes.build_for(bf16), "sm_75")
    assert not ok and "error" in log


def test_a_broken_kernel_is_reported_with_the_log():
    from fraglab.runtime.build import KernelBuild

    ok, log = nvrtc_offline.compile_build(KernelBuild("apis/wmma.cu", ("probe_load<FL_A, 16, 16, 16, FL_F64, FL_ROW>",)), "sm_90")
    assert not ok and "wmma.cu" in log


def test_include_folder_search_names_what_it_tried(monkeypatch, tmp_path):
    from fraglab.runtime import toolkit

    monkeypatch.setattr(toolkit, "include_candidates", lambda: [tmp_path / "a", tmp_path / "b"])
    gpu.include_dirs.cache_clear()
    try:
        with pytest.raises(CompileError, match="crt/mma.h.*tried: .*a, .*b"):
            gpu.include_dirs()
        (tmp_path / "b" / "crt").mkdir(parents=True)
        (tmp_path / "b" / "crt" / "mma.h").write_text("")
        (tmp_path / "b" / "cuda_fp16.h").write_text("")
        gpu.include_dirs.cache_clear()
        assert gpu.include_dirs() == [str(tmp_path / "b")]
    finally:
        gpu.include_dirs.cache_clear()


def test_compiling_leaves_python_bytes_intact():
    # NVRTC once wrote its (empty) log into Python's shared one-byte b" ", turning every later space into NUL.
    ok, log = nvrtc_offline.compile_build(probes.build_for(probes.specs_for_arch(90)[:1]), "sm_90")
    assert ok and " ".encode() == b"\x20" and bytes([32]) * 1 == b" "


def _family_builds():
    from fraglab.apis import FAMILIES

    return [pytest.param(family, i, id=f"{api}-{i}") for api, family in FAMILIES.items()
            for i, _ in enumerate(family.kernel_builds())]


@pytest.mark.parametrize("family,index", _family_builds())
def test_every_kernel_a_family_can_request_compiles(family, index):
    """Each family's kernel_builds() is the whole set of kernels it may ask NVRTC for; all must compile."""
    build = family.kernel_builds()[index]
    arch = "sm_90a" if any("sm_90a" in o for o in build.options) else "sm_90"
    ok, log = nvrtc_offline.compile_build(build, arch)
    assert ok, log[-3000:]


def _peak_builds():
    from fraglab.bench import peak

    return [pytest.param(build, arch, id=f"{build.entry}-{arch}") for build, archs in peak.kernel_builds()
            for arch in archs]


@pytest.mark.parametrize("build,arch", _peak_builds())
def test_every_peak_kernel_compiles(build, arch):
    """`fraglab peak`'s probes, the wgmma ones for sm_90a, with no ptxas remark about wgmma: ptxas says when it
    serialises wgmmas or injects waits, which would make the probe measure a slower loop than it means to."""
    ok, log = nvrtc_offline.compile_build(build, arch)
    assert ok, log[-3000:]
    assert "wgmma" not in log, log[-3000:]


def _smem_builds():
    from fraglab.smem.measure import kernel_builds

    return [pytest.param(build, id=build.entry) for build in kernel_builds()]


@pytest.mark.parametrize("build", _smem_builds())
def test_every_bank_probe_kernel_compiles(build):
    """`fraglab smem`'s bank probe (kernels/smem/bank_probe.cu), every access form it may launch; sm_90 for
    stmatrix."""
    ok, log = nvrtc_offline.compile_build(build, "sm_90")
    assert ok, log[-3000:]


def test_the_wgmma_peak_kernels_need_the_sm90a_target():
    # Why PEAK_WGMMA_BUILD forces sm_90a: the same source for plain sm_90 is refused by ptxas.
    from fraglab.bench import peak
    from fraglab.runtime.build import KernelBuild

    plain = KernelBuild(peak.PEAK_WGMMA_BUILD.entry, peak.PEAK_WGMMA_BUILD.name_expressions[:1])
    ok, log = nvrtc_offline.compile_build(plain, "sm_90")
    assert not ok and "not supported on .target 'sm_90'" in log
    assert "-arch=sm_90a" in peak.PEAK_WGMMA_BUILD.all_options([], "sm_90")


def test_sources_hash_covers_every_cuda_file_in_the_package():
    from fraglab.runtime.build import kernels_dir, source_files

    found = {p.relative_to(kernels_dir()).as_posix() for p in source_files()}
    assert {"apis/wmma.cu", "gemm/wmma.cu", "gemm/simt.cu", "gemm/epilogue.cuh", "bench/peak.cu",
            "bench/peak_wgmma.cu", "smem/bank_probe.cu"} <= found


def _skinny_chunks(size=128):
    from fraglab.gemm import skinny

    names = [s.name() for s in skinny.all_specs()]
    return [tuple(names[i:i + size]) for i in range(0, len(names), size)]


@pytest.mark.parametrize("pair", range(-(-len(_skinny_chunks()) // 2)))
def test_every_skinny_gemm_instantiation_compiles(pair):
    """Every instantiation of the skinny GEMM (kernels/gemm/skinny.cu) fraglab can request, through the front end
    and NVVM for compute_90 (-G: quick), two chunks side by side (NVRTC releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    from fraglab.gemm import skinny

    chunks = _skinny_chunks()[2 * pair:2 * pair + 2]
    with ThreadPoolExecutor(len(chunks)) as pool:
        results = list(pool.map(lambda names: nvrtc_offline.compile_build(skinny.build_of(names, ("-G",)),
                                                                          "compute_90"), chunks))
    for ok, log in results:
        assert ok, log[-3000:]


def test_skinny_gemm_representatives_assemble_without_spills():
    """Each input type x warp grid x B order with the heaviest epilogue, through ptxas for sm_90: no local
    memory (a spill would stall the weight stream)."""
    from fraglab.gemm import skinny

    specs = [skinny.SkinnyKernelSpec(dt, "gelu", "full", True, True, "f32", order, layout)
             for dt in skinny.DTYPES for order in skinny.B_ORDERS for layout in skinny.LAYOUTS]
    ok, log, cubin = nvrtc_offline.compile_build(skinny.build_of(tuple(s.name() for s in specs),
                                                                 ("-Xptxas", "-warn-spills")), "sm_90", cubin=True)
    assert ok, log[-3000:]
    assert cubin[:4] == b"\x7fELF" and "spill" not in log.lower(), log[-3000:]


def test_every_skinny_cluster_size_compiles():
    """The cluster size is a build option (FRAGLAB_SKINNY_CLUSTER) of the same instantiations: each size below the
    default (which the instantiation test compiles) over one instantiation per warp grid and B order."""
    from fraglab.gemm import skinny

    names = tuple(skinny.SkinnyKernelSpec("f16", "relu", "per_n", True, False, "f16", order, layout).name()
                  for layout, order in skinny.GRID_ORDERS)
    for cluster in (c for c in skinny.CLUSTERS if c != skinny.CLUSTER):
        ok, log = nvrtc_offline.compile_build(skinny.build_of(names, ("-G", f"-DFRAGLAB_SKINNY_CLUSTER={cluster}")),
                                              "compute_90")
        assert ok, log[-3000:]


def test_skinny_timeline_build_exports_its_marks_only_when_asked():
    """benchmarks/skinny_timeline.py finds the per-block marks by their C name in the FRAGLAB_SKINNY_TIMELINE
    build; the library's own build must not carry them (nor the global-timer reads)."""
    from fraglab.gemm import skinny

    spec = skinny.spec_for("f16", 8, 4096, 4096, act="relu", bias_mode="per_n", out_dtype="f16", b_order="F")
    cubins = {}
    for options in ((), ("-DFRAGLAB_SKINNY_TIMELINE",)):
        ok, log, cubin = nvrtc_offline.compile_build(skinny.build_of((spec.name(),), options), "sm_90", cubin=True)
        assert ok and "warning" not in log.lower(), log[-3000:]
        cubins[options] = cubin
    assert b"fraglab_skinny_timeline" in cubins[("-DFRAGLAB_SKINNY_TIMELINE",)]
    assert b"fraglab_skinny_timeline" not in cubins[()]
