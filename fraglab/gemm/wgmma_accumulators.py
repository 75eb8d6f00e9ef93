"""The wgmma accumulator's indexing for the GEMM kernel, generated from fraglab's layout model (never typed into
kernels/gemm/wgmma.cu): each slot's row and column as base bits of the thread index plus per-slot offsets, the
stmatrix plan of a 16-bit D, and the C++ header the kernel build puts in front of its source."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

ACC_N = (64, 80, 96, 128, 160, 192, 224, 256)   # wgmma N the kernel instantiates (one m64nNk16 per consumer per k16 step)

def accumulator_map(n: int) -> np.ndarray:
    """fraglab's wgmma accumulator layout: (128, n // 2, 2) of (row, col)."""
    try:
        from ..apis.wgmma import accumulator_map as model_map
    except ImportError:
        from ..apis.wgmma_model import accumulator_map as model_map
    return np.asarray(model_map(n))


@dataclass(frozen=True)
class AccumulatorIndexing:
    """(row, col) of slot i of thread t == (sum_b bit_b(t) * row_bit[b] + row_off[i], same for col):
    a per-thread base that is additive over the 7 bits of t, plus a per-slot compile-time offset."""
    n: int
    row_bit: tuple[int, ...]
    col_bit: tuple[int, ...]
    row_off: tuple[int, ...]
    col_off: tuple[int, ...]
    pairs_adjacent: bool      # slots 2j, 2j+1: one row, columns c and c+1 with c even (a float2 store)

    def coordinates(self) -> np.ndarray:
        """Re-expand to (128, n // 2, 2), what the kernel computes."""
        t = np.arange(128)[:, None]
        bits = (t >> np.arange(7)[None, :]) & 1
        base_row = bits @ np.array(self.row_bit)
        base_col = bits @ np.array(self.col_bit)
        row = base_row[:, None] + np.array(self.row_off)[None, :]
        col = base_col[:, None] + np.array(self.col_off)[None, :]
        return np.stack([row, col], axis=-1)


