"""Layout figures: the fragment's matrix as a grid, each cell coloured and labelled by who holds it.

Plotting functions take a `Layout` (and optionally a matplotlib `Axes`) and return the `Figure`; they
never call `plt.show()`. matplotlib is imported inside the functions (Agg canvas, no pyplot), so
`import fraglab.figures` stays cheap for the CLI.

Reading a figure: a cell is element (row, col) of the fragment's matrix; its label `T5 x3` says lane 5
holds it in slot x[3]. Every holder is listed, so duplicated elements show several; a slot that the
MMA was measured not to read is written in parentheses, `(x11)`. Grids too large for one label per
cell are labelled by runs (`T5 x0-31`: lane 5 holds the run in consecutive slots).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

from .layout import UNKNOWN, Layout

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PALETTES: dict[str, str] = {
    "tab20": "matplotlib's tab20, continued with tab20b and tab20c past 20 colours (the default)",
    "okabe-ito": "Okabe and Ito's colour-blind-safe hues, extended to 32 colours that stay apart under "
                 "simulated protan-, deutan- and tritanopia: for colour-blind readers",
    "cividis": "matplotlib's cividis, a colour map made for colour-vision deficiency; neighbouring indices look alike",
    "grey": "grey levels only, neighbouring indices far apart in lightness: prints in greyscale",
}
COLOR_BY = ("lane", "slot", "register")
FORMATS = ("png", "svg", "pdf")
PNG_DPI = 150
MANIFEST_NAME = "figures.json"

# Text metrics of DejaVu Sans, in units of the font size; good enough to fit labels into cells.
_CHAR_W = 0.62
_LINE_H = 1.22
_FILL = 0.86            # share of a cell a label may cover
_IDEAL_FONT = 7.5       # pt, cell labels
_MIN_FONT = 5.5         # pt; below this a label is unreadable and runs (or nothing) are labelled instead
_MIN_CELL_IN = 0.34
_MAX_GRID_W_IN = 14.0
_MAX_GRID_H_IN = 13.0
_MAX_MMA_IN = 17.0      # width and height budget of the three grids of the MMA view
_DIM_TOWARD_WHITE = 0.75
# Okabe and Ito's colour-blind-safe hues (black left out: it hides labels), then 25 more picked greedily
# (farthest point) from an 18-level sRGB grid with L* 25..92, the distance being the smallest CIELAB
# delta-E over normal vision and Machado et al. (2009) full protan, deutan and tritan simulations:
# every pair of the 32 stays at delta-E >= 12 for all four.
_CVD_SAFE = (
    "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#8700F0",
    "#692D0F", "#3C3C4B", "#C3F0C3", "#69FF87", "#9678FF", "#F0004B", "#4B3CB4", "#692D78",
    "#D2C3E1", "#87C378", "#D2A5A5", "#69693C", "#A53C78", "#A53C0F", "#96B44B", "#C30FA5",
    "#C3E15A", "#7896F0", "#874BF0", "#4B3C2D", "#5A0FC3", "#F02D69", "#A587C3", "#A5F0E1",
)


_SAVE_RC = {
    "svg.hashsalt": "fraglab",          # fixed ids: same figure, same bytes
    "svg.fonttype": "none",             # text stays text: searchable, small, and testable
    "font.sans-serif": ["DejaVu Sans"],  # one font (bundled with matplotlib) named in the SVG, not ten
    "pdf.fonttype": 42,                  # TrueType in PDFs: selectable text
}


class FigureError(ValueError):
    """Bad figure input (palette, colour mode, format, path); the message names the argument and the choices."""

    def __init__(self, argument: str, message: str):
        super().__init__(message)
        self.argument = argument


# ---- colours ---------------------------------------------------------------------------------------

def check_style(color_by: str, palette: str) -> None:
    if color_by not in COLOR_BY:
        raise FigureError("color_by", f"invalid --color-by {color_by!r}: valid choices are {', '.join(COLOR_BY)}")
    if palette not in PALETTES:
        raise FigureError("palette", f"invalid --palette {palette!r}: valid choices are {', '.join(PALETTES)}")


def _far_step(n: int) -> int:
    """A step coprime with n near 0.4 n: walking the levels by it puts neighbouring indices far apart."""
    from math import gcd

    if n <= 2:
        return 1
    target = max(1, round(0.4 * n))
    for delta in range(n):
        for step in (target + delta, target - delta):
            if 0 < step < n and gcd(step, n) == 1:
                return step
    return 1


def palette_colors(palette: str, n: int) -> list[tuple[float, float, float]]:
    """n RGB colours of `palette`, index i for lane/slot/register i (cycles only past 60 for tab20)."""
    import matplotlib

    if palette not in PALETTES:
        raise FigureError("palette", f"invalid --palette {palette!r}: valid choices are {', '.join(PALETTES)}")
    n = max(n, 1)
    if palette == "tab20":
        base = [c for name in ("tab20", "tab20b", "tab20c") for c in matplotlib.colormaps[name].colors]
        return [tuple(base[i % len(base)][:3]) for i in range(n)]
    if palette == "okabe-ito":
        return [tuple(matplotlib.colors.to_rgb(_CVD_SAFE[i % len(_CVD_SAFE)])) for i in range(n)]
    if palette == "cividis":
        cmap = matplotlib.colormaps["cividis"]
        return [tuple(cmap(0.08 + 0.9 * i / max(n - 1, 1))[:3]) for i in range(n)]
    # grey: levels 0.30..0.96 visited with a far step, so lane i and lane i+1 differ strongly in lightness.
    step = _far_step(n)
    levels = np.linspace(0.30, 0.96, n) if n > 1 else np.array([0.7])
    return [(float(levels[(i * step) % n]),) * 3 for i in range(n)]


def _luminance(rgb: Sequence[float]) -> float:
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _text_color(rgb: Sequence[float]) -> str:
    return "white" if _luminance(rgb) < 0.26 else "black"


def _dim(rgb: Sequence[float]) -> tuple[float, float, float]:
    return tuple(c + (1.0 - c) * _DIM_TOWARD_WHITE for c in rgb[:3])


# ---- what each cell shows --------------------------------------------------------------------------

@dataclass
class _Cell:
    holders: list[tuple[int, int, int]]  # (lane, slot, reads: 1 read / 0 ignored / -1 unknown)

    @property
    def lanes(self) -> list[int]:
        return list(dict.fromkeys(t for t, _, _ in self.holders))

    def key_holder(self) -> tuple[int, int, int] | None:
        """The holder whose lane/slot colours the cell: the first one the MMA reads (or may read)."""
        for h in self.holders:
            if h[2] != 0:
                return h
        return self.holders[0] if self.holders else None

    @property
    def all_ignored(self) -> bool:
        return bool(self.holders) and all(h[2] == 0 for h in self.holders)


def _slot_text(slot: int, reads: int) -> str:
    return f"(x{slot})" if reads == 0 else f"x{slot}"


def _cells(layout: Layout) -> list[list[_Cell]]:
    grid = layout.holders()
    reads = layout.mma_reads
    return [[_Cell([(t, s, int(reads[t, s])) for t, s in grid[r][c]]) for c in range(layout.spec.cols)]
            for r in range(layout.spec.rows)]


def _label_lines(cell: _Cell, style: str) -> list[str]:
    """The label of one cell in one of three styles (the figure picks the one needing the smallest cell)."""
    lines: list[str] = []
    for lane in cell.lanes:
        slots = [_slot_text(s, rd) for t, s, rd in cell.holders if t == lane]
        if style == "line":
            lines.append(f"T{lane} " + ",".join(slots))
        elif style == "stack":
            lines.append(f"T{lane}")
            lines.extend(slots)
        elif style == "compact":  # copies the MMA ignores are counted, not listed: "x0 +3"
            read = [f"x{s}" for t, s, rd in cell.holders if t == lane and rd != 0]
            ignored = [s for t, s, rd in cell.holders if t == lane and rd == 0]
            if read:
                text = ",".join(read) + (f" +{len(ignored)}" if ignored else "")
            else:
                text = f"(x{ignored[0]})" + (f" +{len(ignored) - 1}" if len(ignored) > 1 else "")
            lines += [f"T{lane}", text]
        else:  # "two": lane, then its slots on one line
            lines.append(f"T{lane}")
            lines.append(",".join(slots))
    return lines


def _text_box(lines: list[str], font: float) -> tuple[float, float]:
    """(width, height) in points of a block of text lines."""
    if not lines:
        return 0.0, 0.0
    return max(len(s) for s in lines) * _CHAR_W * font, len(lines) * _LINE_H * font


def _fit_font(lines: list[str], w_pt: float, h_pt: float, *, cap: float = _IDEAL_FONT) -> float:
    if not lines:
        return cap
    tw, th = _text_box(lines, 1.0)
    return min(cap, _FILL * w_pt / tw, _FILL * h_pt / th)


def _best_label_style(cells: list[list[_Cell]]) -> tuple[str, float]:
    """(style, square cell side in inches) that fits every label at the ideal font."""
    best = ("two", float("inf"))
    for style in ("two", "stack", "line"):
        side = 0.0
        for row in cells:
            for cell in row:
                w, h = _text_box(_label_lines(cell, style), _IDEAL_FONT)
                side = max(side, w / _FILL, h / _FILL)
        if side < best[1] - 1e-9:
            best = (style, side)
    return best[0], max(_MIN_CELL_IN, best[1] / 72.0)


@dataclass
class _Run:
    """Consecutive cells along a row (or column) held by the same lanes in consecutive slots."""

    r0: int
    c0: int
    length: int
    vertical: bool
    first: _Cell
    last: _Cell

    def text(self, slots: bool = True) -> str:
        if not slots:
            return ",".join(f"T{lane}" for lane in self.first.lanes)
        parts = []
        for lane in self.first.lanes:
            a = [(s, rd) for t, s, rd in self.first.holders if t == lane]
            b = [(s, rd) for t, s, rd in self.last.holders if t == lane]
            slots = []
            for (s0, rd), (s1, _) in zip(a, b):
                span = f"x{s0}" if s0 == s1 else f"x{s0}-{s1}"
                slots.append(f"({span})" if rd == 0 else span)
            parts.append(f"T{lane} " + ",".join(slots))
        return " ".join(parts)


def _continues(prev: _Cell, cell: _Cell) -> bool:
    """cell carries on prev's run: same lanes and read flags, every slot one further."""
    if len(prev.holders) != len(cell.holders) or not cell.holders:
        return False
    return all(t0 == t1 and r0 == r1 and s1 == s0 + 1
               for (t0, s0, r0), (t1, s1, r1) in zip(prev.holders, cell.holders))


