"""What to feed the probe kernels and how to read their output, one plan per method (pure numpy).

Three independent methods, each decoded into logical (row, col) coordinates:
- load:   A/B: load a matrix whose entries are their own index, dump each lane's x[i]; every holder shows.
          Accumulator: fill slot i of lane l with a (lane, slot) code and store it.
- mma:    fill the slots with (lane, slot) codes, multiply by an identity-like partner, store D.
- onehot: one slot of one lane is 1, all else 0; D shows the element the MMA reads it as, or
          nothing when the MMA ignores that slot.
Codes wider than the element type holds exactly go in several passes (base-`CODE_BASE` digits).
Thread counts come from the spec (32 for a warp-wide fragment, 128 for a warpgroup's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ProbeError
from ..layouts.layout import NO_ELEMENT, UNKNOWN
from ..layouts.spec import CODE_BASE, ELEMENT_BITS, FragmentSpec
from .codes import POISON, digits, memory_positions, passes_needed, undigits, unpack_slots


def _partner_inputs(spec: FragmentSpec) -> tuple[np.ndarray, int]:
    """Identity-like partner matrices in memory order, (selections, elements), int 0/1.

    Probing A (M x K): partner B (K x N, col-major), S_j[k, n] = 1 iff k == j*N + n, so D[m, n] = A[m, j*N + n].
    Probing B (K x N): partner A (M x K, row-major), S_j[m, k] = 1 iff k == j*M + m, so D[m, n] = B[j*M + m, n].
    """
    m, n, k = spec.mnk
    if spec.frag not in ("matrix_a", "matrix_b"):
        return np.zeros((1, 1), dtype=np.int32), 1
    free = n if spec.frag == "matrix_a" else m       # the partner dimension that selects k
    selections = math.ceil(k / free)
    # pos[k, f]: where the partner's element (k, f) of B, or (f, k) of A, sits in memory
    pos = memory_positions(k, n, "col") if spec.frag == "matrix_a" else memory_positions(m, k, "row").T
    out = np.zeros((selections, k * free), dtype=np.int32)
    for j in range(selections):
        for f in range(free):
            if j * free + f < k:
                out[j, pos[j * free + f, f]] = 1
    return out, selections


# ---- per-method plans: inputs to build, outputs to decode ----------------------------------------

@dataclass
class LoadPlan:
    spec: FragmentSpec
    storage: int  # storage elements per lane (x[] length)
    slots: int    # logical slots per lane

    @property
    def base(self) -> int:
        return CODE_BASE[self.spec.dtype]

    @property
    def passes(self) -> int:
        if self.spec.frag == "accumulator":
            return passes_needed(self.spec.threads * self.slots + 1, self.base)
        return passes_needed(self.spec.rows * self.spec.cols, self.base)

    def inputs(self) -> np.ndarray:
        s = self.spec
        if s.frag == "accumulator":  # slot codes, 1-based so that 0 means 'no slot'
            codes = np.arange(s.threads * self.slots).reshape(s.threads, self.slots) + 1
            return digits(codes, self.base, self.passes).reshape(-1)
        index = np.arange(s.rows * s.cols).reshape(s.rows, s.cols)  # logical row-major index
        mem = np.zeros((self.passes, s.rows * s.cols), dtype=np.int32)
        mem[:, memory_positions(s.rows, s.cols, s.layout).reshape(-1)] = digits(index, self.base, self.passes).reshape(self.passes, -1)
        return mem.reshape(-1)

    def output_size(self) -> int:
        s = self.spec
        per_pass = s.rows * s.cols if s.frag == "accumulator" else s.threads * self.storage
        return self.passes * per_pass

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        out = np.asarray(out).reshape(self.passes, -1)
        _check_written(out, "load")
        if s.frag == "accumulator":
            row, col = _decode_stored(s, self.slots, undigits(out, self.base), "load")
            return row, col, np.full_like(row, UNKNOWN, dtype=np.int8)
        values = unpack_slots(out.reshape(self.passes, s.threads, self.storage), ELEMENT_BITS[s.dtype], self.slots)
        index = undigits(values, self.base)  # (threads, slots)
        valid = (index >= 0) & (index < s.rows * s.cols)
        row = np.where(valid, index // s.cols, NO_ELEMENT)
        col = np.where(valid, index % s.cols, NO_ELEMENT)
        return row, col, np.full(row.shape, UNKNOWN, dtype=np.int8)


@dataclass
class MmaPlan:
    spec: FragmentSpec
    storage: int
    slots: int

    @property
    def base(self) -> int:
        return CODE_BASE[self.spec.dtype]

    @property
    def passes(self) -> int:
        return passes_needed(self.spec.threads * self.slots + 1, self.base)

    def slot_codes(self) -> np.ndarray:
        return (np.arange(self.spec.threads * self.slots) + 1).astype(np.int32)  # 1-based: 0 in D means no slot

    def partners(self) -> tuple[np.ndarray, int]:
        return _partner_inputs(self.spec)

    def output_size(self) -> int:
        m, n, k = self.spec.mnk
        return self.passes * self.partners()[1] * m * n

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        m, n, k = s.mnk
        selections = self.partners()[1]
        out = np.asarray(out).reshape(self.passes, selections, m * n)
        _check_written(out, "mma")
        codes = undigits(out, self.base)  # (selections, m*n)
        if s.frag == "accumulator":
            row, col = _decode_stored(s, self.slots, codes[0], "mma")
        else:
            element_codes = _place_products(s, codes.reshape(selections, m, n))
            row, col = _codes_to_slots(s, self.slots, element_codes, "mma")
        reads = np.where(row != NO_ELEMENT, 1, 0).astype(np.int8)
        return row, col, reads


@dataclass
class OnehotPlan:
    spec: FragmentSpec
    storage: int
    slots: int

    def partners(self) -> tuple[np.ndarray, int]:
        return _partner_inputs(self.spec)

    def blocks(self) -> int:
        return self.spec.threads * self.slots * self.partners()[1]

    def output_size(self) -> int:
        m, n, k = self.spec.mnk
        return self.blocks() * m * n

    def decode(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.spec
        m, n, k = s.mnk
        selections = self.partners()[1]
        out = np.asarray(out).reshape(s.threads, self.slots, selections, m * n)
        _check_written(out, "onehot")
        row = np.full((s.threads, self.slots), NO_ELEMENT, dtype=np.int32)
        col = row.copy()
        for lane, slot in np.ndindex(s.threads, self.slots):
            d = out[lane, slot]
            hits = np.argwhere(d != 0)
            if len(hits) == 0:
                continue  # the MMA ignores this slot
            if len(hits) > 1 or d[tuple(hits[0])] != 1:
                raise ProbeError(f"onehot {s.key}: lane {lane} slot {slot} shows up {len(hits)} times "
                                 f"(values {sorted(set(d[d != 0].tolist()))}); expected one element")
            j, pos = (int(v) for v in hits[0])
            if s.frag == "accumulator":
                r, c = _stored_element(s, pos)
            else:
                r, c = _product_element(s, j, pos // n, pos % n)
            row[lane, slot], col[lane, slot] = r, c
        reads = np.where(row != NO_ELEMENT, 1, 0).astype(np.int8)
        return row, col, reads


PLANS = {"load": LoadPlan, "mma": MmaPlan, "onehot": OnehotPlan}


def _check_written(out: np.ndarray, method: str) -> None:
    if np.any(out == POISON):
        raise ProbeError(f"{method} probe left {int(np.sum(out == POISON))} outputs unwritten")


def _stored_element(spec: FragmentSpec, pos: int) -> tuple[int, int]:
    """Logical (row, col) of memory position `pos` of an M x N matrix stored with spec.layout."""
    m, n, k = spec.mnk
    return (pos // n, pos % n) if spec.layout == "row" else (pos % m, pos // m)


def _product_element(spec: FragmentSpec, j: int, dm: int, dn: int) -> tuple[int, int]:
    """The probed operand's element that D[dm, dn] of selection j shows."""
    m, n, k = spec.mnk
    if spec.frag == "matrix_a":
        return dm, j * n + dn
    return j * m + dm, dn


