"""A CPU model of WMMA layouts on sm_80 and later, composed from the documented PTX `mma` fragments.

The PTX ISA leaves WMMA layouts unspecified; on sm_80+ each WMMA MMA compiles to one or more PTX-level
MMAs (HMMA.16816, IMMA.16816, DMMA.884, ...), so a WMMA fragment is a few PTX fragments side by side.
This module writes those compositions down; the GPU probes check them. Where `mma.h` declares more
slots than the PTX fragments hold (f16 keeps Volta's fragment sizes), the extra slots are modelled as
copies of slot `i % count` and their `mma_reads` is left unknown.

Notation: g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group), i = slot.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from . import __version__
from .catalogue import FragmentSpec
from .layout import UNKNOWN, Layout, Source

MODEL_ARCHITECTURES = ("sm_80", "sm_86", "sm_89", "sm_90")
MODEL_NAME = "PTX mma fragments composed into WMMA tiles"

# Slots per lane that mma.h declares (fragment<...>::num_elements), keyed by (frag, shape, dtype).
_HEADER_SLOTS = {
    ("matrix_a", "m16n16k16", "f16"): 16, ("matrix_b", "m16n16k16", "f16"): 16,
    ("matrix_a", "m32n8k16", "f16"): 16, ("matrix_b", "m32n8k16", "f16"): 16,
    ("matrix_a", "m8n32k16", "f16"): 16, ("matrix_b", "m8n32k16", "f16"): 16,
}


def header_slots(spec: FragmentSpec) -> int:
    """num_elements that mma.h declares for this fragment."""
    if spec.frag == "accumulator":
        return 2 if spec.shape.startswith("m8n8") else 8
    if (spec.frag, spec.shape, spec.dtype) in _HEADER_SLOTS:
        return _HEADER_SLOTS[(spec.frag, spec.shape, spec.dtype)]
    m, n, k = spec.mnk
    return spec.rows * spec.cols // 32


Coord = Callable[[int, int, int], tuple[int, int]]  # (g, t, i) -> (row, col)

# ---- documented PTX fragments --------------------------------------------------------------------
# m16n8k16 .f16/.bf16:  (T32, V8) -> (M16, K16); (T32, V4) -> (K16, N8); (T32, V4) -> (M16, N8)
def _a16(g, t, i): return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * ((i >> 2) & 1)
def _b16(g, t, i): return 2 * t + (i & 1) + 8 * ((i >> 1) & 1), g
def _c16(g, t, i): return g + 8 * ((i >> 1) & 1), 2 * t + (i & 1)
# m16n8k16 .s8/.u8:  A (T32, V8) -> (M16, K16); B (T32, V4) -> (K16, N8)
def _a8(g, t, i): return g + 8 * ((i >> 2) & 1), 4 * t + (i & 3)
def _b8(g, t, i): return 4 * t + (i & 3), g
# m16n8k8 .tf32:  A (T32, V4) -> (M16, K8); B (T32, V2) -> (K8, N8)
def _a_tf32(g, t, i): return g + 8 * (i & 1), t + 4 * ((i >> 1) & 1)
def _b_tf32(g, t, i): return t + 4 * (i & 1), g
# m8n8k4 .f64, m8n8k32 .s4/.u4, m8n8k128 .b1:  A (T32, V) -> (M8, K); B -> (K, N8); C (T32, V2) -> (M8, N8)
def _a_m8n8(width): return lambda g, t, i: (g, width * t + i)
def _b_m8n8(width): return lambda g, t, i: (width * t + i, g)
def _c_m8n8(g, t, i): return g, 2 * t + i


def _tiles(base: Coord, per_tile: int, row_step: int, col_step: int) -> Coord:
    """PTX fragments side by side: slot i is slot i % per_tile of tile i // per_tile, offset by the tile's step."""
    def coord(g, t, i):
        r, c = base(g, t, i % per_tile)
        tile = i // per_tile
        return r + tile * row_step, c + tile * col_step
    return coord


def _transposed(coord: Coord) -> Coord:
    return lambda g, t, i: coord(g, t, i)[::-1]


def _composition(spec: FragmentSpec) -> tuple[Coord, int] | None:
    """(coordinate function, distinct slots) for a fragment, or None where the model does not say."""
    frag, shape, dt = spec.frag, spec.shape, spec.dtype
    c_m16n16 = _tiles(_c16, 4, 0, 8)    # two m16n8 C tiles along N
    c_m32n8 = _tiles(_c16, 4, 16, 0)    # two along M
    # m8n32k16 has no M=8 PTX shape: modelled as the transposed problem D^T = B^T A^T on m32n8k16 tiles.
    c_m8n32 = _transposed(c_m32n8)
    if frag == "accumulator":
        return {
            "m16n16k16": (c_m16n16, 8), "m16n16k8": (c_m16n16, 8), "m32n8k16": (c_m32n8, 8),
            "m8n32k16": (c_m8n32, 8), "m8n8k4": (_c_m8n8, 2), "m8n8k32": (_c_m8n8, 2), "m8n8k128": (_c_m8n8, 2),
        }.get(shape)
    if dt in ("f16", "bf16", "u8", "s8"):
        a, b = (_a16, _b16) if dt in ("f16", "bf16") else (_a8, _b8)
        a_tiles = {"m16n16k16": (a, 8), "m32n8k16": (_tiles(a, 8, 16, 0), 16), "m8n32k16": (_transposed(b), 4)}
        b_tiles = {"m16n16k16": (_tiles(b, 4, 0, 8), 8), "m32n8k16": (b, 4),
                   "m8n32k16": (_transposed(_tiles(a, 8, 16, 0)), 16)}
        return (a_tiles if frag == "matrix_a" else b_tiles).get(shape)
    if dt == "tf32":
        return (_a_tf32, 4) if frag == "matrix_a" else (_tiles(_b_tf32, 2, 0, 8), 4)
    width = {"f64": 1, "u4": 8, "s4": 8, "b1": 32}[dt]
    return (_a_m8n8(width), width) if frag == "matrix_a" else (_b_m8n8(width), width)


def model_source() -> Source:
    return Source("model", {"model": MODEL_NAME, "architectures": list(MODEL_ARCHITECTURES),
                            "fraglab_version": __version__,
                            "basis": "PTX ISA 'Matrix fragments for mma.m16n8k*' and m8n8k*; not measured"})


def model_layout(spec: FragmentSpec, method: str = "load") -> Layout | None:
    """The modelled slot map of a WMMA fragment on sm_80+, or None where the model does not say."""
    found = _composition(spec)
    if found is None:
        return None
    coord, distinct = found
    slots = header_slots(spec)
    row = np.zeros((32, slots), dtype=np.int32)
    col = np.zeros((32, slots), dtype=np.int32)
    reads = np.full((32, slots), UNKNOWN, dtype=np.int8)
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        for i in range(slots):
            row[lane, i], col[lane, i] = coord(g, t, i % distinct)  # slots past `distinct` repeat (Volta-era sizes)
        reads[lane, :distinct] = 1
    return Layout(spec, method, model_source(), row, col, reads)


def model_claims(arch: int) -> bool:
    return f"sm_{arch}" in MODEL_ARCHITECTURES