def _runs(cells: list[list[_Cell]], vertical: bool) -> list[_Run]:
    rows, cols = len(cells), len(cells[0])
    outer, inner = (cols, rows) if vertical else (rows, cols)
    out: list[_Run] = []
    for o in range(outer):
        def at(i: int) -> _Cell:
            return cells[i][o] if vertical else cells[o][i]

        i = 0
        while i < inner:
            j = i + 1
            while j < inner and _continues(at(j - 1), at(j)):
                j += 1
            if at(i).holders:
                r0, c0 = (i, o) if vertical else (o, i)
                out.append(_Run(r0, c0, j - i, vertical, at(i), at(j - 1)))
            i = j
    return out


# ---- one grid ----------------------------------------------------------------------------------------

@dataclass
class _Coloring:
    color_by: str
    colors: list[tuple[float, float, float]]
    lane: int | None

    def index(self, layout: Layout, holder: tuple[int, int, int]) -> int:
        t, s, _ = holder
        if self.color_by == "lane":
            return t
        if self.color_by == "slot":
            return s
        return int(layout.register_of_slot()[s])


def _key_count(layouts: Iterable[Layout], color_by: str) -> int:
    n = 1
    for lay in layouts:
        if color_by == "lane":
            n = max(n, lay.threads)
        elif color_by == "slot":
            n = max(n, lay.num_elements)
        else:
            n = max(n, int(lay.register_of_slot().max()) + 1)
    return n


