// Portable vector traits (GCC vector extensions, 16 bytes): compile for any C++20 target with GCC
// or Clang. Include only from *_generic.cc translation units.
//
// Every `Vec` traits type provides, for element type `T`:
//   V, kLanes, kRegisters (vector registers the micro-kernels may plan for), kIsa,
//   Zero(), Set1(x), Load(p), Store(p, v) (unaligned), LoadPartial(p, n) / StorePartial(p, v, n)
//   (only the first n < kLanes lanes are read or written), Fma(a, b, c) = a * b + c,
//   Mul(a, b), ReduceAdd(v); kCheapMaskedLoads and a `MaskType`, with LaneMask(n),
//   LoadMasked(p, mask) and StoreMasked(p, v, mask) where kCheapMaskedLoads is true (the edge
//   micro-kernels then read B masked, and every kernel stores a partial tile under masks).
#pragma once

#include <cstring>

#include "machine/cpu_features.h"

namespace mmtune::simd {

template <typename T>
struct GenericVec {
  using Element = T;
  typedef T V __attribute__((vector_size(16)));
  static constexpr int kLanes = 16 / sizeof(T);
  static constexpr int kRegisters = 16;  // x86-64 SSE2 has 16 xmm registers
  static constexpr IsaLevel kIsa = IsaLevel::kGeneric;
  static constexpr bool kCheapMaskedLoads = false;  // edge kernels read B unmasked
  using MaskType = int;

  static V Zero() { return V{}; }
  static V Set1(T x) { return V{} + x; }
  static V Load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
  static void Store(T* p, V v) { std::memcpy(p, &v, sizeof(v)); }
  static V LoadPartial(const T* p, int n) {
    V v{};
    for (int i = 0; i < n; ++i) v[i] = p[i];
    return v;
  }
  static void StorePartial(T* p, V v, int n) {
    for (int i = 0; i < n; ++i) p[i] = v[i];
  }
  static V Fma(V a, V b, V c) { return a * b + c; }
  static V Mul(V a, V b) { return a * b; }
  static T ReduceAdd(V v) {
    T sum = 0;
    for (int i = 0; i < kLanes; ++i) sum += v[i];
    return sum;
  }
};

}  // namespace mmtune::simd
