// How a bucket shape's confirmation weighs its finalists: the sizes a bucket serves, and the
// share of useful tile work of a config over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/shape_range.h"
#include "db/store.h"
#include "kernels/kernel_config.h"
#include "kernels/microkernel.h"
#include "tuner/bucket_tile_use.h"

namespace mmtune {
namespace {

ShapeRangeRecord Range(const char* text, DType dtype = DType::kF32,
                       Layout layout = Layout::kRowMajor) {
  auto range = ParseShapeRange(text);
  EXPECT_TRUE(range.ok());
  return ShapeRangeRecord{"fp", dtype, layout, Trans::kNo, Trans::kNo, 1, *range, BucketPolicy{},
                          ""};
}

KernelConfig Tile(KernelFamily family, int mr, int nr) {
  KernelConfig config;
  config.family = family;
  config.isa = IsaLevel::kAvx2;
  config.mr = mr;
  config.nr = nr;
  return config;
}

// The exact mean of size / (size rounded up to the tile) over [lo, hi].
double ExactMeanUse(std::int64_t lo, std::int64_t hi, int tile) {
  double sum = 0.0;
  for (std::int64_t size = lo; size <= hi; ++size) {
    sum += static_cast<double>(size) / static_cast<double>((size + tile - 1) / tile * tile);
  }
  return sum / static_cast<double>(hi - lo + 1);
}

TEST(BucketTileUseTest, OnlyABucketShapeOfItsOwnKindServesOtherSizes) {
  const std::vector<ShapeRangeRecord> ranges = {Range("1..2048x768x3072")};
  const ShapeRangeRecord& range = ranges.front();
  auto served = SizesServedByProblem(range.ProblemOf({16, 768, 3072}), ranges);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->m, (DimRange{9, 16}));
  EXPECT_EQ(served->n, (DimRange{768, 768}));
  served = SizesServedByProblem(range.ProblemOf({1, 768, 3072}), ranges);
  ASSERT_TRUE(served.has_value());
  EXPECT_EQ(served->m, (DimRange{1, 1}));

