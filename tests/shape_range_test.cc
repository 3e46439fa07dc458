// Shape ranges and bucket policies: parsing with one-line errors, the buckets of each policy at
// and between the range ends, and the bucket a problem inside a range maps to.
#include "common/shape_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace mmtune {
namespace {

TEST(ShapeRangeTest, ParsesSizesAndRanges) {
  auto range = ParseShapeRange("1..2048x4096x11008");
  ASSERT_TRUE(range.ok()) << range.error().message;
  EXPECT_EQ(range->m, (DimRange{1, 2048}));
  EXPECT_EQ(range->n, (DimRange{4096, 4096}));
  EXPECT_EQ(range->k, (DimRange{11008, 11008}));
  EXPECT_FALSE(range->IsSingleShape());
  EXPECT_EQ(range->ToString(), "1..2048x4096x11008");

  auto every = ParseShapeRange("8..64X1..2x100..100");
  ASSERT_TRUE(every.ok()) << every.error().message;
  EXPECT_EQ(every->ToString(), "8..64x1..2x100");
  auto single = ParseShapeRange("128x768x768");
  ASSERT_TRUE(single.ok());
  EXPECT_TRUE(single->IsSingleShape());
  EXPECT_EQ(single->ToString(), "128x768x768");
}

TEST(ShapeRangeTest, BadRangesAreOneLineErrorsThatQuoteTheText) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {Case{"0..64x64x64", "includes 0"}, Case{"64x0x64", "N is 0"},
                        Case{"64..8x64x64", "is empty"}, Case{"1..x64x64", "empty dimension"},
                        Case{"..8x64x64", "empty dimension"}, Case{"1...8x64x64", "not a non"},
                        Case{"1..8..9x64x64", "not a non"}, Case{"1..99999999999x64x64",
                                                                 "too large"},
                        Case{"1..2147483648x64x64", "too large"}, Case{"1..8x64", "three"},
                        Case{"-1..8x64x64", "not a non"}, Case{"1..8x64x64x", "not a non"},
                        Case{"", "three"}}) {
    SCOPED_TRACE(c.text);
    auto range = ParseShapeRange(c.text);
    ASSERT_FALSE(range.ok());
    EXPECT_EQ(range.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(range.error().message.find(c.says), std::string::npos) << range.error().message;
    EXPECT_NE(range.error().message.find("'" + std::string(c.text) + "'"), std::string::npos)
        << range.error().message;
    EXPECT_EQ(range.error().message.find('\n'), std::string::npos);
  }
  auto largest = ParseShapeRange("1..2147483647x1x1");
  ASSERT_TRUE(largest.ok()) << largest.error().message;
}

TEST(ShapeRangeTest, BucketPolicies) {
  auto pow2 = ParseBucketPolicy("pow2");
  ASSERT_TRUE(pow2.ok());
  EXPECT_EQ(pow2->kind, BucketPolicy::Kind::kPow2);
  EXPECT_EQ(pow2->ToString(), "pow2");
  auto step = ParseBucketPolicy("step:64");
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->kind, BucketPolicy::Kind::kStep);
  EXPECT_EQ(step->step, 64);
  EXPECT_EQ(step->ToString(), "step:64");
  for (const char* bad : {"", "pow3", "step:", "step:0", "step:-4", "step:4x", "step:99999999999",
                          "Pow2", "step 64"}) {
    auto policy = ParseBucketPolicy(bad);
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_NE(policy.error().message.find("'" + std::string(bad) + "'"), std::string::npos);
  }
}

TEST(ShapeRangeTest, BucketsAreTheEndsAndThePolicysSizesBetween) {
  const BucketPolicy pow2;
  const BucketPolicy step{BucketPolicy::Kind::kStep, 64};
  using Sizes = std::vector<std::int64_t>;
  EXPECT_EQ(BucketsOf({1, 2048}, pow2),
            (Sizes{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}));
  EXPECT_EQ(BucketsOf({3, 20}, pow2), (Sizes{3, 4, 8, 16, 20}));
  EXPECT_EQ(BucketsOf({4, 4}, pow2), (Sizes{4}));
  EXPECT_EQ(BucketsOf({5, 6}, pow2), (Sizes{5, 6}));
  EXPECT_EQ(BucketsOf({1, 200}, step), (Sizes{1, 64, 128, 192, 200}));
  EXPECT_EQ(BucketsOf({64, 192}, step), (Sizes{64, 128, 192}));
  EXPECT_EQ(BucketsOf({2147483000, 2147483647}, pow2), (Sizes{2147483000, 2147483647}));
}

