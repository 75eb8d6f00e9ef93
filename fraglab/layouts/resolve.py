"""Choosing where a layout comes from: the GPU, the bundled atlas, or the family's PTX model, with the reason.

`auto` tries them in that order and notes on the layout's source why it fell back. The family (fraglab.apis)
supplies the measurement and the model; this module only chooses.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import AtlasError, CompileError, FraglabError, GpuUnavailable, InputError, ProbeError
from . import atlas as atlas_mod
from .layout import Layout, with_reads
from .spec import FragmentSpec

SOURCES = ("auto", "gpu", "atlas", "model")


def check_source(source: str) -> None:
    if source not in SOURCES:
        raise InputError(f"invalid source {source!r}: valid choices are {', '.join(SOURCES)}", argument="source")


def check_method(spec: FragmentSpec, method: str | None) -> str:
    """The method to answer with: the family's first when none is asked; InputError for one the family lacks."""
    methods = spec.family.methods
    if method is None:
        return methods[0]
    if method not in methods:
        raise InputError(f"invalid method {method!r} for {spec.api}: valid choices are {', '.join(methods)}",
                         argument="method")
    return method


def from_gpu(spec: FragmentSpec, method: str) -> Layout:
    family = spec.family
    method = check_method(spec, method)
    methods = (method, "onehot") if method == "load" and "onehot" in family.methods else (method,)
    results = family.measure(spec, methods)
    return with_reads(results[method], results.get("onehot")) if method == "load" else results[method]


def from_atlas(spec: FragmentSpec, method: str, arch: int | None = None, path: str | None = None) -> Layout:
    """From the atlas file `path` (checked on reading), else from the bundled atlas closest to `arch`."""
    found = atlas_mod.load(path) if path is not None else atlas_mod.load_bundled(arch, spec.api)
    return found.layout(spec, method)


def from_model(spec: FragmentSpec, method: str) -> Layout:
    found = spec.family.model(spec, method)
    if found is None:
        raise FraglabError(f"the PTX model does not cover {spec.describe()}", exit_code=1)
    if method != "load":
        found = noted(found, "the model predicts one map; it is shown for every method")
    return found


def noted(layout: Layout, note: str) -> Layout:
    """The layout with a note on a copy of its source (atlas layouts are cached and shared)."""
    return Layout(layout.spec, layout.method, replace(layout.source, note=note), layout.row, layout.col,
                  layout.mma_reads)


def resolve_layout(spec: FragmentSpec, source: str = "auto", method: str | None = None,
                   atlas: str | None = None) -> Layout:
    """The layout from the requested source; `auto` tries GPU, then the atlas, then the model, and says why.

    `method` None means the family's first (load for WMMA, mma for mma.sync and wgmma). `atlas` names a
    captured atlas file to answer from (with source auto or atlas) instead of the GPU and the bundled one.
    A model-only family (tcgen05) answers `auto` from its model with a note; `gpu` and `atlas` refuse."""
    check_source(source)
    method = check_method(spec, method)
    if atlas is not None:
        if source not in ("auto", "atlas"):
            raise InputError(f"--atlas answers from a file: use it with --source atlas or auto, not {source}",
                             argument="atlas")
        return from_atlas(spec, method, path=atlas)
    if source == "gpu":
        return from_gpu(spec, method)  # a model-only family's measure refuses in one line
    model_only = spec.family.model_only
    if source == "atlas":
        if model_only:
            raise AtlasError(f"{spec.describe()} is model only (no probe measures it), so no atlas holds it: "
                             "use --source model")
        return from_atlas(spec, method)
    if source == "model":
        return from_model(spec, method)
    if model_only:  # nothing to measure and no atlas entry: straight to the model, and say so
        return noted(from_model(spec, method), f"{spec.api} is model only (no probe measures it); "
                                               "answered from the PTX model, unmeasured")
    reasons: list[str] = []
    arch = None
    from ..runtime import gpu  # light: CuPy itself is imported only inside gpu.cupy()

    usable, why = gpu.available()
    if usable:
        try:
            return from_gpu(spec, method)
        except (CompileError, GpuUnavailable, ProbeError) as exc:
            reasons.append(f"the GPU probe failed ({str(exc).splitlines()[0]})")
            arch = gpu.compute_capability()
    else:
        reasons.append(f"no usable GPU ({why})")
    try:
        found = from_atlas(spec, method, arch)
        return noted(found, "; ".join(reasons) + "; answered from the bundled atlas")
    except AtlasError as exc:
        reasons.append(str(exc))
    found = from_model(spec, method)
    return noted(found, "; ".join(reasons) + "; answered from the PTX model")


__all__ = ["SOURCES", "resolve_layout", "from_gpu", "from_atlas", "from_model", "noted", "check_source", "check_method"]
