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

// The checks of GemmPlan::Run that do not look at the pointers.
template <typename T>
Status CheckShape(const KernelConfig& config, const GemmArgs<T>& args) {
  if (auto status = CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n,
                                       args.k, args.lda, args.ldb, args.ldc);
      !status) {
    return status;
  }
  // Only gemv configs constrain the shape; the common case skips the call.
  if (config.family == KernelFamily::kGemv && args.m != 1 && args.n != 1) [[unlikely]] {
    return config.ValidateShape(args.m, args.n);
  }
  return OkStatus();
}

// `args` in row-major terms (see RowMajorGemm).
template <typename T>
detail::RowMajorGemm<T> RowMajorProblem(const GemmArgs<T>& args) {
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
  return g;
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
    // Only the direct driver runs partial tiles in smaller kernels; packed tiles are padded.
    if (config.family == KernelFamily::kDirect) {
      plan.snug_tiles_ = &SnugTiles<T>::Of(*plan.micro_kernel_);
    }
  }
  return plan;
}

template <typename T>
Status GemmPlan<T>::Run(const GemmArgs<T>& args, ThreadPool& pool) const {
  if (auto status = CheckShape(config_, args); !status) return status;
  const detail::RowMajorGemm<T> g = RowMajorProblem(args);
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
      detail::RunDirect(config_, *micro_kernel_, *snug_tiles_, g, g.a.data, g.b.data, g.c,
                        pool);
      break;
    case KernelFamily::kPacked:
      detail::RunPacked(config_, *micro_kernel_, g, pool);
      break;
  }
  return OkStatus();
}

template <typename T>
Result<BoundGemm<T>> GemmPlan<T>::Bind(const GemmArgs<T>& shape) const {
  if (auto status = CheckShape(config_, shape); !status) return status.error();
  BoundGemm<T> bound;
  bound.plan_ = *this;
  bound.shape_ = shape;
  bound.shape_.a = nullptr;
  bound.shape_.b = nullptr;
  bound.shape_.c = nullptr;
  bound.problem_ = RowMajorProblem(bound.shape_);
  const detail::RowMajorGemm<T>& g = bound.problem_;
  bound.runs_direct_ = config_.family == KernelFamily::kDirect && g.m > 0 && g.n > 0 &&
                       g.k > 0 && g.alpha != T(0);
  if (bound.runs_direct_) {
    bound.tiles_ = detail::PlanDirectTiles(config_, *micro_kernel_, *snug_tiles_, g);
  }
  return bound;
}

template <typename T>
void BoundGemm<T>::Run(const T* a, const T* b, T* c, ThreadPool& pool) const {
  if (runs_direct_) [[likely]] {
    // Column-major problems swap A and B in row-major terms (see RowMajorGemm).
    const bool row_major = shape_.layout == Layout::kRowMajor;
    if (tiles_.count > 0) {
      detail::RunDirectTilePlan(tiles_, row_major ? a : b, row_major ? b : a, c);
      return;
    }
    detail::RunDirect(plan_.config_, *plan_.micro_kernel_, *plan_.snug_tiles_, problem_,
                      row_major ? a : b, row_major ? b : a, c, pool);
    return;
  }
  GemmArgs<T> args = shape_;
  args.a = a;
  args.b = b;
  args.c = c;
  // Cannot fail: Bind made the same checks.
  static_cast<void>(plan_.Run(args, pool));
}

template class GemmPlan<float>;
template class GemmPlan<double>;
template class BoundGemm<float>;
template class BoundGemm<double>;

}  // namespace mmtune
