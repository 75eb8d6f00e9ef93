// WMMA layout probes: fill or load fragments with codes and read back which (lane, slot) holds what.
//
// Every kernel runs one warp per block (blockDim.x == 32); the grid batches passes (digits of a code
// that does not fit the element type), selections (which K-slice an identity-like partner picks) and,
// for the one-hot probe, every (lane, slot) target, so one probe of one fragment is one launch.
// The host (fraglab/probes.py) builds every code matrix and decodes every output; this file only
// moves codes between memory and registers.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

using namespace nvcuda;

// Template arguments are plain ints so name expressions stay short and readable:
//   probe_load<FL_A, 16, 16, 16, FL_F16, FL_ROW>
constexpr int FL_A = 0, FL_B = 1, FL_C = 2;
constexpr int FL_F16 = 0, FL_BF16 = 1, FL_TF32 = 2, FL_F64 = 3, FL_U8 = 4, FL_S8 = 5,
              FL_U4 = 6, FL_S4 = 7, FL_B1 = 8, FL_F32 = 9, FL_S32 = 10;
constexpr int FL_ROW = 0, FL_COL = 1;

namespace fl {

// ---- element types ------------------------------------------------------------------------------
// wmma_t: the WMMA precision tag; mem_t: one element in memory (packed types: a 32-bit word of them).
template <int DT> struct Prec;
template <> struct Prec<FL_F16>  { using wmma_t = half;            using mem_t = half;          static constexpr int bits = 16; };
template <> struct Prec<FL_BF16> { using wmma_t = __nv_bfloat16;   using mem_t = __nv_bfloat16; static constexpr int bits = 16; };
#if __CUDA_ARCH__ >= 800  // tf32 fragments exist from sm_80 (mma.h's __CUDA_AMPERE_MMA__)
template <> struct Prec<FL_TF32> { using wmma_t = wmma::precision::tf32; using mem_t = float;   static constexpr int bits = 32; };
#endif
template <> struct Prec<FL_F64>  { using wmma_t = double;          using mem_t = double;        static constexpr int bits = 64; };
template <> struct Prec<FL_U8>   { using wmma_t = unsigned char;   using mem_t = unsigned char; static constexpr int bits = 8; };
template <> struct Prec<FL_S8>   { using wmma_t = signed char;     using mem_t = signed char;   static constexpr int bits = 8; };
template <> struct Prec<FL_U4>   { using wmma_t = wmma::experimental::precision::u4; using mem_t = unsigned; static constexpr int bits = 4; };
template <> struct Prec<FL_S4>   { using wmma_t = wmma::experimental::precision::s4; using mem_t = unsigned; static constexpr int bits = 4; };
template <> struct Prec<FL_B1>   { using wmma_t = wmma::experimental::precision::b1; using mem_t = unsigned; static constexpr int bits = 1; };
template <> struct Prec<FL_F32>  { using wmma_t = float;           using mem_t = float;         static constexpr int bits = 32; };
template <> struct Prec<FL_S32>  { using wmma_t = int;             using mem_t = int;           static constexpr int bits = 32; };

// Integer code <-> one stored element. Codes are small non-negative integers, exact in every type.
template <class S> __device__ __forceinline__ S from_code(int c) { return static_cast<S>(c); }
template <> __device__ __forceinline__ half from_code<half>(int c) { return __int2half_rn(c); }
template <> __device__ __forceinline__ __nv_bfloat16 from_code<__nv_bfloat16>(int c) { return __int2bfloat16_rn(c); }
__device__ __forceinline__ int to_code(half v) { return __half2int_rn(v); }
__device__ __forceinline__ int to_code(__nv_bfloat16 v) { return __bfloat162int_rn(v); }
__device__ __forceinline__ int to_code(float v) { return __float2int_rn(v); }
__device__ __forceinline__ int to_code(double v) { return __double2int_rn(v); }
__device__ __forceinline__ int to_code(unsigned char v) { return v; }
__device__ __forceinline__ int to_code(signed char v) { return v; }
__device__ __forceinline__ int to_code(int v) { return v; }
__device__ __forceinline__ int to_code(unsigned v) { return static_cast<int>(v); }  // packed words: raw bits

// ---- fragment types -----------------------------------------------------------------------------
template <int USE> struct UseTag;
template <> struct UseTag<FL_A> { using type = wmma::matrix_a; };
template <> struct UseTag<FL_B> { using type = wmma::matrix_b; };
template <int L> struct LayoutTag;
template <> struct LayoutTag<FL_ROW> { using type = wmma::row_major; static constexpr wmma::layout_t mem = wmma::mem_row_major; };
template <> struct LayoutTag<FL_COL> { using type = wmma::col_major; static constexpr wmma::layout_t mem = wmma::mem_col_major; };

template <int USE, int M, int N, int K, int DT, int L> struct FragOf {
  using type = wmma::fragment<typename UseTag<USE>::type, M, N, K, typename Prec<DT>::wmma_t, typename LayoutTag<L>::type>;
};
template <int M, int N, int K, int DT, int L> struct FragOf<FL_C, M, N, K, DT, L> {
  using type = wmma::fragment<wmma::accumulator, M, N, K, typename Prec<DT>::wmma_t>;
};

// Sub-byte types pack 32/bits logical slots (num_elements) into each 32-bit storage element.
template <int DT> struct Packing {
  static constexpr int per_word = Prec<DT>::bits < 8 ? 32 / Prec<DT>::bits : 1;
  static constexpr unsigned mask = Prec<DT>::bits < 8 ? ((1u << Prec<DT>::bits) - 1u) : 0xffffffffu;
};

template <int DT, class Frag> __device__ __forceinline__ void set_slot(Frag& f, int s, int code) {
  using S = typename Frag::storage_element_type;
  constexpr int per = Packing<DT>::per_word;
  if constexpr (per == 1) {
    f.x[s] = from_code<S>(code);
  } else {  // slot s is bits [(s % per) * bits, ...) of word s / per, lowest bits first
    const int w = s / per, shift = (s % per) * Prec<DT>::bits;
    unsigned word = static_cast<unsigned>(f.x[w]);
    word = (word & ~(Packing<DT>::mask << shift)) | ((static_cast<unsigned>(code) & Packing<DT>::mask) << shift);
    f.x[w] = static_cast<S>(word);
  }
}

template <class Frag> __device__ __forceinline__ void zero(Frag& f) {
  using S = typename Frag::storage_element_type;
#pragma unroll
  for (int i = 0; i < Frag::num_storage_elements; ++i) f.x[i] = from_code<S>(0);
}

// The fragment type an MMA of this input family pairs with, and the accumulator it writes.
template <int DT> struct Family { static constexpr int acc = FL_F32; };
template <> struct Family<FL_F64> { static constexpr int acc = FL_F64; };
template <> struct Family<FL_U8> { static constexpr int acc = FL_S32; };
template <> struct Family<FL_S8> { static constexpr int acc = FL_S32; };
template <> struct Family<FL_U4> { static constexpr int acc = FL_S32; };
template <> struct Family<FL_S4> { static constexpr int acc = FL_S32; };
template <> struct Family<FL_B1> { static constexpr int acc = FL_S32; };

// The input family whose MMA writes accumulator DT of shape MxNxK (the probe of C runs that MMA).
template <int M, int N, int K, int DT> struct AccFamily {
  static constexpr int in = DT == FL_F64 ? FL_F64
                          : K == 8 ? FL_TF32
                          : K == 32 ? FL_U4
                          : K == 128 ? FL_B1
                          : DT == FL_S32 ? FL_U8 : FL_F16;
};

template <int DT, class D, class A, class B, class C>
__device__ __forceinline__ void run_mma(D& d, const A& a, const B& b, const C& c) {
  if constexpr (DT == FL_B1) {
#if __CUDA_ARCH__ >= 800  // bmmaBitOpAND exists from sm_80; the catalogue offers b1 probes only there
    wmma::bmma_sync(d, a, b, c, wmma::experimental::bmmaBitOpAND);  // popc(a & b): an identity picks one bit
#endif
  } else {
    wmma::mma_sync(d, a, b, c);
  }
}

// Converts int codes (in memory order) into the element type of DT at `dst`; packs sub-byte types,
// lowest bits first. `count` is in logical elements.
template <int DT>
__device__ void codes_to_memory(void* dst, const int* codes, int count) {
  using T = typename Prec<DT>::mem_t;
  T* out = static_cast<T*>(dst);
  constexpr int per = Packing<DT>::per_word;
  const int words = (count + per - 1) / per;
  for (int w = threadIdx.x; w < words; w += 32) {
    if constexpr (per == 1) {
      out[w] = from_code<T>(codes[w]);
    } else {
      unsigned word = 0;
      for (int j = 0; j < per && w * per + j < count; ++j)
        word |= (static_cast<unsigned>(codes[w * per + j]) & Packing<DT>::mask) << (j * Prec<DT>::bits);
      out[w] = word;
    }
  }
}

template <int DT>
__device__ void memory_to_codes(int* dst, const void* src, int count) {
  using T = typename Prec<DT>::mem_t;
  const T* in = static_cast<const T*>(src);
  for (int e = threadIdx.x; e < count; e += 32) dst[e] = to_code(in[e]);
}

constexpr int kSmemBytes = 4096;  // largest operand: 32x16 f16 = 1 KiB; largest accumulator 16x16 f64 fits too

// Leading dimension of an operand stored with layout L, in elements.
template <int ROWS, int COLS, int L> __host__ __device__ constexpr int lead() { return L == FL_ROW ? COLS : ROWS; }

template <int USE, int M, int N, int K> struct Dims;
template <int M, int N, int K> struct Dims<FL_A, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct Dims<FL_B, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct Dims<FL_C, M, N, K> { static constexpr int rows = M, cols = N; };

}  // namespace fl

