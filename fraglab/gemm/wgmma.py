"""Launcher of the Hopper wgmma GEMM (fraglab/gemm/wgmma.cu): spec -> one template instantiation -> launch.

Everything but `launch` runs without a GPU: the tile table, the kernel names, the generated accumulator
indexing (from fraglab's wgmma layout model, never typed into the kernel) and the NVRTC build description
that the CPU compile test and the GPU runtime share. Tensor maps are encoded by NVIDIA's cuda-bindings
(`cuTensorMapEncodeTiled`) and passed to the kernel by value.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from ..errors import InputError, check_choice
from ..memo import BoundedMemo
from ..runtime.build import SM90A, Sm90aBuild
from . import schedule
from .dtypes import BYTES as _BYTES
from .epilogue import ACT_KINDS, BIAS_DTYPES, BIAS_MODES, check_bias_dtype, epilogue_cpp
from .tensor_maps import MAPS as _MAPS, NO_MAP as _NO_MAP
from .wgmma_accumulators import (ACC_N, STMATRIX_ORIGINS, AccumulatorIndexing, accumulator_header,  # noqa: F401
                                 accumulator_indexing, accumulator_map, stmatrix_plan)
from .wgmma_tiles import (ALL_TILES, BK, EXPERIMENTAL_TILES, SMEM_LIMIT, TILES, TileConfig,  # noqa: F401
                          launcher_tiles)

ENTRY = "gemm/wgmma.cu"
ARCH = SM90A
DTYPES = ("f16", "bf16")           # 16-bit inputs: B row-major or column-major
FP8_DTYPES = ("e4m3",)             # 8-bit inputs: wgmma takes them K-major only, so B comes column-major
INPUT_DTYPES = (*DTYPES, *FP8_DTYPES)
OUT_DTYPES = ("f32", "f16", "bf16")   # D; Z is always f32
STORES = ("direct", "tma")        # D from registers, or through shared memory and TMA stores
B_ORDERS = ("C", "F")             # B (K x N) row-major, or column-major (a row-major N x K: the K-major operand)
_B_ORDER_NAMES = {"C": "row-major", "F": "column-major"}
A_ORDERS = ("C", "F")             # A (M x K) row-major (K-major), or column-major (a row-major K x M: MN-major)
# How an operand reaches the stages: TMA boxes, or 16-byte cp.async chunks by the producer's copy threads into the
# same swizzled layout, so that no TMA box has rows 16 but not 32 bytes aligned (one-block tiles; a launch
# parameter, not a name). Measured slower than TMA on such rows (schedule.py, rule 2): asked for by name only.
LOADS = ("tma", "copy")
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float", "e4m3": "__nv_fp8_e4m3"}
SIXTEEN_BIT_TILES = schedule.SIXTEEN_BIT_ONLY   # launcher tiles for f16 / bf16 inputs only
# How the MN-major B descriptor's two byte offsets are assigned (see BDescOffsets in wgmma.cu):
# False: leading = stride between 64-column blocks, stride = between 8-row swizzle atoms.
B_SWAP_OFFSETS = False


@dataclass(frozen=True)
class WgmmaKernelSpec:
    dtype: str
    act: str = "none"
    bias_mode: str = "none"
    has_c: bool = False
    save_z: bool = False
    tile: str = "128x256"
    b_swap_offsets: bool = B_SWAP_OFFSETS
    out_dtype: str = "f32"
    store: str = "direct"     # "tma": D through shared memory (stmatrix for 16-bit D) and TMA stores
    b_order: str = "C"        # B (K x N) in memory: "C" row-major (MN-major), "F" column-major (K-major: N x K rows)
    l2_promotion: str = schedule.DEFAULT_L2_PROMOTION   # of the A, B and D tensor maps (not the kernel's name)
    scaled: bool = False      # e4m3: the accumulator times scale_a[m] * scale_b[n] first (the rowwise fp8 recipe)
    block_scaled: bool = False   # e4m3: K-block kb's product times scale_a[m, kb] * scale_b[n // 128, kb] (DeepGEMM)
    a_order: str = "C"        # A (M x K): "C" row-major, "F" column-major (16-bit; a launch parameter, not a name)
    a_load: str = "tma"       # how A and B reach shared memory (LOADS; launch parameters, not names)
    b_load: str = "tma"
    bias_dtype: str = "f32"   # the bias in memory: f32, or (per column) the inputs' 16-bit type, read as it is

    def __post_init__(self):
        for value, valid, argument in ((self.dtype, INPUT_DTYPES, "dtype"), (self.out_dtype, OUT_DTYPES, "out_dtype"),
                                       (self.act, ACT_KINDS, "act"),
                                       (self.bias_mode, BIAS_MODES, "bias_mode"),
                                       (self.tile, tuple(ALL_TILES), "tile"), (self.store, STORES, "store"),
                                       (self.b_order, B_ORDERS, "b_order"), (self.a_order, A_ORDERS, "a_order"),
                                       (self.l2_promotion, schedule.L2_PROMOTIONS, "l2_promotion"),
                                       (self.a_load, LOADS, "a_load"), (self.b_load, LOADS, "b_load")):
            check_choice(value, valid, argument)
        if self.dtype in FP8_DTYPES and self.b_order != "F":
            raise ValueError(f"{self.dtype} operands are K-major only: B must be column-major (b_order 'F')")
        if self.dtype in FP8_DTYPES and self.a_order != "C":
            raise ValueError(f"{self.dtype} operands are K-major only: A must be row-major (a_order 'C')")
        if (self.scaled or self.block_scaled) and self.dtype not in FP8_DTYPES:
            raise ValueError(f"scales (scaled, block_scaled) are for {', '.join(FP8_DTYPES)} inputs; "
                             f"{self.dtype} takes its scale in alpha")
        if self.scaled and self.block_scaled:
            raise ValueError("one scaling recipe at a time: row and column scales (scaled) or block scales")
        if self.block_scaled and not self.tile_config.holds_block_scales:
            raise ValueError(f"tile {self.tile!r} has no room for block scales' second accumulator; the tiles "
                             f"compiled for them: {', '.join(schedule.BLOCK_SCALE_TILES)}")
        check_bias_dtype(self.bias_dtype, self.bias_mode, self.dtype)
        if self.tile_config.swap_ab:
            self._check_swapped()
        if "copy" in (self.a_load, self.b_load) and self.tile_config.cluster_blocks > 1:
            raise ValueError(f"tile {self.tile!r} runs in clusters: the copy loader (a_load / b_load 'copy') needs "
                             f"a one-block tile")
        if self.b_order not in self.tile_config.b_orders:
            wanted = self.tile_config.b_orders[0]
            why = (f"its {self.tile_config.bn} columns are not whole 64-column boxes of a row-major B" if wanted == "F"
                   else "its stage holds B in whole 64-column boxes of a row-major B")
            raise InputError(f"tile {self.tile!r} takes B {_B_ORDER_NAMES[wanted]} only (b_order {wanted!r}): {why}; "
                             f"with b_order {self.b_order!r} choose one of {', '.join(launcher_tiles(self.b_order))}",
                             argument="tile")
        if "copy" in (self.a_load, self.b_load) and self.tile_config.bn % 64:
            raise InputError(f"tile {self.tile!r}: the copy loader (a_load / b_load 'copy') fills tiles of whole "
                             f"64-column blocks", argument="tile")
        if "copy" in (self.a_load, self.b_load) and self.tile_config.stage_k > 1:
            raise ValueError(f"tile {self.tile!r} holds {self.tile_config.stage_k} K-blocks a stage: the copy loader "
                             f"(a_load / b_load 'copy') fills one K-block a stage")


    def _check_swapped(self) -> None:
        """A swapped tile (TileConfig.swap_ab) runs 16-bit inputs, A row-major (its rows become a K-major wgmma B
        of bn rows), both loaded by TMA, and stages a 16-bit D only (f32 D: direct stores)."""
        if self.dtype not in DTYPES:
            raise InputError(f"tile {self.tile!r} swaps A and B, which {self.dtype} inputs (K-major only, "
                             f"scaled) do not take; choose one of "
                             f"{', '.join(t for t in launcher_tiles('F') if not TILES[t].swap_ab)}", argument="tile")
        if self.a_order != "C":
            raise InputError(f"tile {self.tile!r} swaps A and B and takes A row-major only (a_order 'C'); with "
                             f"a_order {self.a_order!r} choose a tile without the suffix t", argument="tile")
        if "copy" in (self.a_load, self.b_load):
            raise ValueError(f"tile {self.tile!r} swaps A and B: they load by TMA (a_load / b_load 'tma')")
        if self.out_dtype == "f32" and self.store == "tma":
            raise ValueError(f"tile {self.tile!r} stores D^T through stmatrix .trans, which moves 16-bit values: "
                             f"an f32 D takes store 'direct'")

    @property
    def kernel_b_order(self) -> str:
        """B's order as the kernel takes it: with swapped operands its B is A (row-major: K-major, 'F')."""
        return "F" if self.tile_config.swap_ab else self.b_order

    @property
    def kernel_bias_mode(self) -> str:
        """The bias mode in the kernel's own coordinates: a swapped tile's rows are D's columns."""
        if self.tile_config.swap_ab:
            return {"per_n": "per_m", "per_m": "per_n"}.get(self.bias_mode, self.bias_mode)
        return self.bias_mode

    @property
    def copied_operands(self) -> int:
        """The kernel's `copied_operands` bits: 1 A, 2 B (kCopyA, kCopyB in wgmma.cu)."""
        return (self.a_load == "copy") | (self.b_load == "copy") << 1

    aligned = True   # always the 16-byte (TMA) path; the WMMA kernel takes the rest

    @property
    def tile_config(self) -> TileConfig:
        return ALL_TILES[self.tile]

    @property
    def smem_bytes(self) -> int:
        tile = self.tile_config
        return tile.smem_bytes + (tile.staged_store_bytes() if self.store == "tma" else 0)

    def name(self) -> str:
        """The C++ name expression of this instantiation."""
        kernel = "gemm_wgmma_cluster_kernel" if self.tile_config.cluster_blocks > 1 else "gemm_wgmma_kernel"
        epilogue = epilogue_cpp(self.act, self.kernel_bias_mode, self.has_c, self.save_z, self.scaled,
                                self.block_scaled, self.bias_dtype)
        return (f"fraglab::wgmma_gemm::{kernel}<{self.tile_config.cpp(self.store == 'tma')}, {epilogue}, "
                f"{_CPP_TYPE[self.dtype]}, {_CPP_TYPE[self.out_dtype]}, "
                f"{'true' if self.b_swap_offsets else 'false'}, {'true' if self.kernel_b_order == 'F' else 'false'}"
                f"{', true' if self.tile_config.swap_ab else ''}>")

    def build(self) -> "WgmmaBuild":
        return WgmmaBuild(ENTRY, (self.name(),))


