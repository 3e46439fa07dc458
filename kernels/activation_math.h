// The activations of the fused epilogues (mmtune/types.h: Activation) over one vector of GCC's
// vector extensions of any width, float or double lanes: the region functions (epilogue_impl.h)
// and the micro-kernels, which apply them to C while it is in their registers, share them. Every
// lane takes the same arithmetic, comparisons and selects: plain loops let GCC split the range
// checks into branches and compute a division twice. The exponential is computed here rather
// than by libm: a call per element would keep the loops scalar. Included only by translation
// units compiled for one ISA level, whose instructions the vectors take.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <type_traits>
#include <utility>

#include "mmtune/types.h"

namespace mmtune::activation {
// Internal linkage: each ISA's translation unit keeps its own copies. Shared template instances
// (the same names in every unit) would let the linker keep one level's code for all of them.
namespace {

// The element type of vector V.
template <typename V>
using LaneOf = std::remove_cvref_t<decltype(std::declval<V>()[0])>;

template <typename V>
constexpr int kLanesOf = static_cast<int>(sizeof(V) / sizeof(LaneOf<V>));

template <typename V>
[[gnu::always_inline]] inline V Splat(LaneOf<V> value) {
  V v;
  for (int lane = 0; lane < kLanesOf<V>; ++lane) v[lane] = value;
  return v;
}

// The vectors of kBytes of f32 and of 32-bit integer lanes, for kernels whose vector type holds
// other lanes (an s32 accumulator of 64-bit lanes) and reads them as these.
template <int kBytes>
struct Vectors32 {
  typedef float F __attribute__((vector_size(kBytes)));
  typedef std::int32_t I __attribute__((vector_size(kBytes)));
  typedef std::uint32_t U __attribute__((vector_size(kBytes)));
};

// max(a, b) and min(a, b), a where either is NaN: one instruction where the level has it (x86's
// MAXPS / MINPS return their second operand then; the zero-masked AVX-512 forms with every lane
// set, since GCC 12 warns about the plain ones), else a comparison, which GCC does not turn into
// the instruction by itself.
template <typename V>
[[gnu::always_inline]] inline V Max(V a, V b) {
  [[maybe_unused]] constexpr bool kFloat = std::is_same_v<LaneOf<V>, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if constexpr (kFloat) return _mm512_maskz_max_ps(0xffff, b, a);
    if constexpr (!kFloat) return _mm512_maskz_max_pd(0xff, b, a);
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32) {
    if constexpr (kFloat) return _mm256_max_ps(b, a);
    if constexpr (!kFloat) return _mm256_max_pd(b, a);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(V) == 16) {
    if constexpr (kFloat) return _mm_max_ps(b, a);
    if constexpr (!kFloat) return _mm_max_pd(b, a);
  }
#endif
  return a < b ? b : a;
}

template <typename V>
[[gnu::always_inline]] inline V Min(V a, V b) {
  [[maybe_unused]] constexpr bool kFloat = std::is_same_v<LaneOf<V>, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if constexpr (kFloat) return _mm512_maskz_min_ps(0xffff, b, a);
    if constexpr (!kFloat) return _mm512_maskz_min_pd(0xff, b, a);
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32) {
    if constexpr (kFloat) return _mm256_min_ps(b, a);
    if constexpr (!kFloat) return _mm256_min_pd(b, a);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(V) == 16) {
    if constexpr (kFloat) return _mm_min_ps(b, a);
    if constexpr (!kFloat) return _mm_min_pd(b, a);
  }
#endif
  return b < a ? b : a;
}

// a * b + c rounded once where the level has FMA, else twice. Explicit, because whether the
// compiler contracts a * b + c itself depends on the code around it, and the kernels and the
// epilogue functions must round a dequantization the same.
template <typename V>
[[gnu::always_inline]] inline V MulAdd(V a, V b, V c) {
  [[maybe_unused]] constexpr bool kFloat = std::is_same_v<LaneOf<V>, float>;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    if constexpr (kFloat) return _mm512_fmadd_ps(a, b, c);
    if constexpr (!kFloat) return _mm512_fmadd_pd(a, b, c);
  }
#endif
#if defined(__FMA__)
  if constexpr (sizeof(V) == 32) {
    if constexpr (kFloat) return _mm256_fmadd_ps(a, b, c);
    if constexpr (!kFloat) return _mm256_fmadd_pd(a, b, c);
  }
  if constexpr (sizeof(V) == 16) {
    if constexpr (kFloat) return _mm_fmadd_ps(a, b, c);
    if constexpr (!kFloat) return _mm_fmadd_pd(a, b, c);
  }
#endif
  return a * b + c;
}

