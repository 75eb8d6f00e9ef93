// Register-only tensor-core rate probes (`fraglab peak`) and the queue spin used by fraglab/bench.py.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Busy-waits `ns` nanoseconds on one thread: launches queued behind it then run back to back,
// so CUDA events around each of them time the GPU only, not the host's launch cost.
extern "C" __global__ void fraglab_spin(long long ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < static_cast<unsigned long long>(ns)) {
  }
}

// ---------------------------------------------------------------------------------------------
// Register-only tensor-core rates. Each warp holds 2 A and 4 B fragments loaded from two separate
// buffers (so the compiler cannot share or shuffle registers between them) and updates 2 x 4
// independent accumulators per iteration. At the end every element of every accumulator is summed
// into one fragment that is stored whole: no MMA output is dead, so none can be dropped.

namespace fraglab {

constexpr int kPeakA = 2, kPeakB = 4;  // 8 independent accumulator chains per warp

// Elem: element type in memory; FragT: the fragment's type argument (differs for tf32).
template <int FM, int FN, int FK, typename Elem, typename FragT, typename Acc>
__device__ __forceinline__ void peak_wmma_body(const Elem* a_src, const Elem* b_src, Acc* out, int iters) {
  using namespace nvcuda;
  const int warp_global = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::fragment<wmma::matrix_a, FM, FN, FK, FragT, wmma::row_major> a[kPeakA];
  wmma::fragment<wmma::matrix_b, FM, FN, FK, FragT, wmma::col_major> b[kPeakB];
  wmma::fragment<wmma::accumulator, FM, FN, FK, Acc> acc[kPeakA][kPeakB];
#pragma unroll
  for (int i = 0; i < kPeakA; ++i) wmma::load_matrix_sync(a[i], a_src + i * FM * FK, FK);
#pragma unroll
  for (int j = 0; j < kPeakB; ++j) wmma::load_matrix_sync(b[j], b_src + j * FN * FK, FK);
#pragma unroll
  for (int i = 0; i < kPeakA; ++i)
#pragma unroll
    for (int j = 0; j < kPeakB; ++j) wmma::fill_fragment(acc[i][j], static_cast<Acc>(0));
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < kPeakA; ++i)
#pragma unroll
      for (int j = 0; j < kPeakB; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < kPeakA; ++i)
#pragma unroll
    for (int j = 0; j < kPeakB; ++j)
      if (i + j > 0) {
#pragma unroll
        for (int t = 0; t < acc[0][0].num_elements; ++t) acc[0][0].x[t] += acc[i][j].x[t];
      }
  wmma::store_matrix_sync(out + warp_global * FM * FN, acc[0][0], FN, wmma::mem_row_major);
}

}  // namespace fraglab

extern "C" __global__ void peak_wmma_f16_f32(const __half* a, const __half* b, float* out, int iters) {
  fraglab::peak_wmma_body<16, 16, 16, __half, __half, float>(a, b, out, iters);
}
extern "C" __global__ void peak_wmma_f16_f16(const __half* a, const __half* b, __half* out, int iters) {
  fraglab::peak_wmma_body<16, 16, 16, __half, __half, __half>(a, b, out, iters);
}
extern "C" __global__ void peak_wmma_bf16_f32(const __nv_bfloat16* a, const __nv_bfloat16* b, float* out, int iters) {
  fraglab::peak_wmma_body<16, 16, 16, __nv_bfloat16, __nv_bfloat16, float>(a, b, out, iters);
}
extern "C" __global__ void peak_wmma_tf32_f32(const float* a, const float* b, float* out, int iters) {
  fraglab::peak_wmma_body<16, 16, 8, float, nvcuda::wmma::precision::tf32, float>(a, b, out, iters);
}
extern "C" __global__ void peak_wmma_u8_s32(const unsigned char* a, const unsigned char* b, int* out, int iters) {
  fraglab::peak_wmma_body<16, 16, 16, unsigned char, unsigned char, int>(a, b, out, iters);
}

// PTX mma.sync.m16n8k16 f16 x f16 -> f32 on raw registers: A 4 x b32, B 2 x b32, C/D 4 x f32 per thread.
extern "C" __global__ void peak_mma_m16n8k16_f16_f32(const unsigned* a_src, const unsigned* b_src, float* out,
                                                     int iters) {
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned a[fraglab::kPeakA][4], b[fraglab::kPeakB][2];
  float acc[fraglab::kPeakA][fraglab::kPeakB][4];
#pragma unroll
  for (int i = 0; i < fraglab::kPeakA; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) a[i][r] = a_src[(i * 4 + r) * 32 + threadIdx.x % 32];
#pragma unroll
  for (int j = 0; j < fraglab::kPeakB; ++j)
#pragma unroll
    for (int r = 0; r < 2; ++r) b[j][r] = b_src[(j * 2 + r) * 32 + threadIdx.x % 32];
#pragma unroll
  for (int i = 0; i < fraglab::kPeakA; ++i)
#pragma unroll
    for (int j = 0; j < fraglab::kPeakB; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < fraglab::kPeakA; ++i)
#pragma unroll
      for (int j = 0; j < fraglab::kPeakB; ++j)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
            : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
  }
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int i = 0; i < fraglab::kPeakA; ++i)
#pragma unroll
    for (int j = 0; j < fraglab::kPeakB; ++j) {
      sum.x += acc[i][j][0];
      sum.y += acc[i][j][1];
      sum.z += acc[i][j][2];
      sum.w += acc[i][j][3];
    }
  reinterpret_cast<float4*>(out)[tid] = sum;
}
