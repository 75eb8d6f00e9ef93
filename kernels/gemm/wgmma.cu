// Hopper GEMM: D = act(alpha * A @ B (+ beta * C) (+ bias)), A M x K row-major or (a_mn_major, a launch parameter;
// 16-bit only) column-major, i.e. a row-major K x M array, B K x N row-major or (BKMajor)
// column-major, i.e. a row-major N x K array (f16 / bf16; e4m3 with A and B K-major), f32 accumulate, D in f32,
// f16 or bf16 (Z in f32). TMA loads with 128B swizzle into a `Stages`-deep mbarrier ring; one producer warpgroup
// (one thread issues the A/B loads, one the bias loads) and two or three consumer warpgroups (wgmma with both
// operands in shared memory; cooperative: each takes its share of the rows of every tile, ping-pong: each of two
// takes every other tile);
// setmaxnreg moves registers from the producer to the consumers; a persistent grid walks the tiles in a grouped
// order (GroupM row tiles share each column of B while it is in L2). The copy loader (`copied_operands`, a launch
// parameter; one-block tiles) fills A and / or B with cp.async 16-byte chunks instead, into the same swizzled stages.
// The epilogue runs in registers straight from the accumulators: which (row, col) each accumulator register holds
// is NOT written here; fraglab/gemm/wgmma.py generates it from fraglab.apis.wgmma.accumulator_map and prepends
// it as namespace fraglab::wgmma_acc (kRowBit/kColBit: per-thread base, Slots<N>::kRowOff/kColOff: per slot).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "epilogue.cuh"
#include "mbarrier.cuh"
#include "runtime/wgmma_operands.cuh"

#ifndef FRAGLAB_WGMMA_ACC_GENERATED
#error "compile through fraglab/gemm/wgmma.py: it prepends the generated accumulator indexing"
#endif

#ifdef FRAGLAB_WGMMA_TRACE
// A launch's timeline (benchmarks/wgmma_trace.py compiles with -DFRAGLAB_WGMMA_TRACE): the global timer (ns) per
// block at 8 points (FRAGLAB_TRACE(point) below; the last launch's values stay).
extern "C" {
__device__ unsigned long long fraglab_wgmma_trace[1024 * 8];
}
#define FRAGLAB_TRACE(point)                                                \
  do {                                                                      \
    unsigned long long ns_;                                                 \
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns_));                 \
    fraglab_wgmma_trace[blockIdx.x * 8 + (point)] = ns_;                    \
  } while (0)
#else
#define FRAGLAB_TRACE(point) \
  do {                       \
  } while (0)
#endif

namespace fraglab {
namespace wgmma_gemm {

constexpr int kBK = 64;             // K-block of 16-bit operands: 64 = 128 bytes, one 128B-swizzle row (8-bit: 128)
constexpr int kSwizzleBytes = 128;
constexpr int kProducerRegs = 40;
// Registers per consumer thread after setmaxnreg, by consumer warpgroups: 128 * 40 + 256 * 232 = 64512 and
// 128 * 40 + 384 * 152 = 63488, both <= 65536.
template <int Consumers>
__host__ __device__ constexpr int consumer_regs() {
  return Consumers == 2 ? 232 : 152;
}

// Block tile BM x BN x 64 in a `Stages`-deep ring. Cooperative (PingPong = false): the consumer warpgroups (two;
// three of 64 rows for BM = 192, as cuBLAS's 192x192 tiles: fewer bytes of A and B per multiply-add than 128-row
// tiles, where L2's bandwidth is the bound) work on every tile, BM / kConsumers rows each. Ping-pong: each of two
// warpgroups owns every other tile whole, so one warpgroup's epilogue runs while the other one's wgmma keep the
// tensor cores busy. A warpgroup covers its rows with kMmaM m64 instructions per k16 step.
// ClusterM = 2: two blocks of a cluster take vertically adjacent tiles (same columns of B); block `rank` loads B's
// 64-column blocks j with j % 2 == rank (an MN-major B) or, for a K-major B (one box), block 0 loads it whole, and
// multicasts them to both: B crosses from L2 to the SMs once per cluster. With ping-pong, consumer c of both blocks
// reads the same stages (both blocks walk the same units), so a stage's empty barrier counts the 4 warps of each.
// ClusterK = 2: the two blocks of a cluster take the same tile, each half of its K-blocks (split-K: twice the SMs
// stream B where tiles are fewer than SMs); block 1 writes its f32 accumulators into block 0's shared memory
// (DSMEM) and block 0 adds them and runs the epilogue.
// StagedStore: D leaves through shared memory: each consumer writes its rows, 128 bytes of each at a time, into a
// 128B-swizzled buffer, and one TMA store per buffer writes it to global memory (clipped at the edges).
// ClusterN = 2: the blocks of a cluster also take horizontally adjacent tiles (same rows of A): block (m_rank,
// n_rank), rank = m_rank + ClusterM * n_rank, loads rows [n_rank * BM / ClusterN, ...) of A's box (an MN-major A:
// its 64-row boxes j with j % ClusterN == n_rank) and multicasts them to the blocks of its row; B as above within
// its column. A stage of a block is written by the blocks of its row and of its column, so its consumers release
// it to all of them (ClusterM + ClusterN - 1 blocks).
// StageK: K-blocks per stage (their A and B one after the other, K-block j at j * kKBlockBytes). One TMA producer
// thread lands a stage in a roughly fixed time plus its bytes (docs/wgmma-gemm.md, "one stage per ~0.3 us"), so
// the small tiles of decode M stream faster with two K-blocks a stage. A tile's last stage is filled up with
// zeros (boxes past K) so that every stage is StageK K-blocks of wgmma with no branch among them.
template <int BM_, int BN_, int Stages_, int GroupM_, bool PingPong_, int ClusterM_ = 1, bool StagedStore_ = false,
          int MaxStoreBuffers_ = 2, int ClusterK_ = 1, int ClusterN_ = 1, int StageK_ = 1, int BSlotN_ = 0>
struct WgmmaTile {
  static constexpr int BM = BM_;
  static constexpr int BN = BN_;
  static constexpr int Stages = Stages_;
  static constexpr int GroupM = GroupM_;
  static constexpr bool PingPong = PingPong_;
  static constexpr int ClusterM = ClusterM_;
  static constexpr bool StagedStore = StagedStore_;
  static constexpr int ClusterK = ClusterK_;
  static constexpr int ClusterN = ClusterN_;
  static constexpr int StageK = StageK_;
  static constexpr int kClusterBlocks = ClusterM * ClusterN * ClusterK;
  static constexpr int kSharingBlocks = ClusterM + ClusterN - 1;   // blocks that write into one block's stages
  static constexpr int kConsumers = !PingPong && BM == 192 ? 3 : 2;
  static constexpr int kThreads = 128 * (1 + kConsumers);    // the producer warpgroup and the consumers
  static constexpr int kWarpgroupRows = PingPong ? BM : BM / kConsumers;
  static constexpr int kMmaM = kWarpgroupRows / 64;
  static constexpr int kABytes = BM * kSwizzleBytes;        // (BM, one K-block of 128 bytes): row r at r * 128, swizzled
  // B's columns in a stage: BN, or (BSlotN_) BN rounded up to whole 64-column boxes of a row-major B (the last box
  // reads columns of the next tile, which the wgmma of this one never reads)
  static constexpr int kBSlotN = BSlotN_ > 0 ? BSlotN_ : BN;
  static constexpr int kBBytes = kBSlotN * kSwizzleBytes;   // kBSlotN / 64 blocks of (K64 rows, N64 = 128 bytes), or (BN, K)
  static constexpr int kBBlockBytes = kBK * kSwizzleBytes;  // one (K64, N64) block
  static constexpr int kKBlockBytes = kABytes + kBBytes;    // one K-block's A, then its B
  static constexpr int kStageBytes = StageK * kKBlockBytes;
  // One arrival per consuming warp of every block whose stage the producer writes (kSharingBlocks: its row and
  // column of the cluster).
  static constexpr int kEmptyArrivals = (PingPong ? 1 : kConsumers) * 4 * kSharingBlocks;
  // The per-row / per-column bias of a tile, loaded into shared memory by TMA (the bias thread, warp 1): one slot per
  // tile in the epilogue at once (cooperative: both consumers read the tile's slot; ping-pong: one per consumer).
  static constexpr int kBiasSlots = PingPong ? kConsumers : 1;
  // a slot's start is a TMA destination: 128-byte aligned, so slots are whole 32-float units (n80: 96 floats)
  static constexpr int kBiasFloats = ((BM > BN ? BM : BN) + 31) / 32 * 32;
  static constexpr int kBiasBytes = (kBiasSlots * kBiasFloats * 4 + 1023) / 1024 * 1024;
  static constexpr int kBiasReaders = (PingPong ? 1 : kConsumers) * 4;  // consumer warps that read one slot's tile
  static constexpr int kStoreBufferBytes = StagedStore ? kWarpgroupRows * kSwizzleBytes : 0;  // 128 B per row
  // Split-K: block 0's landing place for block 1's accumulators, one f32 tile per consumer warpgroup
  // (float4 q of thread t at (q * 128 + t) * 16 bytes: a warp's 16-byte stores and loads are contiguous).
  static constexpr int kReduceFloats = ClusterK > 1 ? kMmaM * (BN / 2) * 128 : 0;
  static constexpr int kReduceBytes = kConsumers * kReduceFloats * 4;
  // ring full/empty, turn, bias full/empty (+ split-K: reduce full/free per consumer)
  static constexpr int kBarrierBytes = (2 * Stages + 2 + 2 * kConsumers + (ClusterK > 1 ? 2 * kConsumers : 0)) * 8;
  static constexpr int kSmemBeforeStores =
      Stages * kStageBytes + kBiasBytes + kReduceBytes + kBarrierBytes + 1024;  // + align slack
  // Two store buffers per consumer where they fit: the next 128 columns are written while the last ones' TMA store
  // still reads its buffer (with one, every chunk waited for the previous store to finish reading).
  static constexpr int kStoreBuffers =
      StagedStore && MaxStoreBuffers_ > 1 && kSmemBeforeStores + 2 * kConsumers * kStoreBufferBytes <= 227 * 1024 ? 2 : 1;
  static constexpr int kSmemBytes = kSmemBeforeStores + kConsumers * kStoreBuffers * kStoreBufferBytes;
  static_assert(BN == 64 || BN == 80 || BN == 96 || BN == 128 || BN == 160 || BN == 192 || BN == 224 || BN == 256,
                "wgmma wrappers exist for N = 64, 80, 96, 128, 160, 192, 224, 256");
  static_assert(kWarpgroupRows % 64 == 0 && kMmaM >= 1, "a warpgroup covers whole m64 blocks");
  static_assert(kMmaM * BN / 2 <= (kConsumers == 2 ? 128 : 96),
                "accumulators per thread: at most 128 of two consumers' 232 registers, 96 of three's 152");
  static_assert(BM <= 256, "a TMA box spans at most 256 rows");
  static_assert(kWarpgroupRows * (PingPong ? 1 : kConsumers) == BM, "the consumers cover the tile's rows");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "128B swizzle atoms are 1024-byte aligned");
  static_assert(kSmemBytes <= 227 * 1024, "too much shared memory for one block");
  static_assert(ClusterM == 1 || ClusterM == 2, "clusters of one or two blocks along M");
  static_assert(ClusterN == 1 || ClusterN == 2, "clusters of one or two blocks along N");
  static_assert(ClusterK == 1 || (ClusterK == 2 && ClusterM == 1 && ClusterN == 1),
                "split-K over two blocks, not with ClusterM or ClusterN");
  // A K-major A's box splits between a row's blocks in whole 8-row swizzle atoms; an MN-major A's 64-row boxes go to
  // them in turn (with one box, the first block loads it for both)
  static_assert(BM % 64 == 0 && (BM / ClusterN) % 8 == 0, "A's box splits into whole 8-row atoms between a row's blocks");
  static_assert(StageK == 1 || StageK == 2 || StageK == 4, "one, two or four K-blocks per stage");
  static_assert(kBSlotN == BN || (kBSlotN % 64 == 0 && kBSlotN > BN && kBSlotN - BN < 64),
                "B's slot is the tile's columns, or them rounded up to whole 64-column boxes");
  static_assert(kReduceBytes % 1024 == 0, "the store buffers after the reduce buffers stay 1024-byte aligned");
  static_assert(kBiasBytes % 1024 == 0, "the store buffers after the bias stay 1024-byte aligned");
};

__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  mbar_wait_at(smem_u32(bar), parity);
}

