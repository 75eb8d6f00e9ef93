"""Shared-memory accesses as data: which byte address each thread of each instruction gives, and how wide.

An access names an instruction (ld/st.shared.bN, ldmatrix/stmatrix .xN[.trans], cp.async N, the wgmma operand
read) and where its elements come from: a row-major sweep of the tile, or a fragment fraglab knows tiled over
the tile (every thread stores its mma m16n8k16 accumulator slots: the epilogue store). Turning an access and a
layout into instructions is the one place a misaligned vector or an address outside the tile is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .layout import SmemLayout

KINDS = ("ld", "st", "ldmatrix", "stmatrix", "cp.async", "wgmma")
LOADS = ("ld", "ldmatrix", "wgmma")
MAX_INSTRUCTIONS = 512
ACCESS_CHOICES = ("ld.b16|b32|b64|b128, st.b16|b32|b64|b128, ldmatrix.x1|x2|x4[.trans], "
                  "stmatrix.x1|x2|x4[.trans], cp.async.4|8|16, wgmma")
_ACCESS = re.compile(r"^(ld|st)(?:\.shared)?\.(?:b|u|v)?(16|32|64|128)$|^(ldmatrix|stmatrix)\.x([124])(\.trans)?$"
                     r"|^cp\.async\.(4|8|16)$|^(wgmma)$")


@dataclass(frozen=True)
class AccessSpec:
    """One instruction form: kind, bytes per address, ldmatrix's matrices and .trans."""

    kind: str
    width: int          # bytes each address covers (ldmatrix/stmatrix/wgmma: a 16-byte row)
    num: int = 1        # ldmatrix/stmatrix: matrices
    trans: bool = False

    @property
    def spelling(self) -> str:
        if self.kind in ("ld", "st"):
            return f"{self.kind}.b{8 * self.width}"
        if self.kind in ("ldmatrix", "stmatrix"):
            return f"{self.kind}.x{self.num}{'.trans' if self.trans else ''}"
        return f"cp.async.{self.width}" if self.kind == "cp.async" else "wgmma"

    @property
    def ptx(self) -> str:
        if self.kind in ("ld", "st"):
            vec = {2: ".u16", 4: ".u32", 8: ".v2.u32", 16: ".v4.u32"}[self.width]
            return f"{self.kind}.shared{vec}"
        if self.kind in ("ldmatrix", "stmatrix"):
            return f"{self.kind}.sync.aligned.m8n8.x{self.num}{'.trans' if self.trans else ''}.shared.b16"
        if self.kind == "cp.async":
            return f"cp.async.ca.shared.global [], [], {self.width}"
        return "wgmma.mma_async (shared-memory operand through its descriptor)"

    @property
    def is_load(self) -> bool:
        return self.kind in LOADS