// info[0] = num_elements (storage), info[1] = logical slots per lane; written by block 0.
template <class Frag, int DT> __device__ void write_info(int* info) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    info[0] = Frag::num_storage_elements;
    info[1] = Frag::num_elements;
  }
}

// info: the fragment's storage elements and logical slots per lane, so the host can size its buffers.
template <int USE, int M, int N, int K, int DT, int L>
__global__ void probe_info(int* __restrict__ info) {
  write_info<typename fl::FragOf<USE, M, N, K, DT, L>::type, DT>(info);
}

// load: A/B: load a code matrix (block p = pass p) with load_matrix_sync and dump every lane's raw
// storage elements: out[p][lane][e] (raw storage words for packed types). Accumulator: fill slot s of each lane with codes[p][lane][s],
// store_matrix_sync with layout L, dump the stored matrix in memory order: out[p][M*N].
template <int USE, int M, int N, int K, int DT, int L>
__global__ void __launch_bounds__(32) probe_load(const int* __restrict__ codes, int* __restrict__ out, int* __restrict__ info) {
  using D = fl::Dims<USE, M, N, K>;
  using Frag = typename fl::FragOf<USE, M, N, K, DT, L>::type;
  constexpr int elems = D::rows * D::cols;
  __shared__ __align__(256) unsigned char smem[fl::kSmemBytes];
  static_assert(elems * (fl::Prec<DT>::bits < 8 ? 1 : fl::Prec<DT>::bits / 8) <= fl::kSmemBytes, "operand too large");
  const int p = blockIdx.x, lane = threadIdx.x;
  Frag f;
  write_info<Frag, DT>(info);
  if constexpr (USE == FL_C) {
    constexpr int slots = Frag::num_elements;
    fl::zero(f);
    for (int s = 0; s < slots; ++s) fl::set_slot<DT>(f, s, codes[(p * 32 + lane) * slots + s]);
    wmma::store_matrix_sync(reinterpret_cast<typename fl::Prec<DT>::mem_t*>(smem), f,
                            fl::lead<M, N, L>(), fl::LayoutTag<L>::mem);
    __syncwarp();
    fl::memory_to_codes<DT>(out + p * elems, smem, elems);
  } else {
    fl::codes_to_memory<DT>(smem, codes + p * elems, elems);
    __syncwarp();
    wmma::load_matrix_sync(f, reinterpret_cast<const typename fl::Prec<DT>::mem_t*>(smem),
                           fl::lead<D::rows, D::cols, L>() );
    for (int e = 0; e < Frag::num_storage_elements; ++e)
      out[(p * 32 + lane) * Frag::num_storage_elements + e] = fl::to_code(f.x[e]);
  }
}

