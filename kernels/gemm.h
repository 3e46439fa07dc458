// Runs GEMMs with one kernel configuration: the entry point the tuner times and the runtime
// calls. BLAS semantics (see reference_gemm.h), any layout, transposes and leading dimensions.
#pragma once

#include <cstdint>

#include "kernels/gemm_internal.h"
#include "kernels/kernel_config.h"
#include "kernels/microkernel.h"
#include "kernels/thread_pool.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

template <typename T>
struct GemmArgs {
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  T alpha = 1;
  const T* a = nullptr;
  std::int64_t lda = 0;
  const T* b = nullptr;
  std::int64_t ldb = 0;
  T beta = 0;
  T* c = nullptr;
  std::int64_t ldc = 0;
};

template <typename T>
class BoundGemm;

// A configuration checked once and bound to its kernels, so that each call pays only for the
// BLAS argument check: what the runtime keeps per tuned problem and the tuner times.
template <typename T>
class GemmPlan {
 public:
  // Fails when the config is invalid for T (KernelConfig::ValidateFor) or needs an ISA level
  // this CPU lacks: a plan never runs an instruction the CPU does not have.
  static Result<GemmPlan> Create(const KernelConfig& config);

  // C = alpha * op(A) * op(B) + beta * C. An error (bad arguments, a gemv plan on a matrix
  // shape) means nothing was written. `config().threads` members of `pool` work on it.
  Status Run(const GemmArgs<T>& args, ThreadPool& pool) const;
  Status Run(const GemmArgs<T>& args) const { return Run(args, DefaultThreadPool()); }

  // This plan bound to one problem: `shape` without its pointers (a, b, c are ignored). Fails
  // where Run would fail for that problem; a BoundGemm's calls then cannot fail.
  Result<BoundGemm<T>> Bind(const GemmArgs<T>& shape) const;

  const KernelConfig& config() const { return config_; }

 private:
  friend class BoundGemm<T>;
  KernelConfig config_;
  const MicroKernelEntry<T>* micro_kernel_ = nullptr;
  const SnugTiles<T>* snug_tiles_ = nullptr;  // direct family: the kernels of partial tiles
  const GemvKernelEntry<T>* gemv_kernel_ = nullptr;
};

// A plan and one problem (layout, transposes, M, N, K, leading dimensions, alpha, beta), checked
// and put in row-major terms once; each call brings only A, B and C. For a program that runs
// the same small GEMM many times, as libxsmm's dispatched kernels are used: at 16^3 f32 on
// Zen 4 a call took 82 ns against 88 through GemmPlan::Run (its checks and the row-major problem
// it writes on each call). Direct plans run their driver on the bound problem; other families,
// where that overhead does not show, and the scale-only cases go through GemmPlan::Run.
template <typename T>
class BoundGemm {
 public:
  // C = alpha * op(A) * op(B) + beta * C for the bound problem. `config().threads` members of
  // `pool` work on it.
  void Run(const T* a, const T* b, T* c, ThreadPool& pool) const;
  void Run(const T* a, const T* b, T* c) const { Run(a, b, c, DefaultThreadPool()); }

  const GemmArgs<T>& shape() const { return shape_; }
  // Tile calls planned at Bind (0: each call runs the direct driver or GemmPlan::Run).
  int planned_tile_calls() const { return tiles_.count; }
  const KernelConfig& config() const { return plan_.config(); }

 private:
  friend class GemmPlan<T>;
  BoundGemm() = default;  // made by GemmPlan::Bind only
  GemmPlan<T> plan_;
  GemmArgs<T> shape_;              // pointers null
  detail::RowMajorGemm<T> problem_;  // pointers null; used where `runs_direct_`
  bool runs_direct_ = false;
  detail::DirectTilePlan<T> tiles_;  // where `runs_direct_` and the problem is small
};

// One-shot convenience: plan and run.
template <typename T>
Status Gemm(const KernelConfig& config, const GemmArgs<T>& args, ThreadPool& pool) {
  auto plan = GemmPlan<T>::Create(config);
  if (!plan) return plan.error();
  return plan->Run(args, pool);
}

template <typename T>
Status Gemm(const KernelConfig& config, const GemmArgs<T>& args) {
  return Gemm(config, args, DefaultThreadPool());
}

extern template class GemmPlan<float>;
extern template class GemmPlan<double>;
extern template class BoundGemm<float>;
extern template class BoundGemm<double>;

}  // namespace mmtune
