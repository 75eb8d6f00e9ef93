"""The export commands: export (CuTe, Triton, C++ header, TikZ), where, what, html, diff.

They take the same selection options as `fraglab layout`, parse them, and call fraglab.export; bad
input raises InputError, which the CLI's one handler prints as one line with exit 2.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import FraglabError, InputError
from .common import SourceChoice


class ExportTo(str, Enum):
    cute = "cute"
    triton = "triton"
    header = "header"
    tikz = "tikz"


class ColourBy(str, Enum):
    lane = "lane"
    slot = "slot"
    register = "register"
    warp = "warp"


# Formats each --to writes; the first is the default.
EXPORT_FORMATS = {"cute": ("text", "json"), "triton": ("text", "json", "python"), "header": ("cpp",), "tikz": ("tex",)}
DEFAULT_SUFFIX = {"cute": ".txt", "triton": ".txt", "header": ".cuh", "tikz": ".tex"}
# The file format (fraglab.files.FORMAT_SUFFIXES) of each --format; header and tikz write their own kind.
FILE_FORMAT = {"text": "text", "json": "json", "python": "python"}

Api = Annotated[str, typer.Option(help="Instruction family, as in `fraglab list` (wmma, mma, ldmatrix, wgmma, ...)")]
Frag = Annotated[Optional[str], typer.Option(help="Operand, e.g. matrix_a | matrix_b | accumulator")]
Shape = Annotated[Optional[str], typer.Option(help="Shape, e.g. m16n16k16; tcgen05: 32x32b, 16x64b, ... (default: the family's first)")]
Dtype = Annotated[Optional[str], typer.Option(help="Element type (default: the family's default for the operand)")]
MemLayout = Annotated[Optional[str], typer.Option("--layout", help="row | col (for the accumulator: how it is stored)")]
Num = Annotated[Optional[int], typer.Option(help="ldmatrix/stmatrix: number of 8x8 matrices (1, 2, 4); tcgen05: the .num repetitions (1, 2, 4)")]
Trans = Annotated[Optional[bool], typer.Option("--trans/--no-trans", help="ldmatrix/stmatrix: .trans")]
Swizzle = Annotated[Optional[str], typer.Option(help="wgmma shared-memory operands: none | 32B | 64B | 128B")]
Major = Annotated[Optional[str], typer.Option(help="wgmma shared-memory operands: k | mn")]
Method = Annotated[Optional[str], typer.Option(help="How it was measured (default: load, else the family's first)")]
Source = Annotated[SourceChoice, typer.Option(help="auto: the GPU if usable, else the bundled atlas, else the PTX model")]
AtlasFile = Annotated[Optional[Path], typer.Option("--atlas", help="Answer from this atlas file instead")]
# str, not Path: Path("dir/") drops the trailing "/" that asks for the default name inside a new folder
Out = Annotated[Optional[str], typer.Option(help="Write here ('-' or none: stdout; a folder or a path ending in '/': the default name in it)")]


def _layout(api, frag, shape, dtype, layout, num, trans, source, atlas, swizzle=None, major=None, method=None):
    from ..export.select import select_layout
    from ..layouts.resolve import for_output

    # what is written carries a one-line source, never a note, with the atlas's strings cleaned
    return for_output(select_layout(api=api, frag=frag, shape=shape, dtype=dtype, layout=layout, num=num, trans=trans,
                         swizzle=swizzle, major=major, source=source.value, atlas=atlas, method=method))


def _write(text: str | bytes, out: Optional[str], default_name: str, fmt: str | None = None) -> None:
    from ..files import report_written, write_output

    report_written(write_output(out, text, default_name=default_name, fmt=fmt))


def _fit(text: str, fmt: str) -> str:
    """A table answer wrapped at spaces to the output width (80 columns when piped); JSON stays one line."""
    if fmt == "json":
        return text
    import textwrap

    from ..show.terminal import output_width

    width = output_width()
    return "\n".join(line if len(line) <= width else
                     "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                                              break_on_hyphens=False))
                     for line in text.split("\n"))


def _check_format(choices: tuple[str, ...], fmt: str, what: str) -> None:
    if fmt not in choices:
        raise InputError(f"invalid --format {fmt!r} for {what}: valid choices are {', '.join(choices)}",
                         argument="format")


def export_command(
    to: Annotated[ExportTo, typer.Option("--to", help="cute: shape:stride; triton: linear layout; header: C++; tikz: LaTeX")],
    api: Api = "wmma", frag: Frag = None, shape: Shape = None, dtype: Dtype = None, layout: MemLayout = None,
    num: Num = None, trans: Trans = None, swizzle: Swizzle = None, major: Major = None,
    source: Source = SourceChoice.auto, atlas: AtlasFile = None, method: Method = None,
    format: Annotated[Optional[str], typer.Option("--format", help="cute: text|json; triton: text|json|python")] = None,
    name: Annotated[Optional[str], typer.Option(help="header: the struct's name; cute: the type alias")] = None,
    color_by: Annotated[ColourBy, typer.Option(help="tikz: colour cells by lane, slot, register or warp")] = ColourBy.lane,
    out: Out = None,
):
    """Write a layout as code: a CuTe layout, a Triton linear layout, a C++ header, or a TikZ picture."""
    from ..export import cute, header, linear, tikz

    from ..files import check_suffix

    kind = to.value
    fmt = format or EXPORT_FORMATS[kind][0]
    _check_format(EXPORT_FORMATS[kind], fmt, f"--to {kind}")
    file_format = FILE_FORMAT.get(fmt, kind)
    check_suffix(out, file_format)
    if name is not None and kind not in ("header", "cute"):
        raise InputError(f"--name applies to --to header or cute, not {kind}", argument="name")
    if name is not None:
        header.check_name(name)
    chosen = _layout(api, frag, shape, dtype, layout, num, trans, source, atlas, swizzle, major, method)
    if kind == "cute":
        text = cute.render(chosen, fmt, name or "FragLayout")
    elif kind == "triton":
        text = linear.render(chosen, fmt)
    elif kind == "header":
        command = "fraglab export --to header " + " ".join(
            f"--{k} {v}" for k, v in (("api", api), ("frag", frag), ("shape", shape), ("dtype", dtype),
                                      ("layout", layout), ("num", num), ("swizzle", swizzle), ("major", major))
            if v is not None)
        text = header.render(chosen, name, command=command)
    else:
        text = tikz.render(chosen, color_by.value)
    suffix = ".json" if fmt == "json" else ".py" if fmt == "python" else DEFAULT_SUFFIX[kind]
    _write(text if text.endswith("\n") else text + "\n", out, chosen.spec.key + suffix, file_format)


def where_command(
    row: Annotated[int, typer.Option(help="Row of the element")],
    col: Annotated[int, typer.Option(help="Column of the element")],
    api: Api = "wmma", frag: Frag = None, shape: Shape = None, dtype: Dtype = None, layout: MemLayout = None,
    num: Num = None, trans: Trans = None, swizzle: Swizzle = None, major: Major = None,
    source: Source = SourceChoice.auto, atlas: AtlasFile = None, method: Method = None,
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
):
    """Every holder of element (row, col): thread, warp, lane, slot, register and bits."""
    from ..export import query

    _check_format(("table", "json"), format, "where")
    chosen = _layout(api, frag, shape, dtype, layout, num, trans, source, atlas, swizzle, major, method)
    typer.echo(_fit(query.where_text(chosen, row, col, format).rstrip("\n"), format))


def what_command(
    thread: Annotated[int, typer.Option("--thread", "--lane", help="Thread: its index in the instruction's thread group, 0..31 (0..127 for wgmma's warpgroup); --lane is the older name")],
    slot: Annotated[int, typer.Option(help="Slot (fragment element index) of that thread")],
    api: Api = "wmma", frag: Frag = None, shape: Shape = None, dtype: Dtype = None, layout: MemLayout = None,
    num: Num = None, trans: Trans = None, swizzle: Swizzle = None, major: Major = None,
    source: Source = SourceChoice.auto, atlas: AtlasFile = None, method: Method = None,
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
):
    """The element a thread's slot holds, with its register and bits."""
    from ..export import query

    _check_format(("table", "json"), format, "what")
    chosen = _layout(api, frag, shape, dtype, layout, num, trans, source, atlas, swizzle, major, method)
    typer.echo(_fit(query.what_text(chosen, thread, slot, format).rstrip("\n"), format))