// ln(2), log2(e) and sqrt(2 / pi), rounded once into each constant of T made from them.
constexpr long double kLn2 = 0.693147180559945309417232121458176568L;
constexpr long double kLog2E = 1.44269504088896340735992468100189214L;
constexpr long double kSqrtTwoOverPi = 0.797884560802865355879892119868763737L;

// The Taylor polynomial of 2^f = e^(f ln 2): (ln 2)^d / d!, each rounded once to T.
template <typename T, int kDegree>
constexpr std::array<T, kDegree + 1> Exp2TaylorCoefficients() {
  std::array<T, kDegree + 1> c{};
  long double term = 1;
  for (int d = 0; d <= kDegree; ++d) {
    c[d] = static_cast<T>(term);
    term = term * kLn2 / (d + 1);
  }
  return c;
}

template <typename T>
struct Exp2Traits;
// 2^t = 2^n 2^f with n = round(t) and f = t - n (exact, |f| <= 1/2), 2^f by a polynomial in f.
// Over [kLow, kHigh] 2^t is a normal number: never a subnormal (one costs a microcode assist
// many times the price of the whole computation), never an infinity. Base 2 rather than e: the
// callers fold log2(e) into their own constants, and the reduction of the argument takes an
// instruction or three additions where e's took three multiply-adds and an addition.
template <>
struct Exp2Traits<float> {
  using SignedBits = std::int32_t;
  static constexpr float kLow = -125.0f;
  static constexpr float kHigh = 127.0f;
  static constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  static constexpr int kMantissaBits = 23;
  static constexpr SignedBits kExponentBias = 127;
  // The degree-5 polynomial through 2^f at the six Chebyshev nodes of [-1/2, 1/2], rounded to
  // f32: a relative error below 1.6e-7, where the Taylor polynomial needs degree 6 for 1.2e-7.
  static constexpr std::array<float, 6> kCoefficients = {
      1.00000012f, 0.693147182f, 0.240221068f, 0.0555035695f, 0.00967603177f, 0.00133908633f};
};
template <>
struct Exp2Traits<double> {
  using SignedBits = std::int64_t;
  static constexpr double kLow = -1021.0;
  static constexpr double kHigh = 1023.0;
  static constexpr double kShifter = 6755399441055744.0;  // 1.5 * 2^52
  static constexpr int kMantissaBits = 52;
  static constexpr SignedBits kExponentBias = 1023;
  // Taylor: |f ln 2| <= 0.35 leaves a truncation error of about an ulp at degree 13.
  static constexpr std::array<double, 14> kCoefficients = Exp2TaylorCoefficients<double, 13>();
};

// 2^f for |f| <= 1/2, by Horner's rule.
template <typename V>
[[gnu::always_inline]] inline V Exp2Reduced(V f) {
  constexpr const auto& kC = Exp2Traits<LaneOf<V>>::kCoefficients;
  constexpr std::size_t kDegree = kC.size() - 1;
  V p = Splat<V>(kC[kDegree]);
  [&]<std::size_t... kStep>(std::index_sequence<kStep...>) __attribute__((always_inline)) {
    ((p = MulAdd<V>(p, f, Splat<V>(kC[kDegree - 1 - kStep]))), ...);
  }(std::make_index_sequence<kDegree>());
  return p;
}

// 2^t for t in [kLow, kHigh]; NaN for NaN.
template <typename V>
[[gnu::always_inline]] inline V Exp2InRange(V t) {
  using T = LaneOf<V>;
  using E = Exp2Traits<T>;
  using SignedVec = decltype(t < t);  // integer lanes of T's width
  const V shifted = t + E::kShifter;
  const V n = shifted - E::kShifter;
  // n sits in the low bits of `shifted` (two's complement against the shifter's bits); 2^n is
  // normal over the range, so its bits are the biased n shifted into the exponent.
  const SignedVec biased = std::bit_cast<SignedVec>(shifted) -
                           std::bit_cast<typename E::SignedBits>(E::kShifter) + E::kExponentBias;
  return Exp2Reduced<V>(t - n) * std::bit_cast<V>(biased << E::kMantissaBits);
}

