// AArch64 Advanced SIMD vector traits (see vec_generic.h for the interface). Include only from
// ukernels_neon_*.cc translation units, which exist in aarch64 builds only. Every NEON level runs
// these f32 and f64 kernels (the dot-product levels add instructions for bf16 and s8 alone), so
// they are compiled once, at the neon level, and the registry relabels their tables.
#pragma once

#include <arm_neon.h>

#include <cstring>

#include "machine/cpu_features.h"

namespace mmtune::simd {

// What the f32 and f64 traits share: no masked loads, so partial vectors go through a copy.
template <typename T, typename VectorType>
struct NeonLanes {
  using Element = T;
  using V = VectorType;
  static constexpr int kLanes = 16 / sizeof(T);
  static constexpr int kRegisters = 32;
  static constexpr IsaLevel kIsa = IsaLevel::kNeon;
  static constexpr bool kCheapMaskedLoads = false;  // edge kernels read B unmasked
  using MaskType = int;

  static V LoadPartial(const T* p, int n) {
    T lanes[kLanes] = {};
    for (int i = 0; i < n; ++i) lanes[i] = p[i];
    V v;
    std::memcpy(&v, lanes, sizeof(v));
    return v;
  }
  static void StorePartial(T* p, V v, int n) {
    T lanes[kLanes];
    std::memcpy(lanes, &v, sizeof(v));
    for (int i = 0; i < n; ++i) p[i] = lanes[i];
  }
};

template <typename T>
struct NeonVec;

// A broadcast from memory feeds FMLA as a lane (GCC folds vdupq_n_f32 of a load into LD1R or an
// FMLA by element), so A takes no shuffle per row.
template <>
struct NeonVec<float> : NeonLanes<float, float32x4_t> {
  static V Zero() { return vdupq_n_f32(0.0f); }
  static V Set1(float x) { return vdupq_n_f32(x); }
  static V Load(const float* p) { return vld1q_f32(p); }
  static void Store(float* p, V v) { vst1q_f32(p, v); }
  static V Fma(V a, V b, V c) { return vfmaq_f32(c, a, b); }
  static V Mul(V a, V b) { return vmulq_f32(a, b); }
  static float ReduceAdd(V v) { return vaddvq_f32(v); }
};

template <>
struct NeonVec<double> : NeonLanes<double, float64x2_t> {
  static V Zero() { return vdupq_n_f64(0.0); }
  static V Set1(double x) { return vdupq_n_f64(x); }
  static V Load(const double* p) { return vld1q_f64(p); }
  static void Store(double* p, V v) { vst1q_f64(p, v); }
  static V Fma(V a, V b, V c) { return vfmaq_f64(c, a, b); }
  static V Mul(V a, V b) { return vmulq_f64(a, b); }
  static double ReduceAdd(V v) { return vaddvq_f64(v); }
};

}  // namespace mmtune::simd
