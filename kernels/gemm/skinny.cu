// The skinny GEMM (M <= 128): D = act(alpha * A @ B (+ beta * C) (+ bias)), split along K inside clusters.
//
// A decode GEMM reads the whole weight B once and does almost no arithmetic on it, so the kernel is a weight
// stream: every block takes a 64-column tile of B and a share of K, brings 64 x 64 blocks of B (and the few rows
// of A) into a 4-deep ring, B by TMA (one 128B-swizzled box per stage on an mbarrier) or by every thread's 16-byte
// cp.async copies (a launch argument), A by cp.async (B marked evict-first in L2, A evict-last), and feeds
// mma.sync m16n8k16 (A padded to 16-row tiles: free while the weight's bytes bound the time).
// The K shares of one tile are blocks of one thread-block cluster (FRAGLAB_SKINNY_CLUSTER blocks, 8 unless the
// launcher builds another size: size / splits tiles x splits shares). Each block leaves its f32 partial tile in its own shared memory; after a cluster barrier, block s of
// a tile sums the partials of all `splits` blocks through distributed shared memory in rank order (the same
// order every run: deterministic), applies fraglab's Epilogue once and stores D (f32, f16 or bf16) and Z.
// With one share (splits 1) a block reduces nothing and waits for no other block.
// No workspace, no counters, no atomics: nothing to allocate or reset, so a launch is graph-capturable as is.
// Takes K and N multiples of 8, 16-byte aligned rows and pointers (the wgmma family's rule); M 1..128.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "epilogue.cuh"
#include "mbarrier.cuh"

namespace fraglab {
namespace skinny_gemm {

#ifndef FRAGLAB_SKINNY_STAGES
#define FRAGLAB_SKINNY_STAGES 4
#endif
#ifndef FRAGLAB_SKINNY_CLUSTER
#define FRAGLAB_SKINNY_CLUSTER 8
#endif
#ifndef FRAGLAB_SKINNY_WEIGHT_PREFETCH
#define FRAGLAB_SKINNY_WEIGHT_PREFETCH 4   // K-blocks of B each block asks L2 for before the previous kernel ends
#endif
#ifndef FRAGLAB_SKINNY_PREFETCH
#define FRAGLAB_SKINNY_PREFETCH 256   // B's copies ask L2 to fetch 256 bytes (the next stage's half too); 0: 128
#endif

#ifdef FRAGLAB_SKINNY_TIMELINE
// Profiling builds only (benchmarks/skinny_timeline.py): thread 0 of each block writes the global timer (ns) at
// the points below and its SM's id, into a module global the script reads back. Slot 7 holds the SM.
constexpr int kTimelineBlocks = 4096;
extern "C" {
__device__ unsigned long long fraglab_skinny_timeline[kTimelineBlocks * 8];   // C name: the script finds it
}
enum TimelinePoint : int { kEntry = 0, kFirstStage, kHalfStages, kLoopEnd, kPartialsVisible, kEpilogueDone, kExit };
__device__ __forceinline__ void timeline_mark(int point) {
  if (threadIdx.x == 0 && blockIdx.x < kTimelineBlocks) {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    fraglab_skinny_timeline[blockIdx.x * 8 + point] = ns;
    if (point == kEntry) {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      fraglab_skinny_timeline[blockIdx.x * 8 + 7] = sm;
    }
  }
}
#define FRAGLAB_SKINNY_MARK(point) timeline_mark(point)
#else
#define FRAGLAB_SKINNY_MARK(point) \
  do {                             \
  } while (0)
#endif

constexpr int kBK = 64;               // K per ring stage
constexpr int kStages = FRAGLAB_SKINNY_STAGES;
constexpr int kClusterSize = FRAGLAB_SKINNY_CLUSTER;   // blocks per cluster: (size / splits) tiles x splits K shares
constexpr int kRowBytes = kBK * 2;    // a row of A (and of a column-major B) in a stage: 128 bytes

enum class OutKind : int { F32 = 0, F16 = 1, BF16 = 2 };

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a stage of 128-byte rows: the chunk index XOR the
// row's low 3 bits, so the 8 rows one ldmatrix phase reads (same logical chunk) hit 8 different bank groups.
__device__ __forceinline__ unsigned swizzled(int row, int chunk, int row_bytes = kRowBytes) {
  return static_cast<unsigned>(row * row_bytes + ((chunk ^ (row & 7)) << 4));
}

__device__ __forceinline__ unsigned long long l2_policy_evict_first() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

__device__ __forceinline__ unsigned long long l2_policy_evict_last() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// 16 bytes global -> shared; `valid` false writes 16 zero bytes and reads nothing (src-size 0).
__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool valid, unsigned long long policy) {
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;"
               ::"r"(dst), "l"(src), "r"(valid ? 16 : 0), "l"(policy) : "memory");
}

