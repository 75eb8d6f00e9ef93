"""Shared-memory tile layouts as data: (shape):(stride) in elements of a dtype, a CuTe swizzle composed on top.

A layout maps a tile coordinate (row, col) to an element offset; `Sw<B,M,S> o L` then XORs bits
[M+S, M+S+B) of that offset into bits [M, M+B) (CuTe's Swizzle). Each of the two modes (rows, cols) may be
hierarchical, e.g. ((8,8),(64,2)):((64,512),(1,4096)), read colexicographically as CuTe does. Byte offset =
element offset * element bytes. Parsing and printing follow CuTe's spelling; `check_layout` is the one
validator (a swizzle that does not fit, overlapping elements, a tile too big for the probe).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

import numpy as np

from ..errors import InputError, check_choice

# Element bytes of the dtypes a tile may hold.
DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "tf32": 4, "s32": 4, "f64": 8, "s8": 1, "u8": 1, "e4m3": 1,
               "e5m2": 1}
BANKS, BANK_BYTES = 32, 4
MAX_TILE_BYTES = 64 * 1024   # the probe keeps one copy of the tile per storing warp: 64 KiB leaves room for 3
CANONICAL_SWIZZLES = {"interleave": 0, "32B": 1, "64B": 2, "128B": 3}   # Sw<B,...>: B per wgmma swizzle mode
CANONICAL_MAJORS = ("k", "mn")

Mode = Union[int, tuple]


@dataclass(frozen=True)
class Swizzle:
    """CuTe Swizzle<B,M,S>: offset ^ ((offset >> S) & (((1 << B) - 1) << M))."""

    bits: int
    base: int
    shift: int

    def apply(self, offset):
        mask = ((1 << self.bits) - 1) << (self.base + self.shift)
        return offset ^ ((offset & mask) >> self.shift)

    @property
    def spelling(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


def _flat(mode: Mode) -> tuple[int, ...]:
    return (mode,) if isinstance(mode, int) else tuple(x for m in mode for x in _flat(m))


def _spell(mode: Mode) -> str:
    return str(mode) if isinstance(mode, int) else "(" + ",".join(_spell(m) for m in mode) + ")"


def _mode_offsets(shape: Mode, stride: Mode, n: int) -> np.ndarray:
    """Offsets of coordinates 0..n-1 of one (possibly nested) mode, colexicographic as CuTe reads it."""
    idx = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for extent, step in zip(_flat(shape), _flat(stride)):
        out += (idx % extent) * step
        idx //= extent
    return out


@dataclass(frozen=True)
class SmemLayout:
    """(rows, cols) tile of `dtype`: element offset of (r, c) = swizzle(row_offset(r) + col_offset(c))."""

    shape: tuple[Mode, Mode]
    stride: tuple[Mode, Mode]
    dtype: str = "f16"
    swizzle: Swizzle | None = None

    @property
    def rows(self) -> int:
        return int(np.prod(_flat(self.shape[0])))

    @property
    def cols(self) -> int:
        return int(np.prod(_flat(self.shape[1])))

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    def unswizzled(self) -> np.ndarray:
        """(rows, cols) element offsets before the swizzle."""
        r = _mode_offsets(self.shape[0], self.stride[0], self.rows)
        c = _mode_offsets(self.shape[1], self.stride[1], self.cols)
        return r[:, None] + c[None, :]

    def offsets(self) -> np.ndarray:
        """(rows, cols) element offsets: which element of shared memory holds tile element (r, c)."""
        off = self.unswizzled()
        return off if self.swizzle is None else self.swizzle.apply(off)

    def byte_offsets(self) -> np.ndarray:
        return self.offsets() * self.element_bytes

    @property
    def span_bytes(self) -> int:
        """Bytes from the tile's base to its last element's end (padding included)."""
        return int(self.offsets().max() + 1) * self.element_bytes

    @property
    def spelling(self) -> str:
        """CuTe's spelling, e.g. Sw<3,3,3> o (8,64):(64,1)."""
        body = f"({_spell(self.shape[0])},{_spell(self.shape[1])}):({_spell(self.stride[0])},{_spell(self.stride[1])})"
        return body if self.swizzle is None else f"{self.swizzle.spelling} o {body}"

    def describe(self) -> str:
        return f"{self.spelling} {self.dtype}"


