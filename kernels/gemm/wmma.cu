// Tensor-core GEMM on WMMA fragments with a fused, compile-time epilogue (kernels/epilogue.cuh).
//   D[M,N] (f32) = act(alpha * A[M,K] @ B[K,N] (+ beta * C) (+ bias)),  A, B row-major f16 or bf16, f32 accumulation
// Block tile BM x BN x BK, warp tile WM x WN (several 16x16 fragments per warp), Stages-deep cp.async
// pipeline global -> shared with padded rows, then each warp stages its accumulators through shared
// memory one fragment row at a time so the epilogue reads them row-wise and writes D coalesced.
// Aligned == true needs K % 8 == 0, N % 8 == 0 and 16-byte aligned pointers (16-byte copies and
// float4 epilogue traffic); Aligned == false handles any M, N, K >= 1 with element-wise edge code.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "epilogue.cuh"

namespace fraglab {

// The pipeline's schedule inside each k-tile kt (16-deep k-steps 0 .. BK/16-1), for measuring it:
//   BarrierStep_: the step that opens with "wait until tile kt+1 has landed, then __syncthreads()";
//   LoadStep_:    the step that issues the copies of tile kt+Stages-1 into the stage of tile kt-1.
//   -1 means the last step. Fragments are loaded one step ahead, so tile kt+1's first fragments are
// loaded (last step - BarrierStep) steps of MMAs after the barrier. Tile kt-1's stage is free once every
// warp has passed a barrier after its last read. With the barrier in the last step, that is tile kt-1's
// own barrier: the copies may go at any step, and in the barrier's step they go just before it (their
// latency then overlaps the barrier's wait). With an earlier barrier, tile kt-1 is still read after its
// own barrier, so the copies must follow tile kt's: LoadStep >= BarrierStep, and after it in its step.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int Stages_, int GroupM_ = 8, int LoadStep_ = -1,
          int BarrierStep_ = -1>
struct WmmaTile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, Stages = Stages_;
  static constexpr int kSteps = BK / 16;
  static constexpr int kLoadStep = LoadStep_ < 0 ? kSteps - 1 : LoadStep_;
  static constexpr int kBarrierStep = BarrierStep_ < 0 ? kSteps - 1 : BarrierStep_;
  static constexpr bool kCopiesBeforeBarrier = kBarrierStep == kSteps - 1;
  // cp.async groups committed after tile kt+1's when the barrier step waits: those of tiles up to
  // kt+Stages-2, and kt+Stages-1's too when this tile's copies were already issued
  static constexpr int kWaitPending = Stages - 3 + (kCopiesBeforeBarrier ? 1 : 0);
  static_assert(kLoadStep < kSteps && kBarrierStep < kSteps, "steps inside the k-tile");
  static_assert(kCopiesBeforeBarrier || kLoadStep >= kBarrierStep, "copies would overwrite a stage in use");
  static_assert(kWaitPending >= 0, "too few stages for this schedule: tile kt+1 would not have been issued");
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kWarps = kWarpsM * kWarpsN;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kFragM = WM / 16, kFragN = WN / 16;   // fragments per warp along M and N
  static constexpr int kLdA = BK + 8;                        // +16 B per row: ldmatrix rows hit distinct banks
  static constexpr int kLdB = BN + 8;
  static constexpr int kStageElems = BM * kLdA + BK * kLdB;  // 2-byte elements per pipeline stage
  static constexpr int kLdStage = WN + 4;                    // f32 staging row, +16 B against bank conflicts
  static constexpr int kPipeBytes = Stages * kStageElems * 2;
  static constexpr int kEpilogueBytes = kWarps * WM * kLdStage * 4;  // every warp's accumulators, staged
  static constexpr int kSmemBytes = kPipeBytes > kEpilogueBytes ? kPipeBytes : kEpilogueBytes;
  static constexpr int kGroupM = GroupM_;                    // tiles along M visited together, for L2 reuse
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "tile shape");
  static_assert((BM * BK / 8) % kThreads == 0 && (BK * BN / 8) % kThreads == 0, "16-byte chunks per thread");
  static_assert(WN % 4 == 0 && 32 % (WN / 4) == 0, "epilogue: a warp covers whole staged rows with float4");
};

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16-byte async copy; src_bytes == 0 writes zeros (rows/columns past the matrix edge, and the K tail).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// One thread's share of copying ROWS x COLS tiles of a row-major matrix (2-byte elements) into shared
// memory with leading dimension LD: kPasses chunks of 8 elements, kRowStep rows apart. Everything that
// does not change along K is computed once, so the copies cost few registers in the main loop.
// KAlongRows: the tile walks down the rows with the k-tile (B), else along the columns (A).
template <int ROWS, int COLS, int LD, int THREADS, bool Aligned, bool KAlongRows>
struct TileLoader {
  static constexpr int kChunksPerRow = COLS / 8;
  static constexpr int kRowStep = THREADS / kChunksPerRow;
  static constexpr int kPasses = ROWS * kChunksPerRow / THREADS;
  static constexpr int kTileStep = KAlongRows ? ROWS : COLS;  // rows or columns per k-tile
  static_assert(THREADS % kChunksPerRow == 0 && kPasses >= 1, "tile copy layout");

