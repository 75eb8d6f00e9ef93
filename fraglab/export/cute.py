"""CuTe form of a layout: a (thread mode, value mode) -> tile index layout as shape:stride.

The tile index is CuTe's column-major one over the tile CUTLASS's MMA_Traits index: A as (M,K), B as (N,K)
(fraglab's B is K x N, so B's CuTe tile is its transpose: index = n + k * N) and C as (M,N), so the sm_80
A operand of mma.m16n8k16 reads ((4,8),(2,2,2)):((32,1),(16,8,128)) and its B ((4,8),(2,2)):((16,1),(8,64)),
as in CUTLASS's mma_traits_sm80.hpp. `to_cute(layout)` alone keeps fraglab's own tile (index = row + col *
rows, what the C++ header computes); `cutlass=True` gives CUTLASS's, which `render` writes.
Each mode is inferred on its own (CuTe splits a thread or slot index colexicographically, first factor
fastest) and comes out coalesced: its factors are maximal runs of one stride. Where no shape:stride form
exists, the nearest composed form is searched: the layout over a selection of slots, or CuTe's
swizzled composition L o Swizzle<B,M,S> (wgmma's shared-memory operands). Duplicated slots are
exact here: a slot that repeats another is a stride-0 factor (WMMA f16 A: 16 slots, the last 8 copy
the first 8, so the value mode gains a (2):(0) factor). A slot holding nothing has no CuTe form.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from .tile import NoExportForm, index_map, mapping_comment, title

Mode = tuple[int, ...]


@dataclass(frozen=True)
class CuteLayout:
    """((thread shape),(value shape)):((thread stride),(value stride)) -> index = row + col * rows."""

    thread_shape: Mode
    thread_stride: Mode
    value_shape: Mode
    value_stride: Mode
    rows: int
    cols: int
    transposed: bool = False  # the tile is fraglab's (rows x cols) transposed: CUTLASS's (N,K) for B

    def __call__(self, thread, slot):
        """The tile index of (thread, slot); numpy arrays broadcast."""
        return _eval_mode(self.thread_shape, self.thread_stride, thread) + \
            _eval_mode(self.value_shape, self.value_stride, slot)

    def row_col(self, thread, slot):
        """fraglab's (row, col) of (thread, slot) (for a transposed tile, (k, n) from index n + k * N)."""
        index = self(thread, slot)
        first, second = index % self.rows, index // self.rows
        return (second, first) if self.transposed else (first, second)

    @property
    def threads(self) -> int:
        return int(np.prod(self.thread_shape))

    @property
    def slots(self) -> int:
        return int(np.prod(self.value_shape))

    def text(self) -> str:
        """CuTe's printed form, e.g. ((4,8),(2,2,2)):((32,1),(16,8,128))."""
        shape = f"({_mode_text(self.thread_shape)},{_mode_text(self.value_shape)})"
        stride = f"({_mode_text(self.thread_stride)},{_mode_text(self.value_stride)})"
        return f"{shape}:{stride}"

    def to_json(self) -> dict:
        """{"shape": [thread, value], "stride": [thread, value]}; a one-factor mode is a plain int, as CuTe nests it."""
        return {"shape": [_mode_json(self.thread_shape), _mode_json(self.value_shape)],
                "stride": [_mode_json(self.thread_stride), _mode_json(self.value_stride)]}

    def cpp(self, name: str = "FragLayout") -> str:
        """The `using NAME = cute::Layout<...>` line with static extents."""
        shape = f"Shape <{_mode_cpp(self.thread_shape, 'Shape')},{_mode_cpp(self.value_shape, 'Shape')}>"
        stride = f"Stride<{_mode_cpp(self.thread_stride, 'Stride')},{_mode_cpp(self.value_stride, 'Stride')}>"
        return f"using {name} = cute::Layout<{shape},\n{' ' * (len(name) + 21)}{stride}>;"


