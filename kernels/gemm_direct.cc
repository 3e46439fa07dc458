// The direct family: register tiles read A and B where they are, with no packing, which wins
// for small matrices where packing would cost as much as the product. Tiles run the in-place
// micro-kernel (A by rows or, transposed, by columns; B by rows); a tile with fewer rows than the
// kernel runs its edge variant, which reads only the rows that exist. A partial last column
// panel runs the edge variant too: where that masks B (AVX-512) it reads the panel in place,
// elsewhere (B read a whole tile wide) from a zero-padded copy (k x nr, made once per panel and
// k block); a transposed B is copied to row-major once, since the kernels read op(B) by rows.
// Partial tiles run the snug kernel of their size (SnugTiles: a 12x32 kernel's last 8 rows run
// 8x32), so they cost the FMAs of the registered tile that covers them, not a whole tile's.
// With kc > 0 the k loop is split into blocks of kc, outermost, so that the m x kc block of A and
// each kc x nr panel of B stay in L2 when the whole A or panel would not: every block after the
// first adds its product to C (beta = 1), so C is read only where the caller's beta says so.
#include <algorithm>
#include <cstdint>

#include "kernels/cache_line.h"
#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {

namespace {

// A first, narrow panel can line B's later panels up with the cache lines. Where B's rows are
// not line-aligned (malloc's 16-byte offset), an nr-wide panel row spans one line more than it
// needs (4 lines for 48 floats instead of 3). That costs where the panels stream from L3 or
// memory, and the narrow panel costs a tile's FMAs for a few columns, so it is taken only for a
// large B in many panels, whose rows all have the same offset from a line, where the edge
// kernel reads the narrow panel in place (masked B). Where B fits in a few MiB the narrow panel
// costs more than it saves (docs/kernels.md, Families).
constexpr std::int64_t kMinPanelsToAlign = 16;
constexpr std::int64_t kMinBytesOfBToAlign = std::int64_t{8} << 20;

// The narrow panel's columns for a thread's columns [col_begin, col_end), or 0. Out of line: it
// runs once per call, and the direct task it would grow must stay inlined.
template <typename T>
[[gnu::noinline]] std::int64_t AligningLead(const MatrixView<T>& b, std::int64_t col_begin,
                                            std::int64_t col_end, int nr) {
  if (col_end - col_begin < kMinPanelsToAlign * nr) return 0;
  return ElementsBeforeLine(b.data + col_begin);
}

}  // namespace

// What every thread's share of one direct GEMM has in common, prepared once per call. Passed
// by value: the one-thread path then keeps it in registers across the kernel calls, where a
// lambda capturing the driver's locals by reference, its closure handed to the pool too, would
// make every tile reload them through the closure, a visible share of a small call.
template <typename T>
struct DirectWork {
  const RowMajorGemm<T>* g;  // the shape, leading dimensions and scalars; its pointers unused
  const T* a;
  const T* b;  // op(B), row-major (a transposed B's copy)
  T* c;
  std::int64_t ldb;
  std::int64_t k_block;
  const SnugTiles<T>* snug;  // the kernels of partial tiles
  MicroKernelFn<T> full_tile;
  int mr;
  int nr;
  int prefetch_a;
  int prefetch_b;
  bool prefetch_c;
  bool a_by_rows;
  bool row_panels_first;  // TileOrder::kRowPanels
  bool plain;  // whole tiles by rows run the kernel's rows_plain (see MakeDirectWork)
  bool masks_b;  // the edge kernel reads a partial panel of B in place
  bool may_align;  // a first narrow panel may line B's panels up (see kMinBytesOfBToAlign)
  // The epilogue, on each tile of the last k block: whole tiles by rows apply it in registers
  // (`finishing_tile`, null where there is none), the others after their kernel.
  MicroKernelFn<T> finishing_tile;
  EpilogueCall<T> epilogue;
};

// The kernel of a tile of m <= mr rows and n <= nr columns: the full-tile variant where the
// snug kernel's rows are all there and it reads its columns of B whole (they exist, or the
// driver padded the panel), else its edge variant.
template <typename T>
[[gnu::always_inline]] inline MicroKernelFn<T> TileKernel(const DirectWork<T>& w, int m, int n) {
  if (m == w.mr && n == w.nr) return w.full_tile;
  const MicroKernelEntry<T>& kernel = w.snug->For(m, n);
  const bool full = m == kernel.mr && (n == kernel.nr || !w.masks_b);
  if (w.a_by_rows) {
    // The plain kernel stores whole tiles: only where the snug tile's columns are all there.
    if (w.plain && m == kernel.mr && n == kernel.nr) return kernel.rows_plain;
    return full ? kernel.rows : kernel.rows_edge;
  }
  return full ? kernel.cols : kernel.cols_edge;
}