# ---- parsing ---------------------------------------------------------------------------------------
_TOKEN = re.compile(r"\s*(?:(\()|(\))|(,)|_?(\d+))")
_SWIZZLE = re.compile(r"^\s*Sw\s*<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\s*o\s*(.*)$", re.S)
_EXAMPLE = "e.g. 'Sw<3,3,3> o (8,64):(64,1)' or '(64,64):(72,1)'"


def _parse_tuple(text: str, what: str) -> Mode:
    """A CuTe int-tuple: 8, (8,64), ((8,2),64); CuTe's static '_8' is read as 8."""
    pos, stack, current = 0, [], None
    tokens = []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise InputError(f"invalid --layout: cannot read {what} {text.strip()!r} at {text[pos:].strip()[:12]!r}; "
                             f"{_EXAMPLE}", argument="layout")
        tokens.append(m)
        pos = m.end()
    for m in tokens:
        if m.group(1):
            stack.append([])
            continue
        if m.group(2):
            if not stack or not stack[-1]:
                raise InputError(f"invalid --layout: unbalanced or empty parentheses in {what} {text.strip()!r}; "
                                 f"{_EXAMPLE}", argument="layout")
            item = tuple(stack.pop())
        elif m.group(4):
            item = int(m.group(4))
        else:
            continue
        if stack:                      # a closed tuple or a number goes into the tuple still open
            stack[-1].append(item)
        elif current is None:
            current = item
        else:
            raise InputError(f"invalid --layout: {what} {text.strip()!r} is not one tuple", argument="layout")
    if stack or current is None:
        raise InputError(f"invalid --layout: unbalanced parentheses in {what} {text.strip()!r}; {_EXAMPLE}",
                         argument="layout")
    return current


def _same_profile(a: Mode, b: Mode) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int)
    return len(a) == len(b) and all(_same_profile(x, y) for x, y in zip(a, b))


def parse_layout(text: str, dtype: str = "f16") -> SmemLayout:
    """`Sw<B,M,S> o (shape):(stride)` (the swizzle optional) -> a checked SmemLayout of `dtype`."""
    check_dtype(dtype)
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"invalid --layout: empty; {_EXAMPLE}", argument="layout")
    swizzle = None
    body = text
    m = _SWIZZLE.match(text)
    if m:
        swizzle = Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        body = m.group(4)
    elif "sw" in text.lower().split(":")[0] or "<" in text:
        raise InputError(f"invalid --layout {text.strip()!r}: a swizzle is spelled Sw<B,M,S> o ...; {_EXAMPLE}",
                         argument="layout")
    if body.count(":") != 1:
        raise InputError(f"invalid --layout {text.strip()!r}: expected (shape):(stride); {_EXAMPLE}",
                         argument="layout")
    shape_text, stride_text = body.split(":")
    shape, stride = _parse_tuple(shape_text, "shape"), _parse_tuple(stride_text, "stride")
    if isinstance(shape, int) or len(shape) != 2:
        raise InputError(f"invalid --layout {text.strip()!r}: a tile has two modes (rows, cols); {_EXAMPLE}",
                         argument="layout")
    if not _same_profile(shape, stride):
        raise InputError(f"invalid --layout {text.strip()!r}: shape and stride must have the same nesting",
                         argument="layout")
    layout = SmemLayout((shape[0], shape[1]), (stride[0], stride[1]), dtype, swizzle)
    check_layout(layout)
    return layout


# ---- constructors ----------------------------------------------------------------------------------
def row_major(rows: int, cols: int, dtype: str = "f16", pad: int = 0, swizzle: Swizzle | None = None) -> SmemLayout:
    """(rows, cols):(cols + pad, 1): a row-major tile, each row padded by `pad` elements."""
    layout = SmemLayout((rows, cols), (cols + pad, 1), dtype, swizzle)
    check_layout(layout)
    return layout


def _mode(inner: int, count: int, inner_stride: int, outer_stride: int) -> tuple[Mode, Mode]:
    return (inner, inner_stride) if count == 1 else ((inner, count), (inner_stride, outer_stride))


