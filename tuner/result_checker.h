// Decides whether a candidate computed the right C, before it is ever timed: a fast wrong kernel
// must never win. The oracle accumulates in double, like the reference GEMM.
//
// Small problems are checked element by element, all of C. For large ones recomputing all of C
// would take longer than tuning, so the check combines two parts that together catch any wrong
// tile: (1) every element of a set of whole rows and whole columns (first, last, middle and
// random ones, so edge tiles are always covered) against the exact value; (2) Freivalds'
// projections C x and y^T C with random x and y, compared with alpha A (B x) + beta C0 x and
// (y^T A) B: a wrong element anywhere moves the projection beyond its rounding bound.
//
// Bounds per element are the classic dot-product forward error (k + 4) eps (|alpha| |A||B| +
// |beta| |C0|) + eps, with |A||B| computed alongside the exact value and eps that of the
// accumulation type T. `In` is the type of A and B: T itself, or BFloat16 for the bf16 GEMM
// (whose products are exact in f32, so the f32 bound holds). The exact s8 GEMM has its own
// checker (s8_result_checker.h).
#pragma once

#include <cstdint>
#include <vector>

#include "mmtune/bf16.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

template <typename T, typename In = T>
class ResultChecker {
 public:
  // Precomputes what `Check` compares against, from the operands of `problem` stored with the
  // minimal leading dimensions; `c_initial` is the C that beta != 0 runs start from.
  ResultChecker(const Problem& problem, const In* a, std::int64_t lda, const In* b,
                std::int64_t ldb, const T* c_initial, std::int64_t ldc, std::uint64_t seed);

  // OK when `c` equals alpha * op(A) op(B) + beta * C_initial within the bounds; the error names
  // the first wrong element (or projection) with the expected and the computed value.
  Status Check(T alpha, T beta, const T* c) const;

  bool full() const { return full_; }

 private:
  struct Exact {
    double product = 0.0;    // sum_p op(A)(i, p) op(B)(p, j)
    double magnitude = 0.0;  // sum_p |op(A)(i, p)| |op(B)(p, j)|
  };
  Status CheckElement(std::int64_t i, std::int64_t j, const Exact& exact, T alpha, T beta,
                      const T* c) const;
  T CAt(const T* c, std::int64_t i, std::int64_t j) const;

  Problem problem_;
  std::int64_t ldc_ = 1;
  const T* c_initial_ = nullptr;
  bool full_ = false;
  std::vector<std::int64_t> rows_, cols_;
  std::vector<Exact> row_exact_;  // rows_.size() x n
  std::vector<Exact> col_exact_;  // cols_.size() x m
  // Freivalds: x over columns and y over rows, with the exact projections of op(A) op(B) and
  // of C_initial, and the magnitudes that bound their rounding.
  std::vector<double> x_, y_;
  std::vector<Exact> ab_x_, y_ab_;
  std::vector<double> c0_x_, c0_x_abs_, y_c0_, y_c0_abs_;
};

extern template class ResultChecker<float>;
extern template class ResultChecker<double>;
extern template class ResultChecker<float, BFloat16>;

}  // namespace mmtune
