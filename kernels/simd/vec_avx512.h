// AVX-512 vector traits (see vec_generic.h for the interface). Include only from *_avx512.cc
// translation units, compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma.
#pragma once

#include <immintrin.h>

#include "machine/cpu_features.h"

namespace mmtune::simd {

template <typename T>
struct Avx512Vec;

template <>
struct Avx512Vec<float> {
  using Element = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx512;

  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  // Masked loads cost what plain ones do, and masked-off lanes are never read (no fault).
  static constexpr bool kCheapMaskedLoads = true;
  using MaskType = __mmask16;
  static MaskType LaneMask(int n) { return static_cast<MaskType>((1u << n) - 1u); }
  static V LoadMasked(const float* p, MaskType m) { return _mm512_maskz_loadu_ps(m, p); }
  static void StoreMasked(float* p, V v, MaskType m) { _mm512_mask_storeu_ps(p, m, v); }
  static V LoadPartial(const float* p, int n) { return _mm512_maskz_loadu_ps(LaneMask(n), p); }
  static void StorePartial(float* p, V v, int n) { _mm512_mask_storeu_ps(p, LaneMask(n), v); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  // Through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its own header, and
  // the GEMV kernels reduce once per row block, where the store costs nothing measurable.
  static float ReduceAdd(V v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    float sum = 0.0f;
    for (float lane : lanes) sum += lane;
    return sum;
  }
};

template <>
struct Avx512Vec<double> {
  using Element = double;
  using V = __m512d;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 32;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx512;

  static V Zero() { return _mm512_setzero_pd(); }
  static V Set1(double x) { return _mm512_set1_pd(x); }
  static V Load(const double* p) { return _mm512_loadu_pd(p); }
  static void Store(double* p, V v) { _mm512_storeu_pd(p, v); }
  // Masked loads cost what plain ones do, and masked-off lanes are never read (no fault).
  static constexpr bool kCheapMaskedLoads = true;
  using MaskType = __mmask8;
  static MaskType LaneMask(int n) { return static_cast<MaskType>((1u << n) - 1u); }
  static V LoadMasked(const double* p, MaskType m) { return _mm512_maskz_loadu_pd(m, p); }
  static void StoreMasked(double* p, V v, MaskType m) { _mm512_mask_storeu_pd(p, m, v); }
  static V LoadPartial(const double* p, int n) { return _mm512_maskz_loadu_pd(LaneMask(n), p); }
  static void StorePartial(double* p, V v, int n) { _mm512_mask_storeu_pd(p, LaneMask(n), v); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V Mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static double ReduceAdd(V v) {
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, v);
    double sum = 0.0;
    for (double lane : lanes) sum += lane;
    return sum;
  }
};

}  // namespace mmtune::simd
