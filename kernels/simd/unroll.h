// Compile-time unrolling: `Unroll<N>(f)` calls f(std::integral_constant<int, 0>{}) ...
// f(std::integral_constant<int, N-1>{}). Micro-kernels use it for their register loops so that
// accumulator arrays become named registers whatever the compiler's unrolling heuristics say.
// Both the helper and its index-sequence lambda are always_inline: with only the outer one, GCC 12
// out-of-lines the lambda for the larger AVX-512 tiles (e.g. 8x48 with k unroll 4), leaving the
// accumulators in memory and the kernel several times slower.
#pragma once

#include <type_traits>
#include <utility>

namespace mmtune::simd {

template <int N, typename F>
[[gnu::always_inline]] inline void Unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

}  // namespace mmtune::simd