def wgmma_canonical(dtype: str, swizzle: str, major: str, rows: int | None = None,
                    cols: int | None = None) -> SmemLayout:
    """The wgmma canonical (MN, K) tile: its atom (8 rows x `swizzle` bytes K-major, or `swizzle` bytes x 8
    MN-major; interleave: 16-byte core matrices) tiled MN first, as CuTe's tile_to_shape places GMMA atoms."""
    check_dtype(dtype)
    check_choice(swizzle, CANONICAL_SWIZZLES, "layout", name="wgmma swizzle")
    check_choice(major, CANONICAL_MAJORS, "layout", name="wgmma major")
    e = DTYPE_BYTES[dtype]
    b = CANONICAL_SWIZZLES[swizzle]
    width = (16 << b) // e                       # elements along the contiguous mode in one atom
    m_bits = (16 // e).bit_length() - 1          # 16-byte units: Sw<B, log2(16/e), 3>
    sw = Swizzle(b, m_bits, 3) if b else None
    atom_rows, atom_cols = (8, width) if major == "k" else (width, 8)
    rows = atom_rows if rows is None else rows
    cols = atom_cols if cols is None else cols
    if rows % atom_rows or cols % atom_cols:
        raise InputError(f"invalid --tile {rows}x{cols}: a {swizzle} {major.upper()}-major {dtype} tile is made of "
                         f"{atom_rows}x{atom_cols} atoms", argument="tile")
    atom = atom_rows * atom_cols
    if major == "k":   # ((8,m),(w,k)) : ((w, 8w), (1, rows*w))
        r = _mode(8, rows // 8, width, 8 * width)
        c = _mode(width, cols // width, 1, rows * width)
    else:              # ((w,m),(8,k)) : ((1, 8w), (w, rows*8))
        r = _mode(width, rows // width, 1, atom)
        c = _mode(8, cols // 8, width, rows * 8)
    layout = SmemLayout((r[0], c[0]), (r[1], c[1]), dtype, sw)
    check_layout(layout)
    return layout


# ---- the one validator -----------------------------------------------------------------------------
def check_dtype(dtype: str) -> None:
    check_choice(dtype, tuple(DTYPE_BYTES), "dtype", name="--dtype")


def check_layout(layout: SmemLayout) -> None:
    """InputError (argument 'layout') for a tile the model and the probe cannot take, in one line."""
    check_dtype(layout.dtype)
    spelled = layout.spelling
    if any(x <= 0 for x in (*_flat(layout.shape[0]), *_flat(layout.shape[1]))):
        raise InputError(f"invalid --layout {spelled!r}: every extent must be positive", argument="layout")
    if any(x < 0 for x in (*_flat(layout.stride[0]), *_flat(layout.stride[1]))):
        raise InputError(f"invalid --layout {spelled!r}: strides must not be negative", argument="layout")
    if layout.rows * layout.cols > 1 << 16:
        raise InputError(f"invalid --layout {spelled!r}: {layout.rows}x{layout.cols} elements; at most 65536",
                         argument="layout")
    off = layout.unswizzled()
    if len(np.unique(off)) != off.size:
        raise InputError(f"invalid --layout {spelled!r}: two tile elements share one address (the strides overlap)",
                         argument="layout")
    sw = layout.swizzle
    if sw is not None:
        if sw.bits < 1 or sw.shift < sw.bits:
            raise InputError(f"invalid swizzle {sw.spelling}: CuTe needs B >= 1 and S >= B", argument="layout")
        image = set(off.ravel().tolist())
        moved = sw.apply(off)
        outside = ~np.isin(moved, off)
        if outside.any():
            r, c = (int(x[0]) for x in np.nonzero(outside))
            raise InputError(f"invalid --layout {spelled!r}: the swizzle does not fit: it moves ({r},{c}) from element "
                             f"{int(off[r, c])} to {int(moved[r, c])}, which is not in the tile (a swizzle needs "
                             f"whole {1 << (sw.bits + sw.base + sw.shift)}-element blocks)", argument="layout")
        del image
    if layout.span_bytes > MAX_TILE_BYTES:
        raise InputError(f"invalid --layout {spelled!r}: spans {layout.span_bytes} bytes; the probe takes tiles of "
                         f"at most {MAX_TILE_BYTES}", argument="layout")


__all__ = ["Swizzle", "SmemLayout", "parse_layout", "row_major", "wgmma_canonical", "check_layout", "check_dtype",
           "DTYPE_BYTES", "BANKS", "BANK_BYTES", "MAX_TILE_BYTES", "CANONICAL_SWIZZLES"]