// The MMA the mma and onehot probes run: the probed operand `f` (already filled), the partner
// operand loaded from `partner` codes, accumulator (or, when probing C, A = B = 0). The result D is
// stored to out_mat (M*N ints) with layout L for the accumulator probe, row-major otherwise.
template <int USE, int M, int N, int K, int DT, int L, class Frag>
__device__ void mma_and_store(const Frag& f, const int* partner, int* out_mat, unsigned char* smem_partner,
                              unsigned char* smem_d) {
  using namespace fl;
  if constexpr (USE == FL_C) {
    constexpr int IN = AccFamily<M, N, K, DT>::in;
    typename FragOf<FL_A, M, N, K, IN, FL_ROW>::type a;
    typename FragOf<FL_B, M, N, K, IN, FL_COL>::type b;
    Frag d;
    zero(a);
    zero(b);
    run_mma<IN>(d, a, b, f);
    wmma::store_matrix_sync(reinterpret_cast<typename Prec<DT>::mem_t*>(smem_d), d, lead<M, N, L>(), LayoutTag<L>::mem);
    __syncwarp();
    memory_to_codes<DT>(out_mat, smem_d, M * N);
  } else {
    constexpr int ACC = Family<DT>::acc;
    // Partner: B (K x N, col-major) when probing A; A (M x K, row-major) when probing B. Every type accepts these.
    constexpr int PUSE = USE == FL_A ? FL_B : FL_A;
    constexpr int PL = USE == FL_A ? FL_COL : FL_ROW;
    using PD = Dims<PUSE, M, N, K>;
    typename FragOf<PUSE, M, N, K, DT, PL>::type other;
    codes_to_memory<DT>(smem_partner, partner, PD::rows * PD::cols);
    __syncwarp();
    wmma::load_matrix_sync(other, reinterpret_cast<const typename Prec<DT>::mem_t*>(smem_partner), lead<PD::rows, PD::cols, PL>());
    typename FragOf<FL_C, M, N, K, ACC, FL_ROW>::type acc;
    zero(acc);
    if constexpr (USE == FL_A) run_mma<DT>(acc, f, other, acc);
    else run_mma<DT>(acc, other, f, acc);
    wmma::store_matrix_sync(reinterpret_cast<typename Prec<ACC>::mem_t*>(smem_d), acc, N, wmma::mem_row_major);
    __syncwarp();
    memory_to_codes<ACC>(out_mat, smem_d, M * N);
  }
}