@dataclass
class _GridReport:
    """What a drawn grid used, so the figure's notes explain exactly that."""

    mode: str  # cell | run | lanes | none
    font: float
    duplicates: bool
    ignored: bool
    unread_cells: bool
    empty_cells: bool
    counted_copies: bool = False  # labels count ignored copies ("x0 +3") instead of listing them


def _axis_names(layout: Layout) -> tuple[str, str]:
    return {"matrix_a": ("row (m)", "col (k)"), "matrix_b": ("row (k)", "col (n)")}.get(
        layout.spec.frag, ("row (m)", "col (n)"))


def _tick_step(cell_pt: float, n: int) -> int:
    for step in (1, 2, 4, 8, 16, 32, 64):
        if step * cell_pt >= 11.0 or step >= n:
            return step
    return 64


def _major_step(n: int) -> int:
    return 8 if n <= 64 else 32


def _draw_grid(ax: "Axes", layout: Layout, coloring: _Coloring, cell_w_pt: float, cell_h_pt: float,
               *, cells: list[list[_Cell]] | None = None, plan: _LabelPlan | None = None,
               gid: str = "grid") -> _GridReport:
    """Draw one fragment's matrix into ax, cell (r, c) spanning [c, c+1] x [r, r+1] in data units."""
    from matplotlib.collections import LineCollection, PolyCollection

    rows, cols = layout.spec.rows, layout.spec.cols
    cells = cells if cells is not None else _cells(layout)
    plan = plan if plan is not None else _plan_labels(cells, cell_w_pt, cell_h_pt)
    lane = coloring.lane

    # Fill: one rectangle per horizontal stretch of one colour keeps SVG and PDF files small.
    fill_polys, fill_colors, hatched = [], [], []
    highlighted = np.zeros((rows, cols), dtype=bool)
    for r in range(rows):
        c = 0
        while c < cols:
            cell = cells[r][c]
            key = cell.key_holder()
            if key is None:
                hatched.append((r, c))
                c += 1
                continue
            rgb = coloring.colors[coloring.index(layout, key) % len(coloring.colors)]
            lit = lane is None or lane in cell.lanes
            highlighted[r, c] = lane is not None and lit
            rgb = rgb if lit else _dim(rgb)
            c1 = c + 1
            while c1 < cols:
                nxt = cells[r][c1]
                kh = nxt.key_holder()
                if kh is None:
                    break
                lit1 = lane is None or lane in nxt.lanes
                rgb1 = coloring.colors[coloring.index(layout, kh) % len(coloring.colors)]
                if (rgb1 if lit1 else _dim(rgb1)) != rgb:
                    break
                highlighted[r, c1] = lane is not None and lit1
                c1 += 1
            fill_polys.append([(c, r), (c1, r), (c1, r + 1), (c, r + 1)])
            fill_colors.append(rgb)
            c = c1
    ax.add_collection(PolyCollection(fill_polys, facecolors=fill_colors, edgecolors="none", linewidths=0))
    for r, c in hatched:  # a cell nobody holds
        ax.add_patch(_rect(c, r, hatch="////", facecolor="white", edgecolor="0.6"))
    for r, c in [(r, c) for r in range(rows) for c in range(cols) if cells[r][c].all_ignored]:  # every holder ignored: the MMA never reads this element
        ax.add_patch(_rect(c, r, hatch="xx", facecolor="none", edgecolor="0.25"))

    # Thin white lines between cells (when cells are big enough to show them), darker every 8.
    minor_lw = 0.6 if min(cell_w_pt, cell_h_pt) >= 9 else 0.0  # on smaller cells they would drown the colours
    segs_minor = [[(0, r), (cols, r)] for r in range(1, rows)] + [[(c, 0), (c, rows)] for c in range(1, cols)]
    if minor_lw:
        ax.add_collection(LineCollection(segs_minor, colors="white", linewidths=minor_lw))
    mr, mc = _major_step(rows), _major_step(cols)
    segs_major = ([[(0, r), (cols, r)] for r in range(mr, rows, mr)]
                  + [[(c, 0), (c, rows)] for c in range(mc, cols, mc)])
    if segs_major:
        ax.add_collection(LineCollection(segs_major, colors="0.15", linewidths=0.9))
    ax.add_patch(_rect(0, 0, w=cols, h=rows, facecolor="none", edgecolor="0.15", lw=1.0))

    # Outline the highlighted lane's cells: an edge wherever a lit cell meets an unlit one.
    if lane is not None and highlighted.any():
        segs = []
        lit = np.pad(highlighted, 1)
        for r in range(rows):
            for c in range(cols):
                if not highlighted[r, c]:
                    continue
                if not lit[r, c + 1]:
                    segs.append([(c, r), (c + 1, r)])
                if not lit[r + 2, c + 1]:
                    segs.append([(c, r + 1), (c + 1, r + 1)])
                if not lit[r + 1, c]:
                    segs.append([(c, r), (c, r + 1)])
                if not lit[r + 1, c + 2]:
                    segs.append([(c + 1, r), (c + 1, r + 1)])
        ax.add_collection(LineCollection(segs, colors="black", linewidths=1.8, capstyle="projecting"))

    _draw_labels(ax, layout, cells, coloring, plan, gid)
    ax.set_gid(gid)

    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)  # row 0 at the top, as a matrix is written
    ax.set_aspect("auto")
    for side in ax.spines.values():
        side.set_visible(False)
    xs, ys = _tick_step(cell_w_pt, cols), _tick_step(cell_h_pt, rows)
    ax.set_xticks([c + 0.5 for c in range(0, cols, xs)], [str(c) for c in range(0, cols, xs)])
    ax.set_yticks([r + 0.5 for r in range(0, rows, ys)], [str(r) for r in range(0, rows, ys)])
    # Column numbers sit side by side: smaller when three digits share a narrow step.
    ax.tick_params(axis="x", labelsize=7.5 if xs * cell_w_pt >= 16 else 6.0, length=0, pad=2)
    ax.tick_params(axis="y", labelsize=7.5 if ys * cell_h_pt >= 9 else 6.0, length=0, pad=2)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ylabel, xlabel = _axis_names(layout)
    ax.set_xlabel(xlabel, fontsize=8, labelpad=3)
    ax.set_ylabel(ylabel, fontsize=8, labelpad=3)
    return _grid_report(layout, cells, plan)


