// AVX-512 traits for the low-precision micro-kernel (interface in lowp_vec_generic.h): one
// VDPBF16PS (AVX512_BF16) or VPDPBUSD (AVX512_VNNI) per group and B vector, which is what these
// instructions were made for. Include only from *_avx512.cc units; the kernels run only where
// CpuRunsLowp says the CPU has the extension.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/lowp_microkernel.h"

namespace mmtune::simd {

template <class Kind>
struct Avx512LowpVec;

template <>
struct Avx512LowpVec<Bf16Gemm> {
  using Kind = Bf16Gemm;
  using Acc = __m512;
  using AOperand = __m512bh;
  using BOperand = __m512bh;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx512;

  static Acc Zero() { return _mm512_setzero_ps(); }
  static AOperand LoadA(const BFloat16* p) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof(w));
    return (__m512bh)_mm512_set1_epi32(w);
  }
  static BOperand LoadB(const BFloat16* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static Acc Dot(Acc acc, AOperand a, BOperand b) { return _mm512_dpbf16_ps(acc, a, b); }
  static void Store(float* p, Acc v) { _mm512_storeu_ps(p, v); }
};

template <>
struct Avx512LowpVec<S8Gemm> {
  using Kind = S8Gemm;
  using Acc = __m512i;
  using AOperand = __m512i;  // u8: VPDPBUSD's unsigned operand
  using BOperand = __m512i;  // s8
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx512;

  static Acc Zero() { return _mm512_setzero_si512(); }
  static AOperand LoadA(const std::uint8_t* p) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof(w));
    return _mm512_set1_epi32(w);
  }
  static BOperand LoadB(const std::int8_t* p) { return _mm512_loadu_si512(p); }
  static Acc Dot(Acc acc, AOperand a, BOperand b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static void Store(std::int32_t* p, Acc v) { _mm512_storeu_si512(p, v); }
};

}  // namespace mmtune::simd