// 2-D tile load; coordinates are (innermost, outer) elements; out-of-bounds elements arrive as zeros but
// still count toward the barrier's byte total.
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaMap* map, int c0, int c1, unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// The same load written to the same shared-memory offset, and completing on the same barrier offset, in every
// block of the cluster named in `cta_mask`.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TmaMap* map, int c0, int c1,
                                                      unsigned long long* bar, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)),
        "h"(cta_mask)
      : "memory");
}

// Arrive on the barrier at `bar`'s offset in block `cta` of the cluster. Default (.release.cta) semantics: an
// explicit .release.cluster costs a MEMBAR.ALL.GPU per arrive, and what it would order (the wgmma reads of the
// stage) is already complete (wgmma.wait_group) when the consumer arrives.
__device__ __forceinline__ void mbar_arrive_in(unsigned long long* bar, unsigned cta) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n"
      ::"r"(smem_u32(bar)), "r"(cta)
      : "memory");
}

// Split-K's hand-over: `bytes` of this block's shared memory at `src` copied to another block's (`dst`, from
// map_to_cta), completing them on that block's barrier at `remote_bar` as a TMA load would: one transaction,
// and the receiver waits on its barrier alone.
__device__ __forceinline__ void bulk_copy_to_cta(unsigned dst, unsigned src, unsigned bytes, unsigned remote_bar) {
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(dst), "r"(src), "r"(bytes), "r"(remote_bar)
               : "memory");
}
__device__ __forceinline__ unsigned map_to_cta(unsigned addr, unsigned cta) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(cta));
  return remote;
}

// The blocks (cluster ranks m + ClusterM * n) that share the rows of A of block (m_rank, n_rank) (row = true: its
// row of the cluster) or its columns of B (its column): the multicast masks, and whom a stage is released to.
template <int ClusterM, int ClusterN>
__device__ __forceinline__ unsigned short sharing_mask(int m_rank, int n_rank, bool row) {
  unsigned mask = 0;
  if (row) {
#pragma unroll
    for (int n = 0; n < ClusterN; ++n) mask |= 1u << (m_rank + ClusterM * n);
  } else {
#pragma unroll
    for (int m = 0; m < ClusterM; ++m) mask |= 1u << (m + ClusterM * n_rank);
  }
  return static_cast<unsigned short>(mask);
}


__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ void prefetch_tma_map(const TmaMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// The copy loader (meant for operands whose row pitch is 16 but not 32 bytes aligned, where TMA boxes run at two
// thirds of their rate; measured slower still, so only asked for by name): warps 0, 2 and 3 of the producer
// warpgroup (warp 1 keeps the bias) issue 16-byte cp.async chunks.
constexpr int kCopyThreads = 96;
constexpr unsigned kCopyA = 1, kCopyB = 2;   // `copied_operands` bits: which operands the copy loader fills

// 16 bytes global -> shared, or 16 zero bytes (and no read) where `zero` is set.
__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool zero) {
  asm volatile("{\n.reg .pred z;\nsetp.ne.b32 z, %2, 0;\ncp.async.cg.shared.global [%0], [%1], 16, z;\n}\n"
               ::"r"(dst), "l"(src), "r"(static_cast<int>(zero))
               : "memory");
}

// An arrival on `bar` once every cp.async this thread has issued so far has landed; counts as one of the
// barrier's expected arrivals (.noinc).
__device__ __forceinline__ void cp_async_arrive_noinc(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(bar) : "memory");
}

// What a TMA load of a (Rows, 128 bytes) box with 128B swizzle writes, by cp.async: the box starts at byte
// `byte0` of row `row0` of a row-major array of `outer` rows of `inner_bytes` bytes (a multiple of 16: the launcher
// leaves other operands on TMA), `pitch` bytes apart. (box row r, 16-byte chunk j) -> shared byte
// r * 128 + (j ^ (r % 8)) * 16 (rows of an 8-row, 1024-byte atom; `dst` is 1024-byte aligned). Chunks past the
// row's end and rows past `outer` are zero-filled, as TMA fills them.
// Copy thread `lt` takes chunk j = lt % 8 of rows lt / 8 + 12 i: 8 consecutive threads read one 128-byte row
// segment. Unrolled, with what can be worked out once per box worked out once: rolled, with a byte count per
// chunk, each chunk was a chain of ~30 dependent instructions and three warps fed a stage at half TMA's rate.
template <int Rows>
__device__ __forceinline__ void copy_box_swizzled(unsigned dst, const unsigned char* src, int pitch,
                                                  int inner_bytes, int outer, int byte0, int row0, int lt) {
  static_assert(kCopyThreads % 8 == 0, "a thread keeps its chunk column from row to row");
  constexpr int kRowStep = kCopyThreads / 8;                       // 12 rows apart: (r % 8) alternates by 4
  constexpr int kSteps = (Rows + kRowStep - 1) / kRowStep;
  const int j = lt % 8;
  const int r0 = lt / 8;
  const int byte = byte0 + j * 16;
  // step i reads a row while 12 i < rows_in (none where this thread's chunk is past the row's end)
  const int rows_in = byte < inner_bytes ? outer - row0 - r0 : 0;
  const unsigned char* from = src + static_cast<long long>(row0 + r0) * pitch + byte;
  const long long step = static_cast<long long>(kRowStep) * pitch;
  const unsigned even = dst + r0 * kSwizzleBytes + ((j ^ (r0 % 8)) << 4);         // rows r0 + 12 i, i even
  const unsigned odd = dst + r0 * kSwizzleBytes + ((j ^ ((r0 + 4) % 8)) << 4);    // i odd
#pragma unroll
  for (int i = 0; i < kSteps; ++i) {
    if (Rows % kRowStep != 0 && i == kSteps - 1 && r0 + i * kRowStep >= Rows) break;
    cp_async_16((i % 2 ? odd : even) + i * kRowStep * kSwizzleBytes, from + i * step, i * kRowStep >= rows_in);
  }
}

// 2-D tile store from shared memory (a bulk async-group); parts of the box outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(const TmaMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(smem_u32(src))
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Until at most `Pending` committed stores are still reading their shared memory.
template <int Pending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}
// Until every committed store has completed.
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

__device__ __forceinline__ void stmatrix_x4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// The same registers, each 8x8 matrix stored transposed: its element (r, c) lands in row c, column r (lane l gives
// the address of row l % 8 of matrix l / 8, which holds the matrix's column l % 8).
__device__ __forceinline__ void stmatrix_x4_trans(unsigned addr, unsigned r0, unsigned r1, unsigned r2,
                                                  unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// Shared-memory matrix descriptor (PTX ISA "matrix descriptor"): bits 0-13 start address >> 4,
// 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 62-63 swizzle (1 = 128B).
__device__ __forceinline__ unsigned long long smem_desc(unsigned addr, unsigned lbo, unsigned sbo) {
  return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>(lbo >> 4) << 16) | (static_cast<unsigned long long>(sbo >> 4) << 32) |
         (1ull << 62);
}

// Barrier over one warpgroup's 128 threads (id 0 is __syncthreads', 1 + c consumer c's).
__device__ __forceinline__ void warpgroup_sync(int id) { asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory"); }


template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}

template <bool V>
struct BoolConstant {
  static constexpr bool value = V;
};

template <class A, class B>
struct IsSame {
  static constexpr bool value = false;
};
template <class A>
struct IsSame<A, A> {
  static constexpr bool value = true;
};

// D(m64 x N, f32) += A(m64 x 32 bytes of K) * B(32 bytes of K x N), both from shared memory: k16 of f16 / bf16
// (A K-major; B MN-major, imm-trans-b = 1, or K-major, imm-trans-b = 0) or k32 of e4m3 (both K-major: 8-bit
// operands have no transpose). One instruction text for every N: the type, the transpose, the accumulator
// registers (runtime/wgmma_operands.cuh) and the operand numbers after them are pasted in (asm text is a literal).
#define FRAGLAB_WGMMA_M64NK16(N, TY, TRANS_A, TRANS_B, REGS, OPERANDS, DESC_A, DESC_B, PRED)                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" PRED ", 0;\n"                                               \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " "                                 \
               "{" REGS "}, "                                                                                  \
               "%" DESC_A ", %" DESC_B ", p, 1, 1, " TRANS_A ", " TRANS_B ";\n}\n"                               \
               : OPERANDS(d)                                                                                   \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define FRAGLAB_WGMMA_M64NK32_E4M3(N, REGS, OPERANDS, DESC_A, DESC_B, PRED)                                    \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" PRED ", 0;\n"                                               \
               "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 "                                     \
               "{" REGS "}, "                                                                                  \
               "%" DESC_A ", %" DESC_B ", p, 1, 1;\n}\n"                                                        \
               : OPERANDS(d)                                                                                   \
               : "l"(desc_a), "l"(desc_b), "r"(scale_d))
// 16-bit: one instruction text per (A order, B order): imm-trans-a = 1 for an MN-major A, imm-trans-b = 1 for an
// MN-major B (the transpose bits are immediates in the instruction, so each pair is its own asm literal).
#define FRAGLAB_WGMMA_M64NK16_ORDERS(N, TY, REGS, OPERANDS, DESC_A, DESC_B, PRED)                              \
  if constexpr (AMNMajor && BKMajor) {                                                                         \
    FRAGLAB_WGMMA_M64NK16(N, TY, "1", "0", REGS, OPERANDS, DESC_A, DESC_B, PRED);                              \
  } else if constexpr (AMNMajor) {                                                                             \
    FRAGLAB_WGMMA_M64NK16(N, TY, "1", "1", REGS, OPERANDS, DESC_A, DESC_B, PRED);                              \
  } else if constexpr (BKMajor) {                                                                              \
    FRAGLAB_WGMMA_M64NK16(N, TY, "0", "0", REGS, OPERANDS, DESC_A, DESC_B, PRED);                              \
  } else {                                                                                                     \
    FRAGLAB_WGMMA_M64NK16(N, TY, "0", "1", REGS, OPERANDS, DESC_A, DESC_B, PRED);                              \
  }
