// Small integer operand values in every GEMM element type (bf16 included), so that every dtype's
// products and sums are exact and results compare element by element.
#pragma once

#include <type_traits>

#include "mmtune/bf16.h"

namespace mmtune::testing {

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

}  // namespace mmtune::testing
