"""`fraglab atlas capture|diff|show` and `fraglab verify`: record, compare and check atlases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import GpuUnavailable
from .common import console

atlas_app = typer.Typer(help="Record and compare atlases: every fragment layout of one GPU in one JSON file.",
                        no_args_is_help=True)


def _require_gpu(what: str) -> None:
    from ..runtime import gpu

    usable, why = gpu.available()
    if not usable:
        raise GpuUnavailable(f"{what} needs a GPU: {why}")


def _progress_capture():
    from ..bench import progress as progress_bar
    from ..probes.run import capture_atlas

    with progress_bar(transient=True) as progress:
        task = progress.add_task("probing", total=None)
        return capture_atlas(lambda what, done, total: progress.update(task, description=what, completed=done,
                                                                         total=total))


@atlas_app.command("capture")
def atlas_capture_command(
    out: Annotated[str, typer.Option(help="JSON file to write (written whole, or not at all; a folder: atlas.json inside)")],
):
    """Probe every fragment on the present GPU with every method and record it, with provenance."""
    from ..files import check_suffix, clean_text, report_written

    check_suffix(out, "json")
    _require_gpu("atlas capture")
    captured = _progress_capture()
    written = captured.save(out)
    p = captured.provenance
    report_written(written or "stdout", f": {len(captured.entries)} fragments on {clean_text(captured.describe())}, "
                   f"{len(captured.refused)} refused; {p['capture_seconds']} s ({p['compile_seconds']} s compiling)")
    for key, why in captured.refused.items():
        typer.echo(f"  refused {clean_text(key)}: {clean_text(why)}", err=True)


@atlas_app.command("diff")
def atlas_diff_command(
    a: Annotated[Path, typer.Argument(help="First atlas JSON")],
    b: Annotated[Optional[Path], typer.Argument(help="Second atlas JSON (default: the bundled atlas of A's architecture)")] = None,
):
    """List every slot that differs between two atlases (exit 1 if any does)."""
    import textwrap

    from ..files import clean_path, clean_text
    from ..layouts import atlas as atlas_mod
    from ..show.terminal import output_width

    first = atlas_mod.load(a)
    second = atlas_mod.load(b) if b is not None else atlas_mod.load_bundled(first.arch)
    lines = atlas_mod.diff(first, second)
    if b is None:
        # against the bundled atlas, only the families A holds: a WMMA-only file is not "missing" wgmma
        families = sorted({spec.api for spec in first.specs()})
        b = f"the bundled atlas, families {', '.join(families)}"
        lines = [line for line in lines if not (line.endswith(": only in B") and line.split(".")[0] not in families)]
    # paths, GPU names and keys come from files: cleaned before they reach the terminal, and wrapped to its width
    width = output_width()
    for label, name, atlas in (("A", a, first), ("B", b, second)):
        named = clean_path(name) if isinstance(name, Path) else clean_text(name)
        typer.echo("\n".join(textwrap.wrap(f"{label}: {named} ({clean_text(atlas.describe())})", width,
                                           subsequent_indent="   ", break_long_words=False, break_on_hyphens=False)))
    for line in lines:
        typer.echo(clean_text(line, None))
    typer.echo(f"{len(lines)} difference(s)" if lines else "no differences")
    raise typer.Exit(1 if lines else 0)


@atlas_app.command("show")
def atlas_show_command(
    path: Annotated[Optional[Path], typer.Argument(help="Atlas JSON (default: the bundled one)")] = None,
):
    """Summarise an atlas: its provenance and every fragment it holds."""
    from ..layouts import atlas as atlas_mod
    from ..show.listings import atlas_view

    found = atlas_mod.load_bundled() if path is None else atlas_mod.load(path)
    console().print(atlas_view(found))


def verify_table(rows, refused: dict[str, str]):
    """The verify report as a renderable (kept under this name for callers of the CLI module)."""
    from ..show.listings import verify_view

    return verify_view(rows, refused)


def verify() -> bool:
    """Probe every fragment; print the methods x model x atlas table; True when every fragment agrees."""
    from rich.text import Text

    from ..errors import AtlasError
    from ..files import clean_text
    from ..layouts import atlas as atlas_mod
    from ..layouts.verify import check_combination
    from ..runtime import gpu

    _require_gpu("verify")
    arch = gpu.compute_capability()
    try:
        bundled = atlas_mod.load_bundled(arch)
    except AtlasError:
        bundled = None
    captured = _progress_capture()
    rows = [check_combination(spec, {m: captured.raw_layout(spec, m) for m in captured.entries[spec.key]}, arch,
                              bundled)
            for spec in captured.specs()]
    con = console()
    con.print(verify_table(rows, captured.refused))
    bad = [r for r in rows if not r.ok]
    con.print(Text(f"{len(rows) - len(bad)} of {len(rows)} fragments agree on {clean_text(captured.describe())}; "
                   f"{len(captured.refused)} refused"))
    from ..smem.verify import verify_smem   # the shipped shared-memory cases, model against the bank probe

    smem_ok = verify_smem(lambda text: con.print(text, markup=False, highlight=False))
    return not bad and smem_ok


def verify_command():
    """Probe every fragment on the GPU; check that the methods, the model and the atlas agree."""
    raise typer.Exit(0 if verify() else 1)


def register(app: typer.Typer) -> None:
    app.add_typer(atlas_app, name="atlas")
    app.command("verify")(verify_command)