#define FRAGLAB_WGMMA_M64N_ANY(N, REGS, OPERANDS, DESC_A, DESC_B, PRED)                                       \
  if constexpr (IsSame<T, __nv_fp8_e4m3>::value) {                                                             \
    static_assert(BKMajor && !AMNMajor, "8-bit operands are K-major only");                                    \
    FRAGLAB_WGMMA_M64NK32_E4M3(N, REGS, OPERANDS, DESC_A, DESC_B, PRED);                                       \
  } else if constexpr (IsSame<T, __nv_bfloat16>::value) {                                                      \
    FRAGLAB_WGMMA_M64NK16_ORDERS(N, "bf16", REGS, OPERANDS, DESC_A, DESC_B, PRED)                              \
  } else {                                                                                                     \
    FRAGLAB_WGMMA_M64NK16_ORDERS(N, "f16", REGS, OPERANDS, DESC_A, DESC_B, PRED)                               \
  }

// 40, 48, 80, 96 and 112 accumulator registers (m64n80, n96, n160, n192, n224), built on the runtime header's 32
// and 64
#define FRAGLAB_WGMMA_F32_OPERANDS_40(d) FRAGLAB_WGMMA_F32_OPERANDS_32(d), FRAGLAB_WGMMA_F32x8(d, 32)
#define FRAGLAB_WGMMA_REGS_40 FRAGLAB_WGMMA_REGS_32 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define FRAGLAB_WGMMA_F32_OPERANDS_48(d)                                                                       \
  FRAGLAB_WGMMA_F32_OPERANDS_32(d), FRAGLAB_WGMMA_F32x8(d, 32), FRAGLAB_WGMMA_F32x8(d, 40)
#define FRAGLAB_WGMMA_REGS_48                                                                                  \
  FRAGLAB_WGMMA_REGS_32 ", "                                                                                   \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define FRAGLAB_WGMMA_F32_OPERANDS_80(d)                                                                       \
  FRAGLAB_WGMMA_F32_OPERANDS_64(d), FRAGLAB_WGMMA_F32x8(d, 64), FRAGLAB_WGMMA_F32x8(d, 72)
#define FRAGLAB_WGMMA_REGS_80                                                                                  \
  FRAGLAB_WGMMA_REGS_64 ", "                                                                                   \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define FRAGLAB_WGMMA_F32_OPERANDS_96(d)                                                                       \
  FRAGLAB_WGMMA_F32_OPERANDS_64(d), FRAGLAB_WGMMA_F32x8(d, 64), FRAGLAB_WGMMA_F32x8(d, 72),                    \
      FRAGLAB_WGMMA_F32x8(d, 80), FRAGLAB_WGMMA_F32x8(d, 88)
#define FRAGLAB_WGMMA_REGS_96                                                                                  \
  FRAGLAB_WGMMA_REGS_64 ", "                                                                                   \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                           \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define FRAGLAB_WGMMA_F32_OPERANDS_112(d)                                                                      \
  FRAGLAB_WGMMA_F32_OPERANDS_96(d), FRAGLAB_WGMMA_F32x8(d, 96), FRAGLAB_WGMMA_F32x8(d, 104)
