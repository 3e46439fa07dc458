// The gemv family: M = 1 or N = 1 (decode steps, one token at a time). Memory-bound, so the
// only goal is to stream the matrix once, sequentially, at full bandwidth:
//   - dot form: the matrix's rows are contiguous along k; `mr` rows are read together, each
//     dotted with the vector (x copied to contiguous memory first if it is strided);
//   - axpy form: the matrix's rows run along the output; `mr` rows at a time are added, scaled,
//     into a contiguous accumulator, which is scaled into C at the end.
// Both kernels read the elements before the matrix's first cache-line boundary apart, so that
// their main loops read whole lines (microkernel_impl.h, ElementsBeforeLine).
// Threads split the output elements.
#include <algorithm>
#include <cstdint>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {
namespace {

// The product as y (len outputs, stride incy) = alpha * M * x + beta * y, where M (len x k) is
// given in one of two orientations.
template <typename T>
struct GemvShape {
  std::int64_t len = 0;
  std::int64_t k = 0;
  bool dot = false;       // M's rows (one per output) are contiguous: M(r, p) = mat[r * ld + p]
  const T* mat = nullptr; // otherwise M(r, p) = mat[p * ld + r] (rows of storage run along r)
  std::int64_t ld = 0;
  const T* x = nullptr;
  std::int64_t incx = 1;
  T* y = nullptr;
  std::int64_t incy = 1;
};

template <typename T>
GemvShape<T> Orient(const RowMajorGemm<T>& g) {
  GemvShape<T> s;
  s.k = g.k;
  if (g.m == 1) {
    // c[0, j] = sum_p op(A)(0, p) * op(B)(p, j): the matrix is op(B)^T, the vector row 0 of op(A).
    s.len = g.n;
    s.y = g.c;
    s.incy = 1;
    s.x = g.a.data;
    s.incx = g.a.trans == Trans::kNo ? 1 : g.a.ld;
    s.mat = g.b.data;
    s.ld = g.b.ld;
  } else {
    // c[i, 0] = sum_p op(A)(i, p) * op(B)(p, 0).
    s.len = g.m;
    s.y = g.c;
    s.incy = g.ldc;
    s.x = g.b.data;
    s.incx = g.b.trans == Trans::kNo ? g.b.ld : 1;
    s.mat = g.a.data;
    s.ld = g.a.ld;
  }
  s.dot = GemvDotForm(g.m, g.a.trans, g.b.trans);
  return s;
}

}  // namespace

template <typename T>
void RunGemv(const KernelConfig& config, const GemvKernelEntry<T>& kernel,
             const RowMajorGemm<T>& g, ThreadPool& pool) {
  GemvShape<T> s = Orient(g);
  if (s.dot && s.incx != 1) {
    T* x = ThreadWorkspaceOf<T>(WorkspaceSlot::kVector, static_cast<std::size_t>(s.k));
    for (std::int64_t p = 0; p < s.k; ++p) x[p] = s.x[p * s.incx];
    s.x = x;
    s.incx = 1;
  }
  const int lanes_unit = std::max(1, config.nr);
  const int team = std::max(1, std::min(config.threads, pool.size()));
  auto task = [&](int tid) {
    std::int64_t first = 0, last = 0;
    // Whole row-steps (dot) or whole vector-steps (axpy) per thread keep the kernels aligned.
    const std::int64_t unit = s.dot ? config.mr : lanes_unit;
    Partition(CeilDiv(s.len, unit), team, tid, &first, &last);
    const std::int64_t begin = first * unit;
    const std::int64_t end = std::min(last * unit, s.len);
    if (begin >= end) return;
    const std::int64_t count = end - begin;
    if (s.dot) {
      kernel.dot(count, s.k, s.mat + begin * s.ld, s.ld, s.x, s.y + begin * s.incy, s.incy,
                 g.alpha, g.beta);
      return;
    }
    // acc starts at the matrix columns' offset within a cache line: the kernel reads the
    // columns before B's first line boundary apart, and its main loop then finds acc on whole
    // lines as well.
    const T* columns = s.mat + begin;
    constexpr std::int64_t kLineElements = kCacheLineBytes / static_cast<std::int64_t>(sizeof(T));
    const std::int64_t before_line = ElementsBeforeLine(columns);
    const std::int64_t shift = before_line == 0 ? 0 : kLineElements - before_line;
    T* acc = ThreadWorkspaceOf<T>(WorkspaceSlot::kVector, static_cast<std::size_t>(count + shift)) +
             shift;
    std::fill(acc, acc + count, T(0));
    kernel.axpy(s.k, count, s.x, s.incx, columns, s.ld, acc);
    for (std::int64_t r = 0; r < count; ++r) {
      T& out = s.y[(begin + r) * s.incy];
      out = g.beta == T(0) ? g.alpha * acc[r] : g.alpha * acc[r] + g.beta * out;
    }
  };
  pool.Run(team, task);
}

template void RunGemv<float>(const KernelConfig&, const GemvKernelEntry<float>&,
                             const RowMajorGemm<float>&, ThreadPool&);
template void RunGemv<double>(const KernelConfig&, const GemvKernelEntry<double>&,
                              const RowMajorGemm<double>&, ThreadPool&);

}  // namespace mmtune::detail
