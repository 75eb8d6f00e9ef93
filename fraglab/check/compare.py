"""A given layout against the measured one, slot by slot: the verdict, an 80-column table, JSON and a figure.

Elements are named as fraglab.export.diff names them ([row, col], None for an empty slot, `absent` for a
(thread, slot) one side lacks) and its figure is reused; each differing slot carries the one vocabulary:
thread (the index in the instruction's thread group), warp and lane.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..export.diff import figure as diff_figure
from ..export.tile import title
from ..files import clean_text
from .given import GivenLayout

WIDTH = 80
SHOWN = 48  # differing slots the table lists; --format json lists every one


@dataclass
class CheckResult:
    """The outcome: `equal`, every differing slot, and what was compared."""

    given: GivenLayout
    measured: object  # fraglab.layouts.layout.Layout
    differing: list[dict]
    notes: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differing

    def __bool__(self) -> bool:
        return self.equal

    @property
    def compared(self) -> int:
        return max(self.given.threads, self.measured.threads) * max(self.given.num_elements,
                                                                    self.measured.num_elements)


def _padded(layout, threads: int, slots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """row, col on a (threads, slots) grid, and where the layout has that (thread, slot) at all."""
    row = np.full((threads, slots), -1, dtype=np.int64)
    col = row.copy()
    present = np.zeros((threads, slots), dtype=bool)
    t, s = layout.threads, layout.num_elements
    row[:t, :s], col[:t, :s], present[:t, :s] = layout.row, layout.col, True
    return row, col, present


def _element(row: np.ndarray, col: np.ndarray, present: np.ndarray, t: int, s: int):
    """As fraglab.export.diff names them: [row, col], None for an empty slot, "absent" off the layout."""
    if not present[t, s]:
        return "absent"
    return None if row[t, s] < 0 else [int(row[t, s]), int(col[t, s])]


def compare(given: GivenLayout, measured) -> CheckResult:
    """Every (thread, slot) of either side whose element differs (vectorized: wgmma tiles have 16384 slots)."""
    threads = max(given.threads, measured.threads)
    slots = max(given.num_elements, measured.num_elements)
    g, m = _padded(given, threads, slots), _padded(measured, threads, slots)
    same = (g[2] == m[2]) & ((~g[2]) | ((g[0] == m[0]) & ((g[0] < 0) | (g[1] == m[1]))))
    rows = [{"thread": int(t), "warp": int(t) // 32, "lane": int(t) % 32, "slot": int(s),
             "given": _element(*g, t, s), "measured": _element(*m, t, s)} for t, s in np.argwhere(~same)]
    return CheckResult(given, measured, rows, list(given.notes))


def _source(layout) -> str:
    from ..layouts.resolve import source_line

    return source_line(layout.source, with_note=False)  # the one short source line, file strings cleaned


def _element_text(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    return f"({value[0]},{value[1]})"


def _line(text: str) -> str:
    return clean_text(text, WIDTH)


def render_text(result: CheckResult) -> str:
    given, measured = result.given, result.measured
    total = result.compared
    head = ("equal" if result.equal else
            f"differ: {len(result.differing)} of {total} slots")
    lines = [head,
             _line(f"given:    {given.form} {given.text}"),
             _line(f"measured: {title(measured)}; {_source(measured)}")]
    lines += [_line(f"note: {note}") for note in result.notes]
    if result.equal:
        lines.append(f"{total} slots ({measured.threads} threads x {measured.num_elements}) hold the same elements")
        return "\n".join(lines) + "\n"
    lines.append(f"{'thread':>6} {'warp':>4} {'lane':>4} {'slot':>4}  {'given':>14}  {'measured':>14}")
    for row in result.differing[:SHOWN]:
        lines.append(f"{row['thread']:>6} {row['warp']:>4} {row['lane']:>4} {row['slot']:>4}  "
                     f"{_element_text(row['given']):>14}  {_element_text(row['measured']):>14}")
    if len(result.differing) > SHOWN:
        lines.append(f"... {len(result.differing) - SHOWN} more (--format json lists every one)")
    return "\n".join(lines) + "\n"


def render_json(result: CheckResult) -> str:
    given, measured = result.given, result.measured
    return json.dumps({
        "equal": result.equal,
        "given": {"form": given.form, "text": given.text, "threads": given.threads, "slots": given.num_elements},
        "measured": {"fragment": measured.spec.key, "threads": measured.threads, "slots": measured.num_elements,
                     "source": measured.source.to_dict()},
        "compared_slots": result.compared,
        "notes": result.notes,
        "differing_slots": result.differing,
    }) + "\n"


def figure(result: CheckResult):
    """Both grids side by side, the cells whose holders differ in red (fraglab.export.diff's figure)."""
    fig = diff_figure(result.given, result.measured)
    left, right = fig.axes[0], fig.axes[1]
    left.set_title(f"given: {result.given.form}\n" + clean_text(result.given.text, 70), fontsize=7)
    right.set_title(clean_text(f"measured: {title(result.measured)}", 70) + f"\n{_source(result.measured)}",
                    fontsize=7)
    return fig
