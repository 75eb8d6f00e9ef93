// What the wgmma GEMM (gemm/wgmma.cu) and the wgmma rate probes (bench/peak_wgmma.cu) both need: the
// accumulator operands for inline PTX (the "%0, ..., %N-1" text and the matching "+f"(d[i]) list of an f32
// accumulator of N registers per thread; m64nK: N/2 registers; 32, 64 and 128 here; macros, as the asm text must
// be a string literal), and the shared-memory address, wgmma group and proxy-fence helpers around them.
#pragma once

namespace fraglab {

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// Generic-proxy writes to shared memory (st.shared, stmatrix) made visible to the async proxy (wgmma, TMA).
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace fraglab

#define FRAGLAB_WGMMA_F32x8(d, i)                                                                              \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]),  \
      "+f"(d[i + 7])
#define FRAGLAB_WGMMA_F32_OPERANDS_32(d)                                                                       \
  FRAGLAB_WGMMA_F32x8(d, 0), FRAGLAB_WGMMA_F32x8(d, 8), FRAGLAB_WGMMA_F32x8(d, 16), FRAGLAB_WGMMA_F32x8(d, 24)
#define FRAGLAB_WGMMA_F32_OPERANDS_64(d)                                                                       \
  FRAGLAB_WGMMA_F32_OPERANDS_32(d), FRAGLAB_WGMMA_F32x8(d, 32), FRAGLAB_WGMMA_F32x8(d, 40),                    \
      FRAGLAB_WGMMA_F32x8(d, 48), FRAGLAB_WGMMA_F32x8(d, 56)
#define FRAGLAB_WGMMA_F32_OPERANDS_128(d)                                                                      \
  FRAGLAB_WGMMA_F32_OPERANDS_64(d), FRAGLAB_WGMMA_F32x8(d, 64), FRAGLAB_WGMMA_F32x8(d, 72),                    \
      FRAGLAB_WGMMA_F32x8(d, 80), FRAGLAB_WGMMA_F32x8(d, 88), FRAGLAB_WGMMA_F32x8(d, 96),                      \
      FRAGLAB_WGMMA_F32x8(d, 104), FRAGLAB_WGMMA_F32x8(d, 112), FRAGLAB_WGMMA_F32x8(d, 120)

#define FRAGLAB_WGMMA_REGS_32                                                                                  \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                     \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define FRAGLAB_WGMMA_REGS_64                                                                                  \
  FRAGLAB_WGMMA_REGS_32 ", "                                                                                   \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                           \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define FRAGLAB_WGMMA_REGS_128                                                                                 \
  FRAGLAB_WGMMA_REGS_64 ", "                                                                                   \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                           \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                           \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "               \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
