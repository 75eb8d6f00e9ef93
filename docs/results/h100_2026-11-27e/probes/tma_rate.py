"""How fast TMA lands 128B-swizzled boxes in one SM's shared memory from L2 (data hot: 16 MB read over and over):
one producer thread per block, a ring of S stages of B boxes of R rows x 128 bytes, a consumer warp that frees each
stage as soon as it is full (no math). Bytes landed per SM per cycle (at 1980 MHz), against box rows, boxes per
stage and ring depth; then the same from DRAM (a 2 GB tensor walked once)."""
import sys
sys.path.insert(0, ".")
import numpy as np
import cupy as cp
from fraglab.gemm.tensor_maps import encode_tma

SRC = r'''
__constant__ __align__(128) unsigned char g_map[32 * 128];   // one map per configuration: no stale cached descriptor
__device__ __forceinline__ unsigned su32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n.reg .pred p;\nW: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra W;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}
extern "C" __global__ void __launch_bounds__(64) tma_rate(int box_rows, int boxes, int stages, int iters, int k_blocks,
                                                          int row_bands, int band_rows, int map_index, int* sink) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) unsigned long long full[32], empty[32];
  const int stage_bytes = boxes * box_rows * 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(su32(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(su32(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int band = blockIdx.x % row_bands;
  if (threadIdx.x == 0) {
    for (int it = 0; it < iters; ++it) {
      const int s = it % stages;
      wait_parity(su32(&empty[s]), ((it / stages) & 1) ^ 1);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(su32(&full[s])), "r"(stage_bytes) : "memory");
      const int kb = it % k_blocks;
      for (int j = 0; j < boxes; ++j) {
        const int row = band * band_rows + j * box_rows;
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(su32(smem + s * stage_bytes + j * box_rows * 128)), "l"((unsigned long long)(g_map + map_index * 128)),
                        "r"(kb * 64), "r"(row), "r"(su32(&full[s])) : "memory");
      }
    }
  } else if (threadIdx.x == 32) {
    int acc = 0;
    for (int it = 0; it < iters; ++it) {
      const int s = it % stages;
      wait_parity(su32(&full[s]), (it / stages) & 1);
      acc += smem[s * stage_bytes + (it & 127)];
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(su32(&empty[s])) : "memory");
    }
    sink[blockIdx.x] = acc;
  }
}
'''
mod = cp.RawModule(code=SRC, options=("-arch=sm_90a",))
f = mod.get_function("tma_rate")
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
sink = cp.zeros(4 * sms, cp.int32)


slot = -1


def run(rows, k, box_rows, boxes, stages, iters, blocks, reps=5):
    x = cp.random.random((rows, k), dtype=cp.float32).astype(cp.float16)
    tmap = encode_tma(x.data.ptr, "f16", k, rows, 64, box_rows)
    global slot
    slot += 1
    cmap = mod.get_global("g_map") + slot * 128
    raw = np.frombuffer(tmap.tobytes(), np.uint8).copy()
    cmap.copy_from_host(raw.ctypes.data, 128)
    band_rows = box_rows * boxes
    bands = rows // band_rows
    smem = stages * boxes * box_rows * 128
    f.max_dynamic_shared_size_bytes = smem
    args = (cp.int32(box_rows), cp.int32(boxes), cp.int32(stages), cp.int32(iters), cp.int32(k // 64),
            cp.int32(bands), cp.int32(band_rows), cp.int32(slot), sink)
    f((blocks,), (64,), args, shared_mem=smem)
    cp.cuda.Device().synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        e0.record(); f((blocks,), (64,), args, shared_mem=smem); e1.record(); e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
    t = sorted(ts)[reps // 2]
    landed = blocks * iters * boxes * box_rows * 128
    per_sm = landed / t / min(blocks, sms) / 1.98e9
    return t, landed / t / 1e12, per_sm


print("hot: 2048 x 4096 f16 (16 MB), every block walks K over its band again and again")
for box_rows, boxes, stages in ((64, 1, 4), (64, 1, 8), (64, 1, 12), (64, 1, 16), (64, 2, 6), (64, 2, 8), (64, 3, 6),
                                (128, 1, 6), (128, 1, 12), (32, 1, 16), (32, 2, 12), (256, 1, 4), (256, 1, 6)):
    for blocks in (sms, 2 * sms) if box_rows * boxes * stages * 128 <= 110 * 1024 else (sms,):
        t, tbs, per = run(2048, 4096, box_rows, boxes, stages, 2048, blocks)
        print(f"  box {box_rows:3d} rows x{boxes} per stage, {stages:2d} stages, {blocks} blocks: {t*1e3:7.3f} ms, "
              f"{tbs:5.2f} TB/s landed, {per:5.1f} B per SM cycle", flush=True)
print("cold: 65536 x 16384 f16 (2 GB), one pass")
for box_rows, boxes, stages in ((64, 1, 12), (64, 2, 8), (128, 1, 12), (256, 1, 6)):
    rows, k = 65536, 16384
    band = box_rows * boxes
    blocks = rows // band
    iters = k // 64
    t, tbs, per = run(rows, k, box_rows, boxes, stages, iters, blocks, reps=3)
    print(f"  box {box_rows:3d} rows x{boxes} per stage, {stages:2d} stages, {blocks} blocks (one band each): "
          f"{t*1e3:7.3f} ms, {tbs:5.2f} TB/s", flush=True)
