"""Blackwell tcgen05.ld / tcgen05.st (Tensor Memory <-> registers): a MODEL ONLY family.

Not measured: no sm_100 here. There is no probe kernel; the maps below are the PTX ISA's data-movement
shapes ("Tensor Memory" > "Data Movement Shape" > "Matrix fragments for shape .32x32b / .16x64b / .16x128b
/ .16x256b / .16x32bx2") written as numpy. tcgen05.st is the mirror of tcgen05.ld: register slot s of
thread t is stored to the (lane, column) it would be loaded from, so one map answers both.

The question is the one every family answers, for one warp (32 threads): which thread and which 32-bit
register (slot = register index, lowest first) holds which Tensor Memory element. A warp reaches only
its own quarter of Tensor Memory (warp w of a warpgroup: lanes 32 * (w % 4) .. + 31); `row` is the TMEM
lane relative to the lane of the address the warp gives (0..31 for .32x32b, 0..15 for the 16-lane
shapes) and `col` the 32-bit column relative to the address's column.

.16x32bx2 makes two .16x32b accesses: the first at the address, the second at address + immHalfSplitoff
columns. Its grid is 16 x 2N: columns 0..N-1 are the first access, N..2N-1 the second (drawn as if
immHalfSplitoff = N, the contiguous case; a kernel may place the second half anywhere).

Formulas (t = thread 0..31, r = register 0..regs-1 of an instruction with .num = N):
    .32x32b   (32 x N)   regs N    lane t                          col r
    .16x64b   (16 x 2N)  regs N    lane t/4 + 8 (t%2)              col 2r + (t/2)%2
    .16x128b  (16 x 4N)  regs 2N   lane t/4 + 8 (r%2)              col 4 (r/2) + t%4
    .16x256b  (16 x 8N)  regs 4N   lane t/4 + 8 ((r/2)%2)          col 8 (r/4) + 2 (t%4) + r%2
    .16x32bx2 (16 x 2N)  regs N    lane t%16                       col N (t/16) + r
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

API = "tcgen05"
FRAG = "tmem"            # one operand: the Tensor Memory tile the warp's address names
DTYPE = "b32"            # 32-bit elements (without .pack::16b / .unpack::16b)
LAYOUT = "row"           # rows are TMEM lanes
METHODS = ("load",)      # the map tcgen05.ld fills (tcgen05.st reads the same slots back); never measured
MIN_SM = 100
MODEL_ARCHITECTURES = ("sm_100",)
NOT_MEASURED = "not measured: no sm_100 here"

SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
LANES = {"32x32b": 32, "16x64b": 16, "16x128b": 16, "16x256b": 16, "16x32bx2": 16}
REGS_PER_NUM = {"32x32b": 1, "16x64b": 1, "16x128b": 2, "16x256b": 4, "16x32bx2": 1}   # PTX ISA, tcgen05.ld
COLS_PER_NUM = {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8, "16x32bx2": 2}   # 32-bit columns
MAX_NUM = {"32x32b": 128, "16x64b": 128, "16x128b": 64, "16x256b": 32, "16x32bx2": 128}
CATALOGUE_NUMS = (1, 2, 4)  # the catalogue's subset of the .num the ISA allows (x1 .. MAX_NUM, powers of 2)


def allowed_nums(shape: str) -> tuple[int, ...]:
    """Every .num the PTX ISA allows for `shape`: x1, x2, x4, ... up to x128 (.16x128b: x64, .16x256b: x32)."""
    return tuple(1 << i for i in range(MAX_NUM[shape].bit_length()))


@dataclass(frozen=True)
class TmemMove:
    """One tcgen05.ld (or .st) data-movement shape with its .num repetition count."""

    shape: str
    num: int

    def __post_init__(self):
        if self.shape not in LANES:
            raise ValueError(f"unknown tcgen05 shape {self.shape!r}: valid choices are {', '.join(SHAPES)}")
        if self.num not in allowed_nums(self.shape):
            raise ValueError(f"tcgen05 .{self.shape} takes .num "
                             f"{', '.join(f'x{n}' for n in allowed_nums(self.shape))}, not x{self.num}")

    @property
    def regs(self) -> int:
        return REGS_PER_NUM[self.shape] * self.num

    @property
    def rows(self) -> int:
        return LANES[self.shape]

    @property
    def cols(self) -> int:
        return COLS_PER_NUM[self.shape] * self.num


def catalogue() -> list[TmemMove]:
    return [TmemMove(shape, num) for shape in SHAPES for num in CATALOGUE_NUMS]


# ---- the model -----------------------------------------------------------------------------------

def model_map(move: TmemMove) -> np.ndarray:
    """(32, regs, 2) int array: (TMEM lane, 32-bit column) of register r of thread t."""
    t = np.arange(32)[:, None]
    r = np.arange(move.regs)[None, :]
    shape, n = move.shape, move.num
    if shape == "32x32b":
        lane, col = t, r
    elif shape == "16x64b":
        lane, col = t // 4 + 8 * (t % 2), 2 * r + (t // 2) % 2
    elif shape == "16x128b":
        lane, col = t // 4 + 8 * (r % 2), 4 * (r // 2) + t % 4
    elif shape == "16x256b":
        lane, col = t // 4 + 8 * ((r // 2) % 2), 8 * (r // 4) + 2 * (t % 4) + r % 2
    else:  # 16x32bx2: threads 0..15 make the first access, 16..31 the second
        lane, col = t % 16, n * (t // 16) + r
    return np.stack(np.broadcast_arrays(lane, col), axis=-1).astype(np.int32)


# ---- the Family entry ------------------------------------------------------------------------------

def move_of(spec) -> TmemMove:
    return TmemMove(spec.shape, int(spec.num))


def specs() -> list:
    from ..layouts.spec import FragmentSpec

    return [FragmentSpec(API, FRAG, m.shape, DTYPE, LAYOUT, num=m.num) for m in catalogue()]


def _basis(move: TmemMove) -> str:
    return (f"PTX ISA, tcgen05 'Matrix fragments for shape .{move.shape}' and the tcgen05.ld register counts; "
            f"tcgen05.st is the mirror; {NOT_MEASURED}")


def model_layout(spec, method: str = "load"):
    from ..layouts.layout import UNKNOWN, Layout, Source

    try:
        move = move_of(spec)
    except (ValueError, TypeError):
        return None
    if spec.api != API or spec.frag != FRAG or spec.dtype != DTYPE or spec.layout != LAYOUT:
        return None
    found = model_map(move)
    source = Source("model", {"model": f"PTX ISA tcgen05.{{ld,st}}.{move.shape}.x{move.num}.b32, {NOT_MEASURED}",
                              "architectures": list(MODEL_ARCHITECTURES),
                              "basis": _basis(move)})
    return Layout(spec, method, source, found[..., 0], found[..., 1], np.full(found.shape[:2], UNKNOWN, np.int8))


def measure(spec, methods: tuple[str, ...] | None = None, source=None, **_) -> dict:
    """Refused in one line: fraglab has no tcgen05 probe (model only)."""
    from ..errors import ProbeUnsupported

    raise ProbeUnsupported(f"{spec.describe()} is model only, {NOT_MEASURED} (fraglab has no tcgen05 probe); "
                           "use --source model")


def kernel_builds() -> list:
    return []  # nothing to compile: no probe kernel


def dims(spec) -> tuple[int, int]:
    move = move_of(spec)
    return move.rows, move.cols


def slots(spec) -> int:
    return move_of(spec).regs


def note(spec) -> str:
    text = (f"model only, {NOT_MEASURED}; .num x1 x2 x4 listed (the ISA allows up to x128, "
            ".16x128b x64, .16x256b x32)")
    if spec.shape == "16x32bx2":
        text += "; columns N..2N-1 are the second access, at taddr + immHalfSplitoff"
    return text


def _family():
    from .family import Family

    return Family(
        api=API,
        title="Blackwell tcgen05.ld / tcgen05.st: Tensor Memory lanes x 32-bit columns <-> a warp's registers "
              f"(MODEL ONLY, {NOT_MEASURED})",
        threads=32, operands=(FRAG,), methods=METHODS, specs=specs, model=model_layout, measure=measure,
        kernel_builds=kernel_builds, min_sm=MIN_SM, ptx="tcgen05.{ld,st}.sync.aligned.<shape>.<num>.b32",
        dims=dims, slots=slots, note=note,
        defaults={FRAG: {"shape": "32x32b", "dtype": DTYPE, "layout": LAYOUT, "num": 1}},
        model_archs=MODEL_ARCHITECTURES, model_only=True)


def __getattr__(name: str):
    # Built on first use, so the numpy part imports without the package's other wings.
    if name == "FAMILY":
        return _family()
    raise AttributeError(name)


__all__ = ["TmemMove", "catalogue", "model_map", "model_layout", "allowed_nums", "specs", "measure",
           "kernel_builds", "SHAPES"]
