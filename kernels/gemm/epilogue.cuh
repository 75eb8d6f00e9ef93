// Fused GEMM epilogue as a compile-time policy: the accumulator goes from registers to the final store.
//   pre = alpha * acc (+ beta * C[m, n]) (+ bias);   Z[m, n] = pre (if SaveZ);   D[m, n] = act(pre)
// RowColScale (the rowwise fp8 recipe, wgmma kernel only): acc is first multiplied by scale_a[m] * scale_b[n].
// BlockScale (fp8 with 1x128 scales of A and 128x128 scales of B, wgmma kernel only): the kernel scales each
// 128-deep K-block's product in its mainloop, so acc arrives here already scaled.
// Every choice (activation, bias mode, C, Z) is a template argument resolved with `if constexpr`, so a
// kernel instantiated with Epilogue<ReLU, PerN, false, false> holds only a bias add and a max.
// BiasT: the bias' element type in memory, float or (the wgmma and skinny GEMMs, per column) the inputs' 16-bit
// type, widened to float as it is read (nn.Linear's bias as it is: no conversion kernel before the GEMM).
// The numpy twin is fraglab/gemm/reference.py (exact formulas; this file approximates within the bounds that
// tests/gemm/test_activation_accuracy_gpu.py checks per element).
#pragma once

namespace fraglab {

enum class ActKind : int { None = 0, ReLU, LeakyReLU, GELU, GELUTanh, SiLU, Sigmoid, Tanh };
enum class BiasMode : int { None = 0, PerM, PerN, Full };

struct EpilogueParams {          // every pointer f32, row-major, indices (m, n) are global output coordinates
  float alpha, beta, leaky_slope;
  const float* C;    int ldc;    // read when HasC
  const float* bias; int ldbias; // PerM: bias[m]; PerN: bias[n]; Full: bias[m * ldbias + n] (BiasT elements)
  float* D;          int ldd;
  float* Z;          int ldz;    // written when SaveZ (the pre-activation)
  const float* scale_a = nullptr;  // RowColScale: a factor per row of A (M) and per column of B (N)
  const float* scale_b = nullptr;  // (BlockScale: per (row, K-block) of A and (128-column block, K-block) of B)
};

__device__ __forceinline__ long long flat_index(int m, int n, int ld) {
  return static_cast<long long>(m) * ld + n;  // 64-bit: M * ld passes 2^31 from 46341^2 on
}

constexpr float kFloatMax = 3.40282347e+38f;  // no <cfloat>/<cmath> under NVRTC; x < -kFloatMax only for -inf

// 2^x and 1/x on the MUFU unit with subnormal results flushed to 0. The non-ftz forms (what __expf and
// __fdividef compile to without -ftz) add a range test and two fix-up multiplies per call, a third of the GELU
// epilogue's instructions; no caller below can tell a subnormal from 0 (it is added to 1 or scales a result).
// An IEEE `/` or __frcp_rn would cost a compare, a branch and a called slow path per element, which serialised
// the epilogue element by element (GELU was +13 % of a 2048^3 GEMM with it); every 1/x below takes x >= 1 or +inf
// (within 1 ulp; 0 for +inf, NaN for NaN).
__device__ __forceinline__ float ex2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float rcp_ftz(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// max(x, y) that returns NaN when either is NaN: one FMNMX.NAN on sm_80+ (fmaxf would drop the NaN, and a
// compare-and-select costs two instructions).
__device__ __forceinline__ float max_nan(float x, float y) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
#else
  return x != x ? x : fmaxf(x, y);
#endif
}

__device__ __forceinline__ float relu_nan(float x) { return max_nan(x, 0.f); }

// NaN in -> NaN out for every kind (comparisons are written so that NaN takes the `x` branch).
// The smooth kinds take their limits at +-inf (x * 0 would give NaN at -inf).
template <ActKind Act>
__device__ __forceinline__ float activate(float x, float leaky_slope) {
  if constexpr (Act == ActKind::None) {
    return x;
  } else if constexpr (Act == ActKind::ReLU) {
    return relu_nan(x);
  } else if constexpr (Act == ActKind::LeakyReLU) {
    return x < 0.f ? x * leaky_slope : x;
  } else if constexpr (Act == ActKind::GELU) {
    // x * Phi(x) = relu(x) - |x| * Phi(-|x|), Phi(-|x|) = erfc(|x| / sqrt2) / 2 = t P(t) e^(-x^2 / 2) with
    // t = 1 / (1 + p |x| / sqrt2) (Abramowitz & Stegun 7.1.26, |erf error| <= 1.5e-7; P's coefficients halved,
    // p / sqrt2 and log2(e) / 2 folded in). 12 FP32 instructions and 2 MUFU: the MUFU pipe (16 per clock per SM)
    // and the issue slots then take about as long. No select: relu keeps NaN (max.NaN); a = |x| capped keeps
    // +-inf from meeting a zero (inf * 0), so D is relu(x) there: +inf at +inf, 0 at -inf.
    const float a = fminf(fabsf(x), 1e30f);
    const float t = rcp_ftz(fmaf(a, 0.2316418883f, 1.f));
    const float poly = t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 0.5307027145f, -0.7265760135f), 0.7107068705f),
                                        -0.142248368f), 0.127414796f);
    const float tail = poly * ex2_ftz(a * (a * -0.72134752044448170f));  // Phi(-|x|)
    return fmaf(-a, tail, relu_nan(x));
  } else if constexpr (Act == ActKind::GELUTanh) {
    // 0.5 x (1 + tanh(u)) == x / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3); e^(-2u) = 2^(x (c1 + c3 x^2))
    // with 2 sqrt(2/pi) log2(e) folded into c1, c3. At -inf the quotient's 0 meets x held at -FLT_MAX (x * 0 would
    // give NaN); NaN stays (max.NaN).
    const float e = ex2_ftz(x * fmaf(x * x, -0.10294324f, -2.3022082f));
    return max_nan(x, -kFloatMax) * rcp_ftz(1.f + e);
  } else if constexpr (Act == ActKind::SiLU) {
    // x * sigmoid(x). Written so (a select for -inf rather than a clamp of x) because it leaves ptxas the fewest
    // spills in the 128x256 GEMM, whose 128 accumulators per thread sit at the 168-register cap.
    const float y = x * rcp_ftz(1.f + ex2_ftz(x * -1.44269504088896341f));
    return x < -kFloatMax ? 0.f : y;
  } else if constexpr (Act == ActKind::Sigmoid) {
    return rcp_ftz(1.f + ex2_ftz(x * -1.44269504088896341f));
  } else {
    static_assert(Act == ActKind::Tanh, "unknown ActKind");
    return tanhf(x);
  }
}