// A tile call's arguments, those that every tile of this GEMM shares set. Built in place by
// each caller (this inlines): copying a prepared struct makes the copy's wide loads wait on the
// narrow stores that have just filled it (store forwarding fails), which shows in small calls.
template <typename T>
[[gnu::always_inline]] inline MicroKernelArgs<T> SharedTileArgs(const DirectWork<T>& w) {
  MicroKernelArgs<T> args;
  args.k = w.g->k;
  args.lda = w.g->a.ld;
  args.ldb = w.ldb;
  args.ldc = w.g->ldc;
  args.alpha = w.g->alpha;
  args.beta = w.g->beta;
  args.prefetch_a = w.prefetch_a;
  args.prefetch_b = w.prefetch_b;
  args.prefetch_c = w.prefetch_c;
  return args;
}

// Column panels of columns [col_begin, col_end): `lead` columns first where lead > 0, then nr
// each, the last `tail` wide.
struct ColumnPanels {
  std::int64_t lead = 0;
  std::int64_t tail = 0;
  std::int64_t tail_begin = 0;
};

template <typename T>
ColumnPanels SplitColumns(const DirectWork<T>& w, std::int64_t col_begin, std::int64_t col_end) {
  ColumnPanels panels;
  panels.lead =
      w.may_align ? AligningLead(MatrixView<T>{w.b, w.ldb}, col_begin, col_end, w.nr) : 0;
  panels.tail = (col_end - (col_begin + panels.lead)) % w.nr;
  panels.tail_begin = col_end - panels.tail;
  return panels;
}

// Whether the calling thread holds the scratch memory RunDirectTiles needs for columns
// [col_begin, col_end): the zero-padded copy of a partial tail panel where B is not masked.
template <typename T>
bool AcquireTailCopy(const DirectWork<T>& w, std::int64_t col_begin, std::int64_t col_end) {
  if (w.masks_b || SplitColumns(w, col_begin, col_end).tail == 0) return true;
  const std::int64_t depth = std::min(w.k_block, w.g->k);
  return ThreadWorkspaceOf<T>(WorkspaceSlot::kEdgeB, static_cast<std::size_t>(w.nr * depth)) !=
         nullptr;
}

