"""What every export reads from a layout: the slot map as arrays, the tile's names, and the error type.

Exports code against the layout's attributes only (row/col arrays of shape (threads, slots), -1 where
a slot holds no element, and `spec.rows/cols/element_bits/api/frag/shape/dtype`), so any family's
layout - measured, from the atlas, or modelled - goes through the same code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError

NO_ELEMENT = -1

# Tile dimension names per operand, as CuTe comments write them: (T32,V8) -> (M16,K16).
_DIM_NAMES = {"matrix_a": ("M", "K"), "matrix_b": ("K", "N"), "accumulator": ("M", "N")}


class NoExportForm(InputError):
    """The layout has no exact form of the requested kind; `nearest` is the closest form that exists."""

    def __init__(self, message: str, nearest: str = "", argument: str = "to"):
        super().__init__(message + (f"; nearest form: {nearest}" if nearest else ""), argument=argument)
        self.reason = message
        self.nearest = nearest
        self.composed: dict | None = None  # the nearest form as data, where an export has one


def index_map(layout) -> np.ndarray:
    """(threads, slots) column-major tile index row + col * rows (CuTe's convention); -1 where empty."""
    row = np.asarray(layout.row, dtype=np.int64)
    col = np.asarray(layout.col, dtype=np.int64)
    return np.where(row >= 0, row + col * layout.spec.rows, NO_ELEMENT)


def dim_names(layout) -> tuple[str, str]:
    return _DIM_NAMES.get(layout.spec.frag, ("R", "C"))


def mapping_comment(layout) -> str:
    """CuTe's one-line comment: (T32,V8) -> (M16,K16)."""
    r, c = dim_names(layout)
    return f"(T{layout.threads},V{layout.num_elements}) -> ({r}{layout.spec.rows},{c}{layout.spec.cols})"


def title(layout) -> str:
    """One line naming the fragment: `wmma matrix_a m16n16k16 f16 row`, plus the family's extra fields."""
    spec = layout.spec
    words = [spec.api, spec.frag, spec.shape, spec.dtype, spec.layout]
    for extra in ("num", "trans", "swizzle", "major"):
        value = getattr(spec, extra, None)
        if value is not None:
            words.append(f"{extra}={str(value).lower()}")
    return " ".join(str(w) for w in words)


def provenance(layout) -> dict[str, Any]:
    """The layout's source as a flat dict (kind plus whatever provenance it carries)."""
    source = getattr(layout, "source", None)
    if source is None:
        return {}
    return source.to_dict() if hasattr(source, "to_dict") else dict(source)


def register_and_bits(layout, slot: int) -> tuple[int, str]:
    """The 32-bit register a slot is packed in and its bit range there (f64 spans a register pair)."""
    bits = int(layout.spec.element_bits)
    start = slot * bits
    reg = start // 32
    if bits >= 32:
        return reg, f"0-{bits - 1}"  # f64: bits 0-63 of the register pair reg, reg+1
    lo = start % 32
    return reg, f"{lo}-{lo + bits - 1}" if bits > 1 else str(lo)


def warp_of(thread: int) -> int:
    return thread // 32
