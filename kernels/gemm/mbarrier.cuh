// Shared by the GEMM kernels that take operands by TMA (wgmma.cu, skinny.cu): the tensor map's by-value type and
// the wait on a shared-memory mbarrier's phase.
#pragma once

namespace fraglab {

// CUtensorMap's size and alignment; the launcher fills it with cuTensorMapEncodeTiled and passes it by value.
struct alignas(64) TmaMap {
  unsigned long long words[16];
};

// Returns once the phase of parity `parity` of the mbarrier at shared address `bar` has completed (a fresh barrier
// counts parity 1 as completed).
__device__ __forceinline__ void mbar_wait_at(unsigned bar, unsigned parity) {
  unsigned done;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

}  // namespace fraglab
