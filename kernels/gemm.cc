#include "kernels/gemm.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/gemm_args.h"
#include "kernels/gemm_internal.h"

namespace mmtune {
namespace {

template <typename X>
using RowMajorGemm = detail::RowMajorGemm<X>;

// C = beta * C over the m x n window, then the epilogue; beta = 0 writes zeros without reading
// (NaN must not leak); s32 products wrap modulo 2^32.
template <typename X>
void ScaleC(const RowMajorGemm<X>& g, IsaLevel isa) {
  using C = typename GemmTypes<X>::C;
  for (std::int64_t i = 0; i < g.m && g.beta != 1; ++i) {
    C* row = g.c + i * g.ldc;
    for (std::int64_t j = 0; j < g.n; ++j) {
      C& out = row[j * g.c_col_stride];
      if (g.beta == 0) {
        out = C(0);
      } else if constexpr (std::is_floating_point_v<C>) {
        out *= g.beta;
      } else {
        out = static_cast<C>(static_cast<std::uint32_t>(g.beta) * static_cast<std::uint32_t>(out));
      }
    }
  }
  const EpilogueCall<C> epilogue(g.epilogue, g.dequantize, isa);
  if (epilogue.Active()) epilogue.Apply(g.c, g.ldc, g.c_col_stride, 0, 0, g.m, g.n);
}

// The checks of GemmPlan::Run that do not look at the pointers.
template <typename X>
Status CheckShape(const KernelConfig& config, const GemmArgs<X>& args) {
  if (auto status = CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n,
                                       args.k, args.lda, args.ldb, args.ldc);
      !status) {
    return status;
  }
  if (!args.epilogue.Empty()) [[unlikely]] {
    if (auto status = CheckEpilogue(args.epilogue); !status) return status;
  }
  if (args.dequantize != nullptr) [[unlikely]] {
    if constexpr (std::is_same_v<typename GemmTypes<X>::C, std::int32_t>) {
      if (auto status = CheckDequantize(*args.dequantize, args.epilogue, args.beta); !status) {
        return status;
      }
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "only the s8 GEMM dequantizes to f32");
    }
  }
  // Only gemv configs constrain the shape; the common case skips the call.
  if (config.family == KernelFamily::kGemv && args.m != 1 && args.n != 1) [[unlikely]] {
    return config.ValidateShape(args.m, args.n);
  }
  return OkStatus();
}

// Whether this CPU has every instruction that X's kernels of `config` use.
template <typename X>
bool CpuRuns(const KernelConfig& config) {
  const CpuFeatures& cpu = HostCpuFeatures();
  if (!IsaWithin(config.isa, cpu.MaxIsaLevel())) return false;
  if constexpr (GemmTypes<X>::kLowPrecision) {
    if (!CpuRunsLowp<X>(cpu, config.isa)) return false;
    if (config.family == KernelFamily::kGemv) return true;
    const auto* kernel = FindMicroKernel<X>(config.isa, config.mr, config.nr, config.k_unroll);
    return kernel != nullptr && CpuRunsLowpKernel(cpu, *kernel);
  }
  return true;
}

}  // namespace

