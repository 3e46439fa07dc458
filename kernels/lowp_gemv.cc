// The gemv family of the low-precision GEMMs: M = 1 or N = 1 (decode steps), memory-bound, so
// the matrix is streamed once, in place, instead of being packed into k groups as the packed
// family does (which would read it twice). As in gemm_gemv.cc, one operand is the matrix and the
// other the vector:
//   M = 1: c[0, j] = sum_p op(A)(0, p) * op(B)(p, j): the matrix is op(B), the vector A's row;
//   N = 1: c[i, 0] = sum_p op(A)(i, p) * op(B)(p, 0): the matrix is op(A), the vector B's column.
// The dot form runs when each output's k values are contiguous in the matrix, the axpy form
// otherwise. Kernels return raw sums; alpha and beta are applied here. Threads split the outputs.
#include <algorithm>
#include <type_traits>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {
namespace {

// alpha * sum + beta * out; out is not read when beta = 0; s32 modulo 2^32.
template <class Kind>
typename Kind::C Finish(typename Kind::C sum, typename Kind::Scalar alpha,
                        typename Kind::Scalar beta, const typename Kind::C& out) {
  if constexpr (std::is_same_v<typename Kind::C, float>) {
    return beta == 0.0f ? alpha * sum : alpha * sum + beta * out;
  } else {
    std::uint32_t value = static_cast<std::uint32_t>(alpha) * static_cast<std::uint32_t>(sum);
    if (beta != 0) value += static_cast<std::uint32_t>(beta) * static_cast<std::uint32_t>(out);
    return static_cast<typename Kind::C>(value);
  }
}

// A strided vector copied to contiguous memory of the calling thread (the dot form loads it in
// whole vectors), or the vector itself when it already is.
template <typename T>
const T* Contiguous(const T* x, std::int64_t incx, std::int64_t k, WorkspaceSlot slot) {
  if (incx == 1) return x;
  T* copy = ThreadWorkspaceOf<T>(slot, static_cast<std::size_t>(k));
  for (std::int64_t p = 0; p < k; ++p) copy[p] = x[p * incx];
  return copy;
}

}  // namespace

template <class Kind>
void RunLowpGemv(const KernelConfig& config, const LowpGemvKernelEntry<Kind>& kernel,
                 const RowMajorGemm<Kind>& g, ThreadPool& pool) {
  using C = typename Kind::C;
  // g reads a column-major operand through its transposed view and writes C through both
  // strides (RowMajorGemm), as the packed driver does.
  const Trans ta = g.a.trans;
  const Trans tb = g.b.trans;
  const std::int64_t lda = g.a.ld;
  const std::int64_t ldb = g.b.ld;
  const bool vector_a = g.m == 1;
  const std::int64_t len = vector_a ? g.n : g.m;
  const std::int64_t incy = vector_a ? g.c_col_stride : g.ldc;
  // M = 1: column j of op(B) is contiguous when B is transposed; N = 1: row i of op(A) when A
  // is not. The vector's stride along k: A's row 0 or B's column 0.
  const bool dot = vector_a ? tb == Trans::kYes : ta == Trans::kNo;
  const std::int64_t incx = vector_a ? (ta == Trans::kNo ? 1 : lda) : (tb == Trans::kNo ? ldb : 1);
  const typename Kind::A* xa = g.a.data;
  const typename Kind::B* xb = g.b.data;
  if (dot && vector_a) xa = Contiguous(g.a.data, incx, g.k, WorkspaceSlot::kPackedA);
  if (dot && !vector_a) xb = Contiguous(g.b.data, incx, g.k, WorkspaceSlot::kPackedB);

  const int team = std::max(1, std::min(config.threads, pool.size()));
  auto task = [&](int tid) {
    // Whole row steps (dot) or vector steps (axpy) per thread keep the kernels on their fast path.
    const std::int64_t unit = dot ? config.mr : std::max(1, config.nr);
    std::int64_t first = 0;
    std::int64_t last = 0;
    Partition(CeilDiv(len, unit), team, tid, &first, &last);
    const std::int64_t begin = first * unit;
    const std::int64_t end = std::min(last * unit, len);
    if (begin >= end) return;
    const std::int64_t count = end - begin;
    C* sums = ThreadWorkspaceOf<C>(WorkspaceSlot::kVector, static_cast<std::size_t>(count));
    if (dot && vector_a) {
      kernel.dot_b(count, g.k, g.b.data + begin * ldb, ldb, xa, sums);
    } else if (dot) {
      kernel.dot_a(count, g.k, g.a.data + begin * lda, lda, xb, sums);
    } else {
      std::fill(sums, sums + count, C(0));
      if (vector_a) {
        kernel.axpy_b(g.k, count, xa, incx, g.b.data + begin, ldb, sums);
      } else {
        kernel.axpy_a(g.k, count, xb, incx, g.a.data + begin, lda, sums);
      }
    }
    for (std::int64_t r = 0; r < count; ++r) {
      C& out = g.c[(begin + r) * incy];
      out = Finish<Kind>(sums[r], g.alpha, g.beta, out);
    }
  };
  pool.Run(team, task);
}

template void RunLowpGemv<Bf16Gemm>(const KernelConfig&, const LowpGemvKernelEntry<Bf16Gemm>&,
                                    const RowMajorGemm<Bf16Gemm>&, ThreadPool&);
template void RunLowpGemv<S8Gemm>(const KernelConfig&, const LowpGemvKernelEntry<S8Gemm>&,
                                  const RowMajorGemm<S8Gemm>&, ThreadPool&);

}  // namespace mmtune::detail
