"""Terminal views of a layout (rich): the grid of holders and the per-lane slot list, with a header.

Views are computed from the layout's slot map; nothing here measures or stores anything.
"""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..layouts.layout import NO_ELEMENT, Layout

# 16 colours that stay apart on dark and light terminals; lane l uses LANE_COLOURS[l % 16] (lanes
# l and l+16 share a hue and differ in weight).
LANE_COLOURS = (
    "red", "green", "yellow", "blue", "magenta", "cyan", "bright_red", "bright_green",
    "bright_yellow", "bright_blue", "bright_magenta", "bright_cyan", "dark_orange", "purple", "spring_green2", "deep_pink2",
)


def lane_style(lane: int, highlight: int | None) -> str:
    if highlight is not None:
        return "bold reverse " + LANE_COLOURS[lane % 16] if lane == highlight else "dim"
    return LANE_COLOURS[lane % 16] + (" bold" if lane >= 16 else "")


def header(layout: Layout) -> Text:
    s = layout.spec
    text = Text()
    text.append(s.describe(), style="bold")
    text.append(f"  method {layout.method}\n")
    text.append("source: ", style="bold")
    text.append(layout.source.summary())
    if layout.source.kind == "model":
        text.append("  (a model, not a measurement)", style="italic")
    text.append("\n")
    if layout.source.note:
        text.append(f"note: {layout.source.note}\n", style="yellow")
    total = layout.threads * layout.num_elements
    ignored = f"{layout.ignored_slots}" if layout.reads_measured else "not measured"
    text.append(f"slots: {total} ({layout.num_elements} per lane x {layout.threads} lanes); "
                f"duplicates: {layout.duplicate_slots}; ignored by the MMA: {ignored}; "
                f"empty: {layout.empty_slots}; elements with no holder: {layout.missing_elements}")
    return text


def _holder_text(holders: list[tuple[int, int]], highlight: int | None, reads) -> Text:
    """'5.3' = lane 5 slot 3; more slots of the same lane '/11'; other lanes after a space; '~' = the MMA ignores it."""
    cell = Text()
    last_lane = None
    for lane, slot in holders:
        mark = "~" if reads[lane, slot] == 0 else ""
        if lane == last_lane:
            cell.append(f"/{slot}{mark}", style=lane_style(lane, highlight))
        else:
            cell.append(("" if last_lane is None else " ") + f"{lane}.{slot}{mark}", style=lane_style(lane, highlight))
        last_lane = lane
    return cell


GRID_LEGEND = ("cell = lane.slot (x[slot] of that lane); '/s' another slot of the same lane holds it too; "
               "a space separates other lanes; '~' the MMA ignores that slot; '-' nobody holds it")


def grid_view(layout: Layout, lane: int | None = None, width: int = 120) -> list[Table]:
    """The matrix with every holder of each cell, in bands of columns that fit `width`."""
    holders = layout.holder_grid()
    cells = [[_holder_text(holders[r][c], lane, layout.mma_reads) if holders[r][c] else Text("-", style="red")
              for c in range(layout.spec.cols)] for r in range(layout.spec.rows)]
    band = _band(cells, layout.spec.cols, width)
    tables = []
    for start in range(0, layout.spec.cols, band):
        stop = min(start + band, layout.spec.cols)
        title = f"columns {start}..{stop - 1}" if band < layout.spec.cols else None
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
        table.add_column("r\\c", justify="right", style="bold")
        for c in range(start, stop):
            table.add_column(str(c), justify="center", no_wrap=True)
        for r in range(layout.spec.rows):
            table.add_row(str(r), *cells[r][start:stop])
        tables.append(table)
    return tables


def _band(cells: list[list[Text]], columns: int, width: int) -> int:
    """How many columns fit in `width` (each column: widest cell, 2 of padding, 1 separator; 8 for the row label)."""
    widest = max(2, max(len(cell.plain) for row in cells for cell in row))
    return max(1, min(columns, (width - 8) // (widest + 3)))


def lanes_view(layout: Layout, lane: int | None = None, width: int = 120) -> list[Table]:
    """For each lane its slots and their (row, col); each slot's 32-bit register in the header."""
    regs = layout.register_of_slot()
    counts = layout.holder_count()
    lanes = list(range(layout.threads)) if lane is None else [lane]
    cells = []
    for t in lanes:
        row_cells = []
        for s in range(layout.num_elements):
            r, c = layout.row[t, s], layout.col[t, s]
            if r == NO_ELEMENT:
                row_cells.append(Text("-", style="dim"))
                continue
            mark = ("*" if counts[r, c] > 1 else "") + ("~" if layout.mma_reads[t, s] == 0 else "")
            row_cells.append(Text(f"{r},{c}{mark}", style=lane_style(t, None)))
        cells.append(row_cells)
    band = _band(cells, layout.num_elements, width)
    tables = []
    for start in range(0, layout.num_elements, band):
        stop = min(start + band, layout.num_elements)
        title = f"slots {start}..{stop - 1}" if band < layout.num_elements else None
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
        table.add_column("lane", justify="right", style="bold")
        for s in range(start, stop):
            table.add_column(f"x{s}\nr{regs[s]}", justify="center", no_wrap=True)
        for t, row_cells in zip(lanes, cells):
            table.add_row(str(t), *row_cells[start:stop])
        tables.append(table)
    return tables


LANES_LEGEND = ("each cell = row,col of x[slot] in that lane; rN under the slot = the 32-bit register it is "
                "packed in; '*' another slot holds the same element; '~' the MMA ignores that slot")


def layout_view(layout: Layout, view: str = "grid", lane: int | None = None, width: int = 120) -> Group:
    if view == "grid":
        return Group(header(layout), Text(GRID_LEGEND, style="dim"), *grid_view(layout, lane, width))
    return Group(header(layout), Text(LANES_LEGEND, style="dim"), *lanes_view(layout, lane, width))

