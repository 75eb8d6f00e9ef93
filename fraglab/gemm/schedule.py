"""The wgmma GEMM's schedule for one problem, as data: which block tile, and how far L2 widens the tensor maps'
fetches, for (M, N, K, input type, B's order, D's type). CPU only; `wgmma.spec_for` asks `choose` and every rule
below has its test (tests/gemm/test_wgmma_schedule.py).

The rules, first match wins (H100 80GB HBM3, 2026-11-25, f16, bias per column + ReLU, D f16, TFLOP/s; raw
timings in docs/results/h100_2026-11-25b/gemm/):

1. `one_row_tile`: M <= 64 takes the ping-pong 64x256p tile (a 64-row tile computes no padding rows, and each
   consumer streams its own tile of the weight): M = 1 / 16, weight B column-major, TB/s of weight bytes,
   64x256p / 128x128 / 128x64: N 14336 K 4096 2.58 / 2.28 / 1.82; N 4096 K 14336 1.41 / 1.36 / 1.25;
   N 4096 K 4096 1.21 / 1.26 / 1.02.
2. `sector_misaligned_rows`: a row pitch of A, B or D that is not a multiple of 32 bytes (one L2 sector) makes
   every other row of a TMA box start mid-sector; L2 promotion off then reads fewer bytes (3000^3 128x256:
   355 with 256-byte promotion, 401 without; 5000x3000x2000: 434, 495). The tile: as in `waves`, at the rates
   such rows allow (TILE_RATE_MISALIGNED; 18:34 UTC, promotion off: 3000^3 128x192 419, 128x256 386, 128x128
   324; 5000x3000x2000 128x256 466, 128x192 459, 128x128 393; 1000^3 128x128 169, 128x192 148, 128x256 126).
   The operands stay on TMA: the kernel's copy loader (wgmma.LOADS 'copy': cp.async 16-byte chunks into the
   swizzled stages, so no TMA box has such rows) measured slower on each (22:09 UTC, benchmarks/wgmma_ragged.py
   --loaders, copy / TMA): 3000^3 128x192 351 / 419; 5000x3000x2000 128x256, B copied, 400 / 492; 1000^3 128x64
   145, 64x128p 138, 128x128 112 / 128x128 166. So no problem is routed to it, and TILE_RATE_MISALIGNED stands.
3. `waves`: when 128x128 gives at least HALF_WAVE of a wave, the tile of 128x256 / 128x192 / 128x128 whose
   waves do the most useful work: (M x N) / (whole waves x SMs x tile area) x the tile's measured rate
   (`useful_share`; 128x192 for 16-bit inputs only). 3072^3: 128x256 2.18 waves, 570; 128x128 4.36 waves, 594;
   4096^3: 746 / 641; 1000^3: 128x128 175, 128x64 148, 128x256 128; rows at 128-byte pitches (18:34 UTC): 3000^3
   128x192 (2.91 waves) 632, 128x128 539, 128x256 515; 5000x3000x2000 128x256 608, 128x192 607, 128x128 526.
4. `few_tiles`: otherwise 128x64, the most tiles (M = 128, N = 4096, K = 4096: 128x64 212, 128x128 167).

Before these, which kernel (`choose_kernel`, its test in tests/gemm/test_skinny.py):
`skinny_split_k`: f16 / bf16 with a row-major A go to the skinny GEMM (kernels/gemm/skinny.cu: K split across
clusters, the weight streamed once) for M <= SKINNY_MAX_M, and up to SKINNY_FEW_TILES_MAX_M where 64x256p would
have at most SKINNY_FEW_WGMMA_TILES tiles. H100, 2026-11-25, f16, bias + ReLU, D f16, weight column-major, us,
skinny / 64x256p (benchmarks/skinny_decode.py): M 16 N 4096 K 4096 18.6 / 29.4, N 14336 K 14336 145.0 / 146.0;
M 64 N 4096 K 4096 26.5 / 29.0, N 11008 K 4096 44.1 / 40.0; M 128 N 11008 K 11008 232.0 / 92.8 (128x128): past 32
rows the skinny GEMM's mma.sync tiles read A once per 64 columns and lose.
"""

from __future__ import annotations

from dataclasses import dataclass

SM_COUNT = 132
SECTOR_BYTES = 32
HALF_WAVE = 0.45           # 128x128 tiles at least this many waves: compare it with 128x256, else take 128x64
ONE_ROW_TILE_M = 64
# Rate of a tile relative to 128x256 (TFLOP/s / useful_share), measured at 4096^3 (128x128: 641 / 746) and at
# 3000^3 with 128-byte row pitches (128x192: 632 / 0.925 against 128x256: 515 / 0.694); with sector-misaligned rows
# at 3000^3 (128x192: 419 / 0.925, 128x128: 324 / 0.832 against 128x256: 386 / 0.694)
TILE_RATE = {"128x256": 1.0, "128x192": 0.92, "128x128": 0.86}
TILE_RATE_MISALIGNED = {"128x256": 1.0, "128x192": 0.81, "128x128": 0.70}
SIXTEEN_BIT_ONLY = ("128x192",)   # measured for f16 / bf16 inputs only
_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "e4m3": 1}
L2_PROMOTIONS = ("none", "64B", "128B", "256B")
DEFAULT_L2_PROMOTION = "256B"
RULES = ("one_row_tile", "sector_misaligned_rows", "waves", "few_tiles")
SKINNY_RULE = "skinny_split_k"   # choose_kernel's one rule
SKINNY_MAX_M = 32
SKINNY_FEW_TILES_MAX_M = 64
SKINNY_FEW_WGMMA_TILES = 16   # 64x256p tiles of N (N <= 4096): an eighth of the SMs busy


