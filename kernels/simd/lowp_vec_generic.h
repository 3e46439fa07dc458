// Portable traits for the low-precision micro-kernel (GCC vector extensions, 16 bytes = 4
// 32-bit lanes): bf16 by widening to f32 and two FMAs per group, s8 by sign-extending each byte
// and four 32-bit multiply-adds. Correct anywhere, fast nowhere; include only from
// *_generic.cc translation units.
//
// Every lowp traits type provides, for its `Kind`:
//   Acc (accumulator vector), AOperand / BOperand (a group of A broadcast, a vector of B groups,
//   in whatever form Dot wants), kLanes (32-bit lanes = columns per B vector), kRegisters, kIsa,
//   Zero(), LoadA(p) (one 4-byte group of A to all lanes), LoadB(p) (kLanes groups of B),
//   Dot(acc, a, b) = acc + the group's dot product per lane, Store(p, acc) (kLanes of C);
//   optionally OperandRegisters(nv), the registers a tile of nv B vectors keeps beside its
//   accumulators (LowpMicroKernelEntry::fits_registers).
// and, for the GEMV kernels (lowp_gemv_impl.h):
//   LoadAVector(p) (kLanes groups of A, one per lane, like LoadB), Add(x, y), ReduceAdd(acc) (the
//   sum of the lanes as C), WidenA(p) / WidenB(p) (kLanes consecutive elements, one per lane, as
//   accumulator values), Broadcast(scalar), MulAdd(acc, x, m) = acc + x * m, LoadAcc(p).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/lowp_microkernel.h"

namespace mmtune::simd {

template <class Kind>
struct GenericLowpVec;

namespace generic_lowp_detail {
typedef float F32x4 __attribute__((vector_size(16)));
typedef std::uint32_t U32x4 __attribute__((vector_size(16)));
typedef std::int32_t S32x4 __attribute__((vector_size(16)));

inline U32x4 LoadU32x4(const void* p) {
  U32x4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename T>
inline U32x4 Lanes(const T* p) {
  return U32x4{static_cast<std::uint32_t>(p[0]), static_cast<std::uint32_t>(p[1]),
               static_cast<std::uint32_t>(p[2]), static_cast<std::uint32_t>(p[3])};
}
inline std::uint32_t LoadU32(const void* p) {
  std::uint32_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
}  // namespace generic_lowp_detail

template <>
struct GenericLowpVec<Bf16Gemm> {
  using Kind = Bf16Gemm;
  using Acc = generic_lowp_detail::F32x4;
  // A bf16 pair as two f32 values: the low half is the even k, the high half the odd k.
  struct AOperand {
    Acc even, odd;
  };
  struct BOperand {
    Acc even, odd;
  };
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kGeneric;

  static Acc Zero() { return Acc{}; }
  static AOperand LoadA(const BFloat16* p) {
    const std::uint32_t w = generic_lowp_detail::LoadU32(p);
    float even, odd;
    const std::uint32_t even_bits = w << 16, odd_bits = w & 0xffff0000u;
    std::memcpy(&even, &even_bits, 4);
    std::memcpy(&odd, &odd_bits, 4);
    return {Acc{} + even, Acc{} + odd};
  }
  static BOperand LoadB(const BFloat16* p) {
    const generic_lowp_detail::U32x4 w = generic_lowp_detail::LoadU32x4(p);
    return {(Acc)(w << 16), (Acc)(w & 0xffff0000u)};
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return acc + a.even * b.even + a.odd * b.odd;
  }
  static void Store(float* p, Acc v) { std::memcpy(p, &v, sizeof(v)); }

  static AOperand LoadAVector(const BFloat16* p) {
    const BOperand pairs = LoadB(p);
    return {pairs.even, pairs.odd};
  }
  static Acc Add(Acc x, Acc y) { return x + y; }
  static float ReduceAdd(Acc v) { return (v[0] + v[1]) + (v[2] + v[3]); }
  static Acc WidenA(const BFloat16* p) {
    const std::uint16_t bits[4] = {p[0].bits, p[1].bits, p[2].bits, p[3].bits};
    return (Acc)(generic_lowp_detail::Lanes(bits) << 16);
  }
  static Acc WidenB(const BFloat16* p) { return WidenA(p); }
  static Acc Broadcast(float x) { return Acc{} + x; }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return acc + x * m; }
  static Acc LoadAcc(const float* p) {
    Acc v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
};

template <>
struct GenericLowpVec<S8Gemm> {
  using Kind = S8Gemm;
  // Unsigned lanes: the products and sums wrap modulo 2^32 without undefined behaviour, and
  // their bits are the s32 results.
  using Acc = generic_lowp_detail::U32x4;
  struct AOperand {
    Acc byte[4];  // A's four u8 values, each broadcast
  };
  struct BOperand {
    Acc byte[4];  // B's four s8 values of each lane, sign-extended
  };
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 16;
  static constexpr IsaLevel kIsa = IsaLevel::kGeneric;

  static Acc Zero() { return Acc{}; }
  static AOperand LoadA(const std::uint8_t* p) {
    AOperand a;
    for (int t = 0; t < 4; ++t) a.byte[t] = Acc{} + static_cast<std::uint32_t>(p[t]);
    return a;
  }
  static BOperand LoadB(const std::int8_t* p) {
    const generic_lowp_detail::S32x4 w = (generic_lowp_detail::S32x4)generic_lowp_detail::LoadU32x4(p);
    BOperand b;
    b.byte[0] = (Acc)((w << 24) >> 24);
    b.byte[1] = (Acc)((w << 16) >> 24);
    b.byte[2] = (Acc)((w << 8) >> 24);
    b.byte[3] = (Acc)(w >> 24);
    return b;
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return acc + a.byte[0] * b.byte[0] + a.byte[1] * b.byte[1] + a.byte[2] * b.byte[2] +
           a.byte[3] * b.byte[3];
  }
  static void Store(std::int32_t* p, Acc v) { std::memcpy(p, &v, sizeof(v)); }

  static AOperand LoadAVector(const std::uint8_t* p) {
    const Acc w = generic_lowp_detail::LoadU32x4(p);
    AOperand a;
    for (int t = 0; t < 4; ++t) a.byte[t] = (w >> (8 * t)) & 0xffu;
    return a;
  }
  static Acc Add(Acc x, Acc y) { return x + y; }
  static std::int32_t ReduceAdd(Acc v) {
    return static_cast<std::int32_t>(v[0] + v[1] + v[2] + v[3]);
  }
  static Acc WidenA(const std::uint8_t* p) { return generic_lowp_detail::Lanes(p); }
  static Acc WidenB(const std::int8_t* p) {
    const std::int32_t values[4] = {p[0], p[1], p[2], p[3]};
    return generic_lowp_detail::Lanes(values);
  }
  static Acc Broadcast(std::int32_t x) { return Acc{} + static_cast<std::uint32_t>(x); }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return acc + x * m; }
  static Acc LoadAcc(const std::int32_t* p) {
    Acc v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
};

}  // namespace mmtune::simd
