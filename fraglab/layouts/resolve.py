"""Choosing where a layout comes from: the GPU, the bundled atlas, or the family's PTX model, with the reason.

`auto` tries them in that order and notes on the layout's source, in a few words, that it fell back; the
full reason (why no GPU is usable) goes to the "fraglab" logger once per process (`fraglab --verbose` shows
it). The family (fraglab.apis) supplies the measurement and the model; this module only chooses.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..errors import AtlasError, CompileError, FraglabError, GpuUnavailable, InputError, ProbeError, check_choice
from ..files import clean_text
from . import atlas as atlas_mod
from .layout import Layout, with_reads
from .spec import FragmentSpec

SOURCES = ("auto", "gpu", "atlas", "model")
NO_GPU = "no GPU here"
log = logging.getLogger("fraglab")
_reported: set[str] = set()


def _report_once(reason: str) -> None:
    if reason not in _reported:
        _reported.add(reason)
        log.info("%s", reason)


def source_line(source, with_note: bool = True) -> str:
    """Where a layout came from in one short line: `atlas (H200, sm_90; no GPU here)`, `gpu (H100 80GB HBM3,
    sm_90)`, `model (PTX ISA ...)`. File strings are cleaned (no control characters, long ones cut); generated
    code passes with_note=False (a source, never a note)."""
    p = getattr(source, "provenance", None) or {}
    note = getattr(source, "note", "") if with_note else ""
    if source.kind == "model":
        inside = clean_text(p.get("model", "PTX formulas"), 200)
    else:
        name = str(p.get("gpu_name", "unknown GPU"))
        name = name[len("NVIDIA "):] if name.startswith("NVIDIA ") else name
        inside = f"{clean_text(name, 40)}, sm_{clean_text(p.get('compute_capability', '?'), 8)}"
    return f"{source.kind} ({inside}" + (f"; {clean_text(note, 200)})" if note else ")")


def for_output(layout: Layout) -> Layout:
    """The layout as generated files carry it (headers, CuTe/Triton text, JSON, CSV): its source without the
    note, and every provenance string cleaned (an atlas's gpu_name cannot end a comment line or carry ESC)."""
    def cleaned(value):
        if isinstance(value, str):
            return clean_text(value, 200)
        if isinstance(value, list):
            return [cleaned(v) for v in value]
        if isinstance(value, dict):
            return {clean_text(k, 200): cleaned(v) for k, v in value.items()}
        return value

    source = replace(layout.source, note="", provenance=cleaned(dict(layout.source.provenance)))
    return Layout(layout.spec, layout.method, source, layout.row, layout.col, layout.mma_reads)


def check_source(source: str) -> None:
    check_choice(source, SOURCES, "source")


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
        found = noted(found, "one map for every method")
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
        return noted(from_model(spec, method), f"{spec.api} is model only")
    arch = None
    from ..runtime import gpu  # light: CuPy itself is imported only inside gpu.cupy()

    usable, why = gpu.available()
    if usable:
        try:
            return from_gpu(spec, method)
        except (CompileError, GpuUnavailable, ProbeError) as exc:
            short = "the GPU probe failed"
            _report_once(f"{short} for {spec.describe()}: {str(exc).splitlines()[0]}")
            arch = gpu.compute_capability()
    else:
        short = NO_GPU
        _report_once(f"no usable GPU: {why}")
    try:
        return noted(from_atlas(spec, method, arch), short)
    except AtlasError as exc:
        _report_once(f"no atlas entry: {exc}")
    return noted(from_model(spec, method), f"{short}, not in the atlas")


__all__ = ["SOURCES", "NO_GPU", "source_line", "for_output", "resolve_layout", "from_gpu", "from_atlas", "from_model", "noted", "check_source", "check_method"]
