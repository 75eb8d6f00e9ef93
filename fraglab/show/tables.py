"""Terminal views of a layout (rich): the grid of holders and the per-lane slot list, with a header.

Views are computed from the layout's slot map; nothing here measures or stores anything. Both views cut the
matrix into bands of columns that fit the width, each band with every row and column label, so that no
line is wider than the console and no label is cut. Marks are characters, so they survive without colour.
"""

from __future__ import annotations

import textwrap

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..layouts.layout import NO_ELEMENT, Layout
from .terminal import DEFAULT_WIDTH, HEAD_RULE

# 16 colours that stay apart on dark and light terminals; lane l uses LANE_COLOURS[l % 16] (lanes
# l and l+16 share a hue and differ in weight).
LANE_COLOURS = (
    "red", "green", "yellow", "blue", "magenta", "cyan", "bright_red", "bright_green",
    "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan", "dark_orange", "purple", "spring_green2",
    "deep_pink2",
)

HIGHLIGHT_MARK = "*"   # before each holder of the --lane lane, so the highlight shows without colour
IGNORED_MARK = "~"     # after a slot the MMA was measured not to read
SHARED_MARK = "+"      # lanes view: another slot holds the same element
NOBODY = "-"           # grid: no slot holds the element; lanes view: the slot holds no element


# A warpgroup (128 threads) is coloured by warp, so its four warps stand apart; within a warp, lanes 16..31 bold.
WARP_COLOURS = ("red", "green", "blue", "magenta")


