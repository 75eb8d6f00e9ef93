"""One fragment grid: what each cell shows, runs of cells, label plans, the key; the drawing engine of figures.

Reading a figure: a cell is element (row, col) of the fragment's matrix; its label `T5 x3` says lane 5
holds it in slot x[3]. Every holder is listed, so duplicated elements show several; a slot that the
MMA was measured not to read is written in parentheses, `(x11)`. Grids too large for one label per
cell are labelled by runs (`T5 x0-31`: lane 5 holds the run in consecutive slots).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ..layouts.layout import Layout
from .palette import _dim, _text_color

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

# Text metrics of DejaVu Sans, in units of the font size; good enough to fit labels into cells.
_CHAR_W = 0.62
_LINE_H = 1.22
_FILL = 0.86            # share of a cell a label may cover
_IDEAL_FONT = 7.5       # pt, cell labels
_MIN_FONT = 5.5         # pt; below this a label is unreadable and runs (or nothing) are labelled instead
_MIN_CELL_IN = 0.34
_MAX_GRID_W_IN = 15.0    # 256 columns of a wgmma accumulator keep a lane number per 2-cell run
_MAX_GRID_H_IN = 13.0
_MAX_MMA_IN = 17.0      # width and height budget of the three grids of the MMA view

# ---- what each cell shows --------------------------------------------------------------------------

@dataclass
class _Cell:
    holders: list[tuple[int, int, int]]  # (lane, slot, reads: 1 read / 0 ignored / -1 unknown)
    # labels and lanes, worked out once: a grid is planned in several styles and sizes before it is drawn
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def lanes(self) -> list[int]:
        if "lanes" not in self.memo:
            self.memo["lanes"] = tuple(dict.fromkeys(t for t, _, _ in self.holders))
        return list(self.memo["lanes"])

    def key_holder(self) -> tuple[int, int, int] | None:
        """The holder whose lane/slot colours the cell: the first one the MMA reads (or may read)."""
        for h in self.holders:
            if h[2] != 0:
                return h
        return self.holders[0] if self.holders else None

    @property
    def all_ignored(self) -> bool:
        if "all_ignored" not in self.memo:
            self.memo["all_ignored"] = bool(self.holders) and all(h[2] == 0 for h in self.holders)
        return self.memo["all_ignored"]


def _slot_text(slot: int, reads: int) -> str:
    return f"(x{slot})" if reads == 0 else f"x{slot}"


class _CellGrid(list):
    """The rows of a grid's cells, with what is worked out about all of them at once (label extents by style)."""

    def __init__(self, rows: Iterable[list[_Cell]]):
        super().__init__(rows)
        self.memo: dict = {}


def _cells(layout: Layout) -> list[list[_Cell]]:
    grid = layout.holder_grid()
    reads = layout.mma_reads.tolist()  # Python ints: indexing a numpy array per holder was most of this
    return _CellGrid([_Cell([(t, s, int(reads[t][s])) for t, s in grid[r][c]]) for c in range(layout.spec.cols)]
                     for r in range(layout.spec.rows))


def _label_lines(cell: _Cell, style: str) -> list[str]:
    """The label of one cell in one of three styles (the figure picks the one needing the smallest cell)."""
    if style not in cell.memo:
        cell.memo[style] = tuple(_make_label_lines(cell, style))
    return list(cell.memo[style])


def _make_label_lines(cell: _Cell, style: str) -> list[str]:
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


def _label_extent(cells: list[list[_Cell]], style: str) -> tuple[int, int]:
    """(characters of the longest line, lines of the tallest label) over the grid's labels in `style`: the
    label needing the most room either way sets the cell size and the font, so only these two count."""
    memo = getattr(cells, "memo", {})
    if ("extent", style) not in memo:
        memo["extent", style] = _measure_labels(cells, style)
    return memo["extent", style]


def _measure_labels(cells: list[list[_Cell]], style: str) -> tuple[int, int]:
    chars = lines = 0
    for row in cells:
        for cell in row:
            if cell.holders:
                label = _label_lines(cell, style)
                chars, lines = max(chars, max(len(s) for s in label)), max(lines, len(label))
    return chars, lines


