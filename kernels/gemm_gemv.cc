// The gemv family of every GEMM: M = 1 or N = 1 (decode steps, one token at a time).
// Memory-bound, so the only goal is to stream the matrix once, in place and sequentially, at
// full bandwidth. One operand is the matrix and the other the vector (row-major terms):
//   M = 1: c[0, j] = sum_p op(A)(0, p) * op(B)(p, j): the matrix is op(B), the vector A's row;
//   N = 1: c[i, 0] = sum_p op(A)(i, p) * op(B)(p, 0): the matrix is op(A), the vector B's column.
//   - dot form, where each output's k values are contiguous in the matrix: `mr` rows are read
//     together, each dotted with the vector (copied to contiguous memory first if strided);
//   - axpy form otherwise: the matrix's storage rows run along the output; `mr` of them at a
//     time are added, scaled, into a contiguous accumulator, which is scaled into C at the end.
// The f32 / f64 dot kernels apply alpha and beta themselves; the low-precision kernels return
// raw sums in their own types (A and B differ for s8, so they come as an A-matrix and a B-matrix
// variant), finished here. Threads split the output elements.
#include <algorithm>
#include <cstdint>

#include "kernels/gemm_internal.h"
#include "kernels/workspace.h"

namespace mmtune::detail {
namespace {

// alpha * sum + beta * out; out is not read when beta = 0; s32 wraps modulo 2^32.
template <typename X>
typename GemmTypes<X>::C Finish(typename GemmTypes<X>::C sum, typename GemmTypes<X>::Scalar alpha,
                                typename GemmTypes<X>::Scalar beta,
                                const typename GemmTypes<X>::C& out) {
  using C = typename GemmTypes<X>::C;
  if constexpr (std::is_floating_point_v<C>) {
    return beta == C(0) ? alpha * sum : alpha * sum + beta * out;
  } else {
    std::uint32_t value = static_cast<std::uint32_t>(alpha) * static_cast<std::uint32_t>(sum);
    if (beta != 0) value += static_cast<std::uint32_t>(beta) * static_cast<std::uint32_t>(out);
    return static_cast<C>(value);
  }
}

// A strided vector copied to contiguous memory of the calling thread (the dot form loads it in
// whole vectors), or the vector itself when it already is; null where the copy's memory cannot
// be had.
template <typename T>
const T* Contiguous(const T* x, std::int64_t incx, std::int64_t k, WorkspaceSlot slot) {
  if (incx == 1) return x;
  T* copy = ThreadWorkspaceOf<T>(slot, static_cast<std::size_t>(k));
  if (copy == nullptr) return nullptr;
  for (std::int64_t p = 0; p < k; ++p) copy[p] = x[p * incx];
  return copy;
}

}  // namespace

template <typename X>
bool RunGemv(const KernelConfig& config, const typename KernelEntries<X>::Gemv& kernel,
             const RowMajorGemm<X>& g, ThreadPool& pool) {
  using C = typename GemmTypes<X>::C;
  constexpr bool kLowPrecision = GemmTypes<X>::kLowPrecision;
  const bool vector_a = g.m == 1;
  const bool dot = GemvDotForm(g.m, g.a.trans, g.b.trans);
  const std::int64_t len = vector_a ? g.n : g.m;
  const std::int64_t k = g.k;
  const std::int64_t incy = vector_a ? g.c_col_stride : g.ldc;
  // The vector's stride along k: A's row 0 or B's column 0; the dot form reads it contiguous.
  std::int64_t incx =
      vector_a ? (g.a.trans == Trans::kNo ? 1 : g.a.ld) : (g.b.trans == Trans::kNo ? g.b.ld : 1);
  const auto* xa = g.a.data;
  const auto* xb = g.b.data;
  if (dot) {
    if (vector_a) xa = Contiguous(xa, incx, k, WorkspaceSlot::kPackedA);
    if (!vector_a) xb = Contiguous(xb, incx, k, WorkspaceSlot::kPackedB);
    if (xa == nullptr || xb == nullptr) return false;
    incx = 1;
  }
  const std::int64_t lda = g.a.ld;
  const std::int64_t ldb = g.b.ld;

  const int team = std::max(1, std::min(config.threads, pool.size()));
  const EpilogueCall<C> epilogue(g.epilogue, g.dequantize, config.isa);
  // The epilogue of outputs [begin, begin + count): a row of C (M = 1) or a column (N = 1).
  auto finish = [&](std::int64_t begin, std::int64_t count) {
    if (!epilogue.Active()) return;
    if (vector_a) {
      epilogue.Apply(g.c + begin * incy, g.ldc, incy, 0, begin, 1, count);
    } else {
      epilogue.Apply(g.c + begin * incy, incy, g.c_col_stride, begin, 0, count, 1);
    }
  };
  // Member `tid`'s outputs [begin, begin + count), and its sums' offset in its scratch.
  struct Part {
    std::int64_t begin = 0, count = 0, shift = 0;
    bool needs_sums = false;
  };
  auto part_of = [&](int tid) {
    // Whole row steps (dot) or vector steps (axpy) per thread keep the kernels on their fast path.
    const std::int64_t unit = dot ? config.mr : std::max(1, config.nr);
    std::int64_t first = 0;
    std::int64_t last = 0;
    Partition(CeilDiv(len, unit), team, tid, &first, &last);
    Part part;
    part.begin = first * unit;
    part.count = std::max<std::int64_t>(0, std::min(last * unit, len) - part.begin);
    // Raw sums (the axpy form, and the low-precision dot form) go through this thread's scratch.
    // f32 / f64 axpy: the sums start at the matrix columns' offset within a cache line: the
    // kernel reads the columns before the matrix's first line boundary apart
    // (microkernel_impl.h), and its main loop then finds the sums on whole lines as well.
    part.needs_sums = part.count > 0 && (!dot || kLowPrecision);
    if constexpr (!kLowPrecision) {
      if (part.needs_sums) {
        constexpr std::int64_t kLineElements =
            kCacheLineBytes / static_cast<std::int64_t>(sizeof(C));
        const std::int64_t before_line =
            ElementsBeforeLine(vector_a ? g.b.data + part.begin : g.a.data + part.begin);
        part.shift = before_line == 0 ? 0 : kLineElements - before_line;
      }
    }
    return part;
  };
  auto scratch_of = [&](const Part& part) {
    return part.needs_sums ? ThreadWorkspaceOf<C>(WorkspaceSlot::kVector,
                                                  static_cast<std::size_t>(part.count + part.shift))
                           : nullptr;
  };
  auto acquire = [&](int tid) {
    const Part part = part_of(tid);
    return !part.needs_sums || scratch_of(part) != nullptr;
  };
  auto task = [&](int tid) {
    const Part part = part_of(tid);
    C* scratch = scratch_of(part);
    if (part.needs_sums && scratch == nullptr) return false;
    if (part.count == 0) return true;
    const std::int64_t begin = part.begin;
    const std::int64_t count = part.count;
    const std::int64_t shift = part.shift;
    C* y = g.c + begin * incy;
    C* sums = nullptr;
    if (dot) {
      if constexpr (!kLowPrecision) {
        const auto* mat = vector_a ? g.b.data + begin * ldb : g.a.data + begin * lda;
        kernel.dot(count, k, mat, vector_a ? ldb : lda, vector_a ? xa : xb, y, incy, g.alpha,
                   g.beta);
        finish(begin, count);
        return true;
      } else {
        sums = scratch;
        if (vector_a) {
          kernel.dot_b(count, k, g.b.data + begin * ldb, ldb, xa, sums);
        } else {
          kernel.dot_a(count, k, g.a.data + begin * lda, lda, xb, sums);
        }
      }
    } else {
      sums = scratch + shift;
      std::fill(sums, sums + count, C(0));
      if constexpr (kLowPrecision) {
        if (vector_a) {
          kernel.axpy_b(k, count, xa, incx, g.b.data + begin, ldb, sums);
        } else {
          kernel.axpy_a(k, count, xb, incx, g.a.data + begin, lda, sums);
        }
      } else {
        kernel.axpy(k, count, vector_a ? xa : xb, incx,
                    vector_a ? g.b.data + begin : g.a.data + begin, vector_a ? ldb : lda, sums);
      }
    }
    for (std::int64_t r = 0; r < count; ++r) {
      C& out = y[r * incy];
      out = Finish<X>(sums[r], g.alpha, g.beta, out);
    }
    finish(begin, count);
    return true;
  };
  return RunIndependentShares(pool, team, acquire, task);
}

#define MMTUNE_INSTANTIATE_RUN_GEMV(X)                                                  \
  template bool RunGemv<X>(const KernelConfig&, const typename KernelEntries<X>::Gemv&, \
                           const RowMajorGemm<X>&, ThreadPool&);
MMTUNE_INSTANTIATE_RUN_GEMV(float)
MMTUNE_INSTANTIATE_RUN_GEMV(double)
MMTUNE_INSTANTIATE_RUN_GEMV(Bf16Gemm)
MMTUNE_INSTANTIATE_RUN_GEMV(S8Gemm)
#undef MMTUNE_INSTANTIATE_RUN_GEMV

}  // namespace mmtune::detail
