// AVX2 + FMA traits for the low-precision micro-kernel (interface in lowp_vec_generic.h), for CPUs
// without the AVX-512 dot-product instructions: bf16 pairs widen to f32 with a shift and a mask
// and meet in two FMAs; u8 x s8 groups split into 16-bit halves for VPMADDWD, which is exact
// (VPMADDUBSW would saturate 255 * 127 * 2 at 16 bits). Include only from *_avx2.cc units.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/lowp_microkernel.h"

namespace mmtune::simd {

template <class Kind>
struct Avx2LowpVec;

template <>
struct Avx2LowpVec<Bf16Gemm> {
  using Kind = Bf16Gemm;
  using Acc = __m256;
  struct AOperand {
    __m256 even, odd;
  };
  struct BOperand {
    __m256 even, odd;
  };
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx2;

  static Acc Zero() { return _mm256_setzero_ps(); }
  static AOperand LoadA(const BFloat16* p) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof(w));
    const __m256i pair = _mm256_set1_epi32(w);
    return {_mm256_castsi256_ps(_mm256_slli_epi32(pair, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(pair, _mm256_set1_epi32(-65536)))};
  }
  static BOperand LoadB(const BFloat16* p) {
    const __m256i pairs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)),
            _mm256_castsi256_ps(_mm256_and_si256(pairs, _mm256_set1_epi32(-65536)))};
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return _mm256_fmadd_ps(a.odd, b.odd, _mm256_fmadd_ps(a.even, b.even, acc));
  }
  static void Store(float* p, Acc v) { _mm256_storeu_ps(p, v); }
};

template <>
struct Avx2LowpVec<S8Gemm> {
  using Kind = S8Gemm;
  using Acc = __m256i;
  // Bytes 0 and 2 of each group in the 16-bit halves of `low`, bytes 1 and 3 in `high`, so one
  // VPMADDWD per half adds two exact products into each 32-bit lane.
  struct AOperand {
    __m256i low, high;  // zero-extended u8
  };
  struct BOperand {
    __m256i low, high;  // sign-extended s8
  };
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx2;

  static Acc Zero() { return _mm256_setzero_si256(); }
  static AOperand LoadA(const std::uint8_t* p) {
    std::uint32_t w;
    std::memcpy(&w, p, sizeof(w));
    return {_mm256_set1_epi32(static_cast<std::int32_t>(w & 0x00ff00ffu)),
            _mm256_set1_epi32(static_cast<std::int32_t>((w >> 8) & 0x00ff00ffu))};
  }
  static BOperand LoadB(const std::int8_t* p) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_srai_epi16(_mm256_slli_epi16(bytes, 8), 8), _mm256_srai_epi16(bytes, 8)};
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(a.low, b.low),
                                                  _mm256_madd_epi16(a.high, b.high)));
  }
  static void Store(std::int32_t* p, Acc v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
};

}  // namespace mmtune::simd
