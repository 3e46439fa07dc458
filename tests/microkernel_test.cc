// Every registered micro-kernel and GEMV kernel, at every ISA level this CPU runs, against the
// reference: all m <= MR and n <= NR, k in {0, 1, odd, large}, all three A modes and the
// in-place edge variants and the plain full-tile instance, alpha/beta variants, canaries around
// the tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "gemm_test_util.h"
#include "guarded_buffer.h"
#include "kernels/microkernel.h"
#include "kernels/packing.h"

namespace mmtune {
namespace {

using testing::CheckResult;
using testing::GemmCase;
using testing::GuardedCopy;
using testing::MakeCase;
using testing::RunnableLevels;
using testing::StoredExtent;

// The arguments of a micro-kernel call for the tile of `gc` (its shape, alpha, beta and C's
// leading dimension) reading A and B with leading dimensions `lda` and `ldb` (unused by the
// packed mode).
template <typename T>
MicroKernelArgs<T> TileArgs(const GemmCase<T>& gc, std::int64_t lda, std::int64_t ldb) {
  MicroKernelArgs<T> args;
  args.k = gc.k;
  args.lda = lda;
  args.ldb = ldb;
  args.ldc = gc.c.ld;
  args.m = static_cast<int>(gc.m);
  args.n = static_cast<int>(gc.n);
  args.alpha = gc.alpha;
  args.beta = gc.beta;
  return args;
}

template <typename T>
class MicroKernelTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MicroKernelTest, ElementTypes);

TYPED_TEST(MicroKernelTest, EveryKernelMatchesTheReference) {
  using T = TypeParam;
  std::mt19937_64 rng(42);
  int kernels = 0;
  for (IsaLevel isa : RunnableLevels()) {
    for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
      ++kernels;
      const std::string name = std::string(ToString(isa)) + " " + std::to_string(kernel.mr) +
                               "x" + std::to_string(kernel.nr) + " ku" +
                               std::to_string(kernel.k_unroll);
      for (std::int64_t k : {0, 1, 7, 67}) {
        for (int m = 1; m <= kernel.mr; ++m) {
          for (int n = 1; n <= kernel.nr; ++n) {
            // Alternate beta = 0 (with NaN in C) and beta != 0, and alpha = 1 with other
            // values, so that every store path runs (alpha = 1 with beta = 0 has its own).
            const bool beta_zero = (m + n + k) % 2 == 0;
            const T beta = beta_zero ? T(0) : T(-1.5);
            const T alpha = (m + n + k) % 3 == 0 ? T(1) : T(0.75);
            // Row-major NN case: A is m x k with lda >= k, B is k x n, C is m x n.
            GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                         alpha, beta, 3, beta_zero, rng);
            // Packed mode: pack the operands exactly as the drivers do.
            std::vector<T> pa(static_cast<std::size_t>(kernel.mr * k + 1));
            std::vector<T> pb(static_cast<std::size_t>(kernel.nr * k + 1));
            PackA<T>({gc.a.data(), gc.a.ld, Trans::kNo}, 0, m, 0, k, kernel.mr, 1, pa.data());
            PackB<T>({gc.b.data(), gc.b.ld, Trans::kNo}, 0, k, 0, n, kernel.nr, 1, pb.data());
            MicroKernelArgs<T> args = TileArgs(gc, 0, 0);
            args.prefetch_a = static_cast<int>(k % 3);
            args.prefetch_b = 2;
            args.prefetch_c = (m % 2) == 0;
            kernel.packed(pa.data(), pb.data(), gc.c.data(), args);
            if (CheckResult(gc, name + " packed") > 0) return;
          }
        }
        // The edge variants read A in place for every partial tile (m <= MR, n <= NR), by rows
        // and transposed, from a copy of exactly A's extent followed by an inaccessible page:
        // reading a row past m at the end faults. B comes as the direct driver gives it: in
        // place where n = NR or the kernel masks B (then from a copy of exactly B's k x n
        // extent, so a read past column n of the last row faults), else zero-padded to NR.
        for (Trans ta : {Trans::kNo, Trans::kYes}) {
          for (int m = 1; m <= kernel.mr; ++m) {
            for (int n = 1; n <= kernel.nr; ++n) {
              const bool beta_zero = (m * n + k) % 2 == 1;
              const T alpha = (m + n) % 3 == 0 ? T(1) : T(-0.5);
              GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, ta, Trans::kNo, m, n, k, alpha,
                                           beta_zero ? T(0) : T(2), (m + n) % 3, beta_zero, rng);
              const GuardedCopy<T> a(
                  gc.a.data(), StoredExtent(Layout::kRowMajor, ta, m, k, gc.a.ld));
              std::vector<T> padded_b(static_cast<std::size_t>(k * kernel.nr));
              PackB<T>({gc.b.data(), gc.b.ld, Trans::kNo}, 0, k, 0, n, kernel.nr, 1,
                       padded_b.data());
              const bool b_in_place = n == kernel.nr || kernel.edge_reads_n_columns_of_b;
              const GuardedCopy<T> b(
                  b_in_place ? gc.b.data() : padded_b.data(),
                  b_in_place ? StoredExtent(Layout::kRowMajor, Trans::kNo, k, n, gc.b.ld)
                             : padded_b.size());
              MicroKernelArgs<T> args = TileArgs(gc, gc.a.ld, b_in_place ? gc.b.ld : kernel.nr);
              args.prefetch_c = (n % 2) == 0;
              (ta == Trans::kNo ? kernel.rows_edge : kernel.cols_edge)(a.data(), b.data(),
                                                                       gc.c.data(), args);
              if (CheckResult(gc, name + (ta == Trans::kNo ? " rows_edge" : " cols_edge")) > 0) {
                return;
              }
            }
          }
        }
        // The full-tile in-place modes read the full MR x k of A and k x NR of B: run them on
        // full tiles, with A by rows (kRows) and transposed (kCols), as the plain product
        // (alpha = 1, beta = 0, NaN in C) and with beta = 0.5.
        for (Trans ta : {Trans::kNo, Trans::kYes}) {
          for (bool plain : {true, false}) {
            GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, ta, Trans::kNo, kernel.mr,
                                         kernel.nr, k, T(1), plain ? T(0) : T(0.5), 5, plain, rng);
            const MicroKernelArgs<T> args = TileArgs(gc, gc.a.ld, gc.b.ld);
            (ta == Trans::kNo ? kernel.rows : kernel.cols)(gc.a.data(), gc.b.data(), gc.c.data(),
                                                           args);
            if (CheckResult(gc, name + (ta == Trans::kNo ? " rows" : " cols")) > 0) return;
          }
        }
        // The lean instance of the plain product of a whole tile by rows: NaN in C, which it
        // must not read, and prefetch fields it must ignore.
        GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, kernel.mr,
                                     kernel.nr, k, T(1), T(0), 5, true, rng);
        MicroKernelArgs<T> args = TileArgs(gc, gc.a.ld, gc.b.ld);
        args.prefetch_a = 3;
        args.prefetch_c = true;
        kernel.rows_plain(gc.a.data(), gc.b.data(), gc.c.data(), args);
        if (CheckResult(gc, name + " rows_plain") > 0) return;
      }
    }
  }
  EXPECT_GT(kernels, 0);
}

