"""ldmatrix / stmatrix / movmatrix (m8n8, b16): the PTX ISA model as data, and the probes.

Everything here is numpy except the launch callables the caller passes in. A map is an int array
(32, slots, 2) of (row, col) per (lane, slot): slot = 2 * register + half (low half first),
row = 8 * matrix + r of the source tile, col = the b16 element 0..7 of that 16-byte row.

Anchors: ldmatrix and stmatrix are anchored in memory by the row addresses the lanes give (lane
8 * matrix + r names row r of matrix `matrix`). movmatrix works on registers only; it is anchored
through ldmatrix.x1 (method "load": the input comes from memory) or through the documented x1 input
layout (methods "codes" and "onehot").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

NO_ELEMENT = -1
TILE_ROWS = 64            # shared-memory rows per experiment (FL_TILE_ROWS in ldmatrix.cu)
UNWRITTEN = 0xFFFF        # stmatrix_probe fills shared memory with this before the store
DECOY = 0x7777            # rows only ignored lanes point at; must never show up
APIS = ("ldmatrix", "stmatrix", "movmatrix")
METHODS = {"ldmatrix": ("load", "onehot"), "stmatrix": ("store", "onehot"),
           "movmatrix": ("load", "codes", "onehot")}
NUMS = {"ldmatrix": (1, 2, 4), "stmatrix": (1, 2, 4), "movmatrix": (1,)}
TRANS = {"ldmatrix": (False, True), "stmatrix": (False, True), "movmatrix": (True,)}


@dataclass(frozen=True)
class MatrixMove:
    """One data-movement instruction: api, number of 8x8 matrices, transposed or not."""

    api: str
    num: int
    trans: bool

    @property
    def slots(self) -> int:
        return 2 * self.num

    @property
    def rows(self) -> int:
        return 8 * self.num

    @property
    def ptx(self) -> str:
        if self.api == "movmatrix":
            return "movmatrix.sync.aligned.m8n8.trans.b16"
        return f"{self.api}.sync.aligned.m8n8.x{self.num}{'.trans' if self.trans else ''}.shared.b16"

    def kernel(self, method: str) -> str:
        if self.api == "movmatrix":
            return f"movmatrix_probe<{'true' if method == 'load' else 'false'}>"
        return f"{self.api}_probe<{self.num}, {'true' if self.trans else 'false'}>"


def catalogue(api: str | None = None) -> list[MatrixMove]:
    return [MatrixMove(a, n, t) for a in APIS if api in (None, a) for n in NUMS[a] for t in TRANS[a]]


def kernel_names() -> tuple[str, ...]:
    names = {move.kernel(method) for move in catalogue() for method in METHODS[move.api]}
    return tuple(sorted(names))


# ---- the model -----------------------------------------------------------------------------------
# (T32, V2*num) -> (8*num, 8): lane l, slot s = 2j + h: matrix j, register half h.
#   plain:  (8j + l // 4, 2 * (l % 4) + h)   - lane l holds row l/4, two adjacent columns
#   .trans: (8j + 2 * (l % 4) + h, l // 4)   - the same registers filled from the transposed matrix
# movmatrix.trans: the input is the plain x1 fragment, the output the .trans x1 fragment.

def model_map(move: MatrixMove) -> np.ndarray:
    lane = np.arange(32)[:, None]
    slot = np.arange(move.slots)[None, :]
    j, h = slot // 2, slot % 2
    g, t = lane // 4, lane % 4
    if move.trans:
        rows, cols = 8 * j + 2 * t + h, np.broadcast_to(g, (32, move.slots))
    else:
        rows, cols = 8 * j + g, 2 * t + h
    return np.stack(np.broadcast_arrays(rows, cols), axis=-1).astype(np.int32)


MOVMATRIX_INPUT = MatrixMove("ldmatrix", 1, False)  # the register fragment movmatrix transposes


# ---- experiments ---------------------------------------------------------------------------------

class DecodeError(ValueError):
    """Probe output that does not decode into one consistent map."""


def element_code(rows: int) -> np.ndarray:
    """(rows, 8) code of each element: 1-based row-major index (0 stays 'nothing')."""
    return np.arange(rows * 8).reshape(rows, 8) + 1


def lane_rows(move: MatrixMove, scrambled: bool, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(memory row of each logical row (TILE_ROWS,), row each lane points at (32,)).

    Lanes 8j + r (j < num) point at logical row 8j + r; the others are ignored by the ISA and point at
    decoy rows (TILE_ROWS - 32 ..) that hold DECOY. Scrambled: logical rows sit at shuffled memory rows.
    """
    where = np.random.default_rng(seed).permutation(TILE_ROWS) if scrambled else np.arange(TILE_ROWS)
    used = move.rows if move.api != "movmatrix" else 8
    logical = np.where(np.arange(32) < used, np.arange(32), TILE_ROWS - 32 + np.arange(32))
    return where, where[logical]


