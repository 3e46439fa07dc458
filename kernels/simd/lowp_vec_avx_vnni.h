// AVX-VNNI traits for the s8 micro-kernel (interface in lowp_vec_generic.h): the VEX-encoded,
// 256-bit VPDPBUSD of CPUs that have it at the AVX2 level (Alder Lake and later clients, Zen 5),
// one instruction per group and B vector where plain AVX2 needs five. Include only from
// ukernels_avx2_vnni_lowp.cc; the registry serves these kernels at the AVX2 level only where
// CPUID reports AVX_VNNI.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/simd/lowp_vec_avx2.h"

namespace mmtune::simd {

template <class Kind>
struct AvxVnniLowpVec;

template <>
struct AvxVnniLowpVec<S8Gemm> : Avx2S8Lanes<AvxVnniLowpVec<S8Gemm>> {
  using Kind = S8Gemm;
  using AOperand = __m256i;  // u8: VPDPBUSD's unsigned operand
  using BOperand = __m256i;  // s8

  static AOperand LoadA(const std::uint8_t* p) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof(w));
    return _mm256_set1_epi32(w);
  }
  static BOperand LoadB(const std::int8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
  static Acc Dot(Acc acc, AOperand a, BOperand b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
  static AOperand LoadAVector(const std::uint8_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
};

}  // namespace mmtune::simd