__device__ __forceinline__ void copy16_stream(unsigned dst, const void* src, bool valid, unsigned long long policy) {
#if FRAGLAB_SKINNY_PREFETCH == 256
  asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::256B [%0], [%1], 16, %2, %3;"
               ::"r"(dst), "l"(src), "r"(valid ? 16 : 0), "l"(policy) : "memory");
#else
  copy16(dst, src, valid, policy);
#endif
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// A 2-D box of the tensor map at coordinates (innermost, outer) into shared memory, completing its bytes on `bar`
// (out-of-bounds elements arrive as zeros and count too), with an L2 eviction policy.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TmaMap* map, int c0, int c1, unsigned bar,
                                            unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;"
      ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void copy_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

template <int Pending>
__device__ __forceinline__ void copy_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// ldmatrix .x4: lane l gives the row address of row l % 8 of matrix l / 8; register j of thread (g = l / 4,
// t = l % 4) gets row g, columns 2t and 2t + 1 of matrix j (.trans: row 2t and 2t + 1, column g).
__device__ __forceinline__ void load_matrix_x4(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
}

__device__ __forceinline__ void load_matrix_x4_trans(unsigned (&r)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));
}

// mma.sync m16n8k16, f32 accumulators. Thread (g = lane / 4, t = lane % 4):
//   A regs 0..3 -> (row g, k 2t..2t+1), (row g + 8, k 2t..), (row g, k 2t + 8..), (row g + 8, k 2t + 8..)
//   B regs 0..1 -> (k 2t..2t+1, col g), (k 2t + 8.., col g)
//   C slots 0..3 -> (row g, col 2t), (row g, col 2t + 1), (row g + 8, col 2t), (row g + 8, col 2t + 1)
template <class T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);

template <>
__device__ __forceinline__ void mma_16816<__half>(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                                         unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

__device__ __forceinline__ unsigned cluster_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(id));
  return id;
}

// Every thread of every block of the cluster (not .aligned: warps may arrive diverged); release/acquire:
// shared-memory writes before it are seen after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// Two floats at `local` (an address in this block's shared memory) of the cluster's block `rank`.
__device__ __forceinline__ float2 load_peer_f2(unsigned local, unsigned rank) {
  unsigned remote;
  float2 v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(remote) : "memory");
  return v;
}

__device__ __forceinline__ void store_out(void* d, OutKind kind, long long i, float v) {
  if (kind == OutKind::F32) {
    static_cast<float*>(d)[i] = v;
  } else if (kind == OutKind::F16) {
    static_cast<__half*>(d)[i] = __float2half_rn(v);
  } else {
    static_cast<__nv_bfloat16*>(d)[i] = __float2bfloat16_rn(v);
  }
}

// Shared memory of a launch (the launcher computes the same: fraglab/gemm/skinny.py smem_bytes): the ring of
// kStages x (a BN x 64 block of B + the 16-row tiles of A), which the partial tiles (one per K group of warps)
// reuse after the last stage.
__host__ __device__ constexpr int stage_bytes(int bn, int m_tiles) { return bn * kBK * 2 + m_tiles * 16 * kRowBytes; }

