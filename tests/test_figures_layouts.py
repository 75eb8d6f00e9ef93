"""Hand-built layouts for the figure tests (the PTX formulas, written out here independently of fraglab)."""

from __future__ import annotations

import numpy as np

from fraglab.catalogue import FragmentSpec, wmma_catalogue
from fraglab.layout import Layout, Source

H200 = Source("atlas", {"gpu_name": "NVIDIA H200", "compute_capability": "90", "captured": "2026-11-20"})


def accumulator_m16n16k16(dtype: str = "f32", layout: str = "row") -> Layout:
    """PTX m16n8 accumulator, two n-tiles: row = g + 8*((i>>1)&1), col = 2t + (i&1) + 8*(i>>2)."""
    lane = np.arange(32)[:, None]
    i = np.arange(8)[None, :]
    g, t = lane >> 2, lane % 4
    row = g + 8 * ((i >> 1) & 1)
    col = 2 * t + (i & 1) + 8 * (i >> 2)
    reads = np.ones((32, 8), dtype=np.int8)
    return Layout(FragmentSpec("wmma", "accumulator", "m16n16k16", dtype, layout), "load", H200, row, col, reads)


def matrix_a_m16n16k16(layout: str = "row") -> Layout:
    """16 slots; slot i+8 repeats slot i, and the MMA reads only slots 0..7."""
    lane = np.arange(32)[:, None]
    i = np.arange(8)[None, :]
    g, t = lane >> 2, lane % 4
    row8 = g + 8 * ((i >> 1) & 1)
    col8 = 2 * t + (i & 1) + 8 * (i >> 2)
    row = np.concatenate([row8, row8], axis=1)
    col = np.concatenate([col8, col8], axis=1)
    reads = np.concatenate([np.ones((32, 8)), np.zeros((32, 8))], axis=1).astype(np.int8)
    return Layout(FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", layout), "load", H200, row, col, reads)


def matrix_b_m16n16k16(layout: str = "col") -> Layout:
    """B (k x n): row(k) = 2t + (i&1) + 8*((i>>1)&1), col(n) = g + 8*(i>>2); slot i+8 repeats slot i, ignored."""
    lane = np.arange(32)[:, None]
    i = np.arange(8)[None, :]
    g, t = lane >> 2, lane % 4
    row8 = 2 * t + (i & 1) + 8 * ((i >> 1) & 1)
    col8 = g + 8 * (i >> 2)
    row = np.concatenate([row8, row8], axis=1)
    col = np.concatenate([col8, col8], axis=1)
    reads = np.concatenate([np.ones((32, 8)), np.zeros((32, 8))], axis=1).astype(np.int8)
    return Layout(FragmentSpec("wmma", "matrix_b", "m16n16k16", "f16", layout), "load", H200, row, col, reads)


def chunked(spec: FragmentSpec, threads: int = 32, copies: int = 1, source: Source = H200) -> Layout:
    """Lane t holds consecutive elements t*ne .. t*ne+ne-1 in memory order (a plausible stand-in)."""
    rows, cols = spec.rows, spec.cols
    ne = max(1, rows * cols // threads)
    e = np.arange(threads)[:, None] * ne + np.arange(ne)[None, :]
    if spec.layout == "row":
        row, col = e // cols, e % cols
    else:
        row, col = e % rows, e // rows
    reads = np.ones((threads, ne), dtype=np.int8)
    if copies > 1:
        row, col = np.tile(row, copies), np.tile(col, copies)
        reads = np.concatenate([reads] + [np.zeros_like(reads)] * (copies - 1), axis=1)
    return Layout(spec, "load", source, row, col, reads)


class FakeAtlas:
    """The Atlas interface generate_all uses: specs(), layout(spec, method), provenance."""

    provenance = {"gpu_name": "NVIDIA H200", "compute_capability": "90", "captured": "2026-11-20"}

    def __init__(self, specs=None):
        self._specs = list(specs) if specs is not None else wmma_catalogue()

    def specs(self):
        return list(self._specs)

    def layout(self, spec, method="load"):
        if spec == FragmentSpec("wmma", "accumulator", "m16n16k16", "f32", "row"):
            return accumulator_m16n16k16()
        if spec == FragmentSpec("wmma", "matrix_a", "m16n16k16", "f16", "row"):
            return matrix_a_m16n16k16()
        copies = 2 if spec.frag != "accumulator" and spec.element_bits == 16 else 1
        return chunked(spec, copies=copies)
