"""`fraglab layout` (one fragment, or the three of one MMA) and `fraglab list` (the catalogue of every family)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import InputError
from .common import ColorBy, FormatChoice, SourceChoice, ViewChoice, console

FIGURE_FORMATS = ("png", "svg", "pdf")
TEXT_SUFFIX = {"table": "txt", "json": "json", "csv": "csv", "tikz": "tex"}


def _apis_help() -> str:
    from ..apis import FAMILIES

    return " | ".join(FAMILIES)


def layout_command(
    frag: Annotated[Optional[str], typer.Option(help="matrix_a | matrix_b | accumulator (not with --mma); other families: see `fraglab list`")] = None,
    shape: Annotated[Optional[str], typer.Option(help="MMA shape, e.g. m16n16k16, m32n8k16, m8n32k16, m16n16k8, m8n8k4; tcgen05: 32x32b, 16x64b, 16x128b, 16x256b, 16x32bx2 (default: the family's first)")] = None,
    dtype: Annotated[Optional[str], typer.Option(help="A/B: f16 bf16 tf32 f64 u8 s8 u4 s4 b1; accumulator: f16 f32 f64 s32 (default f16, f32 for the accumulator)")] = None,
    layout: Annotated[Optional[str], typer.Option(help="row | col: memory layout (for the accumulator: how it is stored)")] = None,
    api: Annotated[str, typer.Option(help="Instruction family, as in `fraglab list` (default wmma)")] = "wmma",
    num: Annotated[Optional[int], typer.Option(help="ldmatrix/stmatrix: number of 8x8 matrices (1, 2, 4); tcgen05: the .num repetitions (1, 2, 4)")] = None,
    trans: Annotated[Optional[bool], typer.Option("--trans/--no-trans", help="ldmatrix/stmatrix: .trans")] = None,
    swizzle: Annotated[Optional[str], typer.Option(help="wgmma shared-memory operands: none | 32B | 64B | 128B")] = None,
    major: Annotated[Optional[str], typer.Option(help="wgmma shared-memory operands: k | mn")] = None,
    source: Annotated[SourceChoice, typer.Option(help="auto: the GPU if usable, else the bundled atlas, else the PTX model")] = SourceChoice.auto,
    atlas: Annotated[Optional[Path], typer.Option(help="Answer from this captured atlas file (fraglab atlas capture) instead")] = None,
    method: Annotated[Optional[str], typer.Option(help="How it was measured: load (every holder), mma (identity MMA), onehot (which slots the MMA reads), store; `fraglab list` shows each family's (default: its first)")] = None,
    format: Annotated[Optional[FormatChoice], typer.Option("--format", help="table | json | csv | png | svg | pdf | tikz (default: from --out's suffix, else table)")] = None,
    out: Annotated[Optional[str], typer.Option(help="Write here instead of stdout ('-': stdout; a folder: the default name inside; figures: default file name in the current folder); the suffix must fit the format")] = None,
    lane: Annotated[Optional[int], typer.Option("--thread", "--lane", help="Highlight one thread of the instruction's group (0..threads-1; --lane: the older name)")] = None,
    view: Annotated[ViewChoice, typer.Option(help="grid: the matrix with each cell's holders; lanes: each lane's slots")] = ViewChoice.grid,
    mma: Annotated[bool, typer.Option("--mma", help="Figure of A, B and the accumulator of one MMA, as C = A x B")] = False,
    color_by: Annotated[ColorBy, typer.Option(help="Figures: colour cells by lane, slot or 32-bit register")] = ColorBy.lane,
    palette: Annotated[str, typer.Option(help="Figures: colour palette (see `fraglab figures --help`)")] = "tab20",
):
    """Show which lane and slot of a fragment holds which (row, col) element."""
    from ..files import check_suffix, format_from_suffix

    fmt = format.value if format is not None else (format_from_suffix(out, tuple(f.value for f in FormatChoice))
                                                   or "table")
    check_suffix(out, fmt)
    extras = {k: v for k, v in (("num", num), ("trans", trans), ("swizzle", swizzle), ("major", major))
              if v is not None}
    show_layout(api=api, frag=frag, shape=shape, dtype=dtype, layout=layout, extras=extras, source=source.value,
                method=method, atlas=atlas, fmt=fmt, out=out, lane=lane, view=view.value, mma=mma,
                color_by=color_by.value, palette=palette)


def specs_for(api, frag, shape, dtype, layout, extras, mma):
    """The fragment (or the A, B, C of one MMA) the options name; InputError for any bad combination."""
    from ..apis import get_family, make_spec

    family = get_family(api)
    if mma:
        if frag is not None:
            raise InputError("--mma draws A, B and the accumulator together; leave out --frag", argument="frag")
        if family.mma_specs is None:
            raise InputError(f"--mma is not offered for --api {api}", argument="mma")
        for name in extras:  # the option must mean something for this family before its triple is built
            if all(getattr(s, name) is None for s in family.specs()):
                raise InputError(f"--{name} does not apply to {api}", argument=name)
        return list(family.mma_specs(shape, dtype, layout, **extras))
    if frag is None and len(family.operands) > 1:  # one-operand families (ldmatrix) need no --frag
        raise InputError(f"--frag is required: valid choices are {', '.join(family.operands)}"
                         + (" (or --mma for all three)" if family.mma_specs is not None else ""), argument="frag")
    return [make_spec(frag, shape, dtype, layout, api=api, **extras)]


def show_layout(*, api="wmma", frag, shape, dtype, layout, extras=None, source, method, atlas=None, fmt, out, lane, view, mma,
                color_by, palette) -> None:
    from ..files import report_written, write_output
    from ..layouts.resolve import for_output, resolve_layout
    from ..layouts.spec import check_lane

    specs = specs_for(api, frag, shape, dtype, layout, extras or {}, mma)
    check_lane(lane, specs[0].threads)
    if mma and fmt == "csv":
        raise InputError("--mma writes a figure, tables or JSON: use --format png|svg|pdf|table|json", argument="format")
    from ..show.palette import check_style

    check_style(color_by, palette)  # a bad --palette is refused whatever the format, never quietly ignored
    layouts = [resolve_layout(s, source, method, atlas=None if atlas is None else str(atlas)) for s in specs]
    if fmt in FIGURE_FORMATS:
        _write_figure(layouts, fmt, out, lane, color_by, palette, mma)
        return
    if fmt != "table":  # files and data carry a one-line source, never a note, with file strings cleaned
        layouts = [for_output(lay) for lay in layouts]
    if fmt == "table":
        if out is None or str(out) == "-":
            con = console()
            for lay in layouts:
                con.print(_table_view(lay, view, lane, con.width))
            return
        text = _tables_text(layouts, view, lane)
    elif fmt == "tikz":
        if mma:
            raise InputError("--format tikz draws one fragment: leave out --mma", argument="format")
        from ..export.tikz import render as tikz_picture

        text = tikz_picture(layouts[0], color_by)
    elif fmt == "json":
        doc = layouts[0].to_dict() if not mma else {"matrix_a": layouts[0].to_dict(), "matrix_b": layouts[1].to_dict(),
                                                     "accumulator": layouts[2].to_dict()}
        text = json.dumps(doc, indent=1) + "\n"
    else:
        text = layouts[0].to_csv()
    if out is None:
        typer.echo(text, nl=not text.endswith("\n"))
        return
    report_written(write_output(out, text, default_name=_default_name(layouts, mma, TEXT_SUFFIX[fmt]), fmt=fmt))


def _default_name(layouts, mma: bool, suffix: str) -> str:
    from ..show.gallery import default_figure_name

    return default_figure_name(tuple(layouts) if mma else layouts[0], "svg", mma=mma)[:-3] + suffix


def _table_view(layout, view, lane, width):
    from ..show.tables import layout_view

    return layout_view(layout, view, lane, width)


def _tables_text(layouts, view, lane) -> str:
    """The table view as plain text for a file: 80 columns, no colour, UTF-8 (the writer's encoding)."""
    from rich.console import Console

    from ..show.terminal import DEFAULT_WIDTH

    con = Console(record=True, width=DEFAULT_WIDTH, file=io.StringIO(), highlight=False, color_system=None)
    for lay in layouts:
        con.print(_table_view(lay, view, lane, DEFAULT_WIDTH))
    return con.export_text()


def _write_figure(layouts, fmt: str, out: Path | None, lane, color_by, palette, mma: bool) -> None:
    from ..show import figure, gallery

    fig = (figure.plot_mma(*layouts, lane=lane, color_by=color_by, palette=palette) if mma
           else figure.plot_layout(layouts[0], lane=lane, color_by=color_by, palette=palette))
    name = gallery.default_figure_name(tuple(layouts) if mma else layouts[0], fmt, mma=mma)
    from ..files import report_written

    report_written(gallery.save_figure(fig, out if out is not None else Path(name), fmt, default_name=name))


def list_command(
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    api: Annotated[Optional[str], typer.Option(help="Only this instruction family (default: all)")] = None,
):
    """Print every valid fragment combination, family by family."""
    if format not in ("table", "json"):
        raise InputError(f"invalid --format {format!r}: valid choices are table, json", argument="format")
    list_catalogue(format, api)


def list_catalogue(fmt: str = "table", api: str | None = None) -> None:
    from ..apis import FAMILIES, get_family

    families = [get_family(api)] if api is not None else list(FAMILIES.values())
    if fmt == "json":
        from ..lookup import catalogue

        typer.echo(json.dumps(catalogue(api), indent=1))
        return
    from ..show.listings import catalogue_view

    console().print(catalogue_view(families))


def register(app: typer.Typer) -> None:
    app.command("layout")(layout_command)
    app.command("list")(list_command)
