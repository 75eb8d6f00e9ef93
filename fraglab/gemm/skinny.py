"""Launcher of the skinny GEMM (kernels/gemm/skinny.cu): M <= 128, the weight streamed once, K split in clusters.

fraglab/gemm/schedule.py `choose_kernel` says when fraglab.gemm takes it (rule `skinny_split_k`); here are the
instantiations (input type, warp layout, B's order, the epilogue policy; D's type is a launch argument), the
split of K for a problem, the shared memory, and the bound launch. Everything but `bind` runs without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from ..memo import BoundedMemo
from ..runtime.build import KernelBuild
from . import schedule
from .epilogue import ACT_KINDS, BIAS_MODES, epilogue_cpp

ENTRY = "gemm/skinny.cu"
DTYPES = ("f16", "bf16")
OUT_DTYPES = ("f32", "f16", "bf16")   # fraglab::skinny_gemm::OutKind, in order
B_ORDERS = ("C", "F")
WARPS_M = (1, 4)                      # warps along M: 1 for M <= 32, 4 for M <= 128
MAX_M = 128
THREADS = 128
BN = 64                               # kBN: columns of D per tile
BK = 64                               # kBK: K per ring stage
STAGES = 4
CLUSTER = 8                           # blocks per cluster: (CLUSTER / splits) tiles x splits shares of K
SPLITS = (1, 2, 4, 8)
MIN_BLOCKS_PER_SPLIT = 8              # a share of K has at least this many BK blocks (else fewer splits)
MIN_BLOCKS_PER_SM = 1.5               # the fewest splits that give every SM this many blocks (H100 sweep below)
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}


def warps_m_for(m: int) -> int:
    return 1 if m <= 32 else 4


def m_tiles(m: int) -> int:
    return -(-m // 16)


def smem_bytes(m: int) -> int:
    """The ring (kStages x (a 64 x 64 block of B + the 16-row tiles of A)), which the f32 partial tile
    ([16-row tiles x 16] x [64 + 8]) reuses: stage_bytes() in skinny.cu."""
    rows = m_tiles(m) * 16
    return max(STAGES * (BN * BK * 2 + rows * BK * 2), rows * (BN + 8) * 4)


def tiles(n: int) -> int:
    return -(-n // BN)


def choose_splits(m: int, n: int, k: int, sm_count: int = 132) -> int:
    """Shares of K per tile: the fewest of SPLITS that give at least MIN_BLOCKS_PER_SM blocks per SM, each share
    at least MIN_BLOCKS_PER_SPLIT blocks of K long. Fewer, longer shares won the sweep (H100, 2026-11-25,
    benchmarks/skinny_sweep.py, docs/skinny-gemm.md): M 1, f16, B column-major, N 4096 / 11008 / 14336 (64 / 172 /
    224 tiles) at K 11008: 4 shares 37.2 us (8: 38.7), 2 shares 86.6 us (the first run's 8: 90.7), 2 shares 112.8
    and 128-column tiles with 2 shares 111.4 us (the first run's 64-column 4 shares: 115.9)."""
    del m   # the same split serves every M the kernel takes (the sweep's M 1..64 agree)
    k_blocks = -(-k // BK)
    chosen = 1
    for splits in SPLITS:
        if splits > 1 and k_blocks < splits * MIN_BLOCKS_PER_SPLIT:
            break
        chosen = splits
        if tiles(n) * splits >= MIN_BLOCKS_PER_SM * sm_count:
            break
    return chosen


def grid_blocks(n: int, splits: int) -> int:
    """Whole clusters of CLUSTER blocks, each holding CLUSTER / splits tiles."""
    per_cluster = CLUSTER // splits
    return -(-tiles(n) // per_cluster) * CLUSTER


@dataclass(frozen=True)
class SkinnyKernelSpec:
    dtype: str
    act: str = "none"
    bias_mode: str = "none"
    has_c: bool = False
    save_z: bool = False
    out_dtype: str = "f32"
    b_order: str = "C"
    warps_m: int = 1
    splits: int = 1          # a launch argument (not the kernel's name), as the wgmma spec's L2 promotion

    def __post_init__(self):
        for value, valid, argument in ((self.dtype, DTYPES, "dtype"), (self.out_dtype, OUT_DTYPES, "out_dtype"),
                                       (self.act, ACT_KINDS, "act"), (self.bias_mode, BIAS_MODES, "bias_mode"),
                                       (self.b_order, B_ORDERS, "b_order"), (self.warps_m, WARPS_M, "warps_m"),
                                       (self.splits, SPLITS, "splits")):
            if value not in valid:
                raise ValueError(f"invalid {argument} {value!r}: valid choices are "
                                 f"{', '.join(str(v) for v in valid)}")

    @property
    def tile(self) -> str:
        """What benchmarks print in the tile column: the kernel and its split of K."""
        return f"skinny/k{self.splits}"

    store = "direct"   # D goes straight from the reduction to memory, at any row pitch

    def name(self) -> str:
        return (f"fraglab::skinny_gemm::gemm_skinny_kernel<{_CPP_TYPE[self.dtype]}, {self.warps_m}, "
                f"{'true' if self.b_order == 'F' else 'false'}, "
                f"{epilogue_cpp(self.act, self.bias_mode, self.has_c, self.save_z)}>")

    def build(self) -> KernelBuild:
        return KernelBuild(ENTRY, (self.name(),))


def spec_for(dtype: str, m: int, n: int, k: int, *, act: str = "none", bias_mode: str = "none",
             has_c: bool = False, save_z: bool = False, out_dtype: str = "f32", b_order: str = "C",
             sm_count: int = 132) -> SkinnyKernelSpec:
    """The instantiation and split for one problem (M 1..MAX_M; N and K multiples of 8)."""
    if not 1 <= m <= MAX_M:
        raise ValueError(f"the skinny GEMM takes M from 1 to {MAX_M}, not {m}")
    return SkinnyKernelSpec(dtype, act, bias_mode, has_c, save_z, out_dtype, b_order, warps_m_for(m),
                            choose_splits(m, n, k, sm_count))


FORCED_TILE = "skinny"   # fraglab.gemm's tile= that asks for this kernel whatever the schedule says


def planned(plan, tile, scaled: bool, sm_count: int = 132):
    """The skinny spec fraglab.gemm launches for a validated plan (gemm/validate.py GemmPlan) of the wgmma family,
    or None where the wgmma kernel takes it: schedule.choose_kernel's rule, or tile=FORCED_TILE."""
    a_order = getattr(plan, "a_order", "C")
    if tile is None and not scaled:
        if schedule.choose_kernel(plan.m, plan.n, plan.k, plan.dtype, plan.b_order, plan.out_dtype,
                                  a_order) != "skinny":
            return None
    elif tile != FORCED_TILE:
        return None
    if scaled or plan.dtype not in DTYPES or a_order != "C" or plan.m > MAX_M:
        from .validate import GemmArgumentError
        raise GemmArgumentError("tile", f"{FORCED_TILE!r} takes f16 or bf16, a row-major A and M <= {MAX_M}")
    return spec_for(plan.dtype, plan.m, plan.n, plan.k, act=plan.act, bias_mode=plan.bias_mode,
                    has_c=plan.has_c, save_z=plan.save_z, out_dtype=plan.out_dtype, b_order=plan.b_order,
                    sm_count=sm_count)


def all_specs() -> list[SkinnyKernelSpec]:
    """Every instantiation spec_for can return (D's type and the split are launch arguments)."""
    return [SkinnyKernelSpec(dtype, act, bias_mode, has_c, save_z, "f32", order, warps)
            for dtype, act, bias_mode, has_c, save_z, order, warps
            in product(DTYPES, ACT_KINDS, BIAS_MODES, (False, True), (False, True), B_ORDERS, WARPS_M)]


def build_of(names: tuple[str, ...], options: tuple[str, ...] = ()) -> KernelBuild:
    """One build holding several instantiations (the compile test)."""
    return KernelBuild(ENTRY, tuple(names), tuple(options))


# ---------------------------------------------------------------------------------------------
# Launch (GPU)

def _pointer(x) -> int:
    if x is None:
        return 0
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr())
    if hasattr(x, "data") and hasattr(x.data, "ptr"):
        return int(x.data.ptr)
    return int(x.__cuda_array_interface__["data"][0])


_KERNELS: dict = {}


def _kernel(spec: SkinnyKernelSpec, smem: int):
    key = spec.name()
    kernel = _KERNELS.get(key)
    if kernel is None:
        from ..runtime import gpu

        kernel = gpu.function(spec.build(), key)
        _KERNELS[key] = kernel
    if kernel.max_dynamic_shared_size_bytes < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel


def bind(spec: SkinnyKernelSpec, a, b, d, *, m: int, n: int, k: int, c=None, bias=None, z=None, alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, lda: int = 0, ldb: int = 0, ldd: int = 0, ldc: int = 0,
         ldbias: int = 0, ldz: int = 0):
    """The launch of one problem, its parameters packed once (runtime/gpu.py PackedLaunch): A (M x K), B (K x N
    row-major, or column-major for b_order 'F': its N rows of K in memory), D in spec.out_dtype; C, bias, Z f32.
    ld*: row pitches in elements, 0 for dense. Call it (or .launch_on(stream handle)) to launch."""
    return _LAUNCHES[(spec, m, n, k, _pointer(a), _pointer(b), _pointer(d), _pointer(c), _pointer(bias), _pointer(z),
                      float(alpha), float(beta), float(leaky_slope), lda or k, ldb or (k if spec.b_order == "F" else n),
                      ldd or n, ldc or n, ldbias or n, ldz or n)]


def bind_plan(spec: SkinnyKernelSpec, plan, a, b, d, c=None, bias=None, z=None, alpha: float = 1.0,
              beta: float = 0.0, leaky_slope: float = 0.01):
    """bind() with the sizes and row pitches of a validated plan (the pitches it has: 0 where it has none)."""
    pitches = {name: getattr(plan, name, 0) for name in ("lda", "ldb", "ldd", "ldc", "ldbias", "ldz")}
    return bind(spec, a, b, d, m=plan.m, n=plan.n, k=plan.k, c=c, bias=bias, z=z, alpha=alpha, beta=beta,
                leaky_slope=leaky_slope, **pitches)


def _packed_launch(key):
    from ..runtime import gpu

    spec, m, n, k, pa, pb, pd, pc, pbias, pz, alpha, beta, leaky_slope, lda, ldb, ldd, ldc, ldbias, ldz = key
    smem = smem_bytes(m)
    params = (np.uint64(pa), np.uint64(pb), np.uint64(pd), np.uint64(pc), np.uint64(pbias), np.uint64(pz),
              np.int32(m), np.int32(n), np.int32(k), np.int32(lda), np.int32(ldb), np.int32(ldd), np.int32(ldc),
              np.int32(ldbias), np.int32(ldz), np.int32(spec.splits), np.int32(OUT_DTYPES.index(spec.out_dtype)),
              np.float32(alpha), np.float32(beta), np.float32(leaky_slope))
    return gpu.PackedLaunch(_kernel(spec, smem), grid_blocks(n, spec.splits), THREADS, params, shared_mem=smem)


_LAUNCHES = BoundedMemo(_packed_launch, 256)


__all__ = ["DTYPES", "OUT_DTYPES", "MAX_M", "FORCED_TILE", "SkinnyKernelSpec", "spec_for", "planned", "all_specs",
           "build_of", "choose_splits", "grid_blocks", "smem_bytes", "bind", "bind_plan"]
