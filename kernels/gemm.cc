#include "kernels/gemm.h"

#include "kernels/gemm_args.h"
#include "kernels/gemm_internal.h"

namespace mmtune {
namespace {

template <typename T>
constexpr DType DTypeOf() {
  return sizeof(T) == 4 ? DType::kF32 : DType::kF64;
}

// C = beta * C over the m x n window; beta = 0 writes zeros without reading (NaN must not leak).
template <typename T>
void ScaleC(const detail::RowMajorGemm<T>& g) {
  for (std::int64_t i = 0; i < g.m; ++i) {
    T* row = g.c + i * g.ldc;
    if (g.beta == T(0)) {
      for (std::int64_t j = 0; j < g.n; ++j) row[j] = T(0);
    } else if (g.beta != T(1)) {
      for (std::int64_t j = 0; j < g.n; ++j) row[j] *= g.beta;
    }
  }
}

}  // namespace

template <typename T>
Result<GemmPlan<T>> GemmPlan<T>::Create(const KernelConfig& config) {
  if (auto status = config.ValidateFor(DTypeOf<T>()); !status) return status.error();
  if (config.isa > HostCpuFeatures().MaxIsaLevel()) {
    return MakeError(ErrorCode::kUnsupported,
                     std::string("this CPU cannot run ") + ToString(config.isa) + " kernels");
  }
  GemmPlan plan;
  plan.config_ = config;
  if (config.family == KernelFamily::kGemv) {
    plan.gemv_kernel_ = FindGemvKernel<T>(config.isa, config.mr, config.nr);
  } else {
    plan.micro_kernel_ = FindMicroKernel<T>(config.isa, config.mr, config.nr, config.k_unroll);
  }
  return plan;
}

template <typename T>
Status GemmPlan<T>::Run(const GemmArgs<T>& args, ThreadPool& pool) const {
  if (auto status = CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n,
                                       args.k, args.lda, args.ldb, args.ldc);
      !status) {
    return status;
  }
  // Only gemv configs constrain the shape; the common case skips the call.
  if (config_.family == KernelFamily::kGemv && args.m != 1 && args.n != 1) [[unlikely]] {
    return config_.ValidateShape(args.m, args.n);
  }

  detail::RowMajorGemm<T> g;
  g.alpha = args.alpha;
  g.beta = args.beta;
  g.k = args.k;
  g.c = args.c;
  g.ldc = args.ldc;
  if (args.layout == Layout::kRowMajor) {
    g.m = args.m;
    g.n = args.n;
    g.a = {args.a, args.lda, args.trans_a};
    g.b = {args.b, args.ldb, args.trans_b};
  } else {
    g.m = args.n;
    g.n = args.m;
    g.a = {args.b, args.ldb, args.trans_b};
    g.b = {args.a, args.lda, args.trans_a};
  }

  if (g.m == 0 || g.n == 0) return OkStatus();
  if (g.k == 0 || g.alpha == T(0)) {
    ScaleC(g);
    return OkStatus();
  }
  switch (config_.family) {
    case KernelFamily::kGemv:
      detail::RunGemv(config_, *gemv_kernel_, g, pool);
      break;
    case KernelFamily::kDirect:
      detail::RunDirect(config_, *micro_kernel_, g, pool);
      break;
    case KernelFamily::kPacked:
      detail::RunPacked(config_, *micro_kernel_, g, pool);
      break;
  }
  return OkStatus();
}

template class GemmPlan<float>;
template class GemmPlan<double>;

}  // namespace mmtune
