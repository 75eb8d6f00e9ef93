// Probe kernel for Hopper wgmma (sm_90a): one block = one warpgroup = one experiment.
//
// Each block stages its A and B tiles in shared memory (a code image, or zeros plus one "hot"
// element), optionally loads a register-sourced A, runs ONE wgmma.mma_async with D = A * B
// (scale-d = 0), then dumps every accumulator register and/or records which registers are nonzero
// (one-hot experiments: a grid of thousands of blocks then needs no large output).
//
// The instruction comes from a generated policy struct (fraglab/apis/wgmma_probe.py writes one per
// shape/type/transpose, since the register list of m64nNk* grows with N):
//   struct Op { using Acc = float | unsigned;  // accumulator register type
//               static constexpr int REGS;        // 32-bit accumulator registers per thread
//               static constexpr bool REG_A;      // A from registers (4 x b32 per thread)
//               __device__ static void run(Acc (&d)[REGS], const unsigned (&a)[4],
//                                          unsigned long long desc_a, unsigned long long desc_b); };

namespace fraglab_wgmma {

constexpr int THREADS = 128;
constexpr int MAX_HITS = 4;      // nonzero registers recorded per one-hot block
constexpr int ALIGN = 1024;      // 128B swizzle repeats every 1024 bytes: tiles start there (base offset 0)

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ unsigned long long descriptor(unsigned long long fields, unsigned addr) {
    // bits 0-13: start address >> 4 (the encode keeps address bits 4..17)
    return fields | static_cast<unsigned long long>((addr & 0x3FFFFu) >> 4);
}

__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned bits_of(unsigned v) { return v; }

// Copy a tile image (or zeros) into shared memory with 16-byte stores, then set the hot element.
__device__ void stage(unsigned char* region, int bytes, const unsigned char* img, int hot, unsigned hot_bits,
                      int elem_bytes) {
    for (int i = threadIdx.x * 16; i < bytes; i += THREADS * 16) {
        uint4 v = img ? *reinterpret_cast<const uint4*>(img + i) : make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(region + i) = v;
    }
    __syncthreads();
    if (hot >= 0 && threadIdx.x == 0) {
        for (int b = 0; b < elem_bytes; ++b) region[hot + b] = static_cast<unsigned char>(hot_bits >> (8 * b));
    }
}

template <class Op>
__global__ void __launch_bounds__(THREADS, 1) wgmma_probe(
        const unsigned char* a_img, long long a_img_stride, int a_has_img,
        const unsigned char* b_img, long long b_img_stride, int b_has_img,
        int a_bytes, int b_bytes,
        const int* a_hot, const int* b_hot, unsigned hot_bits, int elem_bytes,
        const unsigned* a_regs, int has_regs,
        const int* a_start, const int* b_start,
        unsigned long long desc_a_fields, unsigned long long desc_b_fields,
        unsigned* dump, int do_dump,
        int* hit_count, int* hit_where, unsigned* hit_word, int do_hits) {
    extern __shared__ unsigned char smem_raw[];
    // Align the A region to 1024 bytes in the shared window (dynamic shared memory is not).
    unsigned raw = smem_addr(smem_raw);
    unsigned char* a_region = smem_raw + ((ALIGN - (raw % ALIGN)) % ALIGN);
    unsigned char* b_region = a_region + ((a_bytes + ALIGN - 1) / ALIGN) * ALIGN;
    const long long blk = blockIdx.x;

    stage(a_region, a_bytes, a_has_img ? a_img + blk * a_img_stride : nullptr, a_hot[blk], hot_bits, elem_bytes);
    stage(b_region, b_bytes, b_has_img ? b_img + blk * b_img_stride : nullptr, b_hot[blk], hot_bits, elem_bytes);
    // Generic-proxy stores must be visible to the tensor core's async proxy before it reads them.
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();

    unsigned a[4] = {0u, 0u, 0u, 0u};
    if (Op::REG_A && has_regs) {
        const unsigned* src = a_regs + (blk * THREADS + threadIdx.x) * 4;
#pragma unroll
        for (int r = 0; r < 4; ++r) a[r] = src[r];
    }
    typename Op::Acc d[Op::REGS];
#pragma unroll
    for (int r = 0; r < Op::REGS; ++r) d[r] = 0;

    unsigned long long desc_a = descriptor(desc_a_fields, smem_addr(a_region) + a_start[blk]);
    unsigned long long desc_b = descriptor(desc_b_fields, smem_addr(b_region) + b_start[blk]);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    Op::run(d, a, desc_a, desc_b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

    if (do_dump) {
        unsigned* out = dump + (blk * THREADS + threadIdx.x) * Op::REGS;
#pragma unroll
        for (int r = 0; r < Op::REGS; ++r) out[r] = bits_of(d[r]);
    }
    if (do_hits) {
#pragma unroll
        for (int r = 0; r < Op::REGS; ++r) {
            unsigned w = bits_of(d[r]);
            if (w != 0u) {
                int k = atomicAdd(hit_count + blk, 1);
                if (k < MAX_HITS) {
                    hit_where[blk * MAX_HITS + k] = threadIdx.x * Op::REGS + r;
                    hit_word[blk * MAX_HITS + k] = w;
                }
            }
        }
    }
}

}  // namespace fraglab_wgmma
