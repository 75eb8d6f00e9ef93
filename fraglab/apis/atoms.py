"""Documented PTX `mma` fragments as coordinate functions, shared by the WMMA, mma.sync and wgmma families.

Each atom maps (g, t, i) -> (row, col) where g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group) and
i = the slot (PTX ISA, "Matrix fragments for mma.m16n8k*" and mma.m8n8k*). `tiles` and `transposed` compose
atoms into bigger fragments; `evaluate` turns a composition into a Layout.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..layouts.layout import UNKNOWN, Layout, Source
from ..layouts.spec import FragmentSpec

Coord = Callable[[int, int, int], tuple[int, int]]  # (g, t, i) -> (row, col)


# m16n8k16 .f16/.bf16
def a_m16n8k16_f16(g, t, i):  # (T32, V8) -> (M16, K16)
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * ((i >> 2) & 1)


def b_m16n8k16_f16(g, t, i):  # (T32, V4) -> (K16, N8)
    return 2 * t + (i & 1) + 8 * ((i >> 1) & 1), g


def c_m16n8(g, t, i):  # (T32, V4) -> (M16, N8), f16/f32/s32 accumulators of every m16n8k* shape
    return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1)


# m16n8k16 .s8/.u8 (and m16n8k32 per 16 columns)
def a_m16n8k16_i8(g, t, i):  # (T32, V8) -> (M16, K16)
    return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3)


def b_m16n8k16_i8(g, t, i):  # (T32, V4) -> (K16, N8)
    return 4 * t + (i & 3), g


# m16n8k8 .tf32
def a_m16n8k8_tf32(g, t, i):  # (T32, V4) -> (M16, K8)
    return g + 8 * (i & 1), t + 4 * ((i >> 1) & 1)


def b_m16n8k8_tf32(g, t, i):  # (T32, V2) -> (K8, N8)
    return t + 4 * (i & 1), g


# m8n8k4 .f64 (width 1), m8n8k32 .s4/.u4 (width 8), m8n8k128 .b1 (width 32)
def a_m8n8(width: int) -> Coord:  # (T32, V width) -> (M8, K 4*width)
    return lambda g, t, i: (g, width * t + i)


def b_m8n8(width: int) -> Coord:  # (T32, V width) -> (K 4*width, N8)
    return lambda g, t, i: (width * t + i, g)


def c_m8n8(g, t, i):  # (T32, V2) -> (M8, N8)
    return g, 2 * t + i


def tiles(base: Coord, per_tile: int, row_step: int, col_step: int) -> Coord:
    """Atoms side by side: slot i is slot i % per_tile of tile i // per_tile, offset by the tile's step."""
    def coord(g, t, i):
        r, c = base(g, t, i % per_tile)
        tile = i // per_tile
        return r + tile * row_step, c + tile * col_step
    return coord


def transposed(coord: Coord) -> Coord:
    return lambda g, t, i: coord(g, t, i)[::-1]


def evaluate(spec: FragmentSpec, method: str, source: Source, coord: Coord, distinct: int, slots: int) -> Layout:
    """The Layout of `coord` over spec.threads lanes and `slots` slots; slots past `distinct` repeat
    slot i % distinct (Volta-era header sizes), and only the first `distinct` are known to be read."""
    threads = spec.threads
    row = np.zeros((threads, slots), dtype=np.int32)
    col = np.zeros((threads, slots), dtype=np.int32)
    reads = np.full((threads, slots), UNKNOWN, dtype=np.int8)
    for lane in range(threads):
        g, t = (lane % 32) >> 2, lane & 3
        for i in range(slots):
            row[lane, i], col[lane, i] = coord(g, t, i % distinct)
        reads[lane, :distinct] = 1
    return Layout(spec, method, source, row, col, reads)
