"""The FP32 SIMT GEMM ladder (gemm/simt.cu): specs, builds, dispatch and launch (the ladder run: fraglab.bench.simt_ladder).

    D = act(alpha * A @ B (+ beta * C) (+ bias)),   Z = the pre-activation (when asked for)

Each rung adds one idea to the one before (RUNGS, in ladder order); all end in the same compile-time
epilogue policy as the WMMA GEMM (gemm/epilogue.cuh). Everything here but `launch`
is plain Python and runs without a GPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Optional, Union

import numpy as np

from .epilogue import ACT_KINDS, BIAS_MODES, epilogue_cpp
from ..errors import check_choice
from ..runtime.build import KernelBuild

ENTRY = "gemm/simt.cu"
_NS = "fraglab::simt::"


@dataclass(frozen=True)
class RungSpec:
    """One rung: its kernel template, tile arguments and the launch they imply."""
    name: str
    kernel: str                           # template name in gemm/simt.cu
    template_args: tuple[Union[int, bool], ...]  # after the epilogue type, as the template lists them
    block: tuple[int, int]                # threads per block (x, y)
    tile: Optional[tuple[int, int]]       # outputs per block (rows, cols); None: 1-D grid over M * N
    idea: str                             # what this rung adds to the one before

    def grid(self, m: int, n: int) -> tuple[int, ...]:
        if self.tile is None:
            return (math.ceil(m * n / self.block[0]),)
        return (math.ceil(n / self.tile[1]), math.ceil(m / self.tile[0]))


# Tile numbers match the named defaults in gemm/simt.cu (kSmokeBlock, kTile2dBM, ...).
RUNG_SPECS: dict[str, RungSpec] = {s.name: s for s in (
    RungSpec("smoke", "gemm_smoke", (16, 16), (16, 16), (16, 16),
             "one thread per output, 16x16 blocks (the seed's small-problem kernel)"),
    RungSpec("naive_uncoalesced", "gemm_naive", (False, 256), (256, 1), None,
             "one thread per output, neighbouring threads on neighbouring rows (strided A loads, D stores)"),
    RungSpec("naive_coalesced", "gemm_naive", (True, 256), (256, 1), None,
             "neighbouring threads on neighbouring columns: B loads and D stores coalesce, A is a broadcast"),
    RungSpec("smem_cache", "gemm_smem_cache", (32,), (32, 32), (32, 32),
             "32x32 tiles of A and B staged in shared memory, each element read from DRAM once per block"),
    RungSpec("reg_tile_1d", "gemm_reg_tile_1d", (64, 64, 8, 8), (512, 1), (64, 64),
             "each thread 8 outputs down a column: one B read from shared memory feeds 8 FMAs"),
    RungSpec("reg_tile_2d", "gemm_reg_tile_2d", (False, 128, 128, 8, 8, 8, 1), (16, 16), (128, 128),
             "each thread an 8x8 outer product (128x128 blocks, BK 8), A rows padded against bank conflicts"),
    RungSpec("reg_tile_2d_db", "gemm_reg_tile_2d", (True, 128, 128, 8, 8, 8, 1), (16, 16), (128, 128),
             "double-buffered shared tiles: the next tile loads while this one is used, one barrier per step"),
    RungSpec("vectorized", "gemm_vectorized", (128, 128, 8, 8, 8, 4), (16, 16), (128, 128),
             "16-byte global loads and D stores, A transposed in shared memory, 16-byte shared reads"),
    RungSpec("warp_tiled", "gemm_warp_tiled", (128, 256, 8, 64, 64, 4, 1), (256, 1), (128, 256),
             "64x64 warp tiles of 4x4 lane sub-tiles (16x8 outputs a lane), 128x256 blocks: conflict-free "
             "shared reads"),
)}
RUNGS: tuple[str, ...] = tuple(RUNG_SPECS)

# What `choose_rung` (and so gemm(kernel="simt")) picks, by the number of outputs M * N. Measured on the
# H200 with tools/simt/bench_simt.py threshold (table in docs/benchmarks.md, SIMT part), at K = 64, 512, 4096:
# - smoke won every shape up to 512 x 512 outputs (and the skinny ones up to 65536 outputs); from
#   576 x 576 on the tiled kernels won. Both grow linearly in K, so K does not move the crossover.
# - vectorized (128 x 128 tiles) beat warp_tiled (128 x 256 tiles) up to 1280 x 1280 outputs (and at
#   64 x 16384, 16384 x 64); warp_tiled won from 1536 x 1536 at every K. Each kernel's time stays that
#   of one block until its grid passes the 132 SMs, and vectorized's smaller tiles pass it first.
# - warp_tiled was the fastest rung at 2048^3, 4096^3 and 8192^3.
SMOKE_THRESHOLD = 512 * 512
MID_RUNG = "vectorized"
MID_THRESHOLD = 1280 * 1280
TOP_RUNG = "warp_tiled"
DISPATCH_RUNGS = ("smoke", MID_RUNG, TOP_RUNG)

_GRID_Y_MAX = 65535
_GRID_X_MAX = 2**31 - 1
_INT32_MAX = 2**31 - 1


def rung_spec(rung: str) -> RungSpec:
    """The spec of a rung (tools may register extra tile variants in RUNG_SPECS beside the ladder)."""
    if rung not in RUNG_SPECS:
        check_choice(rung, RUNGS, "kernel")
    return RUNG_SPECS[rung]


def _cpp_arg(value: Union[int, bool]) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(int(value))


def kernel_name(rung: str, act: str = "none", bias_mode: str = "none", has_c: bool = False,
                save_z: bool = False) -> str:
    """The name expression, e.g. 'fraglab::simt::gemm_smoke<fraglab::Epilogue<...>, 16, 16>'."""
    spec = rung_spec(rung)
    args = ", ".join((epilogue_cpp(act, bias_mode, has_c, save_z), *map(_cpp_arg, spec.template_args)))
    return f"{_NS}{spec.kernel}<{args}>"


def build_for(rung: str, act: str = "none", bias_mode: str = "none", has_c: bool = False,
              save_z: bool = False) -> KernelBuild:
    """The one-kernel build `launch` compiles for this rung and epilogue."""
    return KernelBuild(entry=ENTRY, name_expressions=(kernel_name(rung, act, bias_mode, has_c, save_z),))


def epilogue_combinations() -> list[tuple[str, str, bool, bool]]:
    """Every (act, bias_mode, has_c, save_z) the epilogue policy can be asked for: 8 x 4 x 2 x 2."""
    return [(a, b, c, z) for a in ACT_KINDS for b in BIAS_MODES for c in (False, True) for z in (False, True)]


def all_builds() -> list[KernelBuild]:
    """Every build `launch` can request: each rung with each epilogue (one kernel per build)."""
    return [build_for(r, *combo) for r in RUNGS for combo in epilogue_combinations()]


def rung_build(rung: str, combos: Optional[Iterable[tuple[str, str, bool, bool]]] = None) -> KernelBuild:
    """One build holding `rung` with many epilogues (all by default): one compile checks them together."""
    combos = list(epilogue_combinations() if combos is None else combos)
    return KernelBuild(entry=ENTRY, name_expressions=tuple(kernel_name(rung, *c) for c in combos))


def choose_rung(m: int, n: int, k: int) -> str:
    """The rung `gemm(kernel="simt")` uses: smoke up to SMOKE_THRESHOLD outputs, MID_RUNG up to
    MID_THRESHOLD, TOP_RUNG above (the measurements are noted at the thresholds)."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        if int(value) < 1:
            raise ValueError(f"invalid {name} {value}: must be >= 1")
    outputs = m * n
    if outputs <= SMOKE_THRESHOLD:
        return "smoke"
    return MID_RUNG if outputs <= MID_THRESHOLD else TOP_RUNG