@dataclass(frozen=True)
class Schedule:
    tile: str             # a key of fraglab.gemm.wgmma.TILES
    l2_promotion: str     # CU_TENSOR_MAP_L2_PROMOTION_* of the A, B and D maps
    rule: str             # which rule of RULES chose it


def tile_count(m: int, n: int, bm: int, bn: int) -> int:
    return -(-m // bm) * -(-n // bn)


def wave_efficiency(tiles: int, sm_count: int = SM_COUNT) -> float:
    """The share of the SMs' tile slots the persistent grid fills: tiles / (whole waves x SMs)."""
    return tiles / (-(-tiles // sm_count) * sm_count)


def row_pitches(m: int, n: int, k: int, dtype: str, b_order: str, out_dtype: str,
                a_order: str = "C") -> tuple[int, int, int]:
    """Row pitch in bytes of A (M x K row-major, or K x M for a column-major A), B (K x N row-major, or N x K for
    a column-major B) and D (M x N)."""
    size = _BYTES[dtype]
    return (k if a_order == "C" else m) * size, (n if b_order == "C" else k) * size, n * _BYTES[out_dtype]


def sector_aligned(m: int, n: int, k: int, dtype: str, b_order: str, out_dtype: str, a_order: str = "C") -> bool:
    return all(p % SECTOR_BYTES == 0 for p in row_pitches(m, n, k, dtype, b_order, out_dtype, a_order))


def useful_share(m: int, n: int, bm: int, bn: int, sm_count: int = SM_COUNT) -> float:
    """The share of the tile slots of the persistent grid's whole waves that hold D's elements (not padding past
    M and N, not idle SMs in the last wave): M x N / (waves x SMs x bm x bn)."""
    waves = -(-tile_count(m, n, bm, bn) // sm_count)
    return m * n / (waves * sm_count * bm * bn)


def _best_tile(m: int, n: int, dtype: str, sm_count: int, rates: dict[str, float]) -> str:
    scores = {name: useful_share(m, n, 128, int(name.split("x")[1]), sm_count) * rate
              for name, rate in rates.items() if name not in SIXTEEN_BIT_ONLY or dtype in ("f16", "bf16")}
    return max(scores, key=lambda name: (scores[name], name == "128x256"))


def choose(m: int, n: int, k: int, dtype: str = "f16", b_order: str = "C", out_dtype: str = "f32",
           sm_count: int = SM_COUNT, a_order: str = "C") -> Schedule:
    """The schedule of one problem (the rules in this module's docstring, in order)."""
    if m <= ONE_ROW_TILE_M:
        promotion = DEFAULT_L2_PROMOTION if sector_aligned(m, n, k, dtype, b_order, out_dtype, a_order) else "none"
        return Schedule("64x256p", promotion, "one_row_tile")
    if not sector_aligned(m, n, k, dtype, b_order, out_dtype, a_order):
        if tile_count(m, n, 128, 128) >= HALF_WAVE * sm_count:
            return Schedule(_best_tile(m, n, dtype, sm_count, TILE_RATE_MISALIGNED), "none", "sector_misaligned_rows")
        return Schedule("128x64", "none", "sector_misaligned_rows")
    if tile_count(m, n, 128, 128) >= HALF_WAVE * sm_count:
        return Schedule(_best_tile(m, n, dtype, sm_count, TILE_RATE), DEFAULT_L2_PROMOTION, "waves")
    return Schedule("128x64", DEFAULT_L2_PROMOTION, "few_tiles")


def choose_kernel(m: int, n: int, k: int, dtype: str = "f16", b_order: str = "C", out_dtype: str = "f32",
                  a_order: str = "C") -> str:
    """'skinny' (kernels/gemm/skinny.cu) or 'wgmma' (the tile `choose` gives): rule `skinny_split_k`."""
    del k, b_order, out_dtype   # both orders of B, K and D's types measured alike (docs/skinny-gemm.md)
    if dtype not in ("f16", "bf16") or a_order != "C":
        return "wgmma"
    if m <= SKINNY_MAX_M or (m <= SKINNY_FEW_TILES_MAX_M and -(-n // 256) <= SKINNY_FEW_WGMMA_TILES):
        return "skinny"
    return "wgmma"


__all__ = ["Schedule", "choose", "choose_kernel", "SKINNY_RULE", "SKINNY_MAX_M",
           "SKINNY_FEW_TILES_MAX_M", "SKINNY_FEW_WGMMA_TILES", "RULES", "L2_PROMOTIONS", "DEFAULT_L2_PROMOTION", "wave_efficiency", "tile_count", "useful_share",
           "row_pitches", "sector_aligned"]
