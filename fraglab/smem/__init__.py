"""Shared memory, modelled and measured: which bank each thread's access hits, how many wavefronts each
instruction takes, and which swizzle or padding removes the conflicts.

layout.py (tiles and CuTe swizzles as data) -> access.py (instructions and their addresses) -> model.py (banks,
phases, wavefronts) -> measure.py (the bank probe on the GPU, through fraglab.runtime) -> analysis.py (one
answer), search.py (the ranking), view.py (bank maps), verify.py (the shipped cases, model against GPU).

`fraglab.smem(layout, dtype=, access=, fragment=, tile=, source=)` is this package called: it forwards to
fraglab.smem.analysis.analyze and returns an SmemReport.
"""

from __future__ import annotations

import sys
import types


def smem(*args, **kwargs):
    """The bank model (and the GPU's measurement) of one access to one shared-memory layout; see analysis.analyze."""
    from .analysis import analyze

    return analyze(*args, **kwargs)


class _CallableModule(types.ModuleType):
    """`fraglab.smem(...)` is the package called."""

    def __call__(self, *args, **kwargs):
        return smem(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
