"""Two layouts compared slot by slot: a table of the slots whose element differs, and a figure.

The layouts may differ in size (the WMMA m16n16 accumulator against mma.sync's m16n8 one): a
(thread, slot) present in one only is listed with the other side empty. The figure draws both grids
side by side and marks every cell whose holders differ.
"""

from __future__ import annotations

import json

import numpy as np

from .tile import provenance, title


def _element(layout, t: int, s: int):
    if t >= layout.threads or s >= layout.num_elements:
        return "absent"
    r = int(layout.row[t, s])
    return None if r < 0 else (r, int(layout.col[t, s]))


def differing_slots(a, b) -> list[dict]:
    """[{"thread", "slot", "a", "b"}] for every slot whose element differs; an element is [row, col],
    None for an empty slot, "absent" where the layout has no such (thread, slot)."""
    out = []
    for t in range(max(a.threads, b.threads)):
        for s in range(max(a.num_elements, b.num_elements)):
            ea, eb = _element(a, t, s), _element(b, t, s)
            if ea != eb:
                out.append({"thread": t, "slot": s, "a": list(ea) if isinstance(ea, tuple) else ea,
                            "b": list(eb) if isinstance(eb, tuple) else eb})
    return out


def _holders(layout) -> dict[tuple[int, int], set[tuple[int, int]]]:
    found: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for t, s in np.argwhere(np.asarray(layout.row) >= 0):
        found.setdefault((int(layout.row[t, s]), int(layout.col[t, s])), set()).add((int(t), int(s)))
    return found


def differing_cells(a, b) -> set[tuple[int, int]]:
    """Every (row, col) of either tile whose set of holders differs between the two."""
    ha, hb = _holders(a), _holders(b)
    cells = {(r, c) for lay in (a, b) for r in range(lay.spec.rows) for c in range(lay.spec.cols)}
    return {rc for rc in cells if ha.get(rc, set()) != hb.get(rc, set())}


def _source_line(layout) -> str:
    from ..files import clean_text
    from ..layouts.resolve import source_line

    if hasattr(layout.source, "kind"):
        return source_line(layout.source, with_note=False)  # the one short source line, file strings cleaned
    return clean_text(provenance(layout).get("kind", "?"), 60)  # a layout given as text (check) names its form


def render_table(a, b, fmt: str = "table") -> str:
    rows = differing_slots(a, b)
    if fmt == "json":
        return json.dumps({"a": title(a), "b": title(b), "differing_slots": rows,
                           "differing_cells": sorted([list(rc) for rc in differing_cells(a, b)])})
    total = max(a.threads, b.threads) * max(a.num_elements, b.num_elements)

    def text(e) -> str:
        return "none" if e is None else e if isinstance(e, str) else f"({e[0]},{e[1]})"

    lines = [f"A: {title(a)}; {_source_line(a)}", f"B: {title(b)}; {_source_line(b)}",
             f"{len(rows)} of {total} slots differ"]
    if rows:
        lines.append(f"{'thread':>6} {'slot':>4}  {'A':>9}  {'B':>9}")
        lines += [f"{r['thread']:>6} {r['slot']:>4}  {text(r['a']):>9}  {text(r['b']):>9}" for r in rows]
    return "\n".join(lines) + "\n"


def figure(a, b):
    """A matplotlib Figure: both grids side by side, cells labelled T/V of their first holder, differing cells red."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    changed = differing_cells(a, b)
    width = a.spec.cols + b.spec.cols
    height = max(a.spec.rows, b.spec.rows)
    fig = Figure(figsize=(min(2 + 0.42 * width, 40), min(1.6 + 0.34 * height, 30)))
    for pos, (lay, name) in enumerate(((a, "A"), (b, "B"))):
        ax = fig.add_subplot(1, 2, pos + 1)
        holders = _holders(lay)
        for r in range(lay.spec.rows):
            for c in range(lay.spec.cols):
                differs = (r, c) in changed
                ax.add_patch(Rectangle((c, r), 1, 1, facecolor="#f4a6a6" if differs else "#eeeeee",
                                       edgecolor="#b00000" if differs else "#bbbbbb", linewidth=1.2 if differs else 0.5))
                held = sorted(holders.get((r, c), ()))
                label = "-" if not held else f"T{held[0][0]}\nV{held[0][1]}" + (f"\nx{len(held)}" if len(held) > 1 else "")
                ax.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=5)
        ax.set_xlim(0, lay.spec.cols)
        ax.set_ylim(lay.spec.rows, 0)
        ax.set_aspect("equal")
        ax.set_xticks([c + 0.5 for c in range(lay.spec.cols)], [str(c) for c in range(lay.spec.cols)], fontsize=5)
        ax.set_yticks([r + 0.5 for r in range(lay.spec.rows)], [str(r) for r in range(lay.spec.rows)], fontsize=5)
        ax.tick_params(length=0)
        ax.set_title(f"{name}: {title(lay)}\n{_source_line(lay)}", fontsize=7)
    fig.suptitle(f"{len(changed)} cells differ in their holders (red)", fontsize=8)
    fig.tight_layout()
    return fig
