// The oracle is checked against products computed by hand, in every layout and transpose, so
// that it can judge the kernels.
#include "kernels/reference_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

using Matrix = std::vector<std::vector<double>>;  // logical rows

// A = [1 2 3; 4 5 6], B = [7 8; 9 10; 11 12], A*B = [58 64; 139 154].
const Matrix kA = {{1, 2, 3}, {4, 5, 6}};
const Matrix kB = {{7, 8}, {9, 10}, {11, 12}};
const Matrix kProduct = {{58, 64}, {139, 154}};

constexpr double kCanary = -777.0;

// Stores the logical matrix `op_value` so that op(stored) == op_value, with leading dimension
// `ld` and every padding element set to `kCanary`.
template <typename T>
std::vector<T> Store(const Matrix& op_value, Layout layout, Trans trans, std::int64_t ld) {
  const std::int64_t rows = static_cast<std::int64_t>(op_value.size());
  const std::int64_t cols = static_cast<std::int64_t>(op_value[0].size());
  const std::int64_t stored_rows = trans == Trans::kYes ? cols : rows;
  const std::int64_t stored_cols = trans == Trans::kYes ? rows : cols;
  const std::int64_t outer = layout == Layout::kRowMajor ? stored_rows : stored_cols;
  std::vector<T> data(static_cast<std::size_t>(outer * ld), static_cast<T>(kCanary));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      const std::int64_t offset = trans == Trans::kYes ? StoredOffset(layout, j, i, ld)
                                                       : StoredOffset(layout, i, j, ld);
      data[static_cast<std::size_t>(offset)] = static_cast<T>(op_value[i][j]);
    }
  }
  return data;
}

template <typename T>
class ReferenceGemmTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReferenceGemmTest, ElementTypes);

TYPED_TEST(ReferenceGemmTest, HandComputedProductInEveryLayoutAndTranspose) {
  using T = TypeParam;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        SCOPED_TRACE(std::string(ToString(layout)) + " " + TransPairToString(ta, tb));
        // Leading dimensions one larger than needed, so padding is exercised everywhere.
        const std::int64_t lda = MinLeadingDimension(layout, ta, 2, 3) + 1;
        const std::int64_t ldb = MinLeadingDimension(layout, tb, 3, 2) + 1;
        const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, 2, 2) + 1;
        auto a = Store<T>(kA, layout, ta, lda);
        auto b = Store<T>(kB, layout, tb, ldb);
        auto c = Store<T>({{1, 1}, {1, 1}}, layout, Trans::kNo, ldc);
        ASSERT_TRUE(ReferenceGemm<T>(layout, ta, tb, 2, 2, 3, T(2), a.data(), lda, b.data(), ldb,
                                     T(-1), c.data(), ldc)
                        .ok());
        for (int i = 0; i < 2; ++i) {
          for (int j = 0; j < 2; ++j) {
            EXPECT_EQ(c[static_cast<std::size_t>(StoredOffset(layout, i, j, ldc))],
                      T(2 * kProduct[i][j] - 1))
                << "C(" << i << "," << j << ")";
          }
        }
        // Padding of C is untouched.
        std::size_t canaries = 0;
        for (T value : c) canaries += value == T(kCanary);
        EXPECT_EQ(canaries, c.size() - 4);
      }
    }
  }
}

TYPED_TEST(ReferenceGemmTest, BetaZeroNeverReadsC) {
  using T = TypeParam;
  auto a = Store<T>(kA, Layout::kRowMajor, Trans::kNo, 3);
  auto b = Store<T>(kB, Layout::kRowMajor, Trans::kNo, 2);
  std::vector<T> c = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  ASSERT_TRUE(ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 3, T(1),
                               a.data(), 3, b.data(), 2, T(0), c.data(), 2)
                  .ok());
  EXPECT_EQ(c, (std::vector<T>{58, 64, 139, 154}));
}

