"""`fraglab figures`: regenerate every layout figure of the bundled atlas (the docs/figures folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ..errors import AtlasError, FraglabError, InputError


DEFAULT_FOLDER = "fraglab-figures"  # never a docs/ found by chance: the docs' own figures are asked for by --out


def _parse_formats(text: str) -> tuple[str, ...]:
    from ..show.gallery import FORMATS

    formats = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    bad = [f for f in formats if f not in FORMATS]
    if not formats or bad:
        raise InputError(f"invalid --format {text!r}: give one or more of {', '.join(FORMATS)}, separated by commas",
                         argument="format")
    return formats


def figures_command(
    out: Annotated[Path, typer.Option(help="Folder to write the figures and their manifest (figures.json) into "
                                           f"(default: {DEFAULT_FOLDER}/ in the current folder)")]
    = Path(DEFAULT_FOLDER),
    format: Annotated[str, typer.Option("--format", help="Comma-separated: svg, png, pdf (e.g. svg,png)")] = "svg",
    atlas: Annotated[Optional[Path], typer.Option(
        help="Atlas JSON to draw (from `fraglab atlas capture`); default: the bundled H200 atlas")] = None,
):
    """Draw every fragment of an atlas, and one MMA view per shape and type.

    The same atlas gives byte-identical SVG and PDF files. Palettes for `fraglab layout --palette`:
    tab20 (default), okabe-ito (colour-blind safe), cividis, grey (prints in greyscale).
    """
    from ..bench import progress as progress_bar

    from ..layouts import atlas as atlas_mod
    from ..show import gallery

    formats = _parse_formats(format)
    if out.exists() and not out.is_dir():
        raise InputError(f"invalid --out {str(out)!r}: it is a file, not a folder", argument="out")
    try:
        source = atlas_mod.load(atlas) if atlas is not None else atlas_mod.load_bundled()
    except AtlasError as exc:
        if atlas is not None:
            raise InputError(f"invalid --atlas {str(atlas)!r}: {exc}", argument="atlas") from None
        raise FraglabError(f"no bundled atlas to draw from: {exc}", exit_code=1) from None

    with progress_bar() as progress:
        task = progress.add_task("figures", total=None)

        def report(done: int, total: int, name: str) -> None:
            progress.update(task, completed=done, total=total, description=name)

        written = gallery.generate_all(out, source, formats=formats, progress=report)
    from ..files import report_written

    report_written(f"{len(written)} figures and {gallery.MANIFEST_NAME} into {out}")


def register(app: typer.Typer) -> None:
    app.command("figures")(figures_command)