def _fit_extent(extent: tuple[int, int], w_pt: float, h_pt: float, *, cap: float = _IDEAL_FONT) -> float:
    """The largest font (up to cap) at which the grid's most demanding label fits its cell, so every one does."""
    chars, lines = extent
    if not lines:
        return cap
    return min(cap, _FILL * w_pt / (chars * _CHAR_W * 1.0), _FILL * h_pt / (lines * _LINE_H * 1.0))


def _best_label_style(cells: list[list[_Cell]]) -> tuple[str, float]:
    """(style, square cell side in inches) that fits every label at the ideal font."""
    best = ("two", float("inf"))
    for style in ("two", "stack", "line"):
        chars, lines = _label_extent(cells, style)
        side = max(0.0, chars * _CHAR_W * _IDEAL_FONT / _FILL, lines * _LINE_H * _IDEAL_FONT / _FILL)
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
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # text by (slots, in_warp)

    def text(self, slots: bool = True, in_warp: bool = False) -> str:
        """'T5 x0-31' (lanes and slots), 'T5' (slots=False) or '5' (in_warp: the lane inside its warp)."""
        if (slots, in_warp) not in self.memo:
            self.memo[slots, in_warp] = self._make_text(slots, in_warp)
        return self.memo[slots, in_warp]

    def _make_text(self, slots: bool, in_warp: bool) -> str:
        if in_warp:
            return ",".join(str(lane % 32) for lane in self.first.lanes)
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


def _successor(cell: _Cell) -> list[tuple[int, int, int]]:
    """The holders a cell carrying on this one's run has: the same lanes and read flags, every slot one further."""
    if "successor" not in cell.memo:
        cell.memo["successor"] = [(t, s + 1, r) for t, s, r in cell.holders]
    return cell.memo["successor"]


def _continues(prev: _Cell, cell: _Cell) -> bool:
    """cell carries on prev's run: same lanes and read flags, every slot one further."""
    return bool(cell.holders) and cell.holders == _successor(prev)


def _runs(cells: list[list[_Cell]], vertical: bool) -> list[_Run]:
    lines = list(zip(*cells)) if vertical else cells  # the columns, or the rows
    out: list[_Run] = []
    for o, line in enumerate(lines):
        inner, i = len(line), 0
        while i < inner:
            j = i + 1
            while j < inner and _continues(line[j - 1], line[j]):
                j += 1
            if line[i].holders:
                r0, c0 = (i, o) if vertical else (o, i)
                out.append(_Run(r0, c0, j - i, vertical, line[i], line[j - 1]))
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

    mode: str  # cell | run | lanes | warp_lanes | none
    font: float
    duplicates: bool
    ignored: bool
    unread_cells: bool
    empty_cells: bool
    counted_copies: bool = False  # labels count ignored copies ("x0 +3") instead of listing them
    unlisted_slots: str = ""      # slots the MMA ignores that hold no element, so no cell lists them ("x8-15")


def _axis_names(layout: Layout) -> tuple[str, str]:
    return {"matrix_a": ("row (m)", "col (k)"), "matrix_b": ("row (k)", "col (n)"),
            "tmem": ("TMEM lane", "TMEM column (32-bit)")}.get(layout.spec.frag, ("row (m)", "col (n)"))


_DIGIT_W = 0.64         # DejaVu Sans digits are 0.636 em wide
_TICK_GAP_PT = 3.0      # clear space between neighbouring tick labels


def _tick_step(cell_pt: float, n: int, label_pt: float) -> int:
    """Label every step-th row or column: the smallest power of two whose labels (label_pt long along the
    axis) keep _TICK_GAP_PT apart."""
    for step in (1, 2, 4, 8, 16, 32, 64):
        if step * cell_pt >= label_pt + _TICK_GAP_PT or step >= n:
            return step
    return 64


def _axis_ticks(cell_pt: float, n: int, vertical: bool) -> tuple[int, float]:
    """(step, font size) of one axis' tick labels: 7.5 pt where the step allows it, else 6 pt."""
    digits = len(str(n - 1))
    size = (lambda f: _LINE_H * f) if vertical else (lambda f: digits * _DIGIT_W * f)
    step = _tick_step(cell_pt, n, size(6.0))
    return step, 7.5 if step * cell_pt >= size(7.5) + _TICK_GAP_PT else 6.0


def _major_step(n: int) -> int:
    return 8 if n <= 64 else 32


