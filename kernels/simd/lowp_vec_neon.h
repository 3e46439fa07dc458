// AArch64 traits for the low-precision micro-kernel (interface in lowp_vec_generic.h), one per
// instruction the NEON levels add:
//   NeonLowpVec   (neon): bf16 pairs widened to f32 for two FMLAs, s8 groups sign-extended for
//                 four 32-bit MLAs, for cores without the dot products;
//   SdotLowpVec   (neon-dot, cores without I8MM): SDOT, which multiplies signed bytes only, on
//                 A - 128; the B operand carries -128 * (its groups' sums), which Dot subtracts;
//   UsdotLowpVec  (neon-dot with I8MM): USDOT, u8 x s8 as they are;
//   BfdotLowpVec  (neon-bf16): BFDOT, a bf16 pair per lane;
//   UsmmlaLowpVec, BfmmlaLowpVec (the same levels, paired tiles): USMMLA and BFMMLA, which
//                 multiply a 2 x 2 block of C over two groups of k (lowp_microkernel_impl.h:
//                 PairedKLoop): twice the products of USDOT or BFDOT per instruction.
// Each is instantiated only by the translation unit compiled with its instructions
// (kernels/CMakeLists.txt); the registry serves it only where HWCAP reported them. The shared
// parts are templates on the traits that use them, so that no translation unit's copy of a
// function is merged into another's.
#pragma once

#include <arm_neon.h>

#include <bit>
#include <cstdint>
#include <cstring>

#include "kernels/lowp_microkernel.h"

namespace mmtune::simd {

// Internal linkage: each translation unit keeps its own copy under its own flags.
namespace neon_lowp_detail {
static inline std::uint32_t LoadGroup(const void* p) {
  std::uint32_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
static inline uint8x16_t LoadBytes(const void* p) {
  uint8x16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
static inline uint32x2_t LoadTwoGroups(const void* p) {
  uint32x2_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
}  // namespace neon_lowp_detail

// f32 accumulators of four lanes: what the bf16 traits share.
template <class Traits>
struct NeonBf16Lanes {
  using Kind = Bf16Gemm;
  using Acc = float32x4_t;
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 32;

  static Acc Zero() { return vdupq_n_f32(0.0f); }
  static void Store(float* p, Acc v) { vst1q_f32(p, v); }
  static Acc Add(Acc x, Acc y) { return vaddq_f32(x, y); }
  static float ReduceAdd(Acc v) { return vaddvq_f32(v); }
  // Four bf16 values: zero-extended to 32 bits and shifted into the upper half.
  static Acc WidenA(const BFloat16* p) {
    std::uint16_t bits[4];
    std::memcpy(bits, p, sizeof(bits));
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(bits), 16));
  }
  static Acc WidenB(const BFloat16* p) { return WidenA(p); }
  static Acc Broadcast(float x) { return vdupq_n_f32(x); }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return vfmaq_f32(acc, x, m); }
  static Acc LoadAcc(const float* p) { return vld1q_f32(p); }
};

// s32 accumulators of four lanes (NEON integer arithmetic wraps): what the s8 traits share.
template <class Traits>
struct NeonS8Lanes {
  using Kind = S8Gemm;
  using Acc = int32x4_t;
  static constexpr int kLanes = 4;
  static constexpr int kRegisters = 32;

  static Acc Zero() { return vdupq_n_s32(0); }
  static void Store(std::int32_t* p, Acc v) { vst1q_s32(p, v); }
  static Acc Add(Acc x, Acc y) { return vaddq_s32(x, y); }
  static std::int32_t ReduceAdd(Acc v) { return vaddvq_s32(v); }
  static Acc WidenA(const std::uint8_t* p) {
    const uint8x8_t bytes = vcreate_u8(neon_lowp_detail::LoadGroup(p));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(bytes))));
  }
  static Acc WidenB(const std::int8_t* p) {
    const int8x8_t bytes = vcreate_s8(neon_lowp_detail::LoadGroup(p));
    return vmovl_s16(vget_low_s16(vmovl_s8(bytes)));
  }
  static Acc Broadcast(std::int32_t x) { return vdupq_n_s32(x); }
  static Acc MulAdd(Acc acc, Acc x, Acc m) { return vmlaq_s32(acc, x, m); }
  static Acc LoadAcc(const std::int32_t* p) { return vld1q_s32(p); }
};

template <class Kind>
struct NeonLowpVec;

