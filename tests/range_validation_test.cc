// `tune --validate N`: drawing held-out shapes inside a range, measuring one against its bucket's
// winner, validating every range of a tune into the DB, and the geometric means of the result.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <set>
#include <tuple>

#include "db/store.h"
#include "db/validation_summary.h"
#include "tuner/range_validation.h"
#include "tuner/tune_session.h"

namespace mmtune {
namespace {

Machine Host() {
  auto host = DetectHostMachine();
  EXPECT_TRUE(host.ok());
  return *host;
}

ShapeRange Range(const std::string& text) {
  auto range = ParseShapeRange(text);
  EXPECT_TRUE(range.ok()) << text;
  return *range;
}

BucketPolicy Pow2() { return *ParseBucketPolicy("pow2"); }

// A quick tune: few candidates, short samples.
TuneRequest QuickRequest() {
  TuneRequest request;
  request.strategy = "exhaustive";
  request.budget_seconds = 0.0;
  request.max_evals = 3;
  request.warm_up_seconds = 0.0;
  request.measure.min_sample_seconds = 0.0002;
  request.measure.confirm_min_sample_seconds = 0.0002;
  return request;
}

std::tuple<std::int64_t, std::int64_t, std::int64_t> Key(const Shape& s) { return {s.m, s.n, s.k}; }

TEST(HeldOutShapesTest, InsideTheRangeDistinctSortedAndNeverABucketOrExcluded) {
  const ShapeRange range = Range("1..2048x64x16..256");
  const std::vector<Shape> exclude = {{3, 64, 100}, {5, 64, 17}};
  const auto shapes = HeldOutShapes(range, Pow2(), 40, 7, exclude);
  ASSERT_EQ(shapes.size(), 40u);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> taken;
  const auto buckets = BucketShapes(range, Pow2());
  ASSERT_TRUE(buckets.ok());
  for (const Shape& bucket : *buckets) taken.insert(Key(bucket));
  for (const Shape& shape : exclude) taken.insert(Key(shape));
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  for (const Shape& shape : shapes) {
    EXPECT_TRUE(range.Contains(shape)) << shape.m << "x" << shape.n << "x" << shape.k;
    EXPECT_EQ(taken.count(Key(shape)), 0u) << shape.m << "x" << shape.n << "x" << shape.k;
    EXPECT_TRUE(seen.insert(Key(shape)).second);
  }
  EXPECT_TRUE(std::is_sorted(shapes.begin(), shapes.end(), [](const Shape& a, const Shape& b) {
    return Key(a) < Key(b);
  }));
  // Log-uniform: about as many draws below M = 45 (the geometric middle of 1..2048) as above.
  const auto small = std::count_if(shapes.begin(), shapes.end(),
                                   [](const Shape& s) { return s.m < 45; });
  EXPECT_GT(small, 8);
  EXPECT_LT(small, 32);
}

TEST(HeldOutShapesTest, TheSameSeedDrawsTheSameShapesAndAnotherSeedOthers) {
  const ShapeRange range = Range("1..2048x4096x4096");
  const auto a = HeldOutShapes(range, Pow2(), 6, 1);
  const auto b = HeldOutShapes(range, Pow2(), 6, 1);
  const auto c = HeldOutShapes(range, Pow2(), 6, 2);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(),
                         [](const Shape& x, const Shape& y) { return Key(x) == Key(y); }));
  EXPECT_FALSE(std::equal(a.begin(), a.end(), c.begin(),
                          [](const Shape& x, const Shape& y) { return Key(x) == Key(y); }));
}

TEST(HeldOutShapesTest, ASmallRangeGivesWhatItHasAndNoneForNothingAsked) {
  // 1..4 with pow2 buckets 1, 2, 4 leaves only M = 3.
  const auto shapes = HeldOutShapes(Range("1..4x8x8"), Pow2(), 5, 1);
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(Key(shapes[0]), Key(Shape{3, 8, 8}));
  EXPECT_TRUE(HeldOutShapes(Range("1..4x8x8"), Pow2(), 5, 1, {{3, 8, 8}}).empty());
  EXPECT_TRUE(HeldOutShapes(Range("1..2048x8x8"), Pow2(), 0, 1).empty());
}

