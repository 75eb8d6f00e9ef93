"""The GEMMs, one road: validate (validate.py) -> plan -> launch (wmma.py, simt.py), with the epilogue vocabulary
(epilogue.py, epilogue.cuh) and its float64 twin (reference.py). Kernels sit beside their launchers.

`fraglab.gemm(a, b, ...)` calls fraglab.gemm.api.gemm: this package is callable, so the short spelling
keeps working now that `gemm` is a folder.
"""

from __future__ import annotations

import sys
import types


_API_GEMM = None   # fraglab.gemm.api.gemm once imported (an import statement per call costs ~1 us)


def _api_gemm():
    global _API_GEMM
    from .api import gemm as api_gemm  # lazy: keeps `import fraglab.gemm` free of CuPy

    _API_GEMM = api_gemm
    return api_gemm


def gemm(*args, **kwargs):
    """Tensor-core / SIMT GEMM with a fused epilogue; see fraglab.gemm.api.gemm."""
    return (_API_GEMM or _api_gemm())(*args, **kwargs)


class _CallableModule(types.ModuleType):
    """`fraglab.gemm(...)` is the package called: it forwards to fraglab.gemm.api.gemm."""

    def __call__(self, *args, **kwargs):
        return gemm(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
