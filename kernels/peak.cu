// Register-only tensor-core rate probes (`fraglab peak`) and the queue spin used by fraglab/bench.py.
#include "epilogue.cuh"

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
