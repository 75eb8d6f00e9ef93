"""Shared checks for terminal views: pick fragments from the registry, render at a width, read labels back.

The expected labels come from the spec (rows, cols, threads, slots), never from the renderer.
"""

from __future__ import annotations

import io
import re

from rich.console import Console

from fraglab.apis import FAMILIES
from fraglab.errors import FraglabError
from fraglab.layouts.resolve import resolve_layout

ANSI = re.compile(r"\x1b\[")
ELLIPSIS = "\u2026"


def view_specs() -> list:
    """Per family and operand: its first fragment and its largest one (the widest grid it can ask for)."""
    chosen = {}
    for family in FAMILIES.values():
        for frag in family.operands:
            specs = [s for s in family.specs() if s.frag == frag]
            if not specs:
                continue
            for spec in (specs[0], max(specs, key=lambda s: (s.rows * s.cols, s.rows))):
                chosen[spec.key] = spec
    return list(chosen.values())


def layout_for(spec):
    """The family's model of `spec`, else the bundled atlas (no GPU is used)."""
    family = spec.family
    for source in ("model", "atlas"):
        for method in family.methods:
            try:
                return resolve_layout(spec, source, method)
            except FraglabError:
                continue
    raise AssertionError(f"neither the model nor the atlas has {spec.key}")


def render(renderable, width: int) -> str:
    con = Console(file=io.StringIO(), width=width, color_system=None, highlight=False, soft_wrap=False)
    con.print(renderable)
    return con.file.getvalue()


def assert_fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, f"{len(wide)} lines wider than {width}, e.g. {wide[0]!r}"
    assert ELLIPSIS not in text, "a name was cut with an ellipsis"


def read_bands(text: str, corner: str) -> list[tuple[list[str], list[str]]]:
    """Every band of a banded view: (column labels, row labels). `corner` is the row-label header
    ('r\\c' for the grid, 'thread' for the lanes view, whose column labels are on the line above)."""
    lines = text.splitlines()
    bands = []
    i = 0
    while i < len(lines):
        tokens = lines[i].split()
        if tokens and tokens[0] == corner:
            cols = tokens[1:] if corner == "r\\c" else lines[i - 1].split()
            rows = []
            i += 2  # the header rule
            while i < len(lines) and lines[i].split() and lines[i].split()[0].isdigit():
                rows.append(lines[i].split()[0])
                i += 1
            bands.append((cols, rows))
            continue
        i += 1
    return bands
