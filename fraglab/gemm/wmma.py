"""Launcher of the WMMA GEMM (gemm/wmma.cu): run-time options -> one template instantiation.

The launcher switch, as data: (dtype, act, bias mode, has C, save Z, tile, aligned)
names exactly one `fraglab::gemm_wmma_kernel<...>`; each is its own KernelBuild, compiled through
`name_expressions` the first time it is asked for and cached by fraglab.runtime.gpu (memory and disk).
Everything but `launch` runs without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from ..errors import check_choice
from ..runtime.build import KernelBuild
from .epilogue import ACT_KINDS, BIAS_MODES, epilogue_cpp
from .validate import is_aligned  # noqa: F401  (the one alignment rule; re-exported for the launcher's callers)

ENTRY = "gemm/wmma.cu"
DTYPES = ("f16", "bf16")
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}


@dataclass(frozen=True)
class TileSpec:
    """Block tile bm x bn x bk, warp tile wm x wn, `stages`-deep cp.async pipeline, `group_m` tiles along M
    visited together; inside each k-tile, the copies of a later k-tile are issued at k-step `load_step` and
    the wait + barrier for the next k-tile opens k-step `barrier_step` (-1: the last step)
    (fraglab::WmmaTile)."""
    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    stages: int
    group_m: int = 8
    load_step: int = -1
    barrier_step: int = -1

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def smem_bytes(self) -> int:
        """Same arithmetic as WmmaTile::kSmemBytes."""
        pipe = self.stages * (self.bm * (self.bk + 8) + self.bk * (self.bn + 8)) * 2
        epilogue = (self.threads // 32) * self.wm * (self.wn + 4) * 4
        return max(pipe, epilogue)

    def cpp(self) -> str:
        return (f"fraglab::WmmaTile<{self.bm}, {self.bn}, {self.bk}, {self.wm}, {self.wn}, {self.stages}, "
                f"{self.group_m}, {self.load_step}, {self.barrier_step}>")


# Measured on the H200 (docs/benchmarks.md, tools/gemm/explore_interleaved.py): 256x128 blocks of 8 warps
# (64x64 warp tiles, BK 64, 3 stages) were fastest from 2048^3 up; problems that give fewer than ~3/4 of
# a wave of those blocks take 128x64 blocks of 8 warps of 32x32 (4 stages, copies issued right after the
# barrier), the fastest of eight small tiles at 1024^3 and the one whose epilogue costs least there
# (twice the warps of a 64x32 warp tiling share the epilogue's arithmetic).
TILES: dict[str, TileSpec] = {
    "256x128": TileSpec(256, 128, 64, 64, 64, 3),
    "128x64": TileSpec(128, 64, 64, 32, 32, 4, 8, 0),
    "128x128": TileSpec(128, 128, 32, 64, 64, 4),
}
ALIGNED_TILES = ("256x128", "128x64")   # what the 16-byte path chooses between
GENERIC_TILE = "128x128"                # the edge-tolerant (unaligned) kernel is built for this tile only
BIG_TILE_MIN_WAVE = 0.75                # fraction of one wave of big blocks from which the big tile wins
# Candidates timed by tools/gemm (benchmarks only: the launcher never picks them). Suffixes: kNN block
# depth, sN stages, e copies issued at the first k-step, bN/lN barrier/copy step, gN group size.
EXPERIMENTAL_TILES: dict[str, TileSpec] = {
    "128x256": TileSpec(128, 256, 32, 64, 64, 4),
    "128x256k64": TileSpec(128, 256, 64, 64, 64, 3),
    "128x128k64": TileSpec(128, 128, 64, 64, 64, 3),
    "64x128k64": TileSpec(64, 128, 64, 64, 64, 3),
    "64x64k64": TileSpec(64, 64, 64, 32, 32, 3),
    "256x128s4": TileSpec(256, 128, 64, 64, 64, 4),
    "256x128g4": TileSpec(256, 128, 64, 64, 64, 3, 4),
    "256x128g16": TileSpec(256, 128, 64, 64, 64, 3, 16),
    "256x128e": TileSpec(256, 128, 64, 64, 64, 3, 8, 0),
    "256x128s4e": TileSpec(256, 128, 64, 64, 64, 4, 8, 0),
    "256x128b2": TileSpec(256, 128, 64, 64, 64, 3, 8, 2, 2),
    "256x128s4b2": TileSpec(256, 128, 64, 64, 64, 4, 8, 2, 2),
    "256x128s4b1": TileSpec(256, 128, 64, 64, 64, 4, 8, 1, 1),
    "256x128k128": TileSpec(256, 128, 128, 64, 64, 2, 8, 0),
    "128x64w64": TileSpec(128, 64, 64, 64, 32, 3),
    "128x64e": TileSpec(128, 64, 64, 64, 32, 3, 8, 0),
    "128x64s4e": TileSpec(128, 64, 64, 64, 32, 4, 8, 0),
    "128x64k128": TileSpec(128, 64, 128, 64, 32, 2, 8, 0),
    "64x64s4e": TileSpec(64, 64, 64, 32, 32, 4, 8, 0),
}
_ANY_TILE = {**TILES, **EXPERIMENTAL_TILES}


@dataclass(frozen=True)
class WmmaKernelSpec:
    dtype: str
    act: str = "none"
    bias_mode: str = "none"
    has_c: bool = False
    save_z: bool = False
    tile: str = "256x128"
    aligned: bool = True

    def __post_init__(self):
        for value, valid, argument in ((self.dtype, DTYPES, "dtype"), (self.act, ACT_KINDS, "act"),
                                       (self.bias_mode, BIAS_MODES, "bias_mode"), (self.tile, tuple(_ANY_TILE), "tile")):
            check_choice(value, valid, argument)
        if not self.aligned and self.tile != GENERIC_TILE:
            raise ValueError(f"the unaligned kernel exists only for tile {GENERIC_TILE}")

    @property
    def tile_spec(self) -> TileSpec:
        return _ANY_TILE[self.tile]

    def name(self) -> str:
        """The C++ name expression of this instantiation."""
        return (f"fraglab::gemm_wmma_kernel<{self.tile_spec.cpp()}, "
                f"{epilogue_cpp(self.act, self.bias_mode, self.has_c, self.save_z)}, "
                f"{'true' if self.aligned else 'false'}, {_CPP_TYPE[self.dtype]}>")

    def build(self) -> KernelBuild:
        return KernelBuild(entry=ENTRY, name_expressions=(self.name(),))


def choose_tile(m: int, n: int, sm_count: int = 132) -> str:
    """256x128 once it gives at least BIG_TILE_MIN_WAVE of a wave of blocks, else 128x64 (4x the blocks)."""
    return "256x128" if grid_blocks(m, n, TILES["256x128"]) >= BIG_TILE_MIN_WAVE * sm_count else "128x64"


def spec_for(dtype: str, m: int, n: int, k: int, *, act: str = "none", bias_mode: str = "none",
             has_c: bool = False, save_z: bool = False, aligned: bool = True, sm_count: int = 132,
             tile: str | None = None) -> WmmaKernelSpec:
    """The instantiation the launcher uses for this problem."""
    if not aligned:
        tile = GENERIC_TILE
    return WmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, tile or choose_tile(m, n, sm_count), aligned)


def all_specs() -> list[WmmaKernelSpec]:
    """Every instantiation `spec_for` can return."""
    out = []
    for dtype, act, bias_mode, has_c, save_z in product(DTYPES, ACT_KINDS, BIAS_MODES, (False, True), (False, True)):
        for tile in ALIGNED_TILES:
            out.append(WmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, tile, True))
        out.append(WmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, GENERIC_TILE, False))
    return out


def all_builds() -> list[KernelBuild]:
    return [s.build() for s in all_specs()]


def precompile(specs, workers: int | None = None) -> float:
    """Compile many instantiations at once (runtime.gpu.precompile); returns the seconds taken. Doing them up front
    in parallel keeps a first test or benchmark run short (later processes load CuPy's disk cache: 0.18 s)."""
    from ..runtime import gpu

    return gpu.precompile((s.build() for s in specs), workers)


def grid_blocks(m: int, n: int, tile: TileSpec) -> int:
    return -(-m // tile.bm) * -(-n // tile.bn)


def launch(spec: WmmaKernelSpec, a, b, d, *, c=None, bias=None, z=None, alpha: float = 1.0, beta: float = 0.0,
           leaky_slope: float = 0.01, stream=None, ldc: int = 0, ldbias: int = 0, ldd: int = 0, ldz: int = 0) -> None:
    """Launch one instantiation on validated CuPy arrays (fraglab.gemm_api validates): A and B dense, C, a full
    bias, D and Z rows ldc, ldbias, ldd, ldz elements apart (0: dense, N)."""
    from ..runtime import gpu

    cp = gpu.cupy()
    m, k = a.shape
    n = b.shape[1]
    tile = spec.tile_spec
    kernel = gpu.function(spec.build(), spec.name())
    if kernel.max_dynamic_shared_size_bytes < tile.smem_bytes:
        kernel.max_dynamic_shared_size_bytes = tile.smem_bytes
    unused = d  # never read or written: the instantiation compiles the access out
    args = (a, b, cp.int32(m), cp.int32(n), cp.int32(k), cp.float32(alpha), cp.float32(beta),
            cp.float32(leaky_slope), c if c is not None else unused, bias if bias is not None else unused, d,
            z if z is not None else unused, cp.int32(ldc or n), cp.int32(ldbias or n), cp.int32(ldd or n),
            cp.int32(ldz or n))
    grid = (grid_blocks(m, n, tile),)
    if stream is None:
        kernel(grid, (tile.threads,), args, shared_mem=tile.smem_bytes)   # CuPy's current stream
    else:
        with stream:
            kernel(grid, (tile.threads,), args, shared_mem=tile.smem_bytes)


__all__ = ["DTYPES", "TILES", "TileSpec", "WmmaKernelSpec", "choose_tile", "is_aligned", "spec_for", "all_specs",
           "all_builds", "launch", "grid_blocks"]
