// Hopper wgmma rate probes (`fraglab peak`, sm_90a only; the WMMA / mma.sync probes are in peak.cu).
//
// One block = kWarpgroups warpgroups. The block copies one K block of A (64 rows) and B (256 columns) from global
// memory into shared memory once, 128B-swizzled and K-major as fraglab/bench/peak.py placed them (one 128-byte
// swizzle row of K per row: 64 f16/bf16 or 128 e4m3). Each warpgroup then runs `iters` iterations of kSteps
// wgmma m64n256 into ONE accumulator (128 f32 registers per thread: there is no room for a second), each wgmma
// reading the next 32 bytes of K, as a GEMM's consumer walks a K block. The RS variants take A from registers
// (kSteps x 4 registers per thread, loaded once) instead. At the end each thread sums its 128 accumulators and
// stores the sum: every wgmma feeds the result, and the result is exactly predictable on the CPU.

#include "runtime/wgmma_operands.cuh"

namespace fraglab_peak_wgmma {

constexpr int kWarpgroups = 2;      // as the GEMM's 2 consumer warpgroups; RS uses 170 registers: no room for a 3rd
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kSteps = 4;           // wgmmas per commit group: one 128-byte swizzle row of K, a GEMM's K block
constexpr int kStepBytes = 32;      // K bytes one wgmma reads per row: the start address advances this much
constexpr int kRowBytes = 128;      // one 128B-swizzle row
constexpr int kABytes = 64 * kRowBytes;   // A: 64 rows (M) x 128 bytes of K
constexpr int kBBytes = 256 * kRowBytes;  // B: 256 columns (N) x 128 bytes of K
constexpr int kAlign = 1024;        // 128B-swizzle atoms start on 1024-byte boundaries (descriptor base offset 0)
constexpr int kSmemBytes = kBBytes + kABytes + kAlign;  // what the launcher passes as dynamic shared memory
constexpr int kAccRegs = 128;       // m64n256 f32 accumulator: 256 / 2 registers per thread
static_assert(kSmemBytes <= 48 * 1024, "above 48 KB the launcher must raise the shared-memory limit");

using fraglab::fence_proxy_async_smem;
using fraglab::smem_u32;
using fraglab::wgmma_commit;
using fraglab::wgmma_fence;
using fraglab::wgmma_wait;

// D += A * B (scale-d = 1: accumulate), B in shared memory, A from shared memory (SS: A_OPERANDS "%128, %129",
// the predicate %130) or from 4 registers per thread (RS: "{%128, %129, %130, %131}, %132", predicate %133).
// TAIL: imm-scale-a, imm-scale-b and the transpose flags the form takes (SS 16-bit: trans-a and trans-b, 0: both
// K-major; RS: trans-b; 8-bit types: none). The asm inputs follow A_OPERANDS' numbering.
#define FRAGLAB_PEAK_WGMMA(NAME, REG_A, INSTR, A_OPERANDS, PRED, TAIL, ...)                                   \
  struct NAME {                                                                                                \
    static constexpr bool kRegA = REG_A;                                                                       \
    __device__ __forceinline__ static void mma(float (&d)[kAccRegs], const unsigned (&a)[4],                   \
                                               unsigned long long desc_a, unsigned long long desc_b) {         \
      (void)a;                                                                                                 \
      (void)desc_a;                                                                                            \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n" INSTR " {" FRAGLAB_WGMMA_REGS_128        \
                   "}, " A_OPERANDS ", p" TAIL ";\n}\n"                                                        \
                   : FRAGLAB_WGMMA_F32_OPERANDS_128(d)                                                         \
                   : __VA_ARGS__);                                                                             \
    }                                                                                                          \
  };
#define FRAGLAB_PEAK_WGMMA_SS(NAME, INSTR, TAIL)                                                               \
  FRAGLAB_PEAK_WGMMA(NAME, false, INSTR, "%128, %129", "%130", TAIL, "l"(desc_a), "l"(desc_b), "n"(1))
#define FRAGLAB_PEAK_WGMMA_RS(NAME, INSTR, TAIL)                                                               \
  FRAGLAB_PEAK_WGMMA(NAME, true, INSTR, "{%128, %129, %130, %131}, %132", "%133", TAIL, "r"(a[0]), "r"(a[1]),   \
                     "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(1))

FRAGLAB_PEAK_WGMMA_SS(F16SS, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 1, 1, 0, 0")
FRAGLAB_PEAK_WGMMA_SS(Bf16SS, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 1, 1, 0, 0")
FRAGLAB_PEAK_WGMMA_SS(E4m3SS, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", ", 1, 1")
FRAGLAB_PEAK_WGMMA_RS(F16RS, "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", ", 1, 1, 0")
FRAGLAB_PEAK_WGMMA_RS(Bf16RS, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ", 1, 1, 0")

// a_src: the A tile image (kABytes, SS) or the registers (kSteps x 128 threads x 4 b32, RS: uint4 [step][thread]);
// b_src: the B tile image (kBBytes). desc_*_fields: LBO, SBO and swizzle mode of each descriptor (the start
// address is added here). out: one float per thread.
template <class Op>
__device__ __forceinline__ void peak_wgmma_body(const uint4* a_src, const uint4* b_src, float* out, int iters,
                                                unsigned long long desc_a_fields,
                                                unsigned long long desc_b_fields) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned raw = smem_u32(smem_raw);
  unsigned char* b_tile = smem_raw + ((kAlign - raw % kAlign) % kAlign);
  unsigned char* a_tile = b_tile + kBBytes;
  for (int i = threadIdx.x; i < kBBytes / 16; i += blockDim.x) reinterpret_cast<uint4*>(b_tile)[i] = b_src[i];
  unsigned a[kSteps][4];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) a[s][0] = a[s][1] = a[s][2] = a[s][3] = 0u;
  if constexpr (Op::kRegA) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint4 v = a_src[s * 128 + threadIdx.x % 128];
      a[s][0] = v.x;
      a[s][1] = v.y;
      a[s][2] = v.z;
      a[s][3] = v.w;
    }
  } else {
    for (int i = threadIdx.x; i < kABytes / 16; i += blockDim.x) reinterpret_cast<uint4*>(a_tile)[i] = a_src[i];
  }
  // The generic-proxy stores above must be visible to the tensor core's async proxy before a wgmma reads them.
  fence_proxy_async_smem();
  __syncthreads();

  unsigned long long desc_a[kSteps], desc_b[kSteps];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    desc_a[s] = desc_a_fields | (((smem_u32(a_tile) + s * kStepBytes) & 0x3FFFFu) >> 4);
    desc_b[s] = desc_b_fields | (((smem_u32(b_tile) + s * kStepBytes) & 0x3FFFFu) >> 4);
  }
  float d[kAccRegs];
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) d[i] = 0.f;
  // Orders the zeroed accumulators (and the RS A registers) before the first wgmma that reads them; later wgmmas
  // on the same accumulator are ordered by the hardware (PTX ISA, wgmma.fence).
  wgmma_fence();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) Op::mma(d, a[s], desc_a[s], desc_b[s]);
    wgmma_commit();
    // Wait for the previous iteration's group only: this one stays in flight while the next is issued, so the
    // tensor cores never drain between iterations (wait_group 0 would empty the pipe every kSteps wgmmas).
    wgmma_wait<1>();
  }
  wgmma_wait<0>();
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) sum += d[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

}  // namespace fraglab_peak_wgmma

