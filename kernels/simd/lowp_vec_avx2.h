// AVX2 + FMA traits for the low-precision micro-kernel (interface in lowp_vec_generic.h), for CPUs
// without the AVX-512 dot-product instructions: bf16 pairs widen to f32 with a shift and a mask
// and meet in two FMAs; u8 x s8 groups split into 16-bit halves for VPMADDWD, which is exact
// (VPMADDUBSW would saturate 255 * 127 * 2 at 16 bits). Include only from *_avx2.cc units.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/lowp_microkernel.h"
#include "kernels/simd/vec_avx2.h"

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
  // Registers a tile keeps beside its accumulators with nv B vectors: each vector's two halves,
  // A's two halves and the mask that splits them (LowpMicroKernelEntry::fits_registers).
  static constexpr int OperandRegisters(int nv) { return 2 * nv + 3; }

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

  static AOperand LoadAVector(const BFloat16* p) {
    const BOperand pairs = LoadB(p);
    return {pairs.even, pairs.odd};
  }
  static Acc Add(Acc x, Acc y) { return _mm256_add_ps(x, y); }
  static float ReduceAdd(Acc v) { return Avx2Vec<float>::ReduceAdd(v); }
  // Eight bf16 values: zero-extended to 32 bits and shifted into the upper half.
  static Acc WidenA(const BFloat16* p) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
  }
  static Acc WidenB(const BFloat16* p) { return WidenA(p); }
  static Acc Broadcast(float x) { return _mm256_set1_ps(x); }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return _mm256_fmadd_ps(x, m, acc); }
  static Acc LoadAcc(const float* p) { return _mm256_loadu_ps(p); }
};

// What both AVX2 s8 traits (VPMADDWD here, VEX VPDPBUSD in lowp_vec_avx_vnni.h) share: 32-bit
// lanes and the widened operands of the GEMV axpy form. A template on the traits that use it, so
// that each translation unit instantiates its own copy under its own ISA flags.
template <class Traits>
struct Avx2S8Lanes {
  using Acc = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kAvx2;

  static Acc Zero() { return _mm256_setzero_si256(); }
  static void Store(std::int32_t* p, Acc v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
  }
  static Acc Add(Acc x, Acc y) { return _mm256_add_epi32(x, y); }
  static std::int32_t ReduceAdd(Acc v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
  }
  static Acc WidenA(const std::uint8_t* p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static Acc WidenB(const std::int8_t* p) {
    return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  }
  static Acc Broadcast(std::int32_t x) { return _mm256_set1_epi32(x); }
  // The low 32 bits of each product: exact, since |u8 * s8| < 2^15.
  static Acc MulAdd(Acc acc, Acc x, Acc m) {
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(x, m));
  }
  static Acc LoadAcc(const std::int32_t* p) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  }
};

template <>
struct Avx2LowpVec<S8Gemm> : Avx2S8Lanes<Avx2LowpVec<S8Gemm>> {
  using Kind = S8Gemm;
  // No OperandRegisters: from 4x16 up the tiles keep values on the stack, which the one-cycle
  // sums absorb, and 4x16 and 5x16 run level (docs/low-precision.md).
  // Bytes 0 and 2 of each group in the 16-bit halves of `low`, bytes 1 and 3 in `high`, so one
  // VPMADDWD per half adds two exact products into each 32-bit lane.
  struct AOperand {
    __m256i low, high;  // zero-extended u8
  };
  struct BOperand {
    __m256i low, high;  // sign-extended s8
  };

  // Split in the vector unit after one broadcast load: splitting the 32-bit word in a general
  // register first costs two register transfers and two shuffles per row and group.
  static AOperand LoadA(const std::uint8_t* p) {
    std::int32_t w;
    std::memcpy(&w, p, sizeof(w));
    const __m256i group = _mm256_set1_epi32(w);
    return {_mm256_and_si256(group, _mm256_set1_epi16(0x00ff)), _mm256_srli_epi16(group, 8)};
  }
  static BOperand LoadB(const std::int8_t* p) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_srai_epi16(_mm256_slli_epi16(bytes, 8), 8), _mm256_srai_epi16(bytes, 8)};
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return _mm256_add_epi32(acc, _mm256_add_epi32(_mm256_madd_epi16(a.low, b.low),
                                                  _mm256_madd_epi16(a.high, b.high)));
  }

  // kLanes groups of A, in the halves LoadA makes of one group: bytes 0 and 2 of every group
  // zero-extended in `low`, bytes 1 and 3 in `high`.
  static AOperand LoadAVector(const std::uint8_t* p) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {_mm256_and_si256(bytes, _mm256_set1_epi16(0x00ff)), _mm256_srli_epi16(bytes, 8)};
  }
};

}  // namespace mmtune::simd
