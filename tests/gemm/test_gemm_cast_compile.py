"""The cast kernels behind a 16-bit D of the WMMA and SIMT GEMMs compile with NVRTC from pip wheels (no GPU)."""

import pytest

from fraglab.gemm import cast
from fraglab.runtime.build import KernelBuild
from nvrtc_compile import offline_nvrtc

nvrtc_offline = offline_nvrtc(allow_module_level=True)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])   # the SIMT ladder runs before sm_80 too
def test_both_output_types_compile(arch):
    assert len(cast.BUILD.name_expressions) == 4   # f32 -> f16 / bf16, and f16 / bf16 -> f32 (a bias widened)
    ok, log = nvrtc_offline.compile_build(cast.BUILD, arch)
    assert ok, log


@pytest.mark.parametrize("name", ["fraglab::cast_f32<double>", "fraglab::widen_to_f32<double>"])
def test_a_type_the_kernels_lack_does_not_compile(name):
    ok, log = nvrtc_offline.compile_build(KernelBuild(cast.ENTRY, (name,)), "sm_90")
    assert not ok and "error" in log
