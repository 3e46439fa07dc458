// Helpers for testing GEMM implementations against the reference: operand buffers with canary
// padding, an error bound that scales with K, and a checker that also proves nothing outside C's
// window was written.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/gemm_args.h"
#include "kernels/kernel_config.h"
#include "machine/cpu_features.h"
#include "kernels/reference_gemm.h"
#include "mmtune/types.h"

namespace mmtune::testing {

// The ISA levels this CPU can run kernels of, lowest first.
inline std::vector<IsaLevel> RunnableLevels() {
  std::vector<IsaLevel> levels;
  for (IsaLevel level : kIsaLevels) {
    if (IsaWithin(level, HostCpuFeatures().MaxIsaLevel())) levels.push_back(level);
  }
  return levels;
}

// A value that no computation here produces, so any write outside C's window shows.
template <typename T>
constexpr T kCanary = T(-98765.25);

// Storage for a matrix whose op() is rows x cols, with leading dimension `ld` and `pad` extra
// canary elements before and after.
template <typename T>
struct Operand {
  std::vector<T> storage;
  std::int64_t ld = 0;
  std::int64_t pad = 64;
  T* data() { return storage.data() + pad; }
  const T* data() const { return storage.data() + pad; }
};

inline std::int64_t StoredExtent(Layout layout, Trans trans, std::int64_t rows, std::int64_t cols,
                                 std::int64_t ld) {
  const std::int64_t stored_rows = trans == Trans::kYes ? cols : rows;
  const std::int64_t stored_cols = trans == Trans::kYes ? rows : cols;
  const std::int64_t outer = layout == Layout::kRowMajor ? stored_rows : stored_cols;
  const std::int64_t inner = layout == Layout::kRowMajor ? stored_cols : stored_rows;
  if (outer == 0 || inner == 0) return 0;
  return (outer - 1) * ld + inner;
}

// Random values in [-1, 1) (never all zeros) everywhere in the window, canaries elsewhere
// (including the gaps between rows when ld exceeds the minimum).
template <typename T>
Operand<T> MakeOperand(Layout layout, Trans trans, std::int64_t rows, std::int64_t cols,
                       std::int64_t extra_ld, std::mt19937_64& rng) {
  Operand<T> op;
  op.ld = MinLeadingDimension(layout, trans, rows, cols) + extra_ld;
  const std::int64_t extent = StoredExtent(layout, trans, rows, cols, op.ld);
  op.storage.assign(static_cast<std::size_t>(extent + 2 * op.pad), kCanary<T>);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t offset = trans == Trans::kYes ? StoredOffset(layout, j, i, op.ld)
                                                       : StoredOffset(layout, i, j, op.ld);
      op.data()[offset] = static_cast<T>(dist(rng));
    }
  }
  return op;
}

template <typename T>
std::vector<T> Abs(const std::vector<T>& values) {
  std::vector<T> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    out[i] = values[i] == kCanary<T> ? T(0) : std::abs(values[i]);
  }
  return out;
}

// One GEMM case: operands, the expected result, and the bound each element must meet.
template <typename T>
struct GemmCase {
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0, n = 0, k = 0;
  T alpha = 1, beta = 0;
  Operand<T> a, b, c;
  std::vector<T> expected;  // whole C storage after a correct GEMM
  std::vector<T> bound;     // per element of C storage: allowed absolute error
  std::string name;
};

// Builds operands and the reference answer. `nan_c` fills C's window with NaN (meaningful with
// beta = 0, where BLAS must not read C).
template <typename T>
GemmCase<T> MakeCase(Layout layout, Trans ta, Trans tb, std::int64_t m, std::int64_t n,
                     std::int64_t k, T alpha, T beta, std::int64_t extra_ld, bool nan_c,
                     std::mt19937_64& rng) {
  GemmCase<T> gc;
  gc.layout = layout;
  gc.trans_a = ta;
  gc.trans_b = tb;
  gc.m = m;
  gc.n = n;
  gc.k = k;
  gc.alpha = alpha;
  gc.beta = beta;
  gc.a = MakeOperand<T>(layout, ta, m, k, extra_ld, rng);
  gc.b = MakeOperand<T>(layout, tb, k, n, extra_ld, rng);
  gc.c = MakeOperand<T>(layout, Trans::kNo, m, n, extra_ld, rng);
  if (nan_c) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        gc.c.data()[StoredOffset(layout, i, j, gc.c.ld)] = std::numeric_limits<T>::quiet_NaN();
      }
    }
  }
  gc.expected = gc.c.storage;
  EXPECT_TRUE(ReferenceGemm<T>(layout, ta, tb, m, n, k, alpha, gc.a.data(), gc.a.ld, gc.b.data(),
                               gc.b.ld, beta, gc.expected.data() + gc.c.pad, gc.c.ld)
                  .ok());
  // |error| <= (k + 4) * eps * (|alpha| |A| |B| + |beta| |C|), computed by the reference on
  // absolute values: the classic forward-error bound of a dot product, with slack for FMA order.
  const auto abs_a = Abs(gc.a.storage);
  const auto abs_b = Abs(gc.b.storage);
  gc.bound = Abs(gc.c.storage);
  const T abs_beta = beta == T(0) ? T(0) : std::abs(beta);
  EXPECT_TRUE(ReferenceGemm<T>(layout, ta, tb, m, n, k, std::abs(alpha), abs_a.data() + gc.a.pad,
                               gc.a.ld, abs_b.data() + gc.b.pad, gc.b.ld, abs_beta,
                               gc.bound.data() + gc.c.pad, gc.c.ld)
                  .ok());
  const T eps = std::numeric_limits<T>::epsilon();
  for (T& value : gc.bound) value = value * eps * static_cast<T>(k + 4) + eps;
  gc.name = std::string(ToString(layout)) + " " + TransPairToString(ta, tb) + " " +
            std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " alpha " +
            std::to_string(alpha) + " beta " + std::to_string(beta) + " ld+" +
            std::to_string(extra_ld) + (nan_c ? " NaN-in-C" : "");
  return gc;
}

// Compares C with the expected result: the window within the bound, everything else (padding,
// gaps between rows) bit-identical canaries. Returns the number of bad elements (and reports the
// first few).
template <typename T>
int CheckResult(const GemmCase<T>& gc, const std::string& what) {
  int bad = 0;
  for (std::size_t i = 0; i < gc.c.storage.size(); ++i) {
    const T got = gc.c.storage[i];
    const T want = gc.expected[i];
    const bool ok = want == kCanary<T>
                        ? got == kCanary<T>
                        : (std::isfinite(got) && std::abs(got - want) <= gc.bound[i]);
    if (!ok && ++bad <= 3) {
      ADD_FAILURE() << what << " | " << gc.name << ": storage[" << i - gc.c.pad << "] = " << got
                    << ", expected " << want << " (bound " << gc.bound[i] << ")";
    }
  }
  return bad;
}

// A packed config of a registry entry's kernel at `isa` (its table's level), blocks and threads
// left to the caller.
template <typename Entry>
KernelConfig PackedConfigOf(IsaLevel isa, const Entry& entry) {
  KernelConfig c;
  c.family = KernelFamily::kPacked;
  c.isa = isa;
  c.mr = entry.mr;
  c.nr = entry.nr;
  c.k_unroll = entry.k_unroll;
  return c;
}

}  // namespace mmtune::testing
