// The FP32 SIMT GEMM ladder: D = act(alpha * A @ B (+ beta * C) (+ bias)), one new idea per rung.
// A (M x K), B (K x N), C, bias, D, Z are row-major f32 with leading dimensions; every rung is correct
// for any M, N, K >= 1 and ends in the same compile-time policy, fraglab::Epilogue (epilogue.cuh).
// fraglab/gemm_simt.py instantiates these templates (tile sizes spelled out) and derives each launch
// from the same numbers; the numpy twin of the whole computation is fraglab/epilogue_ref.py.
#pragma once

#include "epilogue.cuh"

// CuPy launches with scalars and pointers, not structs: every rung takes this list and builds
// EpilogueParams from its tail.
#define FRAGLAB_SIMT_GEMM_PARAMS                                                                          \
  int M, int N, int K, const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,        \
      float alpha, float beta, float leaky_slope, const float* C, int ldc, const float* bias, int ldbias, \
      float* D, int ldd, float* Z, int ldz
#define FRAGLAB_SIMT_EPILOGUE_PARAMS \
  ::fraglab::EpilogueParams { alpha, beta, leaky_slope, C, ldc, bias, ldbias, D, ldd, Z, ldz }

namespace fraglab {
namespace simt {

// ---- named tile defaults (fraglab/gemm_simt.py RUNG_SPECS passes the same values explicitly) ----
constexpr int kSmokeBlock = 16;                 // 16 x 16 threads, one output each
constexpr int kNaiveThreads = 256;              // 1-D blocks over the M * N outputs
constexpr int kSmemTile = 32;                   // 32 x 32 outputs per block, 32 x 32 tiles of A and B
constexpr int kTile1dBM = 64, kTile1dBN = 64;   // 512 threads, each 8 outputs down a column
constexpr int kTile1dBK = 8, kTile1dTM = 8;
constexpr int kTile2dBM = 128, kTile2dBN = 128; // 16 x 16 threads, each an 8 x 8 block of outputs
constexpr int kTile2dBK = 8, kTile2dTM = 8, kTile2dTN = 8;
constexpr int kTile2dPadA = 1;                  // rows ty*8 and (ty+1)*8 of one warp land 8 banks apart
constexpr int kVecBM = 128, kVecBN = 128, kVecBK = 8, kVecTM = 8, kVecTN = 8;
constexpr int kVecPadA = 4;                     // keeps float4 rows aligned; transposed stores conflict-free
constexpr int kWarpBM = 128, kWarpBN = 256, kWarpBK = 8;
constexpr int kWarpWM = 64, kWarpWN = 64;       // 2 x 4 warps; each lane 4 x 2 sub-tiles of 4 x 4 (16 x 8 outputs)
constexpr int kWarpPadA = 4;
constexpr int kWarpMinBlocks = 1;               // 1 block of 256 threads per SM: up to 255 registers each

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// Store four outputs of one row, (m, n..n+3), through the epilogue: one 16-byte store when the row
// segment is inside D and aligned (vec_ok), else element by element with bounds.
template <class Ep>
__device__ __forceinline__ void store_row4(const EpilogueParams& p, int M, int N, int m, int n, float4 acc,
                                           bool vec_ok) {
  if (m >= M) return;
  if (vec_ok && n + 3 < N) {
    float4 d, z;
    d.x = Ep::compute(p, m, n + 0, acc.x, z.x);
    d.y = Ep::compute(p, m, n + 1, acc.y, z.y);
    d.z = Ep::compute(p, m, n + 2, acc.z, z.z);
    d.w = Ep::compute(p, m, n + 3, acc.w, z.w);
    if constexpr (Ep::kWritesZ) *reinterpret_cast<float4*>(p.Z + flat_index(m, n, p.ldz)) = z;
    *reinterpret_cast<float4*>(p.D + flat_index(m, n, p.ldd)) = d;
  } else {
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int c = 0; c < 4; ++c)
      if (n + c < N) Ep::apply(p, m, n + c, v[c]);
  }
}

// 16-byte stores of D (and Z) are legal: both base and row pitch keep every 4th column aligned.
template <class Ep>
__device__ __forceinline__ bool output_vec_ok(const EpilogueParams& p) {
  bool ok = (p.ldd % 4 == 0) && aligned16(p.D);
  if constexpr (Ep::kWritesZ) ok = ok && (p.ldz % 4 == 0) && aligned16(p.Z);
  return ok;
}

// ---- rung "smoke": one thread per output, 16 x 16 blocks (the seed's small-problem kernel) ----
template <class Ep, int BlockX = kSmokeBlock, int BlockY = kSmokeBlock>
__global__ void __launch_bounds__(BlockX * BlockY) gemm_smoke(FRAGLAB_SIMT_GEMM_PARAMS) {
  const int m = blockIdx.y * BlockY + threadIdx.y;
  const int n = blockIdx.x * BlockX + threadIdx.x;
  if (m >= M || n >= N) return;
  const float* a = A + flat_index(m, 0, lda);
  const float* b = B + n;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(a[k], b[flat_index(k, 0, ldb)], acc);
  Ep::apply(FRAGLAB_SIMT_EPILOGUE_PARAMS, m, n, acc);
}

// ---- rungs "naive_uncoalesced" / "naive_coalesced": a 1-D grid, one thread per output ----
// Uncoalesced: neighbouring threads take neighbouring rows m, so a warp's A loads hit 32 rows and its
// D stores 32 rows. Coalesced: neighbouring threads take neighbouring columns n, so B loads and D
// stores are contiguous and the A element is one broadcast.
template <class Ep, bool CoalescedMapping, int Threads = kNaiveThreads>
__global__ void __launch_bounds__(Threads) gemm_naive(FRAGLAB_SIMT_GEMM_PARAMS) {
  const long long t = static_cast<long long>(blockIdx.x) * Threads + threadIdx.x;
  if (t >= static_cast<long long>(M) * N) return;
  const int m = CoalescedMapping ? static_cast<int>(t / N) : static_cast<int>(t % M);
  const int n = CoalescedMapping ? static_cast<int>(t % N) : static_cast<int>(t / M);
  const float* a = A + flat_index(m, 0, lda);
  const float* b = B + n;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(a[k], b[flat_index(k, 0, ldb)], acc);
  Ep::apply(FRAGLAB_SIMT_EPILOGUE_PARAMS, m, n, acc);
}

// ---- rung "smem_cache": Tile x Tile blocks stage Tile x Tile tiles of A and B in shared memory ----
template <class Ep, int Tile = kSmemTile>
__global__ void __launch_bounds__(Tile * Tile) gemm_smem_cache(FRAGLAB_SIMT_GEMM_PARAMS) {
  __shared__ float As[Tile][Tile];
  __shared__ float Bs[Tile][Tile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int m = blockIdx.y * Tile + ty;
  const int n = blockIdx.x * Tile + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += Tile) {
    // zeros outside the matrices, so the inner loop needs no bounds
    As[ty][tx] = (m < M && k0 + tx < K) ? A[flat_index(m, k0 + tx, lda)] : 0.f;
    Bs[ty][tx] = (k0 + ty < K && n < N) ? B[flat_index(k0 + ty, n, ldb)] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Tile; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);  // As: broadcast, Bs: 32 banks
    __syncthreads();
  }
  if (m < M && n < N) Ep::apply(FRAGLAB_SIMT_EPILOGUE_PARAMS, m, n, acc);
}

