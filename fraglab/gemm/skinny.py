"""Launcher of the skinny GEMM (kernels/gemm/skinny.cu): M <= 128, the weight streamed once, K split in clusters.

fraglab/gemm/schedule.py `choose_kernel` says when fraglab.gemm takes it (rule `skinny_split_k`); here are the
instantiations (input type, warp grid, B's order, the epilogue policy; D's type is a launch argument), the warp
grid and split of K for a problem (layout_for, choose_splits: measured rules, a test each in
tests/gemm/test_skinny.py), the shared memory, and the bound launch. Everything but `bind` runs without a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np

from ..errors import check_choice
from ..memo import BoundedMemo
from ..runtime.build import KernelBuild
from . import schedule
from .epilogue import ACT_KINDS, BIAS_DTYPES, BIAS_MODES, check_bias_dtype, epilogue_cpp
from .tensor_maps import MAPS, NO_MAP

ENTRY = "gemm/skinny.cu"
DTYPES = ("f16", "bf16")
OUT_DTYPES = ("f32", "f16", "bf16")   # fraglab::skinny_gemm::OutKind, in order
B_ORDERS = ("C", "F")
B_LOADS = ("copy", "tma")   # how B reaches the ring: every thread's cp.async chunks, or a TMA box per stage
# Warp grids (kernels/gemm/skinny.cu WarpGrid): name -> (warps along M, along N, along K); tiles of 64 columns
LAYOUTS = {"1x4n64": (1, 4, 1),       # M <= 32: 16 columns per warp, every row tile
           "4x1n64": (4, 1, 1),       # M <= 128: 64 columns per warp, row tiles w and w + 4
           "1x4x2n64": (1, 4, 2)}     # as 1x4n64 with two K groups (8 warps): B column-major, one share of K
BN = 64                               # kBN: columns of D per tile
MAX_M = 128
BK = 64                               # kBK: K per ring stage
STAGES = 4                            # ring depth by default (FRAGLAB_SKINNY_STAGES, a build option)
STAGE_CHOICES = (2, 3, 4, 6, 8, 12, 16)
SMEM_LIMIT = 227 * 1024               # dynamic shared memory a block may take on sm_90
CLUSTER = 8                           # blocks per cluster by default: (CLUSTER / splits) tiles x splits shares of K
CLUSTERS = (1, 2, 4, 8)               # FRAGLAB_SKINNY_CLUSTER, a build option: one module per size used
SPLITS = (1, 2, 4, 8)
MIN_BLOCKS_PER_SPLIT = 8              # a share of K has at least this many BK blocks (else fewer splits)
MIN_BLOCKS_PER_SM = 1.5               # the fewest splits that give every SM this many blocks (H100 sweep below)
MIN_BLOCKS_PER_SM_ONE_SHARE = 2.0     # a column-major B keeps K whole only where its tiles fill every SM twice
MIN_BLOCKS_PER_SM_ROW_MAJOR_B = 1.0   # a row-major B by TMA: one share as soon as the tiles fill the SMs once
TMA_L2_PROMOTION = "256B"   # B's boxes ask L2 for 256 bytes, as its cp.async copies do (FRAGLAB_SKINNY_PREFETCH)
_CPP_TYPE = {"f16": "__half", "bf16": "__nv_bfloat16"}


def layout_for(m: int, n: int, k: int, b_order: str = "C", sm_count: int = 132) -> str:
    """The warp grid of the rules' split (choose_splits): variant_layout."""
    return variant_layout(m, b_order, choose_splits(m, n, k, sm_count, b_order))


def variant_layout(m: int, b_order: str, splits: int) -> str:
    """The warp grid for `splits` shares of K (benchmarks/skinny_decode.py, H100, 2026-11-25 22:04 UTC, f16, bias +
    ReLU, D f16, us): past 32 rows 4x1n64; up to 32 rows 1x4n64, but 1x4x2n64 where B is column-major and each tile
    takes K in one share (the rules: N >= 16896 on 132 SMs, choose_splits). Measured at N 14336 with one share, M 1 /
    8 / 16 / 32, K 4096: 46.1 / 45.2 / 46.7 / 47.5 against 47.3 / 46.1 / 47.8 / 48.8, K 11008: 114.4 / 114.0 / 115.6 /
    117.6 against 116.5 / 115.8 / 117.6 / 120.2, K 14336: 143.5 / 144.0 / 143.5 / 146.2 against 145.4 / 146.5 / 146.0
    / 150.0. With a row-major B the two are within 1 %; with K split in shares the 8-warp grid loses (N 4096, K 4096,
    4 shares: 23.8 against 18.3)."""
    if m > 32:
        return "4x1n64"
    return "1x4x2n64" if b_order == "F" and splits == 1 else "1x4n64"