template <>
struct NeonLowpVec<Bf16Gemm> : NeonBf16Lanes<NeonLowpVec<Bf16Gemm>> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeon;
  // A bf16 pair as two f32 values: the low half is the even k, the high half the odd k.
  struct AOperand {
    Acc even, odd;
  };
  using BOperand = AOperand;
  // Each B vector's two halves, A's two halves and the mask that splits them.
  static constexpr int OperandRegisters(int nv) { return 2 * nv + 3; }

  static AOperand Split(uint32x4_t pairs) {
    return {vreinterpretq_f32_u32(vshlq_n_u32(pairs, 16)),
            vreinterpretq_f32_u32(vandq_u32(pairs, vdupq_n_u32(0xffff0000u)))};
  }
  static AOperand LoadA(const BFloat16* p) {
    return Split(vdupq_n_u32(neon_lowp_detail::LoadGroup(p)));
  }
  static BOperand LoadB(const BFloat16* p) {
    return Split(vreinterpretq_u32_u8(neon_lowp_detail::LoadBytes(p)));
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    return vfmaq_f32(vfmaq_f32(acc, a.even, b.even), a.odd, b.odd);
  }
  static AOperand LoadAVector(const BFloat16* p) { return LoadB(p); }
};

template <>
struct NeonLowpVec<S8Gemm> : NeonS8Lanes<NeonLowpVec<S8Gemm>> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeon;
  // Byte t of every lane's group, zero-extended (A) or sign-extended (B) to 32 bits.
  struct AOperand {
    Acc byte[4];
  };
  using BOperand = AOperand;
  static constexpr int OperandRegisters(int nv) { return 4 * nv + 4; }

  static AOperand LoadA(const std::uint8_t* p) {
    AOperand a;
    for (int t = 0; t < 4; ++t) a.byte[t] = vdupq_n_s32(p[t]);
    return a;
  }
  static BOperand LoadB(const std::int8_t* p) {
    const int32x4_t w = vreinterpretq_s32_u8(neon_lowp_detail::LoadBytes(p));
    return {{vshrq_n_s32(vshlq_n_s32(w, 24), 24), vshrq_n_s32(vshlq_n_s32(w, 16), 24),
             vshrq_n_s32(vshlq_n_s32(w, 8), 24), vshrq_n_s32(w, 24)}};
  }
  static Acc Dot(Acc acc, const AOperand& a, const BOperand& b) {
    for (int t = 0; t < 4; ++t) acc = vmlaq_s32(acc, a.byte[t], b.byte[t]);
    return acc;
  }
  static AOperand LoadAVector(const std::uint8_t* p) {
    const uint32x4_t w = vreinterpretq_u32_u8(neon_lowp_detail::LoadBytes(p));
    AOperand a;
    a.byte[0] = vreinterpretq_s32_u32(vandq_u32(w, vdupq_n_u32(0xffu)));
    a.byte[1] = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(w, 8), vdupq_n_u32(0xffu)));
    a.byte[2] = vreinterpretq_s32_u32(vandq_u32(vshrq_n_u32(w, 16), vdupq_n_u32(0xffu)));
    a.byte[3] = vreinterpretq_s32_u32(vshrq_n_u32(w, 24));
    return a;
  }
};

template <class Kind>
struct SdotLowpVec;

template <>
struct SdotLowpVec<S8Gemm> : NeonS8Lanes<SdotLowpVec<S8Gemm>> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeonDot;
  using AOperand = int8x16_t;  // a - 128: the u8 value with its top bit flipped, as s8
  struct BOperand {
    int8x16_t bytes;
    int32x4_t bias;  // -128 * the sum of each lane's group: SDOT of the bytes with -128
  };
  // Each B vector and its bias, A, and the -128 bytes.
  static constexpr int OperandRegisters(int nv) { return 2 * nv + 2; }

  static AOperand LoadA(const std::uint8_t* p) {
    return vreinterpretq_s8_u32(vdupq_n_u32(neon_lowp_detail::LoadGroup(p) ^ 0x80808080u));
  }
  static BOperand LoadB(const std::int8_t* p) {
    const int8x16_t bytes = vreinterpretq_s8_u8(neon_lowp_detail::LoadBytes(p));
    return {bytes, vdotq_s32(vdupq_n_s32(0), bytes, vdupq_n_s8(-128))};
  }
  // sum (a - 128) * b - (-128) * sum b = sum a * b.
  static Acc Dot(Acc acc, AOperand a, const BOperand& b) {
    return vsubq_s32(vdotq_s32(acc, a, b.bytes), b.bias);
  }
  static AOperand LoadAVector(const std::uint8_t* p) {
    return vreinterpretq_s8_u8(veorq_u8(neon_lowp_detail::LoadBytes(p), vdupq_n_u8(0x80)));
  }
};

template <class Kind>
struct UsdotLowpVec;

template <>
struct UsdotLowpVec<S8Gemm> : NeonS8Lanes<UsdotLowpVec<S8Gemm>> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeonDot;
  using AOperand = uint8x16_t;
  using BOperand = int8x16_t;

  static AOperand LoadA(const std::uint8_t* p) {
    return vreinterpretq_u8_u32(vdupq_n_u32(neon_lowp_detail::LoadGroup(p)));
  }
  static BOperand LoadB(const std::int8_t* p) {
    return vreinterpretq_s8_u8(neon_lowp_detail::LoadBytes(p));
  }
  static Acc Dot(Acc acc, AOperand a, BOperand b) { return vusdotq_s32(acc, a, b); }
  static AOperand LoadAVector(const std::uint8_t* p) { return neon_lowp_detail::LoadBytes(p); }
};