// The tiles of rows [row_begin, row_end) x columns [col_begin, col_end) of C, one k block at a
// time, in the config's tile order. The calling thread has acquired its tail copy
// (AcquireTailCopy), so the workspace requests below only return it.
template <typename T>
[[gnu::always_inline]] inline void RunDirectTiles(const DirectWork<T> w, std::int64_t row_begin,
                                                  std::int64_t row_end, std::int64_t col_begin,
                                                  std::int64_t col_end) {
  const RowMajorGemm<T>& g = *w.g;
  const std::int64_t k = g.k;
  const ColumnPanels panels = SplitColumns(w, col_begin, col_end);
  const std::int64_t lead = panels.lead;
  const std::int64_t body_begin = col_begin + lead;
  const std::int64_t tail = panels.tail;
  const std::int64_t tail_begin = panels.tail_begin;
  MicroKernelArgs<T> args = SharedTileArgs(w);
  if (w.finishing_tile != nullptr) {
    args.epilogue.bias_kind = g.epilogue.bias_kind;
    args.epilogue.activation = g.epilogue.activation;
  }
  // Rows of the last, partial row panel (or a whole panel's, where there is none).
  const int bottom_rows = static_cast<int>((row_end - row_begin - 1) % w.mr + 1);
  for (std::int64_t p = 0; p < k; p += w.k_block) {
    args.k = std::min(w.k_block, k - p);
    if (p > 0) args.beta = T(1);
    const bool finishes = p + args.k == k && w.epilogue.Active();
    const T* a_block = w.a_by_rows ? w.a + p : w.a + p * g.a.ld;
    // A partial panel runs the edge kernel, which reads it in place where it masks B, else a
    // zero-padded copy (only the tail can need one: a lead is taken only where B is masked).
    const T* padded_tail = nullptr;
    if (tail > 0 && !w.masks_b) {
      T* padded =
          ThreadWorkspaceOf<T>(WorkspaceSlot::kEdgeB, static_cast<std::size_t>(w.nr * args.k));
      PackB(MatrixView<T>{w.b, w.ldb}, p, args.k, tail_begin, tail, w.nr, 1, padded);
      padded_tail = padded;
    }
    // visit(j) for the column panel at column j, with b_panel, args.n and args.ldb set to it.
    const T* b_panel = nullptr;
    auto for_each_panel = [&](auto&& visit) __attribute__((always_inline)) {
      args.ldb = w.ldb;
      auto in_place = [&](std::int64_t j, std::int64_t width) __attribute__((always_inline)) {
        args.n = static_cast<int>(width);
        b_panel = w.b + p * w.ldb + j;
        visit(j);
      };
      if (lead > 0) in_place(col_begin, lead);  // under a line, of 16 panels or more (AligningLead)
      for (std::int64_t j = body_begin; j < tail_begin; j += w.nr) in_place(j, w.nr);
      if (tail > 0 && padded_tail == nullptr) {
        in_place(tail_begin, tail);
      } else if (tail > 0) {
        args.n = static_cast<int>(tail);
        args.ldb = w.nr;
        b_panel = padded_tail;
        visit(tail_begin);
      }
    };
    auto call = [&](MicroKernelFn<T> tile, std::int64_t i, std::int64_t j)
                    __attribute__((always_inline)) {
      const T* const a_tile = w.a_by_rows ? a_block + i * g.a.ld : a_block + i;
      T* const c_tile = w.c + i * g.ldc + j;
      if (!finishes) [[likely]] {
        tile(a_tile, b_panel, c_tile, args);
      } else if (tile == w.full_tile && w.finishing_tile != nullptr) {
        args.epilogue.bias = BiasFrom(g.epilogue, i, j);
        w.finishing_tile(a_tile, b_panel, c_tile, args);
      } else {
        tile(a_tile, b_panel, c_tile, args);
        w.epilogue.Apply(c_tile, g.ldc, 1, i, j, args.m, args.n);
      }
    };
    if (w.row_panels_first) {
      for (std::int64_t i = row_begin; i < row_end; i += w.mr) {
        args.m = static_cast<int>(std::min<std::int64_t>(w.mr, row_end - i));
        // Looked up once a row panel; only the lead and the tail panel, narrower, look theirs up.
        const MicroKernelFn<T> tile = TileKernel(w, args.m, w.nr);
        for_each_panel([&](std::int64_t j) __attribute__((always_inline)) {
          call(args.n == w.nr ? tile : TileKernel(w, args.m, args.n), i, j);
        });
      }
      continue;
    }
    for_each_panel([&](std::int64_t j) __attribute__((always_inline)) {
      const MicroKernelFn<T> tile = TileKernel(w, w.mr, args.n);
      const MicroKernelFn<T> bottom_tile = TileKernel(w, bottom_rows, args.n);
      for (std::int64_t i = row_begin; i < row_end; i += w.mr) {
        args.m = static_cast<int>(std::min<std::int64_t>(w.mr, row_end - i));
        call(args.m == w.mr ? tile : bottom_tile, i, j);
      }
    });
  }
}