  const unsigned short* first;  // this thread's first chunk at k-tile 0
  int rows, cols, row, col;     // matrix extent; the first chunk's global row and column
  unsigned smem_offset;         // bytes from the start of the tile in shared memory

  __device__ __forceinline__ TileLoader(const unsigned short* src, int rows_, int cols_, int row0, int col0)
      : rows(rows_), cols(cols_) {
    const int r = threadIdx.x / kChunksPerRow, c = (threadIdx.x % kChunksPerRow) * 8;
    row = row0 + r;
    col = col0 + c;
    first = src + flat_index(row, col, cols);
    smem_offset = static_cast<unsigned>((r * LD + c) * 2);
  }

  // Copy k-tile kt into the tile at shared address `dst`; zero outside the matrix.
  __device__ __forceinline__ void load(unsigned short* dst, int kt) const {
    const int dk = kt * kTileStep;
    unsigned char* d0 = reinterpret_cast<unsigned char*>(dst) + smem_offset;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int gr = row + i * kRowStep + (KAlongRows ? dk : 0);
      const int gc = col + (KAlongRows ? 0 : dk);
      const long long offset = KAlongRows ? static_cast<long long>(dk + i * kRowStep) * cols
                                          : static_cast<long long>(i * kRowStep) * cols + dk;
      unsigned short* d = reinterpret_cast<unsigned short*>(d0 + i * kRowStep * LD * 2);
      if constexpr (Aligned) {
        // cols % 8 == 0, so a chunk is wholly inside or wholly outside
        const bool inside = gr < rows && gc < cols;
        cp_async_16(d, inside ? first + offset : first, inside ? 16 : 0);
      } else {
        unsigned short v[8];
#pragma unroll
        for (int e = 0; e < 8; ++e)
          v[e] = (gr < rows && gc + e < cols) ? first[offset + e] : static_cast<unsigned short>(0);
        uint4 packed;
        packed.x = v[0] | (static_cast<unsigned>(v[1]) << 16);
        packed.y = v[2] | (static_cast<unsigned>(v[3]) << 16);
        packed.z = v[4] | (static_cast<unsigned>(v[5]) << 16);
        packed.w = v[6] | (static_cast<unsigned>(v[7]) << 16);
        *reinterpret_cast<uint4*>(d) = packed;
      }
    }
  }
};

// One 16x16 operand fragment from shared memory. bf16 goes through an f16 fragment: wmma's own bf16
// load compiles to generic LD + MOVM on sm_90 (the f16 one to LDSM), and slots 0..7 of the two hold the
// same (row, col) for every lane (`fraglab layout --source atlas`, atlas_sm90; f16 slots 8..15 are
// duplicates the MMA ignores), so the bits move over unchanged.
template <class Use>
__device__ __forceinline__ void load_operand(nvcuda::wmma::fragment<Use, 16, 16, 16, __half, nvcuda::wmma::row_major>& dst,
                                             const __half* src, unsigned ld) {
  nvcuda::wmma::load_matrix_sync(dst, src, ld);
}
template <class Use>
__device__ __forceinline__ void load_operand(
    nvcuda::wmma::fragment<Use, 16, 16, 16, __nv_bfloat16, nvcuda::wmma::row_major>& dst, const __nv_bfloat16* src,
    unsigned ld) {
  nvcuda::wmma::fragment<Use, 16, 16, 16, __half, nvcuda::wmma::row_major> bits;
  nvcuda::wmma::load_matrix_sync(bits, reinterpret_cast<const __half*>(src), ld);
#pragma unroll
  for (int t = 0; t < dst.num_elements; ++t) dst.x[t] = __ushort_as_bfloat16(__half_as_ushort(bits.x[t]));
}