# How B reaches the ring, by (B's order, shares of K): benchmarks/skinny_b_load.py and the sweep in
# docs/results/h100_2026-11-26e/skinny/ (H100, 2026-11-26 15:27-15:33 UTC, f16, bias + ReLU, D f16, us, TMA /
# cp.async, torch.mm in the same rounds). A column-major B (nn.Linear's weight) by TMA where K is split in 4 (N 4096:
# M 8, K 4096 / 11008 / 14336: 18.5 / 37.4 / 47.1 against 18.6 / 38.0 / 47.6; M 32 19.5 / 39.5 / 49.2 against
# 20.0 / 40.1 / 50.5), not in 2 (N 11008: M 8, K 11008 88.2 against 87.1; M 32 91.5 against 89.3) nor with the
# 8-warp grid's one share (equal: M 8, N 14336, K 4096 46.6 / 46.6). A row-major B by TMA with one share (N 11008,
# one share instead of two: M 1, K 4096 34.7 against 36.7; M 32 37.7 against 39.6; K 11008 85.3 against 87.1).
# Those ran in clusters of 8; the joint sweep of B's load and the cluster size over the decode set (H100, 2026-11-27
# 06:57 UTC, docs/results/h100_2026-11-27c/skinny_rules/, us, the rule's against the old) changed two classes:
# a row-major B with 4 shares (N 4096) by TMA in clusters of 4 (12 of 12 shapes faster, geometric mean 0.983x the
# time, e.g. M 8, K 4096 17.38 against 17.82; M 32, K 14336 46.50 against 47.49); a column-major B with 4 shares
# of at most SHORT_SHARE_BLOCKS K-blocks (K 4096) by copies: such a short share's start counts more than its stream
# (M 1 / 8 / 16 / 32: 17.22 / 17.09 / 17.15 / 17.97 against TMA's 17.55 / 17.60 / 17.66 / 18.72), where longer
# shares stream better by TMA (K 11008 / 14336: TMA 0.2-0.8 % ahead at every M).
B_LOAD_RULES = {("F", 4): "tma", ("C", 1): "tma", ("C", 4): "tma"}
SHORT_SHARE_BLOCKS = 16
SHORT_SHARE_B_LOAD_RULES = {("F", 4): "copy"}   # shares of at most SHORT_SHARE_BLOCKS K-blocks