// ---- rung "reg_tile_1d": each thread accumulates TM outputs down one column in registers ----
// Per k step a thread reads one B value and TM A values (broadcast across the warp) for TM FMAs.
template <class Ep, int BM = kTile1dBM, int BN = kTile1dBN, int BK = kTile1dBK, int TM = kTile1dTM>
__global__ void __launch_bounds__(BM * BN / TM) gemm_reg_tile_1d(FRAGLAB_SIMT_GEMM_PARAMS) {
  constexpr int kThreads = BM * BN / TM;
  static_assert(BM % TM == 0 && (BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0, "tile shapes");
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x;
  const int trow = tid / BN, tcol = tid % BN;  // a warp shares trow: its A reads are broadcasts
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int r = e / BK, c = e % BK;
      As[r][c] = (m0 + r < M && k0 + c < K) ? A[flat_index(m0 + r, k0 + c, lda)] : 0.f;
    }
#pragma unroll
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int r = e / BN, c = e % BN;
      Bs[r][c] = (k0 + r < K && n0 + c < N) ? B[flat_index(k0 + r, n0 + c, ldb)] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float b = Bs[kk][tcol];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[trow * TM + i][kk], b, acc[i]);
    }
    __syncthreads();
  }
  const EpilogueParams p = FRAGLAB_SIMT_EPILOGUE_PARAMS;
  const int n = n0 + tcol;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + trow * TM + i;
    if (m < M && n < N) Ep::apply(p, m, n, acc[i]);
  }
}