def _draw_grid(ax: "Axes", layout: Layout, coloring: _Coloring, cell_w_pt: float, cell_h_pt: float,
               *, cells: list[list[_Cell]] | None = None, plan: _LabelPlan | None = None,
               gid: str = "grid") -> _GridReport:
    """Draw one fragment's matrix into ax, cell (r, c) spanning [c, c+1] x [r, r+1] in data units."""
    from matplotlib.collections import LineCollection

    rows, cols = layout.spec.rows, layout.spec.cols
    cells = cells if cells is not None else _cells(layout)
    plan = plan if plan is not None else _plan_labels(cells, cell_w_pt, cell_h_pt)
    lane = coloring.lane

    # Fill: every cell's colour in one image, a pixel per cell, drawn unsmoothed (SVG: image-rendering pixelated;
    # PDF: no interpolation): the cells a reader sees, in a few hundred bytes instead of a path per cell.
    fill = np.ones((rows, cols, 3))
    hatched = []
    highlighted = np.zeros((rows, cols), dtype=bool)
    for r in range(rows):
        for c in range(cols):
            cell = cells[r][c]
            key = cell.key_holder()
            if key is None:
                hatched.append((r, c))
                continue
            rgb = coloring.colors[coloring.index(layout, key) % len(coloring.colors)]
            lit = lane is None or lane in cell.lanes
            highlighted[r, c] = lane is not None and lit
            fill[r, c] = rgb if lit else _dim(rgb)
    ax.imshow(fill, extent=(0, cols, rows, 0), interpolation="none", aspect="auto", zorder=0.5)
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

    if not minor_lw and plan.runs:  # cells too small for lines between them: lines between labelled runs
        ax.add_collection(LineCollection(_run_edges(plan.runs), colors="white", linewidths=0.8))
    _draw_labels(ax, layout, cells, coloring, plan, gid)
    ax.set_gid(gid)

    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)  # row 0 at the top, as a matrix is written
    ax.set_aspect("auto")
    _draw_axes_labels(ax, layout, cell_w_pt, cell_h_pt, gid)
    return _grid_report(layout, cells, plan)


def _draw_axes_labels(ax: "Axes", layout: Layout, cell_w_pt: float, cell_h_pt: float, gid: str) -> None:
    """Column numbers and name above the grid, row numbers and name left of it, where matplotlib's axes would
    put them (tick labels 2 pt off the edge, names 3 pt past them); drawn by two AxisLabels, the axes' own off."""
    from .labels import add_axis_labels

    rows, cols = layout.spec.rows, layout.spec.cols
    ax.set_axis_off()
    (xs, x_font), (ys, y_font) = _axis_ticks(cell_w_pt, cols, False), _axis_ticks(cell_h_pt, rows, True)
    ylabel, xlabel = _axis_names(layout)
    add_axis_labels(ax, "top", [c + 0.5 for c in range(0, cols, xs)], [str(c) for c in range(0, cols, xs)],
                    fontsize=x_font, pad_pt=2, name=xlabel, name_size=8, labelpad_pt=3, gid=f"{gid}-cols")
    add_axis_labels(ax, "left", [r + 0.5 for r in range(0, rows, ys)], [str(r) for r in range(0, rows, ys)],
                    fontsize=y_font, pad_pt=2, name=ylabel, name_size=8, labelpad_pt=3, gid=f"{gid}-rows")


def _run_edges(runs: list[_Run]) -> list[list[tuple[int, int]]]:
    """Segments across both ends of every run, merged into long lines where ends line up row after row."""
    ends: dict[tuple[bool, int], set[int]] = {}
    for run in runs:
        at, across = (run.r0, run.c0) if run.vertical else (run.c0, run.r0)
        for edge in (at, at + run.length):
            ends.setdefault((run.vertical, edge), set()).add(across)
    segs = []
    for (vertical, edge), cross in sorted(ends.items()):
        cross_sorted = sorted(cross)
        start = prev = cross_sorted[0]
        for x in cross_sorted[1:] + [None]:
            if x is None or x != prev + 1:
                segs.append([(start, edge), (prev + 1, edge)] if vertical else [(edge, start), (edge, prev + 1)])
                start = x
            prev = x if x is not None else prev
    return segs


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

    mode: str  # cell | run (lane and slots per run) | lanes (lane per run) | warp_lanes (lane % 32) | none
    font: float = 0.0
    style: str = "two"  # of cell labels
    runs: list[_Run] = field(default_factory=list)