def launch_geometry(rung: str, m: int, n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(grid, block) for an M x N output; ValueError when the grid would pass CUDA's limits."""
    spec = rung_spec(rung)
    grid = spec.grid(m, n)
    if grid[0] > _GRID_X_MAX or (len(grid) > 1 and grid[1] > _GRID_Y_MAX):
        raise ValueError(f"a {m} x {n} output needs grid {grid}, beyond CUDA's limits for kernel {rung!r}")
    return grid, spec.block


# ---------------------------------------------------------------------------------------------- GPU
def _leading_dim(x, argument: str) -> int:
    """Row pitch in elements of a row-major f32 matrix view (columns must be contiguous)."""
    if x.dtype != np.float32:
        raise ValueError(f"{argument} must be float32 for the SIMT GEMM, not {x.dtype}")
    rows, cols = x.shape
    item = x.itemsize
    if cols > 1 and x.strides[1] != item:
        raise ValueError(f"{argument} must have contiguous rows (row-major); its strides are {x.strides}")
    if rows == 1:
        return max(cols, 1)
    if x.strides[0] % item or x.strides[0] < cols * item:
        raise ValueError(f"{argument} has an unsupported row stride {x.strides[0]} bytes")
    ld = x.strides[0] // item
    if ld > _INT32_MAX:
        raise ValueError(f"{argument} has a row pitch beyond 2^31 elements")
    return ld


def launch(rung: str, a, b, d, *, c=None, bias=None, bias_mode: str = "none", act: str = "none",
           alpha: float = 1.0, beta: float = 0.0, leaky_slope: float = 0.01, z=None, stream=None) -> None:
    """Run one rung: d (and z) = the fused GEMM of CuPy float32 arrays a (M x K), b (K x N).

    Arguments are expected to be validated by fraglab.gemm_api; shapes and strides are re-read here.
    `c` given means the C term is compiled in (beta scales it); `z` given means Z is written.
    """
    from ..runtime import gpu

    m, k = a.shape
    n = b.shape[1]
    if max(m, n, k) > _INT32_MAX:
        raise ValueError("M, N and K must each fit in 32 bits")
    grid, block = launch_geometry(rung, m, n)
    has_c, save_z = c is not None, z is not None
    fn = gpu.function(build_for(rung, act, bias_mode, has_c, save_z),
                      kernel_name(rung, act, bias_mode, has_c, save_z))
    # unused pointers get D: the policy compiles their reads and writes out
    if bias_mode == "full":
        bias_ptr, ldbias = bias, _leading_dim(bias, "bias")
    elif bias_mode in ("per_m", "per_n"):
        if bias.ndim != 1 or (bias.shape[0] > 1 and bias.strides[0] != bias.itemsize):
            raise ValueError("bias must be a contiguous 1-D float32 array for bias_mode per_m / per_n")
        bias_ptr, ldbias = bias, 0
    else:
        bias_ptr, ldbias = d, 0
    args = (np.int32(m), np.int32(n), np.int32(k), a, np.int32(_leading_dim(a, "a")),
            b, np.int32(_leading_dim(b, "b")), np.float32(alpha), np.float32(beta), np.float32(leaky_slope),
            c if has_c else d, np.int32(_leading_dim(c, "c") if has_c else 0),
            bias_ptr, np.int32(ldbias),
            d, np.int32(_leading_dim(d, "out")),
            z if save_z else d, np.int32(_leading_dim(z, "z") if save_z else 0))
    if stream is not None:
        with stream:
            fn(grid, block, args)
    else:
        fn(grid, block, args)


__all__ = ["RUNGS", "RUNG_SPECS", "RungSpec", "TOP_RUNG", "MID_RUNG", "DISPATCH_RUNGS", "SMOKE_THRESHOLD",
           "MID_THRESHOLD", "rung_spec", "kernel_name",
           "build_for", "rung_build", "all_builds", "epilogue_combinations", "choose_rung", "launch_geometry",
           "launch"]
