// Small integer operand values in every GEMM element type (bf16 included), so that every dtype's
// products and sums are exact and results compare element by element, and stored matrices of them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "kernels/gemm_args.h"
#include "kernels/thread_pool.h"
#include "mmtune/bf16.h"

namespace mmtune::testing {

// A pool of two members whatever this process may run on, so that work splits as it would
// between two threads (jc, ic, jr, batch items).
inline ThreadPool& TwoMembers() {
  static ThreadPool pool(2);
  return pool;
}

template <typename T>
T FromInt(int value) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
double ToDouble(T value) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return static_cast<double>(ToFloat(value));
  } else {
    return static_cast<double>(value);
  }
}

// A stored matrix whose op() is rows x cols, leading dimension 3 past the minimum, small
// integer values (non-negative for s8's unsigned A).
template <typename T>
struct Stored {
  std::vector<T> values;
  std::int64_t ld = 0;
  Layout layout = Layout::kRowMajor;
  Trans trans = Trans::kNo;
  double At(std::int64_t i, std::int64_t j) const {
    return ToDouble(trans == Trans::kNo ? values[StoredOffset(layout, i, j, ld)]
                                        : values[StoredOffset(layout, j, i, ld)]);
  }
};

template <typename T>
Stored<T> MakeStored(Layout layout, Trans trans, std::int64_t rows, std::int64_t cols,
                     std::mt19937& rng) {
  Stored<T> s;
  s.layout = layout;
  s.trans = trans;
  s.ld = MinLeadingDimension(layout, trans, rows, cols) + 3;
  const std::int64_t outer = layout == Layout::kRowMajor ? (trans == Trans::kNo ? rows : cols)
                                                         : (trans == Trans::kNo ? cols : rows);
  s.values.resize(static_cast<std::size_t>(std::max<std::int64_t>(outer, 1) * s.ld));
  const int low = std::is_unsigned_v<T> ? 0 : -4;
  std::uniform_int_distribution<int> small(low, 4);
  for (T& v : s.values) v = FromInt<T>(small(rng));
  return s;
}

}  // namespace mmtune::testing