def lane_style(lane: int, highlight: int | None, threads: int = 32) -> str:
    if highlight is not None:
        return "bold reverse " + LANE_COLOURS[lane % 16] if lane == highlight else "dim"
    if threads > 32:
        return WARP_COLOURS[(lane // 32) % 4] + (" bold" if lane % 32 >= 16 else "")
    return LANE_COLOURS[lane % 16] + (" bold" if lane >= 16 else "")


def _ignored_text(layout: Layout) -> str:
    family = layout.spec._known_family()
    if family is not None and family.mma_specs is None and "mma" not in family.methods:
        return "n/a (no MMA reads this fragment)"  # ldmatrix, stmatrix, movmatrix
    if layout.source.kind == "model":
        return "unknown (only a GPU can tell)"
    return str(layout.ignored_slots) if layout.reads_measured else "not measured"


def phrase_lines(items: list[str], width: int) -> str:
    """The items joined by '; ' in lines of at most `width`, broken between items; an item wider than that alone
    is broken between its words (a word wider still is left to the console's fold)."""
    lines: list[str] = []
    for i, item in enumerate(items):
        piece = item + (";" if i < len(items) - 1 else "")
        if lines and len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines += textwrap.wrap(piece, width, break_long_words=False, break_on_hyphens=False) or [piece]
    return "\n".join(lines)


def _beside(text: Text, shown: str, addition: str, width: int, style: str = "") -> None:
    """`addition` two spaces after the last line of `shown` where it fits, else on a line of its own."""
    text.append("  " if len(shown.split("\n")[-1]) + 2 + len(addition) <= width else "\n")
    text.append(addition, style=style)


def header(layout: Layout, width: int = DEFAULT_WIDTH) -> Text:
    """The fragment, its method and one short source line (file strings cleaned by resolve.source_line), every
    line laid out for `width` and broken between phrases (the console's own wrap would break anywhere)."""
    from ..layouts.resolve import source_line

    s = layout.spec
    text = Text(overflow="fold")  # a word wider than the console (a PTX spelling) folds, never runs past it
    title = phrase_lines([s.describe()], width)
    text.append(title, style="bold")
    _beside(text, title, f"method {layout.method}", width)
    text.append("\nsource:", style="bold")
    line = source_line(layout.source)
    shown = phrase_lines(f"source: {line}".split("; "), width)
    text.append(shown[len("source:"):])
    if layout.source.kind == "model":
        _beside(text, shown, "(a model, not a measurement)", width, style="italic")
    text.append("\n")
    family = s._known_family()
    family_note = family.note(s) if family is not None and family.note is not None else ""
    if family_note and family_note not in line:
        text.append(phrase_lines([f"{s.api}: {family_note}"], width) + "\n")
    text.append(phrase_lines([f"slots: {layout.threads * layout.num_elements} ({layout.num_elements} per thread x "
                              f"{layout.threads} threads)", f"duplicates: {layout.duplicate_slots}",
                              f"ignored by the MMA: {_ignored_text(layout)}", f"empty: {layout.empty_slots}",
                              f"elements with no holder: {layout.missing_elements}"], width))
    return text


def _ignored(layout: Layout, lane: int, slot: int) -> bool:
    # a model never knows which slots the MMA skips: only a measured 0 earns the mark
    return layout.source.kind != "model" and layout.mma_reads[lane, slot] == 0


def _holder_text(layout: Layout, holders: list[tuple[int, int]], highlight: int | None) -> Text:
    """'5.3' = lane 5 slot 3; more slots of the same lane '/11'; other lanes after a space."""
    cell = Text()
    last_lane = None
    for lane, slot in holders:
        mark = IGNORED_MARK if _ignored(layout, lane, slot) else ""
        style = lane_style(lane, highlight, layout.threads)
        if lane == last_lane:
            cell.append(f"/{slot}{mark}", style=style)
        else:
            lead = "" if last_lane is None else " "
            star = HIGHLIGHT_MARK if lane == highlight else ""
            cell.append(lead)
            cell.append(f"{star}{lane}.{slot}{mark}", style=style)
        last_lane = lane
    return cell


def _legend(items: list[str], width: int) -> Text:
    return Text(phrase_lines(items, width), style="dim")


def grid_legend(layout: Layout, holders, highlight: int | None, width: int = DEFAULT_WIDTH) -> Text:
    """Say what each mark means, naming only the marks this grid uses."""
    cells = [h for row in holders for h in row]
    items = ["cell = thread.slot: x[slot] of that thread holds the element"]
    if any(len({lane for lane, _ in h}) < len(h) for h in cells):
        items.append("'/s' another slot of the same thread holds it too")
    if any(len({lane for lane, _ in h}) > 1 for h in cells):
        items.append("a space separates threads that hold the same element")
    if any(_ignored(layout, lane, slot) for h in cells for lane, slot in h):
        items.append(f"'{IGNORED_MARK}' the MMA ignores that slot")
    if highlight is not None:
        items.append(f"'{HIGHLIGHT_MARK}' thread {highlight} (--thread)")
    if any(not h for h in cells):
        items.append(f"'{NOBODY}' nobody holds it")
    return _legend(items, width)


def lanes_legend(layout: Layout, marks: set[str], width: int = DEFAULT_WIDTH) -> Text:
    items = ["cell = row,col of x[slot] in that thread", "rN under the slot = the 32-bit register it is packed in"]
    if SHARED_MARK in marks:
        items.append(f"'{SHARED_MARK}' another slot holds the same element")
    if IGNORED_MARK in marks:
        items.append(f"'{IGNORED_MARK}' the MMA ignores that slot")
    if NOBODY in marks:
        items.append(f"'{NOBODY}' the slot holds no element")
    return _legend(items, width)


def banded_tables(label: str, row_labels: list[str], col_labels: list[str], cells: list[list[Text]],
                  width: int, what: str) -> list:
    """The cells as tables of as many columns as fit `width`, every band with its row and column labels.

    Each column is as wide as the widest cell or label anywhere, so columns line up from band to band.
    Columns are two spaces apart, or one (compact) when that saves a band and no cell holds a space;
    a band of n columns is label + n * (gap + cell) characters wide."""
    label_width = max(len(label), *(len(r) for r in row_labels))
    col_label_width = max(len(line) for c in col_labels for line in c.split("\n"))
    cell_width = max(col_label_width, *(cell.cell_len for row in cells for cell in row))

    def fitting(gap: int) -> int:
        return max(1, min(len(col_labels), (width - label_width) // (cell_width + gap)))

    per_band, gap = fitting(2), 2
    spaced = any(" " in cell.plain for row in cells for cell in row)
    if not spaced and -(-len(col_labels) // fitting(1)) < -(-len(col_labels) // per_band):
        per_band, gap = fitting(1), 1
    out = []
    for start in range(0, len(col_labels), per_band):
        stop = min(start + per_band, len(col_labels))
        if per_band < len(col_labels):
            out.append(Text(f"{what} {start}..{stop - 1} of 0..{len(col_labels) - 1}", style="bold"))
        # the box's separator is one space; a left padding of gap - 1 widens it
        table = Table(box=HEAD_RULE, show_edge=False, padding=(0, 0), pad_edge=False, header_style="bold")
        table.add_column(label, justify="right", style="bold", width=label_width, no_wrap=True)
        for c in range(start, stop):
            table.add_column(col_labels[c], justify="right", width=cell_width + gap - 1, no_wrap=True)
        for r, row_label in enumerate(row_labels):
            table.add_row(row_label, *cells[r][start:stop])
        out.append(table)
    return out


def grid_view(layout: Layout, lane: int | None = None, width: int = DEFAULT_WIDTH) -> list:
    """The matrix with every holder of each cell, in bands of columns that fit `width`, and its legend."""
    holders = layout.holder_grid()
    cells = [[_holder_text(layout, holders[r][c], lane) if holders[r][c] else Text(NOBODY, style="red")
              for c in range(layout.spec.cols)] for r in range(layout.spec.rows)]
    tables = banded_tables("r\\c", [str(r) for r in range(layout.spec.rows)],
                           [str(c) for c in range(layout.spec.cols)], cells, width, "columns")
    return [grid_legend(layout, holders, lane, width), *tables]


def lanes_view(layout: Layout, lane: int | None = None, width: int = DEFAULT_WIDTH) -> list:
    """For each lane (or only `lane`) its slots and their (row, col); each slot's 32-bit register in the header."""
    regs = layout.register_of_slot()
    counts = layout.holder_count()
    lanes = list(range(layout.threads)) if lane is None else [lane]
    marks: set[str] = set()
    cells = []
    for t in lanes:
        row_cells = []
        for s in range(layout.num_elements):
            r, c = layout.row[t, s], layout.col[t, s]
            if r == NO_ELEMENT:
                marks.add(NOBODY)
                row_cells.append(Text(NOBODY, style="dim"))
                continue
            mark = (SHARED_MARK if counts[r, c] > 1 else "") + (IGNORED_MARK if _ignored(layout, t, s) else "")
            marks.update(mark)
            row_cells.append(Text(f"{r},{c}{mark}", style=lane_style(t, None, layout.threads)))
        cells.append(row_cells)
    tables = banded_tables("thread", [str(t) for t in lanes],
                           [f"x{s}\nr{regs[s]}" for s in range(layout.num_elements)], cells, width, "slots")
    return [lanes_legend(layout, marks, width), *tables]


def layout_view(layout: Layout, view: str = "grid", lane: int | None = None, width: int = DEFAULT_WIDTH) -> Group:
    """Header, legend and tables of one layout, laid out for `width` columns."""
    body = grid_view(layout, lane, width) if view == "grid" else lanes_view(layout, lane, width)
    return Group(header(layout, width), *body)


__all__ = ["layout_view", "grid_view", "lanes_view", "header", "banded_tables", "lane_style"]