RangeValidationRecord Row(double own, double runtime, double nearest, double fallback,
                          double seconds = 1.0, double padded = 0.0) {
  RangeValidationRecord r;
  r.padded_gflops = padded;
  r.own_gflops = own;
  r.runtime_gflops = runtime;
  r.nearest_gflops = nearest;
  r.default_gflops = fallback;
  r.own_tune_seconds = seconds;
  return r;
}

TEST(ValidationSummaryTest, GeometricMeansOfTheRatiosToTheOwnWinner) {
  const ValidationSummary s = SummarizeValidations(
      {Row(100, 50, 100, 25, 1.0, 60), Row(10, 20, 10, 10, 3.0, 19), Row(0, 1, 1, 1, 50.0)});
  EXPECT_EQ(s.shapes, 2u);  // the row without its own speed carries no ratio
  EXPECT_DOUBLE_EQ(s.runtime_vs_own, 1.0);               // sqrt(0.5 * 2)
  EXPECT_DOUBLE_EQ(s.nearest_vs_own, 1.0);
  EXPECT_NEAR(s.default_vs_own, std::sqrt(0.25), 1e-12);  // sqrt(0.25 * 1)
  EXPECT_DOUBLE_EQ(s.own_tune_seconds, 2.0);
  EXPECT_EQ(s.padded_measured, 2u);
  EXPECT_EQ(s.padding_pays, 1u);  // 60 > 50; 19 < 20
  EXPECT_EQ(SummarizeValidations({}).shapes, 0u);
  EXPECT_EQ(SummarizeValidations({}).runtime_vs_own, 0.0);
}

struct TunedRange {
  Machine machine;
  TuningStore store;
  std::int64_t machine_id;
  ShapeRangeRecord range;
};

// Tunes the pow2 buckets of `text` (f32, one thread) into an in-memory DB that records the range.
TunedRange TuneRange(const std::string& text) {
  const Machine machine = Host();
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  EXPECT_TRUE(store.ok());
  auto machine_id = store->UpsertMachine(machine, nullptr);
  EXPECT_TRUE(machine_id.ok());
  const ShapeRangeRecord range{machine.fingerprint, DType::kF32, Layout::kRowMajor, Trans::kNo,
                               Trans::kNo, 1, Range(text), Pow2(), ""};
  EXPECT_TRUE(store->RecordShapeRange(*machine_id, range).ok());
  TuneRequest request = QuickRequest();
  const auto buckets = BucketShapes(range.range, range.buckets);
  EXPECT_TRUE(buckets.ok());
  for (const Shape& shape : *buckets) {
    request.problems.push_back(range.ProblemOf(shape));
  }
  auto tuned = RunTuning(*store, *machine_id, machine, request, DefaultThreadPool(), {});
  EXPECT_TRUE(tuned.ok());
  return TunedRange{machine, std::move(*store), *machine_id, range};
}