def b_load_for(layout: str, b_order: str, splits: int, k: int) -> str:
    """'tma' or 'copy' for B (B_LOAD_RULES, SHORT_SHARE_B_LOAD_RULES for short shares of K; the 8-warp grid's 256
    threads keep their copies)."""
    if layout == "1x4x2n64":
        return "copy"
    if -(-k // BK) <= SHORT_SHARE_BLOCKS * splits and (b_order, splits) in SHORT_SHARE_B_LOAD_RULES:
        return SHORT_SHARE_B_LOAD_RULES[(b_order, splits)]
    return B_LOAD_RULES.get((b_order, splits), "copy")


# Blocks per cluster, by (B's order, shares of K): A/B over the decode shapes against clusters of 8 (H100, 2026-11-26
# 18:15-18:31 UTC, f16, bias + ReLU, D f16, interleaved with torch.mm, weights rotated past L2; us, the rule's
# against 8). A column-major B with 4 shares (N 4096) in clusters of 4, one tile each, M 1: K 4096 / 11008 / 14336
# 17.4 / 36.2 / 45.3 against 18.0 / 37.0 / 46.8 (M 8 alike); with 2 shares (N 11008) clusters of 4, M 1: 36.3 / 85.3
# / 109.4 against 37.5 / 86.4 / 110.7; with one share (N 14336, the 8-warp grid) no cluster, M 1: 46.1 / 112.9 /
# 143.0 against 47.2 / 115.2 / 146.4. A row-major B with one share (N 11008) in clusters of 4, M 32: 37.4 / 87.7 /
# 113.6 against 38.8 / 90.4 / 116.5 (M 8, 16 within 0.5 %); with 4 shares clusters of 4 too since B comes by TMA
# there (the joint sweep above; with copies they were 1-2 % slower than 8 at K 11008 / 14336). The blocks of a tile
# need one cluster: never fewer than `splits`.
CLUSTER_RULES = {("F", 4): 4, ("F", 2): 4, ("F", 1): 1, ("C", 1): 4, ("C", 4): 4}


def cluster_for(b_order: str, splits: int) -> int:
    """Blocks per cluster for a split (CLUSTER_RULES, else CLUSTER), at least `splits`."""
    return max(CLUSTER_RULES.get((b_order, splits), CLUSTER), splits)


def layout_max_m(layout: str) -> int:
    """The most rows a warp grid covers: 2 row tiles per warp along M (one warp along M), all 8 otherwise."""
    return 32 if LAYOUTS[layout][0] == 1 else MAX_M


def threads(layout: str) -> int:
    warps_m, warps_n, warps_k = LAYOUTS[layout]
    return 32 * warps_m * warps_n * warps_k


def m_tiles(m: int) -> int:
    return -(-m // 16)


def smem_bytes(m: int, layout: str = "1x4n64", stages: int = STAGES) -> int:
    """The ring (stages x (a 64 x 64 block of B + the 16-row tiles of A)), which the f32 partial tiles (one per K
    group: [16-row tiles x 16] x [BN + 8]) reuse: stage_bytes() in skinny.cu; then a TMA barrier per stage."""
    rows, warps_k = m_tiles(m) * 16, LAYOUTS[layout][2]
    return max(stages * (BN * BK * 2 + rows * BK * 2), warps_k * rows * (BN + 8) * 4) + 8 * stages


def tiles(n: int) -> int:
    return -(-n // BN)


def choose_splits(m: int, n: int, k: int, sm_count: int = 132, b_order: str = "F") -> int:
    """Shares of K per tile: the fewest of SPLITS that give at least MIN_BLOCKS_PER_SM blocks per SM (a row-major B:
    MIN_BLOCKS_PER_SM_ROW_MAJOR_B, see B_LOAD_RULES), each share at least MIN_BLOCKS_PER_SPLIT blocks of K long. Fewer,
    longer shares won the sweep (H100, 2026-11-25, benchmarks/skinny_sweep.py, docs/skinny-gemm.md): M 1, f16, B
    column-major, N 4096 / 11008 / 14336 (64 / 172 / 224 tiles) at K 11008: 4 shares 37.2 us (8: 38.7), 2 shares
    86.6 us (the first run's 8: 90.7), 2 shares 112.8 and 128-column tiles with 2 shares 111.4 us (the first run's
    64-column 4 shares: 115.9).
    A column-major B keeps one share only where its tiles fill every SM twice (MIN_BLOCKS_PER_SM_ONE_SHARE; H100,
    2026-11-27 09:52 UTC, docs/results/h100_2026-11-27d/skinny_rules/ab_f14336.*, per-launch events, us): at N 14336
    (224 tiles, 1.7 per SM) two shares in clusters of 4 beat one share on the 8-warp grid at all 12 of M 1 / 8 / 16 / 32
    x K 4096 / 11008 / 14336 by 1.3-3.4 % (M 1, K 11008: 109.26 against 112.58; M 32, K 4096: 46.11 against 46.82);
    at N 28672 (3.4 per SM) one share stays ahead (M 1 / 16, K 4096: 82.91 / 83.46 against 88.75 / 90.83), at
    N 57344 too (M 16, K 8192: 323.07 against 334.32)."""
    del m   # the same split serves every M the kernel takes (the sweep's M 1..64 agree)
    fill = MIN_BLOCKS_PER_SM_ROW_MAJOR_B if b_order == "C" else MIN_BLOCKS_PER_SM
    k_blocks = -(-k // BK)
    chosen = 1
    for splits in SPLITS:
        if splits > 1 and k_blocks < splits * MIN_BLOCKS_PER_SPLIT:
            break
        chosen = splits
        need = MIN_BLOCKS_PER_SM_ONE_SHARE if splits == 1 and b_order == "F" else fill
        if tiles(n) * splits >= need * sm_count:
            break
    return chosen


def grid_blocks(n: int, splits: int, cluster: int = CLUSTER) -> int:
    """Whole clusters of `cluster` blocks, each holding cluster / splits tiles."""
    per_cluster = cluster // splits
    return -(-tiles(n) // per_cluster) * cluster


@dataclass(frozen=True)
class SkinnyKernelSpec:
    dtype: str
    act: str = "none"
    bias_mode: str = "none"
    has_c: bool = False
    save_z: bool = False
    out_dtype: str = "f32"
    b_order: str = "C"
    layout: str = "1x4n64"   # a key of LAYOUTS
    splits: int = 1          # a launch argument (not the kernel's name), as the wgmma spec's L2 promotion
    b_load: str = "copy"     # a launch argument too: one of B_LOADS
    cluster: int = CLUSTER   # a build option (FRAGLAB_SKINNY_CLUSTER), not the kernel's name: one of CLUSTERS
    stages: int = STAGES     # a build option too (FRAGLAB_SKINNY_STAGES): the ring's depth, for sweeps
    timeline: bool = False   # a profiling build (FRAGLAB_SKINNY_TIMELINE): benchmarks/skinny_timeline.py
    bias_dtype: str = "f32"  # the bias in memory: f32, or (per column) the inputs' 16-bit type, read as it is

    def __post_init__(self):
        for value, valid, argument in ((self.dtype, DTYPES, "dtype"), (self.out_dtype, OUT_DTYPES, "out_dtype"),
                                       (self.act, ACT_KINDS, "act"), (self.bias_mode, BIAS_MODES, "bias_mode"),
                                       (self.b_order, B_ORDERS, "b_order"), (self.layout, tuple(LAYOUTS), "layout"),
                                       (self.splits, SPLITS, "splits"), (self.b_load, B_LOADS, "b_load"),
                                       (self.cluster, CLUSTERS, "cluster"), (self.stages, STAGE_CHOICES, "stages")):
            check_choice(value, valid, argument)
        check_bias_dtype(self.bias_dtype, self.bias_mode, self.dtype)
        if self.cluster < self.splits:
            raise ValueError(f"cluster {self.cluster} cannot hold a tile's {self.splits} shares of K: clusters of "
                             f"at least {self.splits} blocks")

    @property
    def tile(self) -> str:
        """What benchmarks print in the tile column: the kernel and its split of K."""
        grid = "" if self.layout in ("1x4n64", "4x1n64") else f"{self.layout}/"
        return (f"skinny/{grid}k{self.splits}" + ("" if self.cluster == CLUSTER else f"/c{self.cluster}")
                + ("" if self.stages == STAGES else f"/s{self.stages}") + ("/tma" if self.b_load == "tma" else ""))

    store = "direct"   # D goes straight from the reduction to memory, at any row pitch

    def name(self) -> str:
        warps_m, warps_n, warps_k = LAYOUTS[self.layout]
        return (f"fraglab::skinny_gemm::gemm_skinny_kernel<{_CPP_TYPE[self.dtype]}, {warps_m}, {warps_n}, {warps_k}, "
                f"{BN}, "
                f"{'true' if self.b_order == 'F' else 'false'}, "
                f"{epilogue_cpp(self.act, self.bias_mode, self.has_c, self.save_z, bias_dtype=self.bias_dtype)}>")

    def build(self) -> KernelBuild:
        """The instantiation with this spec's build options (only those that differ from the kernel's defaults)."""
        options = ((() if self.cluster == CLUSTER else (f"-DFRAGLAB_SKINNY_CLUSTER={self.cluster}",))
                   + (() if self.stages == STAGES else (f"-DFRAGLAB_SKINNY_STAGES={self.stages}",))
                   + (("-DFRAGLAB_SKINNY_TIMELINE",) if self.timeline else ()))
        return KernelBuild(ENTRY, (self.name(),), options)


def spec_for(dtype: str, m: int, n: int, k: int, *, act: str = "none", bias_mode: str = "none",
             has_c: bool = False, save_z: bool = False, out_dtype: str = "f32", b_order: str = "C",
             sm_count: int = 132, bias_dtype: str = "f32") -> SkinnyKernelSpec:
    """The instantiation and split for one problem (M 1..MAX_M; N and K multiples of 8)."""
    if not 1 <= m <= MAX_M:
        raise ValueError(f"the skinny GEMM takes M from 1 to {MAX_M}, not {m}")
    layout, splits = layout_for(m, n, k, b_order, sm_count), choose_splits(m, n, k, sm_count, b_order)
    return SkinnyKernelSpec(dtype, act, bias_mode, has_c, save_z, out_dtype, b_order, layout, splits,
                            b_load_for(layout, b_order, splits, k), cluster_for(b_order, splits), bias_dtype=bias_dtype)


FORCED_TILE = "skinny"   # fraglab.gemm's tile= that asks for this kernel whatever the schedule says


def variant_specs(dtype: str, m: int, n: int, k: int, *, b_order: str = "C", **epilogue) -> list[SkinnyKernelSpec]:
    """Every (split, cluster, B load) this problem can take, the rules' among them, as specs (`epilogue`: act,
    bias_mode, has_c, save_z, out_dtype, bias_dtype): shares of at least MIN_BLOCKS_PER_SPLIT K-blocks (or one
    share), clusters that hold a tile's shares, B by copies or TMA (the 8-warp grid: copies). What `fraglab gemm
    --tune` times beside the wgmma tiles; each is named by its `tile` (e.g. skinny/k2/c4/tma). N changes none of
    the choices (taken for the signature's sake: a problem is M, N, K)."""
    del n
    if not 1 <= m <= MAX_M:
        raise ValueError(f"the skinny GEMM takes M from 1 to {MAX_M}, not {m}")
    k_blocks = -(-k // BK)
    specs = []
    for splits in SPLITS:
        if splits > 1 and k_blocks < splits * MIN_BLOCKS_PER_SPLIT:
            break
        layout = variant_layout(m, b_order, splits)
        for cluster, b_load in product((c for c in CLUSTERS if c >= splits), B_LOADS):
            if layout == "1x4x2n64" and b_load == "tma":
                continue
            specs.append(SkinnyKernelSpec(dtype, b_order=b_order, layout=layout, splits=splits, b_load=b_load,
                                          cluster=cluster, **epilogue))
    return specs


@lru_cache(maxsize=4096)
def variant_tiles(m: int, n: int, k: int, b_order: str) -> tuple[str, ...]:
    """The names of variant_specs, in their order (memoised: a tuning table's validation asks once per entry)."""
    return tuple(spec.tile for spec in variant_specs("f16", m, n, k, b_order=b_order))


def planned(plan, tile, scaled: bool, sm_count: int = 132):
    """The skinny spec fraglab.gemm launches for a validated plan (gemm/validate.py GemmPlan) of the wgmma family,
    or None where the wgmma kernel takes it: schedule.choose_kernel's rule, tile=FORCED_TILE (the rules' split,
    cluster and load), or tile= a variant's name (variant_tiles: a tuning table's choice, or a benchmark's)."""
    a_order = getattr(plan, "a_order", "C")
    if tile is None and not scaled:
        if schedule.choose_kernel(plan.m, plan.n, plan.k, plan.dtype, plan.b_order, plan.out_dtype,
                                  a_order) != "skinny":
            return None
    elif tile != FORCED_TILE and not str(tile).startswith(FORCED_TILE + "/"):
        return None
    from .validate import GemmArgumentError
    if scaled or plan.dtype not in DTYPES or a_order != "C" or plan.m > MAX_M:
        raise GemmArgumentError("tile", f"{FORCED_TILE!r} takes f16 or bf16, a row-major A and M <= {MAX_M}")
    epilogue = dict(act=plan.act, bias_mode=plan.bias_mode, has_c=plan.has_c, save_z=plan.save_z,
                    out_dtype=plan.out_dtype, bias_dtype=getattr(plan, "bias_dtype", "f32"))
    if tile is None or tile == FORCED_TILE:
        return spec_for(plan.dtype, plan.m, plan.n, plan.k, b_order=plan.b_order, sm_count=sm_count, **epilogue)
    variants = variant_specs(plan.dtype, plan.m, plan.n, plan.k, b_order=plan.b_order, **epilogue)
    chosen = [spec for spec in variants if spec.tile == tile]
    if not chosen:
        raise GemmArgumentError("tile", f"{tile!r} is not a skinny GEMM variant for this problem: choose "
                                        f"{FORCED_TILE!r} or one of {', '.join(spec.tile for spec in variants)}")
    return chosen[0]


# the (warp grid, B order) pairs layout_for gives: the 8-warp grid with a column-major B only
GRID_ORDERS = (("1x4n64", "C"), ("1x4n64", "F"), ("4x1n64", "C"), ("4x1n64", "F"), ("1x4x2n64", "F"))


def all_specs() -> list[SkinnyKernelSpec]:
    """Every instantiation spec_for can return (D's type, the split and B's load are launch arguments; the cluster
    size a build option of the same instantiations; a 16-bit bias: per column, of the inputs' type)."""
    return [SkinnyKernelSpec(dtype, act, bias_mode, has_c, save_z, "f32", order, layout, bias_dtype=bias_dtype)
            for dtype, act, bias_mode, has_c, save_z, (layout, order), bias_dtype
            in product(DTYPES, ACT_KINDS, BIAS_MODES, (False, True), (False, True), GRID_ORDERS, BIAS_DTYPES)
            if bias_dtype == "f32" or (bias_mode == "per_n" and bias_dtype == dtype)]


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
    build = spec.build()   # the key: one CUfunction per instantiation and build options
    kernel = _KERNELS.get(build)
    if kernel is None:
        from ..runtime import gpu

        kernel = gpu.function(build, spec.name())
        _KERNELS[build] = kernel
    if kernel.max_dynamic_shared_size_bytes < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel


def bind(spec: SkinnyKernelSpec, a, b, d, *, m: int, n: int, k: int, c=None, bias=None, z=None, alpha: float = 1.0,
         beta: float = 0.0, leaky_slope: float = 0.01, lda: int = 0, ldb: int = 0, ldd: int = 0, ldc: int = 0,
         ldbias: int = 0, ldz: int = 0):
    """The launch of one problem, its parameters packed once (runtime/gpu.py PackedLaunch): A (M x K), B (K x N
    row-major, or column-major for b_order 'F': its N rows of K in memory), D in spec.out_dtype; C and Z f32, the
    bias f32 or spec.bias_dtype.
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


def launch_parameters(key) -> tuple:
    """The kernel's arguments, in its order, for a bind key (spec, M, N, K, the six pointers, alpha, beta,
    leaky_slope, the six row pitches): B's tensor map encoded (once per weight) where the spec loads B by TMA."""
    spec, m, n, k, pa, pb, pd, pc, pbias, pz, alpha, beta, leaky_slope, lda, ldb, ldd, ldc, ldbias, ldz = key
    b_map = NO_MAP
    if spec.b_load == "tma":   # 64 x 64 boxes: (K, N) of a column-major B's N rows, (N, K) of a row-major one's K rows
        inner, outer = (k, n) if spec.b_order == "F" else (n, k)
        b_map = MAPS[(pb, spec.dtype, inner, outer, BK, BN, TMA_L2_PROMOTION, ldb)]
    return (np.uint64(pa), np.uint64(pb), np.uint64(pd), np.uint64(pc), np.uint64(pbias), np.uint64(pz),
            np.int32(m), np.int32(n), np.int32(k), np.int32(lda), np.int32(ldb), np.int32(ldd), np.int32(ldc),
            np.int32(ldbias), np.int32(ldz), np.int32(spec.splits), np.int32(OUT_DTYPES.index(spec.out_dtype)),
            np.float32(alpha), np.float32(beta), np.float32(leaky_slope), np.int32(spec.b_load == "tma"), b_map)


def _packed_launch(key):
    from ..runtime import gpu

    spec, m, n = key[:3]
    if not 1 <= m <= layout_max_m(spec.layout):
        raise ValueError(f"the skinny GEMM's layout {spec.layout} takes M from 1 to {layout_max_m(spec.layout)}, "
                         f"not {m}")
    smem = smem_bytes(m, spec.layout, spec.stages)
    if smem > SMEM_LIMIT:
        raise ValueError(f"stages {spec.stages} at M {m} need {smem} bytes of shared memory, more than a block may "
                         f"take ({SMEM_LIMIT}): fewer stages")
    return gpu.PackedLaunch(_kernel(spec, smem), grid_blocks(n, spec.splits, spec.cluster), threads(spec.layout),
                            launch_parameters(key), shared_mem=smem, programmatic=True)


_LAUNCHES = BoundedMemo(_packed_launch, 256)


__all__ = ["DTYPES", "OUT_DTYPES", "MAX_M", "LAYOUTS", "GRID_ORDERS", "FORCED_TILE", "SkinnyKernelSpec", "spec_for",
           "planned", "all_specs", "build_of", "layout_for", "layout_max_m", "choose_splits", "grid_blocks",
           "smem_bytes", "threads", "bind", "bind_plan", "launch_parameters", "B_LOADS", "B_LOAD_RULES", "SHORT_SHARE_BLOCKS",
           "SHORT_SHARE_B_LOAD_RULES", "b_load_for",
           "CLUSTERS", "CLUSTER_RULES", "cluster_for", "STAGE_CHOICES", "variant_layout", "variant_specs", "variant_tiles"]
