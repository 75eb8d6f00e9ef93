"""fraglab: which lane and which slot of a tensor-core fragment holds which element, measured."""

__version__ = "0.1.0"


def gemm(*args, **kwargs):
    """Tensor-core / SIMT GEMM with a fused epilogue; see fraglab.gemm_api.gemm."""
    from .gemm_api import gemm as _gemm  # lazy: keeps `import fraglab` free of CuPy

    return _gemm(*args, **kwargs)
