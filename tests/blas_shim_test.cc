// libmmtune_blas.so against the reference BLAS contract: results in both layouts and every
// transpose, the reference's quick returns, and every invalid argument reported to xerbla_ /
// cblas_xerbla with the routine name and the reference's parameter position, computing nothing.
//
// This program defines its own xerbla_ and cblas_xerbla, as BLAS test suites do; the library's
// calls must reach them (the library's own handlers are only defaults).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

#include "kernels/reference_gemm.h"

extern "C" {
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float,
                 float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int,
                 double, double*, int);
}

namespace {

struct Reported {
  std::string routine;
  int info = 0;
  int calls = 0;
};
Reported g_reported;

}  // namespace

extern "C" void xerbla_(const char* routine, const int* info, std::size_t length) {
  g_reported.routine.assign(routine, length);
  g_reported.info = *info;
  ++g_reported.calls;
}

extern "C" void cblas_xerbla(int info, const char* routine, const char* /*form*/, ...) {
  g_reported.routine = routine;
  g_reported.info = info;
  ++g_reported.calls;
}

namespace {

constexpr int kRow = 101, kCol = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113;

class BlasShimTest : public ::testing::Test {
 protected:
  void SetUp() override { g_reported = Reported{}; }
  std::vector<float> a_ = std::vector<float>(64, 1.0f);
  std::vector<float> b_ = std::vector<float>(64, 1.0f);
  std::vector<float> c_ = std::vector<float>(64, 7.0f);

  // Calls Fortran SGEMM and expects xerbla_("SGEMM ", info) and C untouched.
  void ExpectFortranError(char ta, char tb, int m, int n, int k, int lda, int ldb, int ldc,
                          int info) {
    g_reported = Reported{};
    const float alpha = 1.0f, beta = 0.0f;
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a_.data(), &lda, b_.data(), &ldb, &beta, c_.data(),
           &ldc);
    EXPECT_EQ(g_reported.calls, 1);
    EXPECT_EQ(g_reported.routine, "SGEMM ");
    EXPECT_EQ(g_reported.info, info) << ta << tb << " m" << m << " n" << n << " k" << k << " lda"
                                     << lda << " ldb" << ldb << " ldc" << ldc;
    for (float x : c_) ASSERT_EQ(x, 7.0f);
  }

  void ExpectCblasError(int layout, int ta, int tb, int m, int n, int k, int lda, int ldb,
                        int ldc, int position) {
    g_reported = Reported{};
    cblas_sgemm(layout, ta, tb, m, n, k, 1.0f, a_.data(), lda, b_.data(), ldb, 0.0f, c_.data(),
                ldc);
    EXPECT_EQ(g_reported.calls, 1);
    EXPECT_EQ(g_reported.routine, "cblas_sgemm");
    EXPECT_EQ(g_reported.info, position)
        << (layout == kRow ? "row" : "col") << " ta" << ta << " tb" << tb << " m" << m << " n"
        << n << " k" << k << " lda" << lda << " ldb" << ldb << " ldc" << ldc;
    for (float x : c_) ASSERT_EQ(x, 7.0f);
  }
};

TEST_F(BlasShimTest, FortranReportsEachInvalidArgumentAtItsPosition) {
  ExpectFortranError('X', 'N', 2, 2, 2, 2, 2, 2, 1);
  ExpectFortranError('N', 'q', 2, 2, 2, 2, 2, 2, 2);
  ExpectFortranError('N', 'N', -1, 2, 2, 2, 2, 2, 3);
  ExpectFortranError('N', 'N', 2, -1, 2, 2, 2, 2, 4);
  ExpectFortranError('N', 'N', 2, 2, -1, 2, 2, 2, 5);
  ExpectFortranError('N', 'N', 3, 2, 2, 2, 2, 3, 8);   // LDA < M
  ExpectFortranError('T', 'N', 3, 2, 4, 3, 4, 3, 8);   // LDA < K when A is transposed
  ExpectFortranError('N', 'N', 2, 2, 3, 2, 2, 2, 10);  // LDB < K
  ExpectFortranError('N', 't', 2, 3, 2, 2, 2, 2, 10);  // LDB < N when B is transposed
  ExpectFortranError('N', 'N', 3, 2, 2, 3, 2, 2, 13);  // LDC < M
  // The first failing check wins, in the reference's order.
  ExpectFortranError('N', 'N', -1, -1, -1, 0, 0, 0, 3);
  // LD = 0 is invalid even for empty matrices: LD >= max(1, rows).
  ExpectFortranError('N', 'N', 0, 0, 0, 0, 1, 1, 8);
}

