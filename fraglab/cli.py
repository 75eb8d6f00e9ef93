"""The fraglab command line: it parses options and calls the library; rendering lives elsewhere.

Bad input exits with status 2 and one line naming the argument and the valid choices.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from . import __version__
from .catalogue import CatalogueError

app = typer.Typer(
    help="Measure, show and use tensor-core fragment layouts on the GPU in hand (or from the bundled atlas).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
atlas_app = typer.Typer(help="Record and compare atlases: every fragment layout of one GPU in one JSON file.",
                        no_args_is_help=True)
app.add_typer(atlas_app, name="atlas")


def fail(message: str, code: int = 2) -> None:
    """One line on stderr, then exit (2 for bad input, 1 for a failure at run time)."""
    typer.echo(f"fraglab: error: {message}", err=True)
    raise typer.Exit(code)


class SourceChoice(str, Enum):
    auto = "auto"
    gpu = "gpu"
    atlas = "atlas"
    model = "model"


class MethodChoice(str, Enum):
    load = "load"
    mma = "mma"
    onehot = "onehot"


class FormatChoice(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    png = "png"
    svg = "svg"
    pdf = "pdf"


class ViewChoice(str, Enum):
    grid = "grid"
    lanes = "lanes"


class ColorBy(str, Enum):
    lane = "lane"
    slot = "slot"
    register = "register"


def _version_callback(value: bool):
    if value:
        typer.echo(f"fraglab {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                                                help="Print the version and exit.")] = False):
    pass


@app.command("layout")
def layout_command(
    frag: Annotated[Optional[str], typer.Option(help="matrix_a | matrix_b | accumulator (not with --mma)")] = None,
    shape: Annotated[str, typer.Option(help="MMA shape, e.g. m16n16k16, m32n8k16, m8n32k16, m16n16k8, m8n8k4")] = "m16n16k16",
    dtype: Annotated[Optional[str], typer.Option(help="A/B: f16 bf16 tf32 f64 u8 s8 u4 s4 b1; accumulator: f16 f32 f64 s32 (default f16, f32 for the accumulator)")] = None,
    layout: Annotated[str, typer.Option(help="row | col: memory layout (for the accumulator: how it is stored)")] = "row",
    source: Annotated[SourceChoice, typer.Option(help="auto: the GPU if usable, else the bundled atlas, else the PTX model")] = SourceChoice.auto,
    method: Annotated[MethodChoice, typer.Option(help="load: every holder; mma: identity MMA; onehot: which slots the MMA reads")] = MethodChoice.load,
    format: Annotated[FormatChoice, typer.Option("--format", help="table | json | csv | png | svg | pdf")] = FormatChoice.table,
    out: Annotated[Optional[Path], typer.Option(help="Write here instead of stdout (figures: default file name in the current folder)")] = None,
    lane: Annotated[Optional[int], typer.Option(help="Highlight one lane (0..31)")] = None,
    view: Annotated[ViewChoice, typer.Option(help="grid: the matrix with each cell's holders; lanes: each lane's slots")] = ViewChoice.grid,
    mma: Annotated[bool, typer.Option("--mma", help="Figure of A, B and the accumulator of one MMA, as C = A x B")] = False,
    color_by: Annotated[ColorBy, typer.Option(help="Figures: colour cells by lane, slot or 32-bit register")] = ColorBy.lane,
    palette: Annotated[str, typer.Option(help="Figures: colour palette (see `fraglab figures --help`)")] = "tab20",
):
    """Show which lane and slot of a fragment holds which (row, col) element."""
    from . import service

    try:
        service.layout_cli(frag=frag, shape=shape, dtype=dtype, layout=layout, source=source.value,
                           method=method.value, fmt=format.value, out=out, lane=lane, view=view.value,
                           mma=mma, color_by=color_by.value, palette=palette)
    except CatalogueError as exc:
        fail(str(exc))
    except service.UserFacingError as exc:
        fail(str(exc), exc.exit_code)


@app.command("list")
def list_command(
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
):
    """Print every valid fragment combination."""
    from . import service

    if format not in ("table", "json"):
        fail(f"invalid --format {format!r}: valid choices are table, json")
    service.list_cli(format)


@atlas_app.command("capture")
def atlas_capture_command(
    out: Annotated[Path, typer.Option(help="JSON file to write (written whole, or not at all)")],
):
    """Probe every fragment on the present GPU with every method and record it, with provenance."""
    from . import service

    try:
        service.atlas_capture_cli(out)
    except service.UserFacingError as exc:
        fail(str(exc), exc.exit_code)


@atlas_app.command("diff")
def atlas_diff_command(
    a: Annotated[Path, typer.Argument(help="First atlas JSON")],
    b: Annotated[Path, typer.Argument(help="Second atlas JSON")],
):
    """List every slot that differs between two atlases (exit 1 if any does)."""
    from . import service

    try:
        differs = service.atlas_diff_cli(a, b)
    except service.UserFacingError as exc:
        fail(str(exc), exc.exit_code)
    raise typer.Exit(1 if differs else 0)


@atlas_app.command("show")
def atlas_show_command(
    path: Annotated[Optional[Path], typer.Argument(help="Atlas JSON (default: the bundled one)")] = None,
):
    """Summarise an atlas: its provenance and every fragment it holds."""
    from . import service

    try:
        service.atlas_show_cli(path)
    except service.UserFacingError as exc:
        fail(str(exc), exc.exit_code)


@app.command("verify")
def verify_command():
    """Probe every fragment on the GPU; check that the methods, the model and the atlas agree."""
    from . import service

    try:
        ok = service.verify_cli()
    except service.UserFacingError as exc:
        fail(str(exc), exc.exit_code)
    raise typer.Exit(0 if ok else 1)


def _register_optional_commands() -> None:
    """Commands whose modules other features own; each registers itself if present."""
    import importlib

    for module_name in ("fraglab.cli_gemm", "fraglab.cli_figures"):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        module.register(app)


_register_optional_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
