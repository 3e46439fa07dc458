// bfloat16: the upper half of an IEEE binary32 (8-bit exponent, 7-bit mantissa). The bf16 GEMM
// takes A and B in this format and accumulates in f32; these helpers convert an application's
// f32 data, rounding to nearest with ties to even as the hardware conversions do.
#pragma once

#include <bit>
#include <cstdint>
#include <span>
#include <string>

#include "mmtune/result.h"

namespace mmtune {

// A distinct type (not a bare uint16_t) so that an f32 or integer buffer cannot be passed where
// bf16 data is expected.
struct BFloat16 {
  std::uint16_t bits = 0;
  friend bool operator==(BFloat16, BFloat16) = default;
};
static_assert(sizeof(BFloat16) == 2);

// Round to nearest, ties to even. Overflow becomes +-Inf as in IEEE rounding; a NaN stays a NaN
// (quieted, sign kept) rather than rounding into Inf; subnormals are kept, not flushed.
constexpr BFloat16 ToBFloat16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return BFloat16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return BFloat16{static_cast<std::uint16_t>((bits + rounding) >> 16)};
}

// Exact: every bf16 value is an f32 value.
constexpr float ToFloat(BFloat16 value) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(value.bits) << 16);
}

// Converts a whole buffer; the spans must have the same size (else nothing is written). Inline,
// like the conversions above, so that using them needs no library symbol.
inline Status ToBFloat16(std::span<const float> values, std::span<BFloat16> out) {
  if (values.size() != out.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "conversion of " + std::to_string(values.size()) +
                         " values into a buffer of " + std::to_string(out.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = ToBFloat16(values[i]);
  return OkStatus();
}
inline Status ToFloat(std::span<const BFloat16> values, std::span<float> out) {
  if (values.size() != out.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "conversion of " + std::to_string(values.size()) +
                         " values into a buffer of " + std::to_string(out.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = ToFloat(values[i]);
  return OkStatus();
}

}  // namespace mmtune
