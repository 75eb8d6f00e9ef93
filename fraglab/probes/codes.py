"""Probe codes: numbers that survive the element type exactly, written in base-CODE_BASE digits over passes,
plus memory order and sub-byte unpacking. Pure numpy."""

from __future__ import annotations

import math

import numpy as np

POISON = -123456789  # written into every output before a launch; left over means never written


def passes_needed(count: int, base: int) -> int:
    """Digits in `base` needed to write every code 0..count-1."""
    return max(1, math.ceil(math.log(count, base) - 1e-12)) if count > 1 else 1


def digits(codes: np.ndarray, base: int, passes: int) -> np.ndarray:
    """(passes, *codes.shape): digit p of every code, least significant first."""
    return np.stack([(codes // base**p) % base for p in range(passes)]).astype(np.int32)


def undigits(parts: np.ndarray, base: int) -> np.ndarray:
    """Inverse of digits along axis 0."""
    total = np.zeros(parts.shape[1:], dtype=np.int64)
    for p in range(parts.shape[0]):
        total += parts[p].astype(np.int64) * base**p
    return total


def memory_positions(rows: int, cols: int, layout: str) -> np.ndarray:
    """(rows, cols) array: where logical element (r, c) sits in memory with the given layout (ld = the minor extent)."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return (r * cols + c) if layout == "row" else (c * rows + r)


def unpack_slots(raw: np.ndarray, bits: int, slots: int) -> np.ndarray:
    """(..., storage) raw words -> (..., slots) logical values; packed types keep slot s in word s//per, low bits first."""
    if bits >= 8:
        return raw
    per = 32 // bits
    words = raw.astype(np.int64) & 0xFFFFFFFF
    s = np.arange(slots)
    return ((words[..., s // per] >> ((s % per) * bits)) & ((1 << bits) - 1)).astype(np.int32)