def parse_access(text: str) -> AccessSpec:
    m = _ACCESS.match((text or "").strip().lower())
    if m is None:
        raise InputError(f"invalid --access {text!r}: valid choices are {ACCESS_CHOICES}", argument="access")
    if m.group(1):
        return AccessSpec(m.group(1), int(m.group(2)) // 8)
    if m.group(3):
        return AccessSpec(m.group(3), 16, int(m.group(4)), bool(m.group(5)))
    if m.group(6):
        return AccessSpec("cp.async", int(m.group(6)))
    return AccessSpec("wgmma", 16)


@dataclass
class Instruction:
    """One warp-wide instruction: addresses[t] = byte offset thread t gives (-1: none), each `width` bytes;
    elements[t] = the tile (row, col) pairs thread t's address covers; phases = thread groups the hardware
    serves one after another (PTX/CUDA guide: 8-byte accesses by half warps, 16-byte by quarter warps,
    ldmatrix by matrix)."""

    addresses: np.ndarray
    width: int
    phases: list[np.ndarray]
    starts: np.ndarray          # (threads, 2): the tile (row, col) thread t's vector starts at (-1: none)
    count: int = 1              # elements per address
    along_rows: bool = False    # the vector runs down a column (an MN-major wgmma row), not along a row

    def elements(self, t: int) -> list[tuple[int, int]]:
        r, c = (int(x) for x in self.starts[t])
        if r < 0 or self.addresses[t] < 0:
            return []
        return [(r + k, c) if self.along_rows else (r, c + k) for k in range(self.count)]


def _phases(spec: AccessSpec, threads: int) -> list[np.ndarray]:
    if spec.kind in ("ldmatrix", "stmatrix", "wgmma"):
        group = 8
    else:
        group = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[spec.width]
    return [np.arange(start, min(start + group, threads)) for start in range(0, threads, group)]


def _vector_address(layout: SmemLayout, offsets: np.ndarray, row, col, n: int, width: int, what: str):
    """Byte addresses of the n elements (row, col..col+n-1), for one or many (row, col) at once; InputError
    unless each is one aligned vector inside the tile."""
    row, col = np.atleast_1d(np.asarray(row, dtype=np.int64)), np.atleast_1d(np.asarray(col, dtype=np.int64))
    outside = (row < 0) | (row >= layout.rows) | (col < 0) | (col + n > layout.cols)
    if outside.any():
        k = int(np.argmax(outside))
        raise InputError(f"invalid --access: {what.format(k)} reaches ({row[k]},{col[k] + n - 1}), outside the "
                         f"{layout.rows}x{layout.cols} tile", argument="access")
    runs = offsets[row[:, None], col[:, None] + np.arange(n)[None, :]]
    start = runs[:, 0] * layout.element_bytes
    bad = np.any(np.diff(runs, axis=1) != 1, axis=1) | (start % width != 0)
    if bad.any():
        k = int(np.argmax(bad))
        r, c = int(row[k]), int(col[k])
        raise InputError(f"invalid --access: {what.format(k)} is a misaligned {width}-byte access: elements ({r},{c})"
                         f"..({r},{c + n - 1}) sit at element offsets {runs[k].tolist()} in {layout.spelling}; a "
                         f"{width}-byte access needs {n} consecutive elements starting on a {width}-byte boundary",
                         argument="access")
    return start


def _elements_per_vector(spec: AccessSpec, layout: SmemLayout) -> int:
    e = layout.element_bytes
    if spec.width < e or spec.width % e:
        raise InputError(f"invalid --access {spec.spelling}: a {spec.width}-byte access cannot carry whole "
                         f"{layout.dtype} elements ({e} bytes)", argument="access")
    return spec.width // e


def _check_count(count: int) -> None:
    if count > MAX_INSTRUCTIONS:
        raise InputError(f"invalid --access: the tile takes {count} instructions; at most {MAX_INSTRUCTIONS} "
                         "(use a smaller tile)", argument="access")


def sweep_instructions(spec: AccessSpec, layout: SmemLayout) -> list[Instruction]:
    """Row-major sweep: vector v = elements (v*n // cols, v*n % cols ..) goes to thread v % 32 of instruction
    v // 32 (a warp copying the tile with n-element vectors, as a gmem->smem loop does)."""
    n = _elements_per_vector(spec, layout)
    if layout.cols % n:
        raise InputError(f"invalid --access {spec.spelling}: {n}-element vectors do not divide the {layout.cols} "
                         "columns", argument="access")
    offsets = layout.offsets()
    vectors = layout.rows * layout.cols // n
    _check_count(-(-vectors // 32))
    out = []
    for first in range(0, vectors, 32):
        addr = np.full(32, -1, dtype=np.int64)
        count = min(32, vectors - first)
        r, c = np.divmod((first + np.arange(count)) * n, layout.cols)
        addr[:count] = _vector_address(layout, offsets, r, c, n, spec.width, "thread {}")
        starts = np.full((32, 2), -1, dtype=np.int64)
        starts[:count, 0], starts[:count, 1] = r, c
        out.append(Instruction(addr, spec.width, _phases(spec, 32), starts, n))
    return out


def _tiling_blocks(layout: SmemLayout, rows: int, cols: int, reach: str, argument: str,
                   not_whole: str) -> list[tuple[int, int]]:
    """The (i, j) blocks of rows x cols that tile `layout`, row-major. Refused in one line where a block
    reaches past the tile ('<reach> reach (r,c), outside ...', naming `argument`) or the tile is not a whole
    number of blocks ('invalid --layout: <not_whole>')."""
    if rows > layout.rows or cols > layout.cols:
        raise InputError(f"{reach} reach ({rows - 1},{cols - 1}), outside the {layout.rows}x{layout.cols} tile",
                         argument=argument)
    if layout.rows % rows or layout.cols % cols:
        raise InputError(f"invalid --layout: {not_whole}", argument="layout")
    return [(i, j) for i in range(layout.rows // rows) for j in range(layout.cols // cols)]


def fragment_instructions(spec: AccessSpec, layout: SmemLayout, frag_rows: np.ndarray, frag_cols: np.ndarray,
                          name: str) -> list[Instruction]:
    """Each thread's fragment slots, in slot order, n to a vector; the fragment tiled row-major over the tile
    (block (i, j) adds (i * fragment rows, j * fragment cols)). One instruction per (block, vector)."""
    n = _elements_per_vector(spec, layout)
    threads, slots = frag_rows.shape
    if threads != 32:
        raise InputError(f"invalid --fragment {name}: {threads} threads; ld/st accesses take a warp's fragment",
                         argument="fragment")
    if slots % n:
        raise InputError(f"invalid --access {spec.spelling} for {name}: {slots} slots per thread do not group into "
                         f"{n}-element vectors", argument="access")
    fr, fc = int(frag_rows.max()) + 1, int(frag_cols.max()) + 1
    blocks = _tiling_blocks(layout, fr, fc, f"invalid --fragment {name}: its elements", "fragment",
                            f"the {layout.rows}x{layout.cols} tile is not a whole number of {fr}x{fc} {name} fragments")
    for t in range(threads):   # a vector is n consecutive columns of one row
        for v in range(0, slots, n):
            rs, cs = frag_rows[t, v:v + n], frag_cols[t, v:v + n]
            if np.any(rs != rs[0]) or np.any(np.diff(cs) != 1):
                raise InputError(f"invalid --access {spec.spelling} for {name}: thread {t}'s slots {v}..{v + n - 1} "
                                 f"are not {n} consecutive elements of a row; use a narrower access",
                                 argument="access")
    offsets = layout.offsets()
    _check_count(len(blocks) * slots // n)
    out = []
    for i, j in blocks:
        for v in range(0, slots, n):
            r, c = frag_rows[:, v] + i * fr, frag_cols[:, v] + j * fc
            addr = _vector_address(layout, offsets, r, c, n, spec.width, "thread {} slot " + str(v))
            out.append(Instruction(addr, spec.width, _phases(spec, 32), np.stack([r, c], axis=1), n))
    return out


def matrix_instructions(spec: AccessSpec, layout: SmemLayout) -> list[Instruction]:
    """ldmatrix/stmatrix: thread 8m + r gives the address of row r of matrix m (16 bytes). Matrices of one
    instruction: x4 (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) of a 16x16 block (the mma A
    order), x2 the first two, x1 the first; on a tile of fewer than 16 rows, side by side along the row (8x32,
    8x16); blocks tiled row-major. .trans moves the same rows (it transposes in
    registers), so its addresses are the same. x1/x2: threads past 8*num repeat the addresses the PTX ignores."""
    if layout.element_bytes != 2:
        raise InputError(f"invalid --dtype {layout.dtype}: {spec.kind} moves b16 elements; use f16 or bf16",
                         argument="dtype")
    # matrices 2 high where the tile allows (the mma A order), else side by side along an 8-row tile
    tall = spec.num > 1 and layout.rows % 16 == 0
    block_rows, block_cols = (16, 8 * (spec.num // 2)) if tall else (8, 8 * spec.num)
    blocks = _tiling_blocks(layout, block_rows, block_cols, f"invalid --access {spec.spelling}: its rows", "access",
                            f"{spec.spelling} moves {block_rows}x{block_cols} blocks; the "
                            f"{layout.rows}x{layout.cols} tile is not a whole number of them")
    offsets = layout.offsets()
    _check_count(len(blocks))
    out = []
    for i, j in blocks:
        m, r = np.divmod(np.arange(32) % (8 * spec.num), 8)
        down, across = (m % 2, m // 2) if tall else (0, m)
        row, col = i * block_rows + 8 * down + r, j * block_cols + 8 * across
        addr = _vector_address(layout, offsets, row, col, 8, 16, "thread {}'s row address")
        active = addr.copy()
        active[8 * spec.num:] = -1
        out.append(Instruction(active, 16, _phases(spec, 8 * spec.num), np.stack([row, col], axis=1), 8))
    return out


def wgmma_instructions(layout: SmemLayout) -> list[Instruction]:
    """The wgmma operand read of an (MN, K) tile: 16-byte rows along its contiguous mode, 8 of them (a core
    matrix) to a phase, one instruction per 32 bytes of K (a k-step). Entry a is the a-th 16-byte row read."""
    offsets = layout.offsets()
    n = 16 // layout.element_bytes
    k_major = layout.cols > 1 and int(offsets[0, 1] - offsets[0, 0]) == 1
    mn_major = layout.rows > 1 and int(offsets[1, 0] - offsets[0, 0]) == 1
    if not (k_major or mn_major):
        raise InputError(f"invalid --layout {layout.spelling} for wgmma: neither mode is contiguous (wgmma reads "
                         "16-byte rows along K or along MN)", argument="layout")
    step = 32 // layout.element_bytes   # K elements of one k-step
    if layout.cols % step or layout.rows % (8 if k_major else n):
        raise InputError(f"invalid --layout {layout.spelling} for wgmma: the (MN, K) tile must hold whole "
                         f"k-steps of {step} columns and whole core matrices", argument="layout")
    out = []
    for k0 in range(0, layout.cols, step):
        starts = []   # (row, col) where each 16-byte row begins, core matrix by core matrix
        if k_major:
            for kc in range(k0, k0 + step, n):
                for r0 in range(0, layout.rows, 8):
                    starts += [(r, kc) for r in range(r0, r0 + 8)]
        else:
            for mc in range(0, layout.rows, n):
                for k8 in range(k0, k0 + step, 8):
                    starts += [(mc, k) for k in range(k8, k8 + 8)]
        view = offsets if k_major else offsets.T
        rs, cs = (np.array(x) for x in zip(*starts))
        a, b = (rs, cs) if k_major else (cs, rs)
        addresses = _vector_address(layout if k_major else _Transposed(layout), view, a, b, n, 16, "wgmma row {}")
        out.append(Instruction(addresses, 16, [np.arange(s, s + 8) for s in range(0, len(starts), 8)],
                               np.stack([rs, cs], axis=1), n, along_rows=not k_major))
    _check_count(len(out))
    return out


class _Transposed:
    """The few fields _vector_address reads, of the transposed tile (an MN-major operand read along MN)."""

    def __init__(self, layout: SmemLayout):
        self.rows, self.cols, self.element_bytes, self.spelling = (layout.cols, layout.rows, layout.element_bytes,
                                                                   layout.spelling)


def raw_instruction(spec: AccessSpec, addresses) -> Instruction:
    """One instruction from per-thread byte addresses no layout spells (a broadcast, a hand-made pattern)."""
    addr = np.asarray(addresses, dtype=np.int64)
    if spec.kind == "wgmma" or addr.shape != (32,):
        raise InputError("a raw instruction gives 32 thread addresses to ld/st/ldmatrix/stmatrix/cp.async",
                         argument="access")
    if np.any((addr >= 0) & (addr % min(spec.width, 16) != 0)):
        raise InputError(f"invalid addresses: a {spec.width}-byte access must be {spec.width}-byte aligned",
                         argument="access")
    threads = 8 * spec.num if spec.kind in ("ldmatrix", "stmatrix") else 32
    if threads < 32:
        addr = addr.copy()
        addr[threads:] = -1
    return Instruction(addr, spec.width, _phases(spec, threads), np.full((32, 2), -1, dtype=np.int64), 0)


__all__ = ["raw_instruction", "AccessSpec", "Instruction", "parse_access", "sweep_instructions", "fragment_instructions",
           "matrix_instructions", "wgmma_instructions", "KINDS", "ACCESS_CHOICES"]
