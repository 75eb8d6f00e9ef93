"""A small-tile decode mainloop alone: per stage one 64-row box of A and one of B (64 x 64 f16 each, 128B swizzle) by
TMA, then m64n64k16 x 4 into an accumulator. Producers: 1 or 2 threads (alternate stages); consumers: 1 or 2
warpgroups (alternate stages, each its own accumulator). Data hot in L2. Time per stage per block."""
import sys
sys.path.insert(0, ".")
import numpy as np
import cupy as cp
from fraglab.gemm.tensor_maps import encode_tma

SRC = r'''
__constant__ __align__(128) unsigned char g_map[128];
__device__ __forceinline__ unsigned su32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
#define WG_N64(acc, da, db)                                                                                     \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"                                                   \
    "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "                                                   \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31},"\
    " %32, %33, p, 1, 1, 0, 0;\n}\n"                                                                       \
    : "+f"(acc[0]),"+f"(acc[1]),"+f"(acc[2]),"+f"(acc[3]),"+f"(acc[4]),"+f"(acc[5]),"+f"(acc[6]),"+f"(acc[7]),\
      "+f"(acc[8]),"+f"(acc[9]),"+f"(acc[10]),"+f"(acc[11]),"+f"(acc[12]),"+f"(acc[13]),"+f"(acc[14]),"+f"(acc[15]),\
      "+f"(acc[16]),"+f"(acc[17]),"+f"(acc[18]),"+f"(acc[19]),"+f"(acc[20]),"+f"(acc[21]),"+f"(acc[22]),"+f"(acc[23]),\
      "+f"(acc[24]),"+f"(acc[25]),"+f"(acc[26]),"+f"(acc[27]),"+f"(acc[28]),"+f"(acc[29]),"+f"(acc[30]),"+f"(acc[31])\
    : "l"(da), "l"(db))

extern "C" __global__ void __launch_bounds__(384) mainloop(int stages, int iters, int k_blocks, int row_bands,
                                                           int producers, int consumers, float* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full[32], empty[32];
  constexpr int kStageBytes = 2 * 64 * 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(su32(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 4;" :: "r"(su32(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int band = blockIdx.x % row_bands;
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    const int p = threadIdx.x / 64;
    if (threadIdx.x % 64 == 0 && p < producers) {
      for (int it = p; it < iters; it += producers) {
        const int s = it % stages;
        wait_parity(su32(&empty[s]), ((it / stages) & 1) ^ 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(su32(&full[s])), "r"(kStageBytes) : "memory");
        const int kb = it % k_blocks;
        for (int j = 0; j < 2; ++j) {   // A rows of the band, then B rows of the next band
          asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                       :: "r"(su32(smem + s * kStageBytes + j * 8192)), "l"((unsigned long long)g_map),
                          "r"(kb * 64), "r"(((band + j) % row_bands) * 64), "r"(su32(&full[s])) : "memory");
        }
      }
    }
  } else if (wg - 1 < consumers) {
    const int c = wg - 1;
    float acc[32];
    for (int i = 0; i < 32; ++i) acc[i] = 0.f;
    int prev = -1;
    for (int it = c; it < iters; it += consumers) {
      const int s = it % stages;
      wait_parity(su32(&full[s]), (it / stages) & 1);
      const unsigned a = su32(smem + s * kStageBytes), b = a + 8192;
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      for (int kk = 0; kk < 4; ++kk) { WG_N64(acc, desc(a + kk * 32), desc(b + kk * 32)); }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      if (prev >= 0 && threadIdx.x % 32 == 0)
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(su32(&empty[prev])) : "memory");
      prev = s;
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    if (prev >= 0 && threadIdx.x % 32 == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(su32(&empty[prev])) : "memory");
    float sum = 0.f;
    for (int i = 0; i < 32; ++i) sum += acc[i];
    out[blockIdx.x * 384 + threadIdx.x] = sum;
  }
}
'''
mod = cp.RawModule(code=SRC, options=("-arch=sm_90a",))
f = mod.get_function("mainloop")
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
out = cp.zeros(sms * 384, cp.float32)
rows, k = 2048, 4096
x = (cp.random.random((rows, k), dtype=cp.float32) - 0.5).astype(cp.float16)
tmap = encode_tma(x.data.ptr, "f16", k, rows, 64, 64)
mod.get_global("g_map").copy_from_host(np.frombuffer(tmap.tobytes(), np.uint8).copy().ctypes.data, 128)
iters = 2048
print("hot (16 MB), 132 blocks, per stage: 2 boxes of 64 x 64 f16 + 4 x m64n64k16; ns per stage per block")
for stages in (6, 12):
    smem = stages * 16384
    f.max_dynamic_shared_size_bytes = smem
    for producers, consumers in ((1, 1), (2, 1), (1, 2), (2, 2)):
        args = (cp.int32(stages), cp.int32(iters), cp.int32(k // 64), cp.int32(rows // 64), cp.int32(producers),
                cp.int32(consumers), out)
        f((sms,), (384,), args, shared_mem=smem); cp.cuda.Device().synchronize()
        e0, e1 = cp.cuda.Event(), cp.cuda.Event(); ts = []
        for _ in range(5):
            e0.record(); f((sms,), (384,), args, shared_mem=smem); e1.record(); e1.synchronize()
            ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
        t = sorted(ts)[2]
        print(f"  {stages:2d} stages, {producers} producer thread(s), {consumers} consumer warpgroup(s): "
              f"{t / iters * 1e9:6.1f} ns per stage, {16384 * iters / t / 1.98e9:5.1f} B per SM cycle", flush=True)
