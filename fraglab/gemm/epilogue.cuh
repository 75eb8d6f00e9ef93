// Fused GEMM epilogue as a compile-time policy: the accumulator goes from registers to the final store.
//   pre = alpha * acc (+ beta * C[m, n]) (+ bias);   Z[m, n] = pre (if SaveZ);   D[m, n] = act(pre)
// Every choice (activation, bias mode, C, Z) is a template argument resolved with `if constexpr`, so a
// kernel instantiated with Epilogue<ReLU, PerN, false, false> holds only a bias add and a max.
// The numpy twin is fraglab/epilogue_ref.py; keep the two formulas identical.
#pragma once

namespace fraglab {

enum class ActKind : int { None = 0, ReLU, LeakyReLU, GELU, GELUTanh, SiLU, Sigmoid, Tanh };
enum class BiasMode : int { None = 0, PerM, PerN, Full };

struct EpilogueParams {          // every pointer f32, row-major, indices (m, n) are global output coordinates
  float alpha, beta, leaky_slope;
  const float* C;    int ldc;    // read when HasC
  const float* bias; int ldbias; // PerM: bias[m]; PerN: bias[n]; Full: bias[m * ldbias + n]
  float* D;          int ldd;
  float* Z;          int ldz;    // written when SaveZ (the pre-activation)
};

__device__ __forceinline__ long long flat_index(int m, int n, int ld) {
  return static_cast<long long>(m) * ld + n;  // 64-bit: M * ld passes 2^31 from 46341^2 on
}

constexpr float kFloatMax = 3.40282347e+38f;  // no <cfloat>/<cmath> under NVRTC; x < -kFloatMax only for -inf

// 2^x and 1/x on the MUFU unit with subnormal results flushed to 0. The non-ftz forms (what __expf and
// __fdividef compile to without -ftz) add a range test and two fix-up multiplies per call, a third of the GELU
// epilogue's instructions; no caller below can tell a subnormal from 0 (it is added to 1 or scales a result).
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

// num / den with one MUFU.RCP and a multiply. An IEEE `/` or __frcp_rn costs a compare, a branch and a
// called slow path per element, which serialises the epilogue element by element (the GELU epilogue
// was +13 % of a 2048^3 GEMM with it). Every caller's den is >= 1 or +inf: the result is within 2 ulp,
// and 0 for den = +inf, NaN for NaN.
__device__ __forceinline__ float fast_divide(float num, float den) { return num * rcp_ftz(den); }

// NaN in -> NaN out for every kind (comparisons are written so that NaN takes the `x` branch).
// The smooth kinds take their limits at +-inf (x * 0 would give NaN at -inf).
template <ActKind Act>
__device__ __forceinline__ float activate(float x, float leaky_slope) {
  if constexpr (Act == ActKind::None) {
    return x;
  } else if constexpr (Act == ActKind::ReLU) {
#if __CUDA_ARCH__ >= 800
    float y;  // one FMNMX.NAN; fmaxf(x, 0) would turn NaN into 0, and the select costs a compare besides
    asm("max.NaN.f32 %0, %1, 0f00000000;" : "=f"(y) : "f"(x));
    return y;
#else
    return x < 0.f ? 0.f : x;
#endif
  } else if constexpr (Act == ActKind::LeakyReLU) {
    return x < 0.f ? x * leaky_slope : x;
  } else if constexpr (Act == ActKind::GELU) {
    // x * Phi(x) with Phi(x) = (1 + erf(x / sqrt2)) / 2 and erf from Abramowitz & Stegun 7.1.26
    // (|error| <= 1.5e-7): one reciprocal, one exp and 6 FMAs, against ~3x that for erfcf.
    // In the far negative tail Phi underflows to 0 (y = -0).
    const float z = fabsf(x) * 0.70710678118654752f;
    const float t = fast_divide(1.f, fmaf(0.3275911f, z, 1.f));
    const float poly = t * fmaf(t, fmaf(t, fmaf(t, fmaf(t, 1.061405429f, -1.453152027f), 1.421413741f),
                                        -0.284496736f), 0.254829592f);
    const float tail = poly * ex2_ftz(z * z * -1.44269504088896341f);  // 1 - erf(|x| / sqrt2) = poly e^(-z^2)
    const float phi = x < 0.f ? 0.5f * tail : 1.f - 0.5f * tail;
    const float y = x * phi;
    return x < -kFloatMax ? 0.f : y;
  } else if constexpr (Act == ActKind::GELUTanh) {
    // 0.5 x (1 + tanh(u)) == x / (1 + exp(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
    const float u = 0.79788456080286536f * fmaf(0.044715f * x, x * x, x);
    const float y = fast_divide(x, 1.f + expf(-2.f * u));
    return x < -kFloatMax ? 0.f : y;
  } else if constexpr (Act == ActKind::SiLU) {
    const float y = fast_divide(x, 1.f + expf(-x));  // x * sigmoid(x)
    return x < -kFloatMax ? 0.f : y;
  } else if constexpr (Act == ActKind::Sigmoid) {
    return fast_divide(1.f, 1.f + expf(-x));
  } else {
    static_assert(Act == ActKind::Tanh, "unknown ActKind");
    return tanhf(x);
  }
}

template <ActKind Act, BiasMode Bias, bool HasC, bool SaveZ>
struct Epilogue {
  // pre = alpha*acc (+ beta*C[m,n]) (+ bias);  Z = pre (if SaveZ);  D = act(pre)
  static constexpr ActKind kAct = Act;
  static constexpr BiasMode kBias = Bias;
  static constexpr bool kReadsC = HasC;
  static constexpr bool kReadsBias = Bias != BiasMode::None;
  static constexpr bool kWritesZ = SaveZ;

  // The bias term for (m, n); 0 when Bias == None (the load is compiled out).
  static __device__ __forceinline__ float bias_at(const EpilogueParams& p, int m, int n) {
    if constexpr (Bias == BiasMode::PerM) {
      return __ldg(p.bias + m);
    } else if constexpr (Bias == BiasMode::PerN) {
      return __ldg(p.bias + n);
    } else if constexpr (Bias == BiasMode::Full) {
      return __ldg(p.bias + flat_index(m, n, p.ldbias));
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