// `args` in row-major terms (see RowMajorGemm).
template <typename X>
detail::RowMajorGemm<X> detail::RowMajorProblem(const GemmArgs<X>& args) {
  detail::RowMajorGemm<X> g;
  g.alpha = args.alpha;
  g.beta = args.beta;
  g.k = args.k;
  g.c = args.c;
  g.ldc = args.ldc;
  const bool row_major = args.layout == Layout::kRowMajor;
  if constexpr (GemmTypes<X>::kLowPrecision) {
    g.m = args.m;
    g.n = args.n;
    g.a = {args.a, args.lda, row_major ? args.trans_a : detail::Flip(args.trans_a)};
    g.b = {args.b, args.ldb, row_major ? args.trans_b : detail::Flip(args.trans_b)};
    g.ldc = row_major ? args.ldc : 1;
    g.c_col_stride = row_major ? 1 : args.ldc;
  } else if (row_major) {
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
  g.epilogue = args.epilogue;
  g.dequantize = args.dequantize;
  if (!row_major && !GemmTypes<X>::kLowPrecision) {  // C's rows are the transposed C's columns
    if (args.epilogue.bias_kind == BiasKind::kPerColumn) g.epilogue.bias_kind = BiasKind::kPerRow;
    if (args.epilogue.bias_kind == BiasKind::kPerRow) g.epilogue.bias_kind = BiasKind::kPerColumn;
  }
  return g;
}

template <typename X>
Result<GemmPlan<X>> GemmPlan<X>::Create(const KernelConfig& config) {
  constexpr DType kDType = GemmTypes<X>::kDType;
  if (auto status = config.ValidateFor(kDType); !status) return status.error();
  if (!CpuRuns<X>(config)) {
    return MakeError(ErrorCode::kUnsupported, std::string("this CPU cannot run ") +
                                                  ToString(config.isa) + " " + ToString(kDType) +
                                                  " kernels");
  }
  GemmPlan plan;
  plan.config_ = config;
  if (config.family == KernelFamily::kGemv) {
    plan.gemv_kernel_ = FindGemvKernel<X>(config.isa, config.mr, config.nr);
    return plan;
  }
  plan.micro_kernel_ = FindMicroKernel<X>(config.isa, config.mr, config.nr, config.k_unroll);
  plan.snug_tiles_ = &SnugTiles<X>::Of(*plan.micro_kernel_);
  return plan;
}

namespace {

// A driver found no memory for its scratch blocks; it wrote nothing of C. kIo, as for the
// other allocations the OS refuses.
Status OutOfScratch(const KernelConfig& config) {
  return MakeError(ErrorCode::kIo, "not enough memory for the scratch blocks of " +
                                       config.ToString() + "; C is unchanged");
}

}  // namespace

template <typename X>
Status GemmPlan<X>::Run(const GemmArgs<X>& args, ThreadPool& pool) const {
  if (auto status = CheckShape(config_, args); !status) return status;
  const RowMajorGemm<X> g = detail::RowMajorProblem(args);
  if (g.m == 0 || g.n == 0) return OkStatus();
  return RunProblem(config_, g, pool) ? OkStatus() : OutOfScratch(config_);
}

template <typename X>
bool GemmPlan<X>::RunProblem(const KernelConfig& config, const RowMajorGemm<X>& g,
                             ThreadPool& pool) const {
  if (g.k == 0 || g.alpha == 0) {
    ScaleC(g, config.isa);
    return true;
  }
  switch (config.family) {
    case KernelFamily::kGemv:
      return detail::RunGemv<X>(config, *gemv_kernel_, g, pool);
    case KernelFamily::kDirect:
      // Create refused direct configs for the low-precision GEMMs (KernelConfig::ValidateFor).
      if constexpr (!GemmTypes<X>::kLowPrecision) {
        return detail::RunDirect(config, *micro_kernel_, *snug_tiles_, g, g.a.data, g.b.data,
                                 g.c, pool);
      }
      return true;
    case KernelFamily::kPacked:
      return detail::RunPacked<X>(config, *micro_kernel_, *snug_tiles_, g, pool);
  }
  return true;
}

namespace {

// Elements from C's first to its last element, for a C of `args`' (checked) shape; the largest
// int64 where that overflows, which no stride reaches.
template <typename X>
std::int64_t CExtent(const GemmArgs<X>& args) {
  if (args.m == 0 || args.n == 0) return 0;
  const bool row_major = args.layout == Layout::kRowMajor;
  std::int64_t extent = 0;
  if (__builtin_mul_overflow((row_major ? args.m : args.n) - 1, args.ldc, &extent) ||
      __builtin_add_overflow(extent, row_major ? args.n : args.m, &extent)) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return extent;
}

Status CheckBatchCount(std::int64_t count) {
  if (count < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch count must be >= 0, got " + std::to_string(count));
  }
  return OkStatus();
}

}  // namespace

template <typename X>
template <class ItemAt>
Status GemmPlan<X>::RunItems(const GemmArgs<X>& shape, std::int64_t count,
                             const ItemAt& item_at, ThreadPool& pool) const {
  if (count == 0 || shape.m == 0 || shape.n == 0) return OkStatus();
  auto problem_of = [&](std::int64_t item) {
    GemmArgs<X> one = shape;
    std::tie(one.a, one.b, one.c) = item_at(item);
    return detail::RowMajorProblem(one);
  };
  const int team = std::clamp(config_.threads, 1, pool.size());
  if (count < team) {
    for (std::int64_t item = 0; item < count; ++item) {
      if (!RunProblem(config_, problem_of(item), pool)) return OutOfScratch(config_);
    }
    return OkStatus();
  }
  // Each member runs its items alone: the drivers run a team of one inline, without the pool.
  KernelConfig alone = config_;
  alone.threads = 1;
  std::atomic<bool> out_of_scratch{false};
  // Shares of items, so that the caller takes a worker's share that has not started.
  pool.RunShares(team, [&](int member) {
    std::int64_t begin = 0;
    std::int64_t end = 0;
    detail::Partition(count, team, member, &begin, &end);
    for (std::int64_t item = begin; item < end; ++item) {
      if (!RunProblem(alone, problem_of(item), pool)) {
        out_of_scratch.store(true, std::memory_order_relaxed);
        break;
      }
    }
    return true;  // never declined: its items may be partly written
  });
  return out_of_scratch.load() ? OutOfScratch(config_) : OkStatus();
}

template <typename X>
Status GemmPlan<X>::RunBatch(const GemmArgs<X>& args, const BatchStrides& batch,
                             ThreadPool& pool) const {
  if (auto status = CheckBatchCount(batch.count); !status) return status;
  if (auto status = CheckShape(config_, args); !status) return status;
  const auto item_at = [&](std::int64_t item) {
    return std::tuple(args.a + item * batch.a, args.b + item * batch.b, args.c + item * batch.c);
  };
  // A batch of one or none never moves by its strides.
  if (batch.count <= 1) return RunItems(args, batch.count, item_at, pool);
  if (batch.a < 0 || batch.b < 0 || batch.c < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch strides must be >= 0, got A " + std::to_string(batch.a) + ", B " +
                         std::to_string(batch.b) + ", C " + std::to_string(batch.c));
  }
  const std::int64_t c_extent = CExtent(args);
  if (batch.c < c_extent) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch stride of C (" + std::to_string(batch.c) +
                         ") is below the extent of one C (" + std::to_string(c_extent) +
                         "): the items would overlap");
  }
  // The last item's offsets, in bytes, must be addresses.
  using Types = GemmTypes<X>;
  const std::int64_t last = batch.count - 1;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (batch.a > kMax / last / static_cast<std::int64_t>(sizeof(typename Types::A)) ||
      batch.b > kMax / last / static_cast<std::int64_t>(sizeof(typename Types::B)) ||
      batch.c > kMax / last / static_cast<std::int64_t>(sizeof(typename Types::C))) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch strides x count overflow the address space");
  }
  return RunItems(args, batch.count, item_at, pool);
}

