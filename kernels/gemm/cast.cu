// Y (f16 or bf16) = X (f32) rounded to nearest even: the one extra pass the WMMA and SIMT GEMMs take for a
// 16-bit D (they store f32; the wgmma kernel stores 16-bit D itself). NaN stays NaN, overflow goes to +-inf.
// And the other way, exactly: a 16-bit per-column bias widened to the f32 the WMMA kernel reads (the wgmma and
// skinny GEMMs read it as it is).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace fraglab {

__device__ __forceinline__ void store_rn(__half* y, float x) { *y = __float2half_rn(x); }
__device__ __forceinline__ void store_rn(__nv_bfloat16* y, float x) { *y = __float2bfloat16_rn(x); }

// Grid-stride over n contiguous elements.
template <typename Out>
__global__ void cast_f32(const float* __restrict__ x, Out* __restrict__ y, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    store_rn(y + i, x[i]);
  }
}

__device__ __forceinline__ float widen(__half x) { return __half2float(x); }
__device__ __forceinline__ float widen(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename In>
__global__ void widen_to_f32(const In* __restrict__ x, float* __restrict__ y, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = widen(x[i]);
  }
}

}  // namespace fraglab