#define FRAGLAB_WGMMA_REGS_112                                                                                 \
  FRAGLAB_WGMMA_REGS_96 ", "                                                                                   \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n64(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(64, FRAGLAB_WGMMA_REGS_32, FRAGLAB_WGMMA_F32_OPERANDS_32, "32", "33", "34")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n128(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(128, FRAGLAB_WGMMA_REGS_64, FRAGLAB_WGMMA_F32_OPERANDS_64, "64", "65", "66")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n80(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(80, FRAGLAB_WGMMA_REGS_40, FRAGLAB_WGMMA_F32_OPERANDS_40, "40", "41", "42")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n96(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(96, FRAGLAB_WGMMA_REGS_48, FRAGLAB_WGMMA_F32_OPERANDS_48, "48", "49", "50")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n160(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(160, FRAGLAB_WGMMA_REGS_80, FRAGLAB_WGMMA_F32_OPERANDS_80, "80", "81", "82")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n224(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(224, FRAGLAB_WGMMA_REGS_112, FRAGLAB_WGMMA_F32_OPERANDS_112, "112", "113", "114")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n192(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(192, FRAGLAB_WGMMA_REGS_96, FRAGLAB_WGMMA_F32_OPERANDS_96, "96", "97", "98")
}

template <class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_m64n256(float* d, unsigned long long desc_a, unsigned long long desc_b, int scale_d) {
  FRAGLAB_WGMMA_M64N_ANY(256, FRAGLAB_WGMMA_REGS_128, FRAGLAB_WGMMA_F32_OPERANDS_128, "128", "129", "130")
}
#undef FRAGLAB_WGMMA_M64N_ANY
#undef FRAGLAB_WGMMA_M64NK16_ORDERS
#undef FRAGLAB_WGMMA_M64NK32_E4M3
#undef FRAGLAB_WGMMA_M64NK16

// One step of 32 bytes of K (the descriptors advance 32 bytes along the swizzled rows per step, or 16 rows of an
// MN-major operand).
template <int BN, class T, bool BKMajor, bool AMNMajor>
__device__ __forceinline__ void wgmma_tile_step(float* d, unsigned long long desc_a, unsigned long long desc_b,
                                                int scale_d) {
  if constexpr (BN == 256) {
    wgmma_m64n256<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 224) {
    wgmma_m64n224<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 160) {
    wgmma_m64n160<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 80) {
    wgmma_m64n80<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 96) {
    wgmma_m64n96<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 192) {
    wgmma_m64n192<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else if constexpr (BN == 128) {
    wgmma_m64n128<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  } else {
    wgmma_m64n64<T, BKMajor, AMNMajor>(d, desc_a, desc_b, scale_d);
  }
}

// The persistent schedule: tile index -> (row tile, column tile), GroupM row tiles at a time down each column.
// (Unsigned: a division of non-negative ints is a few instructions shorter so, on the producer's way to its first load.)
template <int GroupM>
__device__ __forceinline__ void tile_coords(int tile, int m_tiles, int n_tiles, int& tm, int& tn) {
  const unsigned per_group = GroupM * static_cast<unsigned>(n_tiles);
  const unsigned group = static_cast<unsigned>(tile) / per_group;
  const unsigned first_m = group * GroupM;
  const unsigned rows = min(static_cast<unsigned>(m_tiles) - first_m, static_cast<unsigned>(GroupM));
  const unsigned in_group = static_cast<unsigned>(tile) - group * per_group;
  tm = static_cast<int>(first_m + in_group % rows);
  tn = static_cast<int>(in_group / rows);
}

// B's (K64, N64) blocks sit kBBlockBytes apart along N and 8-row (1024-byte) swizzle atoms along K. Which of
// the descriptor's two offsets carries which stride for an MN-major operand is set by BSwapOffsets (the launcher
// uses the one the GPU tests proved).
template <class Tile, bool BSwapOffsets>
struct BDescOffsets {
  static constexpr unsigned kLbo = BSwapOffsets ? 1024u : static_cast<unsigned>(Tile::kBBlockBytes);
  static constexpr unsigned kSbo = BSwapOffsets ? static_cast<unsigned>(Tile::kBBlockBytes) : 1024u;
};

// Bytes of each D row one staged store moves (D's TMA box): 128, or 64 where a tile row is not whole 128 bytes.
template <int BN, class OutT>
__host__ __device__ constexpr int chunk_bytes() {
  return (BN * static_cast<int>(sizeof(OutT))) % kSwizzleBytes == 0 ? kSwizzleBytes : kSwizzleBytes / 2;
}

// Two f32 values as one 32-bit word of two f16 / bf16 (the first in the low half, as memory order has it).
template <class OutT>
__device__ __forceinline__ unsigned pack_pair(float a, float b) {
  if constexpr (IsSame<OutT, __half>::value) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const unsigned*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const unsigned*>(&h);
  }
}

// D's element type from f32 values: a pair of adjacent columns as one 8- or 4-byte store, or one value.
template <class OutT>
__device__ __forceinline__ void store_pair(OutT* dst, float a, float b) {
  if constexpr (IsSame<OutT, float>::value) {
    *reinterpret_cast<float2*>(dst) = make_float2(a, b);
  } else {
    *reinterpret_cast<unsigned*>(dst) = pack_pair<OutT>(a, b);
  }
}

template <class OutT>
__device__ __forceinline__ OutT to_out(float v) {
  if constexpr (IsSame<OutT, float>::value) {
    return v;
  } else if constexpr (IsSame<OutT, __half>::value) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

// Two adjacent elements (the first 2-element aligned) of f32 or a 16-bit type, as floats.
template <class T>
__device__ __forceinline__ float2 pair_as_float2(const T* p) {
  if constexpr (IsSame<T, float>::value) {
    return *reinterpret_cast<const float2*>(p);
  } else if constexpr (IsSame<T, __half>::value) {
    return __half22float2(*reinterpret_cast<const __half2*>(p));
  } else {
    static_assert(IsSame<T, __nv_bfloat16>::value, "a bias of float, __half or __nv_bfloat16");
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
  }
}

// D^T's chunk (TransposedD): the tile's columns per TMA store, rows of D: 64, or 32 for n96 / n160 / n224, 16 for n80.
template <int BN>
__host__ __device__ constexpr int transposed_chunk_cols() {
  return BN % 64 == 0 ? 64 : BN % 32 == 0 ? 32 : 16;
}

// Every accumulator slot's row offset is 0 or 8 (the epilogue holds one A scale per 8-row half).
template <int BN>
__host__ __device__ constexpr bool rows_are_base_or_base_plus_8() {
  for (int i = 0; i < BN / 2; ++i) {
    if (wgmma_acc::Slots<BN>::kRowOff[i] != 0 && wgmma_acc::Slots<BN>::kRowOff[i] != 8) return false;
  }
  return true;
}

// The epilogue of one warpgroup's (kMmaM * 64) x BN accumulators: every accumulator becomes its output value in
// place (C and bias loads, arithmetic, Z stores); the D stores come after (store_direct / store_staged). Keeping the
// D stores out of this loop lets the compiler batch the loads (through EpilogueParams they are not __restrict__,
// so a load after a D store would have to wait for it).
// `bias_tile`: the bias of the tile's rows (PerM, index m - bias_row0) or columns (PerN, n - bias_col0), staged in
// shared memory by TMA; other modes read it through Epi.
// TransposedD: the kernel computes D^T (swapped operands: its rows are D's columns), so C, a full bias and Z are
// read and written at (n, m) of D; M, N, the staged bias and the scales stay in the kernel's own coordinates.
template <class Tile, class Epi, bool TransposedD = false>
__device__ __forceinline__ void epilogue_in_registers(float (&acc)[Tile::kMmaM][Tile::BN / 2],
                                                      const EpilogueParams& p, int M, int N, int row0, int col0,
                                                      const typename Epi::BiasType* bias_tile, int bias_row0,
                                                      int bias_col0) {
  constexpr int BN = Tile::BN;
  using Slots = wgmma_acc::Slots<BN>;
  static_assert(!Epi::kRowColScale || rows_are_base_or_base_plus_8<BN>(), "row scales are held per 8-row half");
  float2 pair_bias = make_float2(0.f, 0.f);
  float2 pair_scale = make_float2(0.f, 0.f);
  // RowColScale: this thread's rows are base + 0 and base + 8 of each m64 block: their two A scales, loaded once
  float row_scale[Tile::kMmaM][2];
  if constexpr (Epi::kRowColScale) {
#pragma unroll
    for (int mm = 0; mm < Tile::kMmaM; ++mm) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int m = row0 + mm * 64 + 8 * h;
        row_scale[mm][h] = m < M ? __ldg(p.scale_a + m) : 0.f;
      }
    }
  }
#pragma unroll
  for (int mm = 0; mm < Tile::kMmaM; ++mm) {
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) {
      const int m = row0 + mm * 64 + Slots::kRowOff[i];
      const int n = col0 + Slots::kColOff[i];
      if constexpr (Epi::kRowColScale) {
        // slots (2j, 2j+1) are columns (c, c+1) with c even and N even: one 8-byte load per pair, 0 past N
        if (i % 2 == 0) {
          pair_scale = n < N ? __ldg(reinterpret_cast<const float2*>(p.scale_b + n)) : make_float2(0.f, 0.f);
        }
        acc[mm][i] *= row_scale[mm][Slots::kRowOff[i] / 8] * (i % 2 == 0 ? pair_scale.x : pair_scale.y);
      }
      // Only the global loads and the Z store are guarded; the arithmetic runs for every slot (past the edge
      // on TMA's zero fill, never stored). Wrapped in one `if`, a long activation became a branch per element,
      // and the compiler could not interleave elements: GELU's MUFU latency chains ran one after another.
      const bool inside = m < M && n < N;
      const int dm = TransposedD ? n : m;   // the element's row and column in D (and C, Z, a full bias)
      const int dn = TransposedD ? m : n;
      float b = 0.f;
      if constexpr (Epi::kBias == BiasMode::PerN) {
        // staged: 0 past N; slots (2j, 2j+1) are columns (c, c+1) with c even: one 8-byte load per pair
        if (i % 2 == 0) pair_bias = pair_as_float2(bias_tile + (n - bias_col0));
        b = i % 2 == 0 ? pair_bias.x : pair_bias.y;
      } else if constexpr (Epi::kBias == BiasMode::PerM) {
        b = static_cast<float>(bias_tile[m - bias_row0]);
      } else if constexpr (Epi::kReadsBias) {
        if (inside) b = Epi::bias_at(p, dm, dn);
      }
      float c = 0.f;
      if constexpr (Epi::kReadsC) {
        if (inside) c = Epi::c_at(p, dm, dn);
      }
      float pre;
      acc[mm][i] = Epi::combine(p, acc[mm][i], c, b, pre);
      if constexpr (Epi::kWritesZ) {
        if (inside) p.Z[flat_index(dm, dn, p.ldz)] = pre;
      }
    }
  }
}

// D straight from registers: slot pairs (2j, 2j+1) are two adjacent columns of one row (asserted when the
// indexing was generated): one 2-element store where the row of D allows it.
// TransposedD: element (m, n) of the kernel's tile is D's (n, m), one element at a time (a slot pair is two rows of D).
template <class Tile, class OutT, bool TransposedD = false>
__device__ __forceinline__ void store_direct(float (&acc)[Tile::kMmaM][Tile::BN / 2], OutT* __restrict__ D, int M,
                                             int N, int ldd, int row0, int col0) {
  constexpr int BN = Tile::BN;
  using Slots = wgmma_acc::Slots<BN>;
  if constexpr (TransposedD) {
#pragma unroll
    for (int mm = 0; mm < Tile::kMmaM; ++mm) {
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) {
        const int m = row0 + mm * 64 + Slots::kRowOff[i];
        const int n = col0 + Slots::kColOff[i];
        if (m < M && n < N) D[flat_index(n, m, ldd)] = to_out<OutT>(acc[mm][i]);
      }
    }
    return;
  }
  const bool pairs_fit = (N % 2) == 0;
#pragma unroll
  for (int mm = 0; mm < Tile::kMmaM; ++mm) {
#pragma unroll
    for (int j = 0; j < BN / 4; ++j) {
      const int m = row0 + mm * 64 + Slots::kRowOff[2 * j];
      const int n = col0 + Slots::kColOff[2 * j];
      if (m >= M) continue;
      if (pairs_fit && n + 1 < N) {
        store_pair(D + flat_index(m, n, ldd), acc[mm][2 * j], acc[mm][2 * j + 1]);
      } else {
        if (n < N) D[flat_index(m, n, ldd)] = to_out<OutT>(acc[mm][2 * j]);
        if (n + 1 < N) D[flat_index(m, n + 1, ldd)] = to_out<OutT>(acc[mm][2 * j + 1]);
      }
    }
  }
}

// A consumer's staged store, in two halves around its writes. acquire: the buffer of its store number `stores`
// (buffers take turns over the consumer's whole run of stores; a tile may have an odd number of chunks), once the
// store that last used it has read it. issue: the writes are seen by the async proxy, then one thread stores the
// buffer as D's TMA box at (c0, c1).
template <class Tile>
__device__ __forceinline__ unsigned char* acquire_store_buffer(unsigned char* buffers, unsigned stores, int t,
                                                               int barrier) {
  unsigned char* buffer = buffers + (Tile::kStoreBuffers > 1 ? stores % Tile::kStoreBuffers : 0) *
                                        Tile::kStoreBufferBytes;
  if (t == 0) bulk_wait_read<Tile::kStoreBuffers - 1>();
  warpgroup_sync(barrier);
  return buffer;
}

__device__ __forceinline__ void issue_staged_store(const TmaMap* tma_d, const unsigned char* buffer, int c0, int c1,
                                                   int t, int barrier) {
  fence_proxy_async_smem();
  warpgroup_sync(barrier);
  if (t == 0) {
    tma_store_2d(tma_d, buffer, c0, c1);
    bulk_commit();
  }
}

// D through shared memory, 128 bytes of each row at a time (64 columns of 16-bit D, 32 of f32): the warpgroup
// writes its rows into its 128B-swizzled buffer (16-byte chunk c of row r lands at chunk c ^ (r % 8), as the TMA
// map's swizzle reads it), then one thread stores the buffer with TMA (clipped at the edges of D). 16-bit D goes
// in with stmatrix .x4 (which accumulator slot feeds which register half is generated: Slots<BN>::kStmatrixSlot),
// f32 D as float2 pairs at the (row, col) the generated indexing gives. The buffer is rewritten only after the
// previous store has read it.
template <class Tile, class OutT>
__device__ __forceinline__ void store_staged(float (&acc)[Tile::kMmaM][Tile::BN / 2], unsigned char* buffers,
                                             unsigned& stores, const TmaMap* tma_d, int row_first, int col_first,
                                             int base_row, int base_col, int t, int barrier) {
  constexpr int BN = Tile::BN;
  constexpr bool kF32 = IsSame<OutT, float>::value;
  // 128 bytes of each row a chunk, or 64 where the tile's rows are not whole 128 bytes (16-bit D of n96 / n160 /
  // n224: D's tensor map then has 64-byte boxes and 64B swizzle). 16-byte unit u of buffer row r sits at unit
  // u ^ ((r >> kRowShift) & kUnitMask): 128B swizzle XORs with r % 8, 64B swizzle with (r / 2) % 4.
  constexpr int kChunkBytes = chunk_bytes<BN, OutT>();
  constexpr int kChunkCols = kChunkBytes / static_cast<int>(sizeof(OutT));
  constexpr int kRowShift = kChunkBytes == kSwizzleBytes ? 0 : 1;
  constexpr int kUnitMask = kChunkBytes / 16 - 1;
  constexpr int kGroups = kChunkCols / 16;   // 16-column stmatrix groups per chunk (16-bit D)
  static_assert(BN % kChunkCols == 0, "whole chunks per tile row");
  using Slots = wgmma_acc::Slots<BN>;
  static_assert(kF32 || Slots::kStmatrix, "the accumulator layout has no stmatrix .x4 form: use direct stores");
  static_assert(wgmma_acc::kBaseColBelow8 && wgmma_acc::Slots<BN>::kPairColsOn8, "a pair's chunk is its offset's");
  const int warp = t / 32;
  const int lane = t % 32;
  const int matrix = lane / 8;
#pragma unroll
  for (int chunk = 0; chunk < BN / kChunkCols; ++chunk, ++stores) {
    unsigned char* buffer = acquire_store_buffer<Tile>(buffers, stores, t, barrier);
    const unsigned base = smem_u32(buffer);
#pragma unroll
    for (int mm = 0; mm < Tile::kMmaM; ++mm) {
      if constexpr (kF32) {
#pragma unroll
        for (int j = 0; j < BN / 4; ++j) {
          // slot pairs (2j, 2j+1) are adjacent columns; the pairs of this chunk (known at compile time: the
          // per-thread base column stays inside the 8-column block of the slot's offset, asserted below)
          if (Slots::kColOff[2 * j] / kChunkCols != chunk) continue;
          const int row = mm * 64 + base_row + Slots::kRowOff[2 * j];
          const int byte = (base_col + Slots::kColOff[2 * j] - chunk * kChunkCols) * 4;
          const unsigned addr =
              base + row * kChunkBytes + (((byte >> 4) ^ ((row >> kRowShift) & kUnitMask)) << 4) + (byte & 15);
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(acc[mm][2 * j]), "f"(acc[mm][2 * j + 1])
                       : "memory");
        }
      } else {
        const int row = mm * 64 + warp * 16 + wgmma_acc::StmatrixOrigin::kRow[matrix] + lane % 8;
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
          const int group = chunk * kGroups + g;  // 16-column group of the tile
          const int col16 = (g * 16 + wgmma_acc::StmatrixOrigin::kCol[matrix]) / 8;  // 16-byte unit in the row
          const unsigned addr = base + row * kChunkBytes + ((col16 ^ ((row >> kRowShift) & kUnitMask)) << 4);
          const int* slot = Slots::kStmatrixSlot + group * 8;
          stmatrix_x4(addr, pack_pair<OutT>(acc[mm][slot[0]], acc[mm][slot[1]]),
                      pack_pair<OutT>(acc[mm][slot[2]], acc[mm][slot[3]]),
                      pack_pair<OutT>(acc[mm][slot[4]], acc[mm][slot[5]]),
                      pack_pair<OutT>(acc[mm][slot[6]], acc[mm][slot[7]]));
        }
      }
    }
    issue_staged_store(tma_d, buffer, col_first + chunk * kChunkCols, row_first, t, barrier);
  }
}

// D^T's tile through shared memory (TransposedD, 16-bit D): the warpgroup's 64 rows are 128 bytes of each of D's
// rows, so each chunk of kCols of the tile's columns is kCols rows of D, written with stmatrix .trans (the same
// registers as store_staged's, each 8x8 matrix transposed) into the 128B-swizzled buffer (16-byte unit u of buffer
// row r at u ^ (r % 8)), then stored by one TMA box of (64 columns, kCols rows) of D, clipped at D's edges.
template <class Tile, class OutT>
__device__ __forceinline__ void store_staged_transposed(float (&acc)[Tile::kMmaM][Tile::BN / 2],
                                                        unsigned char* buffers, unsigned& stores, const TmaMap* tma_d,
                                                        int row_first, int col_first, int t, int barrier) {
  constexpr int BN = Tile::BN;
  constexpr int kCols = transposed_chunk_cols<BN>();
  static_assert(!IsSame<OutT, float>::value, "D^T leaves through stmatrix .trans: a 16-bit D (f32: direct stores)");
  static_assert(Tile::kMmaM == 1, "a warpgroup's 64 rows are one 128-byte row of D");
  static_assert(kCols * kSwizzleBytes <= Tile::kStoreBufferBytes, "a chunk's rows of D fit the buffer");
  using Slots = wgmma_acc::Slots<BN>;
  static_assert(Slots::kStmatrix, "the accumulator layout has no stmatrix .x4 form");
  const int warp = t / 32;
  const int lane = t % 32;
  const int matrix = lane / 8;
  // this lane's matrix holds the tile's rows warp * 16 + kRow[matrix] + 0..7: one 16-byte unit of a row of D
  const int unit = (warp * 16 + wgmma_acc::StmatrixOrigin::kRow[matrix]) / 8;
#pragma unroll
  for (int chunk = 0; chunk < BN / kCols; ++chunk, ++stores) {
    unsigned char* buffer = acquire_store_buffer<Tile>(buffers, stores, t, barrier);
    const unsigned base = smem_u32(buffer);
#pragma unroll
    for (int g = 0; g < kCols / 16; ++g) {
      // the row of D (the tile's column, within the chunk) whose address this lane gives
      const int row = g * 16 + wgmma_acc::StmatrixOrigin::kCol[matrix] + lane % 8;
      const unsigned addr = base + row * kSwizzleBytes + ((unit ^ (row % 8)) << 4);
      const int* slot = Slots::kStmatrixSlot + (chunk * (kCols / 16) + g) * 8;
      stmatrix_x4_trans(addr, pack_pair<OutT>(acc[0][slot[0]], acc[0][slot[1]]),
                        pack_pair<OutT>(acc[0][slot[2]], acc[0][slot[3]]),
                        pack_pair<OutT>(acc[0][slot[4]], acc[0][slot[5]]),
                        pack_pair<OutT>(acc[0][slot[6]], acc[0][slot[7]]));
    }
    issue_staged_store(tma_d, buffer, row_first, col_first + chunk * kCols, t, barrier);
  }
}

// The copy loader's walk (one-block tiles: units are tiles): the block's tiles in the TMA producer's order, each
// tile's K-blocks in turn, as fill(stage, parity of the stage's empty barrier to wait for, tm, tn, kb).
template <class Tile, int UnitGroup, class Fill>
__device__ __forceinline__ void for_each_stage(int M, int N, int k_blocks, Fill&& fill) {
  const int m_tiles = (M + Tile::BM - 1) / Tile::BM;
  const int n_tiles = (N + Tile::BN - 1) / Tile::BN;
  int it = 0;
  for (int unit = blockIdx.x; unit < m_tiles * n_tiles; unit += gridDim.x) {
    int tm, tn;
    tile_coords<UnitGroup>(unit, m_tiles, n_tiles, tm, tn);
    for (int kb = 0; kb < k_blocks; ++kb, ++it) {
      fill(it % Tile::Stages, ((it / Tile::Stages) & 1) ^ 1, tm, tn, kb);
    }
  }
}

// The producer with the copy loader (one-block tiles), part one: copy threads lt = 0..95 (warps 0, 2, 3) walk the
// block's tiles in the TMA producer's order; per stage each fills its share of the copied operands' boxes (the
// same boxes, at the same shared-memory offsets, as the TMA loads) and arrives on the full barrier once its copies
// have landed.
template <class Tile, class T, bool BKMajor, int UnitGroup>
__device__ __forceinline__ void copy_producer(unsigned smem, unsigned full, unsigned empty, int M, int N, int K,
                                              bool a_mn, const unsigned char* a_raw, const unsigned char* b_raw,
                                              int a_pitch, int b_pitch, unsigned copied_operands) {
  constexpr int BM = Tile::BM;
  constexpr int BN = Tile::BN;
  constexpr int kT = static_cast<int>(sizeof(T));
  static_assert(Tile::kClusterBlocks == 1, "the copy loader fills one block's stages (no cluster)");
  const int lt = threadIdx.x < 32 ? threadIdx.x : threadIdx.x - 32;
  const bool copy_a = (copied_operands & kCopyA) != 0;
  const bool copy_b = (copied_operands & kCopyB) != 0;
  // A row-major: rows of K; column-major (a K x M array): rows of M. B row-major: rows of N; K-major: rows of K.
  const int a_inner = (a_mn ? M : K) * kT, a_outer = a_mn ? K : M;
  const int b_inner = (BKMajor ? K : N) * kT, b_outer = BKMajor ? N : K;
  const int k_blocks = (K + kSwizzleBytes / kT - 1) / (kSwizzleBytes / kT);
  for_each_stage<Tile, UnitGroup>(M, N, k_blocks, [&](int s, unsigned parity, int tm, int tn, int kb) {
    mbar_wait_at(empty + s * 8, parity);
    const unsigned stage = smem + s * Tile::kStageBytes;
    if (copy_a && a_mn) {
#pragma unroll 1
      for (int j = 0; j < BM / 64; ++j) {
        copy_box_swizzled<64>(stage + j * Tile::kBBlockBytes, a_raw, a_pitch, a_inner, a_outer,
                              (tm * BM + j * 64) * kT, kb * kBK, lt);
      }
    } else if (copy_a) {
      copy_box_swizzled<BM>(stage, a_raw, a_pitch, a_inner, a_outer, kb * kSwizzleBytes, tm * BM, lt);
    }
    if (copy_b) {
      if constexpr (BKMajor) {
        copy_box_swizzled<BN>(stage + Tile::kABytes, b_raw, b_pitch, b_inner, b_outer, kb * kSwizzleBytes,
                              tn * BN, lt);
      } else {
#pragma unroll 1
        for (int j = 0; j < Tile::kBSlotN / 64; ++j) {
          copy_box_swizzled<64>(stage + Tile::kABytes + j * Tile::kBBlockBytes, b_raw, b_pitch, b_inner,
                                b_outer, (tn * BN + j * 64) * kT, kb * kBK, lt);
        }
      }
    }
    cp_async_arrive_noinc(full + s * 8);
  });
  asm volatile("cp.async.wait_all;" ::: "memory");   // no copy thread leaves with its copies in flight
}

// Part two, one thread (warp 1, lane 1) when one operand stays on TMA: the same walk, arming each stage's full
// barrier with that operand's bytes and issuing its boxes as the TMA producer does.
template <class Tile, class T, bool BKMajor, int UnitGroup>
__device__ __forceinline__ void copy_producer_tma_part(unsigned char* smem, unsigned long long* full,
                                                       unsigned long long* empty, const TmaMap& tma_a,
                                                       const TmaMap& tma_b, int M, int N, int K, bool a_mn,
                                                       bool tma_a_part) {
  constexpr int BM = Tile::BM;
  constexpr int BN = Tile::BN;
  constexpr int kBlockK = kSwizzleBytes / static_cast<int>(sizeof(T));
  const int k_blocks = (K + kBlockK - 1) / kBlockK;
  for_each_stage<Tile, UnitGroup>(M, N, k_blocks, [&](int s, unsigned parity, int tm, int tn, int kb) {
    mbar_wait(&empty[s], parity);
    unsigned char* stage = smem + s * Tile::kStageBytes;
    if (tma_a_part) {
      mbar_arrive_expect_tx(&full[s], Tile::kABytes);
      if (a_mn) {
#pragma unroll
        for (int j = 0; j < BM / 64; ++j) {
          tma_load_2d(stage + j * Tile::kBBlockBytes, &tma_a, tm * BM + j * 64, kb * kBK, &full[s]);
        }
      } else {
        tma_load_2d(stage, &tma_a, kb * kBlockK, tm * BM, &full[s]);
      }
    } else {
      mbar_arrive_expect_tx(&full[s], Tile::kBBytes);
      if constexpr (BKMajor) {
        tma_load_2d(stage + Tile::kABytes, &tma_b, kb * kBlockK, tn * BN, &full[s]);
      } else {
#pragma unroll
        for (int j = 0; j < Tile::kBSlotN / 64; ++j) {
          tma_load_2d(stage + Tile::kABytes + j * Tile::kBBlockBytes, &tma_b, tn * BN + j * 64, kb * kBK,
                      &full[s]);
        }
      }
    }
  });
}

template <class Tile, class Epi, class T, class OutT, bool BSwapOffsets, bool BKMajor, bool TransposedD>
__device__ __forceinline__ void gemm_wgmma_body(const TmaMap& tma_a, const TmaMap& tma_b, const TmaMap& tma_d,
                                                const TmaMap& tma_bias, int M, int N, int K,
                                                float alpha, float beta, float leaky_slope,
                                                const float* __restrict__ C, const float* __restrict__ bias,
                                                OutT* __restrict__ D, float* __restrict__ Z,
                                                const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                                                int a_mn_major, int ldc, int ldbias, int ldd, int ldz,
                                                const unsigned char* __restrict__ a_raw,
                                                const unsigned char* __restrict__ b_raw, int a_pitch, int b_pitch,
                                                unsigned copied_operands, int sa_row_stride, int sa_k_stride) {
  constexpr int ClusterM = Tile::ClusterM;
  constexpr int ClusterN = Tile::ClusterN;
  constexpr int ClusterK = Tile::ClusterK;
  constexpr int BM = Tile::BM;
  constexpr int BN = Tile::BN;
  constexpr int Stages = Tile::Stages;
  constexpr int kMmaM = Tile::kMmaM;
  // One K-block is 128 bytes of K: 64 elements of f16 / bf16, 128 of e4m3; 4 instructions of 32 bytes each.
  constexpr int kBlockK = kSwizzleBytes / static_cast<int>(sizeof(T));
  constexpr int kSteps = kSwizzleBytes / 32;
  static_assert(sizeof(T) == 2 || BKMajor, "8-bit operands are K-major only: B comes column-major");
  static_assert(BKMajor ? Tile::kBSlotN == BN : Tile::kBSlotN % 64 == 0,
                "a K-major B is one box of the tile's columns; an MN-major one whole 64-column boxes (BSlotN)");
  static_assert(wgmma_acc::kPairsAdjacent, "the epilogue stores slot pairs (2j, 2j+1) as one float2");
  static_assert(!Epi::kBlockScale || (sizeof(T) == 1 && (BN == 64 || BN == 128) &&
                                      2 * kMmaM * BN / 2 <= (Tile::kConsumers == 2 ? 128 : 96) &&
                                      rows_are_base_or_base_plus_8<BN>()),
                "block scales: 8-bit inputs, one 128-column block of B per tile, and room for a second "
                "accumulator (a K-block's product) beside the first");
  static_assert(!Epi::kBlockScale || Tile::StageK == 1, "block scales promote each K-block: one K-block a stage");
  extern __shared__ unsigned char smem_raw[];
  // 128B-swizzle atoms need 1024-byte aligned tiles; dynamic shared memory only promises 16.
  const unsigned raw = smem_u32(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - (raw & 1023)) & 1023);
  using BiasT = typename Epi::BiasType;   // float, or a 16-bit per-column bias as it is (half of each slot's bytes)
  BiasT* bias_smem = reinterpret_cast<BiasT*>(smem + Stages * Tile::kStageBytes);
  float* reduce_smem = reinterpret_cast<float*>(smem + Stages * Tile::kStageBytes + Tile::kBiasBytes);
  unsigned char* store_smem = smem + Stages * Tile::kStageBytes + Tile::kBiasBytes + Tile::kReduceBytes;
  unsigned long long* full = reinterpret_cast<unsigned long long*>(
      store_smem + Tile::kConsumers * Tile::kStoreBuffers * Tile::kStoreBufferBytes);
  unsigned long long* empty = full + Stages;
  unsigned long long* turn = empty + Stages;  // ping-pong: turn[c] = "consumer c may start its next mainloop" (2)
  unsigned long long* bias_full = turn + 2;   // bias slot s holds its tile's bias (TMA bytes)
  unsigned long long* bias_empty = bias_full + Tile::kConsumers;  // bias slot s's readers are done with it
  unsigned long long* reduce_full = bias_empty + Tile::kConsumers;  // split-K, block 0: block 1's accumulators landed
  unsigned long long* reduce_free = reduce_full + Tile::kConsumers;  // split-K, block 1: block 0 has read them
  // A per-row / per-column bias is loaded into shared memory by TMA, issued by warp 1 of the producer warpgroup as
  // soon as the slot is free (a tile ahead of the epilogue that reads it): its latency hides behind the mainloop,
  // and the consumers neither hold it in registers nor synchronise with each other to stage it.
  constexpr bool kStagedBias = Epi::kBias == BiasMode::PerN || Epi::kBias == BiasMode::PerM;

  const int warpgroup = threadIdx.x / 128;
  // The schedule walks units of ClusterM x ClusterN adjacent tiles, one unit per cluster at a time; block `rank`
  // of the cluster takes row tile ClusterM * unit_row + m_rank and column tile ClusterN * unit_col + n_rank (past
  // the last row or column tile when M or N runs out: it still loads and multicasts its share of B or A for the
  // others, and stores nothing). Split-K (ClusterK = 2): both blocks take the same unit, block `rank` its K-blocks
  // [rank * k_share, ...). Each role derives the walk itself
  // (FRAGLAB_WGMMA_WALK): values computed before the roles split would live on in the producer's 40 registers.
#define FRAGLAB_WGMMA_WALK                                                           \
  const int m_tiles = (M + BM - 1) / BM;                                             \
  const int n_tiles = (N + BN - 1) / BN;                                             \
  const int k_blocks = (K + kBlockK - 1) / kBlockK;                                  \
  const int m_units = (m_tiles + ClusterM - 1) / ClusterM;                           \
  const int n_units = (n_tiles + ClusterN - 1) / ClusterN;                           \
  const int units = m_units * n_units;                                               \
  const int rank = Tile::kClusterBlocks > 1 ? static_cast<int>(cluster_rank()) : 0;  \
  const int m_rank = ClusterM > 1 ? rank % ClusterM : 0;                             \
  const int n_rank = ClusterN > 1 ? rank / ClusterM : 0;                             \
  const int k_rank = ClusterK > 1 ? rank : 0;                                        \
  const int k_share = (k_blocks + ClusterK - 1) / ClusterK;                          \
  const int kb_first = k_rank * k_share;                                             \
  const int kb_count = max(0, min(k_blocks - kb_first, k_share));                    \
  const int cluster = blockIdx.x / Tile::kClusterBlocks;                             \
  const int clusters = gridDim.x / Tile::kClusterBlocks;
  constexpr int kUnitGroup = Tile::GroupM / ClusterM > 0 ? Tile::GroupM / ClusterM : 1;

  if (threadIdx.x == 0) {
    FRAGLAB_TRACE(0);   // trace points: 0 entry, 1 past the start sync, 2 first loads issued, 3 first stage full,
                        // 4 first tile's mainloop done, 5 its sums complete (split-K), 6 its D issued, 7 done
  }
  // The barriers are set up by a consumer thread, so that in clusters the producer thread works out its walk and
  // first unit meanwhile (about 0.4 us of arithmetic, which followed the start's barrier and held back the first load).
  if (threadIdx.x == 128) {
    for (int s = 0; s < Stages; ++s) {
      // the producer's arrive.expect_tx (+ the TMA bytes); with the copy loader each copy thread's cp.async
      // arrival, and the TMA part's arrive.expect_tx where one operand stays on TMA
      mbar_init(&full[s], copied_operands == 0 ? 1 : kCopyThreads + (copied_operands != (kCopyA | kCopyB) ? 1 : 0));
      mbar_init(&empty[s], Tile::kEmptyArrivals);
    }
    mbar_init(&turn[0], 4);  // one arrive per warp of the other consumer
    mbar_init(&turn[1], 4);
    for (int s = 0; s < Tile::kConsumers; ++s) {
      mbar_init(&bias_full[s], 1);                    // the bias thread's arrive.expect_tx (+ the TMA bytes)
      mbar_init(&bias_empty[s], Tile::kBiasReaders);  // every consumer warp that read the slot
      if constexpr (ClusterK > 1) {
        mbar_init(&reduce_full[s], 1);   // block 0's consumer s expects the bytes; block 1's copy brings them
        mbar_init(&reduce_free[s], 4);   // every warp of block 0's consumer s, after its reads
      }
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    prefetch_tma_map(&tma_a);
    prefetch_tma_map(&tma_b);
    if constexpr (kStagedBias) prefetch_tma_map(&tma_bias);
    if constexpr (Tile::StagedStore) prefetch_tma_map(&tma_d);
  }
  // Clusters: the start's barrier, split. Every thread arrives here and waits (start_wait) where its role first
  // needs the barriers or another block, after the arithmetic it can do before (1000^3: 1-2 % of the launch).
  // Every block's barriers exist before any block multicasts or arrives into them: their initialisation's
  // fence.mbarrier_init.release.cluster released them, so the arrive is relaxed (2-5 % of a 1000^3 or decode-M
  // launch against a .release arrive). One block: a block barrier (compute-sanitizer's synccheck rejects a cluster
  // barrier's waits at several places there, and no gain was measured).
  if constexpr (Tile::kClusterBlocks > 1) {
    cluster_arrive_relaxed();
  } else {
    __syncthreads();
  }
  // No global memory before the wait for the previous grid. (Asking L2 here for the weight's first ring, as the
  // skinny GEMM does, cost 3-8 % alone at 1000^3 and M 64 / 128, N = K = 4096: the producer's loads ask for the same
  // boxes right after.) The next grid's blocks find no room (shared memory) until this kernel's blocks leave.
  auto start_wait = [] {
    if constexpr (Tile::kClusterBlocks > 1) cluster_wait_acquire();
    wait_for_previous_grid();
  };

  if (warpgroup == 0) {
    // Producer: one thread walks the block's tiles in order and keeps the ring full (with the copy loader: the
    // copy threads, and one thread for an operand left on TMA); one more thread loads the bias. The roles are one
    // if-else chain, so nothing the TMA thread and the bias thread hold lives on in the copy threads.
    setmaxnreg_dec<kProducerRegs>();
    FRAGLAB_WGMMA_WALK
    if (kStagedBias && threadIdx.x == 32 && k_rank == 0) {   // (split-K: block 0 runs the epilogue)
      // Bias thread (warp 1): the same tiles in the same order; slot j % kBiasSlots takes tile j's rows (PerM) or
      // columns (PerN), zeros past the edge, once the slot's readers are done with tile j - kBiasSlots.
      constexpr int kExtent = Epi::kBias == BiasMode::PerN ? BN : BM;
      start_wait();
      int j = 0;
      for (int unit = cluster; unit < units; unit += clusters, ++j) {
        int um, un;
        tile_coords<kUnitGroup>(unit, m_units, n_units, um, un);
        const int slot = j % Tile::kBiasSlots;
        mbar_wait(&bias_empty[slot], ((j / Tile::kBiasSlots) & 1) ^ 1);
        mbar_arrive_expect_tx(&bias_full[slot], kExtent * static_cast<int>(sizeof(BiasT)));
        tma_load_2d(bias_smem + slot * Tile::kBiasFloats, &tma_bias,
                    Epi::kBias == BiasMode::PerN ? (un * ClusterN + n_rank) * BN : (um * ClusterM + m_rank) * BM, 0,
                    &bias_full[slot]);
      }
    } else if (copied_operands != 0) {
      start_wait();
      // (the spec refuses the copy loader on clusters and on stages of several K-blocks: WgmmaKernelSpec)
      if constexpr (Tile::kClusterBlocks == 1 && Tile::StageK == 1) {
        const bool a_mn = sizeof(T) == 2 && a_mn_major;
        if (threadIdx.x / 32 != 1) {
          copy_producer<Tile, T, BKMajor, kUnitGroup>(smem_u32(smem), smem_u32(full), smem_u32(empty), M, N, K, a_mn,
                                                      a_raw, b_raw, a_pitch, b_pitch, copied_operands);
        } else if (threadIdx.x == 33 && copied_operands != (kCopyA | kCopyB)) {
          copy_producer_tma_part<Tile, T, BKMajor, kUnitGroup>(smem, full, empty, tma_a, tma_b, M, N, K, a_mn,
                                                               (copied_operands & kCopyA) == 0);
        }
      }
    } else if (threadIdx.x == 0) {
      int it = 0;
      // the blocks sharing this block's rows of A (its row of the cluster) and its columns of B (its column)
      const unsigned short a_mask = sharing_mask<ClusterM, ClusterN>(m_rank, n_rank, true);
      const unsigned short b_mask = sharing_mask<ClusterM, ClusterN>(m_rank, n_rank, false);
      // The unit's coordinates; in clusters the first unit's are worked out before the start's wait.
      constexpr bool kFirstEarly = Tile::kClusterBlocks > 1;
      int um = 0, un = 0;
      if (kFirstEarly && cluster < units) tile_coords<kUnitGroup>(cluster, m_units, n_units, um, un);
      start_wait();
      FRAGLAB_TRACE(1);
      for (int unit = cluster; unit < units; unit += clusters) {
        if (!kFirstEarly || unit != cluster) tile_coords<kUnitGroup>(unit, m_units, n_units, um, un);
        const int tm = um * ClusterM + m_rank;
        const int tn = un * ClusterN + n_rank;
        // A block past M (N) skips its share of A (B), and so does every block that share goes to. Not in clusters
        // of 2x2: there a block's loads are what keeps the diagonal block from releasing a shared stage twice
        // before this one released it once (its partners' stages wait for it), so every share is loaded, past the
        // edge as zeros.
        constexpr bool kLoadPastEdges = ClusterM > 1 && ClusterN > 1;
        const bool has_rows = kLoadPastEdges || tm < m_tiles;
        const bool has_cols = kLoadPastEdges || tn < n_tiles;
        for (int kb0 = kb_first; kb0 < kb_first + kb_count; kb0 += Tile::StageK, ++it) {
          const int s = it % Stages;
          mbar_wait(&empty[s], ((it / Stages) & 1) ^ 1);
          // The stage fills with all of this block's A and B (shares of them multicast by the other blocks), StageK
          // K-blocks of them; those past the block's share come from past K (zeros).
          mbar_arrive_expect_tx(&full[s], Tile::StageK * ((has_rows ? Tile::kABytes : 0) +
                                                          (has_cols ? Tile::kBBytes : 0)));
#pragma unroll
          for (int sub = 0; sub < Tile::StageK; ++sub) {
            const int kb = kb0 + sub < kb_first + kb_count ? kb0 + sub : k_blocks;
            unsigned char* stage = smem + s * Tile::kStageBytes + sub * Tile::kKBlockBytes;
            if (has_rows && sizeof(T) == 2 && a_mn_major) {
              // A given as K x M (row-major; an M x K column-major array): BM / 64 boxes of (K64 rows, M64), laid
              // out like an MN-major B's blocks
#pragma unroll
              for (int j = 0; j < BM / 64; ++j) {
                if constexpr (ClusterN == 1) {
                  tma_load_2d(stage + j * Tile::kBBlockBytes, &tma_a, tm * BM + j * 64, kb * kBK, &full[s]);
                } else if (j % ClusterN == n_rank) {
                  tma_load_2d_multicast(stage + j * Tile::kBBlockBytes, &tma_a, tm * BM + j * 64, kb * kBK, &full[s],
                                        a_mask);
                }
              }
            } else if (has_rows) {
              if constexpr (ClusterN == 1) {
                tma_load_2d(stage, &tma_a, kb * kBlockK, tm * BM, &full[s]);
              } else {   // the launcher's map has boxes of BM / ClusterN rows
                constexpr int kRows = BM / ClusterN;
                tma_load_2d_multicast(stage + n_rank * kRows * kSwizzleBytes, &tma_a, kb * kBlockK,
                                      tm * BM + n_rank * kRows, &full[s], a_mask);
              }
            }
            if constexpr (BKMajor && ClusterM == 1) {
              // B given as N x K (row-major): one (BN rows, K64) box, laid out like A
              if (has_cols) tma_load_2d(stage + Tile::kABytes, &tma_b, kb * kBlockK, tn * BN, &full[s]);
            } else if constexpr (BKMajor) {
              if (has_cols && m_rank == 0) {
                tma_load_2d_multicast(stage + Tile::kABytes, &tma_b, kb * kBlockK, tn * BN, &full[s], b_mask);
              }
            }
#pragma unroll
            for (int j = 0; j < (BKMajor ? 0 : Tile::kBSlotN / 64); ++j) {
              unsigned char* dst = stage + Tile::kABytes + j * Tile::kBBlockBytes;
              if (!has_cols) break;
              if constexpr (ClusterM == 1) {
                tma_load_2d(dst, &tma_b, tn * BN + j * 64, kb * kBK, &full[s]);
              } else if (j % ClusterM == m_rank) {
                tma_load_2d_multicast(dst, &tma_b, tn * BN + j * 64, kb * kBK, &full[s], b_mask);
              }
            }
          }
          if (it == 0) FRAGLAB_TRACE(2);
        }
      }
      if constexpr (Tile::kClusterBlocks > 1) {
        // The ring's last releases, this block's and (multicast) the other blocks', have all landed on this block's
        // barriers before it arrives at the end: what lets the end's barrier go without a release (below).
        for (int j = it; j < it + Stages; ++j) mbar_wait(&empty[j % Stages], ((j / Stages) & 1) ^ 1);
      }
    } else {
      start_wait();
    }
  } else {
    start_wait();
    setmaxnreg_inc<consumer_regs<Tile::kConsumers>()>();
    FRAGLAB_WGMMA_WALK
    const int consumer = warpgroup - 1;
    const int t = threadIdx.x % 128;
    const bool warp_leader = (threadIdx.x % 32) == 0;
    // (T128, V(BN/2)) -> (M64, BN): row = base_row(t) + kRowOff[i], col = base_col(t) + kColOff[i] (generated)
    int base_row = 0, base_col = 0;
#pragma unroll
    for (int b = 0; b < 7; ++b) {
      base_row += ((t >> b) & 1) * wgmma_acc::kRowBit[b];
      base_col += ((t >> b) & 1) * wgmma_acc::kColBit[b];
    }
    using BOff = BDescOffsets<Tile, BSwapOffsets>;
    // D: stored here as OutT
    // row pitches (N when dense): C, a full bias and Z read and written per element, D by store_direct or TMA
    const EpilogueParams p{alpha, beta, leaky_slope, C, ldc, bias, ldbias, nullptr, ldd, Z, ldz, scale_a, scale_b};
    // Cooperative: this warpgroup's rows of every tile. Ping-pong: every other tile, all its rows.
    const int a_row_offset = Tile::PingPong ? 0 : consumer * Tile::kWarpgroupRows;
    const int tile_step = Tile::PingPong ? Tile::kConsumers : 1;
    float acc[kMmaM][BN / 2];
    int hand_overs = 0;   // split-K: this consumer's hand-overs so far (block 1's are waited for at the end)
    int local = Tile::PingPong ? consumer : 0;  // index of the unit among the block's units
    int turns = 0;                               // ping-pong: mainloops this warpgroup has started
    unsigned stores = 0;                         // staged store: TMA stores this warpgroup has issued
    // A stage is free again once every consuming warp of every block it was written into has read it.
    const unsigned sharing = sharing_mask<ClusterM, ClusterN>(m_rank, n_rank, true) |
                             sharing_mask<ClusterM, ClusterN>(m_rank, n_rank, false);
    auto release = [&](int stage) {
      if (!warp_leader) return;
      if constexpr (Tile::kSharingBlocks == 1) {
        mbar_arrive(&empty[stage]);
      } else {
#pragma unroll
        for (int c = 0; c < ClusterM * ClusterN; ++c) {
          if ((sharing >> c) & 1) mbar_arrive_in(&empty[stage], c);
        }
      }
    };
    for (int unit = cluster + local * clusters; unit < units; unit += tile_step * clusters, local += tile_step) {
      int um, un;
      tile_coords<kUnitGroup>(unit, m_units, n_units, um, un);
      const int tm = um * ClusterM + m_rank;
      const int tn = un * ClusterN + n_rank;
      if constexpr (Tile::PingPong) {
        // Mainloops alternate between the consumers: this one starts only after the other one has passed the
        // waits of its previous tile. That also keeps every ring wait at most one phase ahead of the barrier
        // (the parity of a wait says nothing about phases further on).
        // turn[c]'s phase p completes with the other consumer's p-th signal (its tile 2p or 2p+1).
        if (local > 0) mbar_wait(&turn[consumer], (turns + consumer + 1) & 1);
        ++turns;
      }
      // stages of this tile (StageK K-blocks each), and the ring position of its first (the producer's order)
      const int tile_stages = (kb_count + Tile::StageK - 1) / Tile::StageK;
      int it = local * tile_stages;
      if constexpr (ClusterK > 1 || Epi::kBlockScale) {
        // split-K: a block left no K-blocks (K of one block) adds zeros; block scales add each K-block's scaled
        // product (zeroed here, before any wgmma, so that no branch touches the accumulators while wgmmas may be
        // in flight: ptxas would serialise them)
#pragma unroll
        for (int mm = 0; mm < kMmaM; ++mm) {
#pragma unroll
          for (int i = 0; i < BN / 2; ++i) acc[mm][i] = 0.f;
        }
      }
      // A's order is a launch parameter (one instantiation serves both): one uniform branch per tile between two
      // copies of the K loop, which differ only in A's descriptor and the imm-trans-a bit; the row-major copy is
      // the loop as it was (same D bit for bit, 756 TFLOP/s at 4096^3 either way).
      auto k_loop = [&](auto a_order) {
        if constexpr (Epi::kBlockScale) {
          // Block scales (DeepGEMM's recipe): K-block kb (128 deep) multiplies into `part`, and once that is
          // complete acc += part * scale_a[m][kb] * scale_b[n / 128][kb] on the CUDA cores (the scales never meet
          // the tensor cores). The factors are loaded before the K-block's wait, so their latency hides behind it.
          using Slots = wgmma_acc::Slots<BN>;
          const int row_base = tm * BM + a_row_offset + base_row;
          const bool has_cols = tn * BN < N;    // a block past N (clusters along N) reads no scale of B
          const long long b_scales = static_cast<long long>(tn * BN / 128) * k_blocks;
          const int it0 = it;                   // ring position of this tile's first K-block
          // this thread's two rows of each m64 block (base and base + 8) and the tile's column block of B
          auto load_factors = [&](int kb, float (&fa)[kMmaM][2], float& fb) {
            const int kg = kb_first + kb;
#pragma unroll
            for (int mm = 0; mm < kMmaM; ++mm) {
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int m = row_base + mm * 64 + 8 * h;
                fa[mm][h] = m < M ? __ldg(scale_a + static_cast<long long>(m) * sa_row_stride +
                                          static_cast<long long>(kg) * sa_k_stride)
                                  : 0.f;
              }
            }
            fb = has_cols ? __ldg(scale_b + b_scales + kg) : 0.f;
          };
          // waits for K-block kb's stage and starts its wgmmas into p (one commit group)
          auto issue = [&](float (&p)[kMmaM][BN / 2], int kb) {
            const int s = (it0 + kb) % Stages;
            mbar_wait(&full[s], ((it0 + kb) / Stages) & 1);
            const unsigned a_base = smem_u32(smem + s * Tile::kStageBytes) + a_row_offset * kSwizzleBytes;
            const unsigned b_base = smem_u32(smem + s * Tile::kStageBytes + Tile::kABytes);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < kSteps; ++kk) {
              const unsigned long long desc_b = smem_desc(b_base + kk * 32, 16, 1024);   // K-major B
#pragma unroll
              for (int mm = 0; mm < kMmaM; ++mm) {
                const unsigned long long desc_a = smem_desc(a_base + mm * 64 * kSwizzleBytes + kk * 32, 16, 1024);
                wgmma_tile_step<BN, T, BKMajor, false>(p[mm], desc_a, desc_b, kk > 0 ? 1 : 0);
              }
            }
            wgmma_commit();
          };
          auto promote = [&](const float (&p)[kMmaM][BN / 2], const float (&fa)[kMmaM][2], float fb) {
#pragma unroll
            for (int mm = 0; mm < kMmaM; ++mm) {
#pragma unroll
              for (int i = 0; i < BN / 2; ++i) {
                acc[mm][i] = fmaf(p[mm][i], fa[mm][Slots::kRowOff[i] / 8] * fb, acc[mm][i]);
              }
            }
          };
          // (Tried, not kept: consumer 1 issuing each K-block after consumer 0, so one product is promoted while
          // the other's wgmmas run; and the factors loaded a K-block ahead: docs/wgmma-gemm.md.)
          float part[kMmaM][BN / 2], fa[kMmaM][2], fb;
          for (int kb = 0; kb < kb_count; ++kb) {
            load_factors(kb, fa, fb);   // before the stage's wait: the loads' latency hides behind it
            issue(part, kb);
            wgmma_wait<0>();   // part is complete (and the stage read): free the stage, promote
            release((it0 + kb) % Stages);
            promote(part, fa, fb);
          }
          it += kb_count;
        } else {
          constexpr bool kAMN = decltype(a_order)::value;
          for (int st = 0; st < tile_stages; ++st, ++it) {
            const int s = it % Stages;
            mbar_wait(&full[s], (it / Stages) & 1);
            if (it == 0 && threadIdx.x == 128) FRAGLAB_TRACE(3);
            wgmma_fence();
#pragma unroll
            for (int sub = 0; sub < Tile::StageK; ++sub) {
              const unsigned stage = smem_u32(smem + s * Tile::kStageBytes + sub * Tile::kKBlockBytes);
              const unsigned a_base = stage + a_row_offset * kSwizzleBytes;
              const unsigned b_base = stage + Tile::kABytes;
#pragma unroll
              for (int kk = 0; kk < kSteps; ++kk) {
                // A and a K-major B: a step is 32 bytes along the swizzled 128-byte row, 8-row atoms 1024 bytes apart;
                // an MN-major A or B (16-bit): k16 = 16 rows of 128 bytes, 64-element blocks kBBlockBytes apart.
                const unsigned long long desc_b =
                    BKMajor ? smem_desc(b_base + kk * 32, 16, 1024)
                            : smem_desc(b_base + kk * 16 * kSwizzleBytes, BOff::kLbo, BOff::kSbo);
#pragma unroll
                for (int mm = 0; mm < kMmaM; ++mm) {
                  // m64 rows of A: one 8 KB block either way (64 rows of 128 bytes, or 64 K-rows of 64 elements)
                  const unsigned a_rows = a_base + mm * 64 * kSwizzleBytes;
                  const unsigned long long desc_a =
                      kAMN ? smem_desc(a_rows + kk * 16 * kSwizzleBytes, BOff::kLbo, BOff::kSbo)
                           : smem_desc(a_rows + kk * 32, 16, 1024);
                  wgmma_tile_step<BN, T, BKMajor, kAMN>(acc[mm], desc_a, desc_b, (st > 0 || sub > 0 || kk > 0) ? 1 : 0);
                }
              }
            }
            wgmma_commit();
            wgmma_wait<1>();  // the previous stage's group is done: its stage can be refilled
            if (st > 0) release((it - 1) % Stages);
          }
        }
      };
      if (sizeof(T) == 2 && a_mn_major) {
        k_loop(BoolConstant<sizeof(T) == 2>{});   // never instantiated true for 8-bit T (K-major only)
      } else {
        k_loop(BoolConstant<false>{});
      }
      if constexpr (Tile::PingPong) {
        if (warp_leader) mbar_arrive(&turn[1 - consumer]);
      }
      wgmma_wait<0>();
      // The next grid may be scheduled once every block is past its last mainloop (the first thread of a block to
      // say so speaks for it). Said at the start (the grid's early blocks then sit on SMs this grid left idle),
      // launches back to back ran up to 12 % slower at N 10240-11008 (80-86 blocks; docs/wgmma-gemm.md).
      if (unit + tile_step * clusters >= units) let_next_grid_start();
      if (local == 0 && threadIdx.x == 128) FRAGLAB_TRACE(4);
      if (!Epi::kBlockScale && tile_stages > 0) release((it - 1) % Stages);   // (block scales released each stage)
      if constexpr (ClusterK > 1) {
        // Block 1 hands its partial sums to block 0 (consumer c to consumer c: both walk the same units) and
        // moves on; block 0 adds them and goes on to the epilogue. `reduce_round`: this consumer's tiles so far.
        const int reduce_round = local / tile_step;
        hand_overs = reduce_round + 1;
        // this consumer's reduce buffer: thread t's float4 q at sums[q * 128 + t]
        float4* sums = reinterpret_cast<float4*>(reduce_smem + consumer * Tile::kReduceFloats);
        if (k_rank != 0) {
          // Block 0 has read the previous round, so the copy of it (which completed before) no longer reads this
          // block's buffer: write the sums here, then one bulk copy takes them to block 0's buffer.
          mbar_wait(&reduce_free[consumer], (reduce_round & 1) ^ 1);
#pragma unroll
          for (int mm = 0; mm < kMmaM; ++mm) {
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) {
              const float* v = &acc[mm][4 * q];
              sums[(mm * BN / 8 + q) * 128 + t] = make_float4(v[0], v[1], v[2], v[3]);
            }
          }
          fence_proxy_async_smem();   // the writes above are seen by the copy (the async proxy)
          warpgroup_sync(1 + consumer);
          if (t == 0) {
            const unsigned buffer = smem_u32(sums);
            bulk_copy_to_cta(map_to_cta(buffer, 0), buffer, Tile::kReduceFloats * 4,
                             map_to_cta(smem_u32(&reduce_full[consumer]), 0));
          }
          if (local == 0 && threadIdx.x == 128) FRAGLAB_TRACE(5);
          continue;
        }
        // (block 1's bytes may land before this expectation: the count goes below zero and the phase waits for it)
        if (t == 0) mbar_arrive_expect_tx(&reduce_full[consumer], Tile::kReduceFloats * 4);
        mbar_wait(&reduce_full[consumer], reduce_round & 1);
#pragma unroll
        for (int mm = 0; mm < kMmaM; ++mm) {
#pragma unroll
          for (int q = 0; q < BN / 8; ++q) {
            const float4 v = sums[(mm * BN / 8 + q) * 128 + t];
            acc[mm][4 * q] += v.x;
            acc[mm][4 * q + 1] += v.y;
            acc[mm][4 * q + 2] += v.z;
            acc[mm][4 * q + 3] += v.w;
          }
        }
        // the adds above have consumed every value loaded (so the loads are done) before the warp says so
        __syncwarp();
        if (warp_leader) mbar_arrive_in(&reduce_free[consumer], 1);
        if (local == 0 && threadIdx.x == 128) FRAGLAB_TRACE(5);
      }
      // This tile's bias slot (ping-pong: consumer c's tiles are the block's tiles c, c + 2, ..., all in slot c).
      const int bias_slot = local % Tile::kBiasSlots;
      if constexpr (kStagedBias) mbar_wait(&bias_full[bias_slot], (local / Tile::kBiasSlots) & 1);
      epilogue_in_registers<Tile, Epi, TransposedD>(acc, p, M, N, tm * BM + a_row_offset + base_row, tn * BN + base_col,
                                       bias_smem + bias_slot * Tile::kBiasFloats, tm * BM, tn * BN);
      if constexpr (kStagedBias) {
        __syncwarp();  // every lane has read the slot before the warp releases it
        if (warp_leader) mbar_arrive(&bias_empty[bias_slot]);
      }
      if constexpr (Tile::StagedStore && TransposedD) {
        store_staged_transposed<Tile, OutT>(acc, store_smem + consumer * Tile::kStoreBuffers *
                                                     Tile::kStoreBufferBytes,
                                            stores, &tma_d, tm * BM + a_row_offset, tn * BN, t, 1 + consumer);
      } else if constexpr (Tile::StagedStore) {
        store_staged<Tile, OutT>(acc, store_smem + consumer * Tile::kStoreBuffers * Tile::kStoreBufferBytes, stores,
                                 &tma_d, tm * BM + a_row_offset, tn * BN, base_row, base_col, t, 1 + consumer);
      } else {
        store_direct<Tile, OutT, TransposedD>(acc, D, M, N, ldd, tm * BM + a_row_offset + base_row,
                                              tn * BN + base_col);
      }
      if (local == 0 && threadIdx.x == 128) FRAGLAB_TRACE(6);
    }
    if constexpr (Tile::StagedStore) {
      if (t == 0) bulk_wait_all();  // the last stores are complete before the block (and its smem) is gone
    }
    if constexpr (ClusterK > 1) {
      // split-K, block 1: block 0 has read the last sums (so the copy of them is done) and its arrival on this
      // block's barrier has landed before this block arrives at the end
      if (k_rank != 0 && hand_overs > 0) mbar_wait(&reduce_free[consumer], (hand_overs - 1) & 1);
    }
  }
