// The epilogue functions (epilogue.h), written once over GCC's vector extensions, as wide as
// the ISA level of the translation unit that includes this (epilogue_<isa>.cc sets
// MMTUNE_EPILOGUE_VECTOR_BYTES and compiles with that level's flags). Every lane takes the same
// arithmetic, comparisons and selects: plain loops let GCC split the activations' range checks
// into branches and compute a division twice. The exponential is computed here rather than by
// libm: a call per element would keep the loops scalar. Included only by the per-ISA units.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <type_traits>
#include <utility>

#include "kernels/epilogue.h"

#ifndef MMTUNE_EPILOGUE_VECTOR_BYTES
#error "epilogue_impl.h: define MMTUNE_EPILOGUE_VECTOR_BYTES, this level's vector width"
#endif

namespace mmtune::epilogue {
// Internal linkage: each ISA's translation unit keeps its own copies. Shared template instances
// (the same names in every unit) would let the linker keep one level's code for all of them.
namespace {

// A vector of this level's width for each element type the epilogues use (the attribute takes no
// dependent type, so one specialization each).
template <typename T>
struct VectorOf;
#define MMTUNE_EPILOGUE_VECTOR_OF(T)                                   \
  template <>                                                          \
  struct VectorOf<T> {                                                 \
    using Type [[gnu::vector_size(MMTUNE_EPILOGUE_VECTOR_BYTES)]] = T; \
  };
MMTUNE_EPILOGUE_VECTOR_OF(float)
MMTUNE_EPILOGUE_VECTOR_OF(double)
MMTUNE_EPILOGUE_VECTOR_OF(std::int32_t)
MMTUNE_EPILOGUE_VECTOR_OF(std::uint32_t)
MMTUNE_EPILOGUE_VECTOR_OF(std::int64_t)
#undef MMTUNE_EPILOGUE_VECTOR_OF
template <typename T>
using Vec = typename VectorOf<T>::Type;
template <typename T>
constexpr std::int64_t kLanes = MMTUNE_EPILOGUE_VECTOR_BYTES / sizeof(T);

template <typename T>
[[gnu::always_inline]] inline Vec<T> Splat(T value) {
  Vec<T> v;
  for (std::int64_t lane = 0; lane < kLanes<T>; ++lane) v[lane] = value;
  return v;
}

// `count` elements from p[0], p[stride], ...; the lanes after them zero (a finite input to
// every activation).
template <typename T>
[[gnu::always_inline]] inline Vec<T> Load(const T* p, std::int64_t stride, std::int64_t count) {
  Vec<T> v{};
  if (stride == 1 && count == kLanes<T>) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (std::int64_t lane = 0; lane < count; ++lane) v[lane] = p[lane * stride];
  }
  return v;
}

// The first `count` lanes of `v` to p[0], p[stride], ..., as bytes (Stored is the storage's
// type, of T's size: an s32 C takes its dequantized floats).
template <typename Stored, typename T>
[[gnu::always_inline]] inline void Store(Stored* p, std::int64_t stride, std::int64_t count,
                                         Vec<T> v) {
  static_assert(sizeof(Stored) == sizeof(T));
  if (stride == 1 && count == kLanes<T>) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (std::int64_t lane = 0; lane < count; ++lane) {
      const T value = v[lane];
      std::memcpy(p + lane * stride, &value, sizeof value);
    }
  }
}

// max(a, b) and min(a, b), a where either is NaN: one instruction where the level has it (x86's
// MAXPS / MINPS return their second operand then; the zero-masked AVX-512 forms with every lane
// set, since GCC 12 warns about the plain ones), else a comparison, which GCC does not turn into
// the instruction by itself.
template <typename T>
[[gnu::always_inline]] inline Vec<T> Max(Vec<T> a, Vec<T> b) {
  [[maybe_unused]] constexpr bool kFloat = std::is_same_v<T, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(Vec<T>) == 64) {
    if constexpr (kFloat) return _mm512_maskz_max_ps(0xffff, b, a);
    if constexpr (!kFloat) return _mm512_maskz_max_pd(0xff, b, a);
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(Vec<T>) == 32) {
    if constexpr (kFloat) return _mm256_max_ps(b, a);
    if constexpr (!kFloat) return _mm256_max_pd(b, a);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(Vec<T>) == 16) {
    if constexpr (kFloat) return _mm_max_ps(b, a);
    if constexpr (!kFloat) return _mm_max_pd(b, a);
  }
