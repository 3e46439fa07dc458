// f32 -> bf16 conversion: round to nearest even, overflow, NaN, subnormals, signed zero; and the
// exact way back.
#include "mmtune/bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace mmtune {
namespace {

float FromBits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(BFloat16Test, RoundsToNearestWithTiesToEven) {
  // 1.0 is 0x3f800000; the bf16 step above it is 0x00010000 in f32 bits.
  EXPECT_EQ(ToBFloat16(FromBits(0x3f800000)).bits, 0x3f80);
  EXPECT_EQ(ToBFloat16(FromBits(0x3f807fff)).bits, 0x3f80);  // below half: down
  EXPECT_EQ(ToBFloat16(FromBits(0x3f808000)).bits, 0x3f80);  // tie, even below: down
  EXPECT_EQ(ToBFloat16(FromBits(0x3f808001)).bits, 0x3f81);  // above half: up
  EXPECT_EQ(ToBFloat16(FromBits(0x3f818000)).bits, 0x3f82);  // tie, odd below: up to even
  EXPECT_EQ(ToBFloat16(FromBits(0xbf818000)).bits, 0xbf82);  // the sign does not matter
}

TEST(BFloat16Test, SpecialValues) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ToBFloat16(kInf).bits, 0x7f80);
  EXPECT_EQ(ToBFloat16(-kInf).bits, 0xff80);
  EXPECT_EQ(ToBFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds to Inf
  EXPECT_EQ(ToBFloat16(FromBits(0x7f7f7fff)).bits, 0x7f7f);  // largest that stays finite
  EXPECT_EQ(ToBFloat16(0.0f).bits, 0x0000);
  EXPECT_EQ(ToBFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(ToBFloat16(FromBits(0x00010000)).bits, 0x0001);  // subnormal kept, not flushed
  // A NaN whose payload lies only in the dropped bits must not become Inf.
  const BFloat16 nan = ToBFloat16(FromBits(0x7f800001));
  EXPECT_TRUE(std::isnan(ToFloat(nan)));
  EXPECT_TRUE(std::isnan(ToFloat(ToBFloat16(FromBits(0xffc00000)))));
  EXPECT_EQ(ToBFloat16(FromBits(0xffc00000)).bits & 0x8000, 0x8000);
}

TEST(BFloat16Test, EveryBf16SurvivesTheRoundTrip) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const BFloat16 value{static_cast<std::uint16_t>(bits)};
    const float wide = ToFloat(value);
    if (std::isnan(wide)) continue;
    ASSERT_EQ(ToBFloat16(wide).bits, value.bits) << bits;
  }
}

TEST(BFloat16Test, BufferConversionChecksSizes) {
  const std::vector<float> in = {1.0f, -2.5f, 3.14159f};
  std::vector<BFloat16> out(3);
  ASSERT_TRUE(ToBFloat16(in, out).ok());
  EXPECT_EQ(out[0].bits, 0x3f80);
  EXPECT_EQ(ToFloat(out[1]), -2.5f);
  EXPECT_NEAR(ToFloat(out[2]), 3.14159f, 0.01f);
  std::vector<float> back(3);
  ASSERT_TRUE(ToFloat(out, back).ok());
  EXPECT_EQ(back[1], -2.5f);
  std::vector<BFloat16> short_out(2, BFloat16{0x1234});
  EXPECT_FALSE(ToBFloat16(in, short_out).ok());
  EXPECT_EQ(short_out[0].bits, 0x1234);  // nothing written
}

}  // namespace
}  // namespace mmtune
