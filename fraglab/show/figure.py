"""Layout figures: plot_layout (one fragment) and plot_mma (A, B and the accumulator of one MMA, as C = A x B).

Plotting functions take a `Layout` (and optionally a matplotlib `Axes`) and return the `Figure`; they
never call `plt.show()`. matplotlib is imported inside the functions (Agg canvas, no pyplot), so
importing this module stays cheap for the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..layouts.layout import UNKNOWN, Layout
from .grid import (_FILL, _IDEAL_FONT, _LINE_H, _MAX_GRID_H_IN, _MAX_GRID_W_IN, _MAX_MMA_IN, _MIN_CELL_IN, _MIN_FONT,
                   _Cell, _Coloring, _GridReport, _best_label_style, _cells, _draw_grid, _draw_key, _grid_report,
                   _key_count, _key_shape, _label_lines, _plan_labels, _text_box, key_width_in)
from .palette import FigureError, check_style, palette_colors

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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


def _notes(reports: list[_GridReport], color_by: str, lane: int | None, bits: int | None,
           threads: int = 32) -> list[str]:
    notes = []
    modes = {r.mode for r in reports}
    if "cell" in modes:
        notes.append("T5 x3: lane 5 holds this element in slot x[3] of its fragment.")
    if "run" in modes:
        notes.append("T5 x0-31: lane 5 holds this run of elements in consecutive slots x[0]..x[31].")
    if "lanes" in modes:
        notes.append("T5 alone: lane 5 holds this run of elements; slots left out for room (--format table lists them).")
    if "warp_lanes" in modes:
        notes.append("5: lane 5 of the warp its hue shows (thread 32 x warp + 5) holds this run of elements; "
                     "--lane N or --format table names the slots.")
    if "none" in modes:
        notes.append("Cells too small to label here: use --lane N, or --format table for every holder.")
    if any(r.duplicates for r in reports):
        notes.append("A cell listing several slots (or lanes): each of them holds a copy of the element; all are shown.")
    if any(r.ignored and not r.counted_copies and r.mode == "cell" for r in reports):
        notes.append("(x11), in parentheses: the lane's slot x[11] holds this element, but the MMA does not "
                     "read that slot (measured with the one-hot probe).")
    if any(r.ignored and r.mode == "run" for r in reports):
        notes.append("(x8-15), in parentheses: slots holding these elements that the MMA does not read "
                     "(measured with the one-hot probe).")
    unlisted = sorted({r.unlisted_slots for r in reports if r.unlisted_slots})
    if unlisted:
        notes.append(f"Slots {' / '.join(unlisted)} are listed in no cell: the one-hot probe finds that the MMA "
                     "reads no element from them.")
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
    if color_by == "lane" and threads > 32:
        notes.append("Colour: one hue per warp of 32 threads (T0-31, T32-63, ... as in the key), a shade per "
                     "lane inside it.")
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
    page = min(_MAX_GRID_W_IN / cols, _MAX_GRID_H_IN / rows)
    # a label's ideal cell is never under _MIN_CELL_IN: where the page allows less, it sets the side alone
    ideal = _best_label_style(cells)[1] if page >= _MIN_CELL_IN else float("inf")
    side = min(ideal, page)
    w = h = side
    # A tall grid squeezed by its rows (wgmma's 64 x 8) gets wider cells, so one-line labels "T37 x3" fit.
    if side < ideal and rows > cols and side * 72 >= _LINE_H * _MIN_FONT / _FILL:
        line_w = max(_text_box(_label_lines(cell, "line"), 1.0)[0] for row in cells for cell in row)
        font = min(_IDEAL_FONT, _FILL * side * 72 / _LINE_H)
        w = max(w, min(line_w * font / _FILL / 72.0, _MAX_GRID_W_IN / cols))
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
        raise FigureError("lane", f"invalid --thread {lane}: valid threads are 0..{threads - 1} (--lane is the same option)")


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
        notes = _notes([report], color_by, lane, layout.spec.element_bits, layout.threads)
        ax.annotate("\n".join(notes), (0, 0), xycoords="axes fraction", xytext=(0, -6),
                    textcoords="offset points", va="top", ha="left", fontsize=7)
        return fig

    cw, ch = _grid_cell_size(layout, cells)
    plan = _plan_labels(cells, cw * 72, ch * 72)
    notes = _notes([_grid_report(layout, cells, plan)], color_by, lane, layout.spec.element_bits, layout.threads)
    gw, gh = cw * layout.spec.cols, ch * layout.spec.rows
    kbox = 0.27
    wide_key = gh < 8 * kbox + 0.4  # a flat grid: the key goes below as a strip, not beside as a block
    kcols = _key_shape(n, color_by, wide=wide_key)
    kw, kh = kcols * kbox, -(-n // kcols) * kbox
    key_w = key_width_in(color_by, kw)  # with its title, which may be wider than the swatches
    notes_h = len(notes) * _NOTE_LINE_IN + 0.25
    key_below = kh + 0.45 if wide_key else 0.0
    key_beside = 0.0 if wide_key else kh + 0.3
    width = max(_LEFT_IN + gw + (0.0 if wide_key else 0.35 + key_w) + 0.3, _LEFT_IN + key_w + 0.3, 7.2)
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
                   a.spec.element_bits if color_by == "register" else None, max(a.threads, b.threads, c.threads))
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
    key_column = 0.0 if key_in_quadrant else 0.45 + key_width_in(color_by, kcols * kbox)
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
