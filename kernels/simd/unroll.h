// Compile-time unrolling: `Unroll<N>(f)` calls f(std::integral_constant<int, 0>{}) ...
// f(std::integral_constant<int, N-1>{}). Micro-kernels use it for their register loops so that
// accumulator arrays become named registers whatever the compiler's unrolling heuristics say.
#pragma once

#include <type_traits>
#include <utility>

namespace mmtune::simd {

template <int N, typename F>
[[gnu::always_inline]] inline void Unroll(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, N>{});
}

}  // namespace mmtune::simd
