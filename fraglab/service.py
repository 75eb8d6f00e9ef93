"""What the CLI commands do: pick a source for a layout, verify, capture, and write the results.

The CLI only parses options and calls these; tests call them too.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import atlas as atlas_mod
from .catalogue import WMMA_FAMILIES, FragmentSpec, check_lane, make_spec, wmma_catalogue
from .layout import Layout, with_reads
from .model import model_claims, model_layout


class UserFacingError(RuntimeError):
    """A failure to report in one message (exit 1), or bad input (exit 2)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def console(file=None, width: int | None = None) -> Console:
    return Console(file=file or sys.stdout, width=width, highlight=False, soft_wrap=False)


# ---- choosing a source ---------------------------------------------------------------------------

def _from_gpu(spec: FragmentSpec, method: str) -> Layout:
    from . import gpu, probes

    methods = (method, "onehot") if method == "load" else (method,)
    try:
        results = probes.run_probes(spec, methods)
    except gpu.CompileError as exc:
        raise UserFacingError(f"{exc}\n--- NVRTC log ---\n{exc.log.strip()}") from None
    except (gpu.GpuUnavailable, probes.ProbeError) as exc:
        raise UserFacingError(str(exc)) from None
    return with_reads(results[method], results.get("onehot")) if method == "load" else results[method]


def _from_atlas(spec: FragmentSpec, method: str, arch: int | None = None) -> Layout:
    try:
        return atlas_mod.load_bundled(arch).layout(spec, method)
    except atlas_mod.AtlasError as exc:
        raise UserFacingError(str(exc)) from None


def _from_model(spec: FragmentSpec, method: str) -> Layout:
    found = model_layout(spec, method)
    if found is None:
        raise UserFacingError(f"the PTX model does not cover {spec.describe()}")
    if method != "load":
        found = noted(found, "the model predicts one map; it is shown for every method")
    return found


def noted(layout: Layout, note: str) -> Layout:
    """The layout with a note on a copy of its source (atlas layouts are cached and shared)."""
    return Layout(layout.spec, layout.method, replace(layout.source, note=note), layout.row, layout.col,
                  layout.mma_reads)


def resolve_layout(spec: FragmentSpec, source: str = "auto", method: str = "load") -> Layout:
    """The layout from the requested source; `auto` tries GPU, then the atlas, then the model, and says why."""
    if source == "gpu":
        return _from_gpu(spec, method)
    if source == "atlas":
        return _from_atlas(spec, method)
    if source == "model":
        return _from_model(spec, method)
    reasons: list[str] = []
    arch = None
    from . import gpu  # light: CuPy itself is imported only inside gpu.cupy()

    usable, why = gpu.available()
    if usable:
        try:
            return _from_gpu(spec, method)
        except UserFacingError as exc:
            reasons.append(f"the GPU probe failed ({str(exc).splitlines()[0]})")
            arch = gpu.compute_capability()
    else:
        reasons.append(f"no usable GPU ({why})")
    try:
        found = _from_atlas(spec, method, arch)
        return noted(found, "; ".join(reasons) + "; answered from the bundled atlas")
    except UserFacingError as exc:
        reasons.append(str(exc))
    found = _from_model(spec, method)
    return noted(found, "; ".join(reasons) + "; answered from the PTX model")


def mma_specs(shape: str, dtype: str | None, layout: str) -> tuple[FragmentSpec, FragmentSpec, FragmentSpec]:
    """A, B and the accumulator of one WMMA MMA (the accumulator f32 where the family offers it)."""
    a = make_spec("matrix_a", shape, dtype or "f16", layout if layout in WMMA_FAMILIES[dtype or "f16"].a_layouts
                  else WMMA_FAMILIES[dtype or "f16"].a_layouts[0])
    family = WMMA_FAMILIES[a.dtype]
    b = make_spec("matrix_b", shape, a.dtype, layout if layout in family.b_layouts else family.b_layouts[0])
    acc = "f32" if "f32" in family.accumulators else family.accumulators[0]
    c = make_spec("accumulator", shape, acc, "row")
    return a, b, c


# ---- writing results -----------------------------------------------------------------------------

