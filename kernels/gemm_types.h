// The GEMMs the library computes, each named by one type X that every part of the single GEMM
// stack (GemmArgs<X>, GemmPlan<X>, the drivers, the tuner's runner, the runtime's plans) takes:
//   float, double:  A, B, C, alpha and beta of that type;
//   Bf16Gemm:       A and B bfloat16, C, alpha and beta f32, accumulated in f32;
//   S8Gemm:         A u8, B s8, C, alpha and beta s32, exact modulo 2^32.
// GemmTypes<X> gives X's element types, its k group and its dtype.
#pragma once

#include <cstdint>

#include "mmtune/bf16.h"
#include "mmtune/types.h"

namespace mmtune {

// bf16: A and B bfloat16, C, alpha and beta f32; accumulation in f32.
struct Bf16Gemm {
  using A = BFloat16;
  using B = BFloat16;
  using C = float;
  using Scalar = float;
  static constexpr int kGroup = 2;  // k values per 32-bit lane of a packed panel
  static constexpr DType kDType = DType::kBF16;
  static constexpr bool kLowPrecision = true;
};

// s8: A u8, B s8 (the operand signs of VPDPBUSD), C, alpha and beta s32. Exact: products and
// sums are integers, computed modulo 2^32 (wrap-around, no saturation) like the instructions.
struct S8Gemm {
  using A = std::uint8_t;
  using B = std::int8_t;
  using C = std::int32_t;
  using Scalar = std::int32_t;
  static constexpr int kGroup = 4;
  static constexpr DType kDType = DType::kS8;
  static constexpr bool kLowPrecision = true;
};

// The low-precision kinds describe themselves; f32 and f64 are named by their element type.
// kLowPrecision: the micro-kernels take k-grouped panels and write C through row and column
// strides (so a column-major problem is not turned into its transpose, which would swap the
// unsigned and the signed operand of s8), and only the packed and gemv families exist.
template <typename X>
struct GemmTypes : X {};

// f32 and f64: A, B, C and the scalars all of one type.
template <typename T>
struct SameTypeGemmTypes {
  using A = T;
  using B = T;
  using C = T;
  using Scalar = T;
  static constexpr int kGroup = 1;
  static constexpr DType kDType = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  static constexpr bool kLowPrecision = false;
};
template <>
struct GemmTypes<float> : SameTypeGemmTypes<float> {};
template <>
struct GemmTypes<double> : SameTypeGemmTypes<double> {};

// f.template operator()<X>() for the GEMM X of `dtype`: code written once for every X, chosen
// by a dtype at run time.
template <typename F>
decltype(auto) WithGemmOf(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF64: return f.template operator()<double>();
    case DType::kBF16: return f.template operator()<Bf16Gemm>();
    case DType::kS8: return f.template operator()<S8Gemm>();
    case DType::kF32: break;
  }
  return f.template operator()<float>();
}

}  // namespace mmtune