#endif
  return a < b ? b : a;
}

template <typename T>
[[gnu::always_inline]] inline Vec<T> Min(Vec<T> a, Vec<T> b) {
  [[maybe_unused]] constexpr bool kFloat = std::is_same_v<T, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(Vec<T>) == 64) {
    if constexpr (kFloat) return _mm512_maskz_min_ps(0xffff, b, a);
    if constexpr (!kFloat) return _mm512_maskz_min_pd(0xff, b, a);
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(Vec<T>) == 32) {
    if constexpr (kFloat) return _mm256_min_ps(b, a);
    if constexpr (!kFloat) return _mm256_min_pd(b, a);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(Vec<T>) == 16) {
    if constexpr (kFloat) return _mm_min_ps(b, a);
    if constexpr (!kFloat) return _mm_min_pd(b, a);
  }
#endif
  return b < a ? b : a;
}

template <typename T>
struct ExpTraits;
// e^z = 2^n e^r with n = round(z / ln 2), r = z - n ln 2 (ln 2 in two parts, the first exact
// times any n of the range) and e^r by its Taylor polynomial: |r| <= 0.35 leaves a truncation
// error of about an ulp (degree 6 for f32: 1.2e-7 relative). Over [kLow, kHigh] e^z is a normal
// number: never a subnormal (one costs a microcode assist many times the price of the whole
// computation), never an infinity.
template <>
struct ExpTraits<float> {
  using SignedBits = std::int32_t;
  static constexpr float kLow = -87.0f;
  static constexpr float kHigh = 88.0f;
  static constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr float kLn2High = 0.693359375f;
  static constexpr float kLn2Low = -2.12194440e-4f;
  static constexpr int kMantissaBits = 23;
  static constexpr SignedBits kExponentBias = 127;
  static constexpr int kDegree = 6;
};
template <>
struct ExpTraits<double> {
  using SignedBits = std::int64_t;
  static constexpr double kLow = -708.0;
  static constexpr double kHigh = 709.0;
  static constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr double kLn2High = 6.93147180369123816490e-01;
  static constexpr double kLn2Low = 1.90821492927058770002e-10;
  static constexpr int kMantissaBits = 52;
  static constexpr SignedBits kExponentBias = 1023;
  static constexpr int kDegree = 13;
};

// e^z for z in [kLow, kHigh]; NaN for NaN.
template <typename T>
[[gnu::always_inline]] inline Vec<T> ExpInRange(Vec<T> z) {
  using E = ExpTraits<T>;
  using SignedVec = Vec<typename E::SignedBits>;
  const Vec<T> shifted = z * T(1.44269504088896340736) + E::kShifter;
  const Vec<T> n = shifted - E::kShifter;
  const Vec<T> r = (z - n * E::kLn2High) - n * E::kLn2Low;
  static constexpr std::array<T, E::kDegree + 1> kInverseFactorials = [] {
    std::array<T, E::kDegree + 1> c{};
    c[0] = T(1);
    for (int d = 1; d <= E::kDegree; ++d) c[d] = c[d - 1] / T(d);
    return c;
  }();
  Vec<T> p = Splat(kInverseFactorials[E::kDegree]);
  [&]<std::size_t... kStep>(std::index_sequence<kStep...>) __attribute__((always_inline)) {
    ((p = p * r + kInverseFactorials[E::kDegree - 1 - kStep]), ...);
  }(std::make_index_sequence<E::kDegree>());
  // n sits in the low bits of `shifted` (two's complement against the shifter's bits); 2^n is
  // normal over the range, so its bits are the biased n shifted into the exponent.
  const SignedVec biased = std::bit_cast<SignedVec>(shifted) -
                           std::bit_cast<typename E::SignedBits>(E::kShifter) + E::kExponentBias;
  return p * std::bit_cast<Vec<T>>(biased << E::kMantissaBits);
}

// x / (1 + e^z): -0 where z > kHigh (there x is far below zero and the true value below 1e-30
// in magnitude; also for x = -inf), NaN for NaN. The clamp keeps e^z in its normal range.
template <typename T>
[[gnu::always_inline]] inline Vec<T> OverOnePlusExp(Vec<T> x, Vec<T> z) {
  using E = ExpTraits<T>;
  const Vec<T> low = Splat(E::kLow);
  const Vec<T> high = Splat(E::kHigh);
  const Vec<T> clamped = Min<T>(Max<T>(z, low), high);
  const Vec<T> quotient = x / (T(1) + ExpInRange<T>(clamped));
  return z > high ? Splat(T(-0.0)) : quotient;
}

