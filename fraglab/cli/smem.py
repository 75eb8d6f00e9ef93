"""`fraglab smem`: which bank each thread's shared-memory access hits, the wavefronts each instruction takes
(predicted and measured), and `--search` for the swizzle or padding that removes the conflicts."""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Optional

import typer

from .common import SourceChoice


class SmemFormat(str, Enum):
    table = "table"
    json = "json"
    png = "png"
    svg = "svg"


FIGURES = ("png", "svg")


def smem_command(
    layout: Annotated[Optional[str], typer.Option(help="CuTe spelling, e.g. 'Sw<3,3,3> o (8,64):(64,1)' or "
                                                  "'(64,64):(72,1)'; or wgmma.<interleave|32B|64B|128B>.<k|mn> with --tile")] = None,
    dtype: Annotated[str, typer.Option(help="Element type of the tile: f16 bf16 f32 tf32 s32 f64 s8 u8 e4m3 e5m2")] = "f16",
    access: Annotated[str, typer.Option(help="ld.b16|b32|b64|b128, st.b16|b32|b64|b128, ldmatrix.x1|x2|x4[.trans], "
                                        "stmatrix.x1|x2|x4[.trans], cp.async.4|8|16, wgmma")] = "ldmatrix.x4",
    fragment: Annotated[Optional[str], typer.Option(help="ld/st/cp.async: each thread's elements from this fragment, "
                                                    "<api>.<shape>.<frag>[.<dtype>], e.g. mma.m16n8k16.accumulator.f32 "
                                                    "(default: a row-major sweep of the tile)")] = None,
    tile: Annotated[Optional[str], typer.Option(help="ROWSxCOLS: the tile of --search, or of a wgmma.* layout")] = None,
    search: Annotated[bool, typer.Option("--search", help="Rank every swizzle and padding that fits a row-major "
                                         "--tile for --access")] = False,
    instruction: Annotated[int, typer.Option(help="Which instruction the bank map shows (0 = first)")] = 0,
    source: Annotated[SourceChoice, typer.Option(help="auto: measured on the GPU if usable, else the model; gpu; "
                                                 "model (atlas is not offered)")] = SourceChoice.auto,
    format: Annotated[Optional[SmemFormat], typer.Option("--format", help="table | json | png | svg (default: from "
                                                         "--out's suffix, else table)")] = None,
    out: Annotated[Optional[str], typer.Option(help="Write here instead of stdout ('-': stdout; a folder: the "
                                               "default name inside)")] = None,
):
    """Shared-memory banks: the bank map of an access to a layout, predicted and measured wavefronts."""
    from ..errors import InputError
    from ..files import check_suffix, format_from_suffix

    fmt = format.value if format is not None else (format_from_suffix(out, tuple(f.value for f in SmemFormat))
                                                   or "table")
    check_suffix(out, fmt)
    if source.value == "atlas":
        raise InputError("invalid --source atlas: shared-memory answers come from the GPU or the model; valid "
                         "choices are auto, gpu, model", argument="source")
    if search:
        if layout is not None:
            raise InputError("--search ranks the layouts of a row-major --tile; leave out --layout", argument="layout")
        _search(tile, dtype, access, fragment, source.value, fmt, out)
        return
    if layout is None:
        raise InputError("--layout is required (or --search with --tile)", argument="layout")
    show_smem(layout, dtype, access, fragment, tile, instruction, source.value, fmt, out)


def show_smem(layout, dtype, access, fragment, tile, instruction, source, fmt, out) -> None:
    from ..smem.analysis import analyze
    from ..smem.view import bank_map_figure, bank_map_text, check_instruction

    report = analyze(layout, dtype, access, fragment=fragment, tile=tile, source=source)
    check_instruction(report, instruction)
    name = f"smem_{report.access.spelling.replace('.', '_')}_{report.layout.dtype}"
    if fmt in FIGURES:
        from ..show.gallery import save_figure

        written = save_figure(bank_map_figure(report, instruction), out if out is not None else f"{name}.{fmt}",
                              fmt, default_name=f"{name}.{fmt}")
        if written is not None:
            typer.echo(f"wrote {written}")
        return
    text = bank_map_text(report, instruction) if fmt == "table" else json.dumps(report.to_dict(), indent=1) + "\n"
    _write(text, out, f"{name}.{'txt' if fmt == 'table' else 'json'}")


def _search(tile, dtype, access, fragment, source, fmt, out) -> None:
    from ..errors import InputError
    from ..smem.search import search
    from ..smem.view import search_text

    if fmt in FIGURES:
        raise InputError("--search writes a table or JSON: use --format table|json", argument="format")
    ranked, note = search(tile, dtype, access, fragment=fragment, source=source)
    if fmt == "json":
        text = json.dumps({"tile": tile, "dtype": dtype, "access": access, "fragment": fragment, "note": note,
                           "best": ranked[0].layout.spelling, "candidates": [c.to_dict() for c in ranked]},
                          indent=1) + "\n"
    else:
        text = search_text(ranked, note, access, tile, dtype)
    _write(text, out, f"smem_search.{'txt' if fmt == 'table' else 'json'}")


def _write(text: str, out, default_name: str) -> None:
    from ..files import write_output

    if out is None:
        typer.echo(text, nl=False)
        return
    written = write_output(out, text, default_name=default_name)
    if written is not None:
        typer.echo(f"wrote {written}")


def register(app: typer.Typer) -> None:
    app.command("smem")(smem_command)