# The smallest label of each style ("T0 x0" on one line; "T0" over "x0"): cells too small for all of these are
# too small for any cell label, so a large grid is labelled by runs without working out every cell's labels.
_SMALLEST_EXTENT = {"line": (5, 1), "two": (2, 2), "stack": (2, 2), "compact": (2, 2)}


def _cell_labels_may_fit(cell_w_pt: float, cell_h_pt: float) -> bool:
    return max(_fit_extent(e, cell_w_pt, cell_h_pt) for e in _SMALLEST_EXTENT.values()) >= _MIN_FONT


def _plan_labels(cells: list[list[_Cell]], cell_w_pt: float, cell_h_pt: float) -> _LabelPlan:
    held = any(cell.holders for row in cells for cell in row)
    if _cell_labels_may_fit(cell_w_pt, cell_h_pt) or not held:
        # Every holder listed if that fits (in the style that fits these cells largest); else ignored copies
        # counted ("x0 +3"); else runs.
        best, _ = _best_label_style(cells)
        fits = []
        for style in dict.fromkeys((best, "two", "stack", "line")):
            fits.append((_fit_extent(_label_extent(cells, style), cell_w_pt, cell_h_pt), style))
        font, style = max(fits, key=lambda fs: fs[0] + (1e-6 if fs[1] == best else 0.0))
        if font >= _MIN_FONT:
            return _LabelPlan("cell", font, style)
        font = _fit_extent(_label_extent(cells, "compact"), cell_w_pt, cell_h_pt)
        if font >= _MIN_FONT:
            return _LabelPlan("cell", font, "compact")
    # Runs: the direction with fewer (so longer) runs. Every run gets a label or none does, since a
    # half-labelled grid reads as if the rest were empty: first "T5 x0-31", then just "T5".
    horizontal, vertical = _runs(cells, False), _runs(cells, True)
    runs = vertical if len(vertical) < len(horizontal) else horizontal
    # A warpgroup's grid (lanes past 31), too dense for "T101": the lane inside its warp, the hue telling the warp.
    warpgroup = any(t >= 32 for row in cells for cell in row for t in cell.lanes)
    for mode in ("run", "lanes", "warp_lanes") if warpgroup else ("run", "lanes"):
        fonts = []
        for run in runs:
            along, across = (cell_h_pt, cell_w_pt) if run.vertical else (cell_w_pt, cell_h_pt)
            chars = len(run.text(slots=mode == "run", in_warp=mode == "warp_lanes"))
            fonts.append(min(_IDEAL_FONT, _FILL * across / _LINE_H, _FILL * run.length * along / (chars * _CHAR_W)))
        if runs and min(fonts) >= _MIN_FONT:
            return _LabelPlan(mode, min(fonts), runs=runs)
    return _LabelPlan("none")


def _draw_labels(ax: "Axes", layout: Layout, cells: list[list[_Cell]], coloring: _Coloring,
                 plan: _LabelPlan, gid: str) -> None:
    """Labels carry SVG ids ({gid}-cell-R-C, {gid}-run-R-C) so a file can be checked against its layout."""
    from .labels import Label, add_labels

    if plan.mode == "cell":
        labels = [Label(c + 0.5, r + 0.5, tuple(_label_lines(cell, plan.style)),
                        _cell_text_color(layout, cell, coloring), f"{gid}-cell-{r}-{c}")
                  for r, row in enumerate(cells) for c, cell in enumerate(row) if cell.holders]
        add_labels(ax, labels, fontsize=plan.font, linespacing=1.1)
        return
    labels = []
    for run in plan.runs:
        if run.vertical:
            x, y, rot = run.c0 + 0.5, run.r0 + run.length / 2, 90.0
        else:
            x, y, rot = run.c0 + run.length / 2, run.r0 + 0.5, 0.0
        text = run.text(slots=plan.mode == "run", in_warp=plan.mode == "warp_lanes")
        labels.append(Label(x, y, (text,), _cell_text_color(layout, run.first, coloring),
                            f"{gid}-run-{run.r0}-{run.c0}", rot))
    if labels:
        add_labels(ax, labels, fontsize=plan.font)


