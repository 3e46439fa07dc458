// The epilogue functions (epilogue.h), written once as plain loops that each ISA's translation
// unit (epilogue_<isa>.cc) compiles with its own flags, so that GCC vectorizes them at that
// width. The exponential is computed here rather than by libm: a call per element would keep
// the loops scalar. Included only by the per-ISA translation units.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "kernels/epilogue.h"

namespace mmtune::epilogue {
// Internal linkage: each ISA's translation unit keeps its own copies. Shared template instances
// (the same names in every unit) would let the linker keep one level's code for all of them.
namespace {

template <typename T>
struct ExpTraits;
// e^z = 2^n e^r with n = round(z / ln 2), r = z - n ln 2 (ln 2 in two parts, the first exact
// times any n of the range) and e^r by its Taylor polynomial: |r| <= 0.35 leaves a truncation
// error far below half an ulp. kClamp turns infinities into finite values far outside the range.
template <>
struct ExpTraits<float> {
  using Bits = std::uint32_t;
  using SignedBits = std::int32_t;
  static constexpr float kClamp = 200.0f;
  static constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr float kLn2High = 0.693359375f;
  static constexpr float kLn2Low = -2.12194440e-4f;
  static constexpr int kMantissaBits = 23;
  static constexpr SignedBits kExponentBias = 127;
  static constexpr int kDegree = 8;
};
template <>
struct ExpTraits<double> {
  using Bits = std::uint64_t;
  using SignedBits = std::int64_t;
  static constexpr double kClamp = 1500.0;
  static constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double kLn2High = 6.93147180369123816490e-01;
  static constexpr double kLn2Low = 1.90821492927058770002e-10;
  static constexpr int kMantissaBits = 52;
  static constexpr SignedBits kExponentBias = 1023;
  static constexpr int kDegree = 13;
};

// e^z, but 0 where 2^n falls below the second binade of the normal numbers and +inf above the
// largest; NaN for NaN. Never a subnormal number: GCC computes this for the vector lanes whose
// result a select discards too, and a subnormal result costs a microcode assist many times the
// price of the whole computation.
template <typename T>
[[gnu::always_inline]] inline T ExpNormal(T z) {
  using E = ExpTraits<T>;
  using Bits = typename E::Bits;
  using SignedBits = typename E::SignedBits;
  z = std::min(std::max(z, -E::kClamp), E::kClamp);
  const T shifted = z * T(1.44269504088896340736) + E::kShifter;
  const T n = shifted - E::kShifter;
  const T r = (z - n * E::kLn2High) - n * E::kLn2Low;
  static constexpr std::array<T, E::kDegree + 1> kInverseFactorials = [] {
    std::array<T, E::kDegree + 1> c{};
    c[0] = T(1);
    for (int d = 1; d <= E::kDegree; ++d) c[d] = c[d - 1] / T(d);
    return c;
  }();
  // Horner from the highest power down, unrolled here: an inner loop keeps GCC from
  // vectorizing the loops over C that call this.
  T p = kInverseFactorials[E::kDegree];
  [&]<std::size_t... kStep>(std::index_sequence<kStep...>) __attribute__((always_inline)) {
    ((p = p * r + kInverseFactorials[E::kDegree - 1 - kStep]), ...);
  }(std::make_index_sequence<E::kDegree>());
  // n sits in the low bits of `shifted` (two's complement against the shifter's bits).
  const SignedBits biased = std::bit_cast<SignedBits>(shifted) -
                            std::bit_cast<SignedBits>(E::kShifter) + E::kExponentBias;
  constexpr Bits kInfinity = Bits{(Bits{1} << (sizeof(T) * 8 - 1 - E::kMantissaBits)) - 1}
                             << E::kMantissaBits;
  const Bits normal = static_cast<Bits>(biased) << E::kMantissaBits;
  const Bits scale = biased < 2 ? Bits{0} : biased > 2 * E::kExponentBias ? kInfinity : normal;
  return p * std::bit_cast<T>(scale);
}

// x / (1 + e^z): -0 where e^z overflows (there x is far below zero and the true value below
// 1e-30), NaN for NaN.
template <typename T>
[[gnu::always_inline]] inline T OverOnePlusExp(T x, T z) {
  const T e = ExpNormal(z);
  return e == std::numeric_limits<T>::infinity() ? T(-0.0) : x / (T(1) + e);
}

template <Activation kAct, typename T>
[[gnu::always_inline]] inline T Activate(T x) {
  if constexpr (kAct == Activation::kRelu) {
    return x < T(0) ? T(0) : x;  // NaN compares false: it stays
  } else if constexpr (kAct == Activation::kGelu) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3), so
    // -2u = x (c1 + c3 x^2).
    constexpr T kC1 = T(-2 * 0.79788456080286535588);
    constexpr T kC3 = T(-2 * 0.79788456080286535588 * 0.044715);
    return OverOnePlusExp(x, x * (kC1 + kC3 * (x * x)));
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

// Rows of a tile are short (a few vectors): the unit-stride ones go in fixed runs of 16
// elements, which GCC turns into whole vectors without the peeling and the alias checks of a
// loop of unknown length (C and the bias do not overlap).
template <typename C, BiasKind kBias, Activation kAct>
void ApplyRegion(C* __restrict c, std::int64_t row_stride, std::int64_t col_stride,
                 std::int64_t m, std::int64_t n, const C* __restrict bias) {
  constexpr std::int64_t kRun = 16;
  for (std::int64_t i = 0; i < m; ++i) {
    C* __restrict row = c + i * row_stride;
    auto one = [&](std::int64_t j, C& out) __attribute__((always_inline)) {
      C x = out;
      if constexpr (kBias == BiasKind::kPerColumn) x = AddBias(x, bias[j]);
      if constexpr (kBias == BiasKind::kPerRow) x = AddBias(x, bias[i]);
      out = Activate<kAct>(x);
    };
    if (col_stride == 1) {
      std::int64_t j = 0;
      for (; j + kRun <= n; j += kRun) {
        for (std::int64_t u = 0; u < kRun; ++u) one(j + u, row[j + u]);
      }
      for (; j < n; ++j) one(j, row[j]);
    } else {
      for (std::int64_t j = 0; j < n; ++j) one(j, row[j * col_stride]);
    }
  }
}

// The s32 accumulator read and the f32 result written at the same address, both by memcpy (one
// object's bytes seen as two types); each element's store depends on its own load.
template <BiasKind kBias, Activation kAct>
void DequantizeRegion(std::int32_t* c, std::int64_t row_stride, std::int64_t col_stride,
                      std::int64_t m, std::int64_t n, const float* __restrict scales,
                      const std::int32_t* __restrict offsets, const float* __restrict bias) {
  constexpr std::int64_t kRun = 16;
  for (std::int64_t i = 0; i < m; ++i) {
    std::int32_t* row = c + i * row_stride;
    auto one = [&](std::int64_t j, std::int32_t* at) __attribute__((always_inline)) {
      std::uint32_t accumulator;
      std::memcpy(&accumulator, at, sizeof accumulator);
      const auto sum =
          static_cast<std::int32_t>(accumulator + static_cast<std::uint32_t>(offsets[j]));
      float x = scales[j] * static_cast<float>(sum);
      if constexpr (kBias == BiasKind::kPerColumn) x += bias[j];
      if constexpr (kBias == BiasKind::kPerRow) x += bias[i];
      const float result = Activate<kAct>(x);
      std::memcpy(at, &result, sizeof result);
    };
    if (col_stride == 1) {
      std::int64_t j = 0;
      for (; j + kRun <= n; j += kRun) {
        for (std::int64_t u = 0; u < kRun; ++u) one(j + u, row + j + u);
      }
      for (; j < n; ++j) one(j, row + j);
    } else {
      for (std::int64_t j = 0; j < n; ++j) one(j, row + j * col_stride);
    }
  }
}

template <BiasKind kBias>
constexpr std::array<DequantizeFn, 4> DequantizeFns() {
  return {&DequantizeRegion<kBias, Activation::kNone>, &DequantizeRegion<kBias, Activation::kRelu>,
          &DequantizeRegion<kBias, Activation::kGelu>, &DequantizeRegion<kBias, Activation::kSilu>};
}

constexpr DequantizeTable DequantizeFunctions() {
  return {DequantizeFns<BiasKind::kNone>(), DequantizeFns<BiasKind::kPerColumn>(),
          DequantizeFns<BiasKind::kPerRow>()};
}

template <typename C, BiasKind kBias, Activation kAct>
constexpr EpilogueFn<C> RegionFn() {
  if constexpr (std::is_integral_v<C> && kAct != Activation::kNone &&
                kAct != Activation::kRelu) {
    return nullptr;  // CheckEpilogue refuses these
  } else {
    return &ApplyRegion<C, kBias, kAct>;
  }
}

template <typename C, BiasKind kBias>
constexpr std::array<EpilogueFn<C>, 4> RegionFns() {
  return {RegionFn<C, kBias, Activation::kNone>(), RegionFn<C, kBias, Activation::kRelu>(),
          RegionFn<C, kBias, Activation::kGelu>(), RegionFn<C, kBias, Activation::kSilu>()};
}

template <typename C>
constexpr EpilogueTable<C> Table() {
  return {RegionFns<C, BiasKind::kNone>(), RegionFns<C, BiasKind::kPerColumn>(),
          RegionFns<C, BiasKind::kPerRow>()};
}

}  // namespace
}  // namespace mmtune::epilogue

// Defines `PREFIX##Epilogues()`, this translation unit's row of the epilogue table.
#define MMTUNE_DEFINE_EPILOGUE_TABLE(PREFIX)                                            \
  const ::mmtune::EpilogueEntry& PREFIX##Epilogues() {                                 \
    static constexpr ::mmtune::EpilogueEntry kEntry = {                                \
        ::mmtune::epilogue::Table<float>(), ::mmtune::epilogue::Table<double>(),       \
        ::mmtune::epilogue::Table<std::int32_t>(),                                     \
        ::mmtune::epilogue::DequantizeFunctions()};                                    \
    return kEntry;                                                                     \
  }