TEST(ShapeRangeTest, BucketShapesCoverEveryCombinationAndRefuseHugeSets) {
  auto range = ParseShapeRange("1..4x8x16..32");
  ASSERT_TRUE(range.ok());
  auto shapes = BucketShapes(*range, BucketPolicy{});
  ASSERT_TRUE(shapes.ok()) << shapes.error().message;
  ASSERT_EQ(shapes->size(), 3u * 2u);  // M 1, 2, 4; K 16, 32
  EXPECT_EQ(shapes->front(), (Shape{1, 8, 16}));
  EXPECT_EQ(shapes->back(), (Shape{4, 8, 32}));
  for (const Shape& shape : *shapes) EXPECT_TRUE(range->Contains(shape));

  auto huge = ParseShapeRange("1..100000x64x64");
  ASSERT_TRUE(huge.ok());
  auto too_many = BucketShapes(*huge, BucketPolicy{BucketPolicy::Kind::kStep, 1});
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("100000 x 1 x 1"), std::string::npos)
      << too_many.error().message;
  EXPECT_TRUE(BucketShapes(*huge, BucketPolicy{}).ok());
}

TEST(ShapeRangeTest, AProblemMapsToTheSmallestBucketAtLeastAsLarge) {
  auto range = ParseShapeRange("1..2048x4096x100..300");
  ASSERT_TRUE(range.ok());
  const BucketPolicy pow2;
  EXPECT_EQ(BucketShapeOf({1, 4096, 100}, *range, pow2), (Shape{1, 4096, 100}));
  EXPECT_EQ(BucketShapeOf({2, 4096, 101}, *range, pow2), (Shape{2, 4096, 128}));
  EXPECT_EQ(BucketShapeOf({3, 4096, 128}, *range, pow2), (Shape{4, 4096, 128}));
  EXPECT_EQ(BucketShapeOf({65, 4096, 129}, *range, pow2), (Shape{128, 4096, 256}));
  EXPECT_EQ(BucketShapeOf({1025, 4096, 257}, *range, pow2), (Shape{2048, 4096, 300}));
  EXPECT_EQ(BucketShapeOf({2048, 4096, 300}, *range, pow2), (Shape{2048, 4096, 300}));
  const BucketPolicy step{BucketPolicy::Kind::kStep, 64};
  EXPECT_EQ(BucketShapeOf({64, 4096, 100}, *range, step), (Shape{64, 4096, 100}));
  EXPECT_EQ(BucketShapeOf({65, 4096, 101}, *range, step), (Shape{128, 4096, 128}));
  EXPECT_EQ(BucketShapeOf({2000, 4096, 299}, *range, step), (Shape{2048, 4096, 300}));
  // Every bucket maps to itself, and every size to a bucket of the range.
  for (const BucketPolicy& policy : {pow2, step}) {
    const std::vector<std::int64_t> buckets = BucketsOf(range->m, policy);
    for (std::int64_t m = 1; m <= 2048; ++m) {
      const std::int64_t bucket = BucketShapeOf({m, 4096, 100}, *range, policy).m;
      ASSERT_GE(bucket, m);
      ASSERT_NE(std::find(buckets.begin(), buckets.end(), bucket), buckets.end()) << m;
    }
    for (std::int64_t b : buckets) EXPECT_EQ(BucketShapeOf({b, 4096, 100}, *range, policy).m, b);
  }
  EXPECT_TRUE(range->Contains({2048, 4096, 300}));
  EXPECT_FALSE(range->Contains({2049, 4096, 300}));
  EXPECT_FALSE(range->Contains({1, 4095, 300}));
  EXPECT_FALSE(range->Contains({1, 4096, 99}));
}

// The sizes a bucket's winner serves are exactly those that map to the bucket.
TEST(ShapeRangeTest, EachBucketServesTheSizesThatMapToIt) {
  auto range = ParseShapeRange("1..2048x4096x100..300");
  ASSERT_TRUE(range.ok());
  const BucketPolicy pow2;
  EXPECT_EQ(SizesServedBy(1, range->m, pow2), (DimRange{1, 1}));
  EXPECT_EQ(SizesServedBy(2, range->m, pow2), (DimRange{2, 2}));
  EXPECT_EQ(SizesServedBy(16, range->m, pow2), (DimRange{9, 16}));
  EXPECT_EQ(SizesServedBy(100, range->k, pow2), (DimRange{100, 100}));
  EXPECT_EQ(SizesServedBy(128, range->k, pow2), (DimRange{101, 128}));
  EXPECT_EQ(SizesServedBy(300, range->k, pow2), (DimRange{257, 300}));
  const BucketPolicy step{BucketPolicy::Kind::kStep, 64};
  EXPECT_EQ(SizesServedBy(64, range->m, step), (DimRange{2, 64}));
  EXPECT_EQ(SizesServedBy(2048, range->m, step), (DimRange{1985, 2048}));
  for (const BucketPolicy& policy : {pow2, step}) {
    for (const DimRange& dim : {range->m, range->k}) {
      for (std::int64_t size = dim.lo; size <= dim.hi; ++size) {
        const Shape shape{dim == range->m ? size : 1, 4096, dim == range->k ? size : 100};
        const Shape bucket = BucketShapeOf(shape, *range, policy);
        const DimRange served = dim == range->m ? SizesServedBy(bucket.m, dim, policy)
                                                : SizesServedBy(bucket.k, dim, policy);
        ASSERT_LE(served.lo, size) << policy.ToString();
        ASSERT_GE(served.hi, size) << policy.ToString();
      }
    }
  }
}

}  // namespace
}  // namespace mmtune