TEST(RangeValidationTest, AHeldOutShapeIsTimedBesideItsBucketsWinner) {
  TunedRange tuned = TuneRange("1..16x32x24");
  auto winners = tuned.store.Winners(tuned.machine.fingerprint);
  ASSERT_TRUE(winners.ok());
  ASSERT_EQ(winners->size(), 5u);  // buckets 1, 2, 4, 8, 16
  auto record = ValidateHeldOutShape(tuned.range, Shape{11, 32, 24}, *winners, {tuned.range},
                                     tuned.machine, QuickRequest(), DefaultThreadPool());
  ASSERT_TRUE(record.ok()) << record.error().message;
  EXPECT_EQ(record->runtime_tier, "bucket");
  EXPECT_EQ(Key(record->shape), Key(Shape{11, 32, 24}));
  EXPECT_EQ(record->range.range, tuned.range.range);
  for (double gflops : {record->own_gflops, record->runtime_gflops, record->nearest_gflops,
                        record->default_gflops}) {
    EXPECT_GT(gflops, 0.0);
    EXPECT_TRUE(std::isfinite(gflops));
  }
  EXPECT_GT(record->own_tune_seconds, 0.0);
  EXPECT_GT(record->padded_gflops, 0.0) << "the bucket's winner on the bucket shape";
  EXPECT_TRUE(std::isfinite(record->padded_gflops));
  // Its own tune went to a private DB: the shape did not become a winner.
  auto after = tuned.store.Winners(tuned.machine.fingerprint);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 5u);

  // Without the range the runtime has only the nearest tier to offer.
  auto nearest = ValidateHeldOutShape(tuned.range, Shape{11, 32, 24}, *winners, {},
                                      tuned.machine, QuickRequest(), DefaultThreadPool());
  ASSERT_TRUE(nearest.ok());
  EXPECT_EQ(nearest->runtime_tier, "nearest");
  EXPECT_EQ(nearest->padded_gflops, 0.0) << "no bucket to pad to";

  auto outside = ValidateHeldOutShape(tuned.range, Shape{17, 32, 24}, *winners, {tuned.range},
                                      tuned.machine, QuickRequest(), DefaultThreadPool());
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code, ErrorCode::kInvalidArgument);
}

TEST(RangeValidationTest, ValidatesEveryRangeIntoTheDbAndSkipsTunedShapes) {
  TunedRange tuned = TuneRange("1..16x32x24");
  // M = 3 tuned as well: the exact tier answers for it, so it is not held out.
  TuneRequest extra = QuickRequest();
  extra.problems = {tuned.range.ProblemOf(Shape{3, 32, 24})};
  ASSERT_TRUE(
      RunTuning(tuned.store, tuned.machine_id, tuned.machine, extra, DefaultThreadPool(), {}).ok());
  const ShapeRangeRecord single{tuned.machine.fingerprint, DType::kF32, Layout::kRowMajor,
                                Trans::kNo, Trans::kNo, 1, Range("8x32x24"), Pow2(), ""};
  std::vector<std::size_t> seen;
  auto records = ValidateRanges(
      tuned.store, tuned.machine_id, 0, tuned.machine, {tuned.range, single}, 4, QuickRequest(),
      DefaultThreadPool(), [&](const RangeValidationRecord&, std::size_t index, std::size_t total) {
        EXPECT_EQ(total, 4u);
        seen.push_back(index);
      });
  ASSERT_TRUE(records.ok()) << records.error().message;
  ASSERT_EQ(records->size(), 4u);  // the single shape has nothing to hold out
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2, 3}));
  for (const RangeValidationRecord& r : *records) {
    EXPECT_NE(r.shape.m, 3);
    EXPECT_NE(r.shape.m & (r.shape.m - 1), 0) << "bucket " << r.shape.m << " held out";
    EXPECT_EQ(r.runtime_tier, "bucket");
  }
  auto stored = tuned.store.RangeValidations(tuned.machine.fingerprint);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 4u);
  for (std::size_t i = 0; i < stored->size(); ++i) {
    EXPECT_EQ(Key((*stored)[i].shape), Key((*records)[i].shape));
    EXPECT_DOUBLE_EQ((*stored)[i].own_gflops, (*records)[i].own_gflops);
  }
}

TEST(RangeValidationTest, AStopBeforeTheFirstShapeMeasuresNothing) {
  TunedRange tuned = TuneRange("1..4x32x24");
  std::atomic<bool> stop{true};
  auto records = ValidateRanges(tuned.store, tuned.machine_id, 0, tuned.machine, {tuned.range},
                                2, QuickRequest(), DefaultThreadPool(), {}, &stop);
  ASSERT_TRUE(records.ok());
  EXPECT_TRUE(records->empty());
  auto stored = tuned.store.RangeValidations("");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(stored->empty());
}

}  // namespace
}  // namespace mmtune
