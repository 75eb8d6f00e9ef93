// mma.sp (sparse A) layout probes: one kernel per PTX instruction and sparsity selector.
//
// Every block is one warp running one experiment: lane l loads its A, B and C registers and its metadata
// word from words[(block * 32 + l) * regs + r], runs the instruction once and writes D the same way. The
// host (fraglab/apis/mma_sp.py) chooses every register value, the metadata included, and decodes D: this
// file holds no layout knowledge, it only moves words into the instruction and back.
//
// The asm statement always lists 4 D, 4 A, 4 B and 4 C operands (%0-%3, %4-%7, %8-%11, %12-%15), the
// metadata word (%16) and the selector (%17, an immediate); each instruction names only what it uses.

namespace fl_mma_sp {

#define FL_SP_TYPE_FL_B32 unsigned
#define FL_SP_TYPE_FL_F32 float
#define FL_SP_CONS_FL_B32 "r"
#define FL_SP_CONS_FL_F32 "f"

#define FL_SP_D2 "{%0,%1}"
#define FL_SP_D4 "{%0,%1,%2,%3}"
#define FL_SP_A2 "{%4,%5}"
#define FL_SP_A4 "{%4,%5,%6,%7}"
#define FL_SP_B2 "{%8,%9}"
#define FL_SP_B4 "{%8,%9,%10,%11}"
#define FL_SP_C2 "{%12,%13}"
#define FL_SP_C4 "{%12,%13,%14,%15}"

// NAME: the C++ name; SP: ".sp::ordered_metadata" or ".sp"; INSTR: the PTX after "mma<SP>.sync.aligned.";
// RA/RB/RC: 32-bit registers per lane; CD: the accumulator's register kind.
#define FL_MMA_SP(NAME, SP, INSTR, RA, RB, RC, CD, OPERANDS)                                           \
  struct NAME {                                                                                        \
    using cd_t = FL_SP_TYPE_##CD;                                                                      \
    static constexpr int a = RA, b = RB, c = RC;                                                       \
    template <int Sel>                                                                                 \
    __device__ static void run(cd_t* d, const unsigned* x, const unsigned* y, const cd_t* z,          \
                               unsigned e) {                                                           \
      asm volatile("mma" SP ".sync.aligned." INSTR " " OPERANDS ", %16, %17;"                          \
                   : "=" FL_SP_CONS_##CD(d[0]), "=" FL_SP_CONS_##CD(d[1]), "=" FL_SP_CONS_##CD(d[2]),  \
                     "=" FL_SP_CONS_##CD(d[3])                                                         \
                   : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]), "r"(y[2]),      \
                     "r"(y[3]), FL_SP_CONS_##CD(z[0]), FL_SP_CONS_##CD(z[1]),                          \
                     FL_SP_CONS_##CD(z[2]), FL_SP_CONS_##CD(z[3]), "r"(e), "n"(Sel));                  \
    }                                                                                                  \
  };

#define FL_ORD ".sp::ordered_metadata"
#define FL_SP_OPS(D, A, B, C) D ", " A ", " B ", " C

// f16 accumulators travel as packed pairs (FL_B32): slot 2r is the low half of register r.
#define FL_SP_BOTH(NAME, INSTR, RA, RB, RC, CD, OPERANDS)   \
  FL_MMA_SP(NAME, FL_ORD, INSTR, RA, RB, RC, CD, OPERANDS) \
  FL_MMA_SP(NAME##_unordered, ".sp", INSTR, RA, RB, RC, CD, OPERANDS)

FL_SP_BOTH(m16n8k16_f32_f16, "m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A2, FL_SP_B2, FL_SP_C4))
FL_SP_BOTH(m16n8k16_f16_f16, "m16n8k16.row.col.f16.f16.f16.f16", 2, 2, 2, FL_B32, FL_SP_OPS(FL_SP_D2, FL_SP_A2, FL_SP_B2, FL_SP_C2))
FL_SP_BOTH(m16n8k32_f32_f16, "m16n8k32.row.col.f32.f16.f16.f32", 4, 4, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))
FL_SP_BOTH(m16n8k32_f16_f16, "m16n8k32.row.col.f16.f16.f16.f16", 4, 4, 2, FL_B32, FL_SP_OPS(FL_SP_D2, FL_SP_A4, FL_SP_B4, FL_SP_C2))
FL_SP_BOTH(m16n8k16_f32_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32", 2, 2, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A2, FL_SP_B2, FL_SP_C4))
FL_SP_BOTH(m16n8k32_f32_bf16, "m16n8k32.row.col.f32.bf16.bf16.f32", 4, 4, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))
FL_SP_BOTH(m16n8k32_s32_s8, "m16n8k32.row.col.s32.s8.s8.s32", 2, 2, 4, FL_B32, FL_SP_OPS(FL_SP_D4, FL_SP_A2, FL_SP_B2, FL_SP_C4))
FL_SP_BOTH(m16n8k64_s32_s8, "m16n8k64.row.col.s32.s8.s8.s32", 4, 4, 4, FL_B32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))
FL_SP_BOTH(m16n8k32_s32_u8, "m16n8k32.row.col.s32.u8.u8.s32", 2, 2, 4, FL_B32, FL_SP_OPS(FL_SP_D4, FL_SP_A2, FL_SP_B2, FL_SP_C4))
FL_SP_BOTH(m16n8k64_s32_u8, "m16n8k64.row.col.s32.u8.u8.s32", 4, 4, 4, FL_B32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))

// fp8: only the ordered-metadata form assembles for sm_90, and only with an f32 accumulator.
FL_MMA_SP(m16n8k64_f32_e4m3, FL_ORD, "m16n8k64.row.col.f32.e4m3.e4m3.f32", 4, 4, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))
FL_MMA_SP(m16n8k64_f32_e5m2, FL_ORD, "m16n8k64.row.col.f32.e5m2.e5m2.f32", 4, 4, 4, FL_F32, FL_SP_OPS(FL_SP_D4, FL_SP_A4, FL_SP_B4, FL_SP_C4))

__device__ __forceinline__ unsigned from_word(unsigned w, unsigned) { return w; }
__device__ __forceinline__ float from_word(unsigned w, float) { return __uint_as_float(w); }
__device__ __forceinline__ unsigned to_word(unsigned v) { return v; }
__device__ __forceinline__ unsigned to_word(float v) { return __float_as_uint(v); }

}  // namespace fl_mma_sp

// One experiment per block (blockDim.x == 32). a/b/c/d: (blocks, 32, regs); e: (blocks, 32) metadata words.
template <class Op, int Sel>
__global__ void mma_sp_probe(const unsigned* a, const unsigned* b, const unsigned* c, const unsigned* e,
                             unsigned* d) {
  using cd_t = typename Op::cd_t;
  const long base = static_cast<long>(blockIdx.x) * 32 + threadIdx.x;
  unsigned x[4] = {}, y[4] = {};
  cd_t z[4] = {}, out[4] = {};
  for (int r = 0; r < Op::a; ++r) x[r] = a[base * Op::a + r];
  for (int r = 0; r < Op::b; ++r) y[r] = b[base * Op::b + r];
  for (int r = 0; r < Op::c; ++r) z[r] = fl_mma_sp::from_word(c[base * Op::c + r], cd_t{});
  Op::template run<Sel>(out, x, y, z, e[base]);
  for (int r = 0; r < Op::c; ++r) d[base * Op::c + r] = fl_mma_sp::to_word(out[r]);
}