def _rect(x, y, *, w=1.0, h=1.0, **kw):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), w, h, **kw)


def _cell_text_color(layout: Layout, cell: _Cell, coloring: _Coloring) -> str:
    key = cell.key_holder()
    rgb = coloring.colors[coloring.index(layout, key) % len(coloring.colors)]
    if coloring.lane is not None and coloring.lane not in cell.lanes:
        return "0.45"
    return _text_color(rgb)


@dataclass
class _LabelPlan:
    """How a grid is labelled: one label per cell, one per run of cells, or none (too small)."""

    mode: str  # cell | run (lane and slots per run) | lanes (lane per run) | none
    font: float = 0.0
    style: str = "two"
    runs: list[_Run] = field(default_factory=list)


def _plan_labels(cells: list[list[_Cell]], cell_w_pt: float, cell_h_pt: float) -> _LabelPlan:
    best, _ = _best_label_style(cells)
    # Every holder listed if that fits; else ignored copies counted ("x0 +3"); else runs.
    for style in (best, "compact"):
        labels = [_label_lines(cell, style) for row in cells for cell in row if cell.holders]
        font = min((_fit_font(lines, cell_w_pt, cell_h_pt) for lines in labels), default=_IDEAL_FONT)
        if font >= _MIN_FONT:
            return _LabelPlan("cell", font, style)
    style = best
    # Runs: the direction with fewer (so longer) runs. Every run gets a label or none does, since a
    # half-labelled grid reads as if the rest were empty: first "T5 x0-31", then just "T5".
    horizontal, vertical = _runs(cells, False), _runs(cells, True)
    runs = vertical if len(vertical) < len(horizontal) else horizontal
    for mode in ("run", "lanes"):
        fonts = []
        for run in runs:
            along, across = (cell_h_pt, cell_w_pt) if run.vertical else (cell_w_pt, cell_h_pt)
            chars = len(run.text(slots=mode == "run"))
            fonts.append(min(_IDEAL_FONT, _FILL * across / _LINE_H, _FILL * run.length * along / (chars * _CHAR_W)))
        if runs and min(fonts) >= _MIN_FONT:
            return _LabelPlan(mode, min(fonts), style, runs)
    return _LabelPlan("none")


def _draw_labels(ax: "Axes", layout: Layout, cells: list[list[_Cell]], coloring: _Coloring,
                 plan: _LabelPlan, gid: str) -> None:
    """Labels carry SVG ids ({gid}-cell-R-C, {gid}-run-R-C) so a file can be checked against its layout."""
    if plan.mode == "cell":
        for r, row in enumerate(cells):
            for c, cell in enumerate(row):
                if cell.holders:
                    ax.text(c + 0.5, r + 0.5, "\n".join(_label_lines(cell, plan.style)), ha="center",
                            va="center", fontsize=plan.font, color=_cell_text_color(layout, cell, coloring),
                            linespacing=1.1, gid=f"{gid}-cell-{r}-{c}")
        return
    for run in plan.runs:
        if run.vertical:
            x, y, rot = run.c0 + 0.5, run.r0 + run.length / 2, 90
        else:
            x, y, rot = run.c0 + run.length / 2, run.r0 + 0.5, 0
        ax.text(x, y, run.text(slots=plan.mode == "run"), ha="center", va="center", rotation=rot,
                fontsize=plan.font, color=_cell_text_color(layout, run.first, coloring),
                gid=f"{gid}-run-{run.r0}-{run.c0}")


def _grid_report(layout: Layout, cells: list[list[_Cell]], plan: _LabelPlan) -> "_GridReport":
    return _GridReport(
        mode=plan.mode, font=plan.font,
        duplicates=layout.duplicate_slots > 0,
        ignored=layout.ignored_slots > 0,
        unread_cells=any(cell.all_ignored for row in cells for cell in row),
        empty_cells=any(not cell.holders for row in cells for cell in row),
        counted_copies=plan.mode == "cell" and plan.style == "compact" and layout.ignored_slots > 0,
    )


