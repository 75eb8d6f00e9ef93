"""Views of a shared-memory report: the bank map (phases x banks, the thread each bank serves in each wavefront)
as 80-column text and as a figure, and the search ranking. Text is ASCII; figures are matplotlib Figures on the
Agg canvas (the CLI decides where they go)."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from ..errors import InputError
from .layout import BANKS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .analysis import SmemReport

BANDS = 2                     # banks 0-15, then 16-31: 16 cells of 4 characters fit 80 columns with the label
CELL = 4
LABEL = 8
LEGEND = ("rows p<phase> w<wavefront>; a cell: the thread whose word the bank serves then",
          "(ldmatrix: the thread giving the row; wgmma: the n-th 16-byte row); * a conflict",
          "(a later word of a bank busy in the phase); + a shared word; . an idle bank")


def check_instruction(report: "SmemReport", index: int) -> None:
    n = len(report.instructions)
    if not 0 <= index < n:
        raise InputError(f"invalid --instruction {index}: this access has instructions 0..{n - 1}",
                         argument="instruction")


def header_lines(report: "SmemReport", index: int) -> list[str]:
    lay, acc = report.layout, report.access
    lines = [f"{lay.spelling} {lay.dtype}  ({lay.rows}x{lay.cols}, {lay.span_bytes} bytes)",
             f"{acc.spelling}: {acc.ptx}" + (f"  fragment {report.fragment}" if report.fragment else "")]
    total = f"{len(report.instructions)} instructions: wavefronts predicted {report.predicted}"
    if report.measured is not None:
        gpu = report.measurement.device.get("gpu_name", "GPU")
        total += f", measured {report.measured} ({gpu})"
    lines.append(total + f", fewest the bytes need {report.minimum}")
    mod = report.models[index]
    one = f"instruction {index}: predicted {mod.wavefronts}"
    measured = report.measured_per_instruction()
    if measured is not None:
        one += f", measured {measured[index]} ({report.measurement.wavefronts[index]:.2f})"
    one += f", fewest {mod.minimum}"
    one += "  conflict-free" if mod.wavefronts == mod.minimum else f"  {mod.wavefronts - mod.minimum} extra"
    lines.append(one)
    differ = report.differing()
    if differ:
        lines.append(f"model and GPU differ on {len(differ)} instruction(s): {', '.join(map(str, differ[:8]))}"
                     + (" ..." if len(differ) > 8 else ""))
    if report.note:
        lines.append(f"note: {report.note}")
    return lines


def _rows(report: "SmemReport", index: int) -> list[tuple[str, list[str]]]:
    """(label, 32 cells) per wavefront of each phase."""
    rows = []
    for p, phase in enumerate(report.models[index].phases):
        layers, shared = phase.layers()
        for k, layer in enumerate(layers):
            cells = []
            for bank in range(BANKS):
                if bank not in layer:
                    cells.append(".")
                    continue
                mark = "*" if k else ("+" if (k, bank) in shared else "")
                if k and (k, bank) in shared:
                    mark = "*"
                cells.append(f"{layer[bank]}{mark}")
            rows.append((f"p{p} w{k}", cells))
    return rows


def bank_map_text(report: "SmemReport", index: int = 0) -> str:
    """The bank map of one instruction in 80 columns: two bands of 16 banks, a row per wavefront of a phase."""
    check_instruction(report, index)
    out = [w for line in header_lines(report, index) for w in textwrap.wrap(line, 80, subsequent_indent="  ")]
    out += list(LEGEND)
    rows = _rows(report, index)
    per = BANKS // BANDS
    for band in range(BANDS):
        banks = range(band * per, (band + 1) * per)
        out.append("")
        out.append("phase".ljust(LABEL) + "".join(f"b{b}".rjust(CELL) for b in banks))
        for label, cells in rows:
            out.append(label.ljust(LABEL) + "".join(cells[b].rjust(CELL) for b in banks))
    return "\n".join(_fit(line) for line in out) + "\n"


def _fit(line: str, width: int = 80) -> str:
    """One line cut to `width` (a long CuTe spelling ends in '...')."""
    line = line.rstrip()
    return line if len(line) <= width else line[:width - 3] + "..."


def search_text(ranked, note: str, access: str, tile: str, dtype: str, top: int = 12) -> str:
    head = f"{access} over a {tile} {dtype} tile: {len(ranked)} candidate layouts; {note}"
    lines = [*textwrap.wrap(head, 80, subsequent_indent="  "), f"best: {ranked[0].layout.spelling}", "",
             f"{'rank':>4}  {'predicted':>9}  {'measured':>8}  {'fewest':>6}  {'pad B':>5}  layout"]
    for i, c in enumerate(ranked[:top]):
        measured = "-" if c.measured is None else str(c.measured)
        spelled = c.layout.spelling
        lines.append(f"{i + 1:>4}  {c.predicted:>9}  {measured:>8}  {c.minimum:>6}  {c.pad_bytes:>5}  {spelled}"[:80])
    if len(ranked) > top:
        lines.append(f"... {len(ranked) - top} more (--format json lists every one)")
    return "\n".join(lines) + "\n"


def bank_map_figure(report: "SmemReport", index: int = 0) -> "Figure":
    """The bank map as a figure: rows = wavefronts of each phase, columns = banks, each cell the thread it serves
    (coloured by thread; conflicts outlined in red, broadcasts marked +)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    check_instruction(report, index)
    rows = _rows(report, index)
    cmap_colors = _colors()
    height = 1.6 + 0.32 * len(rows)
    fig = Figure(figsize=(13, height))
    ax = fig.add_axes((0.06, 0.02, 0.93, 1 - 1.3 / height))
    for y, (label, cells) in enumerate(rows):
        for bank, cell in enumerate(cells):
            if cell == ".":
                continue
            thread = int(cell.rstrip("*+"))
            conflict = cell.endswith("*")
            ax.add_patch(Rectangle((bank, y), 1, 1, facecolor=cmap_colors[thread % len(cmap_colors)],
                                   edgecolor="#d62728" if conflict else "white", linewidth=2.2 if conflict else 0.8))
            ax.text(bank + 0.5, y + 0.5, cell, ha="center", va="center", fontsize=7.5)
    ax.set_xlim(0, BANKS)
    ax.set_ylim(len(rows), 0)
    ax.set_xticks([b + 0.5 for b in range(BANKS)], [str(b) for b in range(BANKS)], fontsize=7)
    ax.set_yticks([y + 0.5 for y in range(len(rows))], [label for label, _ in rows], fontsize=7)
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    ax.set_xlabel("bank   (red outline: a conflict, the bank's second or later word in the phase; + a shared word)",
                  fontsize=8)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.suptitle("\n".join(header_lines(report, index)[:4]), fontsize=9, y=1 - 0.12 / height, va="top")
    return fig


def _colors() -> list:
    from matplotlib import colormaps

    return [colormaps["tab20"](i / 19.999) for i in range(20)]


__all__ = ["bank_map_text", "bank_map_figure", "search_text", "header_lines", "check_instruction"]
