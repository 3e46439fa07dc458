// Runs GEMMs with one kernel configuration: the entry point the tuner times and the runtime
// calls, one argument struct and one plan for every GEMM X of gemm_types.h (float, double,
// Bf16Gemm, S8Gemm). BLAS semantics (see reference_gemm.h and lowp_reference.h), any layout,
// transposes and leading dimensions; beta = 0 never reads C.
#pragma once

#include <cstdint>

#include "kernels/gemm_internal.h"
#include "kernels/gemm_types.h"
#include "kernels/kernel_config.h"
#include "kernels/packed_b.h"
#include "kernels/thread_pool.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// C = alpha * op(A) * op(B) + beta * C with the element types of X (gemm_types.h).
template <typename X>
struct GemmArgs {
  using Types = GemmTypes<X>;
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  typename Types::Scalar alpha = 1;
  const typename Types::A* a = nullptr;
  std::int64_t lda = 0;
  const typename Types::B* b = nullptr;
  std::int64_t ldb = 0;
  typename Types::Scalar beta = 0;
  typename Types::C* c = nullptr;
  std::int64_t ldc = 0;
  Epilogue<typename Types::C> epilogue;  // bias and activation after the product (types.h)
  // s8 only: the s32 products turned into f32 in C's storage (epilogue.h), which then holds
  // floats; needs beta = 0 and an empty `epilogue`. Not owned.
  const DequantizeToF32* dequantize = nullptr;
};

namespace detail {
// `args` in row-major terms (gemm_internal.h: RowMajorGemm).
template <typename X>
RowMajorGemm<X> RowMajorProblem(const GemmArgs<X>& args);
}  // namespace detail

template <typename X>
class BoundGemm;

// A configuration checked once and bound to its kernels, so that each call pays only for the
// BLAS argument check: what the runtime keeps per tuned problem and the tuner times.
template <typename X>
class GemmPlan {
 public:
  // Fails when the config is invalid for X (KernelConfig::ValidateFor) or needs instructions
  // this CPU lacks (the ISA level, AVX512_BF16 / AVX512_VNNI for avx512 bf16 / s8 kernels, AMX
  // for tile kernels): a plan never runs an instruction the CPU does not have.
  static Result<GemmPlan> Create(const KernelConfig& config);

  // C = alpha * op(A) * op(B) + beta * C. An error (bad arguments, a gemv plan on a matrix
  // shape, no memory for the scratch blocks) means nothing was written. `config().threads` members of `pool` work on it.
  Status Run(const GemmArgs<X>& args, ThreadPool& pool) const;
  Status Run(const GemmArgs<X>& args) const { return Run(args, DefaultThreadPool()); }

  // op(B), K x N, stored as `layout` / `trans_b` with leading dimension `ldb`, packed once for
  // this plan's config (packed family only, else kInvalidArgument); N before K as in BLAS.
  // Fails with kIo, nothing allocated, where its memory cannot be had.
  Result<PackedB<X>> PackB(Layout layout, Trans trans_b, std::int64_t n, std::int64_t k,
                           const typename GemmTypes<X>::B* b, std::int64_t ldb) const;

  // Run with B packed: `args.b`, `args.trans_b` and `args.ldb` are ignored, the rest must agree
  // with `b` (layout, K, N; kInvalidArgument otherwise), and `b` must have been packed for this
  // plan's micro-kernel and k block (PackedB::PackedFor); blocks, loop and threads may differ.
  Status Run(const GemmArgs<X>& args, const PackedB<X>& b, ThreadPool& pool) const;
  Status Run(const GemmArgs<X>& args, const PackedB<X>& b) const {
    return Run(args, b, DefaultThreadPool());
  }

  // A batch of GEMMs of one shape: item i is `args` with A, B and C moved by i times the
  // strides of `batch` (mmtune/types.h). Where the batch has at least `config().threads` items,
  // each member of the team runs a share of whole items on its own, since an item split across
  // threads gains nothing a whole item per thread does not; otherwise the items run in turn,
  // each on the whole team. Items are independent: where scratch memory runs out (kIo), some
  // items may be done and the others are unchanged, never one half-written. Malformed strides
  // (negative, C items that overlap, past the address space) fail before anything runs.
  Status RunBatch(const GemmArgs<X>& args, const BatchStrides& batch, ThreadPool& pool) const;
  // The same with an array of `count` pointers per operand (`shape`'s pointers are ignored);
  // the arrays must not be null, and C items must not overlap.
  Status RunBatch(const GemmArgs<X>& shape, std::int64_t count,
                  const typename GemmTypes<X>::A* const* a,
                  const typename GemmTypes<X>::B* const* b, typename GemmTypes<X>::C* const* c,
                  ThreadPool& pool) const;

