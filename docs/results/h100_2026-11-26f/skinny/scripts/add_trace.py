"""Add the per-block globaltimer trace (FRAGLAB_SKINNY_TRACE) to a skinny kernel source, in place (device-side only)."""
import sys
for p in sys.argv[1:]:
    s = open(p).read()
    def rep(old, new, count=1):
        global s
        assert s.count(old) == count, (p, old)
        s = s.replace(old, new)
    rep('namespace fraglab {\nnamespace skinny_gemm {\n', '''#ifdef FRAGLAB_SKINNY_TRACE
extern "C" __device__ unsigned long long fraglab_skinny_trace[4096 * 8];
__device__ __forceinline__ unsigned long long trace_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#define SKINNY_TRACE(slot) do { if (threadIdx.x == 0) fraglab_skinny_trace[blockIdx.x * 8 + (slot)] = trace_ns(); } while (0)
#else
#define SKINNY_TRACE(slot) do {} while (0)
#endif
namespace fraglab {
namespace skinny_gemm {
''')
    rep('  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n', '''  SKINNY_TRACE(0);
#ifdef FRAGLAB_SKINNY_TRACE
  if (threadIdx.x == 0) { unsigned smid; asm volatile("mov.u32 %0, %%smid;" : "=r"(smid)); fraglab_skinny_trace[blockIdx.x * 8 + 7] = smid; }
#endif
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
''')
    rep('    if (b_by_tma) mbar_wait_at(full_bar + 8 * (it % kStages), (it / kStages) & 1);\n',
        '    if (b_by_tma) mbar_wait_at(full_bar + 8 * (it % kStages), (it / kStages) & 1);\n'
        '    if (it == 0) SKINNY_TRACE(1);\n    if (it == count / 2) SKINNY_TRACE(2);\n')
    rep('  copy_wait<0>();\n  __syncthreads();   // every warp is done with the ring',
        '  SKINNY_TRACE(3);\n  copy_wait<0>();\n  __syncthreads();   // every warp is done with the ring')
    rep('  } else {\n    __syncthreads();\n  }\n', '  } else {\n    __syncthreads();\n  }\n  SKINNY_TRACE(4);\n')
    if '  if (splits > 1) cluster_sync();   // no block leaves' in s:
        rep('  if (splits > 1) cluster_sync();   // no block leaves', '  SKINNY_TRACE(5);\n  if (splits > 1) cluster_sync();   // no block leaves')
    else:
        rep('  // no block leaves while another still reads its shared memory\n', '  SKINNY_TRACE(5);\n  // no block leaves while another still reads its shared memory\n')
    rep('}\n\n}  // namespace skinny_gemm', '  SKINNY_TRACE(6);\n}\n\n}  // namespace skinny_gemm')
    open(p, 'w').write(s)