// mma: block (p, j) = (pass, selection). Slot s of lane l holds digit p of its code
// codes[(l * slots + s)]; the partner is selection matrix j. out[p][j][M*N].
template <int USE, int M, int N, int K, int DT, int L>
__global__ void __launch_bounds__(32) probe_mma(const int* __restrict__ slot_codes, const int* __restrict__ partners,
                                                int* __restrict__ out, int* __restrict__ info, int selections, int base) {
  using namespace fl;
  using Frag = typename FragOf<USE, M, N, K, DT, L>::type;
  constexpr int slots = Frag::num_elements;
  constexpr int pelems = USE == FL_A ? K * N : M * K;
  __shared__ __align__(256) unsigned char smem_partner[kSmemBytes];
  __shared__ __align__(256) unsigned char smem_d[kSmemBytes];
  const int p = blockIdx.x / selections, j = blockIdx.x % selections, lane = threadIdx.x;
  write_info<Frag, DT>(info);
  int scale = 1;
  for (int i = 0; i < p; ++i) scale *= base;
  Frag f;
  zero(f);
  for (int s = 0; s < slots; ++s) set_slot<DT>(f, s, (slot_codes[lane * slots + s] / scale) % base);
  mma_and_store<USE, M, N, K, DT, L>(f, partners + j * pelems, out + blockIdx.x * M * N, smem_partner, smem_d);
}

// onehot: block b = target * selections + j, target = lane * slots + slot. Only that slot of that
// lane is 1; out[b][M*N] shows which element the MMA read it as (all zero: the MMA ignores it).
template <int USE, int M, int N, int K, int DT, int L>
__global__ void __launch_bounds__(32) probe_onehot(const int* __restrict__ partners, int* __restrict__ out,
                                                   int* __restrict__ info, int selections) {
  using namespace fl;
  using Frag = typename FragOf<USE, M, N, K, DT, L>::type;
  constexpr int slots = Frag::num_elements;
  constexpr int pelems = USE == FL_A ? K * N : M * K;
  __shared__ __align__(256) unsigned char smem_partner[kSmemBytes];
  __shared__ __align__(256) unsigned char smem_d[kSmemBytes];
  const int target = blockIdx.x / selections, j = blockIdx.x % selections;
  write_info<Frag, DT>(info);
  Frag f;
  zero(f);
  if (threadIdx.x == target / slots) set_slot<DT>(f, target % slots, 1);
  mma_and_store<USE, M, N, K, DT, L>(f, partners + j * pelems, out + blockIdx.x * M * N, smem_partner, smem_d);
}
