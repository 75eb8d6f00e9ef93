"""Terminal tables of many fragments: the catalogue (`fraglab list`), an atlas (`atlas show`) and `verify`.

Every table fits 80 columns without cutting a name: one table per family, a fragment's fields written as
words (rich wraps a cell at spaces, never inside a name), constant columns moved into the title, and long
notes (PTX spellings) moved under the table as numbered footnotes.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .terminal import HEAD_RULE, clean_text

EXTRA_FIELDS = ("num", "trans", "swizzle", "major")


class FitTable:
    """A table that, where the console is too narrow for its longest words side by side, prints each row
    as one wrapped line of 'header: value' pairs instead of cutting words inside narrowed columns."""

    def __init__(self, *headers: str):
        self.headers = headers
        self.rows: list[tuple] = []

    def add_row(self, *cells) -> None:
        self.rows.append(cells)

    def table(self) -> Table:
        # header rule only, columns two spaces apart; 'fold' only ever applies to a word wider than the console
        table = Table(box=HEAD_RULE, show_edge=False, padding=(0, 1, 0, 0), pad_edge=False, header_style="bold")
        for name in self.headers:
            table.add_column(name, overflow="fold")
        for cells in self.rows:
            table.add_row(*cells)
        return table

    def stacked(self) -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for cells in self.rows:
            line = Text()
            for name, cell in zip(self.headers, cells):
                value = cell if isinstance(cell, Text) else Text(str(cell))
                if value.plain:
                    line.append("; " if line.plain else "")
                    line.append(f"{name}: ", style="bold")
                    line.append(value)
            grid.add_row("-", line)
        return grid

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = self.table()
        # measured as if unbounded: Measurement.get clamps the minimum to the width it is given
        fits = Measurement.get(console, options.update_width(1 << 16), table).minimum <= options.max_width
        yield table if fits else self.stacked()


def _table(*headers: str) -> FitTable:
    return FitTable(*headers)


def _extra_value(spec, name: str) -> str:
    value = getattr(spec, name)
    if name == "num":
        return f"x{value}"
    if name == "trans":
        return "trans" if value else "-"
    return str(value)


def fragment_words(spec, with_api: bool = False) -> str:
    """A fragment as space-separated words (frag shape dtype layout and its extra fields), so it wraps whole."""
    words = [spec.api] if with_api else []
    words += [spec.frag, spec.shape, spec.dtype, spec.layout]
    if spec.num is not None:
        words.append(f"x{spec.num}")
    if spec.trans:
        words.append("trans")
    words += [f"{n}={getattr(spec, n)}" for n in ("swizzle", "major") if getattr(spec, n) is not None]
    return " ".join(words)


class Footnotes:
    """Long notes numbered once each, in order of first use, printed under their table."""

    def __init__(self):
        self.notes: dict[str, int] = {}

    def mark(self, note: str) -> str:
        if not note:
            return ""
        return f"[{self.notes.setdefault(note, len(self.notes) + 1)}]"

    def renderable(self):
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", no_wrap=True)
        grid.add_column(overflow="fold")
        for note, number in self.notes.items():
            grid.add_row(f"[{number}]", Text(note))
        return grid


def catalogue_view(families: Iterable) -> Group:
    """`fraglab list`: one table per family; rows group the memory layouts of one fragment."""
    parts = []
    for family in families:
        specs = family.specs()
        extras = [n for n in EXTRA_FIELDS if any(getattr(s, n) is not None for s in specs)]
        needs = sorted({s.min_sm for s in specs})
        title = Text(f"{len(specs)} {family.title}", style="bold")
        if len(needs) == 1:
            title.append(f", needs sm_{needs[0]}", style="bold")
        parts.append(title)
        parts.append(Text(f"fraglab layout --api {family.api} --frag F --shape S --dtype D --layout L"
                          + "".join(" [--trans]" if n == "trans" else f" --{n} {n.upper()}" for n in extras),
                          style="dim"))
        headers = ["frag", "shape", "dtype", "layouts", *extras, "matrix", "slots"]
        if len(needs) > 1:
            headers.append("needs")
        notes = Footnotes()
        has_notes = family.note is not None and any(family.note(s) for s in specs)
        table = _table(*headers, *(["note"] if has_notes else []))
        grouped: dict[tuple, list] = {}
        for s in specs:  # one row per fragment and note (m8n8k4's A is a different instruction per layout)
            note = family.note(s) if family.note else ""
            grouped.setdefault((s.frag, s.shape, s.dtype, *(getattr(s, n) for n in extras), note), []).append(s)
        for group in grouped.values():
            s = group[0]
            slots = family.slots(s) if family.slots is not None else None
            row = [s.frag, s.shape, s.dtype, " ".join(dict.fromkeys(g.layout for g in group)),
                   *(_extra_value(s, n) if getattr(s, n) is not None else "" for n in extras),
                   f"{s.rows}x{s.cols}", "-" if slots is None else str(slots)]
            if len(needs) > 1:
                row.append(f"sm_{s.min_sm}")
            if has_notes:
                row.append(notes.mark(family.note(s) if family.note else ""))
            table.add_row(*row)
        parts.append(table)
        parts.append(Text("slots = slots per thread" + ("; notes:" if notes.notes else ""), style="dim"))
        if notes.notes:
            parts.append(notes.renderable())
        parts.append(Text(""))
    return Group(*parts)


def atlas_view(found) -> Group:
    """`atlas show`: the provenance, then per family each fragment, its slots, duplicates and methods."""
    # the path, the provenance and the refusals come from the file: cleaned (no control characters, cut)
    parts = [Text.assemble(("atlas ", "bold"), f"{clean_text(found.path)}: {clean_text(found.describe())}")]
    for key, value in found.provenance.items():
        parts.append(Text(f"  {clean_text(key, 40)}: {clean_text(value)}"))
    by_family: dict[str, list] = {}
    for spec in found.specs():
        by_family.setdefault(spec.api, []).append(spec)
    for api, specs in by_family.items():
        parts.append(Text(f"\n{api}: {len(specs)} fragments", style="bold"))
        table = _table("fragment", "slots", "dups", "ignored", "methods")
        for spec in specs:
            methods = list(found.entries[spec.key])
            lay = found.layout(spec, "load" if "load" in methods else methods[0])
            reads = lay if lay.reads_measured or "onehot" not in methods else found.layout(spec, "onehot")
            table.add_row(fragment_words(spec), str(lay.num_elements), str(lay.duplicate_slots),
                          str(reads.ignored_slots) if reads.reads_measured else "?", " ".join(methods))
        parts.append(table)
    parts.append(Text("slots = slots per thread; dups = slots holding an element another slot holds; "
                      "ignored = slots the MMA does not read; '?' = not measured", style="dim"))
    for key, why in found.refused.items():
        parts.append(Text(f"refused {clean_text(key)}: {clean_text(why)}", style="yellow"))
    return Group(*parts)


def verify_view(rows, refused: dict[str, str]) -> Group:
    """`verify`: per family, whether the methods, the model and the atlas agree for each fragment."""
    parts = [Text("fraglab verify: methods x model x atlas", style="bold")]
    by_family: dict[str, list] = {}
    for r in rows:
        by_family.setdefault(r.spec.api, []).append(r)
    for api, family_rows in by_family.items():
        parts.append(Text(f"\n{api}: {len(family_rows)} fragments", style="bold"))
        table = _table("fragment", "methods", "model", "atlas", "dups", "ignored", "result")
        for r in family_rows:
            result = Text("ok", style="green") if r.ok else Text("; ".join(r.problems), style="bold red")
            table.add_row(fragment_words(r.spec), r.methods, r.model, r.atlas, str(r.duplicates), str(r.ignored),
                          result)
        parts.append(table)
    for key, why in refused.items():
        parts.append(Text(f"refused {clean_text(key)}: {clean_text(why)}", style="yellow"))
    return Group(*parts)


__all__ = ["catalogue_view", "atlas_view", "verify_view", "fragment_words"]
