"""`fraglab check`: is the layout I wrote (CuTe, Triton, a table, a header) what the hardware does?

It takes the same selection options as `fraglab layout` (the export commands' option types), parses them
and calls fraglab.check; exit 0 equal, 1 when any slot differs, 2 on bad input (the one handler).
"""

from __future__ import annotations

import io
from typing import Annotated, Optional

import typer

from ..errors import InputError, check_choice
from .common import SourceChoice
from .export import Api, AtlasFile, Dtype, Frag, Major, MemLayout, Method, Num, Out, Shape, Swizzle, Trans

CHECK_FORMATS = ("table", "json", "png", "svg", "pdf")
SUFFIX = {"table": ".txt", "json": ".json", "png": ".png", "svg": ".svg", "pdf": ".pdf"}

CUTE_HELP = ("CuTe thread-value layout, as CUTLASS's MMA_Traits write ALayout/BLayout/CLayout (and the GMMA "
             "traits): (thread, value) -> column-major index into the (M,K) tile for A, (N,K) for B, (M,N) for C "
             "(other fragments: rows x cols), e.g. \"((4,8),(2,2,2)):((32,1),(16,8,128))\" for m16n8k16 A; also "
             "the C++ Layout<Shape<...>,Stride<...>> or a file holding either")
TRITON_HELP = ("Triton linear layout (register, lane, warp -> dim0=row, dim1=col): the JSON of `fraglab export "
               "--to triton`, Triton's printout, #ttg.linear<{...}> or DistributedLinearLayout(...); text or a file")
TABLE_HELP = ("JSON or CSV file of (thread, slot) -> (row, col), as `fraglab layout --format json|csv` writes "
              "(older files' 'lane' is read as the thread)")
HEADER_HELP = ("C++ header with constexpr row(thread, slot) and col(thread, slot) (as `fraglab export --to "
               "header` writes): compiled only, never run (g++, else NVRTC)")


def check_command(
    cute: Annotated[Optional[str], typer.Option(help=CUTE_HELP)] = None,
    triton: Annotated[Optional[str], typer.Option(help=TRITON_HELP)] = None,
    table: Annotated[Optional[str], typer.Option(help=TABLE_HELP)] = None,
    header: Annotated[Optional[str], typer.Option(help=HEADER_HELP)] = None,
    name: Annotated[Optional[str], typer.Option(help="--header: the struct (or namespace) of row()/col() (default: the header's only struct)")] = None,
    compiler: Annotated[str, typer.Option(help="--header: auto | gxx | nvrtc")] = "auto",
    api: Api = "wmma", frag: Frag = None, shape: Shape = None, dtype: Dtype = None, layout: MemLayout = None,
    num: Num = None, trans: Trans = None, swizzle: Swizzle = None, major: Major = None,
    source: Annotated[SourceChoice, typer.Option(help="The measured side: auto (GPU, else atlas, else model) | gpu | atlas | model")] = SourceChoice.auto,
    atlas: AtlasFile = None, method: Method = None,
    format: Annotated[str, typer.Option("--format", help="table | json | png | svg | pdf (a figure of both grids)")] = "table",
    out: Out = None,
):
    """Compare a layout you wrote with the measured one: prints "equal" or the differing slots.

    Exit 0 when every (thread, slot) holds the same element, 1 when any differs, 2 on bad input.
    thread is the index in the instruction's thread group (0..127 for wgmma), lane its lane, warp its warp.
    """
    from ..check import check, figure, render_json, render_text
    from ..files import check_suffix, write_output

    check_choice(format, CHECK_FORMATS, "format", name="--format")
    check_suffix(out, format)
    if format in ("png", "svg", "pdf") and (out is None or out == "-"):
        raise InputError(f"--format {format} writes a figure: give --out FILE.{format}", argument="out")
    result = check(cute=cute, triton=triton, table=table, header=header, api=api, frag=frag, shape=shape,
                   dtype=dtype, layout=layout, num=num, trans=trans, swizzle=swizzle, major=major,
                   source=source.value, atlas=None if atlas is None else str(atlas), method=method, name=name,
                   compiler=compiler)
    if format == "table":
        data: str | bytes = render_text(result)
    elif format == "json":
        data = render_json(result)
    else:
        buffer = io.BytesIO()
        figure(result).savefig(buffer, format=format, dpi=150)
        data = buffer.getvalue()
        typer.echo("equal" if result.equal else f"differ: {len(result.differing)} slots", err=True)
    written = write_output(out, data, default_name=f"check.{result.measured.spec.key}{SUFFIX[format]}")
    if written is not None:
        typer.echo(f"wrote {written}", err=True)
    if not result.equal:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check_command)