def _grid_report(layout: Layout, cells: list[list[_Cell]], plan: _LabelPlan) -> "_GridReport":
    memo = getattr(cells, "memo", {})  # the figure's notes and its grid ask for the same report
    key = ("report", plan.mode, plan.style, plan.font)
    if key not in memo:
        memo[key] = _make_grid_report(layout, cells, plan)
    return memo[key]


def _make_grid_report(layout: Layout, cells: list[list[_Cell]], plan: _LabelPlan) -> "_GridReport":
    return _GridReport(
        mode=plan.mode, font=plan.font,
        duplicates=layout.duplicate_slots > 0,
        ignored=any(h[2] == 0 for row in cells for cell in row for h in cell.holders),  # drawn as "(x11)"
        unread_cells=any(cell.all_ignored for row in cells for cell in row),
        empty_cells=any(not cell.holders for row in cells for cell in row),
        counted_copies=plan.mode == "cell" and plan.style == "compact" and layout.ignored_slots > 0,
        unlisted_slots=_unlisted_slots(layout),
    )


def _unlisted_slots(layout: Layout) -> str:
    """'x8-15 of every lane' when those slots hold no element because the MMA reads none from them; else ''."""
    unlisted = (layout.row < 0) & (layout.mma_reads == 0)
    slots = np.unique(np.nonzero(unlisted)[1])
    if not len(slots):
        return ""
    return _slot_span(slots) + (" of every lane" if unlisted[:, slots].all() else " of some lanes")


def _slot_span(slots: np.ndarray) -> str:
    """'x8-15' for consecutive slots, 'x1,x3' otherwise, '' for none."""
    slots = [int(s) for s in slots]
    if not slots:
        return ""
    if slots == list(range(slots[0], slots[-1] + 1)) and len(slots) > 1:
        return f"x{slots[0]}-{slots[-1]}"
    return ",".join(f"x{s}" for s in slots)


def _draw_key(ax: "Axes", coloring: _Coloring, n: int, ncols: int, box_pt: float) -> None:
    """Colour key: one patch per lane (or slot, register), labelled with its index."""
    from matplotlib.collections import PolyCollection

    from .labels import Label, add_labels

    prefix = {"lane": "T", "slot": "x", "register": "r"}[coloring.color_by]
    nrows = -(-n // ncols)
    polys, cols_ = [], []
    font = min(7.0, 0.8 * box_pt / (_CHAR_W * (len(prefix) + len(str(n - 1)))), 0.75 * box_pt / _LINE_H)
    labels = []
    for i in range(n):
        r, c = divmod(i, ncols)
        rgb = coloring.colors[i % len(coloring.colors)]
        lit = coloring.color_by != "lane" or coloring.lane is None or coloring.lane == i
        rgb = rgb if lit else _dim(rgb)
        polys.append([(c, r), (c + 1, r), (c + 1, r + 1), (c, r + 1)])
        cols_.append(rgb)
        labels.append(Label(c + 0.5, r + 0.5, (f"{prefix}{i}",), _text_color(rgb) if lit else "0.45"))
    ax.add_collection(PolyCollection(polys, facecolors=cols_, edgecolors="white", linewidths=0.8))
    add_labels(ax, labels, fontsize=font)
    ax.set_xlim(0, ncols)
    ax.set_ylim(nrows, 0)
    ax.set_xticks([])
    ax.set_yticks([])
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(KEY_TITLES[coloring.color_by], fontsize=_KEY_TITLE_FONT, loc="left", pad=4)


KEY_TITLES = {"lane": "colour: lane", "slot": "colour: slot x[i]", "register": "colour: 32-bit register"}
_KEY_TITLE_FONT = 8.0


def key_width_in(color_by: str, swatches_in: float) -> float:
    """Width the key takes: its swatches, or its title where that is longer (a 2-register key is narrow)."""
    return max(swatches_in, len(KEY_TITLES[color_by]) * _CHAR_W * _KEY_TITLE_FONT / 72.0 + 0.1)


def _key_shape(n: int, color_by: str, *, wide: bool) -> int:
    """Columns of the key: lanes as 8 quads of 4 (the MMA's groupID x threadID_in_group), else a strip."""
    if wide:
        return min(n, 32)
    if color_by == "lane" and n == 32:
        return 4
    return min(n, 4 if n <= 16 else 8)


# ---- titles and notes ------------------------------------------------------------------------------------