template <typename X>
Status GemmPlan<X>::RunBatch(const GemmArgs<X>& shape, std::int64_t count,
                             const typename GemmTypes<X>::A* const* a,
                             const typename GemmTypes<X>::B* const* b,
                             typename GemmTypes<X>::C* const* c, ThreadPool& pool) const {
  if (auto status = CheckBatchCount(count); !status) return status;
  if (auto status = CheckShape(config_, shape); !status) return status;
  if (count > 0 && (a == nullptr || b == nullptr || c == nullptr)) {
    return MakeError(ErrorCode::kInvalidArgument, "a batch's pointer arrays must not be null");
  }
  return RunItems(shape, count,
                  [&](std::int64_t item) { return std::tuple(a[item], b[item], c[item]); },
                  pool);
}

template <typename X>
Result<PackedB<X>> GemmPlan<X>::PackB(Layout layout, Trans trans_b, std::int64_t n,
                                      std::int64_t k, const typename GemmTypes<X>::B* b,
                                      std::int64_t ldb) const {
  using B = typename GemmTypes<X>::B;
  if (config_.family != KernelFamily::kPacked) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "B is packed for packed-family configs only, not " + config_.ToString());
  }
  if (auto status = CheckBArguments(layout, trans_b, k, n, b, ldb); !status) {
    return status.error();
  }
  const auto too_large = [&] {
    return MakeError(ErrorCode::kInvalidArgument, "B of " + std::to_string(k) + " x " +
                                                      std::to_string(n) + " is too large to pack");
  };
  // Far past any memory, and small enough that rounding up to panels cannot overflow.
  constexpr std::int64_t kMaxExtent = std::int64_t{1} << 40;
  if (n > kMaxExtent || k > kMaxExtent) return too_large();
  PackedB<X> packed;
  packed.config_ = config_;
  packed.layout_ = layout;
  packed.trans_b_ = trans_b;
  packed.k_ = k;
  packed.n_ = n;
  packed.a_group_ = detail::AGroupOf<X>(*micro_kernel_);
  packed.a_side_ = PackedB<X>::ASideOf(layout);
  const int ag = packed.a_group_;
  const int panel = packed.a_side_ ? config_.mr : config_.nr;
  const std::int64_t kc = std::min<std::int64_t>(config_.kc, detail::RoundUp(k, ag));
  packed.kc_ = kc;
  const std::int64_t extent = detail::RoundUp(n, panel);
  const std::int64_t depth = detail::RoundUp(k, ag);
  if (extent > 0 && depth > std::numeric_limits<std::int64_t>::max() / extent /
                                static_cast<std::int64_t>(sizeof(B))) {
    return too_large();
  }
  packed.size_ = extent * depth;
  if (packed.size_ == 0) return packed;
  const auto bytes = static_cast<std::size_t>(packed.size_) * sizeof(B);
  void* memory = ::operator new(bytes, std::align_val_t{PackedB<X>::kAlignment}, std::nothrow);
  if (memory == nullptr) {
    return MakeError(ErrorCode::kIo, "not enough memory to pack B of " + std::to_string(k) +
                                         " x " + std::to_string(n) + " (" +
                                         std::to_string(bytes) + " bytes)");
  }
  packed.data_.reset(static_cast<B*>(memory));
  B* out = packed.data_.get();
  // B as the row-major problem reads it: its B, or its A where the problem swapped them.
  GemmArgs<X> shape;
  shape.layout = layout;
  shape.trans_b = trans_b;
  shape.n = n;
  shape.k = k;
  shape.b = b;
  shape.ldb = ldb;
  const RowMajorGemm<X> g = detail::RowMajorProblem(shape);
  MatrixView<B> view = g.b;
  if constexpr (!GemmTypes<X>::kLowPrecision) {
    if (packed.a_side_) view = g.a;
  }
  for (std::int64_t pc = 0; pc < k; pc += kc) {
    const std::int64_t kb = std::min(kc, k - pc);
    const std::int64_t block_depth = detail::RoundUp(kb, ag);
    B* block = out + extent * pc;
    if constexpr (!GemmTypes<X>::kLowPrecision) {
      if (packed.a_side_) {
        PackA(view, 0, n, pc, kb, panel, ag, block, block_depth);
        continue;
      }
    }
    mmtune::PackB(view, pc, kb, 0, n, panel, GemmTypes<X>::kGroup, block, block_depth);
  }
  return packed;
}

