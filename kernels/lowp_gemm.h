// Runs the low-precision GEMMs with one kernel configuration (packed or gemv family):
//   bf16: C (f32) = alpha * op(A) * op(B) + beta * C, A and B bfloat16, accumulated in f32;
//   s8:   C (s32) = alpha * op(A) * op(B) + beta * C, A u8, B s8, exact modulo 2^32.
// BLAS semantics as for f32 (see reference_gemm.h): any layout, transposes and leading
// dimensions; beta = 0 never reads C.
#pragma once

#include <cstdint>

#include "kernels/kernel_config.h"
#include "kernels/lowp_microkernel.h"
#include "kernels/thread_pool.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

template <class Kind>
struct LowpGemmArgs {
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  typename Kind::Scalar alpha = 1;
  const typename Kind::A* a = nullptr;
  std::int64_t lda = 0;
  const typename Kind::B* b = nullptr;
  std::int64_t ldb = 0;
  typename Kind::Scalar beta = 0;
  typename Kind::C* c = nullptr;
  std::int64_t ldc = 0;
};

// A configuration checked once and bound to its micro-kernel (the lowp GemmPlan).
template <class Kind>
class LowpGemmPlan {
 public:
  // Fails when the config is invalid for the dtype or needs instructions this CPU lacks (the
  // ISA level, or AVX512_BF16 / AVX512_VNNI for avx512 kernels).
  static Result<LowpGemmPlan> Create(const KernelConfig& config);

  // An error (bad arguments, a gemv plan on a shape with M > 1 and N > 1) means nothing was
  // written.
  Status Run(const LowpGemmArgs<Kind>& args, ThreadPool& pool) const;
  Status Run(const LowpGemmArgs<Kind>& args) const { return Run(args, DefaultThreadPool()); }

  const KernelConfig& config() const { return config_; }

 private:
  KernelConfig config_;
  const LowpMicroKernelEntry<Kind>* micro_kernel_ = nullptr;  // packed family
  const LowpGemvKernelEntry<Kind>* gemv_kernel_ = nullptr;    // gemv family
};

extern template class LowpGemmPlan<Bf16Gemm>;
extern template class LowpGemmPlan<S8Gemm>;

}  // namespace mmtune