TEST_F(BlasShimTest, DoublePrecisionNamesItsRoutine) {
  const char n = 'N';
  const int m = -3, two = 2;
  const double one = 1.0;
  std::vector<double> x(8, 0.0);
  dgemm_(&n, &n, &m, &two, &two, &one, x.data(), &two, x.data(), &two, &one, x.data(), &two);
  EXPECT_EQ(g_reported.routine, "DGEMM ");
  EXPECT_EQ(g_reported.info, 3);
  cblas_dgemm(kCol, kNoTrans, 5, 2, 2, 2, 1.0, x.data(), 2, x.data(), 2, 1.0, x.data(), 2);
  EXPECT_EQ(g_reported.routine, "cblas_dgemm");
  EXPECT_EQ(g_reported.info, 3);
}

// The reference CBLAS checks a row-major call in the column-major form it passes on (N and M,
// LDB and LDA exchanged) and reports the position in that call: an illegal M as 5, N as 4, LDA
// as 11, LDB as 9. Handlers that programs install (the reference's own test programs) swap them
// back, so the drop-in must not swap them itself.
TEST_F(BlasShimTest, CblasReportsTheReferencePositionsInBothLayouts) {
  ExpectCblasError(0, kNoTrans, kNoTrans, 2, 2, 2, 2, 2, 2, 1);
  for (int layout : {kRow, kCol}) {
    const bool row = layout == kRow;
    ExpectCblasError(layout, 7, kNoTrans, 2, 2, 2, 2, 2, 2, 2);
    ExpectCblasError(layout, kNoTrans, 999, 2, 2, 2, 2, 2, 2, 3);
    ExpectCblasError(layout, kNoTrans, kNoTrans, -1, 2, 2, 2, 2, 2, row ? 5 : 4);
    ExpectCblasError(layout, kNoTrans, kNoTrans, 2, -1, 2, 2, 2, 2, row ? 4 : 5);
    ExpectCblasError(layout, kNoTrans, kNoTrans, 2, 2, -1, 2, 2, 2, 6);
  }
  // Column-major: LDA >= M, LDB >= K, LDC >= M.
  ExpectCblasError(kCol, kNoTrans, kNoTrans, 3, 2, 2, 2, 2, 3, 9);
  ExpectCblasError(kCol, kNoTrans, kNoTrans, 2, 2, 3, 2, 2, 2, 11);
  ExpectCblasError(kCol, kNoTrans, kNoTrans, 3, 2, 2, 3, 2, 2, 14);
  // Row-major: LDA >= K (reported as 11), LDB >= N (as 9), LDC >= N.
  ExpectCblasError(kRow, kNoTrans, kNoTrans, 2, 2, 3, 2, 2, 2, 11);
  ExpectCblasError(kRow, kNoTrans, kNoTrans, 2, 3, 2, 2, 2, 3, 9);
  ExpectCblasError(kRow, kNoTrans, kNoTrans, 2, 3, 2, 2, 3, 2, 14);
  ExpectCblasError(kRow, kTrans, kNoTrans, 3, 2, 2, 2, 2, 2, 11);  // A^T stored K x M: LDA >= M
  // The first failing check of the column-major form wins: N before M, LDB before LDA.
  ExpectCblasError(kRow, kNoTrans, kNoTrans, -1, -1, 2, 2, 2, 2, 4);
  ExpectCblasError(kCol, kNoTrans, kNoTrans, -1, -1, 2, 2, 2, 2, 4);
  ExpectCblasError(kRow, kNoTrans, kNoTrans, 2, 3, 3, 1, 1, 3, 9);
}