template <Activation kAct, typename T>
[[gnu::always_inline]] inline Vec<T> Activate(Vec<T> x) {
  if constexpr (kAct == Activation::kRelu) {
    return x < T(0) ? Splat(T(0)) : x;  // NaN compares false: it stays
  } else if constexpr (kAct == Activation::kGelu) {
    // 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2 / pi) (x + 0.044715 x^3), so
    // -2u = x (c1 + c3 x^2).
    constexpr T kC1 = T(-2 * 0.79788456080286535588);
    constexpr T kC3 = T(-2 * 0.79788456080286535588 * 0.044715);
    return OverOnePlusExp<T>(x, x * (kC1 + kC3 * (x * x)));
  } else if constexpr (kAct == Activation::kSilu) {
    return OverOnePlusExp<T>(x, -x);
  } else {
    return x;
  }
}

// s32 adds modulo 2^32, as its accumulation does.
template <typename C>
[[gnu::always_inline]] inline Vec<C> AddBias(Vec<C> x, Vec<C> bias) {
  if constexpr (std::is_same_v<C, std::int32_t>) {
    using Unsigned = Vec<std::uint32_t>;
    return std::bit_cast<Vec<C>>(std::bit_cast<Unsigned>(x) + std::bit_cast<Unsigned>(bias));
  } else {
    return x + bias;
  }
}

// The bias of `count` elements from column j of row i.
template <BiasKind kBias, typename T>
[[gnu::always_inline]] inline Vec<T> BiasAt(const T* bias, std::int64_t i, std::int64_t j,
                                            std::int64_t count) {
  if constexpr (kBias == BiasKind::kPerColumn) return Load(bias + j, 1, count);
  if constexpr (kBias == BiasKind::kPerRow) return Splat(bias[i]);
  return Vec<T>{};
}

// Calls `chunk(row, j, count)` for the region's rows in chunks of up to a vector's lanes.
template <typename T, typename Chunk>
[[gnu::always_inline]] inline void ForEachChunk(std::int64_t m, std::int64_t n,
                                                const Chunk& chunk) {
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t j = 0;
    for (; j + kLanes<T> <= n; j += kLanes<T>) chunk(i, j, kLanes<T>);
    if (j < n) chunk(i, j, n - j);
  }
}

template <typename C, BiasKind kBias, Activation kAct>
void ApplyRegion(C* __restrict c, std::int64_t row_stride, std::int64_t col_stride,
                 std::int64_t m, std::int64_t n, const C* __restrict bias) {
  ForEachChunk<C>(m, n, [&](std::int64_t i, std::int64_t j, std::int64_t count)
                            __attribute__((always_inline)) {
    C* at = c + i * row_stride + j * col_stride;
    const Vec<C> x =
        AddBias<C>(Load(at, col_stride, count), BiasAt<kBias>(bias, i, j, count));
    Store<C, C>(at, col_stride, count, Activate<kAct, C>(x));
  });
}

// The s32 sums read and the f32 results written at the same addresses, by memcpy (one object's
// bytes seen as two types).
template <BiasKind kBias, Activation kAct>
void DequantizeRegion(std::int32_t* c, std::int64_t row_stride, std::int64_t col_stride,
                      std::int64_t m, std::int64_t n, const float* __restrict scales,
                      const std::int32_t* __restrict offsets, const float* __restrict bias) {
  static_assert(kLanes<float> == kLanes<std::int32_t>);
  ForEachChunk<float>(m, n, [&](std::int64_t i, std::int64_t j, std::int64_t count)
                                __attribute__((always_inline)) {
    std::int32_t* at = c + i * row_stride + j * col_stride;
    const Vec<std::int32_t> sum =
        AddBias<std::int32_t>(Load(at, col_stride, count), Load(offsets + j, 1, count));
    const Vec<float> x = Load(scales + j, 1, count) * __builtin_convertvector(sum, Vec<float>) +
                         BiasAt<kBias>(bias, i, j, count);
    Store<std::int32_t, float>(at, col_stride, count, Activate<kAct, float>(x));
  });
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
