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

  static AOperand LoadAVector(const BFloat16* p) { return (__m512bh)_mm512_loadu_si512(p); }
  static Acc Add(Acc x, Acc y) { return _mm512_add_ps(x, y); }
  // Through memory: once per output, and GCC 12 flags the extract intrinsics' undefined
  // source operand as uninitialized.
  static float ReduceAdd(Acc v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    for (int width = 8; width > 0; width /= 2) {
      for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
    }
    return lanes[0];
  }
  // Sixteen bf16 values: zero-extended to 32 bits and shifted into the upper half.
  static Acc WidenA(const BFloat16* p) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
  }
  static Acc WidenB(const BFloat16* p) { return WidenA(p); }
  static Acc Broadcast(float x) { return _mm512_set1_ps(x); }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return _mm512_fmadd_ps(x, m, acc); }
  static Acc LoadAcc(const float* p) { return _mm512_loadu_ps(p); }
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

  static AOperand LoadAVector(const std::uint8_t* p) { return _mm512_loadu_si512(p); }
  static Acc Add(Acc x, Acc y) { return _mm512_add_epi32(x, y); }
  static std::int32_t ReduceAdd(Acc v) {
    alignas(64) std::uint32_t lanes[16];
    _mm512_store_si512(lanes, v);
    std::uint32_t sum = 0;  // modulo 2^32
    for (int l = 0; l < 16; ++l) sum += lanes[l];
    return static_cast<std::int32_t>(sum);
  }
  static Acc WidenA(const std::uint8_t* p) {
    return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Acc WidenB(const std::int8_t* p) {
    return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Acc Broadcast(std::int32_t x) { return _mm512_set1_epi32(x); }
  // The low 32 bits of each product: exact, since |u8 * s8| < 2^15.
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return _mm512_add_epi32(acc, _mm512_mullo_epi32(x, m)); }
  static Acc LoadAcc(const std::int32_t* p) { return _mm512_loadu_si512(p); }
};

}  // namespace mmtune::simd
