// Shared-memory bank probe: every warp of one block executes the same instruction with the addresses fraglab's
// model gives, UNROLL times per repetition, and thread 0 times the whole loop with clock64. With enough warps
// the shared-memory pipe is the bottleneck, so cycles per warp-instruction grow with the wavefronts it takes;
// the host calibrates that against known 1- and 32-wavefront accesses launched on the same run.
//
// addrs[i * 32 + lane]: byte offset in the warp's window that lane gives to instruction i (0xFFFFFFFF: none,
// ldmatrix/stmatrix lanes past 8*NUM pass lane 0's address, which the hardware ignores).
// Stores use one window per warp (window_bytes apart) so no two warps write one address; loads share window 0.
typedef unsigned int uint32_t;   // NVRTC has no <cstdint> without the toolkit headers

#define FL_OP_LD 0
#define FL_OP_ST 1
#define FL_OP_LDMATRIX 2
#define FL_OP_STMATRIX 3
#define FL_OP_CPASYNC 4
#define FL_UNROLL 8

template <int OP, int BYTES, int NUM, bool TRANS>
__device__ __forceinline__ void fl_smem_op(uint32_t addr, const char* gsrc, uint32_t (&r)[4]) {
    if constexpr (OP == FL_OP_LD) {
        if constexpr (BYTES == 2) {
            unsigned short h;
            asm volatile("ld.volatile.shared.u16 %0, [%1];" : "=h"(h) : "r"(addr));
            r[0] ^= h;
        } else if constexpr (BYTES == 4) {
            uint32_t a;
            asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr));
            r[0] ^= a;
        } else if constexpr (BYTES == 8) {
            uint32_t a, b;
            asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
            r[0] ^= a; r[1] ^= b;
        } else {
            uint32_t a, b, c, d;
            asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
            r[0] ^= a; r[1] ^= b; r[2] ^= c; r[3] ^= d;
        }
    } else if constexpr (OP == FL_OP_ST) {
        if constexpr (BYTES == 2) {
            asm volatile("st.volatile.shared.u16 [%0], %1;" :: "r"(addr), "h"((unsigned short)r[0]) : "memory");
        } else if constexpr (BYTES == 4) {
            asm volatile("st.volatile.shared.u32 [%0], %1;" :: "r"(addr), "r"(r[0]) : "memory");
        } else if constexpr (BYTES == 8) {
            asm volatile("st.volatile.shared.v2.u32 [%0], {%1, %2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
        } else {
            asm volatile("st.volatile.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                         :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
        }
    } else if constexpr (OP == FL_OP_LDMATRIX) {
        uint32_t a = 0, b = 0, c = 0, d = 0;
        if constexpr (NUM == 1) {
            if constexpr (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(addr));
            else asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(a) : "r"(addr));
        } else if constexpr (NUM == 2) {
            if constexpr (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
            else asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
        } else {
            if constexpr (TRANS) asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                                              : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
            else asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                              : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
        }
        r[0] ^= a; r[1] ^= b; r[2] ^= c; r[3] ^= d;
    } else if constexpr (OP == FL_OP_STMATRIX) {
        if constexpr (NUM == 1) {
            if constexpr (TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
            else asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(addr), "r"(r[0]) : "memory");
        } else if constexpr (NUM == 2) {
            if constexpr (TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
            else asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(addr), "r"(r[0]), "r"(r[1]) : "memory");
        } else {
            if constexpr (TRANS) asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
                                              :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
            else asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                              :: "r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
        }
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" :: "r"(addr), "l"(gsrc), "n"(BYTES) : "memory");
    }
}

// cycles[i]: clock64 cycles thread 0 saw around `reps` x FL_UNROLL x warps executions of instruction i.
// zero: 0 at run time, unknown to ptxas: the UNROLL copies of an instruction get addresses ptxas cannot prove
// equal, and a __syncwarp (a memory fence for the warp) ends each repetition of ldmatrix, which has no volatile
// form: otherwise ptxas merges the copies and hoists them out of the loop, timing one where the loop means many.
template <int OP, int BYTES, int NUM, bool TRANS>
__global__ void bank_probe(const uint32_t* __restrict__ addrs, int n_instr, int reps, uint32_t window_bytes,
                           int fill, uint32_t zero, const uint4* __restrict__ gsrc, long long* __restrict__ cycles,
                           uint32_t* __restrict__ sink) {
    extern __shared__ __align__(1024) unsigned char fl_smem[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(fl_smem));
    constexpr bool shared_window = OP == FL_OP_LD || OP == FL_OP_LDMATRIX;   // loads: one copy for all warps
    const uint32_t window = shared_window ? 0u : window_bytes * warp;
    if (fill) {  // a known pattern, so every load reads written memory
        const uint32_t words = (shared_window ? window_bytes : window_bytes * (blockDim.x >> 5)) / 4;
        for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) reinterpret_cast<uint32_t*>(fl_smem)[w] = w;
    }
    __syncthreads();
    uint32_t r[4] = {threadIdx.x, threadIdx.x * 3u, threadIdx.x * 5u, threadIdx.x * 7u};
    const char* src = reinterpret_cast<const char*>(gsrc + lane);
    for (int i = 0; i < n_instr; ++i) {
        uint32_t given = addrs[i * 32 + lane];
        // ldmatrix/stmatrix lanes past 8*NUM give an address the hardware ignores; other unused lanes sit out
        const bool matrix = OP == FL_OP_LDMATRIX || OP == FL_OP_STMATRIX;
        const bool active = given != 0xFFFFFFFFu || matrix;
        if (given == 0xFFFFFFFFu) given = addrs[i * 32];
        uint32_t addr[FL_UNROLL];
#pragma unroll
        for (int u = 0; u < FL_UNROLL; ++u) addr[u] = base + window + given + zero * u;
        __syncthreads();
        const long long start = clock64();
        for (int k = 0; k < reps; ++k) {
#pragma unroll
            for (int u = 0; u < FL_UNROLL; ++u)
                if (active) fl_smem_op<OP, BYTES, NUM, TRANS>(addr[u], src, r);
            if constexpr (OP == FL_OP_CPASYNC) asm volatile("cp.async.wait_all;" ::: "memory");
            if constexpr (OP == FL_OP_LDMATRIX) __syncwarp();
        }
        __syncthreads();
        if (threadIdx.x == 0) cycles[i] = clock64() - start;
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = r[0] ^ r[1] ^ r[2] ^ r[3];
}