  // This plan bound to one problem: `shape` without its pointers (a, b, c are ignored). Fails
  // where Run would fail for that problem; a BoundGemm's calls then cannot fail.
  Result<BoundGemm<X>> Bind(const GemmArgs<X>& shape) const;

  const KernelConfig& config() const { return config_; }

 private:
  using Kernels = detail::KernelsOf<X>;
  friend class BoundGemm<X>;
  // `g` (checked, M and N > 0) with `config`'s blocks and threads; false where scratch memory
  // ran out, with C unchanged.
  bool RunProblem(const KernelConfig& config, const detail::RowMajorGemm<X>& g,
                  ThreadPool& pool) const;
  // The items of a batch of `shape` (checked), item i's operands at item_at(i) (a tuple of A,
  // B and C pointers).
  template <class ItemAt>
  Status RunItems(const GemmArgs<X>& shape, std::int64_t count, const ItemAt& item_at,
                  ThreadPool& pool) const;
  KernelConfig config_;
  const typename Kernels::Micro* micro_kernel_ = nullptr;  // packed and direct families
  const typename Kernels::Snug* snug_tiles_ = nullptr;  // the kernels of partial tiles
  const typename Kernels::Gemv* gemv_kernel_ = nullptr;
};

// A plan and one problem (layout, transposes, M, N, K, leading dimensions, alpha, beta), checked
// and put in row-major terms once; each call brings only A, B and C. For a program that runs
// the same small GEMM many times, as libxsmm's dispatched kernels are used: a call skips
// GemmPlan::Run's checks and the row-major problem it writes on each call, a visible share of a
// small GEMM (docs/PERFORMANCE.md, Small shapes and the cost of a call). Direct plans run their
// driver on the bound problem; other families, where that overhead does not show, and the
// scale-only cases go through GemmPlan::Run.
template <typename X>
class BoundGemm {
 public:
  using A = typename GemmTypes<X>::A;
  using B = typename GemmTypes<X>::B;
  using C = typename GemmTypes<X>::C;

  // C = alpha * op(A) * op(B) + beta * C for the bound problem. `config().threads` members of
  // `pool` work on it. Fails only where scratch memory cannot be had, with C unchanged.
  Status Run(const A* a, const B* b, C* c, ThreadPool& pool) const;
  Status Run(const A* a, const B* b, C* c) const { return Run(a, b, c, DefaultThreadPool()); }

  const GemmArgs<X>& shape() const { return shape_; }
  // Tile calls planned at Bind (0: each call runs the direct driver or GemmPlan::Run).
  int planned_tile_calls() const { return tiles_.count; }
  const KernelConfig& config() const { return plan_.config(); }

 private:
  friend class GemmPlan<X>;
  BoundGemm() = default;  // made by GemmPlan::Bind only
  GemmPlan<X> plan_;
  GemmArgs<X> shape_;                // pointers null
  detail::RowMajorGemm<X> problem_;  // pointers null; used where `runs_direct_`
  bool runs_direct_ = false;
  typename detail::KernelsOf<X>::TilePlan tiles_;  // where `runs_direct_` and the problem is small
};

// One-shot convenience: plan and run.
template <typename X>
Status Gemm(const KernelConfig& config, const GemmArgs<X>& args, ThreadPool& pool) {
  auto plan = GemmPlan<X>::Create(config);
  if (!plan) return plan.error();
  return plan->Run(args, pool);
}

template <typename X>
Status Gemm(const KernelConfig& config, const GemmArgs<X>& args) {
  return Gemm(config, args, DefaultThreadPool());
}

extern template class GemmPlan<float>;
extern template class GemmPlan<double>;
extern template class GemmPlan<Bf16Gemm>;
extern template class GemmPlan<S8Gemm>;
extern template class BoundGemm<float>;
extern template class BoundGemm<double>;
extern template class BoundGemm<Bf16Gemm>;
extern template class BoundGemm<S8Gemm>;

}  // namespace mmtune