TYPED_TEST(ReferenceGemmTest, AlphaZeroOrKZeroOnlyScalesC) {
  using T = TypeParam;
  // alpha = 0: A and B are not referenced, so NaN there does not matter.
  std::vector<T> nan_a(6, std::numeric_limits<T>::quiet_NaN());
  std::vector<T> nan_b(6, std::numeric_limits<T>::quiet_NaN());
  std::vector<T> c = {1, 2, 3, 4};
  ASSERT_TRUE(ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 3, T(0),
                               nan_a.data(), 3, nan_b.data(), 2, T(3), c.data(), 2)
                  .ok());
  EXPECT_EQ(c, (std::vector<T>{3, 6, 9, 12}));

  // K = 0 with beta = 0 zeroes C, even where it held NaN.
  c = {std::numeric_limits<T>::quiet_NaN(), 2, 3, 4};
  ASSERT_TRUE(ReferenceGemm<T>(Layout::kColMajor, Trans::kNo, Trans::kNo, 2, 2, 0, T(1),
                               nullptr, 2, nullptr, 1, T(0), c.data(), 2)
                  .ok());
  EXPECT_EQ(c, (std::vector<T>{0, 0, 0, 0}));
}

TYPED_TEST(ReferenceGemmTest, EmptyOutputTouchesNothing) {
  using T = TypeParam;
  std::vector<T> c = {5, 6};
  ASSERT_TRUE(ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 0, 2, 3, T(1),
                               nullptr, 3, nullptr, 2, T(0), c.data(), 2)
                  .ok());
  ASSERT_TRUE(ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 0, 3, T(1),
                               nullptr, 3, nullptr, 1, T(0), c.data(), 1)
                  .ok());
  EXPECT_EQ(c, (std::vector<T>{5, 6}));
}

TYPED_TEST(ReferenceGemmTest, RejectsInvalidArgumentsWithoutTouchingC) {
  using T = TypeParam;
  std::vector<T> a(6, 1), b(6, 1), c(4, 9);
  // Row-major A (2x3, not transposed) needs lda >= 3.
  auto status = ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 3, T(1),
                                 a.data(), 2, b.data(), 2, T(0), c.data(), 2);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("lda = 2"), std::string::npos) << status.error().message;
  status = ReferenceGemm<T>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, -2, 3, T(1), a.data(),
                            3, b.data(), 2, T(0), c.data(), 2);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("N = -2"), std::string::npos);
  EXPECT_EQ(c, (std::vector<T>(4, 9)));
}

TEST(ReferenceGemmPrecisionTest, AccumulatesInDouble) {
  // In float arithmetic 1e8 + 1 rounds back to 1e8, so a float accumulator would return 0 here.
  std::vector<float> a = {1e8f, 1.0f, -1e8f};
  std::vector<float> b = {1.0f, 1.0f, 1.0f};
  float c = 0.0f;
  ASSERT_TRUE(ReferenceGemm<float>(Layout::kRowMajor, Trans::kNo, Trans::kNo, 1, 1, 3, 1.0f,
                                   a.data(), 3, b.data(), 1, 0.0f, &c, 1)
                  .ok());
  EXPECT_EQ(c, 1.0f);
}

TEST(GemmArgsTest, MinimumLeadingDimensionsFollowBlas) {
  // op(A) is 5 x 7.
  EXPECT_EQ(MinLeadingDimension(Layout::kRowMajor, Trans::kNo, 5, 7), 7);
  EXPECT_EQ(MinLeadingDimension(Layout::kRowMajor, Trans::kYes, 5, 7), 5);
  EXPECT_EQ(MinLeadingDimension(Layout::kColMajor, Trans::kNo, 5, 7), 5);
  EXPECT_EQ(MinLeadingDimension(Layout::kColMajor, Trans::kYes, 5, 7), 7);
  EXPECT_EQ(MinLeadingDimension(Layout::kColMajor, Trans::kNo, 0, 0), 1);
  EXPECT_TRUE(CheckGemmArguments(Layout::kColMajor, Trans::kNo, Trans::kNo, 0, 0, 0, 1, 1, 1).ok());
  auto bad = CheckGemmArguments(Layout::kColMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 4, 4, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("ldc = 3"), std::string::npos);
}

}  // namespace
}  // namespace mmtune