// Apply the epilogue to four consecutive columns n..n+3 of row m (all inside: N % 4 == 0).
// bias_n: bias[n..n+3], loaded once by the caller (used when the bias is per_n).
template <class Ep>
__device__ __forceinline__ void epilogue_store4(const EpilogueParams& p, int m, int n, float4 acc, float4 bias_n) {
  float4 c = make_float4(0.f, 0.f, 0.f, 0.f);
  float4 b = bias_n;
  if constexpr (Ep::kReadsC) c = __ldg(reinterpret_cast<const float4*>(p.C + flat_index(m, n, p.ldc)));
  if constexpr (Ep::kBias == BiasMode::PerM) {
    const float bm = __ldg(p.bias + m);
    b = make_float4(bm, bm, bm, bm);
  } else if constexpr (Ep::kBias == BiasMode::Full) {
    b = __ldg(reinterpret_cast<const float4*>(p.bias + flat_index(m, n, p.ldbias)));
  }
  float4 d, z;
  d.x = Ep::combine(p, acc.x, c.x, b.x, z.x);
  d.y = Ep::combine(p, acc.y, c.y, b.y, z.y);
  d.z = Ep::combine(p, acc.z, c.z, b.z, z.z);
  d.w = Ep::combine(p, acc.w, c.w, b.w, z.w);
  if constexpr (Ep::kWritesZ) *reinterpret_cast<float4*>(p.Z + flat_index(m, n, p.ldz)) = z;
  *reinterpret_cast<float4*>(p.D + flat_index(m, n, p.ldd)) = d;
}

// T is __half or __nv_bfloat16. One block computes one BM x BN tile of D.
template <class Tile, class Ep, bool Aligned, typename T>
__global__ void __launch_bounds__(Tile::kThreads, 1)
gemm_wmma_kernel(const T* __restrict__ A, const T* __restrict__ B, int M, int N, int K, float alpha, float beta,
                 float leaky_slope, const float* C, const float* bias, float* D, float* Z, int ldc, int ldbias, int ldd,
                 int ldz) {
  using namespace nvcuda;
  constexpr int BM = Tile::BM, BN = Tile::BN, BK = Tile::BK, Stages = Tile::Stages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  unsigned short* smem = reinterpret_cast<unsigned short*>(smem_raw);

  // Grouped tile order: kGroupM consecutive blocks share B's column panel while they walk down M.
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int per_group = Tile::kGroupM * tiles_n;
  const int group = blockIdx.x / per_group;
  const int first_m = group * Tile::kGroupM;
  const int group_rows = min(tiles_m - first_m, Tile::kGroupM);
  const int tile_m = first_m + (blockIdx.x % per_group) % group_rows;
  const int tile_n = (blockIdx.x % per_group) / group_rows;
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / Tile::kWarpsN, warp_n = warp % Tile::kWarpsN;
  const unsigned short* a_bits = reinterpret_cast<const unsigned short*>(A);
  const unsigned short* b_bits = reinterpret_cast<const unsigned short*>(B);

  auto stage_a = [&](int s) { return smem + s * Tile::kStageElems; };
  auto stage_b = [&](int s) { return smem + s * Tile::kStageElems + BM * Tile::kLdA; };
  const TileLoader<BM, BK, Tile::kLdA, Tile::kThreads, Aligned, false> a_loader(a_bits, M, K, m0, 0);
  const TileLoader<BK, BN, Tile::kLdB, Tile::kThreads, Aligned, true> b_loader(b_bits, K, N, 0, n0);
  auto load_stage = [&](int s, int k_tile) {
    a_loader.load(stage_a(s), k_tile);
    b_loader.load(stage_b(s), k_tile);
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[Tile::kFragM][Tile::kFragN];
#pragma unroll
  for (int i = 0; i < Tile::kFragM; ++i)
#pragma unroll
    for (int j = 0; j < Tile::kFragN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  // Fragments are double-buffered in registers: step kk's MMAs run while step kk+1's fragments load,
  // and the last step of a tile loads the first fragments of the next tile, so the tensor cores keep
  // working across the one barrier per k-tile.
  constexpr int kSteps = Tile::kSteps;
  static_assert(kSteps % 2 == 0, "BK must be a multiple of 32 for the two fragment buffers to alternate");
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a_frag[2][Tile::kFragM];
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b_frag[2][Tile::kFragN];
  auto load_fragments = [&](int buf, int s, int kk) {
    const T* as = reinterpret_cast<const T*>(stage_a(s)) + warp_m * Tile::WM * Tile::kLdA + kk * 16;
    const T* bs = reinterpret_cast<const T*>(stage_b(s)) + kk * 16 * Tile::kLdB + warp_n * Tile::WN;
#pragma unroll
    for (int i = 0; i < Tile::kFragM; ++i) load_operand(a_frag[buf][i], as + i * 16 * Tile::kLdA, Tile::kLdA);
#pragma unroll
    for (int j = 0; j < Tile::kFragN; ++j) load_operand(b_frag[buf][j], bs + j * 16, Tile::kLdB);
  };

  const int k_tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    cp_async_commit();  // one group per stage, empty past the end, so wait_group counts stay fixed
  }
  cp_async_wait<Stages - 2>();
  __syncthreads();
  load_fragments(0, 0, 0);

  int read_stage = 0;  // tile kt's stage, kt % Stages
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int next_stage = read_stage == Stages - 1 ? 0 : read_stage + 1;   // tile kt+1's
    const int write_stage = read_stage == 0 ? Stages - 1 : read_stage - 1;  // tile kt-1's, refilled with kt+Stages-1
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      auto issue_copies = [&] {
        if (kt + Stages - 1 < k_tiles) load_stage(write_stage, kt + Stages - 1);
        cp_async_commit();  // one group per k-tile, empty past the end, so the wait counts stay fixed
      };
      if (kk == Tile::kLoadStep && Tile::kCopiesBeforeBarrier) issue_copies();
      if (kk == Tile::kBarrierStep) {
        cp_async_wait<Tile::kWaitPending>();
        __syncthreads();  // tile kt+1 has landed for all threads
      }
      if (kk == Tile::kLoadStep && !Tile::kCopiesBeforeBarrier) issue_copies();
      if (kk == kSteps - 1) {
        if (kt + 1 < k_tiles) load_fragments((kk + 1) % 2, next_stage, 0);
      } else {
        load_fragments((kk + 1) % 2, read_stage, kk + 1);
      }
#pragma unroll
      for (int i = 0; i < Tile::kFragM; ++i)
#pragma unroll
        for (int j = 0; j < Tile::kFragN; ++j)
          wmma::mma_sync(acc[i][j], a_frag[kk % 2][i], b_frag[kk % 2][j], acc[i][j]);
    }
    read_stage = next_stage;
  }
  cp_async_wait<0>();
  __syncthreads();  // the pipeline's shared memory becomes the epilogue's staging area

  // Epilogue: each warp stages its whole WM x WN accumulator tile in shared memory, then walks it row by
  // row, one float4 per lane. The walk is unrolled only 4x: fully unrolled, a GELU epilogue is ~40 KB of
  // SASS that misses the instruction cache once per tile (it measured 8-30 % of the kernel's time);
  // 4 rows in flight give the activation math enough independent work to hide its latency.
  // row pitches of C, a full bias, D and Z (N when dense; 16-byte rows when the aligned path reads float4)
  const EpilogueParams p{alpha, beta, leaky_slope, C, ldc, bias, ldbias, D, ldd, Z, ldz};
  float* stage = reinterpret_cast<float*>(smem_raw) + warp * Tile::WM * Tile::kLdStage;