// ---- rungs "reg_tile_2d" / "reg_tile_2d_db": each thread an TM x TN outer-product block ----
// The seed's tiled kernel: scalar tile loads spread over the block, optional double buffering of the
// shared tiles (REGEMM_USE_DB: the next tile is loaded into the other stage while this one is used).
template <class Ep, bool DoubleBuffer, int BM = kTile2dBM, int BN = kTile2dBN, int BK = kTile2dBK,
          int TM = kTile2dTM, int TN = kTile2dTN, int PadA = kTile2dPadA>
__global__ void __launch_bounds__((BM / TM) * (BN / TN)) gemm_reg_tile_2d(FRAGLAB_SIMT_GEMM_PARAMS) {
  constexpr int kThreadsX = BN / TN, kThreads = (BM / TM) * (BN / TN);
  constexpr int kStages = DoubleBuffer ? 2 : 1;
  static_assert(BM % TM == 0 && BN % TN == 0 && (BM * BK) % kThreads == 0 && (BK * BN) % kThreads == 0,
                "tile shapes");
  __shared__ float As[kStages][BM][BK + PadA];
  __shared__ float Bs[kStages][BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreadsX + tx;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

  auto load_tiles = [&](int stage, int k0) {
#pragma unroll
    for (int e = tid; e < BM * BK; e += kThreads) {
      const int r = e / BK, c = e % BK;
      As[stage][r][c] = (m0 + r < M && k0 + c < K) ? A[flat_index(m0 + r, k0 + c, lda)] : 0.f;
    }
#pragma unroll
    for (int e = tid; e < BK * BN; e += kThreads) {
      const int r = e / BN, c = e % BN;
      Bs[stage][r][c] = (k0 + r < K && n0 + c < N) ? B[flat_index(k0 + r, n0 + c, ldb)] : 0.f;
    }
  };

  float acc[TM][TN] = {};
  load_tiles(0, 0);
  __syncthreads();
  int stage = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    if constexpr (DoubleBuffer) {
      // the other stage was last read before the previous barrier, so it is free
      if (k0 + BK < K) load_tiles(stage ^ 1, k0 + BK);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[stage][ty * TM + i][kk];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[stage][kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
    if constexpr (DoubleBuffer) {
      stage ^= 1;
    } else if (k0 + BK < K) {
      load_tiles(0, k0 + BK);
      __syncthreads();
    }
  }

  const EpilogueParams p = FRAGLAB_SIMT_EPILOGUE_PARAMS;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty * TM + i;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tx * TN + j;
      if (n < N) Ep::apply(p, m, n, acc[i][j]);
    }
  }
}

// ---- global -> register -> shared staging of tiles, 16 bytes per load where the data allow ----
// A Rows x Cols tile of a row-major matrix, held as float4s along the row. A's tile (BM x BK) is stored
// transposed (As[k][m]) so the compute loop reads four consecutive rows with one 16-byte shared load;
// B's tile (BK x BN) is stored as it is (Bs[k][n]).
template <int Rows, int Cols, int Threads>
struct StagedTile {
  static constexpr int kQuadsPerRow = Cols / 4;
  static constexpr int kPerThread = Rows * Cols / 4 / Threads;
  static_assert(Cols % 4 == 0 && (Rows * Cols / 4) % Threads == 0, "tile must split into float4s evenly");
  float4 v[kPerThread];