// The warp grids (fraglab/gemm/skinny.py LAYOUTS): WarpsM x WarpsN x WarpsK warps over a BN-column tile; warp
// (wm, wn, wk) takes the 16-row tiles wm, wm + WarpsM, ... (kMTilesPerWarp of them), BN / WarpsN columns from
// wn * BN / WarpsN, and the 16-deep K steps wk * 4 / WarpsK ... of each 64-deep stage. WarpsK 2: two warps share
// each fragment of D, so a block has 8 warps (twice the warps to hide the copies' and ldmatrix's latency, half the
// copies per thread); their two partial tiles are summed in shared memory, K group 1 into group 0. It gains 1-3 %
// where a block streams all of K (one share, B column-major) and loses with K split across the cluster.
//   1 x 4 x 1 / 1 x 4 x 2: 16 columns per warp, 2 row tiles (M <= 32)
//   4 x 1 x 1:             all 64 columns per warp, row tiles w and w + 4 (M <= 128)
template <int WarpsM, int WarpsN, int WarpsK, int BN>
struct WarpGrid {
  static_assert(BN == 64 && ((WarpsM == 1 && WarpsN == 4 && (WarpsK == 1 || WarpsK == 2)) ||
                             (WarpsM == 4 && WarpsN == 1 && WarpsK == 1)),
                "warp grids: 1 x 4 x 1|2, 4 x 1 x 1 over 64 columns");
  static constexpr int kThreads = 32 * WarpsM * WarpsN * WarpsK;
  static constexpr int kMTilesPerWarp = WarpsM == 1 ? 2 : 8 / WarpsM;
  static constexpr int kGroups = BN / 16 / WarpsN;   // 16-column groups per warp
  static constexpr int kKSteps = kBK / 16 / WarpsK;  // 16-deep K steps per warp and stage
  static constexpr int kMinBlocks = kThreads == 128 && WarpsM == 1 ? 4 : 2;
};