template <typename X>
Status GemmPlan<X>::Run(const GemmArgs<X>& args, const PackedB<X>& b, ThreadPool& pool) const {
  if (args.layout != b.layout() || args.k != b.k() || args.n != b.n()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("B was packed for a ") + ToString(b.layout()) +
                         "-major K x N = " + std::to_string(b.k()) + " x " +
                         std::to_string(b.n()) + ", not a " + ToString(args.layout) + "-major " +
                         std::to_string(args.k) + " x " + std::to_string(args.n));
  }
  if (config_.family != KernelFamily::kPacked) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "packed B runs on packed-family configs only, not " + config_.ToString());
  }
  if (b.size() > 0 && b.data() == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument, "the packed B was moved from");
  }
  if (!b.Fits(config_, detail::AGroupOf<X>(*micro_kernel_))) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "B was packed for " + b.config().ToString() +
                         ", whose panels differ from those of " + config_.ToString());
  }
  GemmArgs<X> full = args;
  full.b = nullptr;
  full.trans_b = b.trans_b();
  full.ldb = MinLeadingDimension(args.layout, b.trans_b(), args.k, args.n);
  if (auto status = CheckShape(config_, full); !status) return status;
  const RowMajorGemm<X> g = detail::RowMajorProblem(full);
  if (g.m == 0 || g.n == 0) return OkStatus();
  if (g.k == 0 || g.alpha == 0) {
    ScaleC(g, config_.isa);
    return OkStatus();
  }
  detail::PrepackedOperands<X> prepacked;
  if constexpr (!GemmTypes<X>::kLowPrecision) {
    if (b.a_side_) prepacked.a = b.data();
  }
  if (!b.a_side_) prepacked.b = b.data();
  return detail::RunPacked<X>(config_, *micro_kernel_, *snug_tiles_, g, pool, prepacked)
             ? OkStatus()
             : OutOfScratch(config_);
}