def emit(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        atlas_mod.write_atomic(Path(out), text)
        print(f"wrote {out}")


def _render_tables(layouts: list[Layout], view: str, lane: int | None, out: Path | None) -> None:
    from .render import layout_view

    import io

    if out is None:
        con = console()
        width = max(con.width, 80)
        for lay in layouts:
            con.print(layout_view(lay, view, lane, width))
        return
    con = Console(record=True, width=160, file=io.StringIO(), highlight=False)
    for lay in layouts:
        con.print(layout_view(lay, view, lane, 160))
    emit(con.export_text(), out)


def _write_figure(layouts: list[Layout], fmt: str, out: Path | None, lane, color_by, palette, mma: bool) -> None:
    from . import figures

    try:
        fig = (figures.plot_mma(*layouts, lane=lane, color_by=color_by, palette=palette) if mma
               else figures.plot_layout(layouts[0], lane=lane, color_by=color_by, palette=palette))
        named = tuple(layouts) if mma else layouts[0]
        path = Path(out) if out is not None else Path(figures.default_figure_name(named, fmt, mma=mma))
        written = figures.save_figure(fig, path, fmt)
    except figures.FigureError as exc:
        raise UserFacingError(str(exc), 2) from None
    print(f"wrote {written}")


def layout_cli(*, frag, shape, dtype, layout, source, method, fmt, out, lane, view, mma, color_by, palette) -> None:
    check_lane(lane)
    if mma:
        if frag is not None:
            raise UserFacingError("--mma draws A, B and the accumulator together; leave out --frag", 2)
        if fmt == "csv":
            raise UserFacingError("--mma writes a figure, tables or JSON: use --format png|svg|pdf|table|json", 2)
        specs = list(mma_specs(shape, dtype, layout))
    else:
        if frag is None:
            raise UserFacingError("--frag is required: valid choices are matrix_a, matrix_b, accumulator "
                                  "(or --mma for all three)", 2)
        specs = [make_spec(frag, shape, dtype, layout)]
    layouts = [resolve_layout(s, source, method) for s in specs]
    if fmt == "table":
        _render_tables(layouts, view, lane, out)
    elif fmt == "json":
        doc = layouts[0].to_dict() if not mma else {"matrix_a": layouts[0].to_dict(), "matrix_b": layouts[1].to_dict(),
                                                     "accumulator": layouts[2].to_dict()}
        emit(json.dumps(doc, indent=1), out)
    elif fmt == "csv":
        emit(layouts[0].to_csv(), out)
    else:
        _write_figure(layouts, fmt, out, lane, color_by, palette, mma)


def list_cli(fmt: str = "table") -> None:
    from .model import header_slots

    specs = wmma_catalogue()
    if fmt == "json":
        print(json.dumps([{"api": s.api, "frag": s.frag, "shape": s.shape, "dtype": s.dtype, "layout": s.layout,
                           "rows": s.rows, "cols": s.cols, "slots": header_slots(s), "min_sm": s.min_sm,
                           "experimental": s.family.experimental} for s in specs], indent=1))
        return
    table = Table(title=f"{len(specs)} WMMA fragments (fraglab layout --frag F --shape S --dtype D --layout L)",
                  title_justify="left")
    for name in ("frag", "shape", "dtype", "layouts", "matrix", "slots/lane", "needs", "note"):
        table.add_column(name)
    grouped: dict[tuple, list[str]] = {}
    for s in specs:
        grouped.setdefault((s.frag, s.shape, s.dtype), []).append(s.layout)
    for (frag, shape, dtype), layouts in grouped.items():
        s = FragmentSpec("wmma", frag, shape, dtype, layouts[0])
        note = "experimental::precision" if s.family.experimental else ""
        if frag == "accumulator":
            note = "layout = how it is stored"
        table.add_row(frag, shape, dtype, ",".join(layouts), f"{s.rows}x{s.cols}", str(header_slots(s)),
                      f"sm_{s.min_sm}", note)
    console().print(table)


# ---- atlas commands ------------------------------------------------------------------------------

def _load_atlas(path: Path) -> "atlas_mod.Atlas":
    try:
        return atlas_mod.load(path)
    except atlas_mod.AtlasError as exc:
        raise UserFacingError(str(exc), 2) from None


def atlas_capture_cli(out: Path) -> None:
    from rich.progress import Progress

    from . import gpu, probes

    usable, why = gpu.available()
    if not usable:
        raise UserFacingError(f"atlas capture needs a GPU: {why}")
    with Progress(transient=True) as progress:
        task = progress.add_task("probing", total=None)

        def report(what, done, total):
            progress.update(task, description=what, completed=done, total=total)

        try:
            captured = probes.capture_atlas(report)
        except gpu.CompileError as exc:
            raise UserFacingError(f"{exc}\n--- NVRTC log ---\n{exc.log.strip()}") from None
    captured.save(out)
    p = captured.provenance
    print(f"wrote {out}: {len(captured.entries)} fragments on {captured.describe()}, "
          f"{len(captured.refused)} refused; {p['capture_seconds']} s ({p['compile_seconds']} s compiling)")
    for key, why in captured.refused.items():
        print(f"  refused {key}: {why}")


def atlas_diff_cli(a: Path, b: Path) -> bool:
    first, second = _load_atlas(a), _load_atlas(b)
    lines = atlas_mod.diff(first, second)
    print(f"A: {a} ({first.describe()})\nB: {b} ({second.describe()})")
    for line in lines:
        print(line)
    print(f"{len(lines)} difference(s)" if lines else "no differences")
    return bool(lines)


def atlas_show_cli(path: Path | None) -> None:
    try:
        found = atlas_mod.load_bundled() if path is None else atlas_mod.load(path)
    except atlas_mod.AtlasError as exc:
        raise UserFacingError(str(exc), 2) from None
    con = console()
    con.print(f"[bold]atlas[/bold] {found.path}: {found.describe()}")
    for key, value in found.provenance.items():
        con.print(f"  {key}: {value}")
    table = Table(title_justify="left")
    for name in ("fragment", "slots/lane", "duplicates", "ignored by MMA", "methods"):
        table.add_column(name)
    for spec in found.specs():
        lay = found.layout(spec, "load")
        table.add_row(spec.key, str(lay.num_elements), str(lay.duplicate_slots),
                      str(lay.ignored_slots) if lay.reads_measured else "?", ",".join(found.entries[spec.key]))
    con.print(table)
    for key, why in found.refused.items():
        con.print(f"refused {key}: {why}")


# ---- verification --------------------------------------------------------------------------------

@dataclass
class VerifyRow:
    spec: FragmentSpec
    methods: str = "agree"   # agree | differ
    model: str = "agrees"    # agrees | differs | not modelled | not claimed
    atlas: str = "agrees"    # agrees | differs | not in atlas | no atlas
    duplicates: int = 0
    ignored: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _slots_equal(a: Layout, b: Layout, where) -> bool:
    return bool(((a.row == b.row) & (a.col == b.col) | ~where).all())


def check_combination(spec: FragmentSpec, measured: dict[str, Layout], arch: int,
                      atlas: "atlas_mod.Atlas | None") -> VerifyRow:
    """Cross-check the three methods, the model and the atlas for one fragment."""
    load, mma, onehot = measured["load"], measured["mma"], measured["onehot"]
    row = VerifyRow(spec, duplicates=load.duplicate_slots, ignored=onehot.ignored_slots)
    read = onehot.mma_reads == 1
    if not (mma.same_map(onehot) and (mma.mma_reads == onehot.mma_reads).all()):
        row.problems.append("mma and onehot disagree on what the MMA reads")
    if not _slots_equal(load, onehot, read):
        row.problems.append("load and onehot disagree on a slot the MMA reads")
    if load.missing_elements:
        row.problems.append(f"{load.missing_elements} elements have no holder after load")
    if (onehot.holder_count() != 1).any():
        row.problems.append("the MMA does not read every element exactly once")
    if row.problems:
        row.methods = "differ"
    model = model_layout(spec)
    if model is None:
        row.model = "not modelled"
    elif not model_claims(arch):
        row.model = "not claimed"
    elif model.row.shape == load.row.shape:
        known = model.mma_reads != -1
        reads_ok = bool(((model.mma_reads == onehot.mma_reads) | ~known).all())
        if not (model.same_map(load) and reads_ok):
            row.model = "differs"
            row.problems.append("the PTX model differs from the measurement")
    else:
        row.model = "differs"
        row.problems.append(f"the model has {model.num_elements} slots per lane, the GPU {load.num_elements}")
    if atlas is None:
        row.atlas = "no atlas"
    elif atlas.arch != arch:
        row.atlas = f"atlas is sm_{atlas.arch}"
    elif spec.key not in atlas.entries:
        row.atlas = "not in atlas"
    else:
        for method, lay in measured.items():
            recorded = atlas.raw_layout(spec, method)
            if recorded is None or not (lay.same_map(recorded) and (lay.mma_reads == recorded.mma_reads).all()):
                row.atlas = "differs"
                row.problems.append(f"{method} differs from the bundled atlas")
                break
    return row


def verify_table(rows: list[VerifyRow], refused: dict[str, str]) -> Table:
    table = Table(title="fraglab verify: methods x model x atlas", title_justify="left")
    for name in ("fragment", "methods", "model", "atlas", "dup", "ignored", "result"):
        table.add_column(name)
    for r in rows:
        style = "green" if r.ok else "bold red"
        table.add_row(r.spec.key, r.methods, r.model, r.atlas, str(r.duplicates), str(r.ignored),
                      f"[{style}]{'ok' if r.ok else '; '.join(r.problems)}[/{style}]")
    for key, why in refused.items():
        table.add_row(key, "-", "-", "-", "-", "-", f"[yellow]refused: {why}[/yellow]")
    return table


def verify_cli() -> bool:
    from rich.progress import Progress

    from . import gpu, probes

    usable, why = gpu.available()
    if not usable:
        raise UserFacingError(f"verify needs a GPU: {why}")
    arch = gpu.compute_capability()
    try:
        bundled = atlas_mod.load_bundled(arch)
    except atlas_mod.AtlasError:
        bundled = None
    with Progress(transient=True) as progress:
        task = progress.add_task("probing", total=None)
        captured = probes.capture_atlas(lambda what, done, total: progress.update(
            task, description=what, completed=done, total=total))
    rows = [check_combination(spec, {m: captured.raw_layout(spec, m) for m in probes.METHODS}, arch, bundled)
            for spec in captured.specs()]
    con = console()
    con.print(verify_table(rows, captured.refused))
    bad = [r for r in rows if not r.ok]
    con.print(f"{len(rows) - len(bad)} of {len(rows)} fragments agree on {captured.describe()}; "
              f"{len(captured.refused)} refused")
    return not bad