def _place_products(spec: FragmentSpec, codes: np.ndarray) -> np.ndarray:
    """(selections, M, N) codes of D -> (rows, cols) codes of the probed operand (0 where no selection covers)."""
    grid = np.zeros((spec.rows, spec.cols), dtype=np.int64)
    sel, m, n = codes.shape
    for j in range(sel):
        for dm in range(m):
            for dn in range(n):
                r, c = _product_element(spec, j, dm, dn)
                if r < spec.rows and c < spec.cols:
                    grid[r, c] = codes[j, dm, dn]
    return grid


def _decode_stored(spec: FragmentSpec, slots: int, codes: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a stored M x N accumulator (memory order) -> slot map."""
    m, n, k = spec.mnk
    grid = np.zeros((m, n), dtype=np.int64)
    for pos in range(m * n):
        r, c = _stored_element(spec, pos)
        grid[r, c] = codes[pos]
    return _codes_to_slots(spec, slots, grid, method)


def _codes_to_slots(spec: FragmentSpec, slots: int, grid: np.ndarray, method: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) grid of 1-based (lane*slots + slot + 1) codes -> row/col per slot; each slot may appear once."""
    row = np.full((spec.threads, slots), NO_ELEMENT, dtype=np.int32)
    col = row.copy()
    for (r, c), code in np.ndenumerate(grid):
        if code == 0:
            continue
        if not 1 <= code <= spec.threads * slots:
            raise ProbeError(f"{method} {spec.key}: element ({r}, {c}) holds code {code}, outside 1..{spec.threads * slots}")
        lane, slot = divmod(int(code) - 1, slots)
        if row[lane, slot] != NO_ELEMENT:
            raise ProbeError(f"{method} {spec.key}: lane {lane} slot {slot} appears at ({row[lane, slot]}, "
                             f"{col[lane, slot]}) and ({r}, {c})")
        row[lane, slot], col[lane, slot] = r, c
    return row, col