def html_command(
    out: Annotated[str, typer.Option(help="The page to write (one file, no side files; a folder: fraglab.html in it)")] = "fraglab.html",
    atlas: AtlasFile = None,
):
    """One self-contained interactive page with every layout of the atlas (and the PTX models of the rest)."""
    from ..export.html import build_page
    from ..export.select import page_layouts
    from ..files import check_suffix

    check_suffix(out, "html")
    _write(build_page(page_layouts(atlas)), out, "fraglab.html")


def diff_command(
    api: Api = "wmma", frag: Frag = None, shape: Shape = None, dtype: Dtype = None, layout: MemLayout = None,
    num: Num = None, trans: Trans = None, swizzle: Swizzle = None, major: Major = None,
    source: Source = SourceChoice.auto, atlas: AtlasFile = None, method: Method = None,
    with_key: Annotated[Optional[str], typer.Option("--with", help="B's fragment key, e.g. mma.accumulator.m16n8k16.f32.row (default: A's)")] = None,
    with_source: Annotated[Optional[SourceChoice], typer.Option(help="B's source (default: A's)")] = None,
    with_atlas: Annotated[Optional[Path], typer.Option(help="B from this atlas file (H100 against H200)")] = None,
    format: Annotated[str, typer.Option("--format", help="table | json | png | svg | pdf")] = "table",
    out: Out = None,
):
    """Compare two layouts slot by slot: a table (or JSON) of differing slots, or a figure; exit 1 if any differs."""
    from ..export import diff
    from ..layouts.spec import FragmentSpec

    from ..files import check_suffix

    _check_format(("table", "json", "png", "svg", "pdf"), format, "diff")
    check_suffix(out, format)
    a = _layout(api, frag, shape, dtype, layout, num, trans, source, atlas, swizzle, major, method)
    try:
        spec_b = FragmentSpec.from_key(with_key) if with_key else a.spec
    except InputError as exc:  # the key's own message, said of the option it came from
        raise InputError(f"--with: {exc}", argument="with") from None
    try:
        b = _layout(spec_b.api, spec_b.frag, spec_b.shape, spec_b.dtype, spec_b.layout, spec_b.num, spec_b.trans,
                    with_source or source, with_atlas, spec_b.swizzle, spec_b.major, method if not with_key else None)
    except FraglabError as exc:  # B's atlas is --with-atlas (the CLI's handler names it in the message)
        if exc.argument == "atlas" and with_atlas is not None:
            exc.argument = "with_atlas"
        raise
    default_name = f"diff.{a.spec.key}.{b.spec.key}"
    if format in ("table", "json"):
        _write(diff.render_table(a, b, format), out, default_name + (".json" if format == "json" else ".txt"))
    else:
        import io

        buffer = io.BytesIO()
        diff.figure(a, b).savefig(buffer, format=format, dpi=150)
        target = out if out is not None else default_name + "." + format
        _write(buffer.getvalue(), target, default_name + "." + format)
    if diff.differing_slots(a, b):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
    app.command("where")(where_command)
    app.command("what")(what_command)
    app.command("html")(html_command)
    app.command("diff")(diff_command)