def accumulator_indexing(n: int, layout: np.ndarray | None = None) -> AccumulatorIndexing:
    """Decompose a (128, n // 2, 2) accumulator layout (default: fraglab's model) into the kernel's base and
    offset tables; raises ValueError if the decomposition is not exact."""
    lay = accumulator_map(n) if layout is None else np.asarray(layout)
    if lay.shape != (128, n // 2, 2):
        raise ValueError(f"accumulator layout for n={n} has shape {lay.shape}, expected {(128, n // 2, 2)}")
    offsets = lay[0] - lay[0, 0]                        # per slot, relative to slot 0
    base = lay[:, 0] - lay[0, 0]                        # per thread, slot 0
    bit_values = np.array([base[1 << b] for b in range(7)])
    bits = (np.arange(128)[:, None] >> np.arange(7)[None, :]) & 1
    origin = lay[0, 0]
    ix = AccumulatorIndexing(
        n, tuple(int(v) for v in bit_values[:, 0]), tuple(int(v) for v in bit_values[:, 1]),
        tuple(int(v) for v in offsets[:, 0] + origin[0]), tuple(int(v) for v in offsets[:, 1] + origin[1]), False)
    if not np.array_equal(bits @ bit_values, base) or not np.array_equal(ix.coordinates(), lay):
        raise ValueError(f"the n={n} accumulator layout is not a per-thread base plus a per-slot offset")
    even, odd = lay[:, 0::2], lay[:, 1::2]
    pairs = bool(np.array_equal(even[..., 0], odd[..., 0]) and np.array_equal(even[..., 1] + 1, odd[..., 1])
                 and np.all(even[..., 1] % 2 == 0))
    return AccumulatorIndexing(ix.n, ix.row_bit, ix.col_bit, ix.row_off, ix.col_off, pairs)


# stmatrix .x4 of one warp's 16 x 16 block: matrix j (0..3) has its origin at these (row, col) in the block;
# lane l gives the address of row l % 8 of matrix l // 8 (PTX ISA, stmatrix).
STMATRIX_ORIGINS = ((0, 0), (8, 0), (0, 8), (8, 8))


def stmatrix_plan(n: int, layout: np.ndarray | None = None) -> np.ndarray | None:
    """Which accumulator slot feeds each register half of the stmatrix .x4 that stores 16-column group g of a
    warp's 16 rows: (n // 16, 8) slot indices [g, 2j + h], found by matching fraglab's wgmma accumulator layout
    against fraglab's stmatrix model; None when no uniform slot exists (then D cannot leave through stmatrix)."""
    from ..apis.ldmatrix import MatrixMove, model_map

    acc = accumulator_map(n) if layout is None else np.asarray(layout)
    frag = model_map(MatrixMove("stmatrix", 4, False))          # (32, 8, 2): lane, 2j + h -> (8j + row, col)
    where = {}                                                  # (thread, row, col) -> slot
    for t in range(128):
        for i, (r, c) in enumerate(acc[t]):
            where[(t, int(r), int(c))] = i
    plan = np.zeros((n // 16, 8), dtype=np.int64)
    for g in range(n // 16):
        for s in range(8):
            j = s // 2
            found = set()
            for t in range(128):
                w, lane = divmod(t, 32)
                r, c = frag[lane, s]
                row = 16 * w + STMATRIX_ORIGINS[j][0] + int(r) - 8 * j
                col = 16 * g + STMATRIX_ORIGINS[j][1] + int(c)
                found.add(where.get((t, row, col), -1))
            if len(found) != 1 or -1 in found:
                return None
            plan[g, s] = found.pop()
    return plan


def _cpp_array(name: str, values) -> str:
    return f"constexpr int {name}[{len(values)}] = {{{', '.join(str(v) for v in values)}}};"


@lru_cache(maxsize=1)
def accumulator_header() -> str:
    """C++ prepended to wgmma.cu: namespace fraglab::wgmma_acc with the generated tables."""
    tables = {n: accumulator_indexing(n) for n in ACC_N}
    first = tables[ACC_N[0]]
    if any(t.row_bit != first.row_bit or t.col_bit != first.col_bit for t in tables.values()):
        raise ValueError("the per-thread accumulator base differs between N; the kernel assumes one")
    lines = ["// generated by fraglab/gemm/wgmma.py from fraglab's wgmma accumulator layout; do not edit",
             "#define FRAGLAB_WGMMA_ACC_GENERATED 1", "namespace fraglab {", "namespace wgmma_acc {",
             "// (T128, V(N/2)) -> (M64, N): row = sum_b bit_b(t) * kRowBit[b] + Slots<N>::kRowOff[i] (col alike)",
             _cpp_array("kRowBit", first.row_bit), _cpp_array("kColBit", first.col_bit),
             f"constexpr bool kPairsAdjacent = {str(all(t.pairs_adjacent for t in tables.values())).lower()};",
             "// every thread's base column is below 8 (so slot pairs whose offset is a multiple of 8 stay in its block)",
             f"constexpr bool kBaseColBelow8 = {str(sum(v for v in first.col_bit if v > 0) < 8).lower()};",
             "template <int N> struct Slots;"]
    lines += ["// stmatrix .x4 per warp 16 x 16 block: matrix j's origin, and Slots<N>::kStmatrixSlot[8 * g + 2j + h]:",
              "// the accumulator slot in register half h of matrix j for 16-column group g (kStmatrix: such slots exist)",
              "struct StmatrixOrigin {",
              "  static " + _cpp_array("kRow", [o[0] for o in STMATRIX_ORIGINS]),
              "  static " + _cpp_array("kCol", [o[1] for o in STMATRIX_ORIGINS]), "};"]
    for n, t in tables.items():
        plan = stmatrix_plan(n)
        lines += [f"template <> struct Slots<{n}> {{", "  static " + _cpp_array("kRowOff", t.row_off),
                  "  static " + _cpp_array("kColOff", t.col_off),
                  f"  static constexpr bool kStmatrix = {'true' if plan is not None else 'false'};",
                  f"  static constexpr bool kPairColsOn8 = {str(all(c % 8 == 0 for c in t.col_off[0::2])).lower()};",
                  "  static " + _cpp_array("kStmatrixSlot", (plan if plan is not None else np.zeros((n // 16, 8),
                                                                                                    int)).ravel()),
                  "};"]
    lines += ["}  // namespace wgmma_acc", "}  // namespace fraglab", ""]
    return "\n".join(lines)


__all__ = ["ACC_N", "AccumulatorIndexing", "STMATRIX_ORIGINS", "accumulator_header", "accumulator_indexing",
           "accumulator_map", "stmatrix_plan"]