def _tile(where: np.ndarray, logical_values: np.ndarray) -> np.ndarray:
    """(TILE_ROWS * 8,) b16 tile with logical row r at memory row where[r]; other rows DECOY."""
    tile = np.full((TILE_ROWS, 8), DECOY, dtype=np.uint16)
    tile[where[: len(logical_values)]] = logical_values
    return tile.reshape(-1)


def _halves(words: np.ndarray) -> np.ndarray:
    """(..., regs) uint32 -> (..., 2 * regs) b16 values, low half first."""
    w = np.asarray(words, dtype=np.uint32)
    return np.stack([w & 0xFFFF, w >> 16], axis=-1).reshape(*w.shape[:-1], -1).astype(np.int64)


def _words(halves: np.ndarray) -> np.ndarray:
    h = np.asarray(halves, dtype=np.uint32).reshape(*np.shape(halves)[:-1], -1, 2)
    return (h[..., 0] | (h[..., 1] << 16)).astype(np.uint32)


def _codes_to_map(values: np.ndarray, rows: int, what: str) -> np.ndarray:
    """(32, slots) codes from element_code -> map; DECOY or out-of-range codes are errors."""
    if np.any(values == DECOY):
        raise DecodeError(f"{what}: a register holds the decoy: an ignored lane's address was used")
    if np.any((values < 1) | (values > rows * 8)):
        raise DecodeError(f"{what}: registers hold codes outside 1..{rows * 8}")
    rc = np.stack(divmod(values - 1, 8), axis=-1)
    return rc.astype(np.int32)


def _onehot_hits(out: np.ndarray, what: str) -> np.ndarray:
    """(E, 32, slots) register halves, one experiment per element -> map (slot holding the lit element)."""
    if np.any(out == DECOY):
        raise DecodeError(f"{what}: a register holds the decoy: an ignored lane's address was used")
    if np.any((out != 0) & (out != 1)) or np.any(out.sum(axis=0) > 1) or np.any(out.sum(axis=(1, 2)) != 1):
        raise DecodeError(f"{what}: every element must light exactly one (lane, slot)")
    result = np.full(out.shape[1:] + (2,), NO_ELEMENT, dtype=np.int32)
    for e, lane, slot in zip(*np.nonzero(out)):
        result[lane, slot] = divmod(int(e), 8)
    return result


@dataclass
class LoadRun:
    """What one method launches and how it reads the result."""

    kernel: str
    args: tuple[np.ndarray, ...]       # host arrays in kernel order, outputs last (filled by the launcher)
    blocks: int
    decode: Callable[[np.ndarray], np.ndarray]