  EXPECT_FALSE(SizesServedByProblem(range.ProblemOf({14, 768, 3072}), ranges));  // no bucket
  EXPECT_FALSE(SizesServedByProblem(range.ProblemOf({16, 768, 3072}), {}));
  Problem other = range.ProblemOf({16, 768, 3072});
  other.dtype = DType::kBF16;
  EXPECT_FALSE(SizesServedByProblem(other, ranges));
  other = range.ProblemOf({16, 768, 3072});
  other.threads = 2;
  EXPECT_FALSE(SizesServedByProblem(other, ranges));
  other = range.ProblemOf({16, 768, 3072});
  other.layout = Layout::kColMajor;
  EXPECT_FALSE(SizesServedByProblem(other, ranges));
}

// Tiles as narrow as the arithmetic needs, registered or not.
TEST(BucketTileUseTest, PaddedTilesLoseTheColumnsTheyComputeInVain) {
  const ShapeRangeRecord range = Range("768x1..2048x3072");
  const Problem bucket = range.ProblemOf({768, 16, 3072});
  const ServedSizes sizes{{768, 768}, {9, 16}};
  // 9..16 columns in 4-column tiles compute 12, 12, 12, 12, 16, 16, 16, 16 columns; in 2-column
  // tiles 10, 10, 12, 12, 14, 14, 16, 16.
  const double four = ServedTileUse(Tile(KernelFamily::kPacked, 6, 4), bucket, sizes);
  const double two = ServedTileUse(Tile(KernelFamily::kPacked, 6, 2), bucket, sizes);
  const double four_columns =
      9.0 / 12 + 10.0 / 12 + 11.0 / 12 + 1 + 13.0 / 16 + 14.0 / 16 + 15.0 / 16;
  EXPECT_NEAR(four, (four_columns + 1) / 8, 1e-12);
  EXPECT_NEAR(two, ExactMeanUse(9, 16, 2), 1e-12);
  EXPECT_GT(two, four);
  // Relative to the bucket shape's own fit: 6-column tiles already waste 2 of 18 columns on 16.
  const double six = ServedTileUse(Tile(KernelFamily::kPacked, 4, 6), bucket, sizes);
  EXPECT_NEAR(six, ExactMeanUse(9, 16, 6) / (16.0 / 18), 1e-12);
  // A size the bucket serves alone: every config fits it as well as the bucket shape.
  EXPECT_DOUBLE_EQ(ServedTileUse(Tile(KernelFamily::kPacked, 6, 4), range.ProblemOf({768, 1, 3072}),
                                 ServedSizes{{768, 768}, {1, 1}}),
                   1.0);
}

// The packed family runs a vector kernel's partial row panel in the kernel of its rows: rows
// waste nothing; AMX tile kernels pad theirs (x86 builds, which list them).
TEST(BucketTileUseTest, PackedVectorTilesRunPartialRowsInKernelsOfTheirRows) {
  const ShapeRangeRecord range = Range("1..2048x768x3072");
  const Problem bucket = range.ProblemOf({16, 768, 3072});
  EXPECT_DOUBLE_EQ(
      ServedTileUse(Tile(KernelFamily::kPacked, 6, 16), bucket, ServedSizes{{9, 16}, {768, 768}}),
      1.0);
  if (!BuildHasKernels(IsaLevel::kAvx512)) GTEST_SKIP() << "no AVX-512 kernels in this build";
  const ShapeRangeRecord bf16_range = Range("1..2048x768x3072", DType::kBF16);
  const Problem bf16_bucket = bf16_range.ProblemOf({32, 768, 3072});
  const ServedSizes sizes{{17, 32}, {768, 768}};
  KernelConfig amx = Tile(KernelFamily::kPacked, 32, 32);  // 2 x 2 tiles of 16 x 16
  amx.isa = IsaLevel::kAvx512;
  EXPECT_NEAR(ServedTileUse(amx, bf16_bucket, sizes), ExactMeanUse(17, 32, 32), 1e-12);
  KernelConfig vector = amx;
  vector.mr = 8;
  EXPECT_DOUBLE_EQ(ServedTileUse(vector, bf16_bucket, sizes), 1.0);
}

TEST(BucketTileUseTest, KernelsOfThePartialTilesSizeWasteNothing) {
  const Problem bucket{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 16, 768, 3072, 1};
  const ServedSizes sizes{{9, 16}, {768, 768}};
  EXPECT_DOUBLE_EQ(ServedTileUse(Tile(KernelFamily::kDirect, 4, 16), bucket, sizes), 1.0);
  EXPECT_DOUBLE_EQ(ServedTileUse(Tile(KernelFamily::kGemv, 4, 16), bucket, sizes), 1.0);
  // Low-precision direct tiles are padded.
  Problem bf16 = bucket;
  bf16.dtype = DType::kBF16;
  EXPECT_NEAR(ServedTileUse(Tile(KernelFamily::kDirect, 4, 16), bf16, sizes),
              ExactMeanUse(9, 16, 4), 1e-12);
}

// A column-major problem runs as its row-major transpose: its M sizes meet the tile's columns.
TEST(BucketTileUseTest, AColumnMajorProblemsRowsAreItsColumns) {
  const ShapeRangeRecord range = Range("1..2048x768x3072", DType::kF32, Layout::kColMajor);
  const Problem bucket = range.ProblemOf({16, 768, 3072});
  const ServedSizes sizes{{9, 16}, {768, 768}};
  EXPECT_NEAR(ServedTileUse(Tile(KernelFamily::kPacked, 4, 16), bucket, sizes),
              ExactMeanUse(9, 16, 16), 1e-12);
}

// A long bucket is averaged over a sample of its sizes, close to the exact mean.
TEST(BucketTileUseTest, LongBucketsAreAveragedCloseToExactly) {
  const ShapeRangeRecord range = Range("768x1..2048x3072");
  const Problem bucket = range.ProblemOf({768, 2048, 3072});
  const ServedSizes sizes{{768, 768}, {1025, 2048}};
  const KernelConfig config = Tile(KernelFamily::kPacked, 6, 24);
  EXPECT_NEAR(ServedTileUse(config, bucket, sizes),
              ExactMeanUse(1025, 2048, 24) / (2048.0 / 2064), 0.002);
}

}  // namespace
}  // namespace mmtune