def _draw_key(ax: "Axes", coloring: _Coloring, n: int, ncols: int, box_pt: float) -> None:
    """Colour key: one patch per lane (or slot, register), labelled with its index."""
    from matplotlib.collections import PolyCollection

    prefix = {"lane": "T", "slot": "x", "register": "r"}[coloring.color_by]
    nrows = -(-n // ncols)
    polys, cols_ = [], []
    font = min(7.0, 0.8 * box_pt / (_CHAR_W * (len(prefix) + len(str(n - 1)))), 0.75 * box_pt / _LINE_H)
    for i in range(n):
        r, c = divmod(i, ncols)
        rgb = coloring.colors[i % len(coloring.colors)]
        lit = coloring.color_by != "lane" or coloring.lane is None or coloring.lane == i
        rgb = rgb if lit else _dim(rgb)
        polys.append([(c, r), (c + 1, r), (c + 1, r + 1), (c, r + 1)])
        cols_.append(rgb)
        ax.text(c + 0.5, r + 0.5, f"{prefix}{i}", ha="center", va="center", fontsize=font,
                color=_text_color(rgb) if lit else "0.45")
    ax.add_collection(PolyCollection(polys, facecolors=cols_, edgecolors="white", linewidths=0.8))
    ax.set_xlim(0, ncols)
    ax.set_ylim(nrows, 0)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    title = {"lane": "colour: lane", "slot": "colour: slot x[i]", "register": "colour: 32-bit register"}
    ax.set_title(title[coloring.color_by], fontsize=8, loc="left", pad=4)


def _key_shape(n: int, color_by: str, *, wide: bool) -> int:
    """Columns of the key: lanes as 8 quads of 4 (the MMA's groupID x threadID_in_group), else a strip."""
    if wide:
        return min(n, 32)
    if color_by == "lane" and n == 32:
        return 4
    return min(n, 4 if n <= 16 else 8)


# ---- titles and notes ------------------------------------------------------------------------------------

def _source_line(layout: Layout) -> str:
    return f"source: {layout.source.summary()}  ·  method: {layout.method}"


def _summary_line(layout: Layout) -> str:
    s = layout.spec
    slots = layout.threads * layout.num_elements
    plural = "" if layout.num_elements == 1 else "s"
    parts = [f"{layout.threads} lanes x {layout.num_elements} slot{plural} = {slots} slots for "
             f"{s.rows * s.cols} elements"]
    if layout.duplicate_slots:
        parts.append(f"{layout.duplicate_slots} duplicate slots")
    if layout.empty_slots:
        parts.append(f"{layout.empty_slots} empty slots")
    unknown = int(np.sum(layout.mma_reads == UNKNOWN))
    if not layout.reads_measured:
        parts.append("MMA reads not measured")
    elif layout.ignored_slots or unknown:
        if layout.ignored_slots:
            parts.append(f"MMA ignores {layout.ignored_slots} slots")
        if unknown:
            parts.append(f"whether the MMA reads {unknown} slots is not known")
    else:
        parts.append("MMA reads every slot")
    return "; ".join(parts)


def _notes(reports: list[_GridReport], color_by: str, lane: int | None, bits: int | None) -> list[str]:
    notes = []
    modes = {r.mode for r in reports}
    if "cell" in modes:
        notes.append("T5 x3: lane 5 holds this element in slot x[3] of its fragment.")
    if "run" in modes:
        notes.append("T5 x0-31: lane 5 holds this run of elements in consecutive slots x[0]..x[31].")
    if "lanes" in modes:
        notes.append("T5 alone: lane 5 holds this run of elements; slots left out for room (--format table lists them).")
    if "none" in modes:
        notes.append("Cells too small to label here: use --lane N, or --format table for every holder.")
    if any(r.duplicates for r in reports):
        notes.append("A cell listing several slots (or lanes): each of them holds a copy of the element; all are shown.")
    if any(r.ignored and not r.counted_copies and r.mode == "cell" for r in reports):
        notes.append("(x11): a slot the MMA does not read (measured with the one-hot probe).")
    if any(r.ignored and r.mode == "run" for r in reports):
        notes.append("(x8-15): slots the MMA does not read (measured with the one-hot probe).")
    if any(r.counted_copies for r in reports):
        notes.append("x0 +3: slot x0, and 3 more copies in slots the MMA ignores (the fragment's own "
                     "figure lists them).")
    if any(r.unread_cells for r in reports):
        notes.append("Cross-hatched: no slot holding this element is read by the MMA.")
    if any(r.empty_cells for r in reports):
        notes.append("Hatched white: no (lane, slot) holds this element.")
    if color_by == "register" and bits is not None:
        if bits > 32:
            notes.append(f"Colour: the 32-bit register of the slot; a {bits}-bit element takes two, "
                         "coloured by the first.")
        else:
            notes.append(f"Colour: the 32-bit register of the slot; {bits}-bit elements pack {32 // bits} "
                         f"slot{'s' if bits < 32 else ''} per register.")
    if color_by == "slot":
        notes.append("Colour: the slot index x[i] within the lane.")
    if lane is not None:
        notes.append(f"Lane {lane} outlined; every other lane dimmed.")
    return notes


# ---- figure geometry -----------------------------------------------------------------------------------------

def _new_figure(w_in: float, h_in: float) -> "Figure":
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(w_in, h_in), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _grid_cell_size(layout: Layout, cells: list[list[_Cell]]) -> tuple[float, float]:
    """(width, height) of one cell in inches: big enough for the labels, small enough to fit the page."""
    rows, cols = layout.spec.rows, layout.spec.cols
    _, ideal = _best_label_style(cells)
    side = min(ideal, _MAX_GRID_W_IN / cols, _MAX_GRID_H_IN / rows)
    w = h = side
    # A very wide (or tall) grid gets taller (wider) cells so a one-line run label stays readable.
    need = 1.15 * _LINE_H * _MIN_FONT / _FILL / 72.0
    if side < need:
        if cols >= rows:
            h = min(need, _MAX_GRID_H_IN / rows)
        else:
            w = min(need, _MAX_GRID_W_IN / cols)
    return w, h


def _axes_in(fig: "Figure", left: float, bottom: float, width: float, height: float) -> "Axes":
    fw, fh = fig.get_size_inches()
    return fig.add_axes((left / fw, bottom / fh, width / fw, height / fh))


def _check_lane(lane: int | None, threads: int) -> None:
    if lane is not None and not (isinstance(lane, (int, np.integer)) and 0 <= lane < threads):
        raise FigureError("lane", f"invalid --lane {lane}: valid lanes are 0..{threads - 1}")


_NOTE_LINE_IN = 0.15
_TITLE_IN = 0.8     # title and two lines of source/summary above the column ticks
_TICKS_IN = 0.42     # column numbers and axis name above a grid
_LEFT_IN = 0.62      # row numbers and axis name left of a grid
_PAD_IN = 0.14


def _header(fig: "Figure", title: str, lines: list[str]) -> None:
    w, h = fig.get_size_inches()
    fig.text(_PAD_IN / w, 1 - 0.1 / h, title, fontsize=11, weight="bold", va="top", ha="left")
    fig.text(_PAD_IN / w, 1 - 0.36 / h, "\n".join(lines), fontsize=7.5, va="top", ha="left", linespacing=1.35)


def _footer(fig: "Figure", notes: list[str]) -> None:
    w, h = fig.get_size_inches()
    fig.text(_PAD_IN / w, (len(notes) * _NOTE_LINE_IN + 0.08) / h, "\n".join(notes), fontsize=7.5, va="top",
             ha="left", linespacing=1.3, color="0.15")


def plot_layout(layout: Layout, ax: "Axes | None" = None, *, lane: int | None = None, color_by: str = "lane",
                palette: str = "tab20") -> "Figure":
    """The fragment's matrix as a grid of holders; returns the Figure (draws into `ax` when given)."""
    check_style(color_by, palette)
    _check_lane(lane, layout.threads)
    n = _key_count([layout], color_by)
    coloring = _Coloring(color_by, palette_colors(palette, n), lane)
    cells = _cells(layout)
    title = layout.spec.describe()
    lines = [_source_line(layout), _summary_line(layout)]

    if ax is not None:  # notebook use: draw into the caller's axes; key beside it, notes below
        fig = ax.figure
        pos = ax.get_position()
        fw, fh = fig.get_size_inches()
        ax_w, ax_h = pos.width * fw, pos.height * fh
        side = min(ax_w / layout.spec.cols, ax_h / layout.spec.rows)  # square cells (aspect equal below)
        report = _draw_grid(ax, layout, coloring, side * 72, side * 72, cells=cells)
        ax.set_aspect("equal", adjustable="box")
        ax.set_title(title + "\n" + "\n".join(lines), fontsize=8, loc="left", pad=30)
        kcols = _key_shape(n, color_by, wide=False)
        krows = -(-n // kcols)
        grid_w, grid_h = side * layout.spec.cols, side * layout.spec.rows
        kbox = min(0.3, grid_h / (krows + 1))
        key_ax = ax.inset_axes((1.0 + 0.25 / grid_w, 1.0 - krows * kbox / grid_h,
                                kcols * kbox / grid_w, krows * kbox / grid_h))
        _draw_key(key_ax, coloring, n, kcols, kbox * 72)
        notes = _notes([report], color_by, lane, layout.spec.element_bits)
        ax.annotate("\n".join(notes), (0, 0), xycoords="axes fraction", xytext=(0, -6),
                    textcoords="offset points", va="top", ha="left", fontsize=7)
        return fig

    cw, ch = _grid_cell_size(layout, cells)
    plan = _plan_labels(cells, cw * 72, ch * 72)
    notes = _notes([_grid_report(layout, cells, plan)], color_by, lane, layout.spec.element_bits)
    gw, gh = cw * layout.spec.cols, ch * layout.spec.rows
    kbox = 0.27
    wide_key = gh < 8 * kbox + 0.4  # a flat grid: the key goes below as a strip, not beside as a block
    kcols = _key_shape(n, color_by, wide=wide_key)
    kw, kh = kcols * kbox, -(-n // kcols) * kbox
    notes_h = len(notes) * _NOTE_LINE_IN + 0.25
    key_below = kh + 0.45 if wide_key else 0.0
    key_beside = 0.0 if wide_key else kh + 0.3
    width = max(_LEFT_IN + gw + (0.0 if wide_key else 0.35 + kw) + 0.3, _LEFT_IN + kw + 0.3, 7.2)
    height = _TITLE_IN + _TICKS_IN + max(gh, key_beside) + key_below + notes_h
    fig = _new_figure(width, height)
    grid_bottom = height - _TITLE_IN - _TICKS_IN - gh
    gax = _axes_in(fig, _LEFT_IN, grid_bottom, gw, gh)
    _draw_grid(gax, layout, coloring, cw * 72, ch * 72, cells=cells, plan=plan)
    if wide_key:
        kax = _axes_in(fig, _LEFT_IN, notes_h + 0.05, kw, kh)
    else:
        kax = _axes_in(fig, _LEFT_IN + gw + 0.35, grid_bottom + gh - kh, kw, kh)
    _draw_key(kax, coloring, n, kcols, kbox * 72)
    _header(fig, title, lines)
    _footer(fig, notes)
    return fig


def plot_mma(a: Layout, b: Layout, c: Layout, *, lane: int | None = None, color_by: str = "lane",
             palette: str = "tab20") -> "Figure":
    """A, B and the accumulator of one MMA, placed as in C = A x B (A left, B on top, C below B),
    sharing one colouring so a reader can follow one lane through all three."""
    check_style(color_by, palette)
    for name, lay, frag in (("a", a, "matrix_a"), ("b", b, "matrix_b"), ("c", c, "accumulator")):
        if lay.spec.frag != frag:
            raise FigureError(name, f"plot_mma: {name} must be a {frag} layout, not {lay.spec.frag}")
    if not a.spec.shape == b.spec.shape == c.spec.shape:
        raise FigureError("shape", f"plot_mma: A, B and C shapes differ ({a.spec.shape}, {b.spec.shape}, "
                                   f"{c.spec.shape})")
    _check_lane(lane, max(a.threads, b.threads, c.threads))
    m, nn, k = a.spec.mnk
    n = _key_count([a, b, c], color_by)
    coloring = _Coloring(color_by, palette_colors(palette, n), lane)
    cells = {name: _cells(lay) for name, lay in (("A", a), ("B", b), ("C", c))}

    # One cell side s for m and n, so A's rows meet C's rows and B's columns meet C's; the k side only
    # has to agree between A and B, so a long k (b1: 128) is compressed rather than shrinking C.
    ideal = max(_best_label_style(cl)[1] for cl in cells.values())
    s = s_k = min(ideal, _MAX_MMA_IN / (k + nn), _MAX_MMA_IN / (k + m))
    if k > max(m, nn) and _plan_labels(cells["C"], s * 72, s * 72).mode != "cell":
        s = min(ideal, 0.45 * _MAX_MMA_IN / nn, 0.45 * _MAX_MMA_IN / m)
        s_k = min(s, 2.0 * max(m, nn) * s / k)  # k drawn twice as long as the longer of m, n
    sizes = {"A": (s_k, s), "B": (s, s_k), "C": (s, s)}
    plans = {name: _plan_labels(cells[name], w * 72, h * 72) for name, (w, h) in sizes.items()}
    layouts = {"A": a, "B": b, "C": c}
    notes = _notes([_grid_report(layouts[x], cells[x], plans[x]) for x in "ABC"], color_by, lane,
                   a.spec.element_bits if color_by == "register" else None)
    if s_k < s - 1e-9:
        notes.append(f"The k axis is drawn {s / s_k:.1f}x compressed so that k = {k} fits; m and n are to scale.")

    kw_in, mh_in, nw_in = k * s_k, m * s, nn * s
    gap = 0.55
    notes_h = len(notes) * _NOTE_LINE_IN + 0.25
    header_h = _TITLE_IN + 0.45  # three summary lines

    # The key goes in the empty top-left (k x k) quadrant when it fits there at a readable size,
    # else in a column right of B and C.
    kcols = _key_shape(n, color_by, wide=False)
    krows = -(-n // kcols)
    kbox = min(0.42, (kw_in - 0.35) / krows, (kw_in - 0.1) / kcols)
    key_in_quadrant = kbox >= 0.2
    if not key_in_quadrant:
        kbox = 0.27
    key_column = 0.0 if key_in_quadrant else 0.45 + kcols * kbox
    width = max(_LEFT_IN + kw_in + gap + nw_in + 0.35 + key_column, 8.0)
    height = header_h + _TICKS_IN + 0.2 + kw_in + gap + _TICKS_IN + mh_in + notes_h
    height = max(height, header_h + krows * kbox + 0.6 + notes_h)
    fig = _new_figure(width, height)
    c_bottom = notes_h
    b_bottom = c_bottom + mh_in + _TICKS_IN + gap
    axes = {
        "A": _axes_in(fig, _LEFT_IN, c_bottom, kw_in, mh_in),
        "B": _axes_in(fig, _LEFT_IN + kw_in + gap, b_bottom, nw_in, kw_in),
        "C": _axes_in(fig, _LEFT_IN + kw_in + gap, c_bottom, nw_in, mh_in),
    }
    for name, ax in axes.items():
        lay = layouts[name]
        w, h = sizes[name]
        _draw_grid(ax, lay, coloring, w * 72, h * 72, cells=cells[name], plan=plans[name], gid=name)
        stored = "stored " if name == "C" else ""
        ax.annotate(f"{name}: {lay.spec.dtype}, {stored}{lay.spec.layout}_major, {lay.spec.rows}x{lay.spec.cols}",
                    (0, 1), xycoords="axes fraction", xytext=(0, 25), textcoords="offset points",
                    fontsize=9, weight="bold", va="bottom", ha="left")
    if key_in_quadrant:
        kax = _axes_in(fig, _LEFT_IN, b_bottom + kw_in - krows * kbox, kcols * kbox, krows * kbox)
    else:
        top = height - header_h - _TICKS_IN - 0.2
        kax = _axes_in(fig, _LEFT_IN + kw_in + gap + nw_in + 0.45, top - krows * kbox, kcols * kbox, krows * kbox)
    _draw_key(kax, coloring, n, kcols, kbox * 72)

    title = (f"{a.spec.api} MMA {a.spec.shape}: C ({c.spec.dtype}, {m}x{nn}) = "
             f"A ({a.spec.dtype}, {a.spec.layout}_major) x B ({b.spec.dtype}, {b.spec.layout}_major)")
    _header(fig, title, [_source_line(a), "A: " + _summary_line(a), "B: " + _summary_line(b),
                         "C: " + _summary_line(c)])
    _footer(fig, notes)
    return fig


# ---- files ---------------------------------------------------------------------------------------------------

def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise FigureError("format", f"invalid --format {fmt!r} for a figure: valid choices are {', '.join(FORMATS)}")
    return fmt


def save_figure(fig: "Figure", path: str | os.PathLike, fmt: str) -> Path:
    """Write `fig` as png|svg|pdf, atomically (temp file, then rename); SVG and PDF bytes are deterministic."""
    import matplotlib

    check_format(fmt)
    path = Path(path)
    if not path.parent.is_dir():
        raise FigureError("out", f"invalid --out {str(path)!r}: folder {str(path.parent)!r} does not exist")
    metadata: dict[str, Any] = {
        "svg": {"Date": None},
        "pdf": {"CreationDate": None, "ModDate": None},
        "png": {},
    }[fmt]
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle, matplotlib.rc_context(_SAVE_RC):
            fig.savefig(handle, format=fmt, dpi=PNG_DPI if fmt == "png" else None, metadata=metadata)
        os.chmod(tmp, _new_file_mode())  # mkstemp makes 0600; a figure is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def default_figure_name(layout: "Layout | tuple[Layout, Layout, Layout]", fmt: str, *, mma: bool = False) -> str:
    """e.g. wmma_matrix_a_m16n16k16_f16_row_load.png; MMA views: wmma_mma_m16n16k16_f16_row_col_f32_row_load.png.

    With mma=True, `layout` is the (A, B, C) triple or just A (then B and C are not in the name).
    """
    check_format(fmt)
    if mma:
        if isinstance(layout, (tuple, list)):
            a, b, c = layout
            parts = (a.spec.api, "mma", a.spec.shape, a.spec.dtype, a.spec.layout, b.spec.layout,
                     c.spec.dtype, c.spec.layout, a.method)
        else:
            s = layout.spec
            parts = (s.api, "mma", s.shape, s.dtype, s.layout, layout.method)
    else:
        s = layout.spec
        parts = (s.api, s.frag, s.shape, s.dtype, s.layout, layout.method)
    return "_".join(parts) + "." + fmt


# ---- every figure of an atlas --------------------------------------------------------------------------------

def mma_triples(specs: Sequence[Any]) -> list[tuple[Any, Any, Any]]:
    """One MMA view per (shape, input type), as `fraglab layout --mma` draws it by default: A and B
    row-major where the family offers it (sub-byte B: col-major), the accumulator f32 where offered,
    stored row-major."""
    from .catalogue import WMMA_FAMILIES, FragmentSpec

    have = set(specs)
    out = []
    for family in WMMA_FAMILIES.values():
        acc = "f32" if "f32" in family.accumulators else family.accumulators[0]
        a_layout = "row" if "row" in family.a_layouts else family.a_layouts[0]
        b_layout = "row" if "row" in family.b_layouts else family.b_layouts[0]
        for shape in family.shapes:
            a = FragmentSpec("wmma", "matrix_a", shape, family.dtype, a_layout)
            b = FragmentSpec("wmma", "matrix_b", shape, family.dtype, b_layout)
            c = FragmentSpec("wmma", "accumulator", shape, acc, "row")
            if a in have and b in have and c in have:
                out.append((a, b, c))
    return out


def layout_digest(layout: Layout) -> str:
    """sha256 of what a figure draws (identity, source, slot map, reads): the figure is current iff it matches."""
    doc = {k: v for k, v in layout.to_dict().items() if k != "fraglab"}
    doc["source"].pop("note", None)  # why a source was chosen is not drawn
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def generate_all(out_dir: str | os.PathLike, atlas: Any = None, *, formats: Sequence[str] = ("svg",),
                 progress: Callable[[int, int, str], None] | None = None) -> list[Path]:
    """Every fragment of the atlas (method load, MMA reads from the one-hot probe) and one MMA view per
    (shape, input type), in each format; also writes figures.json, the manifest docs tests check.

    progress(done, total, name) is called after each file. Files that an earlier run listed in the
    manifest and this run no longer makes are removed; nothing else in out_dir is touched.
    """
    import matplotlib

    for fmt in formats:
        check_format(fmt)
    if atlas is None:
        from .atlas import load_bundled

        atlas = load_bundled()
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FigureError("out", f"invalid --out {str(out)!r}: not a folder")
    out.mkdir(parents=True, exist_ok=True)

    specs = list(atlas.specs())
    layouts = {spec: atlas.layout(spec, method="load") for spec in specs}
    jobs: list[tuple[str, list[Layout]]] = [("fragment", [layouts[s]]) for s in specs]
    jobs += [("mma", [layouts[s] for s in triple]) for triple in mma_triples(specs)]
    total = len(jobs) * len(formats)
    written: list[Path] = []
    entries = []
    done = 0
    for kind, lays in jobs:
        fig = plot_layout(lays[0]) if kind == "fragment" else plot_mma(*lays)
        for fmt in formats:
            name = default_figure_name(lays[0] if kind == "fragment" else tuple(lays), fmt, mma=kind == "mma")
            path = save_figure(fig, out / name, fmt)
            written.append(path)
            entries.append({
                "file": name, "kind": kind, "format": fmt,
                "specs": [lay.spec.key for lay in lays],
                "layouts_sha256": [layout_digest(lay) for lay in lays],
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            })
            done += 1
            if progress is not None:
                progress(done, total, name)
        fig.clear()

    manifest_path = out / MANIFEST_NAME
    if manifest_path.exists():
        try:
            old = json.loads(manifest_path.read_text())
            keep = {e["file"] for e in entries}
            for entry in old.get("figures", []):
                stale = out / Path(entry["file"]).name
                if entry["file"] not in keep and stale.exists():
                    stale.unlink()
        except (ValueError, KeyError, TypeError):
            pass  # a manifest we cannot read lists nothing we may remove
    from . import __version__

    manifest = {
        "generator": f"fraglab {__version__}",
        "matplotlib": matplotlib.__version__,
        "provenance": dict(getattr(atlas, "provenance", {}) or {}),
        "figures": entries,
    }
    _write_text_atomic(manifest_path, json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n")
    return written


def _write_text_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, _new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _new_file_mode() -> int:
    """0666 less the process umask: what open() would have given the file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
