// One traits type per GEMM the library computes, so that code written once for all of them (the
// tuner's candidate runner, the runtime's plan cache, the comparison bench) names the element
// types, the argument struct and the plan the same way:
//   RealGemm<float>, RealGemm<double>: A, B, C, alpha and beta of one type (gemm.h);
//   LowpGemm<Bf16Gemm>, LowpGemm<S8Gemm>: the low-precision GEMMs (lowp_gemm.h).
#pragma once

#include "kernels/gemm.h"
#include "kernels/lowp_gemm.h"
#include "mmtune/types.h"

namespace mmtune {

template <typename T>
struct RealGemm {
  using A = T;
  using B = T;
  using C = T;
  using Scalar = T;
  using Args = GemmArgs<T>;
  using Plan = GemmPlan<T>;
  static constexpr DType kDType = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
};

// Bf16Gemm or S8Gemm (element types, k group, dtype) with their arguments and plan.
template <class Kind>
struct LowpGemm : Kind {
  using Args = LowpGemmArgs<Kind>;
  using Plan = LowpGemmPlan<Kind>;
};

}  // namespace mmtune
