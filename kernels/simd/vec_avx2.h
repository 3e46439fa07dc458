// AVX2 + FMA vector traits (see vec_generic.h for the interface). Include only from *_avx2.cc
// translation units, which are compiled with -mavx2 -mfma.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "machine/cpu_features.h"

namespace mmtune::simd {

template <typename T>
struct Avx2Vec;

namespace avx2_detail {
// Sliding window of lane masks: loading 8 ints at offset (8 - n) gives n leading -1s.
alignas(64) inline constexpr std::int32_t kMask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                         0,  0,  0,  0,  0,  0,  0,  0};
alignas(64) inline constexpr std::int64_t kMask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
}  // namespace avx2_detail

template <>
struct Avx2Vec<float> {
  using Element = float;
  // The edge kernels read B unmasked (partial panels as padded copies): vmaskmov loads in
  // every k step were not measured against the copy here.
  static constexpr bool kCheapMaskedLoads = false;
  using MaskType = int;
  using V = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx2;

  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static __m256i Mask(int n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(avx2_detail::kMask32 + 8 - n));
  }
  static V LoadPartial(const float* p, int n) { return _mm256_maskload_ps(p, Mask(n)); }
  static void StorePartial(float* p, V v, int n) { _mm256_maskstore_ps(p, Mask(n), v); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static float ReduceAdd(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

template <>
struct Avx2Vec<double> {
  using Element = double;
  // The edge kernels read B unmasked (partial panels as padded copies): vmaskmov loads in
  // every k step were not measured against the copy here.
  static constexpr bool kCheapMaskedLoads = false;
  using MaskType = int;
  using V = __m256d;
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx2;

  static V Zero() { return _mm256_setzero_pd(); }
  static V Set1(double x) { return _mm256_set1_pd(x); }
  static V Load(const double* p) { return _mm256_loadu_pd(p); }
  static void Store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static __m256i Mask(int n) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(avx2_detail::kMask64 + 4 - n));
  }
  static V LoadPartial(const double* p, int n) { return _mm256_maskload_pd(p, Mask(n)); }
  static void StorePartial(double* p, V v, int n) { _mm256_maskstore_pd(p, Mask(n), v); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V Mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static double ReduceAdd(V v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
};

}  // namespace mmtune::simd