  // vec_ok: the matrix is 16-byte aligned and ld % 4 == 0; edge quads fall back to guarded scalar loads
  __device__ __forceinline__ void load(const float* __restrict__ src0, int ld, int row_limit, int col_limit,
                                       int r0, int c0, int tid, bool vec_ok) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      const int r = r0 + e / kQuadsPerRow, c = c0 + (e % kQuadsPerRow) * 4;
      const float* src = src0 + flat_index(r, c, ld);
      if (vec_ok && r < row_limit && c + 3 < col_limit) {
        v[i] = __ldg(reinterpret_cast<const float4*>(src));
      } else {
        const bool row = r < row_limit;
        v[i].x = (row && c + 0 < col_limit) ? src[0] : 0.f;
        v[i].y = (row && c + 1 < col_limit) ? src[1] : 0.f;
        v[i].z = (row && c + 2 < col_limit) ? src[2] : 0.f;
        v[i].w = (row && c + 3 < col_limit) ? src[3] : 0.f;
      }
    }
  }

  template <int Ld>
  __device__ __forceinline__ void store_transposed(float (*dst)[Ld], int tid) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      const int r = e / kQuadsPerRow, c = (e % kQuadsPerRow) * 4;
      dst[c + 0][r] = v[i].x;
      dst[c + 1][r] = v[i].y;
      dst[c + 2][r] = v[i].z;
      dst[c + 3][r] = v[i].w;
    }
  }

  template <int Ld>
  __device__ __forceinline__ void store(float (*dst)[Ld], int tid) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int e = tid + i * Threads;
      *reinterpret_cast<float4*>(&dst[e / kQuadsPerRow][(e % kQuadsPerRow) * 4]) = v[i];
    }
  }
};

// ---- rung "vectorized": 16-byte global loads and stores, A transposed in shared memory ----
// reg_tile_2d_db's block and thread tiles; the next tile waits in registers while this one is used,
// and every shared read in the inner loop is a 16-byte load (two for A, two for B per k step).
template <class Ep, int BM = kVecBM, int BN = kVecBN, int BK = kVecBK, int TM = kVecTM, int TN = kVecTN,
          int PadA = kVecPadA>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), 2) gemm_vectorized(FRAGLAB_SIMT_GEMM_PARAMS) {
  constexpr int kThreadsX = BN / TN, kThreads = (BM / TM) * (BN / TN);
  static_assert(TM % 4 == 0 && TN % 4 == 0 && (BM + PadA) % 4 == 0, "16-byte shared reads need aligned rows");
  __shared__ __align__(16) float As[2][BK][BM + PadA];  // transposed: As[k][m]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreadsX + tx;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = (lda % 4 == 0) && aligned16(A);
  const bool b_vec = (ldb % 4 == 0) && aligned16(B);

  StagedTile<BM, BK, kThreads> ta;
  StagedTile<BK, BN, kThreads> tb;
  ta.load(A, lda, M, K, m0, 0, tid, a_vec);
  tb.load(B, ldb, K, N, 0, n0, tid, b_vec);
  ta.store_transposed(As[0], tid);
  tb.store(Bs[0], tid);
  __syncthreads();

  float acc[TM][TN] = {};
  int stage = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) {  // in flight while this stage is multiplied
      ta.load(A, lda, M, K, m0, k0 + BK, tid, a_vec);
      tb.load(B, ldb, K, N, k0 + BK, n0, tid, b_vec);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4*>(&a[i]) = *reinterpret_cast<const float4*>(&As[stage][kk][ty * TM + i]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4*>(&b[j]) = *reinterpret_cast<const float4*>(&Bs[stage][kk][tx * TN + j]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {  // the other stage was last read before the previous barrier
      ta.store_transposed(As[stage ^ 1], tid);
      tb.store(Bs[stage ^ 1], tid);
    }
    __syncthreads();
    stage ^= 1;
  }

  const EpilogueParams p = FRAGLAB_SIMT_EPILOGUE_PARAMS;
  const bool vec_ok = output_vec_ok<Ep>(p);
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; j += 4)
      store_row4<Ep>(p, M, N, m0 + ty * TM + i, n0 + tx * TN + j,
                     make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), vec_ok);
}

// ---- rung "warp_tiled": the block tile splits into warp tiles, the warp tile into lane sub-tiles ----
// Warp tile WM x WN; its 32 lanes form a 4 x 8 grid, each lane holding IterM x IterN sub-tiles of 4 x 4
// spaced 16 rows / 32 columns apart: lane (lm, ln) of sub-tile (im, jn) owns
//   rows wm0 + 16*im + 4*lm + [0, 4),   columns wn0 + 32*jn + 4*ln + [0, 4).
// So per k step a warp reads 4 distinct A quads (64 bytes) and 8 distinct B quads (128 bytes): every
// 16-byte shared load is one conflict-free wavefront, and D is written as 128-byte row segments.
template <class Ep, int BM = kWarpBM, int BN = kWarpBN, int BK = kWarpBK, int WM = kWarpWM, int WN = kWarpWN,
          int PadA = kWarpPadA, int MinBlocks = kWarpMinBlocks>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MinBlocks) gemm_warp_tiled(FRAGLAB_SIMT_GEMM_PARAMS) {
  constexpr int kLanesM = 4, kLanesN = 8;                        // 4 x 8 = 32 lanes
  constexpr int kIterM = WM / (4 * kLanesM), kIterN = WN / (4 * kLanesN);
  constexpr int kWarpsN = BN / WN, kThreads = (BM / WM) * kWarpsN * 32;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % (4 * kLanesM) == 0 && WN % (4 * kLanesN) == 0,
                "warp tile must split into 4 x 4 lane sub-tiles");
  static_assert((BM + PadA) % 4 == 0, "16-byte shared reads need aligned rows");
  __shared__ __align__(16) float As[2][BK][BM + PadA];  // transposed: As[k][m]
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;  // inside the block tile
  const int lm = lane / kLanesN, ln = lane % kLanesN;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = (lda % 4 == 0) && aligned16(A);
  const bool b_vec = (ldb % 4 == 0) && aligned16(B);

  StagedTile<BM, BK, kThreads> ta;
  StagedTile<BK, BN, kThreads> tb;
  ta.load(A, lda, M, K, m0, 0, tid, a_vec);
  tb.load(B, ldb, K, N, 0, n0, tid, b_vec);
  ta.store_transposed(As[0], tid);
  tb.store(Bs[0], tid);
  __syncthreads();

  float acc[kIterM * 4][kIterN * 4] = {};
  int stage = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) {  // in flight while this stage is multiplied
      ta.load(A, lda, M, K, m0, k0 + BK, tid, a_vec);
      tb.load(B, ldb, K, N, k0 + BK, n0, tid, b_vec);
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[kIterM * 4], b[kIterN * 4];
#pragma unroll
      for (int im = 0; im < kIterM; ++im)
        *reinterpret_cast<float4*>(&a[4 * im]) =
            *reinterpret_cast<const float4*>(&As[stage][kk][wm0 + 4 * kLanesM * im + 4 * lm]);
#pragma unroll
      for (int jn = 0; jn < kIterN; ++jn)
        *reinterpret_cast<float4*>(&b[4 * jn]) =
            *reinterpret_cast<const float4*>(&Bs[stage][kk][wn0 + 4 * kLanesN * jn + 4 * ln]);
#pragma unroll
      for (int i = 0; i < kIterM * 4; ++i)
#pragma unroll
        for (int j = 0; j < kIterN * 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (more) {  // the other stage was last read before the previous barrier
      ta.store_transposed(As[stage ^ 1], tid);
      tb.store(Bs[stage ^ 1], tid);
    }
    __syncthreads();
    stage ^= 1;
  }

  const EpilogueParams p = FRAGLAB_SIMT_EPILOGUE_PARAMS;
  const bool vec_ok = output_vec_ok<Ep>(p);
#pragma unroll
  for (int im = 0; im < kIterM; ++im)
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int jn = 0; jn < kIterN; ++jn) {
        const int i = 4 * im + r, j = 4 * jn;
        store_row4<Ep>(p, M, N, m0 + wm0 + 4 * kLanesM * im + 4 * lm + r, n0 + wn0 + 4 * kLanesN * jn + 4 * ln,
                       make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]), vec_ok);
      }
}

}  // namespace simt
}  // namespace fraglab