def _eval_mode(shape: Mode, stride: Mode, coord):
    coord = np.asarray(coord, dtype=np.int64)
    total = np.zeros_like(coord)
    step = 1
    for extent, s in zip(shape, stride):
        total = total + (coord // step) % extent * s
        step *= extent
    return total


def _mode_text(mode: Mode) -> str:
    return str(mode[0]) if len(mode) == 1 else "(" + ",".join(str(m) for m in mode) + ")"


def _mode_json(mode: Mode):
    return int(mode[0]) if len(mode) == 1 else [int(m) for m in mode]


def _mode_cpp(mode: Mode, kind: str) -> str:
    if len(mode) == 1:
        return f"_{mode[0]}"
    return f"{kind}<" + ",".join(f"_{m}" for m in mode) + ">"


def infer_mode(values: np.ndarray) -> tuple[Mode, Mode] | None:
    """The coalesced (shape, stride) whose colexicographic evaluation gives values[i], or None.

    Greedy over the factors: at block size p the next stride is values[p] and the factor is the longest
    run values[k * p] == k * stride that divides what is left; a non-coalescable neighbour ends the run
    exactly where its factor ends. The result is checked against every value.
    """
    values = np.asarray(values, dtype=np.int64)
    n = len(values)
    if n == 0 or values[0] != 0:
        return None
    if n == 1:
        return (1,), (0,)
    shape: list[int] = []
    stride: list[int] = []
    block = 1
    while block < n:
        step = int(values[block])
        run = 1
        while (run + 1) * block <= n and values[run * block] == run * step:
            run += 1
        left = n // block
        factor = max((f for f in range(2, run + 1) if left % f == 0), default=1)
        if factor == 1:
            return None
        shape.append(factor)
        stride.append(step)
        block *= factor
    if block != n or not np.array_equal(_eval_mode(tuple(shape), tuple(stride), np.arange(n)), values):
        return None
    return tuple(shape), tuple(stride)


def _ranges(items: list[int]) -> str:
    out, start = [], None
    for i, v in enumerate(items):
        if start is None:
            start = v
        if i + 1 == len(items) or items[i + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ",".join(out)


def _why_not(idx: np.ndarray) -> str:
    """The first (thread, slot) that breaks index(t, v) = index(t, 0) + index(0, v)."""
    predicted = idx[:, :1] + idx[:1, :] - idx[0, 0]
    bad = np.argwhere(predicted != idx)
    if len(bad):
        t, v = (int(x) for x in bad[0])
        return (f"thread {t} slot {v} holds index {int(idx[t, v])} but thread {t} slot 0 and thread 0 slot {v} "
                f"add up to {int(predicted[t, v])}: the slot order depends on the thread")
    return "the thread or slot index is not a product of strided factors"


def swizzle(offset, bits: int, base: int, shift: int):
    """CuTe's Swizzle<B,M,S>: bits [M+S, M+S+B) of the offset XORed into bits [M, M+B)."""
    offset = np.asarray(offset, dtype=np.int64)
    mask = ((1 << bits) - 1) << (base + shift)
    return offset ^ ((offset & mask) >> shift)


def _slot_selection(idx: np.ndarray, tile: tuple[int, int, bool]) -> tuple[str, dict] | None:
    """The layout over the slots that hold distinct elements, composed with that selection."""
    held = np.all(idx >= 0, axis=0)
    keep: list[int] = []
    for v in range(idx.shape[1]):
        if held[v] and not any(np.array_equal(idx[:, v], idx[:, k]) for k in keep):
            keep.append(v)
    if not keep or len(keep) == idx.shape[1]:
        return None
    found = _infer(idx[:, keep], *tile)
    if found is None:
        return None
    dropped = [v for v in range(idx.shape[1]) if v not in keep]
    text = (f"{found.text()} composed with the slot selection {_ranges(keep)} "
            f"(slots {_ranges(dropped)} hold nothing or repeat a kept slot)")
    return text, {"layout": found.to_json(), "slots": keep}


def _swizzled(idx: np.ndarray, tile: tuple[int, int, bool]) -> tuple[str, dict] | None:
    """L o Swizzle<B,M,S> o (T,V):(V,1): the map un-swizzled on the flat offset thread * V + slot is a layout.

    This is CuTe's ComposedLayout for swizzled shared memory (wgmma's 32B/64B/128B operands, where a
    "thread" is a 16-byte chunk); the smallest swizzle that works is given.
    """
    threads, slots = idx.shape
    total = threads * slots
    if (idx < 0).any() or total & (total - 1):
        return None
    width = total.bit_length() - 1
    offsets = np.arange(total)
    for bits in range(1, width):
        for shift in range(1, width - bits + 1):
            for base in range(0, width - bits - shift + 1):
                moved = swizzle(offsets, bits, base, shift)
                found = _infer(idx.ravel()[moved].reshape(threads, slots), *tile)
                if found is None:
                    continue
                # L takes the flat offset colexicographically: the slot mode first, then the thread mode.
                flat = CuteLayout(found.value_shape, found.value_stride, found.thread_shape, found.thread_stride,
                                  found.rows, found.cols, found.transposed)
                text = f"{flat.text()} o Swizzle<{bits},{base},{shift}> o ({threads},{slots}):({slots},1)"
                return text, {"layout": flat.to_json(), "swizzle": [bits, base, shift],
                              "offset": {"shape": [threads, slots], "stride": [slots, 1]}}
    return None


def _nearest(idx: np.ndarray, tile: tuple[int, int, bool]) -> tuple[str, dict | None]:
    """The closest composed form that exists (text, structure), or ("", None)."""
    found = _slot_selection(idx, tile) or _swizzled(idx, tile)
    return found if found is not None else ("", None)


def cute_tile(spec) -> tuple[int, int, bool]:
    """(rows, cols, transposed) of CuTe's column-major tile for `spec`, as CUTLASS's MMA_Traits index it:
    A (M,K) and C (M,N) as fraglab's tile, B (N,K) the transpose of fraglab's K x N."""
    if spec.frag == "matrix_b":
        return spec.cols, spec.rows, True
    return spec.rows, spec.cols, False


def cute_index_map(layout, cutlass: bool = True) -> np.ndarray:
    """(threads, slots) column-major index into CuTe's tile (cute_tile), or fraglab's with cutlass=False; -1 where empty."""
    if not cutlass or not cute_tile(layout.spec)[2]:
        return index_map(layout)
    row = np.asarray(layout.row, dtype=np.int64)
    col = np.asarray(layout.col, dtype=np.int64)
    return np.where(row >= 0, col + row * layout.spec.cols, -1)


def _tile_of(layout, cutlass: bool) -> tuple[int, int, bool]:
    return cute_tile(layout.spec) if cutlass else (layout.spec.rows, layout.spec.cols, False)


def _infer(idx: np.ndarray, rows: int, cols: int, transposed: bool = False) -> CuteLayout | None:
    if (idx < 0).any() or idx[0, 0] != 0:
        return None
    if not np.array_equal(idx, idx[:, :1] + idx[:1, :]):
        return None
    thread = infer_mode(idx[:, 0])
    value = infer_mode(idx[0, :])
    if thread is None or value is None:
        return None
    return CuteLayout(thread[0], thread[1], value[0], value[1], rows, cols, transposed)


def to_cute(layout, cutlass: bool = False) -> CuteLayout:
    """The CuTe layout of `layout` over fraglab's tile, or CUTLASS's tile with cutlass=True (B as (N,K)),
    or NoExportForm saying why none exists and the nearest form."""
    idx = cute_index_map(layout, cutlass)
    tile = _tile_of(layout, cutlass)
    found = _infer(idx, *tile)
    if found is not None:
        return found
    empty = int(np.sum(idx < 0))
    if empty:
        why = f"{empty} slots hold no element, and a CuTe layout maps every (thread, slot) to an element"
    elif idx[0, 0] != 0:
        why = f"thread 0 slot 0 holds index {int(idx[0, 0])}, and a CuTe layout maps (0, 0) to 0"
    else:
        why = _why_not(idx)
    text, composed = _nearest(idx, tile)
    error = NoExportForm(f"{title(layout)} has no CuTe shape:stride form: {why}", text)
    error.composed = composed
    raise error


def tile_comment(layout) -> str:
    """CuTe's comment over CUTLASS's tile with its index, e.g. (T32,V4) -> (N8,K16), index = n + k * 8."""
    if not cute_tile(layout.spec)[2]:
        return f"{mapping_comment(layout)}, index = row + col * {layout.spec.rows}"
    k, n = layout.spec.rows, layout.spec.cols
    return f"(T{layout.threads},V{layout.num_elements}) -> (N{n},K{k}), index = n + k * {n}"


def render(layout, fmt: str = "text", name: str = "FragLayout") -> str:
    """`text`: the comment, the C++ type and the shape:stride text; `json`: shape and stride as nested lists.
    Both over CUTLASS's tile (B as (N,K)), so they read as the MMA_Traits' ALayout, BLayout and CLayout."""
    from ..layouts.resolve import source_line

    cute = to_cute(layout, cutlass=True)
    if fmt == "json":
        return json.dumps(cute.to_json())
    return (f"// {title(layout)}: {tile_comment(layout)}\n"
            f"// source: {source_line(layout.source, with_note=False)}\n"
            f"{cute.cpp(name)}\n"
            f"// {cute.text()}\n")



