"""Triton linear-layout form of a layout: bases over GF(2) for the register, lane and warp bits.

Triton's linear layouts map the bits of (register, lane, warp) to (row, col) by XOR: the element of an
index is the XOR of the basis vectors of its set bits. A basis vector is the (row, col) of the index
with only that bit set. A zero vector is a broadcast bit (Triton's own name for it): WMMA f16 A's
slots 8-15 repeat slots 0-7, so register bit 3 has the basis [0, 0], and the form is exact.
The register index here is the fragment slot (one element per slot, as Triton counts registers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .tile import NoExportForm, mapping_comment, provenance, title

IN_DIMS = ("register", "lane", "warp")
WARP_SIZE = 32


@dataclass(frozen=True)
class LinearLayout:
    """bases[dim][bit] = (row, col) contributed by that bit of the dim's index."""

    bases: dict[str, tuple[tuple[int, int], ...]]
    rows: int
    cols: int

    def __call__(self, thread, slot):
        """(row, col) of (thread, slot) by XOR of the set bits' bases; numpy arrays broadcast."""
        thread = np.asarray(thread, dtype=np.int64)
        slot = np.asarray(slot, dtype=np.int64)
        index = {"register": slot, "lane": thread % WARP_SIZE, "warp": thread // WARP_SIZE}
        row = np.zeros(np.broadcast(thread, slot).shape, dtype=np.int64)
        col = row.copy()
        for dim in IN_DIMS:
            for bit, (r, c) in enumerate(self.bases[dim]):
                on = (index[dim] >> bit) & 1
                row = row ^ (on * r)
                col = col ^ (on * c)
        return row, col

    def to_json(self) -> dict:
        return {"bases": {dim: [list(b) for b in self.bases[dim]] for dim in IN_DIMS}, "out_dims": ["row", "col"]}


def _bits(n: int, what: str, layout) -> int:
    if n < 1 or n & (n - 1):
        raise NoExportForm(f"{title(layout)} has no linear layout: {n} {what} is not a power of two")
    return n.bit_length() - 1


def to_linear(layout) -> LinearLayout:
    """The linear layout of `layout`, or NoExportForm naming the first (thread, slot) where it is not linear."""
    row = np.asarray(layout.row, dtype=np.int64)
    col = np.asarray(layout.col, dtype=np.int64)
    threads, slots = row.shape
    if (row < 0).any():
        raise NoExportForm(f"{title(layout)} has no linear layout: {int(np.sum(row < 0))} slots hold no element, "
                           "and a linear layout maps every index to an element")
    reg_bits = _bits(slots, "slots", layout)
    lane_count = min(threads, WARP_SIZE)
    lane_bits = _bits(lane_count, "threads", layout)
    warp_bits = _bits(threads // lane_count, "warps", layout)
    if row[0, 0] or col[0, 0]:
        raise NoExportForm(f"{title(layout)} has no linear layout: thread 0 slot 0 holds "
                           f"({int(row[0, 0])}, {int(col[0, 0])}), and a linear map sends 0 to (0, 0)")

    def at(thread: int, slot: int) -> tuple[int, int]:
        return int(row[thread, slot]), int(col[thread, slot])

    bases = {
        "register": tuple(at(0, 1 << b) for b in range(reg_bits)),
        "lane": tuple(at(1 << b, 0) for b in range(lane_bits)),
        "warp": tuple(at(WARP_SIZE << b, 0) for b in range(warp_bits)),
    }
    found = LinearLayout(bases, layout.spec.rows, layout.spec.cols)
    t, s = np.meshgrid(np.arange(threads), np.arange(slots), indexing="ij")
    got_row, got_col = found(t, s)
    bad = np.argwhere((got_row != row) | (got_col != col))
    if len(bad):
        bt, bs = (int(x) for x in bad[0])
        raise NoExportForm(
            f"{title(layout)} is not linear over GF(2): thread {bt} slot {bs} holds {at(bt, bs)} but the XOR "
            f"of its bits' bases gives ({int(got_row[bt, bs])}, {int(got_col[bt, bs])}) "
            f"({len(bad)} of {threads * slots} slots differ)")
    return found


def triton_snippet(layout, found: LinearLayout | None = None) -> str:
    """Python that builds the layout with Triton's own API (Gluon's DistributedLinearLayout, Triton 3.4+)."""
    found = found or to_linear(layout)
    src = provenance(layout)
    where = src.get("kind", "?") + (f" {src['gpu_name']}" if src.get("gpu_name") else "")

    def listed(dim: str) -> str:
        return "[" + ", ".join(f"[{r}, {c}]" for r, c in found.bases[dim]) + "]"

    warps = 1 << len(found.bases["warp"])
    return "\n".join([
        "from triton.experimental.gluon import language as gl",
        "",
        f"# {title(layout)}: {mapping_comment(layout)}; bases are [row, col] (dim0, dim1); from {where}",
        f"# num_warps={warps}; with more warps, add [0, 0] warp bases (broadcast) or tile the layout",
        "layout = gl.DistributedLinearLayout(",
        f"    reg_bases={listed('register')},",
        f"    lane_bases={listed('lane')},",
        f"    warp_bases={listed('warp')},",
        "    block_bases=[],",
        f"    shape=[{layout.spec.rows}, {layout.spec.cols}],",
        ")",
        "",
    ])


def render(layout, fmt: str = "text") -> str:
    """`text`: the bases, one line per dim; `json`: {"bases": ..., "out_dims": ["row", "col"]}; `python`: the snippet."""
    found = to_linear(layout)
    if fmt == "json":
        return json.dumps(found.to_json())
    if fmt == "python":
        return triton_snippet(layout, found)
    from ..layouts.resolve import source_line

    lines = [f"# {title(layout)}: {mapping_comment(layout)}, linear over GF(2), out dims (row, col)",
             f"# source: {source_line(layout.source, with_note=False)}"]
    for dim in IN_DIMS:
        lines.append(f"{dim:8s} " + " ".join(f"[{r},{c}]" for r, c in found.bases[dim]))
    return "\n".join(lines) + "\n"


def is_linear(layout) -> bool:
    try:
        to_linear(layout)
    except NoExportForm:
        return False
    return True
