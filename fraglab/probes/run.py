"""Running probes on the GPU: one fragment (`run_probes`) or a whole catalogue (`capture_specs`, `capture_atlas`).

Generic over families: a family passes its kernel naming and build; the plans (fraglab.probes.plans) decode.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Callable

import numpy as np

from .._version import __version__
from ..errors import CompileError, FraglabError, ProbeError, ProbeUnsupported
from ..layouts.layout import METHODS, Layout, Source
from ..layouts.spec import FragmentSpec
from ..runtime.build import KernelBuild
from .codes import POISON
from .plans import PLANS

if TYPE_CHECKING:
    from ..layouts.atlas import Atlas

KernelName = Callable[[str, FragmentSpec], str]  # (method or "info", spec) -> C++ name expression


def gpu_source() -> Source:
    from ..runtime import gpu

    info = gpu.device_info()
    info["fraglab_version"] = __version__
    info["date"] = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Source("gpu", info)


def run_probes(spec: FragmentSpec, methods: tuple[str, ...] = METHODS, *, build: KernelBuild,
               kernel_name: KernelName, source: Source | None = None) -> dict[str, Layout]:
    """Probe one fragment on the present GPU with each method; one launch per method, spec.threads per block."""
    from ..runtime import gpu

    cp = gpu.cupy()
    sm = gpu.compute_capability()
    if spec.min_sm > sm:
        raise ProbeUnsupported(f"{spec.describe()} needs sm_{spec.min_sm} or newer; this GPU is sm_{sm}")
    source = source or gpu_source()
    threads = spec.threads

    info = cp.full(2, POISON, dtype=cp.int32)
    gpu.function(build, kernel_name("info", spec))((1,), (1,), (info,))
    storage, slots = (int(v) for v in info.get())

    results: dict[str, Layout] = {}
    for method in methods:
        plan = PLANS[method](spec, storage, slots)
        out = cp.full(plan.output_size(), POISON, dtype=cp.int32)
        kernel = gpu.function(build, kernel_name(method, spec))
        if method == "load":
            codes = cp.asarray(plan.inputs())
            kernel((plan.passes,), (threads,), (codes, out, info))
        elif method == "mma":
            partners, selections = plan.partners()
            kernel((plan.passes * selections,), (threads,),
                   (cp.asarray(plan.slot_codes()), cp.asarray(partners.reshape(-1)), out, info,
                    np.int32(selections), np.int32(plan.base)))
        else:
            partners, selections = plan.partners()
            kernel((plan.blocks(),), (threads,), (cp.asarray(partners.reshape(-1)), out, info, np.int32(selections)))
        cp.cuda.runtime.deviceSynchronize()
        row, col, reads = plan.decode(out.get())
        results[method] = Layout(spec, method, source, row, col, reads)
    return results


def capture_specs(specs: list[FragmentSpec], *, build_for: Callable[..., KernelBuild], kernel_name: KernelName,
                  methods: tuple[str, ...] = METHODS, progress=None,
                  source: Source | None = None) -> tuple[dict, dict, float]:
    """Probe many fragments with every method, compiling them in one NVRTC run (fragment by fragment if
    that fails, so one refused type does not sink the rest). Returns (entries, refused, compile seconds)."""
    import time

    from ..runtime import gpu

    report = progress or (lambda *args: None)
    source = source or gpu_source()
    started = time.perf_counter()
    refused: dict[str, str] = {}
    report("compiling probes", 0, len(specs))
    build = build_for(specs, methods)
    try:
        gpu.module(build)
        builds = {s.key: build for s in specs}
    except CompileError:
        builds = {}
        for spec in specs:
            single = build_for([spec], methods)
            try:
                gpu.module(single)
                builds[spec.key] = single
            except CompileError as exc:
                refused[spec.key] = f"NVRTC refused it: {exc.log.strip().splitlines()[0] if exc.log else exc}"
    compile_seconds = time.perf_counter() - started
    entries: dict[str, dict[str, Layout]] = {}
    for done, spec in enumerate(s for s in specs if s.key in builds):
        report(spec.key, done, len(specs))
        try:
            entries[spec.key] = run_probes(spec, methods, build=builds[spec.key], kernel_name=kernel_name,
                                           source=source)
        except ProbeError as exc:
            refused[spec.key] = f"probe output did not decode: {exc}"
    report("done", len(specs), len(specs))
    return entries, refused, compile_seconds


def capture_atlas(progress=None, apis: tuple[str, ...] | None = None) -> "Atlas":
    """Probe every fragment of every family (or of `apis`) that the present GPU offers, with every method.

    `progress(description, done, total)` is called as it goes. Fragments the GPU cannot run are
    recorded as refused, with the reason, not left out silently.
    """
    import time

    from ..layouts.atlas import Atlas
    from ..layouts.spec import FAMILIES  # registered by fraglab.apis, the wing above
    from ..runtime import gpu

    sm = gpu.compute_capability()
    source = gpu_source()
    started = time.perf_counter()
    compile_seconds = 0.0
    entries: dict[str, dict[str, Layout]] = {}
    refused: dict[str, str] = {}
    for api, family in FAMILIES.items():
        if apis is not None and api not in apis:
            continue
        catalogue = family.specs()
        supported = [s for s in catalogue if s.min_sm <= sm]
        refused.update({s.key: f"needs sm_{s.min_sm} or newer; this GPU is sm_{sm}"
                        for s in catalogue if s.min_sm > sm})
        if family.capture is not None:
            try:
                got, why, seconds = family.capture(supported, progress, source)
            except FraglabError as exc:  # one family's failure is recorded, never sinks the others
                refused.update({s.key: f"{api} capture failed: {str(exc).splitlines()[0]}" for s in supported})
                continue
            entries.update(got)
            refused.update(why)
            compile_seconds += seconds
            continue
        for done, spec in enumerate(supported):
            if progress:
                progress(spec.key, done, len(supported))
            try:
                entries[spec.key] = family.measure(spec, family.methods)
            except FraglabError as exc:
                refused[spec.key] = f"{exc.__class__.__name__}: {str(exc).splitlines()[0]}"
    prov = dict(source.provenance)
    prov["captured"] = prov.pop("date")
    prov["compile_seconds"] = round(compile_seconds, 2)
    prov["capture_seconds"] = round(time.perf_counter() - started, 2)
    return Atlas(prov, entries, refused)