#pragma unroll
  for (int i = 0; i < Tile::kFragM; ++i)
#pragma unroll
    for (int j = 0; j < Tile::kFragN; ++j)
      wmma::store_matrix_sync(stage + i * 16 * Tile::kLdStage + j * 16, acc[i][j], Tile::kLdStage,
                              wmma::mem_row_major);
  __syncwarp();
  constexpr int kLanesPerRow = Tile::WN / 4;      // one float4 per lane
  constexpr int kRowsPerPass = 32 / kLanesPerRow;
  const int col4 = (lane % kLanesPerRow) * 4;
  const int n = n0 + warp_n * Tile::WN + col4;
  const int m_warp = m0 + warp_m * Tile::WM;
  if constexpr (Aligned) {
    float4 bias_n = make_float4(0.f, 0.f, 0.f, 0.f);  // a lane's columns are the same on every row
    if constexpr (Ep::kBias == BiasMode::PerN)
      if (n < N) bias_n = __ldg(reinterpret_cast<const float4*>(p.bias + n));
#pragma unroll 4
    for (int r = lane / kLanesPerRow; r < Tile::WM; r += kRowsPerPass) {
      const int m = m_warp + r;
      const float4 v = *reinterpret_cast<const float4*>(stage + r * Tile::kLdStage + col4);
      if (m < M && n < N) epilogue_store4<Ep>(p, m, n, v, bias_n);
    }
  } else {  // the edge-tolerant path: scalar, rolled (its registers are already spent on scalar loads)
#pragma unroll 1
    for (int r = lane / kLanesPerRow; r < Tile::WM; r += kRowsPerPass) {
      const int m = m_warp + r;
      const float4 v = *reinterpret_cast<const float4*>(stage + r * Tile::kLdStage + col4);
      if (m < M) {
        if (n + 0 < N) Ep::apply(p, m, n + 0, v.x);
        if (n + 1 < N) Ep::apply(p, m, n + 1, v.y);
        if (n + 2 < N) Ep::apply(p, m, n + 2, v.z);
        if (n + 3 < N) Ep::apply(p, m, n + 3, v.w);
      }
    }
  }
}

}  // namespace fraglab