TYPED_TEST(MicroKernelTest, EveryGemvKernelMatchesTheReference) {
  using T = TypeParam;
  std::mt19937_64 rng(7);
  for (IsaLevel isa : RunnableLevels()) {
    ASSERT_FALSE(GemvKernels<T>(isa).empty()) << ToString(isa);
    for (const GemvKernelEntry<T>& kernel : GemvKernels<T>(isa)) {
      const std::string name = std::string(ToString(isa)) + " gemv " + std::to_string(kernel.mr) +
                               "x" + std::to_string(kernel.nr);
      for (std::int64_t len : {1, 3, 8, 17, 40}) {
        for (std::int64_t k : {0, 1, 5, 33, 130}) {
          // Dot form: y (len) = alpha * A (len x k) * x + beta * y, as C = A * B with N = 1.
          GemmCase<T> dot = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kYes, len, 1, k,
                                        T(-0.5), T(2), 2, false, rng);
          // B^T stored 1 x k: x is contiguous; y = column 0 of C with stride ldc.
          kernel.dot(len, k, dot.a.data(), dot.a.ld, dot.b.data(), dot.c.data(), dot.c.ld,
                     dot.alpha, dot.beta);
          if (CheckResult(dot, name + " dot") > 0) return;

          // Axpy form: acc (len) += sum_p x[p * incx] * B[p][j], as C (1 x len) = x^T * B.
          GemmCase<T> axpy = MakeCase<T>(Layout::kRowMajor, Trans::kYes, Trans::kNo, 1, len, k,
                                         T(1), T(0), 3, true, rng);
          std::vector<T> acc(static_cast<std::size_t>(len), T(0));
          kernel.axpy(k, len, axpy.a.data(), axpy.a.ld, axpy.b.data(), axpy.b.ld, acc.data());
          for (std::int64_t j = 0; j < len; ++j) axpy.c.data()[j] = acc[static_cast<std::size_t>(j)];
          if (CheckResult(axpy, name + " axpy") > 0) return;
        }
      }
    }
  }
}