// The tiles of the common case of a small problem on one thread, in one k block, every column
// panel read in place: visit(i, j, m, n, kernel) for the tile at row i and column j, in the
// config's tile order. RunDirectTiles runs the same tiles measurably slower: its k blocks,
// aligning lead and padded panels cost more than their branches suggest.
template <typename T, typename Visit>
[[gnu::always_inline]] inline void ForEachSmallTile(const DirectWork<T>& w, Visit&& visit) {
  const RowMajorGemm<T>& g = *w.g;
  // The kernels are looked up once a column (or row) panel, not once a tile: in a small problem
  // of many partial tiles (f64 20^3 in 4x24: five tiles of 20 columns) a lookup per tile is a
  // large share of the call.
  if (w.row_panels_first) {
    const int right_columns = static_cast<int>((g.n - 1) % w.nr + 1);
    for (std::int64_t i = 0; i < g.m; i += w.mr) {
      const int rows = static_cast<int>(std::min<std::int64_t>(w.mr, g.m - i));
      const MicroKernelFn<T> tile = TileKernel(w, rows, w.nr);
      const MicroKernelFn<T> right_tile = TileKernel(w, rows, right_columns);
      for (std::int64_t j = 0; j < g.n; j += w.nr) {
        const int width = static_cast<int>(std::min<std::int64_t>(w.nr, g.n - j));
        visit(i, j, rows, width, width == w.nr ? tile : right_tile);
      }
    }
    return;
  }
  const int bottom_rows = static_cast<int>((g.m - 1) % w.mr + 1);
  for (std::int64_t j = 0; j < g.n; j += w.nr) {
    const int width = static_cast<int>(std::min<std::int64_t>(w.nr, g.n - j));
    const MicroKernelFn<T> tile = TileKernel(w, w.mr, width);
    const MicroKernelFn<T> bottom_tile = TileKernel(w, bottom_rows, width);
    for (std::int64_t i = 0; i < g.m; i += w.mr) {
      const int rows = static_cast<int>(std::min<std::int64_t>(w.mr, g.m - i));
      visit(i, j, rows, width, rows == w.mr ? tile : bottom_tile);
    }
  }
}

// What every call of a direct GEMM needs, but for a transposed B's copy (RunDirect makes it).
template <typename T>
DirectWork<T> MakeDirectWork(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
                             const SnugTiles<T>& snug, const RowMajorGemm<T>& g, const T* a,
                             const T* b, T* c) {
  const std::int64_t k = g.k;
  DirectWork<T> work;
  work.g = &g;
  work.a = a;
  work.b = b;
  work.c = c;
  work.ldb = g.b.trans == Trans::kYes ? g.n : g.b.ld;
  work.k_block = config.kc > 0 ? std::min<std::int64_t>(config.kc, k) : k;
  work.a_by_rows = g.a.trans == Trans::kNo;
  work.row_panels_first = config.tile_order == TileOrder::kRowPanels;
  work.snug = &snug;
  // The plain product, C = op(A) op(B) in one k block with nothing prefetched (the default
  // config's), runs whole tiles by rows in the lean kernel instance (rows_plain).
  work.plain = work.a_by_rows && g.alpha == T(1) && g.beta == T(0) && work.k_block == k &&
               config.prefetch_a == 0 && config.prefetch_b == 0 && !config.prefetch_c;
  work.full_tile = !work.a_by_rows ? kernel.cols : work.plain ? kernel.rows_plain : kernel.rows;
  work.mr = config.mr;
  work.nr = config.nr;
  work.prefetch_a = config.prefetch_a;
  work.prefetch_b = config.prefetch_b;
  work.prefetch_c = config.prefetch_c;
  work.masks_b = kernel.edge_reads_n_columns_of_b;
  work.finishing_tile = work.a_by_rows && !g.epilogue.Empty() ? kernel.rows_epilogue : nullptr;
  work.epilogue = EpilogueCall<T>(g.epilogue, g.dequantize, config.isa);
  const auto element_size = static_cast<std::int64_t>(sizeof(T));
  work.may_align = work.masks_b && k * g.n * element_size >= kMinBytesOfBToAlign &&
                   work.ldb * element_size % kCacheLineBytes == 0;
  return work;
}

// Whether one thread runs `w` as ForEachSmallTile's tiles (which leave C as the kernels write it).
template <typename T>
bool RunsSmall(const DirectWork<T>& w) {
  return w.k_block == w.g->k && !w.may_align && (w.masks_b || w.g->n % w.nr == 0) &&
         !w.epilogue.Active();
}

