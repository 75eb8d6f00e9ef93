"""Launcher of the WMMA GEMM (kernels/gemm_wmma.cu): run-time options -> one template instantiation.

The seed's launcher-switch pattern, as data: (dtype, act, bias mode, has C, save Z, tile, aligned)
names exactly one `fraglab::gemm_wmma_kernel<...>`; each is its own KernelBuild, compiled through
`name_expressions` the first time it is asked for and cached by fraglab.gpu (memory and disk).
Everything but `launch` runs without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from .epilogue_ref import ACT_KINDS, BIAS_MODES, epilogue_cpp
from .sources import KernelBuild

ENTRY = "gemm_wmma.cu"
DTYPES = ("f16", "bf16")
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}


@dataclass(frozen=True)
class TileSpec:
    """Block tile bm x bn x bk, warp tile wm x wn, `stages`-deep cp.async pipeline (fraglab::WmmaTile)."""
    bm: int
    bn: int
    bk: int
    wm: int
    wn: int
    stages: int

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def smem_bytes(self) -> int:
        """Same arithmetic as WmmaTile::kSmemBytes."""
        pipe = self.stages * (self.bm * (self.bk + 8) + self.bk * (self.bn + 8)) * 2
        epilogue = (self.threads // 32) * 16 * (self.wn + 4) * 4
        return max(pipe, epilogue)

    def cpp(self) -> str:
        return f"fraglab::WmmaTile<{self.bm}, {self.bn}, {self.bk}, {self.wm}, {self.wn}, {self.stages}>"


# 8 warps of 64x64 for large problems; 4 warps for problems that would not fill the chip with 128x256.
TILES: dict[str, TileSpec] = {
    "128x256": TileSpec(128, 256, 32, 64, 64, 4),
    "128x128": TileSpec(128, 128, 32, 64, 64, 4),
}
GENERIC_TILE = "128x128"   # the edge-tolerant (unaligned) kernel is built for this tile only


@dataclass(frozen=True)
class WmmaKernelSpec:
    dtype: str
    act: str = "none"
    bias_mode: str = "none"
    has_c: bool = False
    save_z: bool = False
    tile: str = "128x256"
    aligned: bool = True

    def __post_init__(self):
        for value, valid, argument in ((self.dtype, DTYPES, "dtype"), (self.act, ACT_KINDS, "act"),
                                       (self.bias_mode, BIAS_MODES, "bias_mode"), (self.tile, tuple(TILES), "tile")):
            if value not in valid:
                raise ValueError(f"invalid {argument} {value!r}: valid choices are {', '.join(valid)}")
        if not self.aligned and self.tile != GENERIC_TILE:
            raise ValueError(f"the unaligned kernel exists only for tile {GENERIC_TILE}")

    @property
    def tile_spec(self) -> TileSpec:
        return TILES[self.tile]

    def name(self) -> str:
        """The C++ name expression of this instantiation."""
        return (f"fraglab::gemm_wmma_kernel<{self.tile_spec.cpp()}, "
                f"{epilogue_cpp(self.act, self.bias_mode, self.has_c, self.save_z)}, "
                f"{'true' if self.aligned else 'false'}, {_CPP_TYPE[self.dtype]}>")

    def build(self) -> KernelBuild:
        return KernelBuild(entry=ENTRY, name_expressions=(self.name(),))


def choose_tile(m: int, n: int, sm_count: int = 132) -> str:
    """128x256 once it gives at least one full wave of blocks, else 128x128 (twice the blocks)."""
    big = TILES["128x256"]
    blocks = -(-m // big.bm) * -(-n // big.bn)
    return "128x256" if blocks >= sm_count else "128x128"


def is_aligned(k: int, n: int, pointers: tuple[int, ...]) -> bool:
    """The 16-byte path needs K and N multiples of 8 (rows of A, B, C, D start 16-byte aligned) and
    every base pointer 16-byte aligned."""
    return k % 8 == 0 and n % 8 == 0 and all(p % 16 == 0 for p in pointers if p)


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
        for tile in TILES:
            out.append(WmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, tile, True))
        out.append(WmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, GENERIC_TILE, False))
    return out


def all_builds() -> list[KernelBuild]:
    return [s.build() for s in all_specs()]


def grid_blocks(m: int, n: int, tile: TileSpec) -> int:
    return -(-m // tile.bm) * -(-n // tile.bn)


def launch(spec: WmmaKernelSpec, a, b, d, *, c=None, bias=None, z=None, alpha: float = 1.0, beta: float = 0.0,
           leaky_slope: float = 0.01, stream=None) -> None:
    """Launch one instantiation on validated, contiguous CuPy arrays (fraglab.gemm_api validates)."""
    from . import gpu

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
            z if z is not None else unused)
    kernel((grid_blocks(m, n, tile),), (tile.threads,), args, shared_mem=tile.smem_bytes, stream=stream)


__all__ = ["DTYPES", "TILES", "TileSpec", "WmmaKernelSpec", "choose_tile", "is_aligned", "spec_for", "all_specs",
           "all_builds", "launch", "grid_blocks"]