def _load_like(move: MatrixMove, method: str) -> LoadRun:
    """ldmatrix (and movmatrix fed from memory): tile in, registers out."""
    rows = move.rows if move.api != "movmatrix" else 8
    regs = move.num
    scrambled = method == "onehot"
    where, lanes = lane_rows(move, scrambled)
    what = f"{method} {move.ptx}"
    if method == "onehot":
        blocks = rows * 8
        tiles = np.stack([_tile(where, np.eye(rows * 8, dtype=np.uint16)[e].reshape(rows, 8)) for e in range(blocks)])
    else:
        blocks = 1
        tiles = _tile(where, element_code(rows).astype(np.uint16))[None]
    lane_row = np.tile(lanes, (blocks, 1)).astype(np.int32)
    out = np.zeros((blocks, 32, regs), dtype=np.uint32)

    def decode(result: np.ndarray) -> np.ndarray:
        halves = _halves(result.reshape(blocks, 32, regs))
        return _codes_to_map(halves[0], rows, what) if method == "load" else _onehot_hits(halves, what)

    if move.api == "movmatrix":
        args = (tiles, lane_row, np.zeros((blocks, 32), dtype=np.uint32), out)
    else:
        args = (tiles, lane_row, out)
    return LoadRun(move.kernel(method), args, blocks, decode)


def _movmatrix_registers(move: MatrixMove, method: str) -> LoadRun:
    """movmatrix fed through registers placed by the documented x1 input layout."""
    inp = model_map(MOVMATRIX_INPUT)                                   # (32, 2, 2)
    what = f"{method} {move.ptx}"
    if method == "codes":
        blocks = 1
        halves = element_code(8)[inp[..., 0], inp[..., 1]][None]        # (1, 32, 2)
    else:
        blocks = 64
        halves = np.stack([(inp[..., 0] * 8 + inp[..., 1] == e).astype(np.int64) for e in range(64)])
    regs = _words(halves).reshape(blocks, 32)
    dummy_tiles = np.zeros((blocks, TILE_ROWS * 8), dtype=np.uint16)
    lane_row = np.zeros((blocks, 32), dtype=np.int32)
    out = np.zeros((blocks, 32, 1), dtype=np.uint32)

    def decode(result: np.ndarray) -> np.ndarray:
        got = _halves(result.reshape(blocks, 32, 1))
        return _codes_to_map(got[0], 8, what) if method == "codes" else _onehot_hits(got, what)

    return LoadRun(move.kernel(method), (dummy_tiles, lane_row, regs, out), blocks, decode)