template <class T, int WarpsM, int WarpsN, int WarpsK, int BN, bool BColMajor, class Epi>
__global__ void __launch_bounds__(WarpGrid<WarpsM, WarpsN, WarpsK, BN>::kThreads,
                                  WarpGrid<WarpsM, WarpsN, WarpsK, BN>::kMinBlocks) __cluster_dims__(kClusterSize, 1, 1)
    gemm_skinny_kernel(const T* __restrict__ a, const T* __restrict__ b, void* __restrict__ d,
                       const float* __restrict__ c, const float* __restrict__ bias, float* __restrict__ z, int m,
                       int n, int k, int lda, int ldb, int ldd, int ldc, int ldbias, int ldz, int splits,
                       int out_kind, float alpha, float beta, float leaky_slope, int b_by_tma,
                       const __grid_constant__ TmaMap b_map) {
  using Grid = WarpGrid<WarpsM, WarpsN, WarpsK, BN>;
  constexpr int kThreads = Grid::kThreads;
  constexpr int kGroups = Grid::kGroups;
  constexpr int kTilesPerWarp = Grid::kMTilesPerWarp;
  constexpr int kBStageBytes = BN * kBK * 2;
  constexpr int kRedPitch = BN + 8;   // floats per row of the partial tile (+8: half-warp float2 stores conflict-free)
  // B in a stage: column-major, BN rows (columns n) of 128 bytes along K; row-major, kBK rows (k) of BN * 2 bytes
  constexpr int kBRowBytes = BColMajor ? kRowBytes : BN * 2;
  constexpr int kBRowChunks = kBRowBytes / 16;
  extern __shared__ __align__(1024) unsigned char smem[];

  FRAGLAB_SKINNY_MARK(kEntry);   // and the block's SM
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % WarpsM, wn = warp / WarpsM % WarpsN, wk = warp / (WarpsM * WarpsN);
  const int m_tiles = (m + 15) >> 4;
  const int a_rows = m_tiles * 16;
  const int stage = stage_bytes(BN, m_tiles);
  const int rank = static_cast<int>(cluster_rank());
  const int group = rank / splits, share = rank % splits;   // which tile of the cluster, which share of K
  const int tile = static_cast<int>(cluster_id()) * (kClusterSize / splits) + group;
  const int n0 = tile * BN;
  const bool active = n0 < n;   // the last cluster may hold tiles past N: they only join the barriers
  const int k_blocks = (k + kBK - 1) / kBK;
  const int kb_begin = static_cast<int>(static_cast<long long>(k_blocks) * share / splits);
  const int kb_end = static_cast<int>(static_cast<long long>(k_blocks) * (share + 1) / splits);
  const int count = active ? kb_end - kb_begin : 0;
  const unsigned long long keep_a = l2_policy_evict_last(), stream_b = l2_policy_evict_first();
  const unsigned ring = smem_address(smem);
  // b_by_tma: B's stages arrive by TMA, one box per stage from thread 0, completing on the stage's barrier (after the
  // ring and the partial tiles; stages are multiples of 1024 bytes, so every box starts on a 128B-swizzle atom).
  // Otherwise every thread copies its 16-byte chunks of B with cp.async, as it does A's.
  const int ring_bytes = kStages * stage, partial_bytes = WarpsK * a_rows * kRedPitch * 4;
  const unsigned full_bar = ring + (ring_bytes > partial_bytes ? ring_bytes : partial_bytes);
  if (b_by_tma) {
    if (tid == 0) {
      if (ring & 1023) __trap();   // the boxes' swizzle follows address bits: a misplaced ring would read wrong values
#pragma unroll
      for (int s = 0; s < kStages; ++s) mbar_init(full_bar + 8 * s, 1);
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
  }
  {
    // The block's first K-blocks of B into L2 while the previous kernel in the stream may still run: one box per
    // K-block (TMA), or one bulk prefetch per row of B in this tile (its K-run of a column-major B's row, its
    // columns of a row-major B's row)
    const int blocks = min(count, FRAGLAB_SKINNY_WEIGHT_PREFETCH);
    const int k_first = kb_begin * kBK, k_last = min(k, (kb_begin + blocks) * kBK);
    if (blocks > 0 && b_by_tma && tid == 0) {
      for (int kb = kb_begin; kb < kb_begin + blocks; ++kb) {
        tma_prefetch_l2(&b_map, BColMajor ? kb * kBK : n0, BColMajor ? n0 : kb * kBK);
      }
    } else if (blocks > 0 && !b_by_tma) {
      const int rows = BColMajor ? min(BN, n - n0) : k_last - k_first;
      for (int r = tid; r < rows; r += kThreads) {
        if constexpr (BColMajor) {
          bulk_prefetch_l2(b + static_cast<long long>(n0 + r) * ldb + k_first, (k_last - k_first) * 2);
        } else {
          bulk_prefetch_l2(b + static_cast<long long>(k_first + r) * ldb + n0, min(BN, n - n0) * 2);
        }
      }
    }
  }
  wait_for_previous_grid();   // no global memory before this line but the L2 prefetches above

  // This thread's B copies: chunk `chunk0` of rows row0, row0 + kRowStep, ... of a stage (the same every stage)
  constexpr int kRowStep = kThreads / kBRowChunks;
  const int row0 = tid / kBRowChunks, chunk0 = tid % kBRowChunks;
  // column-major: rows are columns n of B (N x K in memory), chunks run along K; row-major: rows are k, chunks n
  const T* b_thread = BColMajor ? b + static_cast<long long>(n0 + row0) * ldb + chunk0 * 8
                                : b + static_cast<long long>(row0) * ldb + n0 + chunk0 * 8;
  auto load_stage = [&](int slot, int kb) {
    const unsigned base = ring + slot * stage;
    const int k0 = kb * kBK;
    if (b_by_tma) {
      if (tid == 0) {   // B: one box of 64 rows of 128 bytes, 128B swizzle (the layout swizzled() reads)
        mbar_arrive_expect_tx(full_bar + 8 * slot, kBStageBytes);
        tma_load_2d(base, &b_map, BColMajor ? k0 : n0, BColMajor ? n0 : k0, full_bar + 8 * slot, stream_b);
      }
    } else {
#pragma unroll
      for (int i = 0; i < BN * 8 / kThreads; ++i) {   // B: BN x 64 elements in 16-byte chunks
        const int row = row0 + i * kRowStep;
        bool valid;
        long long offset;
        if constexpr (BColMajor) {
          valid = n0 + row < n && k0 + chunk0 * 8 < k;
          offset = static_cast<long long>(i * kRowStep) * ldb + k0;
        } else {
          valid = k0 + row < k && n0 + chunk0 * 8 < n;
          offset = static_cast<long long>(k0 + i * kRowStep) * ldb;
        }
        copy16_stream(base + swizzled(row, chunk0, kBRowBytes), valid ? b_thread + offset : b, valid, stream_b);
      }
    }
    for (int idx = tid; idx < a_rows * 8; idx += kThreads) {   // A: the 16-row tiles, rows past M zero
      const int row = idx >> 3, chunk = idx & 7, kk = k0 + chunk * 8;
      const bool valid = row < m && kk < k;
      copy16(base + kBStageBytes + swizzled(row, chunk), a + (valid ? static_cast<long long>(row) * lda + kk : 0),
             valid, keep_a);
    }
  };

  // acc[i][2q + h]: 16-row tile wm + WarpsM * i, 8-column tile 2 * (wn * kGroups + q) + h of the block's tile
  float acc[kTilesPerWarp][2 * kGroups][4];
#pragma unroll
  for (int i = 0; i < kTilesPerWarp; ++i)
#pragma unroll
    for (int j = 0; j < 2 * kGroups; ++j)
#pragma unroll
      for (int s = 0; s < 4; ++s) acc[i][j][s] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < count) load_stage(s, kb_begin + s);
    copy_commit();
  }
  const int j8 = lane >> 3, r8 = lane & 7;   // ldmatrix: this lane addresses row r8 of matrix j8
  for (int it = 0; it < count; ++it) {
    copy_wait<kStages - 2>();
    __syncthreads();   // stage `it` landed for every thread; stage it - 1 is free for the next copy
    const int next = it + kStages - 1;
    if (next < count) load_stage(next % kStages, kb_begin + next);
    copy_commit();
    if (b_by_tma) mbar_wait_at(full_bar + 8 * (it % kStages), (it / kStages) & 1);
    if (it == 0) FRAGLAB_SKINNY_MARK(kFirstStage);
    if (it == count / 2) FRAGLAB_SKINNY_MARK(kHalfStages);
    const unsigned base = ring + (it % kStages) * stage;
#pragma unroll
    for (int kq = 0; kq < Grid::kKSteps; ++kq) {
      const int ks = wk * Grid::kKSteps + kq;
      // B fragments of 16-column group g: matrices (cols 0-7, k 0-7), (cols 0-7, k 8-15), (cols 8-15, k 0-7),
      // (cols 8-15, k 8-15) -> 8-column tile 0 gets regs 0, 1 and tile 1 regs 2, 3
      unsigned bf[kGroups][4];
#pragma unroll
      for (int q = 0; q < kGroups; ++q) {
        const int g16 = wn * kGroups + q;
        if constexpr (BColMajor) {
          load_matrix_x4(bf[q], base + swizzled(16 * g16 + r8 + 8 * (j8 >> 1), 2 * ks + (j8 & 1)));
        } else {
          load_matrix_x4_trans(bf[q], base + swizzled(16 * ks + r8 + 8 * (j8 & 1), 2 * g16 + (j8 >> 1), kBRowBytes));
        }
      }
#pragma unroll
      for (int i = 0; i < kTilesPerWarp; ++i) {
        const int mt = wm + WarpsM * i;
        if (mt < m_tiles) {   // warp-uniform
          // A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
          unsigned af[4];
          load_matrix_x4(af, base + kBStageBytes + swizzled(16 * mt + r8 + 8 * (j8 & 1), 2 * ks + (j8 >> 1)));
#pragma unroll
          for (int q = 0; q < kGroups; ++q) {
            mma_16816<T>(acc[i][2 * q], af, bf[q][0], bf[q][1]);
            mma_16816<T>(acc[i][2 * q + 1], af, bf[q][2], bf[q][3]);
          }
        }
      }
    }
  }
  FRAGLAB_SKINNY_MARK(kLoopEnd);
  copy_wait<0>();
  __syncthreads();   // every warp is done with the ring: the partial tile overwrites it
  // The next kernel's blocks fit beside this one's: scheduled from the start, they would fetch their weight into L2
  // while this kernel still streams its own (a wasted fetch if evicted by then); once every block is past its
  // stream, they fetch it while this one reduces.
  let_next_grid_start();

  float* partial = reinterpret_cast<float*>(smem);   // [a_rows][kRedPitch]
  float* const k_group_one = partial + a_rows * kRedPitch;   // WarpsK 2: K group 1's partial tile, beside it
  const int g = lane >> 2, t = lane & 3;
  // K group 1 (if any) stores its fragments first; group 0 adds them to its own (a fixed order) and stores the sum
