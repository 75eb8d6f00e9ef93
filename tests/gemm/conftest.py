"""The GEMM tests' GPU fixtures, one definition each: CuPy, an sm_90 GPU (the wgmma GEMM's) and torch with a CUDA
device; each skips with its reason where the GPU or the package is missing."""

import importlib.util

import pytest


@pytest.fixture(scope="module")
def cp():
    from fraglab.runtime import gpu

    return gpu.cupy()


@pytest.fixture(scope="module")
def sm90(cp):
    from fraglab.runtime import gpu

    if gpu.compute_capability() != 90:
        pytest.skip("the wgmma GEMM needs an sm_90 GPU (H100/H200)")


@pytest.fixture(scope="module")
def torch(cp):
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (pip install fraglab[torch])")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch
