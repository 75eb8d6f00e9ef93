// ldmatrix / stmatrix / movmatrix probes: move 16-bit codes between shared memory and registers.
//
// Every block is one warp running one experiment. Shared memory holds FL_TILE_ROWS rows of eight
// b16 elements (16 bytes each); lane l gives the address of row lane_row[block * 32 + l]. The host
// (fraglab/apis/ldmatrix.py) chooses the tile, the row of every lane and the register contents, and
// decodes the result: this file holds no layout knowledge.

constexpr int FL_TILE_ROWS = 64;
constexpr int FL_TILE = FL_TILE_ROWS * 8;

namespace fl_ld {

__device__ __forceinline__ unsigned row_address(const unsigned short* tile, const int* lane_row) {
  const int row = lane_row[blockIdx.x * 32 + threadIdx.x];
  return static_cast<unsigned>(__cvta_generic_to_shared(tile + 8 * row));
}

template <int NUM, bool TRANS> __device__ __forceinline__ void ldmatrix(unsigned* r, unsigned addr) {
  if constexpr (NUM == 1 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
  if constexpr (NUM == 1 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr));
  if constexpr (NUM == 2 && !TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
  if constexpr (NUM == 2 && TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
  if constexpr (NUM == 4 && !TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
  if constexpr (NUM == 4 && TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

template <int NUM, bool TRANS> __device__ __forceinline__ void stmatrix(unsigned addr, const unsigned* r) {
  if constexpr (NUM == 1 && !TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
  if constexpr (NUM == 1 && TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
  if constexpr (NUM == 2 && !TRANS)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
  if constexpr (NUM == 2 && TRANS)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
  if constexpr (NUM == 4 && !TRANS)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};"
                 :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  if constexpr (NUM == 4 && TRANS)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
                 :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

__device__ __forceinline__ void fill_tile(unsigned short* tile, const unsigned short* tiles) {
  for (int i = threadIdx.x; i < FL_TILE; i += 32) tile[i] = tiles[static_cast<long>(blockIdx.x) * FL_TILE + i];
  __syncwarp();  // every lane reads rows other lanes wrote
}

}  // namespace fl_ld

// tiles: (blocks, FL_TILE) b16; lane_row: (blocks, 32); out: (blocks, 32, NUM) registers.
template <int NUM, bool TRANS>
__global__ void ldmatrix_probe(const unsigned short* tiles, const int* lane_row, unsigned* out) {
  __shared__ alignas(16) unsigned short tile[FL_TILE];
  fl_ld::fill_tile(tile, tiles);
  unsigned r[4];
  fl_ld::ldmatrix<NUM, TRANS>(r, fl_ld::row_address(tile, lane_row));
  for (int j = 0; j < NUM; ++j) out[(static_cast<long>(blockIdx.x) * 32 + threadIdx.x) * NUM + j] = r[j];
}

// regs: (blocks, 32, NUM); tiles_out: (blocks, FL_TILE), rows nobody stores to keep 0xFFFF.
template <int NUM, bool TRANS>
__global__ void stmatrix_probe(const unsigned* regs, const int* lane_row, unsigned short* tiles_out) {
  __shared__ alignas(16) unsigned short tile[FL_TILE];
  for (int i = threadIdx.x; i < FL_TILE; i += 32) tile[i] = 0xFFFFu;
  __syncwarp();
  unsigned r[4];
  for (int j = 0; j < NUM; ++j) r[j] = regs[(static_cast<long>(blockIdx.x) * 32 + threadIdx.x) * NUM + j];
  fl_ld::stmatrix<NUM, TRANS>(fl_ld::row_address(tile, lane_row), r);
  __syncwarp();  // lanes copy out rows other lanes stored
  for (int i = threadIdx.x; i < FL_TILE; i += 32) tiles_out[static_cast<long>(blockIdx.x) * FL_TILE + i] = tile[i];
}

// FROM_MEMORY: the input fragment comes from ldmatrix.x1 (anchored by addresses); otherwise from regs.
template <bool FROM_MEMORY>
__global__ void movmatrix_probe(const unsigned short* tiles, const int* lane_row, const unsigned* regs, unsigned* out) {
  __shared__ alignas(16) unsigned short tile[FL_TILE];
  const long lane = static_cast<long>(blockIdx.x) * 32 + threadIdx.x;
  unsigned r[1];
  if constexpr (FROM_MEMORY) {
    fl_ld::fill_tile(tile, tiles);
    fl_ld::ldmatrix<1, false>(r, fl_ld::row_address(tile, lane_row));
  } else {
    r[0] = regs[lane];
  }
  unsigned moved;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(moved) : "r"(r[0]));
  out[lane] = moved;
}

// ---- ldmatrix-fed mma.sync: the memory anchor of the mma fragments ---------------------------------
// A (M x K, row-major bytes) and B (stored N x K, i.e. B column-major) sit in shared memory; ldmatrix
// fills the registers (lane 8j + r names row r of 8x8-b16 matrix j), mma.sync multiplies, D is written
// raw. The host reads D through the accumulator model and compares with float64 A @ B + C.
#include "mma.cu"

// AX/BX: matrices per ldmatrix for A/B; M16: A has 16 rows (matrix j: rows 8*(j&1).., 16-byte chunk j>>1).
template <class Op, int AX, int BX, bool M16>
__global__ void mma_from_ldmatrix(const unsigned short* a_tiles, const unsigned short* b_tiles, const unsigned* c,
                                  unsigned* d) {
  constexpr int a_rows = M16 ? 16 : 8, a_row_b16 = 8 * AX / (M16 ? 2 : 1), b_row_b16 = 8 * BX;
  __shared__ alignas(16) unsigned short sa[a_rows * a_row_b16];
  __shared__ alignas(16) unsigned short sb[8 * b_row_b16];
  const long block = blockIdx.x, lane = threadIdx.x;
  for (int i = lane; i < a_rows * a_row_b16; i += 32) sa[i] = a_tiles[block * a_rows * a_row_b16 + i];
  for (int i = lane; i < 8 * b_row_b16; i += 32) sb[i] = b_tiles[block * 8 * b_row_b16 + i];
  __syncwarp();  // ldmatrix reads rows other lanes copied
  const int ja = (lane >> 3) % AX, jb = (lane >> 3) % BX, r = lane & 7;  // lanes past 8*X: ignored, kept in range
  const int a_row = M16 ? 8 * (ja & 1) + r : r, a_chunk = M16 ? ja >> 1 : ja;
  unsigned x[8] = {}, y[4] = {};
  fl_ld::ldmatrix<AX, false>(x, static_cast<unsigned>(__cvta_generic_to_shared(sa + a_row * a_row_b16 + 8 * a_chunk)));
  fl_ld::ldmatrix<BX, false>(y, static_cast<unsigned>(__cvta_generic_to_shared(sb + r * b_row_b16 + 8 * jb)));
  using cd_t = typename Op::cd_t;
  constexpr int wc = sizeof(cd_t) / 4;
  cd_t z[8] = {}, out[8] = {};
  for (int i = 0; i < Op::c; ++i) z[i] = fl_mma::from_words<cd_t>(c + ((block * 32 + lane) * Op::c + i) * wc);
  Op::run(out, x, y, z);
  for (int i = 0; i < Op::c; ++i) fl_mma::to_words(d + ((block * 32 + lane) * Op::c + i) * wc, out[i]);
}
