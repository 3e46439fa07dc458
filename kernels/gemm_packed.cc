// The packed family: the five loops around the micro-kernel, written once for every ISA.
//
//   jc: nc columns of C/B      (B block kc x nc packed, lives in L3)
//    pc: kc of the k dimension  (first block applies beta, later ones accumulate)
//     ic: mc rows of C/A        (A block mc x kc packed, lives in L2)
//      jr: nr-column micro-panels of B (kc x nr, lives in L1)
//       ir: mr-row micro-panels of A -> micro-kernel on an mr x nr tile of C
//
// Threads split jc (nothing shared), ic (the packed B block is shared) or jr (packed A and B are
// shared). Members that share a packed block pack their share of its panels, then meet at a
// barrier before anyone reads it, and again before it is overwritten.
#include <algorithm>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {

template <typename T>
void RunPacked(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
               const RowMajorGemm<T>& g, ThreadPool& pool) {
  const int mr = config.mr;
  const int nr = config.nr;
  const std::int64_t kc = std::min<std::int64_t>(config.kc, g.k);
  const std::int64_t mc = std::min<std::int64_t>(config.mc, RoundUp(g.m, mr));
  const std::int64_t nc = std::min<std::int64_t>(config.nc, RoundUp(g.n, nr));
  const int team = std::max(1, std::min(config.threads, pool.size()));
  const ParallelLoop loop = team > 1 ? config.parallel_loop : ParallelLoop::kJc;
  const bool share_b = loop != ParallelLoop::kJc;
  const bool share_a = loop == ParallelLoop::kJr;
  const int members = share_b ? team : 1;

  const std::size_t a_elements = static_cast<std::size_t>(mc * kc);
  const std::size_t b_elements = static_cast<std::size_t>(RoundUp(nc, nr) * kc);
  T* shared_b = share_b ? ThreadWorkspaceOf<T>(WorkspaceSlot::kPackedB, b_elements) : nullptr;
  T* shared_a = share_a ? ThreadWorkspaceOf<T>(WorkspaceSlot::kPackedA, a_elements) : nullptr;
  SpinBarrier barrier(members);

  MicroKernelArgs<T> base;
  base.alpha = g.alpha;
  base.ldc = g.ldc;
  base.prefetch_a = config.prefetch_a;
  base.prefetch_b = config.prefetch_b;
  base.prefetch_c = config.prefetch_c;
  const MicroKernelFn<T> micro_kernel = kernel.packed;

  auto task = [&](int tid) {
    const int member = share_b ? tid : 0;
    std::int64_t col_begin = 0;
    std::int64_t col_end = g.n;
    if (!share_b && team > 1) {  // jc split: whole nr-panels per thread
      std::int64_t first = 0;
      std::int64_t last = 0;
      Partition(CeilDiv(g.n, nr), team, tid, &first, &last);
      col_begin = first * nr;
      col_end = std::min<std::int64_t>(last * nr, g.n);
    }
    T* packed_b =
        share_b ? shared_b : ThreadWorkspaceOf<T>(WorkspaceSlot::kPackedB, b_elements);
    T* packed_a =
        share_a ? shared_a : ThreadWorkspaceOf<T>(WorkspaceSlot::kPackedA, a_elements);
    MicroKernelArgs<T> args = base;

    for (std::int64_t jc = col_begin; jc < col_end; jc += nc) {
      const std::int64_t nb = std::min(nc, col_end - jc);
      const std::int64_t b_panels = CeilDiv(nb, nr);
      for (std::int64_t pc = 0; pc < g.k; pc += kc) {
        const std::int64_t kb = std::min(kc, g.k - pc);
        args.k = kb;
        args.beta = pc == 0 ? g.beta : T(1);

        std::int64_t first = 0;
        std::int64_t last = 0;
        Partition(b_panels, members, member, &first, &last);
        if (first < last) {  // this member's panels of the block, in one pass over B's rows
          PackB(g.b, pc, kb, jc + first * nr, std::min(nb, last * nr) - first * nr, nr,
                packed_b + first * nr * kb);
        }
        barrier.ArriveAndWait();

        std::int64_t row_begin = 0;
        std::int64_t row_end = g.m;
        if (loop == ParallelLoop::kIc) {
          Partition(CeilDiv(g.m, mr), members, member, &first, &last);
          row_begin = first * mr;
          row_end = std::min<std::int64_t>(last * mr, g.m);
        }
        for (std::int64_t ic = row_begin; ic < row_end; ic += mc) {
          const std::int64_t mb = std::min(mc, row_end - ic);
          const std::int64_t a_panels = CeilDiv(mb, mr);
          std::int64_t jr_first = 0;
          std::int64_t jr_last = b_panels;
          if (share_a) {
            Partition(a_panels, members, member, &first, &last);
            for (std::int64_t q = first; q < last; ++q) {
              PackA(g.a, ic + q * mr, std::min<std::int64_t>(mr, mb - q * mr), pc, kb, mr,
                    packed_a + q * mr * kb);
            }
            barrier.ArriveAndWait();
            Partition(b_panels, members, member, &jr_first, &jr_last);
          } else {
            PackA(g.a, ic, mb, pc, kb, mr, packed_a);
          }
          for (std::int64_t q = jr_first; q < jr_last; ++q) {
            const T* b_panel = packed_b + q * nr * kb;
            args.n = static_cast<int>(std::min<std::int64_t>(nr, nb - q * nr));
            T* c_column = g.c + jc + q * nr;
            for (std::int64_t ir = 0; ir < mb; ir += mr) {
              args.m = static_cast<int>(std::min<std::int64_t>(mr, mb - ir));
              micro_kernel(packed_a + ir * kb, b_panel, c_column + (ic + ir) * g.ldc, args);
            }
          }
          if (share_a) barrier.ArriveAndWait();  // before the A block is packed again
        }
        barrier.ArriveAndWait();  // before the B block is packed again
      }
    }
  };
  pool.Run(team, task);
}

template void RunPacked<float>(const KernelConfig&, const MicroKernelEntry<float>&,
                               const RowMajorGemm<float>&, ThreadPool&);
template void RunPacked<double>(const KernelConfig&, const MicroKernelEntry<double>&,
                                const RowMajorGemm<double>&, ThreadPool&);

}  // namespace mmtune::detail