// The GEMV kernels read the elements before the matrix's first cache-line boundary apart from
// the rest (microkernel_impl.h, ElementsBeforeLine). Matrices and vectors here end exactly where
// an inaccessible page begins, so a read past either faults, and start at every element offset
// within a line as k runs through three lines' worth: k below, at and past the head, with one
// row or column and with several (rows in step where the leading dimension is a whole number of
// lines, out of step elsewhere).
TYPED_TEST(MicroKernelTest, GemvKernelsReadMatricesFromAnyOffsetWithinALine) {
  using T = TypeParam;
  constexpr std::int64_t kLineElements = 64 / static_cast<std::int64_t>(sizeof(T));
  std::mt19937_64 rng(11);
  for (IsaLevel isa : RunnableLevels()) {
    for (const GemvKernelEntry<T>& kernel : GemvKernels<T>(isa)) {
      const std::string name = std::string(ToString(isa)) + " gemv " + std::to_string(kernel.mr) +
                               "x" + std::to_string(kernel.nr);
      std::vector<bool> dot_offsets(static_cast<std::size_t>(kLineElements), false);
      std::vector<bool> axpy_offsets(static_cast<std::size_t>(kLineElements), false);
      for (std::int64_t len : {std::int64_t{1}, std::int64_t{kernel.mr} + 1, kLineElements}) {
        for (std::int64_t k = 1; k <= 3 * kLineElements; ++k) {
          const auto offset_of = [](const T* p) {
            return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p) % 64 / sizeof(T));
          };
          // Dot form: y (len) = alpha * A (len x k) * x + beta * y.
          GemmCase<T> dot = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kYes, len, 1, k,
                                        T(0.75), k % 2 == 0 ? T(0) : T(-1.5), k % 3, k % 2 == 0,
                                        rng);
          const GuardedCopy<T> a(dot.a.data(),
                                 StoredExtent(Layout::kRowMajor, Trans::kNo, len, k, dot.a.ld));
          const GuardedCopy<T> x(dot.b.data(), static_cast<std::size_t>(k));
          dot_offsets[offset_of(a.data())] = true;
          kernel.dot(len, k, a.data(), dot.a.ld, x.data(), dot.c.data(), dot.c.ld, dot.alpha,
                     dot.beta);
          if (CheckResult(dot, name + " dot") > 0) return;

          // Axpy form: acc (len) = sum_p x[p] * B[p][j], as C (1 x len) = x^T * B; acc at an
          // offset of its own, with canaries around it.
          GemmCase<T> axpy = MakeCase<T>(Layout::kRowMajor, Trans::kYes, Trans::kNo, 1, len, k,
                                         T(1), T(0), k % 3, true, rng);
          const GuardedCopy<T> b(axpy.b.data(),
                                 StoredExtent(Layout::kRowMajor, Trans::kNo, k, len, axpy.b.ld));
          const GuardedCopy<T> xa(axpy.a.data(),
                                  StoredExtent(Layout::kRowMajor, Trans::kYes, 1, k, axpy.a.ld));
          axpy_offsets[offset_of(b.data())] = true;
          const std::int64_t acc_offset = k % kLineElements;
          std::vector<T> acc(static_cast<std::size_t>(len + acc_offset + kLineElements),
                             testing::kCanary<T>);
          T* acc_data = acc.data() + acc_offset;
          std::fill(acc_data, acc_data + len, T(0));
          kernel.axpy(k, len, xa.data(), axpy.a.ld, b.data(), axpy.b.ld, acc_data);
          for (std::int64_t i = 0; i < static_cast<std::int64_t>(acc.size()); ++i) {
            const bool inside = i >= acc_offset && i < acc_offset + len;
            if (!inside) {
              ASSERT_EQ(acc[static_cast<std::size_t>(i)], testing::kCanary<T>)
                  << name << " axpy wrote outside acc, len " << len << " k " << k;
            }
          }
          for (std::int64_t j = 0; j < len; ++j) axpy.c.data()[j] = acc_data[j];
          if (CheckResult(axpy, name + " axpy") > 0) return;
        }
      }
      // Every start within a line was read, in both forms (the test's own premise).
      EXPECT_EQ(std::count(dot_offsets.begin(), dot_offsets.end(), true), kLineElements) << name;
      EXPECT_EQ(std::count(axpy_offsets.begin(), axpy_offsets.end(), true), kLineElements)
          << name;
    }
  }
}

TEST(RegistryTest, FindsWhatItLists) {
  for (IsaLevel isa : {IsaLevel::kGeneric, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    const int lanes = VectorLanes(isa, sizeof(float));
    ASSERT_FALSE(MicroKernels<float>(isa).empty());
    for (const auto& entry : MicroKernels<float>(isa)) {
      EXPECT_EQ(entry.isa, isa);
      EXPECT_EQ(entry.nr % lanes, 0);
      EXPECT_EQ(FindMicroKernel<float>(isa, entry.mr, entry.nr, entry.k_unroll), &entry);
    }
    EXPECT_EQ(FindMicroKernel<float>(isa, 7, 7 * lanes, 1), nullptr);
    EXPECT_EQ(FindMicroKernel<double>(isa, 1, 1, 1), nullptr);
  }
  EXPECT_EQ(VectorLanes(IsaLevel::kAvx2, 4), 8);
  EXPECT_EQ(VectorLanes(IsaLevel::kAvx512, 8), 8);
}

}  // namespace
}  // namespace mmtune
