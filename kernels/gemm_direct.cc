// The direct family: register tiles read A and B where they are, with no packing, which wins
// for small matrices where packing would cost as much as the product. Tiles run the in-place
// micro-kernel (A by rows or, transposed, by columns; B by rows); a tile with fewer rows than the
// kernel runs its edge variant, which reads only the rows that exist. A partial last column
// panel runs the edge variant too: where that masks B (AVX-512) it reads the panel in place,
// elsewhere (B read a whole tile wide) from a zero-padded copy (k x nr, made once per panel and
// k block); a transposed B is copied to row-major once, since the kernels read op(B) by rows.
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
// kernel reads the narrow panel in place (masked B). Zen 4, f32, B 16 bytes past a line,
// interleaved: 128x3072x768 +10%, 128x768x3072 +5%, 128x4096x4096 +3-8%, 256x3072x1536 +4%;
// where B fits in a few MiB it lost: 128x768x768 -6%, 128x1024x1024 -1..-6%, 256^3 -10%.
constexpr std::int64_t kMinPanelsToAlign = 16;
constexpr std::int64_t kMinBytesOfBToAlign = std::int64_t{8} << 20;

// The narrow panel's columns for a thread's columns [col_begin, col_end), or 0. Out of line: it
// runs once per call, and the direct task it would grow must stay inlined.
template <typename T>
[[gnu::noinline]] std::int64_t AligningLead(const MatrixView<T>& b, std::int64_t col_begin,
                                            std::int64_t col_end, int nr) {
  const auto address = reinterpret_cast<std::uintptr_t>(b.data + col_begin);
  if (col_end - col_begin < kMinPanelsToAlign * nr || address % sizeof(T) != 0) return 0;
  const std::uintptr_t past_line = address % kCacheLineBytes;
  return static_cast<std::int64_t>((kCacheLineBytes - past_line) % kCacheLineBytes / sizeof(T));
}

}  // namespace

template <typename T>
void RunDirect(const KernelConfig& config, const MicroKernelEntry<T>& kernel,
               const RowMajorGemm<T>& g, ThreadPool& pool) {
  const int mr = config.mr;
  const int nr = config.nr;
  const std::int64_t k = g.k;
  const std::int64_t k_block = config.kc > 0 ? std::min<std::int64_t>(config.kc, k) : k;

  // The in-place kernels read op(B) row by row; a transposed B is copied to row-major once.
  // `b` points at the caller's view rather than copying it: a wide copy of a struct just
  // written field by field stalls on store forwarding.
  const MatrixView<T>* b = &g.b;
  MatrixView<T> b_row_major;
  if (g.b.trans == Trans::kYes) {
    T* copy = ThreadWorkspaceOf<T>(WorkspaceSlot::kVector, static_cast<std::size_t>(k * g.n));
    for (std::int64_t p = 0; p < k; ++p) {
      for (std::int64_t j = 0; j < g.n; ++j) copy[p * g.n + j] = g.b.At(p, j);
    }
    b_row_major = {copy, g.n, Trans::kNo};
    b = &b_row_major;
  }
  const bool a_by_rows = g.a.trans == Trans::kNo;
  const MicroKernelFn<T> full_tile = a_by_rows ? kernel.rows : kernel.cols;
  const MicroKernelFn<T> edge_tile = a_by_rows ? kernel.rows_edge : kernel.cols_edge;

  // Built in place in each task: copying a prepared struct made the copy's wide loads wait on
  // the narrow stores that had just filled it (store forwarding fails), ~3 ns a call at 8^3.
  auto new_args = [&] {
    MicroKernelArgs<T> args;
    args.k = k;
    args.lda = g.a.ld;
    args.alpha = g.alpha;
    args.beta = g.beta;
    args.ldc = g.ldc;
    args.prefetch_a = config.prefetch_a;
    args.prefetch_b = config.prefetch_b;
    args.prefetch_c = config.prefetch_c;
    return args;
  };

  const int team = std::max(1, std::min(config.threads, pool.size()));
  // Whether a first narrow panel may line B's panels up (see kMinBytesOfBToAlign).
  const auto element_size = static_cast<std::int64_t>(sizeof(T));
  const bool may_align = kernel.edge_reads_n_columns_of_b &&
                         k * g.n * element_size >= kMinBytesOfBToAlign &&
                         b->ld * element_size % kCacheLineBytes == 0;
  // Inlined into this function for one thread: an out-of-line task cost 16^3 about 8%.
  auto task = [&](int tid) __attribute__((always_inline)) {
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

    const std::int64_t lead = may_align ? AligningLead(*b, col_begin, col_end, nr) : 0;
    MicroKernelArgs<T> args = new_args();
    for (std::int64_t p = 0; p < k; p += k_block) {
      args.k = std::min(k_block, k - p);
      if (p > 0) args.beta = T(1);
      const T* a_block = a_by_rows ? g.a.data + p : g.a.data + p * g.a.ld;
      std::int64_t width = lead > 0 ? lead : nr;  // of the next panel, before the matrix edge
      for (std::int64_t j = col_begin; j < col_end; j += width, width = nr) {
        width = std::min(width, col_end - j);
        args.n = static_cast<int>(width);
        // A partial panel runs the edge kernel, which reads it in place where it masks B.
        const bool partial = width < nr;
        const bool masked_b = partial && kernel.edge_reads_n_columns_of_b;
        if (!partial || masked_b) {
          args.b = b->data + p * b->ld + j;
          args.ldb = b->ld;
        } else {
          T* padded = ThreadWorkspaceOf<T>(WorkspaceSlot::kEdgeB,
                                           static_cast<std::size_t>(nr * args.k));
          PackB(*b, p, args.k, j, args.n, nr, padded);
          args.b = padded;
          args.ldb = nr;
        }
        for (std::int64_t i = row_begin; i < row_end; i += mr) {
          args.m = static_cast<int>(std::min<std::int64_t>(mr, row_end - i));
          args.a = a_by_rows ? a_block + i * g.a.ld : a_block + i;
          args.c = g.c + i * g.ldc + j;
          (args.m == mr && !masked_b ? full_tile : edge_tile)(args);
        }
      }
    }
  };
  // One thread runs on the caller's thread: no task indirection (small problems pay per call).
  if (team == 1) {
    task(0);
  } else {
    pool.Run(team, task);
  }
}

template void RunDirect<float>(const KernelConfig&, const MicroKernelEntry<float>&,
                               const RowMajorGemm<float>&, ThreadPool&);
template void RunDirect<double>(const KernelConfig&, const MicroKernelEntry<double>&,
                                const RowMajorGemm<double>&, ThreadPool&);

}  // namespace mmtune::detail