template <typename X>
Result<BoundGemm<X>> GemmPlan<X>::Bind(const GemmArgs<X>& shape) const {
  if (auto status = CheckShape(config_, shape); !status) return status.error();
  BoundGemm<X> bound;
  bound.plan_ = *this;
  bound.shape_ = shape;
  bound.shape_.a = nullptr;
  bound.shape_.b = nullptr;
  bound.shape_.c = nullptr;
  bound.problem_ = detail::RowMajorProblem(bound.shape_);
  if constexpr (!GemmTypes<X>::kLowPrecision) {
    const RowMajorGemm<X>& g = bound.problem_;
    // The planned tiles write C as the kernels leave it: an epilogue takes the plan's Run.
    bound.runs_direct_ = config_.family == KernelFamily::kDirect && g.m > 0 && g.n > 0 &&
                         g.k > 0 && g.alpha != X(0) && shape.epilogue.Empty();
    if (bound.runs_direct_) {
      bound.tiles_ = detail::PlanDirectTiles(config_, *micro_kernel_, *snug_tiles_, g);
    }
  }
  return bound;
}

template <typename X>
Status BoundGemm<X>::Run(const A* a, const B* b, C* c, ThreadPool& pool) const {
  if constexpr (!GemmTypes<X>::kLowPrecision) {
    if (runs_direct_) [[likely]] {
      // Column-major problems swap A and B in row-major terms (see RowMajorGemm).
      const bool row_major = shape_.layout == Layout::kRowMajor;
      if (tiles_.count > 0) {
        detail::RunDirectTilePlan(tiles_, row_major ? a : b, row_major ? b : a, c);
        return OkStatus();
      }
      return detail::RunDirect(plan_.config_, *plan_.micro_kernel_, *plan_.snug_tiles_, problem_,
                               row_major ? a : b, row_major ? b : a, c, pool)
                 ? OkStatus()
                 : OutOfScratch(plan_.config_);
    }
  }
  GemmArgs<X> args = shape_;
  args.a = a;
  args.b = b;
  args.c = c;
  // Only scratch memory can fail: Bind made the same checks.
  return plan_.Run(args, pool);
}

template detail::RowMajorGemm<float> detail::RowMajorProblem(const GemmArgs<float>&);
template detail::RowMajorGemm<double> detail::RowMajorProblem(const GemmArgs<double>&);
template detail::RowMajorGemm<Bf16Gemm> detail::RowMajorProblem(const GemmArgs<Bf16Gemm>&);
template detail::RowMajorGemm<S8Gemm> detail::RowMajorProblem(const GemmArgs<S8Gemm>&);
template class GemmPlan<float>;
template class GemmPlan<double>;
template class GemmPlan<Bf16Gemm>;
template class GemmPlan<S8Gemm>;
template class BoundGemm<float>;
template class BoundGemm<double>;
template class BoundGemm<Bf16Gemm>;
template class BoundGemm<S8Gemm>;

}  // namespace mmtune