#pragma unroll
  for (int pass = WarpsK - 1; pass >= 0; --pass) {
    if (wk == pass) {
      float* const out = pass == 1 ? k_group_one : partial;
#pragma unroll
      for (int i = 0; i < kTilesPerWarp; ++i) {
        const int mt = wm + WarpsM * i;
        if (mt < m_tiles) {
#pragma unroll
          for (int j = 0; j < 2 * kGroups; ++j) {
            const int col = 16 * wn * kGroups + 8 * j + 2 * t, row = 16 * mt + g;
            float2 lo = make_float2(acc[i][j][0], acc[i][j][1]), hi = make_float2(acc[i][j][2], acc[i][j][3]);
            if (WarpsK == 2 && pass == 0) {
              const float2 lo1 = *reinterpret_cast<const float2*>(k_group_one + row * kRedPitch + col);
              const float2 hi1 = *reinterpret_cast<const float2*>(k_group_one + (row + 8) * kRedPitch + col);
              lo.x += lo1.x;
              lo.y += lo1.y;
              hi.x += hi1.x;
              hi.y += hi1.y;
            }
            *reinterpret_cast<float2*>(out + row * kRedPitch + col) = lo;
            *reinterpret_cast<float2*>(out + (row + 8) * kRedPitch + col) = hi;
          }
        }
      }
    }
    if (WarpsK == 2 && pass == 1) __syncthreads();   // group 1's partial tile is written
  }
  // every share's partial tile is written and visible to the cluster (one share: to this block)
  if (splits > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }
  FRAGLAB_SKINNY_MARK(kPartialsVisible);

  if (active) {
    EpilogueParams p;
    p.alpha = alpha;
    p.beta = beta;
    p.leaky_slope = leaky_slope;
    p.C = c;
    p.ldc = ldc;
    p.bias = bias;
    p.ldbias = ldbias;
    p.D = nullptr;   // D is stored here in its own type (store_out)
    p.ldd = ldd;
    p.Z = z;
    p.ldz = ldz;
    const int first = group * splits;
    const int pairs = m * (BN / 2);
    // Column pairs of the tile's M rows, dealt round the tile's blocks; each sums the shares in rank order.
    for (int pair = share * kThreads + tid; pair < pairs; pair += splits * kThreads) {
      const int row = pair / (BN / 2), col = 2 * (pair % (BN / 2)), nn = n0 + col;
      if (nn >= n) continue;   // N is even: nn + 1 < N too
      const unsigned local = smem_address(partial + row * kRedPitch + col);
      // C and bias first, then every share's partial at once: the loads overlap instead of queueing one by one
      float c_in[2], bias_in[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        c_in[e] = Epi::c_at(p, row, nn + e);
        bias_in[e] = Epi::bias_at(p, row, nn + e);
      }
      float2 parts[kClusterSize];
#pragma unroll
      for (int s = 0; s < kClusterSize; ++s) {
        if (s < splits) parts[s] = load_peer_f2(local, first + s);
      }
      float2 sum = parts[0];
#pragma unroll
      for (int s = 1; s < kClusterSize; ++s) {
        if (s < splits) {
          sum.x += parts[s].x;
          sum.y += parts[s].y;
        }
      }
      const float values[2] = {sum.x, sum.y};
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float pre;
        const float out = Epi::combine(p, values[e], c_in[e], bias_in[e], pre);
        if constexpr (Epi::kWritesZ) z[flat_index(row, nn + e, ldz)] = pre;
        store_out(d, static_cast<OutKind>(out_kind), flat_index(row, nn + e, ldd), out);
      }
    }
  }
  FRAGLAB_SKINNY_MARK(kEpilogueDone);
  // No block leaves while another still reads its shared memory. Each thread's reads of other blocks' partials
  // (load_peer_f2) have returned the values it went on to use: nothing to publish, the arrive relaxed (~0.5 us).
  if (splits > 1) cluster_sync_relaxed();
  FRAGLAB_SKINNY_MARK(kExit);
}

}  // namespace skinny_gemm
}  // namespace fraglab