template <ActKind Act, BiasMode Bias, bool HasC, bool SaveZ, bool RowColScale = false, bool BlockScale = false,
          class BiasT = float>
struct Epilogue {
  static_assert(!(RowColScale && BlockScale), "one scaling recipe at a time");
  using BiasType = BiasT;
  // pre = alpha*acc (+ beta*C[m,n]) (+ bias);  Z = pre (if SaveZ);  D = act(pre)
  // (RowColScale: the kernel hands combine() acc * scale_a[m] * scale_b[n])
  static constexpr ActKind kAct = Act;
  static constexpr bool kRowColScale = RowColScale;
  static constexpr bool kBlockScale = BlockScale;
  static constexpr BiasMode kBias = Bias;
  static constexpr bool kReadsC = HasC;
  static constexpr bool kReadsBias = Bias != BiasMode::None;
  static constexpr bool kWritesZ = SaveZ;

  // The bias term for (m, n); 0 when Bias == None (the load is compiled out).
  static __device__ __forceinline__ float bias_at(const EpilogueParams& p, int m, int n) {
    const BiasT* bias = reinterpret_cast<const BiasT*>(p.bias);
    if constexpr (Bias == BiasMode::PerM) {
      return static_cast<float>(__ldg(bias + m));
    } else if constexpr (Bias == BiasMode::PerN) {
      return static_cast<float>(__ldg(bias + n));
    } else if constexpr (Bias == BiasMode::Full) {
      return static_cast<float>(__ldg(bias + flat_index(m, n, p.ldbias)));
    } else {
      return 0.f;
    }
  }

  static __device__ __forceinline__ float c_at(const EpilogueParams& p, int m, int n) {
    if constexpr (HasC) {
      return __ldg(p.C + flat_index(m, n, p.ldc));
    } else {
      return 0.f;
    }
  }

  // The arithmetic alone, on values the caller already loaded (e.g. C and bias as float4):
  // `c` is ignored unless HasC, `bias` unless Bias != None. Returns D's value; `pre` gets Z's.
  static __device__ __forceinline__ float combine(const EpilogueParams& p, float acc, float c, float bias,
                                                  float& pre) {
    float v = p.alpha * acc;
    if constexpr (HasC) v = fmaf(p.beta, c, v);
    if constexpr (Bias != BiasMode::None) v += bias;
    pre = v;
    return activate<Act>(v, p.leaky_slope);
  }

  // compute(): returns D's value, writes the pre-activation to `pre` (caller stores, e.g. vectorized)
  static __device__ __forceinline__ float compute(const EpilogueParams& p, int m, int n, float acc, float& pre) {
    return combine(p, acc, c_at(p, m, n), bias_at(p, m, n), pre);
  }

  // apply(): compute and store D (and Z) at (m, n) with scalar stores; caller guarantees m < M, n < N
  static __device__ __forceinline__ void apply(const EpilogueParams& p, int m, int n, float acc) {
    float pre;
    const float d = compute(p, m, n, acc, pre);
    if constexpr (SaveZ) p.Z[flat_index(m, n, p.ldz)] = pre;
    p.D[flat_index(m, n, p.ldd)] = d;
  }
};

}  // namespace fraglab