template <typename T>
bool RunDirect(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
               const SnugTiles<T>& snug, const RowMajorGemm<T>& g, const T* a, const T* b, T* c,
               ThreadPool& pool) {
  DirectWork<T> work = MakeDirectWork(config, kernel, snug, g, a, b, c);
  // The in-place kernels read op(B) row by row; a transposed B is copied to row-major once.
  if (g.b.trans == Trans::kYes) {
    const MatrixView<T> view{b, g.b.ld, Trans::kYes};
    T* copy = ThreadWorkspaceOf<T>(WorkspaceSlot::kVector, static_cast<std::size_t>(g.k * g.n));
    if (copy == nullptr) return false;
    for (std::int64_t p = 0; p < g.k; ++p) {
      for (std::int64_t j = 0; j < g.n; ++j) copy[p * g.n + j] = view.At(p, j);
    }
    work.b = copy;
  }

  const int team = std::max(1, std::min(config.threads, pool.size()));
  // One thread runs on the caller's thread: no task indirection (small problems pay per call).
  if (team == 1) {
    if (RunsSmall(work)) {
      MicroKernelArgs<T> args = SharedTileArgs(work);
      ForEachSmallTile(work, [&](std::int64_t i, std::int64_t j, int rows, int cols,
                                 MicroKernelFn<T> tile) __attribute__((always_inline)) {
        args.m = rows;
        args.n = cols;
        tile(work.a_by_rows ? work.a + i * g.a.ld : work.a + i, work.b + j,
             work.c + i * g.ldc + j, args);
      });
      return true;
    }
    if (!AcquireTailCopy(work, 0, g.n)) return false;
    RunDirectTiles(work, 0, g.m, 0, g.n);
    return true;
  }
  const bool split_rows = config.parallel_loop == ParallelLoop::kIc;
  const std::int64_t m = g.m;
  const std::int64_t n = g.n;
  // Member `tid`'s part of C: rows [row_begin, row_end) x columns [col_begin, col_end).
  struct Part {
    std::int64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  };
  auto part_of = [&](int tid) {
    std::int64_t first = 0, last = 0;
    if (split_rows) {
      Partition(CeilDiv(m, work.mr), team, tid, &first, &last);
      return Part{first * work.mr, std::min<std::int64_t>(last * work.mr, m), 0, n};
    }
    Partition(CeilDiv(n, work.nr), team, tid, &first, &last);
    return Part{0, m, first * work.nr, std::min<std::int64_t>(last * work.nr, n)};
  };
  auto acquire = [&](int tid) {
    const Part part = part_of(tid);
    return part.row_begin >= part.row_end || part.col_begin >= part.col_end ||
           AcquireTailCopy(work, part.col_begin, part.col_end);
  };
  return RunIndependentShares(pool, team, acquire, [&](int tid) {
    if (!acquire(tid)) return false;
    const Part part = part_of(tid);
    if (part.row_begin < part.row_end && part.col_begin < part.col_end) {
      RunDirectTiles(work, part.row_begin, part.row_end, part.col_begin, part.col_end);
    }
    return true;
  });
}

template <typename T>
DirectTilePlan<T> PlanDirectTiles(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
                                  const SnugTiles<T>& snug, const RowMajorGemm<T>& g) {
  DirectTilePlan<T> plan;
  const DirectWork<T> work = MakeDirectWork<T>(config, kernel, snug, g, nullptr, nullptr, nullptr);
  const std::int64_t tiles = CeilDiv(g.m, config.mr) * CeilDiv(g.n, config.nr);
  if (config.threads != 1 || g.b.trans == Trans::kYes || !RunsSmall(work) ||
      tiles > DirectTilePlan<T>::kMaxTiles) {
    return plan;
  }
  const MicroKernelArgs<T> shared = SharedTileArgs(work);
  ForEachSmallTile(work, [&](std::int64_t i, std::int64_t j, int rows, int cols,
                             MicroKernelFn<T> tile) {
    typename DirectTilePlan<T>::Tile& planned = plan.tiles[plan.count++];
    planned = {work.a_by_rows ? i * g.a.ld : i, j, i * g.ldc + j, tile, shared};
    planned.args.m = rows;
    planned.args.n = cols;
  });
  return plan;
}

template bool RunDirect<float>(const KernelConfig&, const MicroKernelEntry<float>&,
                               const SnugTiles<float>&, const RowMajorGemm<float>&, const float*,
                               const float*, float*, ThreadPool&);
template bool RunDirect<double>(const KernelConfig&, const MicroKernelEntry<double>&,
                                const SnugTiles<double>&, const RowMajorGemm<double>&,
                                const double*, const double*, double*, ThreadPool&);
template DirectTilePlan<float> PlanDirectTiles<float>(const KernelConfig&,
                                                      const MicroKernelEntry<float>&,
                                                      const SnugTiles<float>&,
                                                      const RowMajorGemm<float>&);
template DirectTilePlan<double> PlanDirectTiles<double>(const KernelConfig&,
                                                        const MicroKernelEntry<double>&,
                                                        const SnugTiles<double>&,
                                                        const RowMajorGemm<double>&);

}  // namespace mmtune::detail
