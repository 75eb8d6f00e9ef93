// DRAM read-rate probes (`fraglab peak --memory`): each launch reads a buffer once, the way a decode GEMM reads its
// weight, and nothing else. Every 32-bit word is summed (mod 2^64) into one partial per block, so no load is dead
// and the host can check that each byte was read exactly once.
//
// fraglab_read_ldg: every thread of a full grid issues kUnroll 16-byte non-coherent loads at a time (grid-stride),
//   the classic way to find a GPU's read ceiling.
// fraglab_read_bulk: one block per SM streams its share of kChunk-byte pieces into a kStages-deep shared-memory ring
//   with cp.async.bulk on mbarriers (one producer thread; consumer warps sum each stage and free it), as the wgmma
//   and skinny GEMMs stream their weight: the ceiling of that way of reading.
#include "gemm/mbarrier.cuh"

namespace fraglab_dram_read {

constexpr int kThreads = 256;          // fraglab_read_ldg's block
constexpr int kUnroll = 4;             // 16-byte loads in flight per thread: 16 KB per block
constexpr int kChunk = 16384;          // fraglab_read_bulk: bytes per cp.async.bulk
constexpr int kStages = 8;             // ring depth: 128 KB in flight per SM
constexpr int kConsumerWarps = 4;
constexpr int kBulkThreads = 32 * (1 + kConsumerWarps);   // warp 0 produces
constexpr int kBulkSmem = kStages * kChunk;               // the launcher's dynamic shared memory

__device__ __forceinline__ uint4 load_once(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned long long words(uint4 v) {
  return static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
}

// The block's sum of `s` into partials[blockIdx.x] (every thread of the block calls it).
__device__ __forceinline__ void block_sum(unsigned long long s, unsigned long long* partials) {
  __shared__ unsigned long long warp_sums[32];
  for (int offset = 16; offset; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if ((threadIdx.x & 31) == 0) warp_sums[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
    for (int w = 0; w < warps; ++w) total += warp_sums[w];
    partials[blockIdx.x] = total;
  }
}

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

}  // namespace fraglab_dram_read

using namespace fraglab_dram_read;

// `n16` 16-byte words at `src` (16-byte aligned); partials: gridDim.x sums.
extern "C" __global__ void __launch_bounds__(kThreads) fraglab_read_ldg(const uint4* __restrict__ src, long long n16,
                                                                       unsigned long long* partials) {
  const long long stride = static_cast<long long>(gridDim.x) * kThreads;
  long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  unsigned long long s = 0;
  for (; i + (kUnroll - 1) * stride < n16; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_once(src + i + u * stride);   // all issued before any is used
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) s += words(v[u]);
  }
  for (; i < n16; i += stride) s += words(load_once(src + i));
  block_sum(s, partials);
}

// `bytes` (a multiple of 16) at `src` (16-byte aligned): piece c of ceil(bytes / kChunk) goes to block c % gridDim.x,
// so the blocks walk the buffer side by side; partials: gridDim.x sums.
extern "C" __global__ void __launch_bounds__(kBulkThreads) fraglab_read_bulk(const unsigned char* __restrict__ src,
                                                                            long long bytes,
                                                                            unsigned long long* partials) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();   // cp.async.bulk is sm_90's: fraglab.bench.memory offers this reader on sm_90 and later only
#else
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  const long long pieces = (bytes + kChunk - 1) / kChunk;
  const long long mine = pieces > blockIdx.x ? (pieces - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&full[s])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(&empty[s])), "r"(kConsumerWarps)
                   : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");   // the async proxy sees the barriers
  }
  __syncthreads();
  unsigned long long s = 0;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      for (long long j = 0; j < mine; ++j) {
        const int stage = static_cast<int>(j % kStages);
        const unsigned round = static_cast<unsigned>(j / kStages);
        fraglab::mbar_wait_at(smem_address(&empty[stage]), (round & 1) ^ 1);   // a fresh barrier: parity 1 is done
        const long long offset = (blockIdx.x + j * gridDim.x) * static_cast<long long>(kChunk);
        const unsigned size = static_cast<unsigned>(min(static_cast<long long>(kChunk), bytes - offset));
        const unsigned bar = smem_address(&full[stage]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(size) : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                smem_address(ring + stage * kChunk)),
            "l"(src + offset), "r"(size), "r"(bar)
            : "memory");
      }
    }
  } else {
    const int lane = threadIdx.x - 32;   // 0 .. 32 * kConsumerWarps - 1
    for (long long j = 0; j < mine; ++j) {
      const int stage = static_cast<int>(j % kStages);
      const unsigned round = static_cast<unsigned>(j / kStages);
      fraglab::mbar_wait_at(smem_address(&full[stage]), round & 1);
      const long long offset = (blockIdx.x + j * gridDim.x) * static_cast<long long>(kChunk);
      const int words16 = static_cast<int>(min(static_cast<long long>(kChunk), bytes - offset) / 16);
      const uint4* piece = reinterpret_cast<const uint4*>(ring + stage * kChunk);
      for (int w = lane; w < words16; w += 32 * kConsumerWarps) s += words(piece[w]);
      __syncwarp();
      if ((lane & 31) == 0)
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(&empty[stage])) : "memory");
    }
  }
  block_sum(s, partials);
#endif
}
