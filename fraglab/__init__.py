"""fraglab: which lane and which slot of a tensor-core fragment holds which element, measured.

The package root re-exports, and makes the wings' registrations (below); nothing inside fraglab imports it.
Public API, loaded on first use:
    fraglab.__version__
    fraglab.gemm(a, b, ...)          the tensor-core / SIMT GEMM with a fused epilogue (fraglab.gemm.api.gemm)
    fraglab.layout(frag, shape=, dtype=, layout=, api=, source=, method=, atlas=)
                                     one fragment's Layout (.holders(r, c), .to_numpy(), .to_dict(), .table(), .figure())
    fraglab.smem(layout, dtype=, access=, fragment=, tile=, source=)
                                     shared-memory banks and wavefronts of one access (fraglab.smem.analysis)
    fraglab.check(cute=|triton=|table=|header=, frag=, ...)   a written layout against the measured one
    fraglab.catalogue(api=None)      every fragment fraglab knows, as `fraglab list --format json` lists them
    fraglab.FAMILIES                 the instruction families (fraglab.apis.FAMILIES)
    fraglab.FraglabError             the base of every error fraglab reports
"""

from __future__ import annotations

import importlib

from ._version import __version__

# fraglab.apis registers the families with layouts.spec, fraglab.show the Layout views with layouts.layout (the
# layouts wing sits below both and never imports them). Python runs this file before any fraglab module, so the
# registrations hold whatever is imported first. Both are light: no family module, no matplotlib, no CuPy.
from . import apis as _apis, show as _show  # noqa: E402,F401

# name -> (module, attribute), imported on first access so `import fraglab` stays free of CuPy and matplotlib
_LAZY = {
    "layout": ("fraglab.lookup", "layout"),
    "smem": ("fraglab.smem", "smem"),
    "catalogue": ("fraglab.lookup", "catalogue"),
    "FAMILIES": ("fraglab.apis", "FAMILIES"),
    "get_family": ("fraglab.apis", "get_family"),
    "make_spec": ("fraglab.apis", "make_spec"),
    "FragmentSpec": ("fraglab.layouts.spec", "FragmentSpec"),
    "Layout": ("fraglab.layouts.layout", "Layout"),
    "resolve_layout": ("fraglab.layouts.resolve", "resolve_layout"),
    "FraglabError": ("fraglab.errors", "FraglabError"),
    "InputError": ("fraglab.errors", "InputError"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    if name in ("gemm", "check"):  # callable packages: fraglab.gemm(...), fraglab.check(...)
        return importlib.import_module(f"fraglab.{name}")
    raise AttributeError(f"module 'fraglab' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY, "gemm", "check"])


__all__ = ["__version__", "gemm", "check", *_LAZY]