template <class Kind>
struct BfdotLowpVec;

template <>
struct BfdotLowpVec<Bf16Gemm> : NeonBf16Lanes<BfdotLowpVec<Bf16Gemm>> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeonBf16;
  using AOperand = bfloat16x8_t;  // four bf16 pairs: one group per lane
  using BOperand = bfloat16x8_t;

  static AOperand LoadA(const BFloat16* p) {
    return vreinterpretq_bf16_u32(vdupq_n_u32(neon_lowp_detail::LoadGroup(p)));
  }
  static BOperand LoadB(const BFloat16* p) {
    return vreinterpretq_bf16_u8(neon_lowp_detail::LoadBytes(p));
  }
  static Acc Dot(Acc acc, AOperand a, BOperand b) { return vbfdotq_f32(acc, a, b); }
  static AOperand LoadAVector(const BFloat16* p) { return LoadB(p); }
};

// What the paired traits (USMMLA, BFMMLA) share beside their accumulator lanes (`Lanes`): rows
// and columns of two groups each, interleaved by 32-bit group as the matrix instructions read
// them ([r0 g, r0 g', r1 g, r1 g']), and the 2 x 2 blocks back into rows.
template <class Lanes, typename APairType, typename BPairType>
struct NeonPairedLanes : Lanes {
  using typename Lanes::Acc;
  static constexpr bool kPairedGroups = true;
  using APair = APairType;
  using BPair = BPairType;
  // Each column pair, the row pair in use and one spare.
  static constexpr int OperandRegisters(int nv) { return 2 * nv + 2; }

  // Two rows from a packed panel, where a group's rows lie side by side ([r0 g, r1 g] at
  // `group`, the next group's at `next`).
  template <typename E>
  static APair PairRowsPacked(const E* group, const E* next) {
    const uint32x2_t x = neon_lowp_detail::LoadTwoGroups(group);
    const uint32x2_t y = neon_lowp_detail::LoadTwoGroups(next);
    return std::bit_cast<APair>(vcombine_u32(vzip1_u32(x, y), vzip2_u32(x, y)));
  }
  // Two rows of A in place, where a row's groups lie side by side.
  template <typename E>
  static APair PairRowsInPlace(const E* row0, const E* row1) {
    return std::bit_cast<APair>(vcombine_u32(neon_lowp_detail::LoadTwoGroups(row0),
                                             neon_lowp_detail::LoadTwoGroups(row1)));
  }
  // Four columns of a packed B panel's group (at `group`) and the next group's (at `next`), as
  // two pairs of columns.
  template <typename E>
  static void PairColumns(const E* group, const E* next, BPair& columns01, BPair& columns23) {
    const uint32x4_t x = vreinterpretq_u32_u8(neon_lowp_detail::LoadBytes(group));
    const uint32x4_t y = vreinterpretq_u32_u8(neon_lowp_detail::LoadBytes(next));
    columns01 = std::bit_cast<BPair>(vzip1q_u32(x, y));
    columns23 = std::bit_cast<BPair>(vzip2q_u32(x, y));
  }
  // Rows 0 and 1 of four columns from the 2 x 2 blocks of columns 0-1 and 2-3.
  static void Unpair(Acc first, Acc second, Acc& row0, Acc& row1) {
    const auto x = std::bit_cast<uint64x2_t>(first), y = std::bit_cast<uint64x2_t>(second);
    row0 = std::bit_cast<Acc>(vzip1q_u64(x, y));
    row1 = std::bit_cast<Acc>(vzip2q_u64(x, y));
  }
};

template <class Kind>
struct UsmmlaLowpVec;

template <>
struct UsmmlaLowpVec<S8Gemm>
    : NeonPairedLanes<NeonS8Lanes<UsmmlaLowpVec<S8Gemm>>, uint8x16_t, int8x16_t> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeonDot;
  static Acc BlockDot(Acc acc, APair a, BPair b) { return vusmmlaq_s32(acc, a, b); }
};

template <class Kind>
struct BfmmlaLowpVec;

template <>
struct BfmmlaLowpVec<Bf16Gemm>
    : NeonPairedLanes<NeonBf16Lanes<BfmmlaLowpVec<Bf16Gemm>>, bfloat16x8_t, bfloat16x8_t> {
  static constexpr IsaLevel kIsa = IsaLevel::kNeonBf16;
  static Acc BlockDot(Acc acc, APair a, BPair b) { return vbfmmlaq_f32(acc, a, b); }
};

}  // namespace mmtune::simd