#undef FRAGLAB_WGMMA_WALK
  // No block leaves while another may still read its shared memory. Every arrival into another block's barriers
  // (a multicast stage's release, split-K's hand-over) has been waited for by that block's own tail waits above,
  // so nothing is left to publish.
  if constexpr (Tile::kClusterBlocks > 1) cluster_sync_relaxed();
  if (threadIdx.x == 128) FRAGLAB_TRACE(7);
}

template <class Tile, class Epi, class T, class OutT, bool BSwapOffsets = false, bool BKMajor = false,
          bool TransposedD = false>
__global__ void __launch_bounds__(Tile::kThreads, 1)
    gemm_wgmma_kernel(const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b,
                      const __grid_constant__ TmaMap tma_d, const __grid_constant__ TmaMap tma_bias, int M, int N,
                      int K, float alpha, float beta, float leaky_slope, const float* __restrict__ C,
                      const float* __restrict__ bias, OutT* __restrict__ D, float* __restrict__ Z,
                      const float* __restrict__ scale_a, const float* __restrict__ scale_b, int a_mn_major,
                      int ldc, int ldbias, int ldd, int ldz, const unsigned char* __restrict__ a_raw,
                      const unsigned char* __restrict__ b_raw, int a_pitch, int b_pitch,
                      unsigned copied_operands, int sa_row_stride, int sa_k_stride) {
  static_assert(Tile::kClusterBlocks == 1, "clustered tiles launch gemm_wgmma_cluster_kernel");
  gemm_wgmma_body<Tile, Epi, T, OutT, BSwapOffsets, BKMajor, TransposedD>(tma_a, tma_b, tma_d, tma_bias, M, N, K, alpha, beta,
                                                             leaky_slope, C, bias, D, Z, scale_a, scale_b,
                                                             a_mn_major, ldc, ldbias, ldd, ldz, a_raw, b_raw,
                                                             a_pitch, b_pitch, copied_operands, sa_row_stride,
                                                             sa_k_stride);
}

