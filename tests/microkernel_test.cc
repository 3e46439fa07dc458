// Every registered micro-kernel and GEMV kernel, at every ISA level this CPU runs, against the
// reference: all m <= MR and n <= NR, k in {0, 1, odd, large}, all three A modes and the
// in-place edge variants, the plain full-tile instance and the instances with an epilogue,
// alpha/beta variants, canaries around the tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm_test_util.h"
#include "guarded_buffer.h"
#include "kernels/microkernel.h"
#include "kernels/packing.h"
#include "kernels/reference_gemm.h"

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

// The `_epilogue` kernels (packed on every tile corner, rows on whole tiles) against the
// reference: C = act(alpha * A B + beta * C + bias) with every activation and bias kind in
// turn, NaN in C under beta = 0, canaries around the tile. The expected values take the
// activation of the reference product; the bound grows by the activation's slope (below 1.2)
// and its own relative error.
TYPED_TEST(MicroKernelTest, EpilogueKernelsApplyItToTheTileInRegisters) {
  using T = TypeParam;
  constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                         Activation::kSilu};
  constexpr BiasKind kBiasKinds[] = {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow};
  std::mt19937_64 rng(43);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  int cases = 0;
  // The case's expected C after the epilogue, from its expected GEMM result.
  auto activate_expected = [&](GemmCase<T>& gc, const TileEpilogue<T>& epilogue) {
    const double relative = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    const double eps = std::numeric_limits<T>::epsilon();
    for (std::int64_t i = 0; i < gc.m; ++i) {
      for (std::int64_t j = 0; j < gc.n; ++j) {
        const auto at = static_cast<std::size_t>(gc.c.pad + i * gc.c.ld + j);
        const double bias = epilogue.bias_kind == BiasKind::kPerColumn ? epilogue.bias[j]
                            : epilogue.bias_kind == BiasKind::kPerRow  ? epilogue.bias[i]
                                                                       : 0.0;
        const double value = static_cast<double>(gc.expected[at]) + bias;
        const double want = ReferenceActivation(epilogue.activation, value);
        gc.expected[at] = static_cast<T>(want);
        gc.bound[at] = static_cast<T>(1.2 * gc.bound[at] + 4 * eps * (std::abs(value) + 1) +
                                      relative * std::abs(want));
      }
    }
  };
  for (IsaLevel isa : RunnableLevels()) {
    for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
      const std::string name = std::string(ToString(isa)) + " " + std::to_string(kernel.mr) +
                               "x" + std::to_string(kernel.nr) + " ku" +
                               std::to_string(kernel.k_unroll);
      std::vector<T> bias(static_cast<std::size_t>(std::max(kernel.mr, kernel.nr)));
      for (T& value : bias) value = static_cast<T>(dist(rng));
      for (std::int64_t k : {0, 1, 67}) {
        for (int m = 1; m <= kernel.mr; ++m) {
          for (int n = 1; n <= kernel.nr; ++n) {
            const int turn = cases++;
            TileEpilogue<T> epilogue;
            epilogue.bias = bias.data();
            epilogue.activation = kActivations[turn % 4];
            epilogue.bias_kind = kBiasKinds[turn / 4 % 3];
            const bool beta_zero = turn % 2 == 0;
            GemmCase<T> gc = MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k,
                                         T(turn % 3 == 0 ? 1 : 1.5), beta_zero ? T(0) : T(0.5),
                                         2, beta_zero, rng);
            activate_expected(gc, epilogue);
            std::vector<T> pa(static_cast<std::size_t>(kernel.mr * k + 1));
            std::vector<T> pb(static_cast<std::size_t>(kernel.nr * k + 1));
            PackA<T>({gc.a.data(), gc.a.ld, Trans::kNo}, 0, m, 0, k, kernel.mr, 1, pa.data());
            PackB<T>({gc.b.data(), gc.b.ld, Trans::kNo}, 0, k, 0, n, kernel.nr, 1, pb.data());
            MicroKernelArgs<T> args = TileArgs(gc, 0, 0);
            args.epilogue = epilogue;
            kernel.packed_epilogue(pa.data(), pb.data(), gc.c.data(), args);
            const std::string what = name + " packed_epilogue " + ToString(epilogue.activation) +
                                     " bias " + ToString(epilogue.bias_kind);
            if (CheckResult(gc, what) > 0) return;
          }
        }
        for (int turn = 0; turn < 12; ++turn) {
          TileEpilogue<T> epilogue;
          epilogue.bias = bias.data();
          epilogue.activation = kActivations[turn % 4];
          epilogue.bias_kind = kBiasKinds[turn / 4];
          const bool beta_zero = turn % 2 == 1;
          GemmCase<T> gc =
              MakeCase<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, kernel.mr, kernel.nr, k,
                          T(-0.5), beta_zero ? T(0) : T(2), 3, beta_zero, rng);
          activate_expected(gc, epilogue);
          MicroKernelArgs<T> args = TileArgs(gc, gc.a.ld, gc.b.ld);
          args.epilogue = epilogue;
          kernel.rows_epilogue(gc.a.data(), gc.b.data(), gc.c.data(), args);
          const std::string what = name + " rows_epilogue " + ToString(epilogue.activation) +
                                   " bias " + ToString(epilogue.bias_kind);
          if (CheckResult(gc, what) > 0) return;
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// The activations' special values (mmtune/types.h: Activation) as the `_epilogue` kernels give
// them: with k = 0 and beta = 0 each element of C is act(bias) of its column, here NaN, the
// infinities, values whose square overflows and values where the exponential leaves its range.
TYPED_TEST(MicroKernelTest, EpilogueKernelsKeepTheActivationsSpecialValues) {
  using T = TypeParam;
  using Limits = std::numeric_limits<T>;
  const std::vector<T> specials = {Limits::quiet_NaN(), Limits::infinity(), -Limits::infinity(),
                                   T(1e20), T(-1e20), Limits::max(), Limits::lowest(), T(90),
                                   T(-90), T(-0.0), T(0), T(3), T(-3), T(1e-30), T(-750), T(750)};
  for (IsaLevel isa : RunnableLevels()) {
    for (const MicroKernelEntry<T>& kernel : MicroKernels<T>(isa)) {
      for (Activation activation : {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                    Activation::kSilu}) {
        const int n = kernel.nr;
        std::vector<T> bias(static_cast<std::size_t>(n));
        for (std::size_t j = 0; j < bias.size(); ++j) bias[j] = specials[j % specials.size()];
        std::vector<T> c(static_cast<std::size_t>(kernel.mr * n), T(7));
        MicroKernelArgs<T> args;
        args.ldc = n;
        args.m = kernel.mr;
        args.n = n;
        args.epilogue.bias = bias.data();
        args.epilogue.bias_kind = BiasKind::kPerColumn;
        args.epilogue.activation = activation;
        kernel.packed_epilogue(nullptr, nullptr, c.data(), args);
        for (int j = 0; j < n; ++j) {
          const double x = static_cast<double>(bias[static_cast<std::size_t>(j)]);
          const double want = ReferenceActivation(activation, x);
          const double got = static_cast<double>(c[static_cast<std::size_t>(j)]);
          const double tolerance = std::isinf(want) ? 0.0
                                   : std::is_same_v<T, float> ? 2e-5 * std::abs(want) + 1e-30
                                                              : 1e-12 * std::abs(want) + 1e-300;
          const bool ok = std::isnan(want) ? std::isnan(got)
                          : std::isinf(want) ? got == want
                                             : std::abs(got - want) <= tolerance;
          ASSERT_TRUE(ok) << ToString(isa) << " " << kernel.mr << "x" << kernel.nr << " "
                          << ToString(activation) << "(" << x << ") = " << got << ", want "
                          << want;
        }
      }
    }
  }
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
  ASSERT_TRUE(BuildHasKernels(IsaLevel::kGeneric));  // every build, every target
  for (IsaLevel isa : kIsaLevels) {
    // Each target builds its own architecture's levels, all of them.
#if defined(__x86_64__)
    ASSERT_EQ(BuildHasKernels(isa), IsaWithin(isa, IsaLevel::kAvx512)) << ToString(isa);
#elif defined(__aarch64__)
    ASSERT_EQ(BuildHasKernels(isa), IsaWithin(isa, IsaLevel::kNeonBf16)) << ToString(isa);
#endif
    if (!BuildHasKernels(isa)) continue;
    const int lanes = VectorLanes(isa, sizeof(float));
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
