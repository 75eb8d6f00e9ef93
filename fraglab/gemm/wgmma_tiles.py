"""The wgmma GEMM's block tiles as data: their shapes, schedules and clusters (`TileConfig`, mirroring
fraglab::wgmma_gemm::WgmmaTile in kernels/gemm/wgmma.cu), the launcher's tiles the schedule's rules choose from, and
the experimental ones that compile, are tested and are asked for by name. CPU only."""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import BYTES as _BYTES

BK = 64                           # fraglab::wgmma_gemm::kBK: a K-block of 16-bit elements (128 bytes; 8-bit: 128)
SMEM_LIMIT = 227 * 1024           # sm_90's dynamic shared memory per block


@dataclass(frozen=True)
class TileConfig:
    """Block tile bm x bn x 64 in a `stages`-deep TMA ring (stages of `stage_k` K-blocks), `group_m` row tiles per
    group of the persistent schedule; cooperative (both consumer warpgroups share each tile, bm / 2 rows each) or ping-pong (each
    warpgroup takes every other tile whole) (fraglab::wgmma_gemm::WgmmaTile)."""
    bm: int
    bn: int
    stages: int
    group_m: int = 8
    pingpong: bool = False
    cluster_m: int = 1     # 2: clusters of two blocks on vertically adjacent tiles, B multicast to both
    max_store_buffers: int = 2   # staging buffers per consumer for D, where two fit
    cluster_k: int = 1     # 2: clusters of two blocks on one tile, half of K each, summed in the first (split-K)
    cluster_n: int = 1     # 2: the cluster also spans two horizontally adjacent tiles, A multicast to both
    stage_k: int = 1       # K-blocks per stage (WgmmaTile::StageK): one TMA thread lands a stage in a roughly
    #                        fixed time plus its bytes, so small tiles stream faster with two
    b_slot_n: int = 0      # B's columns in a stage when more than bn (WgmmaTile::BSlotN): bn rounded up to whole
    #                        64-column boxes, so a tile of 96 / 160 / 224 columns takes a row-major B
    swap_ab: bool = False  # the kernel computes D^T = B^T A^T (its TransposedD): its bm rows are D's columns (B's,
    #                        the weight's, as wgmma's A) and its bn columns D's rows (A's, the tokens, as a K-major
    #                        wgmma B), so few rows of A fill wgmma's N instead of padding a 64- or 128-row tile

    @property
    def consumers(self) -> int:
        """Consumer warpgroups (WgmmaTile::kConsumers): three of 64 rows for a cooperative 192-row tile, else two."""
        return 3 if not self.pingpong and self.bm == 192 else 2

    @property
    def threads(self) -> int:
        """Threads per block: the producer warpgroup and the consumers."""
        return 128 * (1 + self.consumers)

    @property
    def cluster_blocks(self) -> int:
        """Blocks per cluster (WgmmaTile::kClusterBlocks); the grid is a whole number of clusters."""
        return self.cluster_m * self.cluster_n * self.cluster_k

    @property
    def reduce_bytes(self) -> int:
        """Split-K: the first block's landing place for the second's f32 accumulators, one tile per consumer."""
        return self.consumers * self.warpgroup_rows * self.bn * 4 if self.cluster_k > 1 else 0

    @property
    def smem_bytes(self) -> int:
        """Shared memory with direct D stores: WgmmaTile::kSmemBeforeStores (ring, staged bias, barriers, slack)."""
        # a slot per tile in its epilogue, each whole 128-byte units (a TMA destination's alignment)
        bias_floats = (2 if self.pingpong else 1) * -(-max(self.bm, self.bn) // 32) * 32
        bias_bytes = -(-bias_floats * 4 // 1024) * 1024
        # ring full / empty, two ping-pong turns, bias full / empty per consumer (+ split-K reduce full / free)
        barriers = 2 * self.stages + 2 + 2 * self.consumers * (2 if self.cluster_k > 1 else 1)
        b_cols = self.b_slot_n or self.bn
        return (self.stages * self.stage_k * (self.bm * BK * 2 + BK * b_cols * 2) + bias_bytes + self.reduce_bytes
                + barriers * 8 + 1024)

    @property
    def holds_block_scales(self) -> bool:
        """Block-scaled fp8 fits: one 128-column block of B per tile, and a second accumulator (a K-block's
        product) beside the first within a consumer's accumulator budget (wgmma.cu's static_asserts: 128
        registers of two consumers' 232, 96 of three's 152), and one K-block a stage (each is promoted alone). Not a
        swapped tile (8-bit inputs are K-major only; a swapped kernel's B is A)."""
        return not self.swap_ab and self.stage_k == 1 and self.bn in (64, 128) and (
            2 * (self.warpgroup_rows // 64) * self.bn // 2 <= (128 if self.consumers == 2 else 96))

    @property
    def b_orders(self) -> tuple[str, ...]:
        """B's orders the tile takes. A row-major B (MN-major, 'C') loads in 64-column boxes and a column-major one
        ('F', K-major) in one box of bn rows, so a tile whose columns are not whole boxes (n96, n160, n224) takes
        B column-major, or, with a slot of whole boxes (b_slot_n), row-major only. A swapped tile (swap_ab) takes
        B as wgmma's A: either order."""
        if self.swap_ab or self.bn % 64 == 0:
            return ("C", "F")
        return ("C",) if self.b_slot_n else ("F",)

    @property
    def k_major_b_only(self) -> bool:
        """The tile takes a column-major (K-major) B only."""
        return self.b_orders == ("F",)

    def chunk_bytes(self, out_dtype: str) -> int:
        """Bytes of each D row one staged TMA store moves (wgmma.cu's chunk_bytes): 128, or 64 (64B swizzle) where
        a tile row of D is not whole 128 bytes (16-bit D of n96 / n160 / n224). A swapped tile's: the 64 rows of a
        consumer, 128 bytes of 16-bit D."""
        if self.swap_ab:
            return 128
        return 128 if self.bn * _BYTES[out_dtype] % 128 == 0 else 64

    @property
    def chunk_rows(self) -> int:
        """Rows of D one staged TMA store moves: a consumer's rows, or for a swapped tile the kernel's columns per
        chunk (wgmma.cu's transposed_chunk_cols: 64, or 32 for n96 / n160 / n224)."""
        if self.swap_ab:
            return 64 if self.bn % 64 == 0 else 32 if self.bn % 32 == 0 else 16
        return self.warpgroup_rows

    @property
    def warpgroup_rows(self) -> int:
        """Rows of a tile one consumer warpgroup computes (and stores)."""
        return self.bm if self.pingpong else self.bm // self.consumers

    @property
    def store_buffers(self) -> int:
        """WgmmaTile::kStoreBuffers: two staging buffers per consumer where they fit, else one."""
        fits = self.smem_bytes + 2 * self.consumers * self.warpgroup_rows * 128 <= SMEM_LIMIT
        return 2 if fits and self.max_store_buffers > 1 else 1

    def staged_store_bytes(self) -> int:
        """The staging buffers of every consumer: 128 bytes of each of their rows, store_buffers times."""
        return self.consumers * self.store_buffers * self.warpgroup_rows * 128

    def cpp(self, staged_store: bool = False) -> str:
        slot = f", {self.b_slot_n}" if self.b_slot_n else ""
        return (f"fraglab::wgmma_gemm::WgmmaTile<{self.bm}, {self.bn}, {self.stages}, {self.group_m}, "
                f"{'true' if self.pingpong else 'false'}, {self.cluster_m}, {'true' if staged_store else 'false'}, "
                f"{self.max_store_buffers}, {self.cluster_k}, {self.cluster_n}, {self.stage_k}{slot}>")


# The launcher's tiles (benchmarks/wgmma_suite.py --tiles times the candidates; the winners stay here).
# Suffix p: ping-pong schedule; c2: clusters of two blocks with B multicast (c2x2: two by two, A multicast along N
# too; n2: one by two, A multicast); k2: clusters of two splitting K; gN: N row tiles per group; s3: 3 stages; b1:
# one D staging buffer per consumer; kbN: N K-blocks per stage; r: a row-major B in a slot of whole 64-column boxes
# (tiles of 96 / 160 / 224 columns, which otherwise take a column-major B only); t: swapped operands (swap_ab: the
# kernel computes D^T, its bm rows D's columns and its bn columns D's rows).
# The measurements behind each tile and its settings: docs/wgmma-gemm.md, "The launcher's tiles, as measured".
# Which of them a problem gets is fraglab/gemm/schedule.py's rules (64x64pkb2 / 64x64pk2kb2 / 64x128pkb2: M <= 64).
TILES: dict[str, TileConfig] = {
    "128x256": TileConfig(128, 256, 4, 16),
    "128x192": TileConfig(128, 192, 4, 16),
    "128x128": TileConfig(128, 128, 6),
    "128x64": TileConfig(128, 64, 8),
    "64x256p": TileConfig(64, 256, 5, pingpong=True),
    "128x192c2": TileConfig(128, 192, 4, 16, cluster_m=2),
    "64x128pc2": TileConfig(64, 128, 7, pingpong=True, cluster_m=2),
    "64x64p": TileConfig(64, 64, 12, pingpong=True),
    "64x64pk2": TileConfig(64, 64, 10, pingpong=True, cluster_k=2),
    "128x64k2": TileConfig(128, 64, 6, cluster_k=2),
    "192x192c2": TileConfig(192, 192, 4, 16, cluster_m=2),
    "128x128c2": TileConfig(128, 128, 6, cluster_m=2),
    "64x128p": TileConfig(64, 128, 7, pingpong=True),
    "64x192p": TileConfig(64, 192, 6, pingpong=True),
    "64x64pk2kb2": TileConfig(64, 64, 5, pingpong=True, cluster_k=2, stage_k=2),
    "64x128pkb2": TileConfig(64, 128, 4, pingpong=True, stage_k=2),
    "64x64pkb2": TileConfig(64, 64, 6, pingpong=True, stage_k=2),
    # columns between the 64-multiples (B column-major only): the waves of N = 5120 / 10240 / 14336 / 28672 / 57344
    # that 128x128 / 192 / 256 tiles leave part-filled
    "128x224": TileConfig(128, 224, 4, 16),
    "128x160": TileConfig(128, 160, 5, 16),
    "128x96": TileConfig(128, 96, 7),
    # 224 columns of a row-major B in a slot of four 64-column boxes (rule waves, M 193-1024)
    "128x224r": TileConfig(128, 224, 4, 16, b_slot_n=256),
    # swapped operands (rule swap_ab): the weight's rows in 64- or 128-row tiles by A's 65-96 / 129-160 rows as
    # wgmma's N, which 64- and 128-row tiles of A would pad
    "64x96pk2t": TileConfig(64, 96, 7, pingpong=True, cluster_k=2, swap_ab=True),
    "64x96pkb2t": TileConfig(64, 96, 5, pingpong=True, stage_k=2, swap_ab=True),
    "128x160t": TileConfig(128, 160, 5, 16, swap_ab=True),
    # 161-192 rows of A in one token tile where the weight's 128-row tiles make most of a wave or more (N >= 14336)
    "128x192t": TileConfig(128, 192, 4, 16, swap_ab=True),
    # 161-192 rows of A in two tiles of 96, clusters of the two: the weight's tile multicast to both (a 64-row one
    # in 32-row halves, one loaded by each block)
    "128x96n2t": TileConfig(128, 96, 7, cluster_n=2, swap_ab=True),
    "64x96pkb2n2t": TileConfig(64, 96, 5, pingpong=True, cluster_n=2, stage_k=2, swap_ab=True),
    # 129-160 rows of A in two tiles of 80 (wgmma n80; D^T leaves in 16-row chunks), clusters of the two
    "64x80pkb2n2t": TileConfig(64, 80, 5, pingpong=True, cluster_n=2, stage_k=2, swap_ab=True),
    "128x80n2t": TileConfig(128, 80, 7, cluster_n=2, swap_ab=True),
}
EXPERIMENTAL_TILES: dict[str, TileConfig] = {
    "128x128p": TileConfig(128, 128, 6, pingpong=True),
    "128x256s3": TileConfig(128, 256, 3, 16),
    "128x256g4": TileConfig(128, 256, 4, 4),
    "128x256g8": TileConfig(128, 256, 4, 8),
    "128x256g12": TileConfig(128, 256, 4, 12),
    "128x128p4": TileConfig(128, 128, 4, pingpong=True),
    "128x256c2": TileConfig(128, 256, 4, 16, cluster_m=2),
    "128x256b1": TileConfig(128, 256, 4, 16, max_store_buffers=1),
    "64x256pc2": TileConfig(64, 256, 5, 16, pingpong=True, cluster_m=2),
    "128x128pc2": TileConfig(128, 128, 6, pingpong=True, cluster_m=2),
    "256x128": TileConfig(256, 128, 4, 16),
    "64x64pc2": TileConfig(64, 64, 12, pingpong=True, cluster_m=2),
    "128x192c2s5": TileConfig(128, 192, 5, 16, cluster_m=2),
    "128x192c2g8": TileConfig(128, 192, 4, 8, cluster_m=2),
    "128x192c2g4": TileConfig(128, 192, 4, 4, cluster_m=2),
    "64x128pk2": TileConfig(64, 128, 5, pingpong=True, cluster_k=2),
    "192x192": TileConfig(192, 192, 4, 16),
    "192x192c2s3": TileConfig(192, 192, 3, 16, cluster_m=2),
    "192x128c2": TileConfig(192, 128, 5, 16, cluster_m=2),
    "192x128": TileConfig(192, 128, 5, 16),
    "128x64c2x2": TileConfig(128, 64, 8, cluster_m=2, cluster_n=2),
    "128x128c2x2": TileConfig(128, 128, 6, cluster_m=2, cluster_n=2),
    "128x64n2": TileConfig(128, 64, 8, cluster_n=2),
    "128x128n2": TileConfig(128, 128, 6, cluster_n=2),
    "128x192c2x2": TileConfig(128, 192, 4, 16, cluster_m=2, cluster_n=2),
    "64x64pkb4": TileConfig(64, 64, 3, pingpong=True, stage_k=4),
    "64x64pk2kb4": TileConfig(64, 64, 2, pingpong=True, cluster_k=2, stage_k=4),
    "128x64kb2": TileConfig(128, 64, 4, stage_k=2),
    "128x64kb4": TileConfig(128, 64, 2, stage_k=4),
    "128x64k2kb2": TileConfig(128, 64, 3, cluster_k=2, stage_k=2),
    "64x128pc2kb2": TileConfig(64, 128, 4, pingpong=True, cluster_m=2, stage_k=2),
    "64x192pkb2": TileConfig(64, 192, 3, pingpong=True, stage_k=2),
    "128x128kb2": TileConfig(128, 128, 3, stage_k=2),
    "128x128c2kb2": TileConfig(128, 128, 3, cluster_m=2, stage_k=2),
    # the same widths for a row-major B: B's slot rounded up to whole 64-column boxes
    "128x160r": TileConfig(128, 160, 5, 16, b_slot_n=192),
    "128x96r": TileConfig(128, 96, 6, b_slot_n=128),
    "128x96c2": TileConfig(128, 96, 7, cluster_m=2),
    "128x160c2": TileConfig(128, 160, 5, 16, cluster_m=2),
    "128x224c2": TileConfig(128, 224, 4, 16, cluster_m=2),
    # ping-pong 64-row tiles of every width, one block or split-K (tokens as wgmma's N; see swapped tiles)
    "64x96p": TileConfig(64, 96, 10, pingpong=True),
    "64x160p": TileConfig(64, 160, 6, pingpong=True),
    "64x224p": TileConfig(64, 224, 5, pingpong=True),
    "64x96pkb2": TileConfig(64, 96, 5, pingpong=True, stage_k=2),
    "64x160pkb2": TileConfig(64, 160, 3, pingpong=True, stage_k=2),
    "64x96pk2": TileConfig(64, 96, 7, pingpong=True, cluster_k=2),
    "64x160pk2": TileConfig(64, 160, 4, pingpong=True, cluster_k=2),
    "64x192pk2": TileConfig(64, 192, 3, pingpong=True, cluster_k=2),
    "64x96pk2kb2": TileConfig(64, 96, 3, pingpong=True, cluster_k=2, stage_k=2),
    "64x128pk2kb2": TileConfig(64, 128, 2, pingpong=True, cluster_k=2, stage_k=2),
    # swapped operands: bm rows of the weight (D's columns) by bn rows of A (the tokens, D's rows)
    "64x128pk2t": TileConfig(64, 128, 5, pingpong=True, cluster_k=2, swap_ab=True),
    "64x192pt": TileConfig(64, 192, 6, pingpong=True, swap_ab=True),
    "128x96t": TileConfig(128, 96, 7, swap_ab=True),
    "128x128t": TileConfig(128, 128, 6, swap_ab=True),
    "64x96pt": TileConfig(64, 96, 10, pingpong=True, swap_ab=True),
    "64x96pn2t": TileConfig(64, 96, 10, pingpong=True, cluster_n=2, swap_ab=True),
    "64x160pk2t": TileConfig(64, 160, 4, pingpong=True, cluster_k=2, swap_ab=True),
    "64x160pt": TileConfig(64, 160, 6, pingpong=True, swap_ab=True),
    # tokens in tiles of 80 (wgmma n80; swapped tiles only: D^T leaves in 16-row chunks)
    "64x80pk2t": TileConfig(64, 80, 8, pingpong=True, cluster_k=2, swap_ab=True),
    "64x80pkb2t": TileConfig(64, 80, 5, pingpong=True, stage_k=2, swap_ab=True),
}
ALL_TILES = {**TILES, **EXPERIMENTAL_TILES}


def launcher_tiles(b_order: str | None = None, a_order: str | None = None) -> tuple[str, ...]:
    """The launcher's tiles that take B in `b_order` and A in `a_order` (None: every one; TileConfig.b_orders; a
    swapped tile takes A row-major only)."""
    return tuple(t for t, c in TILES.items() if (b_order is None or b_order in c.b_orders)
                 and (a_order in (None, "C") or not c.swap_ab))