template <class Tile, class Epi, class T, class OutT, bool BSwapOffsets = false, bool BKMajor = false,
          bool TransposedD = false>
__global__ void __launch_bounds__(Tile::kThreads, 1) __cluster_dims__(Tile::kClusterBlocks, 1, 1)
    gemm_wgmma_cluster_kernel(const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b,
                              const __grid_constant__ TmaMap tma_d, const __grid_constant__ TmaMap tma_bias, int M,
                              int N, int K, float alpha, float beta, float leaky_slope, const float* __restrict__ C,
                              const float* __restrict__ bias, OutT* __restrict__ D, float* __restrict__ Z,
                              const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                              int a_mn_major, int ldc, int ldbias, int ldd, int ldz,
                              const unsigned char* __restrict__ a_raw, const unsigned char* __restrict__ b_raw,
                              int a_pitch, int b_pitch, unsigned copied_operands, int sa_row_stride,
                              int sa_k_stride) {
  static_assert(Tile::kClusterBlocks > 1, "one-block tiles launch gemm_wgmma_kernel");
  gemm_wgmma_body<Tile, Epi, T, OutT, BSwapOffsets, BKMajor, TransposedD>(tma_a, tma_b, tma_d, tma_bias, M, N, K, alpha, beta,
                                                             leaky_slope, C, bias, D, Z, scale_a, scale_b,
                                                             a_mn_major, ldc, ldbias, ldd, ldz, a_raw, b_raw,
                                                             a_pitch, b_pitch, copied_operands, sa_row_stride,
                                                             sa_k_stride);
}

}  // namespace wgmma_gemm
}  // namespace fraglab
