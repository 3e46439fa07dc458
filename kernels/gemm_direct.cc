// The direct family: register tiles read A and B where they are, with no packing, which wins
// for small matrices where packing would cost as much as the product. Full tiles run the
// in-place micro-kernel (A by rows or, transposed, by columns; B by rows). Edge tiles, and a
// transposed B, go through small zero-padded copies so no kernel ever reads past the matrices.
#include <algorithm>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {

template <typename T>
void RunDirect(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
               const RowMajorGemm<T>& g, ThreadPool& pool) {
  const int mr = config.mr;
  const int nr = config.nr;
  const std::int64_t k = g.k;

  // The in-place kernels read op(B) row by row; a transposed B is copied to row-major once.
  MatrixView<T> b = g.b;
  if (b.trans == Trans::kYes) {
    T* copy = ThreadWorkspaceOf<T>(WorkspaceSlot::kVector, static_cast<std::size_t>(k * g.n));
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < g.n; ++j) copy[p * g.n + j] = b.At(p, j);
    }
    b = {copy, g.n, Trans::kNo};
  }
  const MicroKernelFn<T> in_place = g.a.trans == Trans::kNo ? kernel.rows : kernel.cols;

  MicroKernelArgs<T> base;
  base.k = k;
  base.alpha = g.alpha;
  base.beta = g.beta;
  base.ldc = g.ldc;
  base.prefetch_a = config.prefetch_a;
  base.prefetch_b = config.prefetch_b;
  base.prefetch_c = config.prefetch_c;

  const int team = std::max(1, std::min(config.threads, pool.size()));
  auto task = [&](int tid) {
    std::int64_t row_begin = 0, row_end = g.m, col_begin = 0, col_end = g.n;
    std::int64_t first = 0, last = 0;
    if (team > 1 && config.parallel_loop == ParallelLoop::kIc) {
      Partition(CeilDiv(g.m, mr), team, tid, &first, &last);
      row_begin = first * mr;
      row_end = std::min<std::int64_t>(last * mr, g.m);
    } else if (team > 1) {
      Partition(CeilDiv(g.n, nr), team, tid, &first, &last);
      col_begin = first * nr;
      col_end = std::min<std::int64_t>(last * nr, g.n);
    }
    if (row_begin >= row_end || col_begin >= col_end) return;

    // The rows of a partial last row tile, packed once for every column tile.
    const std::int64_t full_row_end = row_begin + (row_end - row_begin) / mr * mr;
    T* edge_a = nullptr;
    if (full_row_end < row_end) {
      edge_a = ThreadWorkspaceOf<T>(WorkspaceSlot::kEdgeA, static_cast<std::size_t>(mr * k));
      PackA(g.a, full_row_end, row_end - full_row_end, 0, k, mr, edge_a);
    }
    T* panel_b = ThreadWorkspaceOf<T>(WorkspaceSlot::kEdgeB, static_cast<std::size_t>(nr * k));
    T* tile_a = ThreadWorkspaceOf<T>(WorkspaceSlot::kPackedA, static_cast<std::size_t>(mr * k));
    MicroKernelArgs<T> args = base;

    for (std::int64_t j = col_begin; j < col_end; j += nr) {
      const int cols = static_cast<int>(std::min<std::int64_t>(nr, col_end - j));
      const bool full_cols = cols == nr;
      // Packed copy of this B panel, made when an edge tile first needs it.
      bool panel_ready = false;
      auto packed_panel = [&]() {
        if (!panel_ready) {
          PackB(b, 0, k, j, cols, nr, panel_b);
          panel_ready = true;
        }
        return panel_b;
      };
      args.n = cols;
      for (std::int64_t i = row_begin; i < row_end; i += mr) {
        const int rows = static_cast<int>(std::min<std::int64_t>(mr, row_end - i));
        args.m = rows;
        args.c = g.c + i * g.ldc + j;
        if (rows == mr && full_cols) {
          args.a = g.a.trans == Trans::kNo ? g.a.data + i * g.a.ld : g.a.data + i;
          args.lda = g.a.ld;
          args.b = b.data + j;
          args.ldb = b.ld;
          in_place(args);
          continue;
        }
        if (rows == mr) {
          PackA(g.a, i, rows, 0, k, mr, tile_a);
          args.a = tile_a;
        } else {
          args.a = edge_a;
        }
        args.b = packed_panel();
        kernel.packed(args);
      }
    }
  };
  pool.Run(team, task);
}

template void RunDirect<float>(const KernelConfig&, const MicroKernelEntry<float>&,
                               const RowMajorGemm<float>&, ThreadPool&);
template void RunDirect<double>(const KernelConfig&, const MicroKernelEntry<double>&,
                                const RowMajorGemm<double>&, ThreadPool&);

}  // namespace mmtune::detail
