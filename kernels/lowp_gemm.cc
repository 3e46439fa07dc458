// The low-precision plans and their packed loops (jc, pc, ic, jr, ir; see gemm_packed.cc; the
// gemv family is in lowp_gemv.cc). The differences from the f32 driver: k blocks are whole
// groups, both operands are always packed, and there is no column-major transposition trick (it
// would swap the unsigned and the signed operand of s8): a column-major operand is read through
// a transposed view and C is written with its own strides by the scalar epilogue. Threads split
// jc (nothing shared) or ic (the packed B block is shared).
#include "kernels/lowp_gemm.h"

#include <algorithm>

#include "kernels/gemm_args.h"
#include "kernels/gemm_internal.h"
#include "kernels/lowp_gemv.h"
#include "kernels/lowp_packing.h"
#include "kernels/workspace.h"

namespace mmtune {
namespace {

using detail::CeilDiv;
using detail::Flip;
using detail::Partition;
using detail::RoundUp;

template <class Kind>
void ScaleC(const LowpGemmArgs<Kind>& args) {
  using C = typename Kind::C;
  for (std::int64_t i = 0; i < args.m; ++i) {
    for (std::int64_t j = 0; j < args.n; ++j) {
      C& out = args.c[StoredOffset(args.layout, i, j, args.ldc)];
      if (args.beta == 0) {
        out = C(0);
      } else if constexpr (std::is_same_v<C, float>) {
        out *= args.beta;
      } else {
        out = static_cast<C>(static_cast<std::uint32_t>(args.beta) *
                             static_cast<std::uint32_t>(out));
      }
    }
  }
}

template <class Kind>
void RunPackedLowp(const KernelConfig& config, const LowpMicroKernelEntry<Kind>& kernel,
                   const LowpGemmArgs<Kind>& args, ThreadPool& pool) {
  using A = typename Kind::A;
  using B = typename Kind::B;
  constexpr int G = Kind::kGroup;
  const bool row_major = args.layout == Layout::kRowMajor;
  const MatrixView<A> a{args.a, args.lda, row_major ? args.trans_a : Flip(args.trans_a)};
  const MatrixView<B> b{args.b, args.ldb, row_major ? args.trans_b : Flip(args.trans_b)};
  const std::int64_t row_stride = row_major ? args.ldc : 1;
  const std::int64_t col_stride = row_major ? 1 : args.ldc;

  const int mr = config.mr;
  const int nr = config.nr;
  const std::int64_t kc = std::min<std::int64_t>(config.kc, RoundUp(args.k, G));
  const std::int64_t mc = std::min<std::int64_t>(config.mc, RoundUp(args.m, mr));
  const std::int64_t nc = std::min<std::int64_t>(config.nc, RoundUp(args.n, nr));
  const int team = std::max(1, std::min(config.threads, pool.size()));
  const bool share_b = team > 1 && config.parallel_loop == ParallelLoop::kIc;
  const int members = share_b ? team : 1;

  const std::size_t a_elements = static_cast<std::size_t>(mc * kc);
  const std::size_t b_elements = static_cast<std::size_t>(RoundUp(nc, nr) * kc);
  B* shared_b = share_b ? ThreadWorkspaceOf<B>(WorkspaceSlot::kPackedB, b_elements) : nullptr;
  SpinBarrier barrier(members);

  LowpMicroKernelArgs<Kind> base;
  base.alpha = args.alpha;
  base.row_stride = row_stride;
  base.col_stride = col_stride;
  base.prefetch_a = config.prefetch_a;
  base.prefetch_b = config.prefetch_b;
  base.prefetch_c = config.prefetch_c;

  auto task = [&](int tid) {
    const int member = share_b ? tid : 0;
    std::int64_t col_begin = 0;
    std::int64_t col_end = args.n;
    if (!share_b && team > 1) {  // jc split: whole nr-panels per thread
      std::int64_t first = 0;
      std::int64_t last = 0;
      Partition(CeilDiv(args.n, nr), team, tid, &first, &last);
      col_begin = first * nr;
      col_end = std::min<std::int64_t>(last * nr, args.n);
    }
    B* packed_b = share_b ? shared_b : ThreadWorkspaceOf<B>(WorkspaceSlot::kPackedB, b_elements);
    A* packed_a = ThreadWorkspaceOf<A>(WorkspaceSlot::kPackedA, a_elements);
    LowpMicroKernelArgs<Kind> kargs = base;

    for (std::int64_t jc = col_begin; jc < col_end; jc += nc) {
      const std::int64_t nb = std::min(nc, col_end - jc);
      const std::int64_t b_panels = CeilDiv(nb, nr);
      for (std::int64_t pc = 0; pc < args.k; pc += kc) {
        const std::int64_t kb = std::min(kc, args.k - pc);
        const std::int64_t panel_depth = RoundUp(kb, G);  // elements per line of a panel
        kargs.groups = panel_depth / G;
        kargs.beta = pc == 0 ? args.beta : typename Kind::Scalar(1);

        std::int64_t first = 0;
        std::int64_t last = 0;
        Partition(b_panels, members, member, &first, &last);
        for (std::int64_t q = first; q < last; ++q) {
          PackBGrouped(b, pc, kb, jc + q * nr, std::min<std::int64_t>(nr, nb - q * nr), nr, G,
                       packed_b + q * nr * panel_depth);
        }
        barrier.ArriveAndWait();

        std::int64_t row_begin = 0;
        std::int64_t row_end = args.m;
        if (share_b) {
          Partition(CeilDiv(args.m, mr), members, member, &first, &last);
          row_begin = first * mr;
          row_end = std::min<std::int64_t>(last * mr, args.m);
        }
        for (std::int64_t ic = row_begin; ic < row_end; ic += mc) {
          const std::int64_t mb = std::min(mc, row_end - ic);
          PackAGrouped(a, ic, mb, pc, kb, mr, G, packed_a);
          for (std::int64_t q = 0; q < b_panels; ++q) {
            kargs.b = packed_b + q * nr * panel_depth;
            kargs.n = static_cast<int>(std::min<std::int64_t>(nr, nb - q * nr));
            for (std::int64_t ir = 0; ir < mb; ir += mr) {
              kargs.a = packed_a + ir * panel_depth;
              kargs.m = static_cast<int>(std::min<std::int64_t>(mr, mb - ir));
              kargs.c = args.c + (ic + ir) * row_stride + (jc + q * nr) * col_stride;
              kernel.packed(kargs);
            }
          }
        }
        barrier.ArriveAndWait();  // before the B block is packed again
      }
    }
  };
  pool.Run(team, task);
}

}  // namespace

template <class Kind>
Result<LowpGemmPlan<Kind>> LowpGemmPlan<Kind>::Create(const KernelConfig& config) {
  if (auto status = config.ValidateFor(Kind::kDType); !status) return status.error();
  const CpuFeatures& cpu = HostCpuFeatures();
  if (config.isa > cpu.MaxIsaLevel() || !CpuRunsLowp<Kind>(cpu, config.isa)) {
    return MakeError(ErrorCode::kUnsupported, std::string("this CPU cannot run ") +
                                                  ToString(config.isa) + " " +
                                                  ToString(Kind::kDType) + " kernels");
  }
  LowpGemmPlan plan;
  plan.config_ = config;
  if (config.family == KernelFamily::kGemv) {
    plan.gemv_kernel_ = FindLowpGemvKernel<Kind>(config.isa, config.mr, config.nr);
  } else {
    plan.micro_kernel_ =
        FindLowpMicroKernel<Kind>(config.isa, config.mr, config.nr, config.k_unroll);
  }
  return plan;
}

template <class Kind>
Status LowpGemmPlan<Kind>::Run(const LowpGemmArgs<Kind>& args, ThreadPool& pool) const {
  if (auto status = CheckGemmArguments(args.layout, args.trans_a, args.trans_b, args.m, args.n,
                                       args.k, args.lda, args.ldb, args.ldc);
      !status) {
    return status;
  }
  if (config_.family == KernelFamily::kGemv && args.m != 1 && args.n != 1) [[unlikely]] {
    return config_.ValidateShape(args.m, args.n);
  }
  if (args.m == 0 || args.n == 0) return OkStatus();
  if (args.k == 0 || args.alpha == 0) {
    ScaleC(args);
    return OkStatus();
  }
  if (config_.family == KernelFamily::kGemv) {
    detail::RunLowpGemv(config_, *gemv_kernel_, args, pool);
  } else {
    RunPackedLowp(config_, *micro_kernel_, args, pool);
  }
  return OkStatus();
}

template class LowpGemmPlan<Bf16Gemm>;
template class LowpGemmPlan<S8Gemm>;

}  // namespace mmtune