// x / (1 + 2^t): -0 where t > kHigh (there x is far below zero and the true value below 1e-30
// in magnitude; also for x = -inf), NaN for NaN.
template <typename V>
[[gnu::always_inline]] inline V OverOnePlusExp2(V x, V t) {
  using T = LaneOf<V>;
  using E = Exp2Traits<T>;
  const V low = Splat<V>(E::kLow);
  const V high = Splat<V>(E::kHigh);
#if defined(__AVX512F__)
  // VRNDSCALE rounds in one instruction, and VSCALEF takes 2^n for any n, so only the low end
  // needs a clamp (f = t - n is NaN for an infinite t); the division, masked past kHigh, leaves
  // the -0 there that the select below would: the same results as the general form. (Zero-masked
  // forms with every lane set, as in Max.)
  if constexpr (sizeof(V) == 64) {
    constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const V clamped = Max<V>(t, low);
    const V one = Splat<V>(T(1));
    const V negative_zero = Splat<V>(T(-0.0));
    if constexpr (std::is_same_v<T, float>) {
      const V n = _mm512_maskz_roundscale_ps(0xffff, clamped, kNearest);
      const V power = _mm512_maskz_scalef_ps(0xffff, Exp2Reduced<V>(clamped - n), n);
      const __mmask16 in_range = _mm512_cmp_ps_mask(t, high, _CMP_NGT_UQ);
      return _mm512_mask_div_ps(negative_zero, in_range, x, one + power);
    } else {
      const V n = _mm512_maskz_roundscale_pd(0xff, clamped, kNearest);
      const V power = _mm512_maskz_scalef_pd(0xff, Exp2Reduced<V>(clamped - n), n);
      const __mmask8 in_range = _mm512_cmp_pd_mask(t, high, _CMP_NGT_UQ);
      return _mm512_mask_div_pd(negative_zero, in_range, x, one + power);
    }
  }
#endif
  // The clamp keeps 2^t in its normal range.
  const V clamped = Min<V>(Max<V>(t, low), high);
  const V quotient = x / (T(1) + Exp2InRange<V>(clamped));
  return t > high ? Splat<V>(T(-0.0)) : quotient;
}

// gelu's tanh form, 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)) = x / (1 + 2^t) with u = sqrt(2 /
// pi) (x + 0.044715 x^3), so t = -2u log2(e) = x (c1 + c3 x^2); silu's t is x c1.
template <typename T>
constexpr T kGeluC1 = T(-2 * kSqrtTwoOverPi * kLog2E);
template <typename T>
constexpr T kGeluC3 = T(-2 * kSqrtTwoOverPi * 0.044715L * kLog2E);
template <typename T>
constexpr T kSiluC1 = T(-kLog2E);
// silu's c3 where it takes SigmoidForm: the negative normal number nearest 0, not 0, whose
// 0 * x^2 would be NaN where x^2 overflows. It vanishes into c1 wherever t can be in range
// (|x| below 2^51 for f32), and past that t is out of range with or without it.
template <typename T>
constexpr T kSiluC3 = -std::numeric_limits<T>::min();

// x / (1 + 2^(x (c1 + c3 x^2))): gelu for (kGeluC1, kGeluC3), silu for (kSiluC1, kSiluC3).
// Where x^2 overflows, t is the infinity of x's opposite sign, the limit either way.
template <typename V>
[[gnu::always_inline]] inline V SigmoidForm(V x, V c1, V c3) {
  return OverOnePlusExp2<V>(x, x * MulAdd<V>(c3, x * x, c1));
}

// x where x >= floor or x is NaN, else floor: no activation for floor = -inf, relu for 0.
template <typename V>
[[gnu::always_inline]] inline V FloorAt(V x, V floor) {
  return x < floor ? floor : x;
}

template <Activation kAct, typename V>
[[gnu::always_inline]] inline V Activate(V x) {
  using T = LaneOf<V>;
  if constexpr (kAct == Activation::kRelu) {
    return x < T(0) ? Splat<V>(T(0)) : x;  // NaN compares false: it stays
  } else if constexpr (kAct == Activation::kGelu) {
    return SigmoidForm<V>(x, Splat<V>(kGeluC1<T>), Splat<V>(kGeluC3<T>));
  } else if constexpr (kAct == Activation::kSilu) {
    return OverOnePlusExp2<V>(x, x * kSiluC1<T>);  // SigmoidForm's bits, with kSiluC3
  } else {
    return x;
  }
}

// An activation as two forms with run-time constants, for kernels that keep one copy of their
// epilogue per form rather than one per activation: FloorAt (none, relu) or SigmoidForm (gelu,
// silu), chosen once a tile.
template <typename T>
struct Form {
  explicit Form(Activation activation)
      : sigmoid(activation == Activation::kGelu || activation == Activation::kSilu),
        floor(activation == Activation::kRelu ? T(0) : T(-__builtin_inf())),
        c1(activation == Activation::kGelu ? kGeluC1<T> : kSiluC1<T>),
        c3(activation == Activation::kGelu ? kGeluC3<T> : kSiluC3<T>) {}
  // The constants' broadcasts are the same in every call of an unrolled tile: the compiler
  // makes them once.
  template <bool kSigmoid, typename V>
  [[gnu::always_inline]] V Apply(V x) const {
    if constexpr (kSigmoid) {
      return SigmoidForm<V>(x, Splat<V>(c1), Splat<V>(c3));
    } else {
      return FloorAt<V>(x, Splat<V>(floor));
    }
  }
  bool sigmoid;
  T floor;
  T c1;
  T c3;
};

}  // namespace
}  // namespace mmtune::activation
