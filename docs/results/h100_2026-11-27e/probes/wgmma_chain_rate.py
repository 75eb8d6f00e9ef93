"""Rate of wgmma chains from shared memory per SM: m64nNk16 f16->f32 SS, W warpgroups per block, each with C
independent accumulators (groups alternate between them), 4 wgmmas per commit group, wait_group<1>; one block per SM."""
import sys, itertools
import cupy as cp

SRC = r'''
#include <cuda_fp16.h>
template <int N> struct Acc { float r[N / 2]; };
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
#define WG_N64(acc, d)                                                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                   \
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "                                                   \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"\
    " %32, %33, p, 1, 1, 0, 0;\n}\n"                                                                       \
    : "+f"(acc.r[0]),"+f"(acc.r[1]),"+f"(acc.r[2]),"+f"(acc.r[3]),"+f"(acc.r[4]),"+f"(acc.r[5]),"+f"(acc.r[6]),"+f"(acc.r[7]),\
      "+f"(acc.r[8]),"+f"(acc.r[9]),"+f"(acc.r[10]),"+f"(acc.r[11]),"+f"(acc.r[12]),"+f"(acc.r[13]),"+f"(acc.r[14]),"+f"(acc.r[15]),\
      "+f"(acc.r[16]),"+f"(acc.r[17]),"+f"(acc.r[18]),"+f"(acc.r[19]),"+f"(acc.r[20]),"+f"(acc.r[21]),"+f"(acc.r[22]),"+f"(acc.r[23]),\
      "+f"(acc.r[24]),"+f"(acc.r[25]),"+f"(acc.r[26]),"+f"(acc.r[27]),"+f"(acc.r[28]),"+f"(acc.r[29]),"+f"(acc.r[30]),"+f"(acc.r[31])\
    : "l"(d), "l"(d + 128))
#define WG_N32(acc, d)                                                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                   \
    "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "                                                   \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"                \
    : "+f"(acc.r[0]),"+f"(acc.r[1]),"+f"(acc.r[2]),"+f"(acc.r[3]),"+f"(acc.r[4]),"+f"(acc.r[5]),"+f"(acc.r[6]),"+f"(acc.r[7]),\
      "+f"(acc.r[8]),"+f"(acc.r[9]),"+f"(acc.r[10]),"+f"(acc.r[11]),"+f"(acc.r[12]),"+f"(acc.r[13]),"+f"(acc.r[14]),"+f"(acc.r[15])\
    : "l"(d), "l"(d + 128))

template <int N, int C>
__global__ void __launch_bounds__(256) chain(float* out, int iters, int warpgroups) {
  extern __shared__ __align__(1024) unsigned char smem[];
  for (int i = threadIdx.x; i < 32768 / 4; i += blockDim.x) reinterpret_cast<float*>(smem)[i] = 0.f;
  __syncthreads();
  if (threadIdx.x / 128 >= warpgroups) return;
  unsigned base = (unsigned)__cvta_generic_to_shared(smem);
  unsigned long long d = desc(base);
  Acc<N> acc[C];
  #pragma unroll
  for (int c = 0; c < C; ++c)
    #pragma unroll
    for (int i = 0; i < N / 2; ++i) acc[c].r[i] = 0.f;
  for (int it = 0; it < iters; ++it) {
    #pragma unroll
    for (int c = 0; c < C; ++c) {
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      #pragma unroll
      for (int s = 0; s < 4; ++s) {
        if constexpr (N == 64) { WG_N64(acc[c], d + 2 * s); } else { WG_N32(acc[c], d + 2 * s); }
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
    }
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float s = 0.f;
  #pragma unroll
  for (int c = 0; c < C; ++c)
    #pragma unroll
    for (int i = 0; i < N / 2; ++i) s += acc[c].r[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template __global__ void chain<64, 1>(float*, int, int);
template __global__ void chain<64, 2>(float*, int, int);
template __global__ void chain<32, 1>(float*, int, int);
template __global__ void chain<32, 2>(float*, int, int);
'''
names = ["chain<64, 1>", "chain<64, 2>", "chain<32, 1>", "chain<32, 2>"]
mod = cp.RawModule(code=SRC, options=("-arch=sm_90a", "-std=c++17"), name_expressions=names)
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
out = cp.zeros(sms * 256, cp.float32)
iters = 4000
for name in names:
    n = int(name.split("<")[1].split(",")[0]); c = int(name.split(",")[1].rstrip(">"))
    f = mod.get_function(name)
    f.max_dynamic_shared_size_bytes = 32768
    for wgs in (1, 2):
        f((sms,), (256,), (out, cp.int32(iters), cp.int32(wgs)), shared_mem=32768)
        cp.cuda.Device().synchronize()
        ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(5):
            ev0.record(); f((sms,), (256,), (out, cp.int32(iters), cp.int32(wgs)), shared_mem=32768); ev1.record(); ev1.synchronize()
            times.append(cp.cuda.get_elapsed_time(ev0, ev1) * 1e-3)
        t = sorted(times)[2]
        flops = 2 * 64 * n * 16 * 4 * c * iters * wgs * sms
        cyc_per_group = t * 1.98e9 / (iters * c)   # at the maximum clock, per group of 4 of one warpgroup
        print(f"m64n{n}k16 x4 per group, {c} accumulator(s), {wgs} warpgroup(s)/SM: {flops / t / 1e12:7.1f} TFLOP/s, "
              f"~{cyc_per_group:6.0f} cycles per group per warpgroup", flush=True)
