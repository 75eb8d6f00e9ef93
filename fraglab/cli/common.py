"""What every command shares: the console, the choice enums, and the small parsing helpers."""

from __future__ import annotations

from enum import Enum

from rich.console import Console

# Named exit codes (the one handler in cli/main.py maps FraglabError.exit_code onto these).
SUCCESS, FAILED, BAD_INPUT = 0, 1, 2


def console(file=None, width: int | None = None, stderr: bool = False) -> Console:
    """The console every command prints through: width, colour and ASCII rules in fraglab.show.terminal."""
    from ..show.terminal import make_console

    return make_console(file, width=width, stderr=stderr)


class SourceChoice(str, Enum):
    auto = "auto"
    gpu = "gpu"
    atlas = "atlas"
    model = "model"


class FormatChoice(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    png = "png"
    svg = "svg"
    pdf = "pdf"
    tikz = "tikz"  # a standalone LaTeX picture (fraglab.export.tikz)


class ViewChoice(str, Enum):
    grid = "grid"
    lanes = "lanes"


class ColorBy(str, Enum):
    lane = "lane"
    slot = "slot"
    register = "register"
