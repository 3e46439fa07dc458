#include "mmtune/types.h"

#include <gtest/gtest.h>

#include <tuple>

namespace mmtune {
namespace {

TEST(ParseShapeTest, AcceptsThreeDimensions) {
  auto shape = ParseShape("128x768x3072");
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_EQ(*shape, (Shape{128, 768, 3072}));
  EXPECT_EQ(*ParseShape("1X2X3"), (Shape{1, 2, 3}));
  EXPECT_EQ(*ParseShape("0x0x0"), (Shape{0, 0, 0}));
  EXPECT_EQ(*ParseShape("2147483647x1x1"), (Shape{2147483647, 1, 1}));
}

TEST(ParseShapeTest, RejectsMalformedText) {
  for (const char* text : {"", "12x", "12x3", "-1x2x3", "axbxc", "1x2x3x4", "x1x2", "1x2x",
                           " 1x2x3", "1x2x3 ", "1.5x2x3", "+1x2x3", "1xx3", "0x1e3x2"}) {
    auto shape = ParseShape(text);
    ASSERT_FALSE(shape.ok()) << "accepted '" << text << "'";
    EXPECT_EQ(shape.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(shape.error().message.find("malformed shape"), std::string::npos)
        << shape.error().message;
    EXPECT_EQ(shape.error().message.find('\n'), std::string::npos);
  }
}

TEST(ParseShapeTest, RejectsOverflow) {
  for (const char* text : {"2147483648x1x1", "1x99999999999999999999x1", "1x1x4294967296"}) {
    auto shape = ParseShape(text);
    ASSERT_FALSE(shape.ok()) << text;
    EXPECT_NE(shape.error().message.find("too large"), std::string::npos)
        << shape.error().message;
  }
}

TEST(DTypeTest, ParsesAndNamesEveryType) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    auto parsed = ParseDType(ToString(dtype));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kF64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kS8), 1u);
  EXPECT_EQ(CTypeSize(DType::kF64), 8u);
  EXPECT_EQ(CTypeSize(DType::kBF16), 4u);  // accumulates in f32
  EXPECT_EQ(CTypeSize(DType::kS8), 4u);    // accumulates in s32
  EXPECT_FALSE(IsLowPrecision(DType::kF32));
  EXPECT_TRUE(IsLowPrecision(DType::kBF16));
  EXPECT_TRUE(IsLowPrecision(DType::kS8));
  auto bad = ParseDType("f16x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("f16x"), std::string::npos);
}

TEST(ProblemTest, ValidatesAndPrints) {
  Problem problem;
  problem.m = 128;
  problem.n = 768;
  problem.k = 3072;
  problem.trans_b = Trans::kYes;
  EXPECT_TRUE(problem.Validate().ok());
  EXPECT_EQ(problem.ToString(), "f32 row NT 128x768x3072 t1");
  EXPECT_DOUBLE_EQ(problem.Flops(), 2.0 * 128 * 768 * 3072);

  Problem negative = problem;
  negative.k = -1;
  EXPECT_FALSE(negative.Validate().ok());
  Problem no_threads = problem;
  no_threads.threads = 0;
  EXPECT_FALSE(no_threads.Validate().ok());

  // A problem called with B packed beforehand is another problem, and says so.
  EXPECT_EQ(problem.form, CallForm::kPlain);
  Problem weights = problem;
  weights.form = CallForm::kPackedB;
  EXPECT_NE(weights, problem);
  EXPECT_TRUE(weights.Validate().ok());
  EXPECT_EQ(weights.ToString(), "f32 row NT 128x768x3072 t1 packed-b");

  // A batch is another problem too, its work every item's; it has no packed-b form.
  Problem batch = problem;
  batch.batch = 64;
  EXPECT_NE(batch, problem);
  EXPECT_TRUE(batch.Validate().ok());
  EXPECT_EQ(batch.ToString(), "f32 row NT 128x768x3072 t1 batch:64");
  EXPECT_DOUBLE_EQ(batch.Flops(), 64.0 * problem.Flops());
  Problem no_items = problem;
  no_items.batch = 0;
  EXPECT_FALSE(no_items.Validate().ok());
  Problem packed_batch = batch;
  packed_batch.form = CallForm::kPackedB;
  EXPECT_FALSE(packed_batch.Validate().ok());
}

TEST(CallFormTest, ParsesAndNamesEveryForm) {
  for (CallForm form : {CallForm::kPlain, CallForm::kPackedB}) {
    auto parsed = ParseCallForm(ToString(form));
    ASSERT_TRUE(parsed.ok()) << ToString(form);
    EXPECT_EQ(*parsed, form);
  }
  auto unknown = ParseCallForm("packed-a");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.error().message.find("packed-a"), std::string::npos);
}

// The DB's name of a call form: plain, packed-b, batch:B; parsed back into the problem.
TEST(CallFormTest, FormNamesRoundTripWithTheBatchCount) {
  Problem problem;
  for (auto [form, batch, name] : {std::tuple{CallForm::kPlain, 1, "plain"},
                                   std::tuple{CallForm::kPackedB, 1, "packed-b"},
                                   std::tuple{CallForm::kPlain, 64, "batch:64"},
                                   std::tuple{CallForm::kPlain, 2, "batch:2"}}) {
    Problem named;
    named.form = form;
    named.batch = batch;
    EXPECT_EQ(FormName(named), name);
    problem.form = CallForm::kPackedB;
    problem.batch = 7;
    ASSERT_TRUE(ParseFormName(name, problem).ok()) << name;
    EXPECT_EQ(problem.form, form) << name;
    EXPECT_EQ(problem.batch, batch) << name;
  }
  for (const char* bad : {"batch:", "batch:1", "batch:0", "batch:-4", "batch:6x", "batch:x",
                          "batch:99999999999999999999", "batch", "packed-a", ""}) {
    Problem untouched;
    const Status parsed = ParseFormName(bad, untouched);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(untouched, Problem{}) << bad;
  }
}

TEST(ResultTest, CarriesValueOrError) {
  Result<int> good = 7;
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 7);
  Result<int> bad = MakeError(ErrorCode::kNotFound, "no such thing");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().ToString(), "not found: no such thing");
  Status status = OkStatus();
  EXPECT_TRUE(status.ok());
}

}  // namespace
}  // namespace mmtune
