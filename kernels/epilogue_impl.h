// The epilogue functions (epilogue.h), written once as plain loops that each ISA's translation
// unit (epilogue_<isa>.cc) compiles with its own flags, so that GCC vectorizes them at that
// width. The exponential is computed here rather than by libm: a call per element would keep
// the loops scalar. Included only by the per-ISA translation units.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "kernels/epilogue.h"

namespace mmtune::epilogue {

template <typename T>
struct ExpTraits;
// e^x = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, the first exact
// times any n of the range) and e^r by its Taylor polynomial: |r| <= 0.35 leaves a truncation
// error far below half an ulp. kLow and kHigh keep 2^n a normal number.
template <>
struct ExpTraits<float> {
  using Bits = std::uint32_t;
  static constexpr float kLow = -87.0f;
  static constexpr float kHigh = 88.0f;
  static constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr float kLn2High = 0.693359375f;
  static constexpr float kLn2Low = -2.12194440e-4f;
  static constexpr int kMantissaBits = 23;
  static constexpr Bits kExponentBias = 127;
  static constexpr int kDegree = 8;
};
template <>
struct ExpTraits<double> {
  using Bits = std::uint64_t;
  static constexpr double kLow = -708.0;
  static constexpr double kHigh = 708.0;
  static constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double kLn2High = 6.93147180369123816490e-01;
  static constexpr double kLn2Low = 1.90821492927058770002e-10;
  static constexpr int kMantissaBits = 52;
  static constexpr Bits kExponentBias = 1023;
  static constexpr int kDegree = 13;
};

// e^x for x in [kLow, kHigh]; NaN for NaN.
template <typename T>
[[gnu::always_inline]] inline T ExpInRange(T x) {
  using E = ExpTraits<T>;
  using Bits = typename E::Bits;
  const T shifted = x * T(1.44269504088896340736) + E::kShifter;
  const T n = shifted - E::kShifter;
  const T r = (x - n * E::kLn2High) - n * E::kLn2Low;
  static constexpr std::array<T, E::kDegree + 1> kInverseFactorials = [] {
    std::array<T, E::kDegree + 1> c{};
    c[0] = T(1);
    for (int d = 1; d <= E::kDegree; ++d) c[d] = c[d - 1] / T(d);
    return c;
  }();
  T p = kInverseFactorials[E::kDegree];  // Horner from the highest power down
  for (int d = E::kDegree - 1; d >= 0; --d) p = p * r + kInverseFactorials[d];
  // n sits in the low bits of `shifted` (two's complement against the shifter's bits).
  const Bits n_bits = std::bit_cast<Bits>(shifted) - std::bit_cast<Bits>(E::kShifter);
  const T scale = std::bit_cast<T>((n_bits + E::kExponentBias) << E::kMantissaBits);
  return p * scale;
}

// x / (1 + e^z): -0 where e^z passes the range (x is then far below zero; the true value rounds
// to zero), x where z is far below it, NaN for NaN.
template <typename T>
[[gnu::always_inline]] inline T OverOnePlusExp(T x, T z) {
  using E = ExpTraits<T>;
  const T value = x / (T(1) + ExpInRange(std::min(std::max(z, E::kLow), E::kHigh)));
  return z > E::kHigh ? T(-0.0) : value;
}

template <Activation kAct, typename T>
[[gnu::always_inline]] inline T Activate(T x) {
  if constexpr (kAct == Activation::kRelu) {
    return x < T(0) ? T(0) : x;  // NaN compares false: it stays
  } else if constexpr (kAct == Activation::kGelu) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3).
    const T u = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
    return OverOnePlusExp(x, T(-2) * u);
  } else if constexpr (kAct == Activation::kSilu) {
    return OverOnePlusExp(x, -x);
  } else {
    return x;
  }
}

// s32 adds modulo 2^32, as its accumulation does.
template <typename C>
[[gnu::always_inline]] inline C AddBias(C x, C bias) {
  if constexpr (std::is_same_v<C, std::int32_t>) {
    return static_cast<C>(static_cast<std::uint32_t>(x) + static_cast<std::uint32_t>(bias));
  } else {
    return x + bias;
  }
}

template <typename C, BiasKind kBias, Activation kAct>
void ApplyRegion(C* c, std::int64_t row_stride, std::int64_t col_stride, std::int64_t m,
                 std::int64_t n, const C* bias) {
  for (std::int64_t i = 0; i < m; ++i) {
    C* row = c + i * row_stride;
    auto one = [&](std::int64_t j, C& out) __attribute__((always_inline)) {
      C x = out;
      if constexpr (kBias == BiasKind::kPerColumn) x = AddBias(x, bias[j]);
      if constexpr (kBias == BiasKind::kPerRow) x = AddBias(x, bias[i]);
      out = Activate<kAct>(x);
    };
    if (col_stride == 1) {
      for (std::int64_t j = 0; j < n; ++j) one(j, row[j]);
    } else {
      for (std::int64_t j = 0; j < n; ++j) one(j, row[j * col_stride]);
    }
  }
}

template <typename C, BiasKind kBias>
void ApplyWithBias(C* c, std::int64_t row_stride, std::int64_t col_stride, std::int64_t m,
                   std::int64_t n, const C* bias, Activation activation) {
  switch (activation) {
    case Activation::kNone:
      return ApplyRegion<C, kBias, Activation::kNone>(c, row_stride, col_stride, m, n, bias);
    case Activation::kRelu:
      return ApplyRegion<C, kBias, Activation::kRelu>(c, row_stride, col_stride, m, n, bias);
    case Activation::kGelu:
      if constexpr (!std::is_integral_v<C>) {
        return ApplyRegion<C, kBias, Activation::kGelu>(c, row_stride, col_stride, m, n, bias);
      }
      return;  // CheckEpilogue refused it for s32
    case Activation::kSilu:
      if constexpr (!std::is_integral_v<C>) {
        return ApplyRegion<C, kBias, Activation::kSilu>(c, row_stride, col_stride, m, n, bias);
      }
      return;
  }
}

template <typename C>
void Apply(C* c, std::int64_t row_stride, std::int64_t col_stride, std::int64_t m,
           std::int64_t n, const C* bias, BiasKind bias_kind, Activation activation) {
  switch (bias_kind) {
    case BiasKind::kNone:
      return ApplyWithBias<C, BiasKind::kNone>(c, row_stride, col_stride, m, n, bias, activation);
    case BiasKind::kPerColumn:
      return ApplyWithBias<C, BiasKind::kPerColumn>(c, row_stride, col_stride, m, n, bias,
                                                    activation);
    case BiasKind::kPerRow:
      return ApplyWithBias<C, BiasKind::kPerRow>(c, row_stride, col_stride, m, n, bias,
                                                 activation);
  }
}

}  // namespace mmtune::epilogue

// Defines `PREFIX##Epilogues()`, this translation unit's row of the epilogue table.
#define MMTUNE_DEFINE_EPILOGUE_TABLE(PREFIX)                                            \
  const ::mmtune::EpilogueEntry& PREFIX##Epilogues() {                                 \
    static constexpr ::mmtune::EpilogueEntry kEntry = {                                \
        &::mmtune::epilogue::Apply<float>, &::mmtune::epilogue::Apply<double>,         \
        &::mmtune::epilogue::Apply<std::int32_t>};                                     \
    return kEntry;                                                                     \
  }
