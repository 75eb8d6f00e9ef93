"""Compile the kernels a GPU test module launches before its tests run (fraglab.runtime.gpu.precompile).

Under pytest-xdist every worker runs a module's fixture at about the same moment; each worker begins at its own
share of the list, so the workers compile different kernels first and find the rest in CuPy's disk cache,
instead of all compiling the same kernel at once."""

from __future__ import annotations

import os


def precompile(builds) -> float:
    from fraglab.runtime import gpu

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0")[2:] or 0)
    return gpu.precompile(builds, start=worker / max(workers, 1))