#define FRAGLAB_PEAK_WGMMA_KERNEL(NAME, OP)                                                                    \
  extern "C" __global__ void __launch_bounds__(fraglab_peak_wgmma::kThreads, 1)                               \
      NAME(const uint4* a_src, const uint4* b_src, float* out, int iters, unsigned long long desc_a_fields,    \
           unsigned long long desc_b_fields) {                                                                 \
    fraglab_peak_wgmma::peak_wgmma_body<fraglab_peak_wgmma::OP>(a_src, b_src, out, iters, desc_a_fields,      \
                                                                 desc_b_fields);                              \
  }

FRAGLAB_PEAK_WGMMA_KERNEL(peak_wgmma_m64n256k16_f16_f32_ss, F16SS)
FRAGLAB_PEAK_WGMMA_KERNEL(peak_wgmma_m64n256k16_f16_f32_rs, F16RS)
FRAGLAB_PEAK_WGMMA_KERNEL(peak_wgmma_m64n256k16_bf16_f32_ss, Bf16SS)
FRAGLAB_PEAK_WGMMA_KERNEL(peak_wgmma_m64n256k16_bf16_f32_rs, Bf16RS)
FRAGLAB_PEAK_WGMMA_KERNEL(peak_wgmma_m64n256k32_e4m3_f32_ss, E4m3SS)