# ---------------------------------------------------------------------------------------------
# Build description: the runtime (CuPy) and the offline compiler (pip NVRTC) take it like any KernelBuild

@dataclass(frozen=True)
class WgmmaBuild(Sm90aBuild):
    """gemm/wgmma.cu with the generated accumulator indexing in front (so CuPy's cache keys on it too), for
    sm_90a."""

    def source_text(self) -> str:
        return accumulator_header() + super().source_text()


def build_of(names: tuple[str, ...], options: tuple[str, ...] = ()) -> WgmmaBuild:
    """One build holding several instantiations (the compile test, the SASS script)."""
    return WgmmaBuild(ENTRY, tuple(names), tuple(options))


# ---------------------------------------------------------------------------------------------
# Choosing a variant

def tiles_for(m: int, n: int, tile: TileConfig) -> int:
    return -(-m // tile.bm) * -(-n // tile.bn)


def launch_blocks(m: int, n: int, tile: TileConfig, sm_count: int = 132) -> int:
    """Persistent grid: one cluster per unit up to one block per SM (the kernel walks units of cluster_m x
    cluster_n adjacent tiles, or with split-K one tile, per cluster)."""
    units = -(-m // (tile.bm * tile.cluster_m)) * -(-n // (tile.bn * tile.cluster_n))
    return min(units, sm_count // tile.cluster_blocks) * tile.cluster_blocks


def choose_tile(m: int, n: int, sm_count: int = 132, k: int = 4096, dtype: str = "f16", b_order: str = "C",
                out_dtype: str = "f32") -> str:
    """The tile fraglab/gemm/schedule.py's rules give this problem."""
    return schedule.choose(m, n, k, dtype, b_order, out_dtype, sm_count).tile


# How D leaves the kernel unless a store is asked for. Measured (H100, 2026-11-23, benchmarks/wgmma_suite.py
# --variants): through shared memory and TMA beats direct stores for every output type and size timed, e.g.
# f16 D at 4096^3 727 against 652 TFLOP/s, f32 D 700 against 662, and at 8192x8192x1024 f16 610 against 420.
# Every output type: f32 through float2 shared-memory writes, f16/bf16 through stmatrix.
DEFAULT_STORE = "tma"


def spec_for(dtype: str, m: int, n: int, k: int, *, act: str = "none", bias_mode: str = "none",
             has_c: bool = False, save_z: bool = False, sm_count: int = 132, tile: str | None = None,
             out_dtype: str = "f32", store: str | None = None, b_order: str = "C",
             scaled: bool = False, a_order: str = "C", block_scaled: bool = False,
             bias_dtype: str = "f32") -> WgmmaKernelSpec:
    """The instantiation and tensor-map settings for one problem: fraglab/gemm/schedule.py's choice (a `tile` given
    keeps its own, with the schedule's L2 promotion). A and B load by TMA: the copy loader (a_load / b_load
    'copy') is asked for by name (fraglab/gemm/schedule.py says why no rule picks it)."""
    plan = schedule.choose(m, n, k, dtype, b_order, out_dtype, sm_count, a_order=a_order, block_scaled=block_scaled)
    tile = tile or plan.tile
    return WgmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, tile, B_SWAP_OFFSETS,
                           out_dtype, store or default_store(tile, out_dtype), b_order, plan.l2_promotion, scaled,
                           block_scaled, a_order, bias_dtype=bias_dtype)


def default_store(tile: str, out_dtype: str) -> str:
    """DEFAULT_STORE, but direct stores for an f32 D of a swapped tile (stmatrix .trans moves 16-bit values)."""
    return "direct" if ALL_TILES[tile].swap_ab and out_dtype == "f32" else DEFAULT_STORE


def all_specs() -> list[WgmmaKernelSpec]:
    """Every instantiation `spec_for` can return (a 16-bit bias: per column, of the inputs' type)."""
    return [WgmmaKernelSpec(dtype, act, bias_mode, has_c, save_z, tile, B_SWAP_OFFSETS, out, default_store(tile, out), order,
                            scaled=scales == "rowwise", block_scaled=scales == "block", bias_dtype=bias_dtype)
            for dtype, act, bias_mode, has_c, save_z, tile, out, order, scales, bias_dtype
            in product(INPUT_DTYPES, ACT_KINDS, BIAS_MODES, (False, True), (False, True), TILES, OUT_DTYPES, B_ORDERS,
                       ("none", "rowwise", "block"), BIAS_DTYPES)
            if order in TILES[tile].b_orders and (order == "F" or dtype not in FP8_DTYPES)
            and (scales == "none" or dtype in FP8_DTYPES)
            and (tile not in SIXTEEN_BIT_TILES or dtype in DTYPES or scales == "block")
            # a swapped tile's kernel takes either order of B the same way (its A: a launch parameter): one name
            and (not TILES[tile].swap_ab or (dtype in DTYPES and order == "F"))
            and (scales != "block" or tile in schedule.BLOCK_SCALE_TILES)
            and (bias_dtype == "f32" or (bias_mode == "per_n" and bias_dtype == dtype))]


def all_builds() -> list[WgmmaBuild]:
    return [s.build() for s in all_specs()]


# ---------------------------------------------------------------------------------------------
# Tensor maps and launch (GPU)



def pointer(x) -> int:
    """Device address of a CuPy array, a torch tensor or anything with __cuda_array_interface__ (0 for None)."""
    if x is None:
        return 0
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr())
    if hasattr(x, "data") and hasattr(x.data, "ptr"):
        return int(x.data.ptr)
    return int(x.__cuda_array_interface__["data"][0])


_KERNELS: dict[WgmmaKernelSpec, object] = {}


def _kernel(spec: WgmmaKernelSpec):
    """The compiled kernel of a spec, its shared-memory limit raised once (cached: the per-call path is hot)."""
    kernel = _KERNELS.get(spec)
    if kernel is None:
        from ..runtime import gpu

        kernel = gpu.function(spec.build(), spec.name())
        if kernel.max_dynamic_shared_size_bytes < spec.smem_bytes:
            kernel.max_dynamic_shared_size_bytes = spec.smem_bytes
        _KERNELS[spec] = kernel
    return kernel


def bind(spec: WgmmaKernelSpec, a, b, d, *, c=None, bias=None, z=None, alpha: float = 1.0, beta: float = 0.0,
         leaky_slope: float = 0.01, sm_count: int = 132, grid: int | None = None, lda: int = 0, ldb: int = 0,
         ldd: int = 0, scale_a=None, scale_b=None, ldc: int = 0, ldbias: int = 0, ldz: int = 0, shared: bool = True):
    """The launch of one instantiation on validated, contiguous device arrays, its parameters (tensor maps
    included) packed once: A (M, K; row-major, or column-major for spec.a_order 'F') and B (K, N; row-major, or
    column-major for spec.b_order 'F') f16/bf16, D in
    spec.out_dtype, Z and C f32, the bias f32 or spec.bias_dtype. Calling the
    result launches on CuPy's current stream (or the CuPy stream given). Bound launches are shared: the key holds
    every parameter, so one bound to memory since freed and reused is still right for the arrays now there.
    lda, ldb, ldd: row pitches in elements of A, B (their rows in memory) and D where they are not dense (0);
    16-byte multiples (TMA row pitch; the rules are gemm/validate.py matrix_layout). ldc, ldbias, ldz: the row
    pitches of C, a full bias and Z (0: dense; the epilogue reads and writes them per element).
    scale_a (M) and scale_b (N), f32: the row and column factors of a spec.scaled (rowwise fp8) kernel; for a
    spec.block_scaled one scale_a (M, ceil(K / 128)) at any element strides (row-major, or DeepGEMM's M-major) and
    scale_b (ceil(N / 128), ceil(K / 128)) row-major.
    shared=False: a launch of the caller's own, outside the shared cache, whose addresses may be rewritten
    (PARAM_INDEX; gemm/torch_road.py)."""
    if (spec.scaled or spec.block_scaled) != (scale_a is not None and scale_b is not None):
        raise ValueError("a scaled or block-scaled kernel takes scale_a and scale_b, and only such a kernel")
    sa_strides = _element_strides(scale_a) if spec.block_scaled else (0, 0)
    m, k = a.shape   # a column-major A keeps its (M, K) shape; its rows in memory are K x M
    n = b.shape[1]
    swapped = spec.tile_config.swap_ab   # the kernel's problem is D^T: N x M
    blocks = grid or launch_blocks(n if swapped else m, m if swapped else n, spec.tile_config, sm_count)
    key = (spec, m, n, k, pointer(a), pointer(b), pointer(d), pointer(c), pointer(bias), pointer(z),
           float(alpha), float(beta), float(leaky_slope), blocks, lda, ldb, ldd, pointer(scale_a),
           pointer(scale_b), ldc, ldbias, ldz, *sa_strides)
    return _LAUNCHES[key] if shared else _packed_launch(key)


def _element_strides(x) -> tuple[int, ...]:
    """A float32 array's strides in elements: a CuPy array's (bytes) or a torch tensor's."""
    return tuple(int(st) // 4 for st in x.strides) if hasattr(x, "strides") else tuple(x.stride())


def launch(spec: WgmmaKernelSpec, a, b, d, *, c=None, bias=None, z=None, alpha: float = 1.0, beta: float = 0.0,
           leaky_slope: float = 0.01, stream=None, sm_count: int = 132, grid: int | None = None, scale_a=None,
           scale_b=None) -> None:
    """bind(...) and launch once; `stream`: a CuPy stream (default: CuPy's current stream)."""
    bind(spec, a, b, d, c=c, bias=bias, z=z, alpha=alpha, beta=beta, leaky_slope=leaky_slope, sm_count=sm_count,
         grid=grid, scale_a=scale_a, scale_b=scale_b)(stream)


def _packed_launch(key):
    from ..runtime import gpu

    spec, m, n, k, pa, pb, pd, pc, pbias, pz, alpha, beta, leaky_slope, blocks, lda, ldb, ldd, psa, psb, *pitches = key
    ldc, ldbias, ldz, sa_row_stride, sa_k_stride = pitches
    tile = spec.tile_config
    block_k = 128 // _BYTES[spec.dtype]   # a K-block is 128 bytes of K
    promo = spec.l2_promotion
    # The kernel's operands: (pointer, rows M or columns N, row pitch, order); swapped, its A is B^T (N x K: a
    # column-major B is row-major there) and its B is A^T (a row-major A is a column-major, K-major, B), D^T N x M.
    if tile.swap_ab:
        km, kn, ka, kb, lka, lkb = n, m, pb, pa, ldb, lda
        ka_order, kb_order = ("C" if spec.b_order == "F" else "F"), "F"
    else:
        km, kn, ka, kb, lka, lkb, ka_order, kb_order = m, n, pa, pb, lda, ldb, spec.a_order, spec.b_order
    # A row-major: one (BM rows, K-block) box; column-major (a row-major K x M): boxes of (K64 rows, M64), as B's
    # (with cluster_n blocks sharing A, each loads and multicasts boxes of bm / cluster_n rows)
    map_a = (_MAPS[(ka, spec.dtype, k, km, block_k, tile.bm // tile.cluster_n, promo, lka)] if ka_order == "C"
             else _MAPS[(ka, spec.dtype, km, k, 64, BK, promo, lka)])
    # B row-major (K x N): boxes of (K64 rows, N64); column-major (a row-major N x K): one (BN rows, K64) box, as A
    map_b = (_MAPS[(kb, spec.dtype, kn, k, 64, BK, promo, lkb)] if kb_order == "C"
             else _MAPS[(kb, spec.dtype, k, kn, block_k, tile.bn, promo, lkb)])
    # D (M x N) in boxes of (chunk columns, chunk rows) (swapped: a consumer's 64 rows are 64 columns of D)
    map_d = (_MAPS[(pd, spec.out_dtype, n, m, tile.chunk_bytes(spec.out_dtype) // _BYTES[spec.out_dtype],
                    tile.chunk_rows, promo, ldd)]
             if spec.store == "tma" else _NO_MAP)
    # A per-column / per-row bias (in the kernel's coordinates): 1-D boxes of the tile's columns / rows (bias_mode
    # 'full' is read directly).
    map_bias = _NO_MAP
    if spec.kernel_bias_mode == "per_n":
        map_bias = _MAPS[(pbias, spec.bias_dtype, kn, 0, tile.bn, 0)]
    elif spec.kernel_bias_mode == "per_m":
        map_bias = _MAPS[(pbias, spec.bias_dtype, km, 0, tile.bm, 0)]
    pitch_a = (lda or (k if spec.a_order == "C" else m)) * _BYTES[spec.dtype]
    pitch_b = (ldb or (n if spec.b_order == "C" else k)) * _BYTES[spec.dtype]
    if spec.copied_operands and max(pitch_a, pitch_b) >= 2 ** 31:
        raise ValueError(f"row pitches of {pitch_a} / {pitch_b} bytes are too long for the copy loader's 32-bit "
                         f"pitch: load A and B by TMA (a_load / b_load 'tma')")
    # the copy loader moves whole 16-byte chunks of a row: an operand whose rows end mid-chunk (a view of a wider
    # array) stays on TMA
    copied = spec.copied_operands
    for bit, inner in ((1, k if spec.a_order == "C" else m), (2, n if spec.b_order == "C" else k)):
        if (inner * _BYTES[spec.dtype]) % 16:
            copied &= ~bit
    params = (map_a, map_b, map_d, map_bias, np.int32(km), np.int32(kn), np.int32(k), np.float32(alpha),
              np.float32(beta), np.float32(leaky_slope), np.uint64(pc), np.uint64(pbias), np.uint64(pd), np.uint64(pz),
              np.uint64(psa), np.uint64(psb), np.int32(ka_order == "F"), np.int32(ldc or n), np.int32(ldbias or n),
              np.int32(ldd or n), np.int32(ldz or n),
              # the copy loader's operands: addresses, row pitches in bytes, which of them it fills
              np.uint64(pa), np.uint64(pb), np.int32(pitch_a), np.int32(pitch_b), np.uint32(copied),
              # block scales: scale_a's element strides (row, K-block)
              np.int32(sa_row_stride), np.int32(sa_k_stride))
    return gpu.PackedLaunch(_kernel(spec), blocks, tile.threads, params, shared_mem=spec.smem_bytes,
                            programmatic=True)


# (spec, shape, pointers, scalars, grid) -> PackedLaunch
_LAUNCHES = BoundedMemo(_packed_launch, 256)
# where the tensor maps and pointers sit in _packed_launch's parameters (a launch of one's own may move them; a
# copy loader launch reads A and B at "a" and "b" too, which gemm/torch_road.py would have to move: no road binds one)
PARAM_INDEX = {"map_a": 0, "map_b": 1, "map_d": 2, "map_bias": 3, "c": 10, "bias": 11, "d": 12, "z": 13, "a": 21,
               "b": 22}


def operand_map_index(spec: WgmmaKernelSpec) -> tuple[int, int]:
    """The parameter indices of the tensor maps that hold the caller's A and B (a swapped tile's kernel takes B as
    its A)."""
    first, second = PARAM_INDEX["map_a"], PARAM_INDEX["map_b"]
    return (second, first) if spec.tile_config.swap_ab else (first, second)


__all__ = ["DTYPES", "FP8_DTYPES", "INPUT_DTYPES", "OUT_DTYPES", "A_ORDERS", "B_ORDERS", "TILES", "launcher_tiles", "SIXTEEN_BIT_TILES", "TileConfig", "WgmmaKernelSpec", "WgmmaBuild", "build_of",
           "AccumulatorIndexing", "accumulator_indexing", "accumulator_header", "choose_tile", "spec_for", "all_specs",
           "all_builds", "bind", "launch", "launch_blocks", "tiles_for", "LOADS"]
