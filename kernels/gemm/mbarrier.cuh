// Shared by the GEMM kernels that take operands by TMA (wgmma.cu, skinny.cu): the tensor map's by-value type, the
// wait on a shared-memory mbarrier's phase, a box's prefetch into L2, and programmatic dependent launch.
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

// Ask L2 to fetch the box at (c0, c1) of `map`: nothing lands in shared memory and no barrier counts it.
__device__ __forceinline__ void tma_prefetch_l2(const TmaMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1)
               : "memory");
}

// Ask L2 to fetch `bytes` (a multiple of 16) from the 16-byte aligned global address `p`.
__device__ __forceinline__ void bulk_prefetch_l2(const void* p, unsigned bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(reinterpret_cast<unsigned long long>(p)),
               "r"(bytes)
               : "memory");
}

// A cluster barrier whose arrive is relaxed, for every thread of every block (not .aligned: warps may arrive
// diverged): for a caller with nothing to publish, or whose fence already released it. The .release form puts a
// MEMBAR.ALL.GPU in every warp: ~0.6 us of a launch's start or end by the wgmma kernel's timeline. In two halves
// for a thread with work to do between its arrival and its need of the others'.
__device__ __forceinline__ void cluster_arrive_relaxed() { asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait_acquire() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
__device__ __forceinline__ void cluster_sync_relaxed() {
  cluster_arrive_relaxed();
  cluster_wait_acquire();
}

// Programmatic dependent launch (the launcher's PackedLaunch(programmatic=True)): the kernel may start while the
// previous kernel in the stream is still running. Every thread waits here before its first access to global memory
// that kernel may write or read (A, B, C, bias, D, Z); what comes before touches only shared memory, the tensor
// maps and L2 prefetches (L2 is where that kernel's writes land, so a prefetch reads nothing stale). Launched
// without the attribute, it returns at once.
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// The next kernel in the stream may be scheduled once every block of this one has said so (or exited); it waits
// in its turn (wait_for_previous_grid) for this one to finish, so saying it early is always safe. The first thread
// of a block to say it says it for the block (later ones change nothing).
__device__ __forceinline__ void let_next_grid_start() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

}  // namespace fraglab