def _store(move: MatrixMove, method: str) -> LoadRun:
    """stmatrix: registers in, tile out; rows no lane names must stay UNWRITTEN."""
    slots, rows = move.slots, move.rows
    scrambled = method == "onehot"
    where, lanes = lane_rows(move, scrambled)
    what = f"{method} {move.ptx}"
    codes = np.arange(32 * slots).reshape(32, slots) + 1
    if method == "onehot":
        blocks = 32 * slots
        halves = np.eye(32 * slots, dtype=np.int64).reshape(blocks, 32, slots)
    else:
        blocks = 1
        halves = codes[None]
    regs = _words(halves)
    lane_row = np.tile(lanes, (blocks, 1)).astype(np.int32)
    out = np.zeros((blocks, TILE_ROWS * 8), dtype=np.uint16)

    def decode(result: np.ndarray) -> np.ndarray:
        tiles = np.asarray(result, dtype=np.int64).reshape(blocks, TILE_ROWS, 8)
        named = tiles[:, where[:rows]]                                  # (blocks, rows, 8) logical rows
        others = np.delete(tiles, where[:rows], axis=1)
        if np.any(others != UNWRITTEN):
            raise DecodeError(f"{what}: stored into a row that no used lane named")
        if np.any(named == UNWRITTEN):
            raise DecodeError(f"{what}: left part of the named rows unwritten")
        result_map = np.full((32, slots, 2), NO_ELEMENT, dtype=np.int32)
        if method == "store":
            for (r, c), code in np.ndenumerate(named[0]):
                lane, slot = divmod(int(code) - 1, slots)
                if not 0 <= lane < 32 or result_map[lane, slot, 0] != NO_ELEMENT:
                    raise DecodeError(f"{what}: code {code} at ({r}, {c}) is unknown or seen twice")
                result_map[lane, slot] = (r, c)
            return result_map
        for e in range(blocks):
            hits = np.argwhere(named[e] != 0)
            if len(hits) != 1 or named[e][tuple(hits[0])] != 1:
                raise DecodeError(f"{what}: slot {e % slots} of lane {e // slots} lands {len(hits)} times")
            result_map[e // slots, e % slots] = hits[0]
        return result_map

    return LoadRun(move.kernel(method), (regs, lane_row, out), blocks, decode)


def run_plan(move: MatrixMove, method: str) -> LoadRun:
    if method not in METHODS[move.api]:
        raise ValueError(f"unknown {move.api} method {method!r}: valid choices are {', '.join(METHODS[move.api])}")
    if move.api == "stmatrix":
        return _store(move, method)
    if move.api == "movmatrix" and method != "load":
        return _movmatrix_registers(move, method)
    return _load_like(move, method)


Launch = Callable[[LoadRun], np.ndarray]
"""launch(plan) -> the plan's last argument as the kernel left it (host array)"""


def measure_maps(move: MatrixMove, methods: tuple[str, ...], launch: Launch) -> dict[str, np.ndarray]:
    return {method: (plan := run_plan(move, method)).decode(launch(plan)) for method in methods}


# ---- ldmatrix-fed mma.sync: the memory anchor of the mma fragments ---------------------------------
# A (M x K) row-major and B stored N x K sit in shared memory; ldmatrix (lane 8j + r names row r of
# matrix j) fills the mma registers; D is read through the accumulator model and compared with float64.
# Anchors: memory addresses for A and B (through ldmatrix), the model for C/D only. It covers every
# mma.sync whose elements are 32 bits or narrower and that is one MMA per warp (not f64, not m8n8k4 .f16).

def fed_instructions() -> list:
    from . import mma

    return [inst for inst in mma.INSTRUCTIONS if inst.ab != "f64" and not inst.quadpair]


def fed_kernel(inst) -> str:
    from . import mma

    m, n, k = inst.mnk
    row_bytes = k * mma.ELEMENT_BITS[inst.ab] // 8              # one row of A, or of B stored N x K
    ax, bx = m * row_bytes // 128, n * row_bytes // 128           # 8x8 b16 matrices = 128 bytes each
    return f"mma_from_ldmatrix<fl_mma::{inst.name}, {ax}, {bx}, {'true' if m == 16 else 'false'}>"


def fed_inputs(inst, trials: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A tiles, B tiles) as b16 rows of memory, and C register words; same numbers as mma.random_operands."""
    from . import mma

    a, b, c = mma.random_operands(inst, trials, seed)
    def tiles(rows: np.ndarray) -> np.ndarray:                   # (E, rows, elements) -> (E, rows * b16)
        return np.ascontiguousarray(mma.pack(inst.ab, mma.encode(inst.ab, rows))).view(np.uint16).reshape(len(rows), -1)
    return tiles(a[:, 0]), tiles(b[:, 0].transpose(0, 2, 1)), mma.place(inst, "accumulator", c)


def fed_product_error(inst, launch, trials: int = 4) -> float:
    """launch(kernel, a_tiles, b_tiles, c_words, d_words_per_lane) -> D words; 0.0 when memory, mma and model agree."""
    from . import mma

    d = launch(fed_kernel(inst), *fed_inputs(inst, trials), inst.words("accumulator"))
    return mma.product_error(inst, d, trials)


def fed_kernel_names() -> tuple[str, ...]:
    return tuple(fed_kernel(inst) for inst in fed_instructions())


# ---- the Family entries (ldmatrix, stmatrix, movmatrix): specs, model and GPU measurement ----------

FRAG = "matrix"  # one operand: the 8*num x 8 b16 tile the lanes' row addresses name
_MIN_SM = {"ldmatrix": 75, "stmatrix": 90, "movmatrix": 75}


def move_of(spec) -> MatrixMove:
    return MatrixMove(spec.api, int(spec.num), bool(spec.trans))


def specs(api: str) -> list:
    from ..layouts.spec import FragmentSpec

    return [FragmentSpec(m.api, FRAG, "m8n8", "b16", "row", num=m.num, trans=m.trans) for m in catalogue(api)]


def _layout(spec, method: str, source, found: np.ndarray):
    from ..layouts.layout import UNKNOWN, Layout

    return Layout(spec, method, source, found[..., 0], found[..., 1], np.full(found.shape[:2], UNKNOWN, np.int8))


def model_layout(spec, method: str = "load"):
    from ..layouts.layout import Source

    move = move_of(spec)
    if move not in catalogue(spec.api):
        return None
    return _layout(spec, method, Source("model", {"model": f"PTX ISA description of {move.ptx}",
                                                  "architectures": [f"sm_{_MIN_SM[spec.api]}+"],
                                                  "basis": "PTX ISA ldmatrix/stmatrix/movmatrix; not measured"}),
                   model_map(move))


def kernel_builds() -> list:
    from ..runtime.build import KernelBuild

    return [KernelBuild("apis/ldmatrix.cu", kernel_names() + fed_kernel_names())]


def gpu_launch() -> Launch:
    """A launch(plan) on the present GPU; outputs are poisoned with a value no method writes."""
    from ..runtime import gpu

    build = kernel_builds()[0]

    def launch(plan: LoadRun) -> np.ndarray:
        *inputs, out = plan.args
        return gpu.launch_poisoned(build, plan.kernel, plan.blocks, inputs, out.shape, out.dtype,
                                   np.iinfo(out.dtype).max - 1)

    return launch


def gpu_fed_launch():
    """A launch() for mma_from_ldmatrix kernels on the present GPU; D is poisoned first."""
    from .mma_probe_io import launch_d_words

    build = kernel_builds()[0]

    def launch(name, a_tiles, b_tiles, c_words, d_words):
        return launch_d_words(build, name, (a_tiles, b_tiles, c_words), d_words)

    return launch


def measure(spec, methods: tuple[str, ...] | None = None, source=None, **_) -> dict:
    from ..probes.run import gpu_source

    source = source or gpu_source()
    found = measure_maps(move_of(spec), methods or METHODS[spec.api], gpu_launch())
    return {method: _layout(spec, method, source, m) for method, m in found.items()}


_TITLES = {"ldmatrix": "PTX ldmatrix: 8x8 b16 matrices from row addresses into registers",
           "stmatrix": "PTX stmatrix: registers into 8x8 b16 matrices at row addresses",
           "movmatrix": "PTX movmatrix: transpose an 8x8 b16 matrix in registers"}


def _family(api: str):
    from .family import Family

    return Family(
        api=api, title=_TITLES[api], threads=32, operands=(FRAG,), methods=METHODS[api],
        specs=lambda: specs(api), model=model_layout, measure=measure, kernel_builds=kernel_builds,
        min_sm=_MIN_SM[api], ptx=MatrixMove(api, 1, api == "movmatrix").ptx,
        dims=lambda spec: (8 * int(spec.num), 8), slots=lambda spec: 2 * int(spec.num),
        note=lambda spec: move_of(spec).ptx,
        defaults={FRAG: {"shape": "m8n8", "dtype": "b16", "layout": "row", "num": 4 if api != "movmatrix" else 1,
                         "trans": api == "movmatrix"}},
        model_archs=("sm_90",))


def __getattr__(name: str):
    # Built on first use, so the numpy part imports without the package's other wings.
    apis = {"FAMILY": "ldmatrix", "STMATRIX_FAMILY": "stmatrix", "MOVMATRIX_FAMILY": "movmatrix"}
    if name in apis:
        return _family(apis[name])
    raise AttributeError(name)
