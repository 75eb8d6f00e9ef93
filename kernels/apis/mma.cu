// mma.sync layout probes: one kernel per PTX instruction, fed raw register words by the host.
//
// Every block is one warp running one experiment: lane l loads its A, B and C registers from
// words[(block * 32 + l) * regs + r], runs the instruction once and writes D the same way. The host
// (fraglab/apis/mma.py) chooses every register value (codes, one-hot, random) and decodes D, so this
// file holds no layout knowledge at all: it only moves words into the instruction and back.
//
// The asm statement always lists 8 D, 8 A, 4 B and 8 C operands (%0-%7, %8-%15, %16-%19, %20-%27);
// each instruction names only the ones it uses, so one statement fits every shape.

namespace fl_mma {

// Register kinds: 32-bit words ("r"), f32 accumulators ("f"), f64 operands ("d", two words each).
#define FL_TYPE_FL_B32 unsigned
#define FL_TYPE_FL_F32 float
#define FL_TYPE_FL_F64 double
#define FL_CONS_FL_B32 "r"
#define FL_CONS_FL_F32 "f"
#define FL_CONS_FL_F64 "d"

#define FL_D2 "{%0,%1}"
#define FL_D4 "{%0,%1,%2,%3}"
#define FL_D8 "{%0,%1,%2,%3,%4,%5,%6,%7}"
#define FL_A1 "{%8}"
#define FL_A2 "{%8,%9}"
#define FL_A4 "{%8,%9,%10,%11}"
#define FL_A8 "{%8,%9,%10,%11,%12,%13,%14,%15}"
#define FL_B1 "{%16}"
#define FL_B2 "{%16,%17}"
#define FL_B4 "{%16,%17,%18,%19}"
#define FL_C2 "{%20,%21}"
#define FL_C4 "{%20,%21,%22,%23}"
#define FL_C8 "{%20,%21,%22,%23,%24,%25,%26,%27}"

// NAME: the C++ name; INSTR: the PTX after "mma.sync.aligned."; RA/RB/RC: registers per lane
// (f64: one double each); AB/CD: register kinds of the inputs and of the accumulator.
#define FL_MMA(NAME, INSTR, RA, RB, RC, AB, CD, OPERANDS)                                              \
  struct NAME {                                                                                        \
    using ab_t = FL_TYPE_##AB;                                                                         \
    using cd_t = FL_TYPE_##CD;                                                                         \
    static constexpr int a = RA, b = RB, c = RC;                                                       \
    __device__ static void run(cd_t* d, const ab_t* x, const ab_t* y, const cd_t* z) {                 \
      asm volatile("mma.sync.aligned." INSTR " " OPERANDS ";"                                          \
                   : "=" FL_CONS_##CD(d[0]), "=" FL_CONS_##CD(d[1]), "=" FL_CONS_##CD(d[2]),           \
                     "=" FL_CONS_##CD(d[3]), "=" FL_CONS_##CD(d[4]), "=" FL_CONS_##CD(d[5]),           \
                     "=" FL_CONS_##CD(d[6]), "=" FL_CONS_##CD(d[7])                                    \
                   : FL_CONS_##AB(x[0]), FL_CONS_##AB(x[1]), FL_CONS_##AB(x[2]), FL_CONS_##AB(x[3]),   \
                     FL_CONS_##AB(x[4]), FL_CONS_##AB(x[5]), FL_CONS_##AB(x[6]), FL_CONS_##AB(x[7]),   \
                     FL_CONS_##AB(y[0]), FL_CONS_##AB(y[1]), FL_CONS_##AB(y[2]), FL_CONS_##AB(y[3]),   \
                     FL_CONS_##CD(z[0]), FL_CONS_##CD(z[1]), FL_CONS_##CD(z[2]), FL_CONS_##CD(z[3]),   \
                     FL_CONS_##CD(z[4]), FL_CONS_##CD(z[5]), FL_CONS_##CD(z[6]), FL_CONS_##CD(z[7])); \
    }                                                                                                  \
  };

// f16 accumulators travel as packed pairs (FL_B32): slot 2r is the low half of register r.
FL_MMA(m16n8k8_f32_f16, "m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, FL_B32, FL_F32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k16_f32_f16, "m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, FL_B32, FL_F32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k8_f16_f16, "m16n8k8.row.col.f16.f16.f16.f16", 2, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A2 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k16_f16_f16, "m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, FL_B32, FL_B32, FL_D2 ", " FL_A4 ", " FL_B2 ", " FL_C2)
FL_MMA(m16n8k8_f32_bf16, "m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4, FL_B32, FL_F32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k16_f32_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, FL_B32, FL_F32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k4_f32_f16_row_row, "m8n8k4.row.row.f32.f16.f16.f32", 2, 2, 8, FL_B32, FL_F32, FL_D8 ", " FL_A2 ", " FL_B2 ", " FL_C8)
FL_MMA(m8n8k4_f32_f16_row_col, "m8n8k4.row.col.f32.f16.f16.f32", 2, 2, 8, FL_B32, FL_F32, FL_D8 ", " FL_A2 ", " FL_B2 ", " FL_C8)
FL_MMA(m8n8k4_f32_f16_col_row, "m8n8k4.col.row.f32.f16.f16.f32", 2, 2, 8, FL_B32, FL_F32, FL_D8 ", " FL_A2 ", " FL_B2 ", " FL_C8)
FL_MMA(m8n8k4_f32_f16_col_col, "m8n8k4.col.col.f32.f16.f16.f32", 2, 2, 8, FL_B32, FL_F32, FL_D8 ", " FL_A2 ", " FL_B2 ", " FL_C8)
FL_MMA(m8n8k4_f16_f16_row_row, "m8n8k4.row.row.f16.f16.f16.f16", 2, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k4_f16_f16_row_col, "m8n8k4.row.col.f16.f16.f16.f16", 2, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k4_f16_f16_col_row, "m8n8k4.col.row.f16.f16.f16.f16", 2, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k4_f16_f16_col_col, "m8n8k4.col.col.f16.f16.f16.f16", 2, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k4_f32_tf32, "m16n8k4.row.col.f32.tf32.tf32.f32", 2, 1, 4, FL_B32, FL_F32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k8_f32_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, FL_B32, FL_F32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k4_f64_f64, "m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, FL_F64, FL_F64, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k4_f64_f64, "m16n8k4.row.col.f64.f64.f64.f64", 2, 1, 4, FL_F64, FL_F64, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k8_f64_f64, "m16n8k8.row.col.f64.f64.f64.f64", 4, 2, 4, FL_F64, FL_F64, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k16_f64_f64, "m16n8k16.row.col.f64.f64.f64.f64", 8, 4, 4, FL_F64, FL_F64, FL_D4 ", " FL_A8 ", " FL_B4 ", " FL_C4)
FL_MMA(m8n8k16_s32_s8, "m8n8k16.row.col.s32.s8.s8.s32", 1, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k16_s32_s8, "m16n8k16.row.col.s32.s8.s8.s32", 2, 1, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k32_s32_s8, "m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k16_s32_u8, "m8n8k16.row.col.s32.u8.u8.s32", 1, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k16_s32_u8, "m16n8k16.row.col.s32.u8.u8.s32", 2, 1, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k32_s32_u8, "m16n8k32.row.col.s32.u8.u8.s32", 4, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k32_s32_s4, "m8n8k32.row.col.s32.s4.s4.s32", 1, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k32_s32_s4, "m16n8k32.row.col.s32.s4.s4.s32", 2, 1, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k64_s32_s4, "m16n8k64.row.col.s32.s4.s4.s32", 4, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k32_s32_u4, "m8n8k32.row.col.s32.u4.u4.s32", 1, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k32_s32_u4, "m16n8k32.row.col.s32.u4.u4.s32", 2, 1, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k64_s32_u4, "m16n8k64.row.col.s32.u4.u4.s32", 4, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m8n8k128_s32_b1, "m8n8k128.row.col.s32.b1.b1.s32.and.popc", 1, 1, 2, FL_B32, FL_B32, FL_D2 ", " FL_A1 ", " FL_B1 ", " FL_C2)
FL_MMA(m16n8k128_s32_b1, "m16n8k128.row.col.s32.b1.b1.s32.and.popc", 2, 1, 4, FL_B32, FL_B32, FL_D4 ", " FL_A2 ", " FL_B1 ", " FL_C4)
FL_MMA(m16n8k256_s32_b1, "m16n8k256.row.col.s32.b1.b1.s32.and.popc", 4, 2, 4, FL_B32, FL_B32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k32_f32_e4m3, "m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 2, 4, FL_B32, FL_F32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k32_f16_e4m3, "m16n8k32.row.col.f16.e4m3.e4m3.f16", 4, 2, 2, FL_B32, FL_B32, FL_D2 ", " FL_A4 ", " FL_B2 ", " FL_C2)
FL_MMA(m16n8k32_f32_e5m2, "m16n8k32.row.col.f32.e5m2.e5m2.f32", 4, 2, 4, FL_B32, FL_F32, FL_D4 ", " FL_A4 ", " FL_B2 ", " FL_C4)
FL_MMA(m16n8k32_f16_e5m2, "m16n8k32.row.col.f16.e5m2.e5m2.f16", 4, 2, 2, FL_B32, FL_B32, FL_D2 ", " FL_A4 ", " FL_B2 ", " FL_C2)

// Word <-> register: doubles take two words, low word first (the host packs them that way).
template <class T> __device__ __forceinline__ T from_words(const unsigned* w) { return static_cast<T>(w[0]); }
template <> __device__ __forceinline__ float from_words<float>(const unsigned* w) { return __uint_as_float(w[0]); }
template <> __device__ __forceinline__ double from_words<double>(const unsigned* w) {
  return __hiloint2double(static_cast<int>(w[1]), static_cast<int>(w[0]));
}
__device__ __forceinline__ void to_words(unsigned* w, unsigned v) { w[0] = v; }
__device__ __forceinline__ void to_words(unsigned* w, float v) { w[0] = __float_as_uint(v); }
__device__ __forceinline__ void to_words(unsigned* w, double v) {
  w[0] = static_cast<unsigned>(__double2loint(v));
  w[1] = static_cast<unsigned>(__double2hiint(v));
}

}  // namespace fl_mma

// One experiment per block (blockDim.x == 32). a/b/c/d: (blocks, 32, regs * words per register).
template <class Op>
__global__ void mma_probe(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* d) {
  using ab_t = typename Op::ab_t;
  using cd_t = typename Op::cd_t;
  constexpr int wa = sizeof(ab_t) / 4, wc = sizeof(cd_t) / 4;
  const long base = static_cast<long>(blockIdx.x) * 32 + threadIdx.x;
  ab_t x[8] = {}, y[4] = {};
  cd_t z[8] = {}, out[8] = {};
  for (int r = 0; r < Op::a; ++r) x[r] = fl_mma::from_words<ab_t>(a + (base * Op::a + r) * wa);
  for (int r = 0; r < Op::b; ++r) y[r] = fl_mma::from_words<ab_t>(b + (base * Op::b + r) * wa);
  for (int r = 0; r < Op::c; ++r) z[r] = fl_mma::from_words<cd_t>(c + (base * Op::c + r) * wc);
  Op::run(out, x, y, z);
  for (int r = 0; r < Op::c; ++r) fl_mma::to_words(d + (base * Op::c + r) * wc, out[r]);
}
