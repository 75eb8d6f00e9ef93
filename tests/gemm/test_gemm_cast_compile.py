"""The cast kernels behind a 16-bit D of the WMMA and SIMT GEMMs compile with NVRTC from pip wheels (no GPU)."""

import pytest

from fraglab.gemm import cast
from fraglab.runtime.build import KernelBuild
from nvrtc_compile import offline_nvrtc

nvrtc_offline = offline_nvrtc(allow_module_level=True)


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])   # the SIMT ladder runs before sm_80 too
def test_both_output_types_compile(arch):
    ok, log = nvrtc_offline.compile_build(cast.BUILD, arch)
    assert ok, log


def test_an_output_type_the_kernel_lacks_does_not_compile():
    ok, log = nvrtc_offline.compile_build(KernelBuild(cast.ENTRY, ("fraglab::cast_f32<double>",)), "sm_90")
    assert not ok and "error" in log
