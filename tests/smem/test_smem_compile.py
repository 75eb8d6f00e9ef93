"""The bank probe compiles with NVRTC from pip wheels for sm_90, every instantiation the wing may launch."""

import pytest

nvrtc_offline = pytest.importorskip("fraglab.runtime.nvrtc_offline")


def _ready():
    try:
        nvrtc_offline.wheel_include_dir()
        import cuda.bindings.nvrtc  # noqa: F401
        return True, ""
    except (nvrtc_offline.OfflineCompilerUnavailable, ImportError) as exc:
        return False, str(exc)


ready, why = _ready()


@pytest.mark.skipif(not ready, reason=f"offline NVRTC unavailable: {why} (pip install -e .[dev])")
@pytest.mark.parametrize("index", range(1))
def test_every_bank_probe_instantiation_compiles(index):
    from fraglab.smem.measure import kernel_builds

    build = kernel_builds()[index]
    # every access form the measurement can ask for is in the build (wgmma is model only)
    assert len(build.name_expressions) == 4 + 4 + 6 + 6 + 3
    ok, log = nvrtc_offline.compile_build(build, "sm_90")
    assert ok, log[-3000:]


def test_the_probe_source_is_in_the_sources_hash():
    from fraglab.runtime.build import kernels_dir, source_files

    assert "smem/bank_probe.cu" in {p.relative_to(kernels_dir()).as_posix() for p in source_files()}
