"""A layout someone wrote, read into the slot map every form is compared on: (thread, slot) -> (row, col).

Each parser (cute_text, triton_text, table_text, header_eval) returns a GivenLayout: row/col arrays of shape
(threads, slots) in fraglab's tile (A: M x K, B: K x N, C: M x N), -1 where a slot holds nothing. An element
outside the tile is kept as written, so the comparison shows it instead of refusing the whole layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..layouts.layout import SlotShape

MAX_SLOTS = 1 << 17  # threads x slots of a given layout: past every fragment fraglab ships (16384)


@dataclass(frozen=True)
class GivenTile:
    """The tile a given layout is read against (the measured fragment's), as the exports read a spec."""

    api: str
    frag: str
    shape: str
    dtype: str
    layout: str
    rows: int
    cols: int


@dataclass
class GivenLayout(SlotShape):
    """The (thread, slot) -> (row, col) map a form describes; `form` names it, `text` is its one-line spelling."""

    form: str
    text: str
    spec: GivenTile
    row: np.ndarray
    col: np.ndarray
    notes: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        self.row = np.asarray(self.row, dtype=np.int64)
        self.col = np.asarray(self.col, dtype=np.int64)
        self.source = {"kind": f"given {self.form}"}


def tile_of(layout) -> GivenTile:
    spec = layout.spec
    return GivenTile(spec.api, spec.frag, spec.shape, spec.dtype, spec.layout, spec.rows, spec.cols)


def check_size(threads: int, slots: int, form: str) -> None:
    """A layout of at least one (thread, slot) and no more than MAX_SLOTS of them."""
    if threads < 1 or slots < 1 or threads * slots > MAX_SLOTS:
        raise InputError(f"invalid --{form}: it has {threads} threads x {slots} slots; a fragment has 1 to "
                         f"{MAX_SLOTS} (thread, slot) pairs", argument=form)


def grid(threads: int, slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (thread, slot) as two (threads, slots) arrays."""
    return np.meshgrid(np.arange(threads, dtype=np.int64), np.arange(slots, dtype=np.int64), indexing="ij")