template <typename T>
void CheckAgainstReference(bool fortran, int layout, int ta, int tb, int m, int n, int k, T alpha,
                           T beta) {
  const bool row = layout == kRow;
  const bool trans_a = ta != kNoTrans, trans_b = tb != kNoTrans;
  // Stored rows/cols of A and B, then leading dimensions padded by 2.
  const int a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const int b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  const int lda = (row ? a_cols : a_rows) + 2;
  const int ldb = (row ? b_cols : b_rows) + 2;
  const int ldc = (row ? n : m) + 2;
  std::mt19937 rng(static_cast<unsigned>(m * 1000 + n * 10 + k));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> a(static_cast<std::size_t>(lda * (row ? a_rows : a_cols)));
  std::vector<T> b(static_cast<std::size_t>(ldb * (row ? b_rows : b_cols)));
  std::vector<T> c(static_cast<std::size_t>(ldc * (row ? m : n)));
  for (T& x : a) x = static_cast<T>(dist(rng));
  for (T& x : b) x = static_cast<T>(dist(rng));
  for (T& x : c) x = beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(dist(rng));
  std::vector<T> expected = c;
  ASSERT_TRUE(mmtune::ReferenceGemm(
      row ? mmtune::Layout::kRowMajor : mmtune::Layout::kColMajor,
      trans_a ? mmtune::Trans::kYes : mmtune::Trans::kNo,
      trans_b ? mmtune::Trans::kYes : mmtune::Trans::kNo, m, n, k, alpha, a.data(), lda, b.data(),
      ldb, beta, expected.data(), ldc));
  if (fortran) {
    ASSERT_FALSE(row);
    const char letter_a = ta == kNoTrans ? 'n' : (ta == kTrans ? 'T' : 'c');
    const char letter_b = tb == kNoTrans ? 'N' : (tb == kTrans ? 't' : 'C');
    if constexpr (sizeof(T) == 4) {
      sgemm_(&letter_a, &letter_b, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta,
             c.data(), &ldc);
    } else {
      dgemm_(&letter_a, &letter_b, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta,
             c.data(), &ldc);
    }
  } else if constexpr (sizeof(T) == 4) {
    cblas_sgemm(layout, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  } else {
    cblas_dgemm(layout, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  }
  EXPECT_EQ(g_reported.calls, 0);
  const double tolerance = (sizeof(T) == 4 ? 2e-5 : 1e-13) * (k + 4);
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (std::isnan(expected[i])) {
      ASSERT_TRUE(std::isnan(c[i])) << "padding written at " << i;
    } else {
      ASSERT_NEAR(c[i], expected[i], tolerance * (1 + std::abs(expected[i])))
          << (fortran ? "fortran " : "cblas ") << (row ? "row " : "col ") << ta << "/" << tb
          << " " << m << "x" << n << "x" << k << " at " << i;
    }
  }
}

TEST_F(BlasShimTest, MatchesTheReferenceInEveryLayoutAndTranspose) {
  for (int ta : {kNoTrans, kTrans, kConjTrans}) {
    for (int tb : {kNoTrans, kTrans, kConjTrans}) {
      for (int layout : {kRow, kCol}) {
        CheckAgainstReference<float>(false, layout, ta, tb, 33, 17, 29, 1.0f, 0.0f);
        CheckAgainstReference<double>(false, layout, ta, tb, 19, 41, 7, -1.5, 0.5);
      }
      CheckAgainstReference<float>(true, kCol, ta, tb, 65, 3, 130, 0.5f, 1.0f);
      CheckAgainstReference<double>(true, kCol, ta, tb, 1, 50, 20, 2.0, 0.0);
    }
  }
}

TEST_F(BlasShimTest, QuickReturnsTouchNothing) {
  // alpha = 0 and beta = 1: nothing to do, the operands are never read (null here).
  float c[4] = {1, 2, 3, 4};
  cblas_sgemm(kRow, kNoTrans, kNoTrans, 2, 2, 2, 0.0f, nullptr, 2, nullptr, 2, 1.0f, c, 2);
  EXPECT_EQ(c[3], 4.0f);
  // alpha = 0 and beta = 0: C becomes exactly zero, NaN included.
  float d[4] = {NAN, NAN, NAN, NAN};
  cblas_sgemm(kCol, kNoTrans, kNoTrans, 2, 2, 2, 0.0f, nullptr, 2, nullptr, 2, 0.0f, d, 2);
  for (float x : d) EXPECT_EQ(x, 0.0f);
  EXPECT_EQ(g_reported.calls, 0);
}

}  // namespace
